// The non-template half of kiln::Function: the call cache (call keys -> concrete functions,
// bounded), tracing on a miss (reduce_retracing, input signatures, one trace per key, no lock
// held while user code runs) and retrace diagnostics.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <exception>
#include <list>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "core/read_epoch.h"
#include "core/read_mostly_mutex.h"
#include "ops/op_list.h"
#include "optimize/pass.h"
#include "trace/call_cache.h"
#include "trace/concrete.h"
#include "trace/dispatch.h"
#include "trace/function_config.h"
#include "trace/op_observer.h"
#include "trace/trace_context.h"

namespace kiln {

namespace detail {

void KeyBuilder::spill(uint64_t w) {
  if (n_ == kInlineWords) heap_.assign(inline_, inline_ + kInlineWords);
  heap_.push_back(w);
}

void key_tensor(KeyBuilder& k, const Tensor& t) {
  const ops::TensorImpl* impl = t.impl();
  if (!impl) throw InvalidArgumentError("kiln::function was called with an empty Tensor");
  k.word(kKeyTensor | static_cast<uint64_t>(impl->dtype) << 8 | static_cast<uint64_t>(impl->dims.size()) << 16);
  for (int64_t d : impl->dims) k.word(static_cast<uint64_t>(d));
}

void key_spec(KeyBuilder& k, const TensorSpec& s) {
  const int rank = s.shape.rank();
  k.word(kKeySpec | static_cast<uint64_t>(s.dtype) << 8 | static_cast<uint64_t>(rank + 1) << 16);
  if (rank >= 0)
    for (int64_t d : s.shape.dims()) k.word(static_cast<uint64_t>(d));
}

void key_string(KeyBuilder& k, std::string_view s) {
  k.word(kKeyString);
  k.word(s.size());
  for (size_t i = 0; i < s.size(); i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, std::min<size_t>(8, s.size() - i));
    k.word(w);
  }
}

namespace {
// Equal names aside: same kinds, dtypes, shapes and values.
bool same_entries(const std::vector<ArgEntry>& x, const std::vector<ArgEntry>& y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    const ArgEntry& a = x[i];
    const ArgEntry& b = y[i];
    if (a.kind != b.kind) return false;
    if (a.kind == ArgEntry::kTensor && (a.dtype != b.dtype || a.shape != b.shape)) return false;
    if (a.kind == ArgEntry::kValue && (a.value != b.value || a.value_type != b.value_type)) return false;
    if (a.kind == ArgEntry::kTensorList && a.list_size != b.list_size) return false;
  }
  return true;
}
}  // namespace

bool CallSignature::operator==(const CallSignature& o) const { return same_entries(entries, o.entries); }

