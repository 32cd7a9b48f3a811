// ResourceGather(resource, indices): rows of a variable's value, as GatherV2 on axis 0 of a
// read (what tf.gather / tf.nn.embedding_lookup on a variable emit inside a TensorFlow
// function). The variable is attr "_resource", as for the other variable ops. No gradient
// yet: TensorFlow's is an IndexedSlices update of the variable.
#include <cstring>
#include <string>

#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/variable_state.h"

namespace kiln::ops {
namespace {

const int kBatchDims = attr_index(op::ResourceGather(), "batch_dims");
const int kDtype = attr_index(op::ResourceGather(), "dtype");
const int kResource = attr_index(op::ResourceGather(), "_resource");

VariableState& variable(const Attrs& a) { return *static_cast<VariableState*>(a.resource(kResource)); }

void infer_resource_gather(InferContext& c) {
  require_int_dtype(c, 0, "indices");
  const VariableState& v = variable(c.attrs);
  if (c.attrs.type(kDtype) != v.dtype())
    c.fail(std::string("Trying to read variable with wrong dtype. Expected ") + tf_type_name(c.attrs.type(kDtype)) +
           " got " + tf_type_name(v.dtype()));
  if (c.attrs.i(kBatchDims) != 0) c.fail("batch_dims other than 0 is not supported");
  c.out(0).dtype = v.dtype();
  const TensorShape& s = v.shape();
  if (s.unknown_rank() || c.in(0).unknown_rank) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  if (s.dims().empty()) c.fail("params must be at least 1 dimensional");
  Dims out = *c.in(0).dims;
  for (size_t i = 1; i < s.dims().size(); ++i) out.push_back(s.dims()[i]);
  c.out(0).shape = TensorShape(std::move(out));
}

struct ResourceGatherKernel {
  static void run(KernelContext& c) {
    const Tensor value = variable(c.attrs).read();
    const TensorImpl& p = *value.impl();
    if (p.dims.empty()) c.fail("params must be at least 1 dimensional");
    const std::vector<int64_t> idx = int_values(c.in(0));
    const int64_t limit = p.dims[0];
    for (size_t i = 0; i < idx.size(); ++i)
      if (idx[i] < 0 || idx[i] >= limit)
        c.fail("indices[" + std::to_string(i) + "] = " + std::to_string(idx[i]) + " is not in [0, " +
               std::to_string(limit) + ")");
    Dims out = c.in(0).dims;
    for (size_t i = 1; i < p.dims.size(); ++i) out.push_back(p.dims[i]);
    TensorImpl* y = detail::make_concrete(p.dtype, out);
    c.outputs[0] = y;
    const size_t row = static_cast<size_t>(limit ? p.num_elements / limit : 0) * dtype_size(p.dtype);
    auto* dst = static_cast<char*>(y->data);
    for (int64_t i : idx) {
      if (row) std::memcpy(dst, static_cast<const char*>(p.data) + static_cast<size_t>(i) * row, row);
      dst += row;
    }
  }
};

}  // namespace

const OpDef& op::ResourceGather() {
  static const OpDef def = {.name = "ResourceGather",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"indices"},
                            .traits = kStateful | kOwnOutputs | kMovesElements,
                            .attr_specs = {int_attr("batch_dims", 0), bool_attr("validate_indices", true),
                                           type_attr("dtype"), resource_attr("_resource")},
                            .infer = infer_resource_gather,
                            .any_dtype_kernel = &ResourceGatherKernel::run,
                            .type_attr = nullptr,
                            .index_type_attrs = {{"Tindices", 0}}};
  return def;
}

}  // namespace kiln::ops
