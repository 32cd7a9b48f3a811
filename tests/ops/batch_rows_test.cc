// Each op row's rule for a batch (OpDef::rows, ops/batch_rows.h), asked directly: what its
// outputs are to the batch, given what its inputs are. exec/batch_split_test runs the same rules
// through whole graphs.
#include "ops/batch_rows.h"

#include <gtest/gtest.h>

#include "core/tensor_impl.h"
#include "kiln/kiln.h"
#include "ops/op_list.h"

using namespace kiln;
using ops::RowKind;
namespace op = kiln::ops::op;

namespace {

constexpr RowKind kRows = RowKind::kRows, kFree = RowKind::kFree, kOther = RowKind::kOther,
                  kBatchSize = RowKind::kBatchSize, kRowsShape = RowKind::kRowsShape;

// One input: its dims (-1 unknown; {} a scalar), what it is to the batch, and its value when it
// is a Const.
struct In {
  Dims dims;
  RowKind kind;
  std::optional<Tensor> value = std::nullopt;
};
In rows(Dims d) { return {.dims = d, .kind = kRows}; }
In free(Dims d) { return {.dims = d, .kind = kFree}; }
In ints(std::vector<int64_t> v) {
  return {.dims = {static_cast<int64_t>(v.size())}, .kind = kFree, .value = constant<int64_t>(v)};
}
In paddings(std::vector<int64_t> v) {  // [rank, 2]
  const int64_t rank = static_cast<int64_t>(v.size()) / 2;
  return {.dims = {rank, 2}, .kind = kFree, .value = constant<int64_t>(v, {rank, 2})};
}
In batch_size() { return {.dims = Dims{}, .kind = kBatchSize}; }
In rows_shape(int64_t rank) { return {.dims = {rank}, .kind = kRowsShape}; }

// The op's answer for these inputs, output rank and attrs.
RowKind ask(const ops::OpDef& o, const std::vector<In>& in, int out_rank, ops::Attrs attrs = {}) {
  attrs = ops::with_defaults(o, std::move(attrs));
  std::vector<ops::InputInfo> infos;
  std::vector<RowKind> kinds;
  for (const In& i : in) {
    infos.push_back({.dtype = DType::Float32,
                     .dims = &i.dims,
                     .unknown_rank = false,
                     .value = i.value ? i.value->impl() : nullptr});
    kinds.push_back(i.kind);
  }
  const ops::RowsContext c = {.op = o,
                              .inputs = infos.data(),
                              .kinds = kinds.data(),
                              .num_inputs = static_cast<int>(in.size()),
                              .attrs = attrs,
                              .out_rank = out_rank};
  return o.rows ? o.rows(c) : ops::rows_by_traits(c);
}

const Dims kBatch4 = {-1, 8, 8, 3};

}  // namespace

TEST(BatchRows, EveryWindowedOpHasARule) {
  for (const ops::OpDef* o : ops::all_ops())
    if (o->has(ops::kWindowed)) {
      EXPECT_NE(o->rows, nullptr) << o->name;
    }
}

TEST(BatchRows, ElementwiseOpsKeepRowsUnlessAnOperandStretchesAlongTheBatch) {
  EXPECT_EQ(ask(op::AddV2(), {rows({-1, 4}), free({4})}, 2), kRows);
  EXPECT_EQ(ask(op::AddV2(), {rows({-1, 4}), free({1, 4})}, 2), kRows);
  EXPECT_EQ(ask(op::AddV2(), {free({1, 4}), rows({-1, 4})}, 2), kRows);
  EXPECT_EQ(ask(op::AddV2(), {rows({-1, 4}), free({3, 4})}, 2), kOther);  // row i would meet free row i
  EXPECT_EQ(ask(op::AddV2(), {rows({-1, 4}), rows({-1, 4})}, 2), kRows);
  EXPECT_EQ(ask(op::AddV2(), {rows({-1}), rows({-1, 4})}, 2), kOther);  // rows against columns
  EXPECT_EQ(ask(op::Mul(), {batch_size(), free(Dims{})}, 0), kOther);   // the batch size in arithmetic
  EXPECT_EQ(ask(op::Relu(), {rows(kBatch4)}, 4), kRows);
  EXPECT_EQ(ask(op::Cumsum(), {rows({-1, 4}), ints({1})}, 2), kOther);  // no rule, not elementwise
}

