// Einsum's in-place path for attention-sized heads (ops/einsum.cc): operands and output read
// and written through leading dimensions, heads split over two threads. Whole numbers keep
// every sum exact, so each form must equal the same product spelled with transposes and a
// batched matmul bit for bit; the sanitizer builds run it too.
#include "kiln/threading.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing;

namespace {
Tensor einsum2(const Tensor& a, const Tensor& b, const std::string& equation) {
  return execute_op("Einsum", {a, b}, {{"equation", equation}, {"N", int64_t{2}}})[0];
}
Tensor small_ints(const std::vector<int64_t>& dims, DType dtype, int seed) {
  return cast(floor(random_uniform(dims, -3, 4, DType::Float64, seed)), dtype);
}
}  // namespace

TEST(Einsum, AttentionHeadsInPlaceEqualTransposedMatmuls) {
  config::set_intra_op_parallelism_threads(2);
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor q = small_ints({3, 64, 4, 48}, dtype, 1), k = small_ints({3, 60, 4, 48}, dtype, 2);
    const Tensor qh = transpose(q, {0, 2, 1, 3}), kh = transpose(k, {0, 2, 1, 3});  // [B, N, T, H]
    // Keras 3's scores [B, N, T, S], Keras 2's (operands the other way round), and the
    // scores applied to the values [B, T, N, H].
    const Tensor scores = einsum2(q, k, "BTNH,BSNH->BNTS");
    EXPECT_EQ(scores.shape().dims(), (Dims{3, 4, 64, 60}));
    EXPECT_EQ(cast(scores, DType::Float64).to_vector<double>(),
              cast(matmul(qh, kh, false, true), DType::Float64).to_vector<double>());
    EXPECT_EQ(cast(einsum2(k, q, "aecd,abcd->acbe"), DType::Float64).to_vector<double>(),
              cast(scores, DType::Float64).to_vector<double>());
    const Tensor p = small_ints({3, 4, 64, 60}, dtype, 3);
    const Tensor applied = einsum2(p, k, "BNTS,BSNH->BTNH");
    EXPECT_EQ(cast(applied, DType::Float64).to_vector<double>(),
              cast(transpose(matmul(p, kh), {0, 2, 1, 3}), DType::Float64).to_vector<double>());
  }
  config::set_intra_op_parallelism_threads(0);
}
