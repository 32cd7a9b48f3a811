#include "core/buffer.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

TEST(DType, Names) {
  EXPECT_EQ(dtype_name(DType::Bool), "bool");
  EXPECT_EQ(dtype_name(DType::Int32), "int32");
  EXPECT_EQ(dtype_name(DType::Int64), "int64");
  EXPECT_EQ(dtype_name(DType::Float32), "float32");
  EXPECT_EQ(dtype_name(DType::Float64), "float64");
}

TEST(TensorShape, PrintsLikeTensorFlow) {
  EXPECT_EQ(TensorShape({2, -1}).str(), "(2, None)");
  EXPECT_EQ(TensorShape({3}).str(), "(3,)");
  EXPECT_EQ(TensorShape({-1}).str(), "(None,)");
  EXPECT_EQ(TensorShape({}).str(), "()");
  EXPECT_EQ(TensorShape::unknown().str(), "<unknown>");
  EXPECT_EQ(TensorShape::unknown().rank(), -1);
  EXPECT_FALSE(TensorShape({2, -1}).is_fully_defined());
  EXPECT_TRUE(TensorShape({2, 3}).is_fully_defined());
}

TEST(TensorShape, ElementCountOverflowIsAnError) {
  EXPECT_EQ(TensorShape({3, 0, int64_t{1} << 62}).num_elements(), 0);
  EXPECT_EQ(TensorShape({int64_t{1} << 31, int64_t{1} << 31}).num_elements(), int64_t{1} << 62);
  EXPECT_THROW((void)TensorShape({int64_t{1} << 32, int64_t{1} << 32}).num_elements(), InvalidArgumentError);
  EXPECT_EQ(TensorShape({-1, int64_t{1} << 62}).num_elements(), -1);
}

TEST(TensorShape, CompatibilityAndRelaxation) {
  EXPECT_TRUE(TensorShape({-1}).is_compatible_with(TensorShape({5})));
  EXPECT_FALSE(TensorShape({3}).is_compatible_with(TensorShape({5})));
  EXPECT_TRUE(TensorShape::unknown().is_compatible_with(TensorShape({5, 2})));
  EXPECT_EQ(TensorShape({3}).most_specific_common(TensorShape({5})), TensorShape({-1}));
  EXPECT_EQ(TensorShape({3, 2}).most_specific_common(TensorShape({5, 2})), TensorShape({-1, 2}));
  EXPECT_EQ(TensorShape({3}).most_specific_common(TensorShape({3, 1})), TensorShape::unknown());
  expect_error<InvalidArgumentError>([] { TensorShape({-2}); }, "must be >= -1");
}

TEST(TensorShape, RanksBeyondTheInlineDimsAndMoves) {
  const std::vector<int64_t> eight{1, 2, 3, 4, 5, 6, 7, -1};  // more dims than are kept inline
  TensorShape a(eight);
  EXPECT_EQ(a.rank(), 8);
  EXPECT_EQ(std::vector<int64_t>(a.dims()), eight);
  EXPECT_EQ(a.str(), "(1, 2, 3, 4, 5, 6, 7, None)");
  TensorShape b = a;  // a copy owns its own dims
  TensorShape c = std::move(a);
  EXPECT_EQ(b, c);
  EXPECT_EQ(c.most_specific_common(TensorShape({1, 2, 3, 4, 5, 6, 0, 9})), TensorShape({1, 2, 3, 4, 5, 6, -1, -1}));
  EXPECT_EQ(TensorShape::unknown_dims(3), TensorShape({-1, -1, -1}));
  EXPECT_EQ(TensorShape::unknown_dims(-1), TensorShape::unknown());
  EXPECT_EQ(TensorShape(Dims{2, 3}).dim(1), 3);
  expect_error<InvalidArgumentError>([] { TensorShape(Dims{4, -7}); }, "must be >= -1");
}