TEST(BatchRows, ConvolutionsAndPoolsKeepRowsOfNhwcImagesWithFreeFilters) {
  const In filter = free({3, 3, 3, 4});
  const ops::Attrs conv = {std::vector<int64_t>{1, 1, 1, 1}, std::string("SAME")};
  EXPECT_EQ(ask(op::Conv2D(), {rows(kBatch4), filter}, 4, conv), kRows);
  EXPECT_EQ(ask(op::Conv2D(), {rows(kBatch4), rows({-1, 3, 3, 4})}, 4, conv), kOther);
  ops::Attrs nchw = ops::with_defaults(op::Conv2D(), conv);
  nchw[ops::attr_index(op::Conv2D(), "data_format")] = std::string("NCHW");
  EXPECT_EQ(ask(op::Conv2D(), {rows(kBatch4), filter}, 4, nchw), kOther);
  const ops::Attrs pool = {std::vector<int64_t>{1, 2, 2, 1}, std::vector<int64_t>{1, 2, 2, 1}, std::string("VALID")};
  EXPECT_EQ(ask(op::MaxPool(), {rows(kBatch4)}, 4, pool), kRows);
  EXPECT_EQ(ask(op::AvgPool(), {rows(kBatch4)}, 4, pool), kRows);
}

TEST(BatchRows, ReductionsKeepRowsOnlyOverOtherAxes) {
  EXPECT_EQ(ask(op::Mean(), {rows(kBatch4), ints({1, 2})}, 2), kRows);
  EXPECT_EQ(ask(op::Sum(), {rows(kBatch4), ints({0})}, 3), kOther);
  EXPECT_EQ(ask(op::Max(), {rows(kBatch4), ints({-4})}, 3), kOther);  // -rank is axis 0
  EXPECT_EQ(ask(op::Max(), {rows(kBatch4), ints({-1})}, 3), kRows);
  EXPECT_EQ(ask(op::Sum(), {rows(kBatch4), free({1})}, 3), kOther);  // axes known only when run
  EXPECT_EQ(ask(op::Softmax(), {rows({-1, 10})}, 2), kRows);
  EXPECT_EQ(ask(op::Softmax(), {rows({-1})}, 1), kOther);  // over the batch itself
}

TEST(BatchRows, MatMulKeepsRowsOfABatchTimesAFreeMatrix) {
  EXPECT_EQ(ask(op::MatMul(), {rows({-1, 4}), free({4, 2})}, 2), kRows);
  EXPECT_EQ(ask(op::MatMul(), {free({2, 4}), rows({-1, 4})}, 2), kOther);
  EXPECT_EQ(ask(op::MatMul(), {rows({-1, 4}), free({4, 2})}, 2, {true}), kOther);  // transpose_a
}

TEST(BatchRows, ReshapeKeepsRowsToMinusOneLedShapesOfTheSameRowSize) {
  EXPECT_EQ(ask(op::Reshape(), {rows({-1, 3, 4}), ints({-1, 12})}, 2), kRows);
  EXPECT_EQ(ask(op::Reshape(), {rows({-1, 3, 4}), ints({-1, 6})}, 2), kOther);  // rows would merge
  EXPECT_EQ(ask(op::Reshape(), {rows({-1, 3, 4}), ints({2, -1})}, 2), kOther);
  EXPECT_EQ(ask(op::Reshape(), {rows({-1, -1, 4}), ints({-1, 12})}, 2), kOther);  // a row's size unknown
  // A hostile graph's dims: products that would overflow 64 bits refuse, never wrap to equal.
  EXPECT_EQ(ask(op::Reshape(), {rows({-1, int64_t{1} << 40, int64_t{1} << 40}), ints({-1, int64_t{1} << 62, 256})}, 3),
            kOther);
  EXPECT_EQ(ask(op::Reshape(), {rows({-1, 3, 4}), rows_shape(3)}, 3), kRows);
}

