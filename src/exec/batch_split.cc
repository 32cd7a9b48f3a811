#include "exec/batch_split.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/object_value.h"
#include "core/tensor_impl.h"
#include "ops/op_list.h"

namespace kiln::exec {

namespace {

// What a value is to the batch: computed without it (weights, constants, a normalization's
// parameters: the same in every row's call), batched (its axis 0 is the batch), the batch
// size (a scalar), a shape whose first entry is the batch size (the rest the same in every
// row's call: what Keras's Reshape layer builds, tf.shape(x)[0] packed with the other dims),
// or anything else (the batch size in arithmetic, a sum over the batch): the graph does not
// split.
enum class Kind : char { kFree, kRows, kBatchSize, kRowsShape, kOther };

// The integer values of a Const input; false for anything else.
bool const_ints(const graph::Output& o, std::vector<int64_t>& out) {
  const detail::TensorImpl* v = o.node->const_value();
  if (!v) return false;
  out.clear();
  for (int64_t i = 0; i < v->num_elements; ++i) {
    if (v->dtype == DType::Int32)
      out.push_back(v->as<int32_t>()[i]);
    else if (v->dtype == DType::Int64)
      out.push_back(v->as<int64_t>()[i]);
    else
      return false;
  }
  return true;
}

int rank_of(const graph::Output& o) { return o.node->out_shapes[static_cast<size_t>(o.index)].rank(); }
const TensorShape& shape_of(const graph::Output& o) { return o.node->out_shapes[static_cast<size_t>(o.index)]; }

// The node's attr `name`, or null.
const ops::AttrValue* attr(const graph::Node& n, const char* name) {
  for (size_t i = 0; i < n.op->attr_specs.size() && static_cast<int>(i) < n.attrs.size(); ++i)
    if (std::strcmp(n.op->attr_specs[i].name, name) == 0) return &n.attrs[static_cast<int>(i)];
  return nullptr;
}
template <class T>
const T* attr_as(const graph::Node& n, const char* name) {
  const ops::AttrValue* v = attr(n, name);
  return v ? std::get_if<T>(v) : nullptr;
}
bool attr_is(const graph::Node& n, const char* name, std::string_view value) {
  const std::string* s = attr_as<std::string>(n, name);
  return s && *s == value;
}
bool flag(const graph::Node& n, const char* name) {
  const bool* v = attr_as<bool>(n, name);
  return v && *v;
}
int64_t int_attr(const graph::Node& n, const char* name) {
  const int64_t* v = attr_as<int64_t>(n, name);
  return v ? *v : -1;
}

// An axis among `axes` (of a value of rank `rank`) is the batch's.
bool touches_batch(const std::vector<int64_t>& axes, int rank) {
  for (int64_t a : axes)
    if (a == 0 || (rank > 0 && a == -rank)) return true;
  return false;
}

bool is_one_of(const ops::OpDef* op, std::initializer_list<const ops::OpDef*> ops) {
  for (const ops::OpDef* o : ops)
    if (op == o) return true;
  return false;
}

bool is_windowed(const ops::OpDef* op) {
  return is_one_of(op, {&ops::op::Conv2D(), &ops::op::DepthwiseConv2dNative(), &ops::op::KilnFusedConv2D(),
                        &ops::op::KilnFusedDepthwiseConv2dNative(), &ops::op::MaxPool(), &ops::op::AvgPool()});
}

// A free operand beside a batched one of rank `rank` in an elementwise op: broadcasting must
// not stretch it along the batch (a lower rank, or a leading 1).
bool broadcasts_per_row(const graph::Output& o, int rank) {
  const TensorShape& s = shape_of(o);
  return s.rank() >= 0 && (s.rank() < rank || (s.rank() == rank && rank > 0 && s.dim(0) == 1));
}

// Node `n`, some of whose inputs are the batch size or a shape led by it: the steps that take
// such a value from tf.shape(x) to a Reshape, and nothing else.
Kind sized_kind(const graph::Node& n, const std::vector<Kind>& kinds) {
  const ops::OpDef* op = n.op;
  auto is = [&](size_t i, Kind k) { return i < kinds.size() && kinds[i] == k; };
  std::vector<int64_t> begin, end, strides;
  if (op == &ops::op::StridedSlice()) {
    // shape[0] (the batch size), shape[:1] (a shape led by it) or shape[k:] for k >= 1 (the
    // other dims: the same in every row's call).
    if (!is(0, Kind::kRowsShape) || !is(1, Kind::kFree) || !is(2, Kind::kFree) || !is(3, Kind::kFree) ||
        !const_ints(n.inputs[1], begin) || !const_ints(n.inputs[2], end) || !const_ints(n.inputs[3], strides) ||
        begin.size() != 1 || end.size() != 1 || strides != std::vector<int64_t>{1} ||
        int_attr(n, "ellipsis_mask") != 0 || int_attr(n, "new_axis_mask") != 0 || int_attr(n, "begin_mask") != 0)
      return Kind::kOther;
    if (begin[0] >= 1) return Kind::kFree;
    const int64_t shrink = int_attr(n, "shrink_axis_mask");
    if (begin[0] != 0 || end[0] != 1 || int_attr(n, "end_mask") != 0) return Kind::kOther;
    return shrink == 1 ? Kind::kBatchSize : shrink == 0 ? Kind::kRowsShape : Kind::kOther;
  }
  if (op == &ops::op::Pack() || op == &ops::op::ConcatV2()) {
    // [batch size, other dims...] along axis 0: a shape led by the batch size.
    const bool pack = op == &ops::op::Pack();
    const size_t values = pack ? n.inputs.size() : n.inputs.size() - 1;
    std::vector<int64_t> axis;
    if (pack ? int_attr(n, "axis") != 0 : !const_ints(n.inputs[values], axis) || axis != std::vector<int64_t>{0})
      return Kind::kOther;
    if (!is(0, pack ? Kind::kBatchSize : Kind::kRowsShape)) return Kind::kOther;
    for (size_t i = 1; i < values; ++i)
      if (!is(i, Kind::kFree)) return Kind::kOther;
    return Kind::kRowsShape;
  }
  if (op == &ops::op::Reshape()) return is(0, Kind::kRows) && is(1, Kind::kRowsShape) ? Kind::kRows : Kind::kOther;
  return Kind::kOther;
}

// Node `n`, some of whose inputs are batched and the rest free (kinds[i] per input): is its
// output 0 batched?
Kind batched_kind(const graph::Node& n, const std::vector<Kind>& kinds) {
  const ops::OpDef* op = n.op;
  const int out_rank = n.num_outputs() == 1 ? n.out_shapes[0].rank() : -1;
  auto rows = [&](size_t i) { return kinds[i] == Kind::kRows; };
  auto free = [&](size_t i) { return kinds[i] == Kind::kFree; };
  std::vector<int64_t> v;
  if (n.num_outputs() != 1 || out_rank < 1 || n.stateful) return Kind::kOther;
  if (op->has(ops::kElementwise) || op->has(ops::kForwardsInput)) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (rows(i) && rank_of(n.inputs[i]) != out_rank) return Kind::kOther;
      if (free(i) && !broadcasts_per_row(n.inputs[i], out_rank)) return Kind::kOther;
    }
    return Kind::kRows;
  }
  if (is_windowed(op)) {
    if (!attr_is(n, "data_format", "NHWC") || !rows(0) || (n.inputs.size() > 1 && !free(1))) return Kind::kOther;
    for (size_t i = 2; i < n.inputs.size(); ++i)  // a fused epilogue's vectors and residual
      if (rows(i) ? rank_of(n.inputs[i]) != 4 : !broadcasts_per_row(n.inputs[i], 4)) return Kind::kOther;
    return Kind::kRows;
  }
  if (op == &ops::op::BiasAdd())
    return rows(0) && free(1) && (out_rank == 2 || attr_is(n, "data_format", "NHWC")) ? Kind::kRows : Kind::kOther;
  if (op == &ops::op::ConcatV2()) {
    const size_t axis_input = n.inputs.size() - 1;
    if (!free(axis_input) || !const_ints(n.inputs[axis_input], v) || v.size() != 1 || touches_batch(v, out_rank))
      return Kind::kOther;
    for (size_t i = 0; i < axis_input; ++i)
      if (!rows(i)) return Kind::kOther;
    return Kind::kRows;
  }
  if (is_one_of(op, {&ops::op::Mean(), &ops::op::Sum(), &ops::op::Max(), &ops::op::Min(), &ops::op::Prod()}))
    return rows(0) && free(1) && const_ints(n.inputs[1], v) && !touches_batch(v, rank_of(n.inputs[0])) ? Kind::kRows
                                                                                                       : Kind::kOther;
  if (op == &ops::op::MatMul()) return rows(0) && free(1) && !flag(n, "transpose_a") ? Kind::kRows : Kind::kOther;
  if (is_one_of(op, {&ops::op::Softmax(), &ops::op::LogSoftmax()})) return out_rank >= 2 ? Kind::kRows : Kind::kOther;
  if (is_one_of(op, {&ops::op::Pad(), &ops::op::PadV2(), &ops::op::MirrorPad()})) {
    for (size_t i = 1; i < n.inputs.size(); ++i)
      if (!free(i)) return Kind::kOther;
    return const_ints(n.inputs[1], v) && v.size() >= 2 && v[0] == 0 && v[1] == 0 ? Kind::kRows : Kind::kOther;
  }
  if (op == &ops::op::Shape()) return Kind::kRowsShape;
  if (op == &ops::op::Reshape()) {
    // [-1, d1, ...] of an input whose other dims are known with the same product: -1 is the batch.
    const TensorShape& in = shape_of(n.inputs[0]);
    if (!rows(0) || !free(1) || !const_ints(n.inputs[1], v) || v.empty() || v[0] != -1 || in.rank() < 1)
      return Kind::kOther;
    // (Products in double: a hostile graph's dims must not overflow; equal products of real
    // tensors' dims are far below 2^53.)
    double want = 1, have = 1;
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] < 0) return Kind::kOther;
      want *= static_cast<double>(v[i]);
    }
    for (int i = 1; i < in.rank(); ++i) {
      if (in.dim(i) < 0) return Kind::kOther;
      have *= static_cast<double>(in.dim(i));
    }
    return want == have && want > 0 && want < 9e15 ? Kind::kRows : Kind::kOther;
  }
  if (op == &ops::op::Squeeze()) {
    // Named axes only (squeezing every dim of size 1 would squeeze a batch of one away).
    const auto* axes = attr_as<std::vector<int64_t>>(n, "squeeze_dims");
    return axes && !axes->empty() && !touches_batch(*axes, rank_of(n.inputs[0])) ? Kind::kRows : Kind::kOther;
  }
  if (op == &ops::op::ExpandDims())
    return free(1) && const_ints(n.inputs[1], v) && v.size() == 1 && !touches_batch(v, out_rank) ? Kind::kRows
                                                                                                 : Kind::kOther;
  if (op == &ops::op::Transpose())
    return free(1) && const_ints(n.inputs[1], v) && !v.empty() && v[0] == 0 ? Kind::kRows : Kind::kOther;
  return Kind::kOther;
}

