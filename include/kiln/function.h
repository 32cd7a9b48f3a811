// kiln::function: trace a C++ callable into a graph once per input signature, optimize it,
// and run the graph on later calls. Semantics follow TensorFlow's tf.function.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/detail/call_key.h"
#include "kiln/graph_view.h"
#include "kiln/ops.h"
#include "kiln/tensor.h"
#include "kiln/variable.h"

namespace kiln {

// Graph optimizer passes (like tf.config.optimizer.set_experimental_options). All on by
// default; turn one off to bisect a wrong answer to a pass.
struct OptimizerOptions {
  bool constant_folding = true;
  bool common_subexpression_elimination = true;
  bool arithmetic_simplification = true;
  bool remove_identity = true;
  bool prune = true;
  bool elementwise_fusion = true;         // chains of elementwise ops become one kernel; a
                                          // Softmax takes its scalar scale's Mul in
  bool contraction_fusion = true;         // a convolution + its per-channel ops (BiasAdd, BatchNorm's
                                          // Mul and AddV2, Relu, swish), and a weight-gradient MatMul
                                          // + its update, become one kernel
  int64_t max_folded_elements = 1 << 16;  // constants larger than this are not materialized
  static OptimizerOptions none() {
    OptimizerOptions o;
    o.constant_folding = o.common_subexpression_elimination = o.arithmetic_simplification = false;
    o.remove_identity = o.prune = o.elementwise_fusion = o.contraction_fusion = false;
    return o;
  }
};

struct FunctionOptions {
  std::string name = "";                    // used in messages, graphs and signature printing
  std::vector<std::string> arg_names = {};  // default names: "arg0", "arg1", ...
  std::optional<std::vector<TensorSpec>> input_signature = std::nullopt;  // one graph; shapes may be partial
  bool reduce_retracing = false;                             // generalize shapes instead of retracing per shape
  bool jit_compile = false;                                  // reserved: whole-function code generation
  size_t max_traces = 1024;                                  // bound of the trace cache (oldest evicted)
  size_t max_cached_calls = 4096;                            // bound of the call-key map (least recently used evicted)
  std::optional<OptimizerOptions> optimizer = std::nullopt;  // default: config::optimizer_options()
  bool retracing_warning = true;  // false: the caller warns in its own words (the Python layer does)
};

namespace config {
// When on, every Function calls its C++ callable directly (no tracing), like
// tf.config.run_functions_eagerly.
void run_functions_eagerly(bool enabled);
bool functions_run_eagerly();
// The optimizer options of functions whose FunctionOptions do not set their own.
void set_optimizer_options(const OptimizerOptions& options);
OptimizerOptions optimizer_options();
}  // namespace config

namespace detail {
class ConcreteImpl;
class FunctionCore;
}  // namespace detail

class ConcreteFunction {
 public:
  ConcreteFunction() = default;
  explicit ConcreteFunction(std::shared_ptr<detail::ConcreteImpl> impl) : impl_(std::move(impl)) {}

  // Runs the graph. Inputs are the tensor arguments in order (captures are fed automatically).
  // Under a recording GradientTape, or inside another function's trace, its ops run one by
  // one instead, so the tape differentiates them (variables it reads included) and the trace
  // inlines them (a graph with control flow cannot be inlined yet: UnimplementedError).
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  template <class... Ts>
  requires(std::is_convertible_v<Ts, Tensor>&&...) std::vector<Tensor>
  operator()(const Ts&... ts) const { return (*this)(std::vector<Tensor>{Tensor(ts)...}); }

  std::string name() const;
  GraphView graph() const;            // the traced graph
  GraphView optimized_graph() const;  // what runs
  GraphDef as_graph_def() const;
  std::string to_dot() const;
  GraphDef optimized_graph_def() const;  // what runs, after the optimizer passes
  std::string optimized_to_dot() const;
  std::vector<TensorSpec> input_specs() const;
  std::vector<TensorSpec> output_specs() const;
  std::vector<Tensor> captured_inputs() const;
  // The variables the graph reads or writes (its control-flow bodies' included), in order of
  // first use: TensorFlow's ConcreteFunction.variables.
  std::vector<Variable> variables() const;
  std::string pretty_printed_signature() const;
  // What each optimizer pass did: "constant_folding: 12 -> 7 nodes (3 us)", in run order.
  std::vector<std::string> optimization_report() const;
  const std::shared_ptr<detail::ConcreteImpl>& impl() const { return impl_; }

 private:
  std::shared_ptr<detail::ConcreteImpl> impl_;
};

template <class F>
class Function {
  using Traits = detail::callable_traits<F>;
  using Params = typename Traits::args;
  using Result = std::decay_t<typename Traits::result>;
  static constexpr size_t kArity = std::tuple_size_v<Params>;

 public:
  Function(F f, FunctionOptions options)
      : f_(std::make_shared<F>(std::move(f))), core_(detail::make_function_core(std::move(options), "fn")) {}