TEST(BatchRows, KerasReshapeTargetIsTheBatchSizePackedWithTheOtherDims) {
  // tf.shape(x) → [0] (the batch size) and [1:] (the rest) → Pack / ConcatV2 → Reshape.
  const In shape = rows_shape(4);
  EXPECT_EQ(ask(op::Shape(), {rows(kBatch4)}, 1), kRowsShape);
  const ops::Attrs shrink0 = {int64_t{0}, int64_t{0}, int64_t{0}, int64_t{0}, int64_t{1}};
  EXPECT_EQ(ask(op::StridedSlice(), {shape, ints({0}), ints({1}), ints({1})}, 0, shrink0), kBatchSize);
  EXPECT_EQ(ask(op::StridedSlice(), {shape, ints({0}), ints({1}), ints({1})}, 1), kRowsShape);
  EXPECT_EQ(ask(op::StridedSlice(), {shape, ints({1}), ints({4}), ints({1})}, 1), kFree);
  EXPECT_EQ(ask(op::StridedSlice(), {shape, ints({0}), ints({2}), ints({1})}, 1), kOther);  // the batch size and more
  EXPECT_EQ(ask(op::StridedSlice(), {rows(kBatch4), ints({0}), ints({1}), ints({1})}, 4), kOther);
  const In size = batch_size();
  EXPECT_EQ(ask(op::Pack(), {size, free(Dims{}), free(Dims{})}, 1, {int64_t{3}}), kRowsShape);
  EXPECT_EQ(ask(op::Pack(), {free(Dims{}), size}, 1, {int64_t{2}}), kOther);  // the batch size not first
  EXPECT_EQ(ask(op::ConcatV2(), {shape, free({2}), ints({0})}, 1, {int64_t{2}}), kRowsShape);
  EXPECT_EQ(ask(op::ConcatV2(), {free({2}), shape, ints({0})}, 1, {int64_t{2}}), kOther);
}

TEST(BatchRows, LayoutOpsKeepRowsWhileAxisZeroStays) {
  EXPECT_EQ(ask(op::ConcatV2(), {rows(kBatch4), rows(kBatch4), ints({3})}, 4, {int64_t{2}}), kRows);
  EXPECT_EQ(ask(op::ConcatV2(), {rows(kBatch4), rows(kBatch4), ints({0})}, 4, {int64_t{2}}), kOther);
  EXPECT_EQ(ask(op::ConcatV2(), {rows(kBatch4), free({1, 8, 8, 3}), ints({3})}, 4, {int64_t{2}}), kOther);
  EXPECT_EQ(ask(op::Transpose(), {rows(kBatch4), ints({0, 3, 1, 2})}, 4), kRows);
  EXPECT_EQ(ask(op::Transpose(), {rows(kBatch4), ints({1, 0, 2, 3})}, 4), kOther);
  EXPECT_EQ(ask(op::ExpandDims(), {rows(kBatch4), ints({1})}, 5), kRows);
  EXPECT_EQ(ask(op::ExpandDims(), {rows(kBatch4), ints({0})}, 5), kOther);
  EXPECT_EQ(ask(op::Squeeze(), {rows({-1, 1, 4})}, 2, {std::vector<int64_t>{1}}), kRows);
  EXPECT_EQ(ask(op::Squeeze(), {rows({-1, 1, 4})}, 2), kOther);  // every size-1 axis: a batch of one too
  EXPECT_EQ(ask(op::Pad(), {rows(kBatch4), paddings({0, 0, 1, 1, 1, 1, 0, 0})}, 4), kRows);
  EXPECT_EQ(ask(op::Pad(), {rows(kBatch4), paddings({1, 0, 1, 1, 1, 1, 0, 0})}, 4), kOther);
  EXPECT_EQ(ask(op::BiasAdd(), {rows(kBatch4), free({3})}, 4), kRows);
  EXPECT_EQ(ask(op::BiasAdd(), {rows(kBatch4), free({3})}, 4, {std::string("NCHW")}), kOther);
}

