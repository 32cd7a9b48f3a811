// KilnHostFunction(input: list) -> list: calls the host function its `token` names with the
// inputs, when the graph runs (kStateful | kSideEffect: never folded, pruned or merged), and
// checks that it returned tensors of the dtypes `Tout` lists. Output shapes are whatever the
// function returns (unknown to the graph). TensorFlow's EagerPyFunc plays this part there;
// kiln's row is its own (kInternal: never saved, as the function cannot be).
#include "ops/host_function.h"

#include <atomic>
#include <map>
#include <mutex>

#include "core/tensor_impl.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, HostCallable> functions;
  std::atomic<int64_t> next{0};
};
// Never destroyed: a function may hold a Python object, which must not be released after
// the interpreter is gone.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

const int kToken = attr_index(op::KilnHostFunction(), "token");
const int kTout = attr_index(op::KilnHostFunction(), "Tout");

void infer_host_function(InferContext& c) {
  const std::vector<int64_t>& types = c.attrs.list(kTout);
  c.set_num_outputs(static_cast<int>(types.size()));
  for (size_t i = 0; i < types.size(); ++i) {
    if (types[i] < 0 || types[i] >= kNumDTypes) c.fail("Tout holds an invalid dtype");
    c.out(static_cast<int>(i)).dtype = static_cast<DType>(types[i]);
    c.out(static_cast<int>(i)).shape = TensorShape::unknown();
  }
  c.kernel_dtype = DType::Float32;
}

void run_host_function(KernelContext& c) {
  const HostCallable f = host_function_of(c.attrs.s(kToken));
  std::vector<Tensor> inputs;
  for (int i = 0; i < c.num_inputs; ++i) {
    auto* impl = const_cast<detail::TensorImpl*>(c.inputs[i]);
    impl->refs.fetch_add(1, std::memory_order_relaxed);
    inputs.emplace_back(impl);
  }
  const std::vector<Tensor> outputs = f(inputs);
  const std::vector<int64_t>& types = c.attrs.list(kTout);
  if (outputs.size() != types.size())
    c.fail("the host function returned " + std::to_string(outputs.size()) + " values, Tout lists " +
           std::to_string(types.size()));
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].defined() || outputs[i].dtype() != static_cast<DType>(types[i]))
      c.fail("the host function's output " + std::to_string(i) + " is not a " +
             std::string(dtype_name(static_cast<DType>(types[i]))) + " tensor");
  for (size_t i = 0; i < outputs.size(); ++i) c.outputs[i] = hand_out(outputs[i]);
}

}  // namespace

std::string register_host_function(HostCallable f) {
  Registry& r = registry();
  const std::string token = "kiln_host_function_" + std::to_string(r.next++);
  std::lock_guard<std::mutex> lock(r.mutex);
  r.functions.emplace(token, std::move(f));
  return token;
}

HostCallable host_function_of(const std::string& token) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.functions.find(token);
  if (it == r.functions.end())
    throw NotFoundError("no host function is registered as '" + token +
                        "' (a py_function's graph runs only in the process that traced it)");
  return it->second;
}

const OpDef& op::KilnHostFunction() {
  static const OpDef def = {.name = "KilnHostFunction",
                            .num_inputs = -1,
                            .num_outputs = -1,
                            .input_args = {list_arg("input")},
                            .traits = kStateful | kSideEffect | kInternal | kOwnOutputs,
                            .attr_specs = {string_attr("token"), int_list_attr("Tout")},
                            .infer = infer_host_function,
                            .any_dtype_kernel = &run_host_function,
                            .type_attr = nullptr,
                            .type_list_attr = "Tin",
                            .grad = &no_gradient,
                            .output_args = {"output"}};
  return def;
}

}  // namespace kiln::ops
