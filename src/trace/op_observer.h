// The hook through which the autodiff layer sees ops: dispatch() (and the control-flow
// builders, for the If/Case nodes they add) report each op with its inputs and outputs to
// the observers active on this thread. With none active, dispatch pays one branch.
#pragma once
#include <functional>
#include <vector>

#include "ops/op_def.h"

namespace kiln::trace {

class TraceContext;

// dy (one per output; zeros where nothing flowed) -> one gradient per input (empty: none).
using CustomGradientFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& dy)>;

class OpObserver {
 public:
  virtual ~OpObserver() = default;
  virtual void on_op(const ops::OpDef& op, const Tensor* const* inputs, int num_inputs, const ops::Attrs& attrs,
                     const std::vector<Tensor>& outputs) = 0;
  // Whether ops dispatched in `ctx` (null: eager) are recorded.
  virtual bool records_in(const TraceContext* ctx) const = 0;
  // Whether `t` is watched or computed from watched tensors (a gradient could flow to it).
  virtual bool watches(const Tensor& t) const = 0;
  // A step whose gradient the caller gives (tf.custom_gradient): `outputs` came from `inputs`.
  virtual void on_custom_gradient(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                                  const CustomGradientFn& grad) = 0;
};

// Observers are per thread, innermost last. A GradientTape adds itself while it is alive.
void add_observer(OpObserver* o);
void remove_observer(OpObserver* o);
bool observers_active();
// Whether some observer records ops dispatched in the current context.
bool recording_here();
// Whether some observer recording here watches one of `ts`.
bool watched_here(const std::vector<Tensor>& ts);
void notify_observers(const ops::OpDef& op, const Tensor* const* inputs, int num_inputs, const ops::Attrs& attrs,
                      const std::vector<Tensor>& outputs);
void notify_custom_gradient(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                            const CustomGradientFn& grad);

// While alive, the observers active on this thread see nothing (every tape stops recording,
// as TensorFlow's stop_recording around a custom gradient's forward); observers added
// meanwhile (a tape made inside) see ops as usual.
class SuspendObservers {
 public:
  SuspendObservers();
  ~SuspendObservers();
  SuspendObservers(const SuspendObservers&) = delete;
  SuspendObservers& operator=(const SuspendObservers&) = delete;

 private:
  std::vector<OpObserver*>* saved_;
};

}  // namespace kiln::trace
