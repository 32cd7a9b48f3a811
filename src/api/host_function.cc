// kiln::host_function: a KilnHostFunction node calling a registered callable (ops/host_function.h).
#include "kiln/host_function.h"

#include "api/api_util.h"
#include "ops/host_function.h"

namespace kiln {

std::vector<Tensor> host_function(std::function<std::vector<Tensor>(const std::vector<Tensor>&)> f,
                                  const std::vector<Tensor>& inputs, const std::vector<DType>& output_dtypes) {
  if (!f) throw InvalidArgumentError("host_function: no function given");
  for (const Tensor& t : inputs)
    if (!t.defined()) throw InvalidArgumentError("host_function: an input is an empty Tensor");
  if (!trace::current_trace()) {
    std::vector<Tensor> out = f(inputs);
    if (out.size() != output_dtypes.size())
      throw InvalidArgumentError("host_function: the function returned " + std::to_string(out.size()) +
                                 " values, output_dtypes lists " + std::to_string(output_dtypes.size()));
    for (size_t i = 0; i < out.size(); ++i)
      if (!out[i].defined() || out[i].dtype() != output_dtypes[i])
        throw InvalidArgumentError("host_function: output " + std::to_string(i) + " is not a " +
                                   std::string(dtype_name(output_dtypes[i])) + " tensor");
    return out;
  }
  std::vector<int64_t> types;
  for (DType d : output_dtypes) types.push_back(static_cast<int64_t>(d));
  return trace::dispatch_list(ops::op::KilnHostFunction(), inputs,
                              ops::Attrs{ops::register_host_function(std::move(f)), types}, "KilnHostFunction");
}

}  // namespace kiln
