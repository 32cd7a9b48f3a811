// The non-template half of kiln::Function: the trace cache (a hash map keyed by the call
// signature), tracing, reduce_retracing, input signatures and retrace diagnostics.
#include <atomic>
#include <cstdio>
#include <list>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "ops/op_list.h"
#include "optimize/pass.h"
#include "trace/concrete.h"
#include "trace/dispatch.h"
#include "trace/op_observer.h"
#include "trace/trace_context.h"

namespace kiln {
namespace config {
namespace {
std::atomic<bool> g_run_eagerly{false};
}
void run_functions_eagerly(bool enabled) { g_run_eagerly.store(enabled); }
bool functions_run_eagerly() { return g_run_eagerly.load(std::memory_order_relaxed); }

namespace {
std::mutex g_optimizer_mu;
OptimizerOptions g_optimizer_options;
}  // namespace
void set_optimizer_options(const OptimizerOptions& options) {
  std::lock_guard<std::mutex> lock(g_optimizer_mu);
  g_optimizer_options = options;
}
OptimizerOptions optimizer_options() {
  std::lock_guard<std::mutex> lock(g_optimizer_mu);
  return g_optimizer_options;
}
}  // namespace config

namespace detail {

size_t CallSignature::hash() const {
  size_t h = entries.size();
  auto mix = [&](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const ArgEntry& e : entries) {
    mix(e.kind);
    if (e.kind == ArgEntry::kTensor) {
      mix(static_cast<size_t>(e.dtype));
      mix(static_cast<size_t>(e.shape.rank() + 2));
      for (int64_t d : e.shape.dims()) mix(static_cast<size_t>(d + 3));
    } else if (e.kind == ArgEntry::kValue) {
      mix(std::hash<std::string>()(e.value));
      mix(std::hash<std::string>()(e.value_type));
    } else {
      mix(static_cast<size_t>(e.list_size));
    }
  }
  return h;
}

bool CallSignature::operator==(const CallSignature& o) const {
  if (entries.size() != o.entries.size()) return false;
  for (size_t i = 0; i < entries.size(); ++i) {
    const ArgEntry& a = entries[i];
    const ArgEntry& b = o.entries[i];
    if (a.kind != b.kind) return false;
    if (a.kind == ArgEntry::kTensor && (a.dtype != b.dtype || a.shape != b.shape)) return false;
    if (a.kind == ArgEntry::kValue && (a.value != b.value || a.value_type != b.value_type)) return false;
    if (a.kind == ArgEntry::kTensorList && a.list_size != b.list_size) return false;
  }
  return true;
}

namespace {
struct SigHash {
  size_t operator()(const CallSignature& s) const { return s.hash(); }
};

// Same structure, dtypes and values: only tensor shapes may differ.
bool same_structure(const std::vector<ArgEntry>& a, const std::vector<ArgEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind) return false;
    if (a[i].kind == ArgEntry::kTensor && a[i].dtype != b[i].dtype) return false;
    if (a[i].kind == ArgEntry::kValue && (a[i].value != b[i].value || a[i].value_type != b[i].value_type)) return false;
    if (a[i].kind == ArgEntry::kTensorList && a[i].list_size != b[i].list_size) return false;
  }
  return true;
}
// Every tensor of `call` fits the (possibly relaxed) traced shapes.
bool fits(const std::vector<ArgEntry>& traced, const std::vector<ArgEntry>& call) {
  if (!same_structure(traced, call)) return false;
  for (size_t i = 0; i < traced.size(); ++i)
    if (traced[i].kind == ArgEntry::kTensor && !traced[i].shape.is_compatible_with(call[i].shape)) return false;
  return true;
}

// Why `call` needed a new trace, compared with the closest cached one.
std::string retrace_reason(const std::vector<ArgEntry>& call, const std::vector<std::vector<ArgEntry>>& cached) {
  if (cached.empty()) return "first call";
  const std::vector<ArgEntry>& last = cached.back();
  for (size_t i = 0; i < std::min(call.size(), last.size()); ++i) {
    const ArgEntry& a = call[i];
    const ArgEntry& b = last[i];
    if (a.kind != b.kind) return "argument " + a.name + ": a tensor in one call and a value in another";
    if (a.kind == ArgEntry::kValue && (a.value != b.value || a.value_type != b.value_type)) {
      std::string seen;
      for (const auto& c : cached)
        if (i < c.size() && c[i].kind == ArgEntry::kValue) seen += (seen.empty() ? "" : ", ") + c[i].value;
      return "argument " + a.name + ": value " + a.value + ", cached traces have " + seen;
    }
    if (a.kind == ArgEntry::kTensor && a.dtype != b.dtype)
      return "argument " + a.name + ": dtype " + std::string(dtype_name(a.dtype)) + " does not match " +
             std::string(dtype_name(b.dtype));
    if (a.kind == ArgEntry::kTensor && a.shape != b.shape)
      return "argument " + a.name + ": shape " + a.shape.str() + " does not match " + b.shape.str();
    if (a.kind == ArgEntry::kTensorList && a.list_size != b.list_size)
      return "argument " + a.name + ": list of " + std::to_string(a.list_size) + " tensors, cached traces have " +
             std::to_string(b.list_size);
  }
  return last.size() != call.size() ? "the arguments' structure changed" : "a new signature";
}
}  // namespace

