// Transpose and Gather copy large outputs (from 256 KB) in parts on the intra-op threads:
// each part must start at its own element, whatever the walk. Checked against the element
// formulas on two threads and one.
#include <gtest/gtest.h>

#include "core/parallel.h"
#include "kiln/kiln.h"

using namespace kiln;

namespace {

// x[i0, i1, ...] = its flat index, so an output element names the input element it came from.
Tensor iota(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return constant<float>(v, dims);
}

// Transpose of iota(dims) by perm, element by element.
std::vector<float> transposed(const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  const size_t r = dims.size();
  std::vector<int64_t> in_strides(r, 1), out_dims(r);
  for (size_t d = r - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * dims[d + 1];
  int64_t n = 1;
  for (size_t d = 0; d < r; ++d) n *= out_dims[d] = dims[static_cast<size_t>(perm[d])];
  std::vector<float> out(static_cast<size_t>(n));
  std::vector<int64_t> idx(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (size_t d = 0; d < r; ++d) src += idx[d] * in_strides[static_cast<size_t>(perm[d])];
    out[static_cast<size_t>(k)] = static_cast<float>(src);
    for (size_t d = r; d-- > 0;)
      if (++idx[d] < out_dims[d])
        break;
      else
        idx[d] = 0;
  }
  return out;
}

class ParallelCopy : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { config::set_intra_op_parallelism_threads(GetParam()); }
  void TearDown() override { config::set_intra_op_parallelism_threads(0); }
};

}  // namespace

TEST_P(ParallelCopy, TransposeOfLargeTensorsPutsEveryElementInItsPlace) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{32, 100, 128}, {1, 0, 2}},       // a batch-major sequence made time-major
      {{7, 301, 129}, {2, 0, 1}},        // the innermost dim moves: element by element
      {{5, 3, 67, 211}, {0, 2, 1, 3}},   // runs of 211, rows split mid-dim
      {{1, 640, 1, 300}, {3, 1, 2, 0}},  // dims of size 1 collapse to a matrix transpose
  };
  for (const auto& [dims, perm] : cases)
    EXPECT_EQ(transpose(iota(dims), perm).to_vector<float>(), transposed(dims, perm)) << dims.size();
}

TEST_P(ParallelCopy, GatherOfLargeOutputsTakesEachSliceFromItsIndex) {
  // An embedding lookup: 3,200 rows of 128 from a table of 1,000, and along axis 1.
  const Tensor table = iota({1000, 128});
  std::vector<int64_t> ids(3200);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>((i * 7919) % 1000);
  const std::vector<float> got = gather(table, ids).to_vector<float>();
  ASSERT_EQ(got.size(), ids.size() * 128);
  for (size_t i = 0; i < ids.size(); ++i)
    for (size_t j = 0; j < 128; j += 31) ASSERT_EQ(got[i * 128 + j], static_cast<float>(ids[i] * 128 + j)) << i;
  const Tensor wide = iota({3, 1000, 40});
  const std::vector<float> by_axis1 = gather(wide, ids, 1).to_vector<float>();
  ASSERT_EQ(by_axis1.size(), 3 * ids.size() * 40);
  for (size_t o = 0; o < 3; ++o)
    for (size_t i = 0; i < ids.size(); i += 13)
      ASSERT_EQ(by_axis1[(o * ids.size() + i) * 40 + 39], static_cast<float>((o * 1000 + ids[i]) * 40 + 39));
}

INSTANTIATE_TEST_SUITE_P(Threads, ParallelCopy, ::testing::Values(1, 2));
