// arithmetic_simplification: algebraic rewrites, each exact (results bit for bit as traced):
// x+0, 0+x, x-0, x*1, 1*x, x/1 -> x (when the result has x's shape); x*0 and x-x -> 0 for
// integers (for floats NaN and inf make them wrong); neg(neg(x)) -> x; transpose of
// transpose -> one transpose (or x); a transpose by the identity permutation -> x; reshape of reshape -> one reshape;
// cast to the same dtype -> x; x / c -> x * (1/c) for float constants c that are powers of two with a representable
// reciprocal (only then is it exact); MatMul of a 2-D Transpose -> the transpose_a/b attr; x*x -> Square(x).
#include <cmath>
#include <cstring>

#include "ops/helpers.h"
#include "ops/op_list.h"
#include "optimize/pass.h"

namespace kiln::optimize {
namespace {

const int kCastDstT = ops::attr_index(op::Cast(), "DstT");

// Whether `o` is a constant whose every element equals v.
bool const_all(const Output& o, double v) {
  const ops::TensorImpl* t = o.node->const_value();
  if (!t || t->num_elements == 0 || !detail::has_values(t->dtype)) return false;  // strings: "" is no zero
  return ops::visit_dtype(t->dtype, [&](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>)
      return false;
    else {
      for (int64_t i = 0; i < t->num_elements; ++i)
        if (t->as<T>()[i] != static_cast<T>(v)) return false;
      return true;
    }
  });
}
const TensorShape& shape(const Output& o) { return o.node->out_shapes[o.index]; }
bool same_shape(const TensorShape& a, const TensorShape& b) {
  return a.is_fully_defined() && b.is_fully_defined() && a.dims() == b.dims();
}
// The result of `n` (one output) keeps x's shape, so replacing it by x is exact.
bool keeps_shape(const Node& n, const Output& x) { return same_shape(n.out_shapes[0], shape(x)); }

class ArithmeticSimplification : public Pass {
 public:
  const char* name() const override { return "arithmetic_simplification"; }
  bool run(Graph& g, const PassContext&) override {
    Replacements repl;
    const int count = g.num_nodes();
    for (int id = 0; id < count; ++id) {
      Node& n = *g.node(id);
      if (n.stateful || !n.control_inputs.empty() || n.num_outputs() != 1) continue;
      Output result;
      if (simplify(g, n, &result)) repl[{&n, 0}] = result;
    }
    g.replace_uses(repl);
    return !repl.empty();
  }

