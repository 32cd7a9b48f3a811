// ReverseSequence(input, seq_lengths; seq_dim, batch_dim): for each batch entry b, the first
// seq_lengths[b] slices along seq_dim reversed, the rest kept. An element mover (every dtype,
// strings included); its gradient is itself, applied to the upstream gradient.
#include <functional>

#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

enum { kSeqDim, kBatchDim };

// TensorFlow's checks, in its kernel's order and words. `lengths` is null while tracing.
void check(const std::function<void(const std::string&)>& fail, int64_t seq_dim, int64_t batch_dim, int64_t rank,
           const Dims* dims, int64_t lengths_rank, const std::vector<int64_t>* lengths) {
  if (seq_dim < 0) fail("Invalid seq_dim " + std::to_string(seq_dim));
  if (batch_dim < 0) fail("Invalid batch_dim " + std::to_string(batch_dim));
  if (lengths_rank >= 0 && lengths_rank != 1) fail("seq_lengths must be 1-dim, not " + std::to_string(lengths_rank));
  if (rank < 0) return;
  if (batch_dim == seq_dim) fail("batch_dim == seq_dim == " + std::to_string(seq_dim));
  if (seq_dim >= rank)
    fail("seq_dim must be < input rank ( " + std::to_string(seq_dim) + " vs. " + std::to_string(rank) + ")");
  if (batch_dim >= rank)
    fail("batch_dim must be < input rank ( " + std::to_string(batch_dim) + " vs. " + std::to_string(rank) + ")");
  if (!lengths || !dims) return;
  const int64_t batch = (*dims)[batch_dim];
  if (static_cast<int64_t>(lengths->size()) != batch)
    fail("Length of seq_lengths != input.dims(" + std::to_string(batch_dim) + "), (" + std::to_string(lengths->size()) +
         " vs. " + std::to_string(batch) + ")");
  for (size_t i = 0; i < lengths->size(); ++i) {
    if ((*lengths)[i] < 0) fail("seq_lens(" + std::to_string(i) + ") < 0");
    if ((*lengths)[i] > (*dims)[seq_dim])
      fail("seq_lens(" + std::to_string(i) + ") > input.dims(" + std::to_string(seq_dim) + ")");
  }
}

void infer_reverse_sequence(InferContext& c) {
  const DType t = c.in(1).dtype;
  require_type_in(c, "Tlen", t, {DType::Int32, DType::Int64});
  const InputInfo& x = c.in(0);
  const int64_t rank = x.unknown_rank ? -1 : static_cast<int64_t>(x.dims->size());
  const int64_t lengths_rank = c.in(1).unknown_rank ? -1 : static_cast<int64_t>(c.in(1).dims->size());
  std::vector<int64_t> lengths;
  const bool known = c.in(1).value && !x.unknown_rank && shape_of(x).is_fully_defined();
  if (known) lengths = int_values(*c.in(1).value);
  check([&](const std::string& m) { c.fail(m); }, c.attrs.i(kSeqDim), c.attrs.i(kBatchDim), rank,
        known ? x.dims : nullptr, lengths_rank, known ? &lengths : nullptr);
  c.kernel_dtype = x.dtype;
  c.out(0).dtype = x.dtype;
  c.out(0).shape = shape_of(x);
}

template <class T>
struct ReverseSequenceKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    const int64_t seq_dim = c.attrs.i(kSeqDim), batch_dim = c.attrs.i(kBatchDim);
    const std::vector<int64_t> lengths = int_values(c.in(1));
    check([&](const std::string& m) { c.fail(m); }, seq_dim, batch_dim, static_cast<int64_t>(x.dims.size()), &x.dims,
          static_cast<int64_t>(c.in(1).dims.size()), &lengths);
    const Dims strides = strides_of(x.dims);
    const T* in = x.as<T>();
    T* out = c.out(0).as<T>();
    const auto rank = x.dims.size();
    for (int64_t i = 0; i < x.num_elements; ++i) {
      int64_t rest = i, src = i;
      int64_t b = 0, s = 0;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t coord = rest / strides[d];
        rest %= strides[d];
        if (static_cast<int64_t>(d) == batch_dim) b = coord;
        if (static_cast<int64_t>(d) == seq_dim) s = coord;
      }
      const int64_t len = lengths[b];
      if (s < len) src = i + (len - 1 - 2 * s) * strides[seq_dim];
      out[i] = in[src];
    }
  }
};

void reverse_sequence_grad(GradContext& c) {
  c.dx[0] = grad::emit1(c.b, op::ReverseSequence(), {&c.dy[0], &c.x[1]}, c.attrs);
}

}  // namespace

const OpDef& op::ReverseSequence() {
  static const OpDef def = {.name = "ReverseSequence",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "seq_lengths"},
                            .traits = kMovesElements,
                            .attr_specs = {int_attr("seq_dim"), int_attr("batch_dim", 0)},
                            .infer = infer_reverse_sequence,
                            .kernels = kernels_for<ReverseSequenceKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tlen", 1}},
                            .grad = &reverse_sequence_grad};
  return def;
}

}  // namespace kiln::ops
