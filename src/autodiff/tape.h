// A gradient tape: records the ops dispatched (eagerly, or into the graph being traced) whose
// inputs depend on watched tensors or variables, then walks them backwards calling each
// op's own gradient function. Its gradient ops go through dispatch() too, so an eager tape
// computes values now, a tape inside a trace adds gradient nodes to the same graph, and an
// outer tape records an inner tape's gradient ops (higher-order gradients).
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/resource.h"
#include "ops/gradient.h"
#include "trace/op_observer.h"

namespace kiln::autodiff {

// A tensor's identity on the tape: its impl when concrete, its node output when symbolic.
struct TensorKey {
  const void* p = nullptr;
  int index = 0;
  bool operator==(const TensorKey& o) const { return p == o.p && index == o.index; }
};
struct TensorKeyHash {
  size_t operator()(const TensorKey& k) const {
    return std::hash<const void*>()(k.p) * 31 + static_cast<size_t>(k.index);
  }
};
TensorKey key_of(const Tensor& t);

// What to differentiate with respect to: a tensor, or every read of a variable.
struct Source {
  Tensor tensor;
  const Resource* variable = nullptr;
};

class Tape final : public trace::OpObserver {
 public:
  // watch_accessed_variables false: only variables given to watch_variable are recorded.
  explicit Tape(bool persistent, bool watch_accessed_variables = true);
  ~Tape() override;
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  void watch(const Tensor& t);
  void watch_variable(std::shared_ptr<Resource> variable);
  // Recording off (tf.GradientTape.stop_recording) and on again.
  void set_paused(bool paused) { paused_ = paused; }
  // Forgets what was recorded and watched; records on (tf.GradientTape.reset).
  void reset();
  // The variables watched so far (explicitly, or read while recording), first watch first.
  const std::vector<std::shared_ptr<Resource>>& watched_variables() const { return watched_variables_; }
  // d(sum of targets[i] * output_gradients[i]) / d(source) for each source; an undefined
  // output gradient means ones. A source nothing depends on gives an undefined tensor.
  std::vector<Tensor> gradient(const std::vector<Tensor>& targets, const std::vector<Tensor>& output_gradients,
                               const std::vector<Source>& sources);

  void on_op(const ops::OpDef& op, const Tensor* const* inputs, int num_inputs, const ops::Attrs& attrs,
             const std::vector<Tensor>& outputs) override;
  bool records_in(const trace::TraceContext* ctx) const override { return !paused_ && serial_of(ctx) == context_; }
  bool watches(const Tensor& t) const override { return tracked_.count(key_of(t)) != 0; }
  void on_custom_gradient(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                          const trace::CustomGradientFn& grad) override;

 private:
  struct Entry {
    const ops::OpDef* op;  // null for a custom gradient
    ops::Attrs attrs;
    std::vector<Tensor> inputs;
    std::vector<Tensor> outputs;
    trace::CustomGradientFn custom;
  };
  bool connected(const Tensor* const* inputs, int n) const;
  static std::vector<Tensor> custom_step(ops::GradBuilder& b, const Entry& e, std::vector<Tensor> dy);
  bool persistent_;
  bool used_ = false;
  bool paused_ = false;
  static uint64_t serial_of(const trace::TraceContext* ctx);  // 0: eager
  uint64_t context_;
  std::vector<Entry> entries_;
  std::vector<Tensor> watched_;  // keeps watched tensors (and so their keys) alive
  std::unordered_set<TensorKey, TensorKeyHash> tracked_;
  std::unordered_multimap<const Resource*, TensorKey> variable_reads_;
  bool watch_accessed_variables_;
  std::vector<std::shared_ptr<Resource>> watched_variables_;
  bool is_watched(const Resource* variable) const;
  void note_watched(const std::shared_ptr<Resource>& variable);
};

}  // namespace kiln::autodiff