 private:
  static bool simplify(Graph& g, Node& n, Output* out) {
    const ops::OpDef* o = n.op;
    const auto& in = n.inputs;
    const DType dt = n.out_dtypes[0];
    const bool integer = is_integer(dt);
    if (o == &op::AddV2()) {
      if (const_all(in[1], 0) && keeps_shape(n, in[0])) return *out = in[0], true;
      if (const_all(in[0], 0) && keeps_shape(n, in[1])) return *out = in[1], true;
    }
    if (o == &op::Sub()) {
      if (const_all(in[1], 0) && keeps_shape(n, in[0])) return *out = in[0], true;
      if (integer && in[0] == in[1] && shape(in[0]).is_fully_defined()) return *out = zeros_like_const(g, n), true;
    }
    if (o == &op::Mul()) {
      if (const_all(in[1], 1) && keeps_shape(n, in[0])) return *out = in[0], true;
      if (const_all(in[0], 1) && keeps_shape(n, in[1])) return *out = in[1], true;
      if (integer && (const_all(in[0], 0) || const_all(in[1], 0)) && n.out_shapes[0].is_fully_defined())
        return *out = zeros_like_const(g, n), true;
      if (in[0] == in[1]) return *out = add(g, op::Square(), n.name + "/square", {in[0]}, {}), true;
    }
    if (o == &op::RealDiv()) {
      if (const_all(in[1], 1) && keeps_shape(n, in[0])) return *out = in[0], true;
      if (const ops::TensorImpl* c = in[1].node->const_value()) {  // x / c -> x * (1 / c), when exact
        Tensor recip = exact_reciprocal(*c);
        if (!recip.defined()) return false;
        Output rc{g.add_const(recip, n.name + "/reciprocal"), 0};
        return *out = add(g, op::Mul(), n.name + "/mul", {in[0], rc}, {}), true;
      }
    }
    if (o == &op::Neg() && in[0].node->op == &op::Neg() && !in[0].node->stateful)
      return *out = in[0].node->inputs[0], true;
    if (o == &op::Cast() && n.attrs.type(kCastDstT) == in[0].node->out_dtypes[in[0].index]) return *out = in[0], true;
    if (o == &op::Transpose()) {  // an identity permutation (Tensordot's, when no axis moves) -> x
      const auto p = const_ints(in[1]);
      const TensorShape& x = shape(in[0]);
      bool identity = !p.empty() && !x.unknown_rank() && x.rank() == static_cast<int>(p.size());
      for (size_t i = 0; identity && i < p.size(); ++i) identity = p[i] == static_cast<int64_t>(i);
      if (identity) return *out = in[0], true;
    }
    if (o == &op::Transpose() && in[0].node->op == &op::Transpose()) {
      const Node& inner = *in[0].node;
      const auto p2 = const_ints(in[1]), p1 = const_ints(inner.inputs[1]);
      if (p1.empty() || p2.empty() || p1.size() != p2.size()) return false;
      std::vector<int64_t> p(p2.size());
      bool identity = true;
      for (size_t i = 0; i < p.size(); ++i) {
        p[i] = p1[p2[i]];
        identity &= p[i] == static_cast<int64_t>(i);
      }
      if (identity) return *out = inner.inputs[0], true;
      Output perm{g.add_const(int32_vector(p), n.name + "/perm"), 0};
      return *out = add(g, op::Transpose(), n.name + "/merged", {inner.inputs[0], perm}, {}), true;
    }
    if (o == &op::Reshape() && in[0].node->op == &op::Reshape()) {
      return *out = add(g, op::Reshape(), n.name + "/merged", {in[0].node->inputs[0], in[1]}, {}), true;
    }
    if (o == &op::MatMul()) {
      for (int side = 0; side < 2; ++side) {
        const Node& t = *in[side].node;
        if (t.op != &op::Transpose() || const_ints(t.inputs[1]) != std::vector<int64_t>{1, 0}) continue;
        std::vector<Output> ins = in;
        ins[side] = t.inputs[0];
        ops::Attrs a = n.attrs;  // the transposed side's flag flips
        const int flag = side == 0 ? kMatMulTransposeA : kMatMulTransposeB;
        a[flag] = !n.attrs.b(flag);
        return *out = add(g, op::MatMul(), n.name + "/fused_transpose", ins, a), true;
      }
    }
    return false;
  }

  static Output add(Graph& g, const ops::OpDef& def, const std::string& name, std::vector<Output> ins, ops::Attrs a) {
    return Output{g.add_node(def, name, std::move(ins), std::move(a)), 0};
  }
  static Output zeros_like_const(Graph& g, const Node& n) {
    detail::TensorImpl* z = detail::make_concrete(n.out_dtypes[0], n.out_shapes[0].dims());
    std::memset(z->data, 0, z->nbytes());
    return Output{g.add_const(Tensor(z), n.name + "/zeros"), 0};
  }
  static Tensor int32_vector(const std::vector<int64_t>& v) {
    const int64_t dims[1] = {static_cast<int64_t>(v.size())};
    detail::TensorImpl* t = detail::make_concrete(DType::Int32, dims, 1);
    for (size_t i = 0; i < v.size(); ++i) t->as<int32_t>()[i] = static_cast<int32_t>(v[i]);
    return Tensor(t);
  }
  // 1/c when multiplying by it gives exactly x/c for every x: c a power of two whose
  // reciprocal is representable (both are then exact scalings, rounded once, identically).
  // Any other c would change results (1e-10f / 1e-40f is 1e30, 1e-10f * (1 / 1e-40f) is inf),
  // so the division stays. Empty tensor if not every element qualifies.
  static Tensor exact_reciprocal(const ops::TensorImpl& c) {
    if (!is_floating(c.dtype)) return Tensor();
    Tensor result(detail::make_concrete(c.dtype, c.dims));
    bool exact = true;
    ops::visit_dtype(c.dtype, [&](auto x) {
      using T = decltype(x);
      if constexpr (std::is_floating_point_v<T>) {
        auto power_of_two = [](T v) {
          int e = 0;
          return std::isfinite(v) && v != 0 && std::fabs(std::frexp(v, &e)) == T(0.5);
        };
        T* r = result.impl()->template as<T>();
        for (int64_t i = 0; i < c.num_elements && exact; ++i) {
          const T v = c.as<T>()[i];
          r[i] = T(1) / v;
          exact = power_of_two(v) && power_of_two(r[i]);
        }
      }
    });
    return exact ? result : Tensor();
  }
};
}  // namespace

std::unique_ptr<Pass> make_arithmetic_simplification() { return std::make_unique<ArithmeticSimplification>(); }

}  // namespace kiln::optimize
