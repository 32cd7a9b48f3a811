// kiln::data from C++: the stages' elements, cardinalities and errors, and the threaded stages
// (parallel map, prefetch) delivering in order, surfacing errors at their element and
// stopping when an iterator is dropped mid-pass (the sanitizer builds run these too).
#include <kiln/data.h>

#include <atomic>
#include <utility>

#include "test_util.h"

using namespace kiln;
namespace kd = kiln::data;

namespace {

std::vector<int64_t> ints(const kd::Dataset& ds) {
  std::vector<int64_t> out;
  auto it = ds.make_iterator();
  std::vector<Tensor> e;
  while (it.next(&e)) out.push_back(e.at(0).item<int64_t>());
  return out;
}

ConcreteFunction times(int64_t k) {
  auto f = function([k](Tensor x) { return x * constant(k); });
  return f.get_concrete_function(TensorSpec{.shape = TensorShape(std::vector<int64_t>{}), .dtype = DType::Int64});
}

TEST(Data, SourcesAndCutting) {
  EXPECT_EQ(ints(kd::range(0, 5, 1)), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(ints(kd::range(5, 0, -2)), (std::vector<int64_t>{5, 3, 1}));
  EXPECT_EQ(kd::range(2, 11, 3).cardinality(), 3);
  EXPECT_EQ(ints(kd::skip(kd::take(kd::repeat(kd::range(0, 3, 1), -1), 7), 2)), (std::vector<int64_t>{2, 0, 1, 2, 0}));
  EXPECT_EQ(kd::repeat(kd::range(0, 3, 1), -1).cardinality(), kd::kInfiniteCardinality);
  EXPECT_TRUE(ints(kd::repeat(kd::range(0, 0, 1), -1)).empty());  // an empty pass ends it
  EXPECT_EQ(ints(kd::concatenate(kd::range(0, 2, 1), kd::range(7, 9, 1))), (std::vector<int64_t>{0, 1, 7, 8}));
  EXPECT_THROW(kd::range(0, 3, 0), InvalidArgumentError);
}

TEST(Data, SlicesBatchAndUnbatchEveryDtype) {
  auto ds = kd::from_tensor_slices(
      {constant<float>({1, 2, 3, 4, 5, 6}, {3, 2}), constant<std::string>({"a", "", "ccc"}, {3})});
  auto batched = kd::batch(ds, 2);
  EXPECT_EQ(batched.element_spec()[0].shape.dims(), (Dims{-1, 2}));
  auto it = batched.make_iterator();
  std::vector<Tensor> e;
  ASSERT_TRUE(it.next(&e));
  EXPECT_EQ(e[0].to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(e[1].to_vector<std::string>(), (std::vector<std::string>{"a", ""}));
  ASSERT_TRUE(it.next(&e));
  EXPECT_EQ(e[1].to_vector<std::string>(), (std::vector<std::string>{"ccc"}));
  EXPECT_FALSE(it.next(&e));
  std::vector<std::string> back;
  auto un = kd::unbatch(batched).make_iterator();
  while (un.next(&e)) back.push_back(e[1].item<std::string>());
  EXPECT_EQ(back, (std::vector<std::string>{"a", "", "ccc"}));
  EXPECT_THROW(kd::from_tensor_slices({constant(1.0f)}), InvalidArgumentError);
  EXPECT_THROW(kd::from_tensor_slices({zeros({3}), zeros({2})}), InvalidArgumentError);
}

// Rows and batches of from_tensor_slices are views of the source's memory: they outlive the
// dataset and the source, and an op that reuses a view's memory for its result (an
// exclusively owned operand) writes only the view's own rows (ASan checks the bounds).
TEST(Data, RowViewsOutliveTheirSourceAndStayInBounds) {
  std::vector<float> values(1000 * 20);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  std::vector<Tensor> batches, rows;
  {
    Tensor source = constant<float>(values, {1000, 20});
    auto ds = kd::from_tensor_slices({source});
    auto it = kd::batch(ds, 128, /*drop_remainder=*/false).make_iterator();
    std::vector<Tensor> e;
    while (it.next(&e)) batches.push_back(std::exchange(e, {})[0]);
    auto one = ds.make_iterator();
    for (int i = 0; i < 3 && one.next(&e); ++i) rows.push_back(std::exchange(e, {})[0]);
  }
  ASSERT_EQ(batches.size(), 8u);  // 7 of 128 and the last of 104
  EXPECT_EQ(batches.back().shape().dims(), (Dims{104, 20}));
  EXPECT_EQ(batches[7].to_vector<float>()[0], 896.0f * 20);
  EXPECT_EQ(rows[2].to_vector<float>()[19], 59.0f);
  Tensor last = std::move(batches.back());
  batches.pop_back();
  Tensor doubled = last * constant(2.0f);  // may write over `last`'s rows, and only those
  last = Tensor();
  EXPECT_EQ(doubled.to_vector<float>().back(), 2.0f * (values.size() - 1));
  EXPECT_EQ(batches[6].to_vector<float>().back(), 896.0f * 20 - 1);
}

TEST(Data, PaddedBatchOfStringsKeepsEmptyStringsAndPads) {
  auto ds = kd::from_tensors({constant<std::string>({"", "x"}, {2})});
  auto padded = kd::padded_batch(ds, 2, {TensorShape({3})}, {constant("pad")});
  auto it = padded.make_iterator();
  std::vector<Tensor> e;
  ASSERT_TRUE(it.next(&e));
  EXPECT_EQ(e[0].to_vector<std::string>(), (std::vector<std::string>{"", "x", "pad"}));
  EXPECT_THROW(kd::padded_batch(ds, 2, {TensorShape({3})}, {constant(1.0f)}), InvalidArgumentError);
}

TEST(Data, ParallelMapKeepsOrderAndPrefetchRunsAhead) {
  auto ds = kd::prefetch(kd::map(kd::range(0, 500, 1), times(3), 4), 8);
  std::vector<int64_t> want;
  for (int64_t i = 0; i < 500; ++i) want.push_back(3 * i);
  EXPECT_EQ(ints(ds), want);
  auto loose = ints(kd::map(kd::range(0, 200, 1), times(2), kd::kAutotune, /*deterministic=*/false));
  std::sort(loose.begin(), loose.end());
  for (int64_t i = 0; i < 200; ++i) EXPECT_EQ(loose[i], 2 * i);
}

TEST(Data, ErrorsSurfaceAtTheirElement) {
  // A map whose input source fails at element 2: the elements before it arrive first.
  int calls = 0;
  auto source = kd::from_callback({{.shape = TensorShape(std::vector<int64_t>{}), .dtype = DType::Int64}}, [&calls] {
    return kd::Source([&calls](std::vector<Tensor>* out) {
      if (calls == 2) throw InvalidArgumentError("source failed");
      out->push_back(constant(int64_t{calls++}));
      return true;
    });
  });
  auto it = kd::prefetch(kd::map(source, times(1), 2), 4).make_iterator();
  std::vector<Tensor> e;
  ASSERT_TRUE(it.next(&e));
  EXPECT_EQ(e[0].item<int64_t>(), 0);
  ASSERT_TRUE(it.next(&e));
  EXPECT_EQ(e[0].item<int64_t>(), 1);
  EXPECT_THROW(it.next(&e), InvalidArgumentError);
  EXPECT_FALSE(it.next(&e));  // the pass is over after its error
}

TEST(Data, DroppingAnIteratorMidPassStopsItsThreads) {
  for (int round = 0; round < 20; ++round) {
    auto ds = kd::prefetch(kd::map(kd::repeat(kd::range(0, 10, 1), -1), times(2), 2), 4);
    auto it = ds.make_iterator();
    std::vector<Tensor> e;
    ASSERT_TRUE(it.next(&e));
  }  // each iterator's destructor joined its threads, or this test would hang or leak
}

TEST(Data, ShuffleIsAPermutationAndRepeatableWithASeed) {
  auto a = ints(kd::shuffle(kd::range(0, 100, 1), 10, 7, false));
  auto b = ints(kd::shuffle(kd::range(0, 100, 1), 10, 7, false));
  EXPECT_EQ(a, b);
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  EXPECT_THROW(kd::shuffle(kd::range(0, 3, 1), 0), InvalidArgumentError);
}

TEST(Data, MapChecksItsFunctionAgainstTheElement) {
  auto floats = function([](Tensor x) { return x * 2.0f; });
  auto cf =
      floats.get_concrete_function(TensorSpec{.shape = TensorShape(std::vector<int64_t>{}), .dtype = DType::Float32});
  EXPECT_THROW(kd::map(kd::range(0, 3, 1), cf), InvalidArgumentError);
  EXPECT_THROW(kd::filter(kd::range(0, 3, 1), times(2)), InvalidArgumentError);  // not a bool predicate
}

}  // namespace

namespace {

// range(x * 10, x * 10 + x) for each input x: inner datasets of different lengths (0 for x = 0).
kd::Dataset tens(const std::vector<Tensor>& element) {
  const int64_t x = element.at(0).item<int64_t>();
  return kd::range(x * 10, x * 10 + x, 1);
}

const std::vector<TensorSpec> kScalarInt64 = {{.shape = TensorShape(std::vector<int64_t>{}), .dtype = DType::Int64}};

TEST(Data, InterleaveOrderSerialAndParallel) {
  // cycle 2, block 2 over inputs 0..3: slots [0: empty -> 1: {10}] then 2 {20, 21}, 3 {30, 31, 32}.
  const std::vector<int64_t> expected = {10, 20, 21, 30, 31, 32};
  EXPECT_EQ(ints(kd::interleave(kd::range(0, 4, 1), tens, kScalarInt64, 2, 2)), expected);
  for (int round = 0; round < 20; ++round)  // the threads never change the order
    EXPECT_EQ(ints(kd::interleave(kd::range(0, 4, 1), tens, kScalarInt64, 2, 2, /*prefetch=*/2)), expected);
  EXPECT_EQ(ints(kd::interleave(kd::range(0, 3, 1), tens, kScalarInt64, 1, 1)),
            (std::vector<int64_t>{10, 20, 21}));  // flat_map
  EXPECT_THROW(kd::interleave(kd::range(0, 3, 1), tens, kScalarInt64, 0, 1), InvalidArgumentError);
}

TEST(Data, InterleaveErrorsAndEarlyDrops) {
  auto failing = [](const std::vector<Tensor>& e) -> kd::Dataset {
    if (e.at(0).item<int64_t>() == 2) throw InvalidArgumentError("no dataset for 2");
    return tens(e);
  };
  EXPECT_THROW(ints(kd::interleave(kd::range(0, 4, 1), failing, kScalarInt64, 2, 1, 2)), InvalidArgumentError);
  auto wrong_dtype = [](const std::vector<Tensor>&) { return kd::from_tensors({constant(1.0f)}); };
  EXPECT_THROW(ints(kd::interleave(kd::range(0, 2, 1), wrong_dtype, kScalarInt64, 2, 1)), InvalidArgumentError);
  for (int round = 0; round < 20; ++round) {  // a pass dropped while inner pipelines run ahead
    auto it = kd::interleave(kd::range(0, 50, 1), tens, kScalarInt64, 4, 1, 2).make_iterator();
    std::vector<Tensor> e;
    for (int k = 0; k < round; ++k) ASSERT_TRUE(it.next(&e));
  }
}

}  // namespace