TEST(Tensor, PrintsLikeTensorFlow) {
  EXPECT_EQ(constant<float>({12}, {1, 1}).str(), "kiln.Tensor([[12.]], shape=(1, 1), dtype=float32)");
  EXPECT_EQ(constant(5.5f).str(), "kiln.Tensor(5.5, shape=(), dtype=float32)");
  EXPECT_EQ(constant<float>({1, 0}).str(), "kiln.Tensor([1. 0.], shape=(2,), dtype=float32)");
  EXPECT_EQ(constant<float>({1.5, 2}).str(), "kiln.Tensor([1.5 2. ], shape=(2,), dtype=float32)");
  EXPECT_EQ(constant<int32_t>({1, -1}).str(), "kiln.Tensor([ 1 -1], shape=(2,), dtype=int32)");
  EXPECT_EQ(constant<bool>({true, false}).str(), "kiln.Tensor([ True False], shape=(2,), dtype=bool)");
  // Multi-line values start on their own line, as TensorFlow prints them.
  EXPECT_EQ(constant<int64_t>({1, 2, 3, 4}, {2, 2}).str(), "kiln.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int64)");
  EXPECT_EQ(constant(0.1).str(), "kiln.Tensor(0.1, shape=(), dtype=float64)");
  EXPECT_EQ(constant(1.0f / 3).str(), "kiln.Tensor(0.33333334, shape=(), dtype=float32)");
  EXPECT_EQ(constant<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2}).str(),
            "kiln.Tensor(\n[[[1 2]\n  [3 4]]\n\n [[5 6]\n  [7 8]]], shape=(2, 2, 2), dtype=int32)");
  std::ostringstream os;
  os << constant(3);
  EXPECT_EQ(os.str(), "kiln.Tensor(3, shape=(), dtype=int32)");
}

TEST(Tensor, LongTensorsAreSummarized) {
  Tensor t = range(0, 2000, 1, DType::Int32);
  EXPECT_EQ(t.str(), "kiln.Tensor([   0    1    2 ... 1997 1998 1999], shape=(2000,), dtype=int32)");
}

TEST(Tensor, AccessorsCheckDtypeAndShape) {
  Tensor t = constant<float>({1, 2, 3}, {3});
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.rank(), 1);
  EXPECT_EQ(t.num_elements(), 3);
  EXPECT_FALSE(t.is_symbolic());
  EXPECT_EQ(t.name(), "");
  expect_error<InvalidArgumentError>([&] { t.to_vector<double>(); }, "to_vector<float64>() called on a float32 tensor");
  expect_error<InvalidArgumentError>([&] { t.item<float>(); }, "exactly one element");
  EXPECT_EQ(constant(7).item<int32_t>(), 7);
  EXPECT_EQ(constant(int64_t{7}).dtype(), DType::Int64);
  EXPECT_EQ(constant(true).dtype(), DType::Bool);
  EXPECT_EQ(constant(4, DType::Float64).item<double>(), 4.0);
  expect_error<InvalidArgumentError>([] { constant(2.5, DType::Int32); }, "Cannot convert");
  expect_error<InvalidArgumentError>([] { constant<float>({1, 2, 3}, {2, 2}); }, "Expected 4 values");
  expect_error<InvalidArgumentError>([] { constant<float>({}, {-1}); }, "must be >= 0");
  expect_error<InvalidArgumentError>([] { Tensor().dtype(); }, "empty");
}

TEST(Tensor, BoolConversion) {
  EXPECT_TRUE(static_cast<bool>(constant(true)));
  EXPECT_FALSE(static_cast<bool>(constant(0.0)));
  EXPECT_TRUE(static_cast<bool>(constant(3)));
  expect_error<InvalidArgumentError>([] { (void)static_cast<bool>(constant<int32_t>({1, 2})); }, "ambiguous");
}

TEST(Tensor, CopiesShareTheValue) {
  Tensor a = constant<float>({1, 2});
  Tensor b = a;
  Tensor c = std::move(b);
  EXPECT_FALSE(b.defined());
  EXPECT_EQ(c.impl(), a.impl());
  c = a;
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(Buffer, PoolRecyclesBuffers) {
  // Warm the pool, then the same sizes must not reach the system allocator.
  for (int i = 0; i < 3; ++i) (void)zeros({1000});
  const auto before = buffer_stats();
  for (int i = 0; i < 100; ++i) (void)zeros({1000});
  EXPECT_EQ(buffer_stats().system_allocations, before.system_allocations);
}

TEST(Buffer, OverflowingSizesAreRefused) {
  expect_error<InvalidArgumentError>([] { zeros({int64_t{1} << 40, int64_t{1} << 40}); }, "overflow");
  expect_error<InvalidArgumentError>([] { zeros({int64_t{1} << 38, 16}); }, "Cannot allocate");
  expect_error<InvalidArgumentError>([] { checked_mul(-1, 2, "x"); }, "overflow");
}

TEST(Errors, HierarchyAndCodes) {
  try {
    throw NotFoundError("x");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::NotFound);
    EXPECT_STREQ(error_code_name(e.code()), "NotFoundError");
  }
  static_assert(std::is_base_of_v<std::runtime_error, Error>);
}
