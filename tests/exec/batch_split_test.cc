// A call of a convolutional function with an unknown batch runs one image at a time
// (exec/batch_split.h): the plan says when it may, the values are the whole batch's, and
// graphs where a row's call would differ (a sum over the batch, the batch size as a value,
// state changed per call, no convolution) run whole.
#include <thread>

#include "core/parallel.h"
#include "test_util.h"
#include "trace/concrete.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

// 64x64 images: a 16-channel intermediate of one image is 256 KB, kMinRowBytes.
const TensorSpec kImages{{-1, 64, 64, 3}, DType::Float32};

// A small image classifier: convolution, bias, relu, pooling, a concatenation of two branches
// along the channels, a global mean, a dense layer and a softmax.
Tensor classifier(Tensor x, Tensor w1, Tensor w2, Tensor bias, Tensor dense) {
  Tensor a = relu(bias_add(conv2d(x, w1, {1, 1, 1, 1}, "SAME"), bias));
  Tensor b = max_pool2d(conv2d(x, w2, {1, 1, 1, 1}, "SAME"), {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME");
  Tensor c = avg_pool2d(concat({a, b}, 3), {1, 2, 2, 1}, {1, 2, 2, 1}, "VALID");
  Tensor pooled = reshape(reduce_mean(c, {1, 2}, true), {-1, 20});
  return softmax(matmul(pooled, dense));
}

struct Weights {
  Tensor w1 = random_uniform({3, 3, 3, 16}, -0.5, 0.5, DType::Float32, 1);
  Tensor w2 = random_uniform({1, 1, 3, 4}, -0.5, 0.5, DType::Float32, 2);
  Tensor bias = random_uniform({16}, -0.1, 0.1, DType::Float32, 3);
  Tensor dense = random_uniform({20, 5}, -1, 1, DType::Float32, 4);
};

// Checks `got` against `want`'s values to a relative tolerance.
void expect_close(const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape());
  expect_near(got, want.to_vector<float>(), want.shape().dims(), tol);
}

// The rows [b, b + 1) of x.
Tensor row(const Tensor& x, int64_t b) {
  std::vector<int64_t> begin(static_cast<size_t>(x.shape().rank()), 0), size(static_cast<size_t>(x.shape().rank()), -1);
  begin[0] = b;
  size[0] = 1;
  return slice(x, begin, size);
}

}  // namespace

TEST(BatchSplit, RowByRowGivesEachImageItsOwnCallsValues) {
  Weights w;
  auto f = function([&](Tensor x) { return classifier(x, w.w1, w.w2, w.bias, w.dense); });
  ConcreteFunction cf = f.get_concrete_function(kImages);
  ASSERT_TRUE(cf.impl()->plan->splits_batches());
  for (int64_t batch : {2, 5}) {
    Tensor x = random_uniform({batch, 64, 64, 3}, -1, 1, DType::Float32, 10 + batch);
    const Tensor whole = cf(x)[0];
    ASSERT_EQ(whole.shape(), TensorShape({batch, 5}));
    std::vector<float> rows;
    for (int64_t b = 0; b < batch; ++b)
      for (float v : cf(row(x, b))[0].to_vector<float>()) rows.push_back(v);
    EXPECT_EQ(whole.to_vector<float>(), rows) << "batch " << batch;
    // And the values are the eager ops' on the whole batch.
    const std::vector<float> eager = classifier(x, w.w1, w.w2, w.bias, w.dense).to_vector<float>();
    const std::vector<float> got = whole.to_vector<float>();
    ASSERT_EQ(got.size(), eager.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], eager[i], 1e-6f) << i;
  }
}

