// StringToHashBucketFast(input; num_buckets): each string's Fingerprint64 modulo num_buckets,
// as TensorFlow computes it (the same strings land in the same buckets in both).
#include <string>

#include "core/object_value.h"
#include "kernels/fingerprint.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

void infer_hash_bucket(InferContext& c) {
  require_string_input(c, 0);
  if (c.attrs.i(0) < 1)
    c.fail("Value for attr 'num_buckets' of " + std::to_string(c.attrs.i(0)) + " must be at least minimum 1");
  c.kernel_dtype = DType::String;
  c.out(0).dtype = DType::Int64;
  c.out(0).shape = shape_of(c.in(0));
}

void hash_bucket(KernelContext& c) {
  const auto buckets = static_cast<uint64_t>(c.attrs.i(0));
  const TensorImpl& in = c.in(0);
  int64_t* out = c.out(0).as<int64_t>();
  for (int64_t i = 0; i < in.num_elements; ++i)
    out[i] = static_cast<int64_t>(kernels::fingerprint64(str_at(in, i)) % buckets);
}

}  // namespace

const OpDef& op::StringToHashBucketFast() {
  static const OpDef def = {.name = "StringToHashBucketFast",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kElementwise,
                            .attr_specs = {int_attr("num_buckets")},
                            .infer = infer_hash_bucket,
                            .kernels = string_kernel(&hash_bucket),
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}

}  // namespace kiln::ops
