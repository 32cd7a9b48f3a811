// hoist_concat_products: a loop whose body multiplies [u, v] or [v, u] (a ConcatV2 along the
// columns) by a matrix W, where the loop changes neither u nor W (a recurrent cell's
// `matmul(concat([x, h], 1), w)` over a fixed x: a decoder's context, the benchmark's LSTM),
// does u · W[:k] once before the loop instead of on every step: inside, the product is
// u · W[:k] + v · W[k:] (for [v, u], W's last k rows are u's), with u's share a loop
// variable in u's place and v's rows of W in W's.
// Each step then multiplies only v's columns: two thirds of the work for the LSTM of
// bench_peers (32 input and 64 hidden units). XLA does the same (its dot-of-concat rewrite,
// then loop-invariant code motion).
//
// The variables are replaced only when nothing else can tell: in the body, u and W are read
// by that product alone (through Identities) and passed through unchanged; the condition
// and the loop's users never read them; u's columns are known, and u and v have the same
// known number of rows (a served model's unknown batch is left alone: rows that differed at
// run time would make ConcatV2 fail, but the two shares' sum broadcast). Body and condition
// are rewritten in copies (library::add_copy): other loops that share them keep them.
// Like hoist_loop_products, not bit for bit: each element of the product is summed in two
// parts, u's and v's, then added, where the single product summed them in one run (as a
// library GEMM that blocks the inner dimension does), so results can differ in their last
// bits.
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "optimize/loop_readers.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

const int kPlaceholderShape = ops::attr_index(op::Placeholder(), "shape");

// The loop variable whose body argument `o` is (through Identities), when the body passes it
// through unchanged; -1 otherwise.
int invariant_var(const Graph& body, Output o) {
  o = through_identities(o);
  if (o.index != 0) return -1;
  for (int k = 0; k < static_cast<int>(body.inputs.size()); ++k)
    if (body.inputs[k] == o.node) return through_identities(body.outputs[k]).node == o.node ? k : -1;
  return -1;
}

// Whether every reader of `n` is `user` (at one input) or an Identity chain that ends in
// body output `var` alone.
bool read_only_by(const Readers& r, const Node& n, const Node* user, int var) {
  for (int o : r.outputs[n.id])
    if (o != var) return false;
  if (r.awaited[n.id]) return false;
  int by_user = 0;
  for (const auto& [reader, slot] : r.data[n.id]) {
    if (reader == user) {
      ++by_user;
    } else if (reader->op != &op::Identity() || reader->inputs.size() != 1 || !read_only_by(r, *reader, user, var)) {
      return false;
    }
  }
  return by_user <= 1;
}

struct Site {
  Node* product = nullptr;  // MatMul(ConcatV2([u, v] or [v, u], 1), W) in the body
  Node* concat = nullptr;
  int u_at = 0;  // u's place in the concatenation
  int u_var = -1, w_var = -1;
  int64_t u_columns = 0, w_rows = 0;
};

class HoistConcatProducts : public Pass {
 public:
  const char* name() const override { return "hoist_concat_products"; }

  bool run(Graph& g, const PassContext&) override {
    return rewrite_loops(g, [&g](Node& loop, const Graph& body, const Graph& cond, const Readers& outer) {
      const Readers inner(body), in_cond(cond);
      Site site;
      for (const auto& node : body.nodes())
        if (find_site(outer, loop, body, cond, inner, in_cond, node.get(), &site)) {
          hoist(g, loop, site);
          return true;  // the body was copied; the next round finds the next site
        }
      return false;
    });
  }

 private:
  static bool find_site(const Readers& outer, const Node& loop, const Graph& body, const Graph& cond,
                        const Readers& inner, const Readers& in_cond, Node* product, Site* site) {
    if (product->op != &op::MatMul() || product->attrs.b(kMatMulTransposeA) || product->attrs.b(kMatMulTransposeB) ||
        inner.awaited[product->id])
      return false;
    const DType dtype = product->out_dtypes[0];
    if (dtype != DType::Float32 && dtype != DType::Float64) return false;
    Node* concat = through_identities(product->inputs[0]).node;
    if (concat->op != &op::ConcatV2() || concat->inputs.size() != 3 || inner.awaited[concat->id] ||
        !inner.outputs[concat->id].empty() || inner.data[concat->id].size() != 1)
      return false;
    if (concat->out_shapes[0].rank() != 2) return false;
    const std::vector<int64_t> axis = const_ints(concat->inputs[2]);
    if (axis.size() != 1 || (axis[0] != 1 && axis[0] != -1)) return false;
    // u: a loop variable passed through, read by the concatenation alone, of known columns;
    // the first operand if it is one, else the second.
    int u_at = 0, u_var = invariant_var(body, concat->inputs[0]);
    if (u_var < 0) {
      u_at = 1;
      u_var = invariant_var(body, concat->inputs[1]);
    }
    const int w_var = invariant_var(body, product->inputs[1]);
    if (u_var < 0 || w_var < 0 || u_var == w_var) return false;
    const Node* u = body.inputs[u_var];
    const Node* w = body.inputs[w_var];
    const TensorShape& us = u->out_shapes[0];
    const TensorShape& ws = w->out_shapes[0];
    if (us.rank() != 2 || us.dim(1) < 1 || ws.rank() != 2 || ws.dim(0) <= us.dim(1)) return false;
    // The same known number of rows in u and v: where ConcatV2 would fail on rows that differ
    // at run time, the sum of the two shares would broadcast one row instead.
    const Output v = concat->inputs[static_cast<size_t>(1 - u_at)];
    const TensorShape& vs = v.node->out_shapes[static_cast<size_t>(v.index)];
    if (vs.rank() != 2 || us.dim(0) < 0 || vs.dim(0) != us.dim(0)) return false;
    if (through_identities(concat->inputs[1 - u_at]).node == u) return false;  // [u, u]: nothing varies
    if (!read_only_by(inner, *u, concat, u_var) || !read_only_by(inner, *w, product, w_var)) return false;
    // Nobody else sees the two variables: not the condition, not the loop's users.
    for (int var : {u_var, w_var}) {
      const Node* c = cond.inputs[static_cast<size_t>(var)];
      if (!in_cond.data[c->id].empty() || !in_cond.outputs[c->id].empty() || outer.output_read(loop, var)) return false;
    }
    *site = Site{.product = product,
                 .concat = concat,
                 .u_at = u_at,
                 .u_var = u_var,
                 .w_var = w_var,
                 .u_columns = us.dim(1),
                 .w_rows = ws.dim(0)};
    return true;
  }

