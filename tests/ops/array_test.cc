// Shape and layout ops: Reshape, Transpose, ConcatV2, Pack, Slice, StridedSlice, GatherV2,
// ExpandDims, Squeeze, Tile, Fill, Range, Shape, Size, Rank, eye.
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
Tensor iota(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return reshape(range(0, static_cast<double>(n), 1, DType::Int32), shape);
}
}  // namespace

TEST(Reshape, ValuesAndInference) {
  Tensor x = iota({2, 3});
  expect_tensor<int32_t>(reshape(x, {3, 2}), {0, 1, 2, 3, 4, 5}, {3, 2});
  expect_tensor<int32_t>(reshape(x, {-1}), {0, 1, 2, 3, 4, 5}, {6});
  expect_tensor<int32_t>(reshape(x, {3, -1}), {0, 1, 2, 3, 4, 5}, {3, 2});
  expect_tensor<int32_t>(reshape(constant<int32_t>({7}), std::vector<int64_t>{}), {7}, {});
  expect_error<InvalidArgumentError>(
      [&] { reshape(x, {4}); },
      "Input to reshape is a tensor with 6 values, but the requested shape has 4 [Op:Reshape]");
  expect_error<InvalidArgumentError>([&] { reshape(x, {-1, -1}); }, "Only one input size may be -1, not both 0 and 1");
  expect_error<InvalidArgumentError>([&] { reshape(x, {4, -1}); }, "requested shape requires a multiple of 4");
  expect_error<InvalidArgumentError>([&] { reshape(x, {-3, 2}); }, "must be non-negative");
}

// Reshape, ExpandDims and Squeeze share their input's buffer, eager and traced, as
// TensorFlow's do; a traced function whose input size is known only when it runs still checks
// the requested shape (a plan runs no shape function for such a step: the kernel does).
TEST(Reshape, SharesTheInputsBufferAndStillChecksTheShape) {
  Tensor x = random_uniform({64, 32}, -1, 1, DType::Float32, 5);
  const void* data = x.data();
  EXPECT_EQ(reshape(x, {32, 64}).data(), data);
  EXPECT_EQ(expand_dims(x, 0).data(), data);
  EXPECT_EQ(squeeze(reshape(x, {1, 64, 32})).data(), data);
  auto f = function([](Tensor t) { return std::make_tuple(reshape(t, {-1, 8}), squeeze(expand_dims(t, 1), {1})); });
  ConcreteFunction cf = f.get_concrete_function(TensorSpec{{-1, 32}, DType::Float32});
  const std::vector<Tensor> out = cf(x);
  EXPECT_EQ(out[0].shape(), TensorShape({256, 8}));
  EXPECT_EQ(out[0].data(), data);
  EXPECT_EQ(out[1].data(), data);
  EXPECT_EQ(out[1].to_vector<float>(), x.to_vector<float>());
  auto g = function([](Tensor t) { return reshape(t, {-1, 7}); });
  ConcreteFunction cg = g.get_concrete_function(TensorSpec{{-1, 32}, DType::Float32});
  expect_error<InvalidArgumentError>([&] { (void)cg(x); }, "requested shape requires a multiple of 7");
  // A shape known when traced from an input whose size is not: the plan's view step aliases
  // only an input of as many elements, and any other fails as the op does.
  auto fixed = function([](Tensor t) { return reshape(t, {16, 8}); });
  ConcreteFunction cfixed = fixed.get_concrete_function(TensorSpec{{-1}, DType::Float32});
  Tensor flat = random_uniform({128}, -1, 1, DType::Float32, 6);
  EXPECT_EQ(cfixed(flat)[0].data(), flat.data());
  expect_error<InvalidArgumentError>([&] { (void)cfixed(random_uniform({127}, -1, 1, DType::Float32, 7)); },
                                     "Input to reshape is a tensor with 127 values, but the requested shape has 128");
  // An intermediate of static shape, which a plan would give frame memory that later steps
  // overwrite: a view's input stays out of the frame, and the result stays right.
  auto h = function([](Tensor t) {
    Tensor a = reshape(t * 2.0f, {32, 64});
    Tensor b = t * 3.0f;
    return reshape(a, {64, 32}) + b;
  });
  EXPECT_EQ(h(x).to_vector<float>(), (x * 2.0f + x * 3.0f).to_vector<float>());
  // Strings: the view retains each element.
  Tensor s = constant(std::vector<std::string>{"a", "bc", "def", "g"}, {2, 2});
  auto fs = function([](Tensor t) { return reshape(t, {4}); });
  EXPECT_EQ(fs.get_concrete_function(TensorSpec{{-1, 2}, DType::String})(s)[0].to_vector<std::string>(),
            (std::vector<std::string>{"a", "bc", "def", "g"}));
}

