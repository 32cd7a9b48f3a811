// kiln's front-end layer: what a language binding (Python, R) needs to give its own functions
// tf.function's semantics without reimplementing them. The binding walks its call's
// arguments into a CallArgs (tensors by dtype and shape, host values by type and value, the
// structure around them); a DynamicFunction looks the call up in its trace cache and, on a
// miss, calls the binding back to trace. The cache, the tracing rules, the retracing policy
// and the signature printing are the C++ core's, so every front end has the same ones.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/function.h"
#include "kiln/ops.h"
#include "kiln/tensor.h"

namespace kiln {

// The arguments of one call, as the trace cache sees them. A binding's walker is called once
// per call to build the key (cheap: no allocation for small calls) and once more on a miss
// to record the signature (names, dtypes, shapes, printable values), so it must describe the
// same arguments both times.
class CallArgs {
 public:
  // A tensor argument: keyed by dtype and shape, fed to the graph. It must outlive the call.
  void tensor(const Tensor& t, std::string_view name);
  // Stands for a tensor in get_concrete_function (shapes may be partial).
  void spec(const TensorSpec& s, std::string_view name);
  // A host value (a number, a string, an R vector): keyed by its type and `key` (equal values
  // must give equal keys), printed as `text` in signatures ("[1.0, -1.0]").
  void value(std::string_view type, std::string_view key, std::string_view text, std::string_view name);
  // The start of a nested structure of n elements (a list): keyed by its kind and size.
  void structure(std::string_view kind, size_t n, std::string_view name);
  // True while recording a signature: a walker may skip building names and text when false
  // (they are read only then).
  bool recording() const { return sig_ != nullptr; }

  CallArgs(detail::KeyBuilder& key, detail::ArgTensors& tensors, detail::CallSignature* sig, bool specs_allowed)
      : key_(key), tensors_(tensors), sig_(sig), specs_allowed_(specs_allowed) {}

 private:
  detail::KeyBuilder& key_;
  detail::ArgTensors& tensors_;
  detail::CallSignature* sig_;
  bool specs_allowed_;
};

// A function of a front end's language, traced once per argument signature.
class DynamicFunction {
 public:
  using Walker = std::function<void(CallArgs&)>;
  // Runs the front end's function on placeholders (one per tensor argument, in walk order)
  // inside the trace, and returns its flattened tensor outputs.
  using Trace = std::function<std::vector<Tensor>(const std::vector<Tensor>& placeholders)>;

  struct Result {
    std::vector<Tensor> outputs;
    ConcreteFunction concrete;  // the trace that ran: a binding keys its own records by it
    bool traced = false;        // this call made the trace
  };

  // options.retracing_warning decides whether the core warns about frequent retracing.
  explicit DynamicFunction(FunctionOptions options);

  // Whether a call now must run the front end's function directly (no trace): functions run
  // eagerly, or this call is inside another trace or under an eager tape.
  static bool must_call_directly();

  // A call: the cached trace for these arguments (traced first if there is none) run on them.
  Result call(const Walker& walk, const Trace& trace);
  // Traces if needed and returns the concrete function; specs may stand for tensors.
  Result concrete(const Walker& walk, const Trace& trace);

  int tracing_count() const;
  std::vector<ConcreteFunction> concrete_functions() const;
  std::string pretty_printed_concrete_signatures() const;
  std::vector<std::string> trace_log() const;
  void clear_cache();

 private:
  Result lookup(const Walker& walk, const Trace& trace, bool specs_allowed, bool run);
  std::shared_ptr<detail::FunctionCore> core_;
};

}  // namespace kiln