namespace {
// A trace in progress for one call key: calls with the same key wait for it.
struct PendingTrace {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::shared_ptr<ConcreteImpl> cf;
  std::exception_ptr error;
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
  // The closest trace: the fewest arguments that differ (the latest among equals). Its first
  // difference is the reason; the latest trace alone may differ in an argument that did not.
  auto distance = [&](const std::vector<ArgEntry>& t) {
    size_t d = t.size() > call.size() ? t.size() - call.size() : call.size() - t.size();
    for (size_t i = 0; i < std::min(call.size(), t.size()); ++i) {
      const ArgEntry& a = call[i];
      const ArgEntry& b = t[i];
      d += a.kind != b.kind || a.value != b.value || a.value_type != b.value_type || a.dtype != b.dtype ||
           a.shape != b.shape || a.list_size != b.list_size;
    }
    return d;
  };
  const std::vector<ArgEntry>* closest = &cached.back();
  for (auto it = cached.rbegin(); it != cached.rend(); ++it)
    if (distance(*it) < distance(*closest)) closest = &*it;
  const std::vector<ArgEntry>& last = *closest;
  for (size_t i = 0; i < std::min(call.size(), last.size()); ++i) {
    const ArgEntry& a = call[i];
    const ArgEntry& b = last[i];
    if (a.kind != b.kind) return "argument " + a.name + ": a tensor in one call and a value in another";
    if (a.kind == ArgEntry::kValue && (a.value != b.value || a.value_type != b.value_type)) {
      std::string seen;
      std::vector<std::string> values;
      for (const auto& c : cached)
        if (i < c.size() && c[i].kind == ArgEntry::kValue &&
            std::find(values.begin(), values.end(), c[i].value) == values.end())
          values.push_back(c[i].value);
      for (const auto& v : values) seen += (seen.empty() ? "" : ", ") + v;
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
  // Writers' lock over the cache, the pending map and the trace list (cached calls read the
  // cache without it); never held while user code runs (tracing), so a traced body may call
  // clear_cache() or other Functions, and different signatures trace concurrently.
  mutable ReadMostlyMutex mu;
  CallCache cache;  // call key -> trace
  std::unordered_map<StoredKey, std::shared_ptr<PendingTrace>, KeyHash, KeyEqual> pending;
  std::list<std::shared_ptr<ConcreteImpl>> traces;  // trace order (what concrete_functions lists)
  std::vector<std::string> log;
  std::atomic<int> trace_count{0};
  std::atomic<bool> first_trace_started{false};  // variables may be created by the first trace only
  std::atomic<uint32_t> history{0};              // last 10 calls, bit set when the call traced
  std::atomic<uint32_t> calls{0};
  std::atomic<bool> warned{false};

  // The retracing warning's window. Concurrent calls may lose an update of these counters:
  // a heuristic does not need a locked instruction on every cached call.
  void note_call(bool traced, const std::string& reason) {
    const uint32_t h = ((history.load(std::memory_order_relaxed) << 1) | (traced ? 1u : 0u)) & 0x3FFu;
    history.store(h, std::memory_order_relaxed);
    const uint32_t n = calls.load(std::memory_order_relaxed) + 1;
    calls.store(n, std::memory_order_relaxed);
    if (options.retracing_warning && n >= 10 && __builtin_popcount(h) >= 5 && !warned.exchange(true)) {
      std::string msg =
          "WARNING: " + std::to_string(__builtin_popcount(h)) + " out of the last 10 calls to " + name +
          " triggered kiln::function retracing. Tracing is expensive and the excessive number of tracings "
          "could be due to (1) passing C++ values that change on every call (each distinct value is a "
          "new trace), (2) passing tensors with different shapes (consider input_signature or "
          "reduce_retracing). Latest reason: " +
          reason + "\n";
      std::fputs(msg.c_str(), stderr);
    }
  }

  // mu held exclusively. Keeps the key map within max_cached_calls.
  void bound_cache() { cache.bound(std::max<size_t>(options.max_cached_calls, 1)); }

  // mu held exclusively: drops the oldest traces beyond max_traces, and their keys.
  void bound_traces() {
    while (traces.size() > std::max<size_t>(options.max_traces, 1)) {
      auto oldest = traces.front();
      traces.pop_front();
      cache.erase_for(oldest.get());
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
      ctx.allow_variable_creation = !first_trace_started.exchange(true);  // first trace only
      for (const ArgEntry& e : sig.entries) {
        if (e.kind != ArgEntry::kTensor) continue;
        graph::Node* ph = g.add_placeholder(e.dtype, e.shape, e.name, e.name);
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
    const OptimizerOptions opts = options.optimizer ? *options.optimizer : detail::default_optimizer_options();
    cf->compile(opts);
    return cf;
  }

  // A trace serving `sig`, or null: the same signature traced before (input_signature makes
  // every fitting call one signature), or with reduce_retracing one that fits it. mu held.
  std::shared_ptr<ConcreteImpl> existing_trace(const CallSignature& sig) const {
    for (const auto& t : traces)
      if (same_entries(t->signature, sig.entries) || (options.reduce_retracing && fits(t->signature, sig.entries)))
        return t;
    return nullptr;
  }

  // With reduce_retracing, the signature to trace: shapes relaxed against the latest trace of
  // the same structure (TensorFlow's most specific common shape). mu held.
  CallSignature relaxed(const CallSignature& sig) const {
    CallSignature out = sig;
    if (!options.reduce_retracing) return out;
    for (auto it = traces.rbegin(); it != traces.rend(); ++it) {
      if (!same_structure((*it)->signature, sig.entries)) continue;
      for (size_t i = 0; i < sig.entries.size(); ++i)
        if (sig.entries[i].kind == ArgEntry::kTensor)
          out.entries[i].shape = (*it)->signature[i].shape.most_specific_common(sig.entries[i].shape);
      break;
    }
    return out;
  }

  // The miss path for one call key, with the key's PendingTrace claimed by this thread.
  std::shared_ptr<ConcreteImpl> resolve(const KeyBuilder& key, const SignatureBuilder& signature,
                                        const TraceBody& body) {
    const CallSignature sig = signature();  // applies input_signature (may throw)
    std::shared_ptr<ConcreteImpl> cf;
    CallSignature to_trace;
    std::string reason;
    {
      std::unique_lock lock(mu);
      if ((cf = existing_trace(sig))) {
        cache.insert(key, cf);
        bound_cache();
        return cf;
      }
      to_trace = relaxed(sig);
      std::vector<std::vector<ArgEntry>> cached;
      for (const auto& t : traces) cached.push_back(t->signature);
      reason = retrace_reason(sig.entries, cached);
    }
    cf = trace(to_trace, body);  // user code: no lock held
    {
      std::unique_lock lock(mu);
      cache.insert(key, cf);
      traces.push_back(cf);
      log.push_back(reason);
      bound_traces();
      bound_cache();
    }
    trace_count.fetch_add(1);
    note_call(true, reason);
    return cf;
  }
};

std::shared_ptr<FunctionCore> make_function_core(FunctionOptions options, std::string default_name) {
  return std::make_shared<FunctionCore>(std::move(options), std::move(default_name));
}

const FunctionOptions& options_of(const FunctionCore& core) { return core.options; }

bool tracing_active() { return trace::current_trace() != nullptr; }
uint64_t trace_serial() {
  const trace::TraceContext* t = trace::current_trace();
  return t ? t->serial() : 0;
}
bool call_directly_now() {
  return trace::current_trace() != nullptr || detail::functions_run_eagerly() ||
         (trace::observers_active() && trace::recording_here());
}
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
                                 ", which does not fit TensorSpec(shape=" + spec.shape.str() +
                                 ", dtype=" + std::string(dtype_name(spec.dtype)) + ")");
    e.shape = spec.shape;
    if (!spec.name.empty()) e.name = spec.name;
    ++k;
  }
  if (k != specs.size())
    throw InvalidArgumentError(core.name + " has an input_signature of " + std::to_string(specs.size()) +
                               " specs but was called with " + std::to_string(k) + " tensor arguments");
}

namespace {
// With an empty window and 10 calls counted, a cached call changes nothing the warning reads.
void note_cached_call(FunctionCore& core) {
  if (core.history.load(std::memory_order_relaxed) != 0 || core.calls.load(std::memory_order_relaxed) < 10)
    core.note_call(false, "");
}
}  // namespace

std::shared_ptr<ConcreteImpl> cached_concrete(FunctionCore& core, const KeyBuilder& key) {
  std::shared_ptr<ConcreteImpl> cf;
  {
    std::shared_lock lock(core.mu);
    cf = core.cache.get(view(key));
  }
  if (cf) note_cached_call(core);
  return cf;
}

bool call_cached(FunctionCore& core, const KeyBuilder& key, const ArgTensors& tensors, std::vector<Tensor>* out) {
  // No lock and no reference count: the section keeps what the lookup finds alive.
  ReadSection section;
  const ConcreteImpl* cf = core.cache.find(view(key));
  if (!cf) return false;
  note_cached_call(core);
  *out = cf->call(tensors.data(), tensors.size());
  return true;
}

std::shared_ptr<ConcreteImpl> concrete_for(FunctionCore& core, const KeyBuilder& key, const SignatureBuilder& signature,
                                           const TraceBody& body) {
  std::shared_ptr<PendingTrace> pending;
  bool mine = false;
  {
    std::unique_lock lock(core.mu);
    if (auto hit = core.cache.get(view(key))) return hit;  // traced meanwhile
    auto it = core.pending.find(view(key));
    if (it == core.pending.end()) {
      it = core.pending.emplace(stored(key), std::make_shared<PendingTrace>()).first;
      mine = true;
    }
    pending = it->second;
  }
  if (!mine) {  // the same call key is being traced by another thread: exactly one trace
    std::unique_lock wait(pending->mu);
    pending->cv.wait(wait, [&] { return pending->done; });
    if (pending->error) std::rethrow_exception(pending->error);
    return pending->cf;
  }
  auto finish = [&](std::shared_ptr<ConcreteImpl> cf, std::exception_ptr error) {
    {
      std::unique_lock lock(core.mu);
      auto it = core.pending.find(view(key));  // heterogeneous erase is C++23
      if (it != core.pending.end()) core.pending.erase(it);
    }
    std::lock_guard done(pending->mu);
    pending->cf = std::move(cf);
    pending->error = error;
    pending->done = true;
    pending->cv.notify_all();
  };
  try {
    auto cf = core.resolve(key, signature, body);
    finish(cf, nullptr);
    return cf;
  } catch (...) {
    finish(nullptr, std::current_exception());
    throw;
  }
}

std::vector<Tensor> call_concrete(const ConcreteImpl& cf, const ArgTensors& tensors) {
  return cf.call(tensors.data(), tensors.size());
}

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
  std::unique_lock lock(core.mu);
  core.cache.clear();  // frees now, or once calls running on other threads have returned
  core.traces.clear();
}

}  // namespace detail
}  // namespace kiln