TEST(BatchSplit, KerasReshapeOfTheBatchSizeSplits) {
  // Keras's Reshape layer builds its target from the batch size: tf.shape(x)[0] packed with
  // the other dims. Each row's call builds [1, ...]: the same rows.
  Weights w;
  auto f = function([&](Tensor x) {
    Tensor y = reduce_mean(relu(conv2d(x, w.w1, {1, 1, 1, 1}, "SAME")), {1, 2}, true);
    Tensor batch = strided_slice(shape_of(y), {0}, {1}, {1}, {.shrink_axis_mask = 1});
    Tensor channels = strided_slice(shape_of(y), {3}, {4}, {1}, {.shrink_axis_mask = 1});  // the same in every row
    return reshape(y, stack({batch, channels}));
  });
  ConcreteFunction cf = f.get_concrete_function(kImages);
  ASSERT_TRUE(cf.impl()->plan->splits_batches());
  Tensor x = random_uniform({3, 64, 64, 3}, -1, 1, DType::Float32, 71);
  const Tensor got = cf(x)[0];
  EXPECT_EQ(got.shape(), TensorShape({3, 16}));
  expect_close(got, reshape(reduce_mean(relu(conv2d(x, w.w1, {1, 1, 1, 1}, "SAME")), {1, 2}), {3, 16}), 1e-6);
  // The batch size in arithmetic is not a shape: the graph runs whole.
  auto scaled = function([&](Tensor x) {
    Tensor batch = strided_slice(shape_of(x), {0}, {1}, {1}, {.shrink_axis_mask = 1});
    return relu(conv2d(x, w.w1, {1, 1, 1, 1}, "SAME")) * cast(batch, DType::Float32);
  });
  cf = scaled.get_concrete_function(kImages);
  EXPECT_FALSE(cf.impl()->plan->splits_batches());
  expect_close(cf(x)[0], relu(conv2d(x, w.w1, {1, 1, 1, 1}, "SAME")) * 3.0f, 1e-6);
}

TEST(BatchSplit, OneThreadOrTwoTheSameBits) {
  Weights w;
  auto f = function([&](Tensor x) { return classifier(x, w.w1, w.w2, w.bias, w.dense); });
  ConcreteFunction cf = f.get_concrete_function(kImages);
  Tensor x = random_uniform({7, 64, 64, 3}, -1, 1, DType::Float32, 21);
  // (The public setting: its 0 is the default count, where the internal one's is one thread.)
  config::set_intra_op_parallelism_threads(1);
  const std::vector<float> one = cf(x)[0].to_vector<float>();
  config::set_intra_op_parallelism_threads(0);
  EXPECT_EQ(intra_op_threads(), default_intra_op_threads());
  EXPECT_EQ(cf(x)[0].to_vector<float>(), one);
}

TEST(BatchSplit, ConcurrentCallsEachGetTheirOwnRows) {
  Weights w;
  auto f = function([&](Tensor x) { return classifier(x, w.w1, w.w2, w.bias, w.dense); });
  ConcreteFunction cf = f.get_concrete_function(kImages);
  Tensor x1 = random_uniform({6, 64, 64, 3}, -1, 1, DType::Float32, 31);
  Tensor x2 = random_uniform({3, 64, 64, 3}, -1, 1, DType::Float32, 32);
  const std::vector<float> want1 = cf(x1)[0].to_vector<float>(), want2 = cf(x2)[0].to_vector<float>();
  std::vector<float> got1, got2;
  std::thread t([&] {
    for (int i = 0; i < 5; ++i) got1 = cf(x1)[0].to_vector<float>();
  });
  for (int i = 0; i < 5; ++i) got2 = cf(x2)[0].to_vector<float>();
  t.join();
  EXPECT_EQ(got1, want1);
  EXPECT_EQ(got2, want2);
}

TEST(BatchSplit, GraphsWhoseRowsAreNotIndependentRunWhole) {
  Weights w;
  Tensor x = random_uniform({4, 64, 64, 3}, -1, 1, DType::Float32, 41);
  auto conv = [&](const Tensor& t) { return relu(conv2d(t, w.w1, {1, 1, 1, 1}, "SAME")); };
  // A sum over the batch: each row's call would sum one image.
  auto over_batch = function([&](Tensor t) { return reduce_sum(conv(t), {0}); });
  ConcreteFunction cf = over_batch.get_concrete_function(kImages);
  EXPECT_FALSE(cf.impl()->plan->splits_batches());
  EXPECT_EQ(cf(x)[0].shape(), TensorShape({64, 64, 16}));
  expect_close(cf(x)[0], reduce_sum(conv(x), {0}), 1e-5);
  // The batch size as a value: a row's call would see 1.
  auto counted = function([&](Tensor t) {
    return reshape(conv(t), concat({slice(shape_of(t), {0}, {1}), constant<int32_t>({-1})}, 0));
  });
  cf = counted.get_concrete_function(kImages);
  EXPECT_FALSE(cf.impl()->plan->splits_batches());
  EXPECT_EQ(cf(x)[0].shape(), TensorShape({4, 64 * 64 * 16}));
  // State changed per call: once per call, not once per row.
  Variable calls(constant(0.0f));
  auto stateful = function([&](Tensor t) {
    calls.assign_add(constant(1.0f));
    return conv(t);
  });
  cf = stateful.get_concrete_function(kImages);
  EXPECT_FALSE(cf.impl()->plan->splits_batches());
  cf(x);
  EXPECT_EQ(calls.read().item<float>(), 1.0f);
  // No convolution or pooling: a dense layer's product is better done for the whole batch.
  auto dense = function([&](Tensor t) { return relu(matmul(t, w.dense)); });
  EXPECT_FALSE(dense.get_concrete_function(TensorSpec{{-1, 20}, DType::Float32}).impl()->plan->splits_batches());
  // A known batch: the plan's shapes are that batch's.
  auto known = function([&](Tensor t) { return conv(t); });
  EXPECT_FALSE(known.get_concrete_function(x).impl()->plan->splits_batches());
}

