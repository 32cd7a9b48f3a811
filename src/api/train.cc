// The training kit: initializers, Dense, and the SGD and Adam optimizers. The optimizers
// update each variable with TensorFlow's fused training op (ResourceApplyKerasMomentum,
// ResourceApplyAdam, ...), as Keras does: one in-place pass over the weights per step.
#include "kiln/train.h"

#include <cmath>

#include "api/api_util.h"
#include "api/variable_handle.h"

namespace kiln {

namespace {
ops::ResourceRef resource(const Variable& v) { return ops::ResourceRef{v.handle()->state}; }

// A hyperparameter as a scalar of the variable's dtype (a Const when tracing).
Tensor hyper(double value, const Variable& v, const char* name) {
  return trace::as_graph_constant(api::host_scalar(value, v.dtype(), name), name);
}

void apply(const ops::OpDef& op, const std::vector<Tensor>& inputs, ops::Attrs attrs) {
  trace::dispatch_list(op, inputs, std::move(attrs), op.name);
}

void check_pairs(const char* who, const std::vector<Tensor>& grads, const std::vector<Variable*>& vars) {
  if (grads.size() != vars.size())
    throw InvalidArgumentError(std::string(who) + ".apply_gradients: " + std::to_string(grads.size()) +
                               " gradients for " + std::to_string(vars.size()) + " variables");
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!vars[i])
      throw InvalidArgumentError(std::string(who) + ".apply_gradients: variable " + std::to_string(i) + " is null");
    if (!grads[i].defined())
      throw InvalidArgumentError(std::string(who) + ".apply_gradients: no gradient for variable " + vars[i]->name());
    if (grads[i].dtype() != vars[i]->dtype())
      throw InvalidArgumentError(std::string(who) + ".apply_gradients: gradient " + std::to_string(i) + " is " +
                                 std::string(dtype_name(grads[i].dtype())) + " but variable " + vars[i]->name() +
                                 " is " + std::string(dtype_name(vars[i]->dtype())));
  }
}
// Slot variables, one per variable, made once (the first call; the variable list must not change).
void make_slots(const char* who, std::vector<std::unique_ptr<Variable>>& slots, const std::vector<Variable*>& vars,
                const char* slot) {
  if (slots.empty()) {
    for (Variable* v : vars)
      slots.push_back(std::make_unique<Variable>(zeros(v->shape().dims(), v->dtype()), v->name() + "/" + slot));
  } else if (slots.size() != vars.size()) {
    throw InvalidArgumentError(std::string(who) + ".apply_gradients: called with " + std::to_string(vars.size()) +
                               " variables, but its slots were made for " + std::to_string(slots.size()));
  }
}
}  // namespace

Tensor glorot_uniform(std::vector<int64_t> shape, std::optional<uint64_t> seed, DType dtype) {
  if (shape.empty()) throw InvalidArgumentError("glorot_uniform: shape must have at least one dimension");
  double fan_in, fan_out;
  if (shape.size() == 1) {
    fan_in = fan_out = static_cast<double>(shape[0]);
  } else {
    double receptive = 1;
    for (size_t i = 0; i + 2 < shape.size(); ++i) receptive *= static_cast<double>(shape[i]);
    fan_in = static_cast<double>(shape[shape.size() - 2]) * receptive;
    fan_out = static_cast<double>(shape.back()) * receptive;
  }
  const double limit = std::sqrt(6.0 / std::max(1.0, fan_in + fan_out));
  return random_uniform(std::move(shape), -limit, limit, dtype, seed);
}

Dense::Dense(int64_t in_features, int64_t out_features, Activation activation, std::optional<uint64_t> seed,
             const std::string& name, DType dtype)
    : kernel(glorot_uniform({in_features, out_features}, seed, dtype), name + "/kernel"),
      bias(zeros({out_features}, dtype), name + "/bias"),
      activation_(std::move(activation)) {}

Tensor Dense::operator()(const Tensor& x) const {
  Tensor y = matmul(x, kernel.read()) + bias.read();
  return activation_ ? activation_(y) : y;
}

SGD::SGD(double learning_rate, double momentum, bool nesterov)
    : lr_(learning_rate), momentum_(momentum), nesterov_(nesterov) {
  if (!(momentum >= 0 && momentum <= 1)) throw InvalidArgumentError("SGD: momentum must be in [0, 1]");
}

void SGD::apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable*>& vars) {
  check_pairs("SGD", grads, vars);
  if (momentum_ == 0) {
    for (size_t i = 0; i < vars.size(); ++i)
      apply(ops::op::ResourceApplyGradientDescent(), {hyper(lr_, *vars[i], "learning_rate"), grads[i]},
            ops::Attrs{resource(*vars[i]), false});
    return;
  }
  make_slots("SGD", velocity_, vars, "momentum");
  for (size_t i = 0; i < vars.size(); ++i)
    apply(ops::op::ResourceApplyKerasMomentum(),
          {hyper(lr_, *vars[i], "learning_rate"), grads[i], hyper(momentum_, *vars[i], "momentum")},
          ops::Attrs{resource(*vars[i]), resource(*velocity_[i]), false, nesterov_});
}

Adam::Adam(double learning_rate, double beta_1, double beta_2, double epsilon)
    : lr_(learning_rate), beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon) {}

Tensor Adam::iterations() const { return iterations_ ? iterations_->read() : constant(int64_t{0}); }

void Adam::apply_gradients(const std::vector<Tensor>& grads, const std::vector<Variable*>& vars) {
  check_pairs("Adam", grads, vars);
  make_slots("Adam", m_, vars, "m");
  make_slots("Adam", v_, vars, "v");
  if (!iterations_) iterations_ = std::make_unique<Variable>(constant(int64_t{0}), "Adam/iterations");
  iterations_->assign_add(int64_t{1});
  const Tensor step = iterations_->read();
  for (size_t i = 0; i < vars.size(); ++i) {
    const Variable& w = *vars[i];
    const Tensor t = cast(step, w.dtype());
    apply(ops::op::ResourceApplyAdam(),
          {pow(beta_1_, t), pow(beta_2_, t), hyper(lr_, w, "learning_rate"), hyper(beta_1_, w, "beta_1"),
           hyper(beta_2_, w, "beta_2"), hyper(epsilon_, w, "epsilon"), grads[i]},
          ops::Attrs{resource(w), resource(*m_[i]), resource(*v_[i]), false, false});
  }
}

}  // namespace kiln
