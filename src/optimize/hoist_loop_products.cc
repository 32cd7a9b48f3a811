// hoist_loop_products: a loop that multiplies each element of a sequence it does not change
// by a matrix it does not change (a recurrent layer's input projection, x_t · W: Keras's
// LSTM and GRU read x_t from a TensorList made by TensorListFromTensor before the loop)
// does that product once for the whole sequence before the loop instead: X · W as one
// BatchMatMulV2 of T * B rows, whose list the loop reads in place of the original one. One
// large product runs near the machine's peak; T small ones (one row each at batch 1) do not.
// ONNX Runtime's fused LSTM computes its input projection the same way.
//
// The loop variable is replaced only when nothing else can tell: the body reads the list at
// just that one product and passes it through unchanged, the condition and the loop's users
// never read it, the matrix is the same on every iteration (a Const, a loop-invariant loop
// variable, or a variable that nothing in the loop writes), and the lists' element shapes
// are known to fit, so the original list could not have failed where the new one does not.
// The body is rewritten in a copy (library::add_copy): other loops that share it keep it.
// Unlike the fusions, not bit for bit: the large product may sum each dot product in another
// order than the small ones did (as any choice of GEMM kernel may), so results can differ
// in their last bits. The hoisted product holds the whole sequence's projection at once
// (steps × batch × units), which a run's memory limit counts.
#include <set>

#include "ops/helpers.h"
#include "ops/op_list.h"
#include "optimize/loop_readers.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

const int kGetItemDtype = ops::attr_index(op::TensorListGetItem(), "element_dtype");

// A shape written as a Const element_shape input (-1 for an unknown dim, a scalar -1 for an
// unknown rank); false if it is not a Const or not such a shape.
bool const_shape(const Output& o, TensorShape* shape) {
  const ops::TensorImpl* v = o.node->const_value();
  if (!v || (v->dtype != DType::Int32 && v->dtype != DType::Int64) || v->dims.size() > 1) return false;
  const std::vector<int64_t> dims = ops::int_values(*v);
  if (v->dims.empty()) {
    if (dims[0] != -1) return false;
    *shape = TensorShape::unknown();
    return true;
  }
  for (int64_t d : dims)
    if (d < -1) return false;
  *shape = TensorShape(dims);
  return true;
}

// Whether every dim `requested` names is one `actual` is known to have: a list made or read
// with that element shape cannot fail on any value of that static shape.
bool always_fits(const TensorShape& requested, const TensorShape& actual) {
  if (requested.unknown_rank()) return true;
  if (actual.unknown_rank() || requested.rank() != actual.rank()) return false;
  for (int i = 0; i < requested.rank(); ++i)
    if (requested.dim(i) != -1 && requested.dim(i) != actual.dim(i)) return false;
  return true;
}

Tensor shape_vector(const TensorShape& s) {
  const int64_t dims[1] = {s.rank()};
  detail::TensorImpl* t = detail::make_concrete(DType::Int32, dims, 1);
  for (int i = 0; i < s.rank(); ++i) t->as<int32_t>()[i] = static_cast<int32_t>(s.dim(i));
  return Tensor(t);
}

// Whether anything in `g` or the bodies it calls may write `variable`: every op that names
// it and is not a read counts as a write.
bool may_write(const Graph& g, const Resource* variable, std::set<const Graph*>& seen) {
  if (!seen.insert(&g).second) return false;
  for (const auto& n : g.nodes()) {
    for (int k = 0; k < n->attrs.size(); ++k)
      if (const auto* r = std::get_if<ops::ResourceRef>(&n->attrs[k]))
        if (r->resource.get() == variable && !n->op->has(ops::kReadsVariable)) return true;
    for (const ops::FuncRef* f : ops::func_refs(n->attrs))
      if (may_write(g.library().get(f->name), variable, seen)) return true;
  }
  return false;
}

