// Bitcast: a tensor's bytes read as another dtype (tf.bitcast). tf.random.Generator reads its
// int64 state as uint64 counter and key through it.
#include <cstring>
#include <string>

#include "core/dtype_table.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// Bitcast(input) -> the same bytes as attr `type`: a wider type drops the last dimension
// (which must hold the ratio), a narrower one adds it.
const int kBitcastType = attr_index(op::Bitcast(), "type");
const std::initializer_list<DType> kBitcastTypes = {
    DType::BFloat16, DType::Float16, DType::Float32, DType::Float64, DType::Int64, DType::Int32,     DType::UInt8,
    DType::UInt16,   DType::UInt32,  DType::UInt64,  DType::Int8,    DType::Int16, DType::Complex64, DType::Complex128};

void infer_bitcast(InferContext& c) {
  const DType from = c.in(0).dtype, to = c.attrs.type(kBitcastType);
  require_type_in(c, "T", from, kBitcastTypes);
  require_type_in(c, "type", to, kBitcastTypes);
  c.out(0).dtype = to;
  c.kernel_dtype = to;
  const int64_t in_size = static_cast<int64_t>(dtype_size(from)), out_size = static_cast<int64_t>(dtype_size(to));
  if (c.in(0).unknown_rank) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  Dims dims = *c.in(0).dims;
  if (in_size > out_size) {
    dims.push_back(in_size / out_size);
  } else if (in_size < out_size) {
    const int64_t last = dims.empty() ? 0 : dims.back();
    if (dims.empty() || (last >= 0 && last != out_size / in_size))
      c.fail("Cannot bitcast from " + std::to_string(detail::dtype_info(from).tf_proto) + " to " +
             std::to_string(detail::dtype_info(to).tf_proto));
    dims.resize(dims.size() - 1);
  }
  c.out(0).shape = TensorShape(std::move(dims));
}
void run_bitcast(KernelContext& c) {
  if (c.in(0).nbytes() != c.out(0).nbytes())
    c.fail("Cannot bitcast from " + std::to_string(detail::dtype_info(c.in(0).dtype).tf_proto) + " to " +
           std::to_string(detail::dtype_info(c.out(0).dtype).tf_proto));
  if (c.in(0).nbytes()) std::memcpy(c.out(0).data, c.in(0).data, c.in(0).nbytes());
}

}  // namespace

const OpDef& op::Bitcast() {
  static const OpDef def = {.name = "Bitcast",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kPure,
                            .attr_specs = {type_attr("type")},
                            .infer = infer_bitcast,
                            .any_dtype_kernel = run_bitcast,
                            .type_attr = "T",
                            .grad = &no_gradient};
  return def;
}

}  // namespace kiln::ops