class FunctionCore {
 public:
  FunctionCore(FunctionOptions o, std::string default_name) : options(std::move(o)) {
    name = options.name.empty() ? default_name : options.name;
  }

  FunctionOptions options;
  std::string name;
  mutable std::shared_mutex mu;  // guards the cache
  std::unordered_map<CallSignature, std::shared_ptr<ConcreteImpl>, SigHash> cache;
  std::list<std::shared_ptr<ConcreteImpl>> traces;  // trace order (what concrete_functions lists)
  std::vector<std::string> log;
  std::atomic<int> trace_count{0};
  std::mutex trace_mu;  // one trace at a time: concurrent first calls trace once
  std::atomic<uint32_t> history{0};  // last 10 calls, bit set when the call traced
  std::atomic<uint32_t> calls{0};
  std::atomic<bool> warned{false};

  void note_call(bool traced, const std::string& reason) {
    const uint32_t h = ((history.load(std::memory_order_relaxed) << 1) | (traced ? 1u : 0u)) & 0x3FFu;
    history.store(h, std::memory_order_relaxed);
    const uint32_t n = calls.fetch_add(1, std::memory_order_relaxed) + 1;
    if (n >= 10 && __builtin_popcount(h) >= 5 && !warned.exchange(true)) {
      std::string msg = "WARNING: " + std::to_string(__builtin_popcount(h)) + " out of the last 10 calls to " + name +
                        " triggered kiln::function retracing. Tracing is expensive and the excessive number of tracings "
                        "could be due to (1) passing C++ values that change on every call (each distinct value is a "
                        "new trace), (2) passing tensors with different shapes (consider input_signature or "
                        "reduce_retracing). Latest reason: " + reason + "\n";
      std::fputs(msg.c_str(), stderr);
    }
  }

  std::shared_ptr<ConcreteImpl> trace(const CallSignature& sig, const TraceBody& body) {
    auto cf = std::make_shared<ConcreteImpl>();
    cf->name = name;
    cf->signature = sig.entries;
    cf->graph = std::make_unique<graph::Graph>();
    graph::Graph& g = *cf->graph;
    std::vector<Tensor> placeholders;
    {
      trace::TraceContext ctx(&g);
      ctx.allow_variable_creation = traces.empty() && trace_count.load() == 0;  // first trace only
      for (const ArgEntry& e : sig.entries) {
        if (e.kind != ArgEntry::kTensor) continue;
        ops::PartialShape ps = e.shape.rank() < 0 ? ops::PartialShape{{}, true} : ops::PartialShape{Dims(e.shape.dims()), false};
        graph::Node* ph = g.add_placeholder(e.dtype, ps, e.name, e.name);
        g.inputs.push_back(ph);
        placeholders.push_back(ph->output(0));
        cf->inputs.push_back(TensorSpec{e.shape, e.dtype, e.name});
      }
      std::vector<Tensor> results = body(placeholders);
      for (const Tensor& r : results) {
        if (!r.defined()) throw InvalidArgumentError(name + " returned an empty Tensor");
        const Tensor* in[] = {&r};
        Tensor out = trace::dispatch1(ops::op::Identity(), in, 1, {}, "Identity");
        const ops::TensorImpl* t = out.impl();
        g.outputs.push_back(graph::Output{t->node, t->index});
        cf->outputs.push_back(TensorSpec{out.shape(), out.dtype(), ""});
      }
      for (const auto& cap : ctx.captures()) {
        g.inputs.push_back(cap.node);
        cf->captures.push_back(cap.value);
      }
    }
    // Optimize a copy once per concrete function (never per call), then compile the plan.
    const OptimizerOptions opts = options.optimizer ? *options.optimizer : config::optimizer_options();
    cf->compile(opts);
    return cf;
  }
};

std::shared_ptr<FunctionCore> make_function_core(FunctionOptions options, std::string default_name) {
  return std::make_shared<FunctionCore>(std::move(options), std::move(default_name));
}

const FunctionOptions& options_of(const FunctionCore& core) { return core.options; }

bool tracing_active() { return trace::current_trace() != nullptr; }
bool eager_tape_recording() { return trace::observers_active() && !trace::current_trace() && trace::recording_here(); }