// One loop variable whose list the loop reads for one product.
struct Site {
  int var = -1;                 // the loop variable (input, body argument, output)
  Node* list_source = nullptr;  // TensorListFromTensor before the loop
  Node* get_item = nullptr;     // in the body
  Node* product = nullptr;      // MatMul(get_item, matrix) in the body
  Node* matrix = nullptr;       // what the matrix is in the body (through Identities)
  int matrix_var = -1;          // ... a loop variable's index, or -1 for a Const or variable read
};

class HoistLoopProducts : public Pass {
 public:
  const char* name() const override { return "hoist_loop_products"; }

  bool run(Graph& g, const PassContext&) override {
    return rewrite_loops(g, [&g](Node& loop, const Graph& body, const Graph& cond, const Readers& outer) {
      // Who reads what in the body and condition: built once per loop, asked once per variable.
      const Readers inner(body), in_cond(cond);
      // One site per loop per run: the body is copied for it; the next round finds the next.
      for (int var = 0; var < static_cast<int>(loop.inputs.size()); ++var) {
        Site site;
        if (!find_site(outer, Loop{loop, body, cond, inner, in_cond}, var, &site)) continue;
        hoist(g, loop, site);
        return true;
      }
      return false;
    });
  }

 private:
  // A loop with its body and condition and who reads what in them.
  struct Loop {
    const Node& node;
    const Graph& body;
    const Graph& cond;
    const Readers& inner;
    const Readers& in_cond;
  };

  static bool find_site(const Readers& outer, const Loop& l, int var, Site* site) {
    const Node& loop = l.node;
    const Graph& body = l.body;
    const Graph& cond = l.cond;
    const Readers& inner = l.inner;
    // Before the loop: a list made from a tensor of static rank 3 (T, batch, features).
    Node* source = through_identities(loop.inputs[var]).node;
    if (source->op != &op::TensorListFromTensor()) return false;
    const Output x = source->inputs[0];
    const TensorShape& xs = x.node->out_shapes[x.index];
    const DType dtype = x.node->out_dtypes[x.index];
    if ((dtype != DType::Float32 && dtype != DType::Float64) || xs.rank() != 3 || xs.dim(2) < 0) return false;
    const TensorShape element({xs.dim(1), xs.dim(2)});
    TensorShape list_shape;
    if (!const_shape(source->inputs[1], &list_shape) || !always_fits(list_shape, element)) return false;
    // Nobody outside the body sees the variable: not the loop's users, not the condition.
    if (outer.output_read(loop, var)) return false;
    const Readers& in_cond = l.in_cond;
    if (!in_cond.data[cond.inputs[var]->id].empty() || !in_cond.outputs[cond.inputs[var]->id].empty()) return false;
    // In the body: passed through unchanged, and read by one TensorListGetItem only.
    const Node* arg = body.inputs[var];
    if (through_identities(body.outputs[var]).node != arg) return false;
    Node* get_item = nullptr;
    if (!only_passes_through(body, inner, *arg, var, &get_item) || !get_item || get_item->inputs[0].index != 0)
      return false;
    TensorShape read_shape;
    if (get_item->attrs.type(kGetItemDtype) != dtype || !const_shape(get_item->inputs[2], &read_shape) ||
        !always_fits(read_shape, element) || inner.awaited[get_item->id] || !inner.outputs[get_item->id].empty() ||
        inner.data[get_item->id].size() != 1)
      return false;
    // ... for one MatMul by a matrix the loop does not change, of known contraction size.
    auto [product, slot] = inner.data[get_item->id][0];
    if (product->op != &op::MatMul() || slot != 0 || product->attrs.b(kMatMulTransposeA) || inner.awaited[product->id])
      return false;
    const Output m = through_identities(product->inputs[1]);
    const TensorShape& ms = m.node->out_shapes[m.index];
    const bool tb = product->attrs.b(kMatMulTransposeB);
    if (ms.rank() != 2 || ms.dim(tb ? 1 : 0) != xs.dim(2) || product->out_shapes[0].rank() != 2) return false;
    site->matrix_var = -1;
    if (m.node->op->has(ops::kNoKernel)) {  // a loop variable: passed through unchanged
      for (int k = 0; k < static_cast<int>(body.inputs.size()); ++k)
        if (body.inputs[k] == m.node) site->matrix_var = k;
      if (site->matrix_var < 0 || site->matrix_var == var ||
          through_identities(body.outputs[site->matrix_var]).node != m.node)
        return false;
    } else if (m.node->op->has(ops::kReadsVariable)) {
      // Read on every iteration: the same value only if neither part of the loop writes it.
      const Resource* variable = m.node->attrs.resource(ops::kReadsVariableAttr);
      std::set<const Graph*> seen;
      if (!m.node->inputs.empty() || !m.node->control_inputs.empty() || may_write(body, variable, seen) ||
          may_write(cond, variable, seen))
        return false;
    } else if (!m.node->const_value() || !m.node->inputs.empty()) {
      return false;
    }
    *site = Site{.var = var,
                 .list_source = source,
                 .get_item = get_item,
                 .product = product,
                 .matrix = m.node,
                 .matrix_var = site->matrix_var};
    return true;
  }

