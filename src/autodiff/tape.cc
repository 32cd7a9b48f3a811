#include "autodiff/tape.h"

#include <algorithm>
#include <string>

#include "autodiff/builder.h"
#include "ops/grad_util.h"
#include "ops/op_list.h"
#include "trace/dispatch.h"
#include "trace/trace_context.h"

namespace kiln::autodiff {

TensorKey key_of(const Tensor& t) {
  const detail::TensorImpl* i = t.impl();
  if (i->symbolic) return TensorKey{i->node, i->index};
  return TensorKey{i, -1};
}

uint64_t Tape::serial_of(const trace::TraceContext* ctx) { return ctx ? ctx->serial() : 0; }

Tape::Tape(bool persistent, bool watch_accessed_variables)
    : persistent_(persistent),
      context_(serial_of(trace::current_trace())),
      watch_accessed_variables_(watch_accessed_variables) {
  trace::add_observer(this);
}
Tape::~Tape() { trace::remove_observer(this); }

void Tape::watch(const Tensor& t) {
  if (!t.defined()) throw InvalidArgumentError("GradientTape.watch: an empty Tensor");
  watched_.push_back(t);
  tracked_.insert(key_of(t));
}

bool Tape::is_watched(const Resource* variable) const {
  return std::any_of(watched_variables_.begin(), watched_variables_.end(),
                     [&](const std::shared_ptr<Resource>& w) { return w.get() == variable; });
}

void Tape::note_watched(const std::shared_ptr<Resource>& variable) {
  if (!is_watched(variable.get())) watched_variables_.push_back(variable);
}

void Tape::watch_variable(std::shared_ptr<Resource> variable) {
  if (!variable) throw InvalidArgumentError("GradientTape.watch: a null variable");
  note_watched(variable);
}

void Tape::reset() {
  used_ = false;
  entries_.clear();
  tracked_.clear();
  variable_reads_.clear();
  watched_.clear();
  watched_variables_.clear();
}

void Tape::on_op(const ops::OpDef& op, const Tensor* const* in, int n, const ops::Attrs& attrs,
                 const std::vector<Tensor>& out) {
  if (out.empty()) return;  // assignments, prints: nothing to differentiate
  bool reads_variable = op.has(ops::kReadsVariable);
  if (reads_variable) {
    const auto& variable = std::get<ops::ResourceRef>(attrs[ops::kReadsVariableAttr]).resource;
    reads_variable = (watch_accessed_variables_ && variable->trainable) || is_watched(variable.get());
    if (reads_variable) note_watched(variable);
  }
  if (!reads_variable && !connected(in, n)) return;
  Entry e{&op, attrs, {}, out, nullptr};
  e.inputs.reserve(n);
  for (int i = 0; i < n; ++i) e.inputs.push_back(*in[i]);
  for (const Tensor& t : out) tracked_.insert(key_of(t));
  if (reads_variable) variable_reads_.emplace(attrs.resource(ops::kReadsVariableAttr), key_of(out[0]));
  entries_.push_back(std::move(e));
}

bool Tape::connected(const Tensor* const* in, int n) const {
  for (int i = 0; i < n; ++i)
    if (tracked_.count(key_of(*in[i]))) return true;
  return false;
}

void Tape::on_custom_gradient(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                              const trace::CustomGradientFn& grad) {
  std::vector<const Tensor*> in;
  for (const Tensor& t : inputs) in.push_back(&t);
  if (outputs.empty() || !connected(in.data(), static_cast<int>(in.size()))) return;
  for (const Tensor& t : outputs) tracked_.insert(key_of(t));
  entries_.push_back(Entry{nullptr, {}, inputs, outputs, grad});
}

namespace {
struct Pause {  // restores the flag as it was: a tape stopped by its owner stays stopped
  bool& flag;
  bool was;
  explicit Pause(bool& f) : flag(f), was(f) { flag = true; }
  ~Pause() { flag = was; }
};
}  // namespace

// The caller's gradient of a custom step: zeros for outputs nothing flowed to, and exactly one
// gradient (or none) per input back.
std::vector<Tensor> Tape::custom_step(ops::GradBuilder& b, const Entry& e, std::vector<Tensor> dy) {
  for (size_t j = 0; j < dy.size(); ++j)
    if (!dy[j].defined()) dy[j] = ops::grad::emit1(b, ops::op::ZerosLike(), {&e.outputs[j]});
  std::vector<Tensor> dx = e.custom(dy);
  if (dx.size() != e.inputs.size())
    throw InvalidArgumentError("custom_gradient function expected to return " + std::to_string(e.inputs.size()) +
                               " gradients, but returned " + std::to_string(dx.size()) + " instead.");
  return dx;
}

std::vector<Tensor> Tape::gradient(const std::vector<Tensor>& targets, const std::vector<Tensor>& output_gradients,
                                   const std::vector<Source>& sources) {
  if (used_)
    throw FailedPreconditionError(
        "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)");
  if (serial_of(trace::current_trace()) != context_)
    throw InvalidArgumentError(
        "GradientTape.gradient must be called where the tape was created: both eagerly, or both inside the same "
        "traced function");
  Pause pause(paused_);
  Builder b;

  // Which tensors depend on a source: only those carry gradients back.
  std::unordered_set<TensorKey, TensorKeyHash> depends;
  for (const Source& s : sources) {
    if (s.variable) {
      auto range = variable_reads_.equal_range(s.variable);
      for (auto it = range.first; it != range.second; ++it) depends.insert(it->second);
    } else {
      depends.insert(key_of(s.tensor));
    }
  }
  std::vector<bool> relevant(entries_.size(), false);
  for (size_t k = 0; k < entries_.size(); ++k) {
    for (const Tensor& t : entries_[k].inputs)
      if (depends.count(key_of(t))) relevant[k] = true;
    if (relevant[k])
      for (const Tensor& t : entries_[k].outputs) depends.insert(key_of(t));
  }

  std::unordered_map<TensorKey, Tensor, TensorKeyHash> grads;
  auto accumulate = [&](const TensorKey& k, const Tensor& g) {
    auto it = grads.find(k);
    if (it == grads.end())
      grads.emplace(k, g);
    else
      it->second = ops::grad::add(b, it->second, g);
  };
  for (size_t i = 0; i < targets.size(); ++i) {
    const Tensor& t = targets[i];
    if (!t.defined()) throw InvalidArgumentError("GradientTape.gradient: the target is an empty Tensor");
    if (!is_floating(t.dtype()) || !depends.count(key_of(t))) continue;
    const Tensor& og = i < output_gradients.size() ? output_gradients[i] : Tensor();
    // A non-scalar target is summed, as TensorFlow does: its seed is ones.
    accumulate(key_of(t), og.defined() ? og : ops::grad::emit1(b, ops::op::OnesLike(), {&t}));
  }

  for (size_t k = entries_.size(); k-- > 0;) {
    if (!relevant[k]) continue;
    const Entry& e = entries_[k];
    std::vector<Tensor> dy(e.outputs.size());
    bool any = false;
    for (size_t j = 0; j < e.outputs.size(); ++j) {
      auto it = grads.find(key_of(e.outputs[j]));
      if (it != grads.end()) {
        dy[j] = it->second;
        any = true;
      }
    }
    if (!any) continue;
    std::vector<bool> needs(e.inputs.size());
    bool wanted = false;
    for (size_t j = 0; j < e.inputs.size(); ++j) {
      needs[j] = is_floating(e.inputs[j].dtype()) && depends.count(key_of(e.inputs[j])) != 0;
      wanted = wanted || needs[j];
    }
    if (!wanted) continue;
    std::vector<Tensor> dx;
    if (e.custom) {
      dx = custom_step(b, e, std::move(dy));
    } else {
      if (!e.op->grad)
        // TensorFlow's words; its Python raises them as LookupError (kiln's binding does too).
        throw NotFoundError(std::string("gradient registry has no entry for: ") + e.op->name);
      ops::GradContext c{b, *e.op, e.attrs, e.inputs, e.outputs, dy, needs, std::vector<Tensor>(e.inputs.size())};
      e.op->grad(c);
      dx = std::move(c.dx);
    }
    for (size_t j = 0; j < e.inputs.size(); ++j)
      if (needs[j] && dx[j].defined()) accumulate(key_of(e.inputs[j]), dx[j]);
  }

  std::vector<Tensor> result;
  for (const Source& s : sources) {
    Tensor g;
    if (s.variable) {
      std::unordered_set<TensorKey, TensorKeyHash> seen;  // a read counted once
      auto range = variable_reads_.equal_range(s.variable);
      for (auto it = range.first; it != range.second; ++it) {
        auto git = grads.find(it->second);
        if (git != grads.end() && seen.insert(it->second).second)
          g = g.defined() ? ops::grad::add(b, g, git->second) : git->second;
      }
    } else {
      auto it = grads.find(key_of(s.tensor));
      if (it != grads.end()) g = it->second;
    }
    result.push_back(g);
  }
  if (!persistent_) {
    used_ = true;
    entries_.clear();
    tracked_.clear();
    variable_reads_.clear();
    watched_.clear();
    watched_variables_.clear();
  }
  return result;
}

}  // namespace kiln::autodiff