TEST(BatchSplit, FeedsWithDifferentBatchesFailAsTheWholeCallDoes) {
  Weights w;
  auto f = function([&](Tensor a, Tensor b) { return conv2d(a, w.w1, {1, 1, 1, 1}, "SAME") + b; });
  ConcreteFunction cf = f.get_concrete_function(kImages, TensorSpec{{-1, 64, 64, 16}, DType::Float32});
  ASSERT_TRUE(cf.impl()->plan->splits_batches());
  Tensor a = random_uniform({3, 64, 64, 3}, -1, 1, DType::Float32, 51);
  Tensor b = random_uniform({4, 64, 64, 16}, -1, 1, DType::Float32, 52);
  try {
    cf(a, b);
    FAIL() << "batches of 3 and 4 added";
  } catch (const InvalidArgumentError& e) {
    // The whole batch's shapes, as a call that does not split reports them.
    EXPECT_NE(std::string(e.what()).find("batch 3 vs. a fused Add's [4,64,64,16]"), std::string::npos) << e.what();
  }
  // Batches that differ run whole: a batch of 1 broadcasts over the other's 3.
  Tensor one = random_uniform({1, 64, 64, 16}, -1, 1, DType::Float32, 53);
  expect_close(cf(a, one)[0], conv2d(a, w.w1, {1, 1, 1, 1}, "SAME") + one, 1e-5);
}

TEST(BatchSplit, AnErrorInARowIsTheWholeCallsError) {
  // An index out of range fails in the first row's call; the call reports the error the
  // whole batch's run gives (it runs whole after a row fails).
  Weights w;
  Tensor scales = random_uniform({4, 16}, 0.5, 1.5, DType::Float32, 62);
  auto f = function([&](Tensor x, Tensor which) {
    return relu(conv2d(x, w.w1, {1, 1, 1, 1}, "SAME")) * reshape(gather(scales, which), {1, 1, 1, 16});
  });
  ConcreteFunction cf = f.get_concrete_function(kImages, TensorSpec{{1}, DType::Int32});
  ASSERT_TRUE(cf.impl()->plan->splits_batches());
  Tensor x = random_uniform({4, 64, 64, 3}, -1, 1, DType::Float32, 61);
  expect_close(
      cf(x, constant<int32_t>({2}))[0],
      relu(conv2d(x, w.w1, {1, 1, 1, 1}, "SAME")) * reshape(gather(scales, constant<int32_t>({2})), {1, 1, 1, 16}),
      1e-6);
  std::string eager, traced;
  try {
    gather(scales, constant<int32_t>({7}));
  } catch (const InvalidArgumentError& e) {
    eager = e.what();
  }
  try {
    cf(x, constant<int32_t>({7}));
  } catch (const InvalidArgumentError& e) {
    traced = e.what();
  }
  ASSERT_FALSE(eager.empty());
  EXPECT_EQ(traced.substr(0, traced.find(" [Op:")), eager.substr(0, eager.find(" [Op:"))) << traced;
}

TEST(BatchSplit, SmallImagesRunWhole) {
  // 8x8 images: one image's call would cost more than its share of the batch's.
  Weights w;
  auto f = function([&](Tensor x) { return relu(conv2d(x, w.w1, {1, 1, 1, 1}, "SAME")); });
  EXPECT_FALSE(f.get_concrete_function(TensorSpec{{-1, 8, 8, 3}, DType::Float32}).impl()->plan->splits_batches());
  // Images of unknown size: nothing says they are large.
  EXPECT_FALSE(f.get_concrete_function(TensorSpec{{-1, -1, -1, 3}, DType::Float32}).impl()->plan->splits_batches());
}
