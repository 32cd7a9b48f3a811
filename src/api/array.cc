// Public shape and layout functions.
#include <string>

#include "api/api_util.h"
#include "kiln/ops.h"

namespace kiln {

namespace op = ops::op;
using ops::Attrs;

Tensor reshape(const Tensor& x, const Tensor& shape) {
  return trace::dispatch1(op::Reshape(), {&x, &shape}, trace::no_attrs(), "Reshape");
}
Tensor reshape(const Tensor& x, std::vector<int64_t> shape) {
  Tensor s = api::int_list(shape, "Reshape/shape");
  return reshape(x, s);
}

Tensor transpose(const Tensor& x, std::vector<int64_t> perm) {
  Tensor p = api::int_list(perm, "transpose/perm");
  return trace::dispatch1(op::Transpose(), {&x, &p}, trace::no_attrs(), "transpose");
}
Tensor transpose(const Tensor& x) {
  const int r = x.defined() ? x.rank() : 0;
  if (r < 0) throw InvalidArgumentError("transpose() without perm needs a known rank [Op:Transpose]");
  std::vector<int64_t> perm(r);
  for (int i = 0; i < r; ++i) perm[i] = r - 1 - i;
  return transpose(x, perm);
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) throw InvalidArgumentError("concat needs at least one tensor [Op:ConcatV2]");
  if (xs.size() == 1) return identity(xs[0]);  // as tf.concat does: ConcatV2 takes two or more
  std::vector<Tensor> in = xs;
  in.push_back(api::int_scalar(axis, "concat/axis"));
  return trace::dispatch_list(op::ConcatV2(), in, Attrs{static_cast<int64_t>(xs.size())}, "concat")[0];
}

Tensor stack(const std::vector<Tensor>& xs, int64_t axis) {
  if (xs.empty()) throw InvalidArgumentError("stack needs at least one tensor [Op:Pack]");
  return trace::dispatch_list(op::Pack(), xs, Attrs{static_cast<int64_t>(xs.size()), axis}, "stack")[0];
}

Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size) {
  Tensor b = api::int_list(begin, "Slice/begin"), s = api::int_list(size, "Slice/size");
  return trace::dispatch1(op::Slice(), {&x, &b, &s}, trace::no_attrs(), "Slice");
}

Tensor strided_slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> end,
                     std::vector<int64_t> strides, StridedSliceMasks m) {
  Tensor b = api::int_list(begin, "strided_slice/stack"), e = api::int_list(end, "strided_slice/stack_1"),
         s = api::int_list(strides, "strided_slice/stack_2");
  return trace::dispatch1(op::StridedSlice(), {&x, &b, &e, &s},
                          Attrs{m.begin_mask, m.end_mask, m.ellipsis_mask, m.new_axis_mask, m.shrink_axis_mask},
                          "strided_slice");
}

Tensor gather(const Tensor& x, const Tensor& indices, int64_t axis) {
  Tensor a = api::int_scalar(axis, "GatherV2/axis");
  return trace::dispatch1(op::GatherV2(), {&x, &indices, &a}, Attrs{int64_t{0}}, "GatherV2");
}
Tensor gather(const Tensor& x, std::vector<int64_t> indices, int64_t axis) {
  return gather(x, api::int_list(indices, "GatherV2/indices"), axis);
}

Tensor expand_dims(const Tensor& x, int64_t axis) {
  Tensor a = api::int_scalar(axis, "ExpandDims/dim");
  return trace::dispatch1(op::ExpandDims(), {&x, &a}, trace::no_attrs(), "ExpandDims");
}

Tensor squeeze(const Tensor& x, std::vector<int64_t> axes) {
  return trace::dispatch1(op::Squeeze(), {&x}, Attrs{std::move(axes)}, "Squeeze");
}

Tensor broadcast_to(const Tensor& x, std::vector<int64_t> shape) {
  Tensor s = api::int_list(shape, "BroadcastTo/shape");
  return trace::dispatch1(op::BroadcastTo(), {&x, &s}, trace::no_attrs(), "BroadcastTo");
}

Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments) {
  Tensor n = api::int_scalar(num_segments, "UnsortedSegmentSum/num_segments");
  return trace::dispatch1(op::UnsortedSegmentSum(), {&data, &segment_ids, &n}, trace::no_attrs(), "UnsortedSegmentSum");
}

Tensor tile(const Tensor& x, std::vector<int64_t> multiples) {
  Tensor m = api::int_list(multiples, "Tile/multiples");
  return trace::dispatch1(op::Tile(), {&x, &m}, trace::no_attrs(), "Tile");
}

Tensor shape_of(const Tensor& x) { return trace::dispatch1(op::Shape(), {&x}, Attrs{DType::Int32}, "Shape"); }
Tensor size_of(const Tensor& x) { return trace::dispatch1(op::Size(), {&x}, Attrs{DType::Int32}, "Size"); }
Tensor rank_of(const Tensor& x) { return trace::dispatch1(op::Rank(), {&x}, trace::no_attrs(), "Rank"); }

}  // namespace kiln