  template <class... A>
  Result operator()(const A&... args) const {
    static_assert(sizeof...(A) == kArity, "wrong number of arguments for this kiln::function");
    if (detail::call_directly_now()) return call_directly(args...);
    detail::KeyBuilder key;
    detail::ArgTensors tensors;
    encode_all(key, tensors, std::index_sequence_for<A...>{}, args...);
    std::vector<Tensor> outs;
    if (!detail::call_cached(*core_, key, tensors, &outs)) {
      auto cf = detail::concrete_for(
          *core_, key, [&] { return signature(args...); }, body(args...));
      outs = detail::call_concrete(*cf, tensors);
    }
    if constexpr (std::is_void_v<Result>)
      return;
    else {
      size_t i = 0;
      return detail::unflatten_result<Result>(outs, i);
    }
  }

  // Traces if needed. TensorSpec stands for a tensor argument.
  template <class... A>
  ConcreteFunction get_concrete_function(const A&... args) const {
    static_assert(sizeof...(A) == kArity, "wrong number of arguments for this kiln::function");
    detail::KeyBuilder key;
    detail::ArgTensors tensors;
    encode_all(key, tensors, std::index_sequence_for<A...>{}, args...);
    auto cf = detail::cached_concrete(*core_, key);
    if (!cf)
      cf = detail::concrete_for(
          *core_, key, [&] { return signature(args...); }, body(args...));
    return ConcreteFunction(std::move(cf));
  }
  // With an input_signature, the function it defines.
  ConcreteFunction get_concrete_function() const requires(kArity > 0) {
    const auto& opts = detail::options_of(*core_);
    if (!opts.input_signature)
      throw InvalidArgumentError("get_concrete_function() without arguments needs an input_signature");
    return get_from_specs(std::make_index_sequence<kArity>{});
  }

  int tracing_count() const { return detail::tracing_count(*core_); }
  std::vector<ConcreteFunction> concrete_functions() const { return detail::concrete_functions(*core_); }
  std::string pretty_printed_concrete_signatures() const { return detail::pretty_printed_signatures(*core_); }
  std::vector<std::string> trace_log() const { return detail::trace_log(*core_); }
  void clear_cache() { detail::clear_cache(*core_); }

 private:
  template <size_t... I>
  ConcreteFunction get_from_specs(std::index_sequence<I...>) const {
    const auto& specs = *detail::options_of(*core_).input_signature;
    if (specs.size() != kArity) throw InvalidArgumentError("input_signature has the wrong number of specs");
    return get_concrete_function(specs[I]...);
  }

  std::string arg_name(size_t i) const {
    const auto& names = detail::options_of(*core_).arg_names;
    return i < names.size() ? names[i] : "arg" + std::to_string(i);
  }

  template <class... A>
  detail::CallSignature signature(const A&... args) const {
    detail::CallSignature sig;
    record_all(sig, std::index_sequence_for<A...>{}, args...);
    detail::apply_input_signature(*core_, sig);
    return sig;
  }
  template <size_t... I, class... A>
  void encode_all(detail::KeyBuilder& key, detail::ArgTensors& tensors, std::index_sequence<I...>,
                  const A&... args) const {
    (detail::encode_arg<std::tuple_element_t<I, Params>>(key, tensors, args), ...);
  }
  template <size_t... I, class... A>
  void record_all(detail::CallSignature& sig, std::index_sequence<I...>, const A&... args) const {
    (detail::record_arg<std::tuple_element_t<I, Params>>(sig, arg_name(I), args), ...);
  }

  template <class... A>
  detail::TraceBody body(const A&... args) const {
    return [this, &args...](const std::vector<Tensor>& ph) {
      return trace_call(ph, std::index_sequence_for<A...>{}, args...);
    };
  }
  template <size_t... I, class... A>
  std::vector<Tensor> trace_call(const std::vector<Tensor>& ph, std::index_sequence<I...>, const A&... args) const {
    [[maybe_unused]] size_t next = 0;  // unused when f takes no arguments
    // Arguments are built left to right (braced init order), placeholders consumed in order.
    auto converted = std::tuple<std::decay_t<std::tuple_element_t<I, Params>>...>{
        detail::traced_arg<std::tuple_element_t<I, Params>>(args, ph, next)...};
    std::vector<Tensor> out;
    if constexpr (std::is_void_v<Result>) {
      std::apply(*f_, converted);
    } else {
      detail::flatten_result(std::apply(*f_, converted), out);
    }
    return out;
  }

  template <class... A>
  Result call_directly(const A&... args) const {
    return call_directly_impl(std::index_sequence_for<A...>{}, args...);
  }
  template <size_t... I, class... A>
  Result call_directly_impl(std::index_sequence<I...>, const A&... args) const {
    auto converted = std::tuple<std::decay_t<std::tuple_element_t<I, Params>>...>{
        detail::direct_arg<std::tuple_element_t<I, Params>>(args)...};
    return std::apply(*f_, converted);
  }

  std::shared_ptr<F> f_;
  std::shared_ptr<detail::FunctionCore> core_;
};

template <class F>
Function<std::decay_t<F>> function(F f, FunctionOptions options = {}) {
  return Function<std::decay_t<F>>(std::move(f), std::move(options));
}

}  // namespace kiln