  // Sets a body's or condition's argument `var` to a new static shape.
  static void reshape_argument(Graph& part, int var, const TensorShape& shape) {
    Node* arg = part.inputs[static_cast<size_t>(var)];
    arg->attrs[kPlaceholderShape] = ops::ShapeAttr(shape);
    arg->out_shapes[0] = shape;
  }

  static Tensor int_vector(std::initializer_list<int64_t> values) {
    const int64_t dims[1] = {static_cast<int64_t>(values.size())};
    detail::TensorImpl* t = detail::make_concrete(DType::Int64, dims, 1);
    int64_t* p = t->as<int64_t>();
    for (int64_t v : values) *p++ = v;
    return Tensor(t);
  }

  static void hoist(Graph& g, Node& loop, const Site& s) {
    const std::string scope = loop.name + "/hoisted";
    const int64_t k = s.u_columns;
    // Before the loop: W's two row blocks and u's share of the product.
    const Output w = loop.inputs[static_cast<size_t>(s.w_var)];
    auto slice = [&](const char* name, int64_t first_row, int64_t rows) {
      Node* begin = g.add_const(int_vector({first_row, 0}), scope + "/" + name + "_begin");
      Node* size = g.add_const(int_vector({rows, -1}), scope + "/" + name + "_size");
      return Output{g.add_node(op::Slice(), scope + "/" + name, {w, {begin, 0}, {size, 0}}, {}), 0};
    };
    const int64_t v_rows = s.w_rows - k;
    const Output w_u = slice("u_rows", s.u_at == 0 ? 0 : v_rows, k), w_v = slice("v_rows", s.u_at == 0 ? k : 0, v_rows);
    Node* u_product = g.add_node(op::MatMul(), scope + "/u_product", {loop.inputs[static_cast<size_t>(s.u_var)], w_u},
                                 s.product->attrs);
    loop.inputs[static_cast<size_t>(s.u_var)] = Output{u_product, 0};
    loop.inputs[static_cast<size_t>(s.w_var)] = w_v;
    const TensorShape u_shape = u_product->out_shapes[0], w_shape = w_v.node->out_shapes[0];
    loop.out_shapes[static_cast<size_t>(s.u_var)] = u_shape;
    loop.out_shapes[static_cast<size_t>(s.w_var)] = w_shape;
    // The condition's copy takes the new shapes (it reads neither).
    Graph& cond = *g.library().add_copy(loop.attrs.func(kLoopCond).name);
    reshape_argument(cond, s.u_var, u_shape);
    reshape_argument(cond, s.w_var, w_shape);
    loop.attrs[kLoopCond] = ops::FuncRef{cond.function_name()};
    // The body's copy: u's argument is now u's product, W's is W[k:]; v · W[k:] is added.
    Graph& body = *g.library().add_copy(loop.attrs.func(kLoopBody).name);
    reshape_argument(body, s.u_var, u_shape);
    reshape_argument(body, s.w_var, w_shape);
    Node* product = body.node(s.product->id);
    Node* concat = body.node(s.concat->id);
    Node* v_product =
        body.add_node(op::MatMul(), product->name + "/v_product",
                      {concat->inputs[static_cast<size_t>(1 - s.u_at)], {body.inputs[static_cast<size_t>(s.w_var)], 0}},
                      product->attrs);
    Node* sum = body.add_node(op::AddV2(), product->name + "/sum",
                              {{body.inputs[static_cast<size_t>(s.u_var)], 0}, {v_product, 0}}, {});
    body.replace_uses({{{product, 0}, Output{sum, 0}}});
    // Passed through as the arguments themselves: Identities in between (read by nothing
    // else) would keep the old shapes; they go with the concatenation and the product.
    for (int var : {s.u_var, s.w_var})
      body.outputs[static_cast<size_t>(var)] = Output{body.inputs[static_cast<size_t>(var)], 0};
    body.compact_order(true);
    loop.attrs[kLoopBody] = ops::FuncRef{body.function_name()};
  }
};

}  // namespace

std::unique_ptr<Pass> make_hoist_concat_products() { return std::make_unique<HoistConcatProducts>(); }

}  // namespace kiln::optimize
