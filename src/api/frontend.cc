// kiln's front-end layer (kiln/frontend.h): a binding's arguments into the trace cache's key
// and signature, and a DynamicFunction over the same FunctionCore a C++ kiln::Function uses.
#include "kiln/frontend.h"

#include <utility>

namespace kiln {

namespace {
// Key words of the kinds a front end describes (far from the core's KeyTag and Python's).
enum FrontEndKeyTag : uint64_t { kKeyHostValue = 0x7100, kKeyStructure };

void value_entry(detail::CallSignature* sig, std::string_view name, std::string text, std::string type) {
  detail::ArgEntry e;
  e.kind = detail::ArgEntry::kValue;
  e.name = std::string(name);
  e.value = std::move(text);
  e.value_type = std::move(type);
  sig->entries.push_back(std::move(e));
}
}  // namespace

void CallArgs::tensor(const Tensor& t, std::string_view name) {
  if (!t.defined()) throw InvalidArgumentError("a function was called with an empty tensor handle");
  if (t.is_symbolic())
    throw InvalidArgumentError("A symbolic tensor of another trace was passed to a kiln function from outside it.");
  detail::key_tensor(key_, t);
  tensors_.borrow(t);
  if (!sig_) return;
  detail::ArgEntry e;
  e.kind = detail::ArgEntry::kTensor;
  e.name = std::string(name);
  e.dtype = t.dtype();
  e.shape = t.shape();
  sig_->entries.push_back(std::move(e));
}

void CallArgs::spec(const TensorSpec& s, std::string_view name) {
  if (!specs_allowed_)
    throw InvalidArgumentError("A TensorSpec stands for a tensor in get_concrete_function(); a call needs the tensor.");
  detail::key_spec(key_, s);
  tensors_.push_back(Tensor());
  if (!sig_) return;
  detail::ArgEntry e;
  e.kind = detail::ArgEntry::kTensor;
  e.name = s.name.empty() ? std::string(name) : s.name;
  e.dtype = s.dtype;
  e.shape = s.shape;
  sig_->entries.push_back(std::move(e));
}

void CallArgs::value(std::string_view type, std::string_view key, std::string_view text, std::string_view name) {
  key_.word(kKeyHostValue);
  detail::key_string(key_, type);
  detail::key_string(key_, key);
  if (sig_) value_entry(sig_, name, std::string(text), std::string(type));
}

void CallArgs::structure(std::string_view kind, size_t n, std::string_view name) {
  key_.word(kKeyStructure);
  detail::key_string(key_, kind);
  key_.word(n);
  if (sig_) value_entry(sig_, name, std::string(kind) + "(" + std::to_string(n) + ")", std::string(kind));
}

DynamicFunction::DynamicFunction(FunctionOptions options) {
  std::string name = options.name.empty() ? "fn" : options.name;
  core_ = detail::make_function_core(std::move(options), std::move(name));
}

bool DynamicFunction::must_call_directly() { return detail::call_directly_now(); }

DynamicFunction::Result DynamicFunction::lookup(const Walker& walk, const Trace& trace, bool specs_allowed, bool run) {
  detail::KeyBuilder key;
  detail::ArgTensors tensors;
  {
    CallArgs args(key, tensors, nullptr, specs_allowed);
    walk(args);
  }
  Result result;
  std::shared_ptr<detail::ConcreteImpl> cf = detail::cached_concrete(*core_, key);
  if (!cf) {
    auto signature = [&] {
      detail::CallSignature sig;
      detail::KeyBuilder scratch;
      detail::ArgTensors unused;
      CallArgs args(scratch, unused, &sig, specs_allowed);
      walk(args);
      detail::apply_input_signature(*core_, sig);
      return sig;
    };
    auto body = [&](const std::vector<Tensor>& placeholders) {
      result.traced = true;
      return trace(placeholders);
    };
    cf = detail::concrete_for(*core_, key, signature, body);
  }
  if (run) result.outputs = detail::call_concrete(*cf, tensors);
  result.concrete = ConcreteFunction(std::move(cf));
  return result;
}

DynamicFunction::Result DynamicFunction::call(const Walker& walk, const Trace& trace) {
  return lookup(walk, trace, false, true);
}
DynamicFunction::Result DynamicFunction::concrete(const Walker& walk, const Trace& trace) {
  return lookup(walk, trace, true, false);
}

int DynamicFunction::tracing_count() const { return detail::tracing_count(*core_); }
std::vector<ConcreteFunction> DynamicFunction::concrete_functions() const { return detail::concrete_functions(*core_); }
std::string DynamicFunction::pretty_printed_concrete_signatures() const {
  return detail::pretty_printed_signatures(*core_);
}
std::vector<std::string> DynamicFunction::trace_log() const { return detail::trace_log(*core_); }
void DynamicFunction::clear_cache() { detail::clear_cache(*core_); }

}  // namespace kiln