TEST(Transpose, PermutesDims) {
  Tensor x = iota({2, 3});
  expect_tensor<int32_t>(transpose(x), {0, 3, 1, 4, 2, 5}, {3, 2});
  Tensor y = iota({2, 3, 4});
  Tensor t = transpose(y, {2, 0, 1});
  EXPECT_EQ(t.shape(), TensorShape({4, 2, 3}));
  auto v = t.to_vector<int32_t>();
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], 4);  // [0][0][1] -> y[0][1][0]
  EXPECT_EQ(v[6], 1);  // [1][0][0] -> y[0][0][1]
  expect_tensor<float>(transpose(constant<float>({1, 2}, {1, 2}), {0, 1}), {1, 2}, {1, 2});
  expect_error<InvalidArgumentError>([&] { transpose(x, {0}); },
                                     "transpose expects a vector of size 2. But input(1) is a vector of size 1");
  expect_error<InvalidArgumentError>([&] { transpose(x, {0, 0}); }, "0 is duplicated in the input");
  expect_error<InvalidArgumentError>([&] { transpose(x, {0, 2}); }, "2 is out of range [0 .. 2)");
}

TEST(Concat, JoinsAlongAxis) {
  Tensor a = constant<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = constant<int32_t>({7, 8, 9, 10, 11, 12}, {2, 3});
  expect_tensor<int32_t>(concat({a, b}, 0), {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {4, 3});
  expect_tensor<int32_t>(concat({a, b}, 1), {1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12}, {2, 6});
  expect_tensor<int32_t>(concat({a, b}, -1), {1, 2, 3, 7, 8, 9, 4, 5, 6, 10, 11, 12}, {2, 6});
  expect_error<InvalidArgumentError>(
      [&] {
        concat({a, zeros({2, 4}, DType::Int32)}, 0);
      },
      "ConcatOp : Dimension 1 in both shapes must be equal: shape[0] = [2,3] vs. shape[1] = [2,4]");
  expect_error<InvalidArgumentError>([&] { concat({a, b}, 2); }, "Expected axis to be in the range [-2, 2), but got 2");
  expect_error<InvalidArgumentError>([&] { concat({a, zeros({2, 3})}, 0); }, "cannot compute ConcatV2");
  expect_error<InvalidArgumentError>([&] { concat({constant(1), constant(2)}, 0); }, "Can't concatenate scalars");
  expect_error<InvalidArgumentError>([&] { concat({}, 0); }, "at least one");
}

TEST(Stack, PacksAlongNewAxis) {
  Tensor x = constant<int32_t>({1, 4}), y = constant<int32_t>({2, 5}), z = constant<int32_t>({3, 6});
  expect_tensor<int32_t>(stack({x, y, z}), {1, 4, 2, 5, 3, 6}, {3, 2});
  expect_tensor<int32_t>(stack({x, y, z}, 1), {1, 2, 3, 4, 5, 6}, {2, 3});
  expect_error<InvalidArgumentError>([&] { stack({x, constant<int32_t>({1})}); }, "Shapes of all inputs must match");
  expect_error<InvalidArgumentError>([&] { stack({x, y}, 3); }, "range");
}

TEST(Slice, BeginAndSize) {
  // tf.slice docs: t = [[[1,1,1],[2,2,2]], [[3,3,3],[4,4,4]], [[5,5,5],[6,6,6]]]
  Tensor t = constant<int32_t>({1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6}, {3, 2, 3});
  expect_tensor<int32_t>(slice(t, {1, 0, 0}, {1, 1, 3}), {3, 3, 3}, {1, 1, 3});
  expect_tensor<int32_t>(slice(t, {1, 0, 0}, {1, 2, 3}), {3, 3, 3, 4, 4, 4}, {1, 2, 3});
  expect_tensor<int32_t>(slice(t, {1, 0, 0}, {2, 1, 3}), {3, 3, 3, 5, 5, 5}, {2, 1, 3});
  expect_tensor<int32_t>(slice(t, {2, 1, 1}, {-1, -1, -1}), {6, 6}, {1, 1, 2});
  expect_error<InvalidArgumentError>([&] { slice(t, {4, 0, 0}, {1, 1, 1}); }, "Expected begin[0] in [0, 3], but got 4");
  expect_error<InvalidArgumentError>([&] { slice(t, {0, 0, 0}, {1, 3, 1}); }, "Expected size[1] in [0, 2], but got 3");
  expect_error<InvalidArgumentError>([&] { slice(t, {0}, {1}); },
                                     "Expected begin and size arguments to be 1-D tensors of size 3");
}

TEST(StridedSlice, TensorFlowDocExamples) {
  Tensor t = constant<int32_t>({1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6}, {3, 2, 3});
  expect_tensor<int32_t>(strided_slice(t, {1, 0, 0}, {2, 1, 3}, {1, 1, 1}), {3, 3, 3}, {1, 1, 3});
  expect_tensor<int32_t>(strided_slice(t, {1, 0, 0}, {2, 2, 3}, {1, 1, 1}), {3, 3, 3, 4, 4, 4}, {1, 2, 3});
  expect_tensor<int32_t>(strided_slice(t, {1, -1, 0}, {2, -3, 3}, {1, -1, 1}), {4, 4, 4, 3, 3, 3}, {1, 2, 3});
  // x[::-1]
  expect_tensor<int32_t>(
      strided_slice(constant<int32_t>({1, 2, 3, 4}), {0}, {0}, {-1}, {.begin_mask = 1, .end_mask = 1}), {4, 3, 2, 1},
      {4});
  // x[1] (shrink), x[:, 1], x[..., 0], x[tf.newaxis]
  expect_tensor<int32_t>(strided_slice(t, {1}, {2}, {1}, {.shrink_axis_mask = 1}), {3, 3, 3, 4, 4, 4}, {2, 3});
  expect_tensor<int32_t>(
      strided_slice(t, {0, 1}, {0, 2}, {1, 1}, {.begin_mask = 1, .end_mask = 1, .shrink_axis_mask = 2}),
      {2, 2, 2, 4, 4, 4, 6, 6, 6}, {3, 3});
  expect_tensor<int32_t>(strided_slice(t, {0, 0}, {0, 1}, {1, 1}, {.ellipsis_mask = 1, .shrink_axis_mask = 2}),
                         {1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(strided_slice(t, {0}, {0}, {1}, {.new_axis_mask = 1}).shape(), TensorShape({1, 3, 2, 3}));
  // x[0:4:2] of a vector, out-of-range ends clamp.
  expect_tensor<int32_t>(strided_slice(constant<int32_t>({0, 1, 2, 3, 4}), {0}, {100}, {2}), {0, 2, 4}, {3});
  expect_error<InvalidArgumentError>([&] { strided_slice(t, {0}, {1}, {0}); }, "strides[0] must be non-zero");
  expect_error<InvalidArgumentError>([&] { strided_slice(t, {5}, {6}, {1}, {.shrink_axis_mask = 1}); },
                                     "slice index 5 of dimension 0 out of bounds.");
}

TEST(Gather, AxisAndIndexChecks) {
  Tensor p = constant<float>({1, 2, 3, 4, 5, 6}, {3, 2});
  expect_tensor<float>(gather(p, std::vector<int64_t>{2, 0}), {5, 6, 1, 2}, {2, 2});
  expect_tensor<float>(gather(p, std::vector<int64_t>{1}, 1), {2, 4, 6}, {3, 1});
  expect_tensor<float>(gather(p, constant<int64_t>({1, 1, 0, 2}, {2, 2})), {3, 4, 3, 4, 1, 2, 5, 6}, {2, 2, 2});
  expect_tensor<float>(gather(p, constant(1)), {3, 4}, {2});
  // The guide's unused_return_eager example.
  expect_error<InvalidArgumentError>([] { gather(constant<float>({0}), std::vector<int64_t>{1}); },
                                     "indices[0] = 1 is not in [0, 1) [Op:GatherV2]");
  expect_error<InvalidArgumentError>([&] { gather(p, std::vector<int64_t>{-1}); }, "indices[0] = -1 is not in [0, 3)");
  expect_error<InvalidArgumentError>([&] { gather(p, constant<float>({0})); }, "indices must be an int32 or int64");
  expect_error<InvalidArgumentError>([&] { gather(p, std::vector<int64_t>{0}, 2); }, "range");
}

TEST(ExpandSqueeze, Dims) {
  Tensor x = constant<float>({1, 2}, {2});
  EXPECT_EQ(expand_dims(x, 0).shape(), TensorShape({1, 2}));
  EXPECT_EQ(expand_dims(x, -1).shape(), TensorShape({2, 1}));
  EXPECT_EQ(squeeze(zeros({1, 2, 1, 3})).shape(), TensorShape({2, 3}));
  EXPECT_EQ(squeeze(zeros({1, 2, 1, 3}), {2}).shape(), TensorShape({1, 2, 3}));
  expect_tensor<float>(squeeze(expand_dims(x, 1)), {1, 2}, {2});
  expect_error<InvalidArgumentError>([&] { expand_dims(x, 3); },
                                     "Expected `axis` to be in the range [-2, 2), but got 3");
  expect_error<InvalidArgumentError>(
      [] {
        squeeze(zeros({1, 2}), {1});
      },
      "Can not squeeze dim[1], expected a dimension of 1, got 2");
}

TEST(Tile, Repeats) {
  Tensor a = constant<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  expect_tensor<int32_t>(tile(a, {1, 2}), {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, {2, 6});
  expect_tensor<int32_t>(tile(a, {2, 1}), {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}, {4, 3});
  expect_error<InvalidArgumentError>([&] { tile(a, {2}); },
                                     "Expected multiples argument to be a vector of length 2 but got length 1");
  expect_error<InvalidArgumentError>([&] { tile(a, {-1, 1}); }, "Expected multiples[0] >= 0");
}

TEST(Creation, FillRangeEye) {
  expect_tensor<float>(fill({2, 2}, 9), {9, 9, 9, 9}, {2, 2});
  expect_tensor<int64_t>(zeros({2}, DType::Int64), {0, 0}, {2});
  expect_tensor<bool>(ones({1}, DType::Bool), {true}, {1});
  expect_tensor<int32_t>(range(3, 18, 3, DType::Int32), {3, 6, 9, 12, 15}, {5});
  expect_tensor<float>(range(3, 1, -0.5, DType::Float32), {3, 2.5, 2, 1.5}, {4});
  expect_tensor<int32_t>(range(0, 5, 1, DType::Int32), {0, 1, 2, 3, 4}, {5});
  expect_tensor<int32_t>(eye(3, DType::Int32), {1, 0, 0, 0, 1, 0, 0, 0, 1}, {3, 3});
  expect_error<InvalidArgumentError>([] { range(0, 5, 0, DType::Int32); }, "Requires delta != 0");
  expect_error<InvalidArgumentError>([] { range(5, 0, 1, DType::Int32); }, "Requires start <= limit when delta > 0");
  expect_error<InvalidArgumentError>([] { fill({-1}, 0); }, "dims must be non-negative, got -1 [Op:Fill]");
  expect_error<InvalidArgumentError>([] { eye(-2); }, "non-negative");
  expect_error<InvalidArgumentError>([] { fill({2}, 0.5, DType::Int32); }, "Cannot convert");
}

TEST(ShapeOps, ShapeSizeRank) {
  Tensor x = zeros({2, 3, 4});
  expect_tensor<int32_t>(shape_of(x), {2, 3, 4}, {3});
  expect_tensor<int32_t>(size_of(x), {24}, {});
  expect_tensor<int32_t>(rank_of(x), {3}, {});
  expect_tensor<int32_t>(shape_of(constant(1.0)), {}, {0});
}
