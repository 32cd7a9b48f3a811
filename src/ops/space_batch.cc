// SpaceToBatchND(input, block_shape, paddings) and BatchToSpaceND(input, block_shape, crops):
// the spatial dims (1..M) are cut into blocks that move to the batch dim, or back. What
// dilated ("atrous") convolutions are built from in TensorFlow graphs. Pure data movement:
// every dtype, the trailing dims copied as rows.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

using Fail = std::function<void(const std::string&)>;

// The validated geometry of one call: M block dims, the pads (or crops) before and after each.
struct Blocks {
  std::vector<int64_t> block, before, after;
};

Blocks blocks_of(const Fail& fail, const Dims& input, const Dims& block_dims, const std::vector<int64_t>& block,
                 const Dims& pad_dims, const std::vector<int64_t>& pads, bool to_batch) {
  if (block_dims.size() != 1) fail("block_shape must be 1-D, got shape " + dims_text(block_dims));
  const auto m = static_cast<int64_t>(block.size());
  if (static_cast<int64_t>(input.size()) < 1 + m)
    fail("input rank should be >= " + std::to_string(1 + m) + " instead of " + std::to_string(input.size()));
  const char* what = to_batch ? "paddings" : "crops";
  if (pad_dims.size() != 2 || pad_dims[0] != m || pad_dims[1] != 2)
    fail(std::string(what) + " should have shape [" + std::to_string(m) + ", 2] instead of " + dims_text(pad_dims));
  Blocks b;
  for (int64_t k = 0; k < m; ++k) {
    if (block[k] < 1)
      fail("All values in block_shape must be positive, got value, " + std::to_string(block[k]) + " at index " +
           std::to_string(k) + ".");
    const int64_t lo = pads[2 * k], hi = pads[2 * k + 1];
    if (lo < 0 || hi < 0)
      fail(std::string(to_batch ? "Padding" : "Crops") + " values must be non-negative, got (" + std::to_string(lo) +
           ", " + std::to_string(hi) + ") at index " + std::to_string(k) + ".");
    b.block.push_back(block[k]);
    b.before.push_back(lo);
    b.after.push_back(hi);
  }
  return b;
}

// The output dims for known input dims; fails in TensorFlow's words.
Dims output_dims(const Fail& fail, const Dims& in, const Blocks& b, bool to_batch) {
  const size_t m = b.block.size();
  int64_t product = 1;
  for (int64_t x : b.block) product = checked_mul(product, x, "the product of block_shape");
  Dims out = in;
  if (to_batch) {
    out[0] = checked_mul(in[0], product, "the output batch");
    for (size_t k = 0; k < m; ++k) {
      const int64_t padded = in[k + 1] + b.before[k] + b.after[k];
      if (padded % b.block[k] != 0)
        fail("padded_shape[" + std::to_string(k) + "]=" + std::to_string(padded) + " is not divisible by block_shape[" +
             std::to_string(k) + "]=" + std::to_string(b.block[k]));
      out[k + 1] = padded / b.block[k];
    }
  } else {
    if (in[0] % product != 0)
      fail("Input batch dimension (" + std::to_string(in[0]) + ") is not divisible by product of block sizes (" +
           std::to_string(product) + ")");
    out[0] = in[0] / product;
    for (size_t k = 0; k < m; ++k) {
      const int64_t size = checked_mul(in[k + 1], b.block[k], "a spatial dim") - b.before[k] - b.after[k];
      if (size < 0)
        fail("Negative output dimension size caused by overly large crop values at dimension " + std::to_string(k) +
             ": " + std::to_string(size));
      out[k + 1] = size;
    }
  }
  return out;
}

void infer_space_batch(InferContext& c) {
  const bool to_batch = &c.op == &op::SpaceToBatchND();
  require_int_dtype(c, 1, "block_shape");
  require_int_dtype(c, 2, to_batch ? "paddings" : "crops");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> block, pads;
  const InputInfo &x = c.in(0), &bi = c.in(1), &pi = c.in(2);
  if (x.unknown_rank || bi.unknown_rank || pi.unknown_rank || !known_ints(bi, &block) || !known_ints(pi, &pads)) {
    c.out(0).shape =
        x.unknown_rank ? TensorShape::unknown() : TensorShape::unknown_dims(static_cast<int>(x.dims->size()));
    return;
  }
  const Fail fail = [&](const std::string& m) { c.fail(m); };
  const Blocks b = blocks_of(fail, *x.dims, *bi.dims, block, *pi.dims, pads, to_batch);
  const Dims& in = *x.dims;
  for (size_t k = 0; k <= b.block.size(); ++k)
    if (in[k] < 0) {
      c.out(0).shape = TensorShape::unknown_dims(static_cast<int>(in.size()));
      return;
    }
  c.out(0).shape = TensorShape(output_dims(fail, in, b, to_batch));
}