TEST(BatchRows, SplitsAndSlicesKeepRowsWhileAxisZeroStaysWhole) {
  // A GRU cell cuts its gates apart: every part keeps the rows (the rule speaks for each output).
  const In gates = rows({-1, 12});
  EXPECT_EQ(ask(op::Split(), {ints({1}), gates}, 2, {int64_t{3}}), kRows);
  EXPECT_EQ(ask(op::Split(), {ints({-1}), gates}, 2, {int64_t{3}}), kRows);
  EXPECT_EQ(ask(op::Split(), {ints({0}), gates}, 2, {int64_t{3}}), kOther);
  EXPECT_EQ(ask(op::Split(), {ints({-2}), gates}, 2, {int64_t{3}}), kOther);    // -rank is axis 0
  EXPECT_EQ(ask(op::Split(), {free(Dims{}), gates}, 2, {int64_t{3}}), kOther);  // axis known only when run
  EXPECT_EQ(ask(op::SplitV(), {gates, ints({4, 8}), ints({1})}, 2, {int64_t{2}}), kRows);
  EXPECT_EQ(ask(op::SplitV(), {gates, ints({4, 8}), ints({0})}, 2, {int64_t{2}}), kOther);
  EXPECT_EQ(ask(op::Unpack(), {rows({-1, 3, 4})}, 2, {int64_t{3}, int64_t{1}}), kRows);
  EXPECT_EQ(ask(op::Unpack(), {rows({-1, 3, 4})}, 2, {int64_t{3}, int64_t{0}}), kOther);
  // StridedSlice's masks: begin, end, ellipsis, new axis, shrink.
  auto masks = [](int64_t begin, int64_t end, int64_t ellipsis, int64_t new_axis, int64_t shrink) {
    return ops::Attrs{begin, end, ellipsis, new_axis, shrink};
  };
  const In b = ints({0, 0}), e = ints({0, 4}), s = ints({1, 1});
  EXPECT_EQ(ask(op::StridedSlice(), {gates, b, e, s}, 2, masks(1, 1, 0, 0, 0)), kRows);              // x[:, :4]
  EXPECT_EQ(ask(op::StridedSlice(), {gates, b, e, s}, 2, masks(0, 1, 0, 0, 0)), kRows);              // x[0:, :4]
  EXPECT_EQ(ask(op::StridedSlice(), {gates, b, e, s}, 2, masks(1, 0, 0, 0, 0)), kOther);             // x[:0, :4]
  EXPECT_EQ(ask(op::StridedSlice(), {gates, ints({1, 0}), e, s}, 2, masks(0, 1, 0, 0, 0)), kOther);  // x[1:, :4]
  EXPECT_EQ(ask(op::StridedSlice(), {gates, b, e, ints({2, 1})}, 2, masks(1, 1, 0, 0, 0)), kOther);  // x[::2, :4]
  EXPECT_EQ(ask(op::StridedSlice(), {gates, b, e, s}, 1, masks(1, 1, 0, 0, 1)), kOther);             // x[0, :4]
  EXPECT_EQ(ask(op::StridedSlice(), {gates, b, e, s}, 3, masks(1, 1, 0, 1, 0)), kOther);             // x[None, :4]
  EXPECT_EQ(ask(op::StridedSlice(), {gates, ints({0, 2}), ints({0, 0}), s}, 2, masks(0, 2, 1, 0, 0)),
            kRows);  // x[..., 2:]
  EXPECT_EQ(
      ask(op::StridedSlice(), {gates, ints({0, 0, 2}), ints({0, 1, 0}), ints({1, 1, 1})}, 2, masks(0, 4, 1, 0, 0)),
      kOther);  // x[..., 0:1, 2:]: the ellipsis covers no axis
  EXPECT_EQ(ask(op::StridedSlice(), {gates, free({2}), e, s}, 2, masks(1, 1, 0, 0, 0)), kOther);  // begin unknown
}