void apply_input_signature(const FunctionCore& core, CallSignature& sig) {
  if (!core.options.input_signature) return;
  const auto& specs = *core.options.input_signature;
  size_t k = 0;
  for (ArgEntry& e : sig.entries) {
    if (e.kind == ArgEntry::kTensorList) continue;
    if (e.kind == ArgEntry::kValue)
      throw InvalidArgumentError("When input_signature is provided, all inputs to " + core.name +
                                 " must be tensors; argument " + e.name + " is the value " + e.value);
    if (k >= specs.size())
      throw InvalidArgumentError(core.name + " has an input_signature of " + std::to_string(specs.size()) +
                                 " specs but was called with more tensor arguments");
    const TensorSpec& spec = specs[k];
    if (e.dtype != spec.dtype || !spec.shape.is_compatible_with(e.shape))
      throw InvalidArgumentError("Python inputs incompatible with input_signature: argument " + e.name + " was " +
                                 std::string(dtype_name(e.dtype)) + " with shape " + e.shape.str() +
                                 ", which does not fit TensorSpec(shape=" + spec.shape.str() + ", dtype=" +
                                 std::string(dtype_name(spec.dtype)) + ")");
    e.shape = spec.shape;
    if (!spec.name.empty()) e.name = spec.name;
    ++k;
  }
  if (k != specs.size())
    throw InvalidArgumentError(core.name + " has an input_signature of " + std::to_string(specs.size()) +
                               " specs but was called with " + std::to_string(k) + " tensor arguments");
}

std::shared_ptr<ConcreteImpl> concrete_for(FunctionCore& core, CallSignature& sig, const TraceBody& body) {
  {
    std::shared_lock lock(core.mu);
    auto it = core.cache.find(sig);
    if (it != core.cache.end()) {
      auto cf = it->second;
      lock.unlock();
      core.note_call(false, "");
      return cf;
    }
  }
  std::lock_guard trace_lock(core.trace_mu);
  {
    std::shared_lock lock(core.mu);
    auto it = core.cache.find(sig);
    if (it != core.cache.end()) return it->second;  // traced meanwhile by another thread
  }
  CallSignature to_trace = sig;
  std::vector<std::vector<ArgEntry>> cached;
  for (const auto& t : core.traces) cached.push_back(t->signature);
  if (core.options.reduce_retracing) {
    // A relaxed trace that already fits this call?
    for (const auto& t : core.traces)
      if (fits(t->signature, sig.entries)) {
        std::unique_lock lock(core.mu);
        core.cache.emplace(sig, t);
        return t;
      }
    // Relax against the latest trace of the same structure.
    for (auto it = core.traces.rbegin(); it != core.traces.rend(); ++it) {
      if (!same_structure((*it)->signature, sig.entries)) continue;
      for (size_t i = 0; i < sig.entries.size(); ++i)
        if (sig.entries[i].kind == ArgEntry::kTensor)
          to_trace.entries[i].shape = (*it)->signature[i].shape.most_specific_common(sig.entries[i].shape);
      break;
    }
  }
  const std::string reason = retrace_reason(sig.entries, cached);
  auto cf = core.trace(to_trace, body);
  {
    std::unique_lock lock(core.mu);
    core.cache.emplace(sig, cf);
    if (!(to_trace == sig)) core.cache.emplace(to_trace, cf);
    core.traces.push_back(cf);
    core.log.push_back(reason);
    while (core.traces.size() > core.options.max_traces) {
      auto oldest = core.traces.front();
      core.traces.pop_front();
      for (auto it = core.cache.begin(); it != core.cache.end();)
        it = it->second == oldest ? core.cache.erase(it) : std::next(it);
    }
  }
  core.trace_count.fetch_add(1);
  core.note_call(true, reason);
  return cf;
}

std::vector<Tensor> call_concrete(const ConcreteImpl& cf, const std::vector<Tensor>& tensors) { return cf.call(tensors); }

int tracing_count(const FunctionCore& core) { return core.trace_count.load(); }

std::vector<ConcreteFunction> concrete_functions(const FunctionCore& core) {
  std::shared_lock lock(core.mu);
  std::vector<ConcreteFunction> v;
  for (const auto& t : core.traces) v.emplace_back(t);
  return v;
}

std::string pretty_printed_signatures(const FunctionCore& core) {
  std::shared_lock lock(core.mu);
  std::string s;
  for (const auto& t : core.traces) {
    if (!s.empty()) s += "\n";
    s += t->pretty_signature();
  }
  return s;
}

std::vector<std::string> trace_log(const FunctionCore& core) {
  std::shared_lock lock(core.mu);
  return core.log;
}

void clear_cache(FunctionCore& core) {
  std::lock_guard trace_lock(core.trace_mu);
  std::unique_lock lock(core.mu);
  core.cache.clear();
  core.traces.clear();
}

}  // namespace detail
}  // namespace kiln