  // Whether every reader of `arg` is the one TensorListGetItem (returned) or the chain of
  // Identities that returns it as output `var`.
  static bool only_passes_through(const Graph& body, const Readers& r, const Node& arg, int var, Node** get_item) {
    for (int o : r.outputs[arg.id])
      if (o != var) return false;
    for (const auto& [user, slot] : r.data[arg.id]) {
      if (user->op == &op::TensorListGetItem() && slot == 0) {
        if (*get_item) return false;
        *get_item = user;
      } else if (user->op == &op::Identity() && user->inputs.size() == 1) {
        if (!only_passes_through(body, r, *user, var, get_item)) return false;
      } else {
        return false;
      }
    }
    return true;
  }

  static void hoist(Graph& g, Node& loop, const Site& s) {
    const std::string scope = loop.name + "/hoisted";
    // The matrix, before the loop. A variable is read after everything the loop waits for.
    Output matrix;
    if (s.matrix_var >= 0) {
      matrix = loop.inputs[s.matrix_var];
    } else if (s.matrix->op->has(ops::kReadsVariable)) {
      std::vector<Node*> after = loop.control_inputs;
      for (const Output& in : loop.inputs) after.push_back(in.node);
      matrix = Output{g.add_node(*s.matrix->op, scope + "/read", {}, s.matrix->attrs, after), 0};
    } else {
      matrix = Output{g.add_node(*s.matrix->op, scope + "/matrix", {}, s.matrix->attrs), 0};
    }
    const bool tb = s.product->attrs.b(kMatMulTransposeB);
    Node* product = g.add_node(op::BatchMatMulV2(), scope + "/product", {s.list_source->inputs[0], matrix},
                               {false, tb, false, false});
    const TensorShape item = s.product->out_shapes[0];
    Node* shape = g.add_const(shape_vector(item), scope + "/element_shape");
    Node* list = g.add_node(op::TensorListFromTensor(), scope + "/list", {{product, 0}, {shape, 0}}, {});
    // The loop's own copy of its body reads the products' list where it read the sequence.
    Graph& body = *g.library().add_copy(loop.attrs.func(kLoopBody).name);
    Node* get_item = body.node(s.get_item->id);
    Node* read_shape = body.add_const(shape_vector(item), get_item->name + "/hoisted_shape");
    Node* read = body.add_node(op::TensorListGetItem(), get_item->name + "/hoisted",
                               {{body.inputs[s.var], 0}, get_item->inputs[1], {read_shape, 0}}, get_item->attrs);
    body.replace_uses({{{body.node(s.product->id), 0}, Output{read, 0}}});
    body.compact_order(true);
    loop.attrs[kLoopBody] = ops::FuncRef{body.function_name()};
    loop.inputs[s.var] = Output{list, 0};
  }
};

}  // namespace

std::unique_ptr<Pass> make_hoist_loop_products() { return std::make_unique<HoistLoopProducts>(); }

}  // namespace kiln::optimize