// One kernel for every dtype: elements are moved as bytes, a trailing-dims row at a time.
void run_space_batch(KernelContext& c) {
  const bool to_batch = &c.op == &op::SpaceToBatchND();
  const Fail fail = [&](const std::string& m) { c.fail(m); };
  const TensorImpl& x = c.in(0);
  const Blocks b =
      blocks_of(fail, x.dims, c.in(1).dims, int_values(c.in(1)), c.in(2).dims, int_values(c.in(2)), to_batch);
  const Dims out_dims = output_dims(fail, x.dims, b, to_batch);
  TensorImpl& y = c.out(0);
  if (y.dims != out_dims) throw InternalError("SpaceToBatchND/BatchToSpaceND: output allocated with other dims");
  if (y.num_elements == 0) return;
  const size_t m = b.block.size();
  size_t row = dtype_size(x.dtype);
  for (size_t k = m + 1; k < x.dims.size(); ++k) row *= static_cast<size_t>(x.dims[k]);
  // The spatial walk is over the side with blocks apart (the batch side): for each of its
  // positions (block offset o, batch n, spatial i), the padded spatial coordinate is
  // i * block + o, which is a position of the other side shifted by the pad (or crop).
  const TensorImpl& batched = to_batch ? static_cast<const TensorImpl&>(y) : x;
  const TensorImpl& spatial = to_batch ? x : static_cast<const TensorImpl&>(y);
  const int64_t batch = spatial.dims[0];
  const Dims bstrides = strides_of(batched.dims), sstrides = strides_of(spatial.dims);
  const int64_t row_elems = static_cast<int64_t>(row / dtype_size(x.dtype));
  const int64_t positions = batched.num_elements / (row_elems ? row_elems : 1);
  const auto* src = static_cast<const char*>(x.data);
  auto* dst = static_cast<char*>(y.data);
  std::vector<int64_t> coord(m + 1);
  for (int64_t p = 0; p < positions; ++p) {
    int64_t rest = p;
    for (size_t k = m + 1; k-- > 0;) {  // coordinates over the batched side's leading m + 1 dims
      const int64_t d = batched.dims[k];
      coord[k] = rest % d;
      rest /= d;
    }
    int64_t o_flat = coord[0] / batch;
    const int64_t n = coord[0] % batch;
    int64_t spatial_off = n * sstrides[0];
    bool inside = true;
    for (size_t k = m; k-- > 0;) {
      const int64_t o = o_flat % b.block[k];
      o_flat /= b.block[k];
      const int64_t s = coord[k + 1] * b.block[k] + o - b.before[k];
      if (s < 0 || s >= spatial.dims[k + 1]) {
        inside = false;
        continue;
      }
      spatial_off += s * sstrides[k + 1];
    }
    int64_t batched_off = 0;
    for (size_t k = 0; k <= m; ++k) batched_off += coord[k] * bstrides[k];
    const size_t bo = static_cast<size_t>(batched_off) * dtype_size(x.dtype);
    const size_t so = static_cast<size_t>(spatial_off) * dtype_size(x.dtype);
    if (to_batch) {
      if (inside)
        std::memcpy(dst + bo, src + so, row);
      else
        std::memset(dst + bo, 0, row);  // padding: zero bits are zero in every dtype
    } else if (inside) {
      std::memcpy(dst + so, src + bo, row);  // cropped positions are dropped
    }
  }
}

// Each is the other's gradient, with the same blocks (paddings become crops).
void space_to_batch_grad(GradContext& c) {
  c.dx[0] = grad::emit1(c.b, op::BatchToSpaceND(), {&c.dy[0], &c.x[1], &c.x[2]});
}
void batch_to_space_grad(GradContext& c) {
  c.dx[0] = grad::emit1(c.b, op::SpaceToBatchND(), {&c.dy[0], &c.x[1], &c.x[2]});
}

}  // namespace

const OpDef& op::SpaceToBatchND() {
  static const OpDef def = {.name = "SpaceToBatchND",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "block_shape", "paddings"},
                            .traits = kTfjs,
                            .infer = infer_space_batch,
                            .any_dtype_kernel = &run_space_batch,
                            .index_type_attrs = {{"Tblock_shape", 1}, {"Tpaddings", 2}},
                            .grad = &space_to_batch_grad};
  return def;
}

const OpDef& op::BatchToSpaceND() {
  static const OpDef def = {.name = "BatchToSpaceND",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "block_shape", "crops"},
                            .traits = kTfjs,
                            .infer = infer_space_batch,
                            .any_dtype_kernel = &run_space_batch,
                            .index_type_attrs = {{"Tblock_shape", 1}, {"Tcrops", 2}},
                            .grad = &batch_to_space_grad};
  return def;
}

}  // namespace kiln::ops
