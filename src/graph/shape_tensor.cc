#include "graph/shape_tensor.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "eager/execute.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::graph {
namespace {

const int kBeginMask = ops::attr_index(ops::op::StridedSlice(), "begin_mask");
const int kEndMask = ops::attr_index(ops::op::StridedSlice(), "end_mask");
const int kEllipsisMask = ops::attr_index(ops::op::StridedSlice(), "ellipsis_mask");
const int kNewAxisMask = ops::attr_index(ops::op::StridedSlice(), "new_axis_mask");
const int kShrinkAxisMask = ops::attr_index(ops::op::StridedSlice(), "shrink_axis_mask");

// Shape arithmetic is shallow and small: an evaluation visits at most this many nodes and
// runs kernels only on values this small (the rest stays unknown, and runs as it would).
constexpr int kMaxVisits = 64;
constexpr int64_t kMaxElements = 64;

struct Evaluation {
  ShapeRules rules;
  int visits = 0;
  bool spend() { return ++visits <= kMaxVisits; }
};

std::optional<std::vector<int64_t>> ints_of(const ops::TensorImpl* t) {
  if (!t || (t->dtype != DType::Int32 && t->dtype != DType::Int64) || t->dims.size() > 1) return std::nullopt;
  return ops::int_values(*t);
}

const TensorShape& shape_of(const Output& o) { return o.node->out_shapes[o.index]; }

// Known, and at most kMaxElements elements (without overflow on a hostile graph's dims).
bool small(const TensorShape& s) {
  if (!s.is_fully_defined()) return false;
  int64_t n = 1;
  for (int64_t d : s.dims())
    if (d == 0) return true;
  for (int64_t d : s.dims()) {
    if (d > kMaxElements) return false;
    n *= d;
    if (n > kMaxElements) return false;
  }
  return true;
}

// An int32 or int64 tensor of `v`: a scalar, or a vector.
std::optional<Tensor> int_tensor(DType dtype, const std::vector<int64_t>& v, bool scalar) {
  if (dtype != DType::Int32 && dtype != DType::Int64) return std::nullopt;
  Tensor t(detail::make_concrete(dtype, scalar ? Dims{} : Dims{static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::Int32)
      static_cast<int32_t*>(t.impl()->data)[i] = static_cast<int32_t>(v[i]);
    else
      static_cast<int64_t*>(t.impl()->data)[i] = v[i];
  }
  return t;
}

// An int32/int64 scalar a StridedSlice takes from a Shape: the dimension, where known.
std::optional<Tensor> dimension_of_shape(const Node& n) {
  if (n.op != &ops::op::StridedSlice() || n.inputs.size() != 4 || n.inputs[0].node->op != &ops::op::Shape() ||
      n.attrs.i(kShrinkAxisMask) != 1 || n.attrs.i(kEllipsisMask) != 0 || n.attrs.i(kNewAxisMask) != 0 ||
      n.attrs.i(kBeginMask) != 0)
    return std::nullopt;
  const auto begin = ints_of(n.inputs[1].node->const_value());
  const TensorShape& s = shape_of(n.inputs[0].node->inputs[0]);
  if (!begin || begin->size() != 1 || s.unknown_rank()) return std::nullopt;
  int64_t k = (*begin)[0];
  if (k < 0) k += s.rank();
  if (k < 0 || k >= s.rank() || s.dims()[static_cast<size_t>(k)] < 0) return std::nullopt;
  return int_tensor(n.out_dtypes[0], {s.dims()[static_cast<size_t>(k)]}, true);
}

// The value of a small output that depends on nothing unknown before running: a constant, a
// known dimension of a Shape, or a pure op's kernel run on such values (TensorFlow's shape
// inference evaluates constant subgraphs the same way).
std::optional<Tensor> value_of(const Output& o, Evaluation& e) {
  const Node& n = *o.node;
  if (const ops::TensorImpl* c = n.const_value()) return Tensor(detail::make_alias(c, c->dims));
  if (!e.spend()) return std::nullopt;
  if (n.op == &ops::op::Shape()) {
    const TensorShape& s = shape_of(n.inputs[0]);
    if (!s.is_fully_defined()) return std::nullopt;
    return int_tensor(n.out_dtypes[0], s.dims(), false);
  }
  if (auto d = dimension_of_shape(n)) return d;
  if (!small(shape_of(o)) || n.stateful || n.op->has(ops::kControlFlow) || n.op->has(ops::kNoKernel) ||
      !detail::has_values(n.out_dtypes[o.index]))
    return std::nullopt;
  std::vector<Tensor> values;
  std::vector<const ops::TensorImpl*> impls;
  for (const Output& in : n.inputs) {
    if (!small(shape_of(in))) return std::nullopt;
    auto v = value_of(in, e);
    if (!v) return std::nullopt;
    values.push_back(std::move(*v));
  }
  for (const Tensor& v : values) impls.push_back(v.impl());
  try {
    std::vector<Tensor> outs = eager::execute(*n.op, impls.data(), static_cast<int>(impls.size()), n.attrs);
    return std::move(outs[static_cast<size_t>(o.index)]);
  } catch (const std::exception&) {
    return std::nullopt;  // the op's error, at run time
  }
}

// A vector of `length` unknown elements, if its length is known.
std::optional<Dims> unknown_of(const Output& o) {
  const TensorShape& s = shape_of(o);
  if (s.unknown_rank() || s.rank() != 1 || s.dims()[0] < 0) return std::nullopt;
  return Dims(static_cast<size_t>(s.dims()[0]), -1);
}

std::optional<Dims> partial_of(const Output& o, Evaluation& e);

// A slice of a partial shape: TensorFlow evaluates a StridedSlice of one with constant
// begin, end and stride, no masks but begin/end's first bit.
std::optional<Dims> slice_of(const Node& n, Evaluation& e) {
  const int64_t bm = n.attrs.i(kBeginMask), em = n.attrs.i(kEndMask);
  if (n.inputs.size() != 4 || (bm != 0 && bm != 1) || (em != 0 && em != 1) || n.attrs.i(kEllipsisMask) != 0 ||
      n.attrs.i(kNewAxisMask) != 0 || n.attrs.i(kShrinkAxisMask) != 0)
    return std::nullopt;
  const auto b = ints_of(n.inputs[1].node->const_value()), en = ints_of(n.inputs[2].node->const_value()),
             st = ints_of(n.inputs[3].node->const_value());
  if (!b || !en || !st || b->size() != 1 || en->size() != 1 || st->size() != 1 || (*st)[0] == 0) return std::nullopt;
  const auto in = partial_of(n.inputs[0], e);
  if (!in) return std::nullopt;
  const auto size = static_cast<int64_t>(in->size());
  // A step longer than the shape takes one element, as the shape's length plus one does
  // (and k + stride cannot overflow).
  const int64_t stride = std::clamp<int64_t>((*st)[0], -(size + 1), size + 1);
  // Python's slice rules: negative indices count from the end, and both ends clamp.
  // A masked begin is the first element in the stride's direction; a masked end, one past
  // the last.
  auto clamp = [&](int64_t k) {
    if (k < 0) k += size;
    return stride > 0 ? std::clamp<int64_t>(k, 0, size) : std::clamp<int64_t>(k, -1, size - 1);
  };
  const int64_t from = bm == 1 ? (stride > 0 ? 0 : size - 1) : clamp((*b)[0]);
  const int64_t to = em == 1 ? (stride > 0 ? size : -1) : clamp((*en)[0]);
  Dims out;
  for (int64_t k = from; stride > 0 ? k < to : k > to; k += stride) out.push_back((*in)[static_cast<size_t>(k)]);
  return out;
}

std::optional<Dims> partial_of(const Output& o, Evaluation& e) {
  const Node& n = *o.node;
  if (const auto c = ints_of(n.const_value())) {
    Dims d(c->begin(), c->end());
    for (int64_t& x : d) x = std::max<int64_t>(x, -1);
    return d;
  }
  if (shape_of(o).rank() != 1 || !e.spend()) return unknown_of(o);
  const bool optimizer = e.rules == ShapeRules::kOptimizer;
  if (n.op == &ops::op::Shape()) {
    const TensorShape& s = shape_of(n.inputs[0]);
    if (s.unknown_rank()) return std::nullopt;
    return s.dims();
  }
  if (n.op == &ops::op::Cast() || (optimizer && n.op == &ops::op::Identity())) return partial_of(n.inputs[0], e);
  if (n.op == &ops::op::Pack()) {
    Dims d;
    for (const Output& in : n.inputs) {
      const auto v = value_of(in, e);
      const auto ints = v ? ints_of(v->impl()) : std::nullopt;
      d.push_back(ints && ints->size() == 1 ? std::max<int64_t>((*ints)[0], -1) : -1);
    }
    return d;
  }
  if (n.op == &ops::op::ConcatV2() && n.inputs.size() >= 2) {
    Dims d;
    for (size_t i = 0; i + 1 < n.inputs.size(); ++i) {
      const auto part = partial_of(n.inputs[i], e);
      if (!part) return unknown_of(o);
      for (int64_t x : *part) d.push_back(x);
    }
    return d;
  }
  if (n.op == &ops::op::StridedSlice())
    if (auto d = slice_of(n, e)) return d;
  if (optimizer && n.op == &ops::op::GatherV2() && n.inputs.size() == 3) {
    const auto axis = ints_of(n.inputs[2].node->const_value());
    const auto indices = ints_of(n.inputs[1].node->const_value());
    const auto params = partial_of(n.inputs[0], e);
    if (axis && axis->size() == 1 && (*axis)[0] == 0 && indices && params && shape_of(n.inputs[1]).rank() == 1) {
      Dims d;
      const auto size = static_cast<int64_t>(params->size());
      for (int64_t i : *indices) {
        if (i < 0 || i >= size) return unknown_of(o);  // the kernel's error, at run time
        d.push_back((*params)[static_cast<size_t>(i)]);
      }
      return d;
    }
  }
  if (const auto v = value_of(o, e))
    if (const auto ints = ints_of(v->impl())) {
      Dims d(ints->begin(), ints->end());
      for (int64_t& x : d) x = std::max<int64_t>(x, -1);
      return d;
    }
  return unknown_of(o);
}

}  // namespace

std::optional<TensorShape> shape_from_shape_tensor(const Output& o, ShapeRules rules) {
  Evaluation e{.rules = rules};
  auto d = partial_of(o, e);
  if (!d) return std::nullopt;
  return TensorShape(std::move(*d));
}

bool refine_shape(TensorShape& now, const TensorShape& more) {
  if (more.unknown_rank()) return false;
  if (now.unknown_rank()) {
    now = more;
    return true;
  }
  if (now.rank() != more.rank()) return false;
  Dims d = now.dims();
  bool changed = false;
  for (size_t k = 0; k < d.size(); ++k) {
    const int64_t m = more.dims()[k];
    if (m < 0) continue;
    if (d[k] >= 0 && d[k] != m) return false;
    if (d[k] < 0) {
      d[k] = m;
      changed = true;
    }
  }
  if (changed) now = TensorShape(std::move(d));
  return changed;
}

}  // namespace kiln::graph