// One row of node `n`'s output 0, in bytes; 0 if a dim other than the batch is unknown.
int64_t row_bytes(const graph::Node& n) {
  const TensorShape& s = n.out_shapes[0];
  if (s.rank() < 1) return 0;
  double bytes = static_cast<double>(dtype_size(n.out_dtypes[0]));  // a double: no overflow to guard
  for (int i = 1; i < s.rank(); ++i) {
    if (s.dim(i) < 0) return 0;
    bytes *= static_cast<double>(s.dim(i));
  }
  return static_cast<int64_t>(std::min(bytes, 1e15));
}

}  // namespace

BatchSplit analyze_batch_split(const graph::Graph& g) {
  BatchSplit split;
  if (g.inputs.empty() || g.outputs.empty()) return split;
  std::vector<Kind> kind(static_cast<size_t>(g.num_nodes()), Kind::kFree);
  bool any_batched = false, windowed = false;
  int64_t largest_row = 0;  // bytes of one row of the largest batched value (of known dims)
  for (const graph::Node* in : g.inputs) {
    const TensorShape& s = in->out_shapes[0];
    const bool batched = s.rank() >= 1 && s.dim(0) < 0;
    if (batched && detail::holds_objects(in->out_dtypes[0])) return split;  // rows are copied as plain bytes
    split.batched_feed.push_back(batched);
    kind[static_cast<size_t>(in->id)] = batched ? Kind::kRows : Kind::kFree;
    any_batched |= batched;
  }
  if (!any_batched) return split;
  std::vector<Kind> inputs;
  for (const auto& node : g.nodes()) {
    const graph::Node& n = *node;
    Kind& k = kind[static_cast<size_t>(n.id)];
    if (k == Kind::kRows && n.op == &ops::op::Placeholder()) continue;  // a batched feed
    // Each row's call runs every step again: a step that draws random numbers or changes
    // state would run once per row instead of once (reading a variable is harmless).
    if ((n.stateful || n.op->is_stateful()) && n.op != &ops::op::ReadVariableOp()) return split;
    inputs.clear();
    bool batched = false, sized = false, other = false;
    for (const graph::Output& o : n.inputs) {
      inputs.push_back(kind[static_cast<size_t>(o.node->id)]);
      batched |= inputs.back() == Kind::kRows;
      sized |= inputs.back() == Kind::kBatchSize || inputs.back() == Kind::kRowsShape;
      other |= inputs.back() == Kind::kOther;
    }
    k = other ? Kind::kOther : sized ? sized_kind(n, inputs) : batched ? batched_kind(n, inputs) : Kind::kFree;
    windowed |= batched && is_windowed(n.op);
    if (k == Kind::kRows) largest_row = std::max(largest_row, row_bytes(n));
  }
  for (const graph::Output& o : g.outputs)
    if (kind[static_cast<size_t>(o.node->id)] != Kind::kRows || o.index != 0 ||
        detail::holds_objects(o.node->out_dtypes[0]))
      return split;
  split.separable = windowed && largest_row >= kMinRowBytes;
  return split;
}

bool batch_split_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("KILN_BATCH_SPLIT");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return enabled;
}

}  // namespace kiln::exec
