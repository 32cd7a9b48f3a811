// kiln::Variable, assert_that, dropout.
#include "kiln/variable.h"

#include <atomic>
#include <string>

#include "api/api_util.h"
#include "api/variable_handle.h"
#include "kiln/control_flow.h"
#include "trace/constant_eval.h"
#include "trace/op_observer.h"
#include "trace/trace_context.h"

namespace kiln {

namespace {
std::atomic<int> g_variable_count{0};

std::string default_name() {
  const int n = g_variable_count.fetch_add(1);
  return n == 0 ? "Variable" : "Variable_" + std::to_string(n);
}

ops::Attrs var_attrs(const ops::VariableState& s, const std::shared_ptr<ops::VariableState>& p) {
  return ops::Attrs{s.dtype(), ops::ResourceRef{p}};
}
}  // namespace

Variable::Variable(Tensor initial_value, std::string name) {
  if (!initial_value.defined()) throw InvalidArgumentError("Variable: the initial value is an empty Tensor");
  if (name.empty()) name = default_name();
  handle_ = std::make_shared<detail::VariableHandle>();
  trace::TraceContext* ctx = trace::current_trace();
  if (!ctx) {
    handle_->state = std::make_shared<ops::VariableState>(initial_value, std::move(name));
    return;
  }
  if (!ctx->allow_variable_creation)
    throw FailedPreconditionError(
        "kiln::function only supports singleton kiln::Variables created on the first call. Make sure the "
        "Variable is only created once or created outside the function (this trace is not the first).");
  bool from_inputs = false;
  if (initial_value.is_symbolic()) {
    try {
      initial_value = trace::evaluate_lifted(initial_value);
    } catch (const FailedPreconditionError&) {
      from_inputs = true;  // depends on the function's inputs: runs in the graph
    }
  }
  if (!from_inputs) {
    handle_->state = std::make_shared<ops::VariableState>(initial_value, std::move(name));
    ctx->resources.push_back(handle_->state);
    return;
  }
  // As TensorFlow lifts such an initializer: the variable starts without a value, and the
  // function initializes it, in program order, on its first call only (with that call's
  // inputs): if (!VarIsInitializedOp(v)) AssignVariableOp(v, initial_value).
  const TensorShape shape = initial_value.shape();
  if (!shape.is_fully_defined())
    throw InvalidArgumentError("Variable " + name + ": an initial value computed from the function's inputs needs a " +
                               "static shape, got " + shape.str());
  auto state = std::make_shared<ops::VariableState>(initial_value.dtype(), shape, std::move(name));
  handle_->state = state;
  ctx->resources.push_back(state);
  const Tensor initialized =
      trace::dispatch1(ops::op::VarIsInitializedOp(), {}, ops::Attrs{ops::ResourceRef{state}}, "VarIsInitializedOp");
  detail::build_cond(
      initialized, [] { return std::vector<Tensor>{}; },
      [&] {
        trace::dispatch(ops::op::AssignVariableOp(), std::vector<const Tensor*>{&initial_value}.data(), 1,
                        var_attrs(*state, state), "AssignVariableOp");
        return std::vector<Tensor>{};
      });
}

Tensor Variable::read() const {
  // Eagerly a read is the value itself, unless a GradientTape wants to see it as an op.
  if (!trace::current_trace() && !trace::observers_active()) return handle_->state->read();
  return trace::dispatch1(ops::op::ReadVariableOp(), {}, var_attrs(*handle_->state, handle_->state), "ReadVariableOp");
}

Tensor Variable::read_for_dtype() const { return handle_->state->read(); }

const void* Variable::identity() const { return handle_->state.get(); }
std::shared_ptr<Resource> Variable::resource() const { return handle_->state; }

namespace {
void write(const std::shared_ptr<detail::VariableHandle>& h, const ops::OpDef& op, const Tensor& v) {
  if (!v.defined()) throw InvalidArgumentError(std::string("Empty Tensor [Op:") + op.name + "]");
  trace::dispatch(op, std::vector<const Tensor*>{&v}.data(), 1, var_attrs(*h->state, h->state), op.name);
}
}  // namespace

void Variable::assign(const Tensor& value) { write(handle_, ops::op::AssignVariableOp(), value); }
void Variable::assign_add(const Tensor& delta) { write(handle_, ops::op::AssignAddVariableOp(), delta); }
void Variable::assign_sub(const Tensor& delta) { write(handle_, ops::op::AssignSubVariableOp(), delta); }
DType Variable::dtype() const { return handle_->state->dtype(); }
TensorShape Variable::shape() const { return handle_->state->shape(); }
std::string Variable::name() const { return handle_->state->resource_name(); }
bool Variable::trainable() const { return handle_->state->trainable; }
void Variable::set_trainable(bool trainable) { handle_->state->trainable = trainable; }

void assert_that(const Tensor& cond, std::string message) {
  if (!cond.defined()) throw InvalidArgumentError("assert_that: empty condition");
  trace::dispatch(ops::op::KilnAssert(), std::vector<const Tensor*>{&cond}.data(), 1, ops::Attrs{std::move(message)},
                  "Assert");
}

Tensor dropout(const Tensor& x, double rate, std::optional<uint64_t> seed) {
  if (!(rate >= 0 && rate < 1))
    throw InvalidArgumentError("dropout: rate must be in [0, 1), got " + std::to_string(rate));
  if (!is_floating(x.dtype())) throw InvalidArgumentError("dropout: x must be a floating tensor");
  if (rate == 0) return identity(x);
  Tensor shape = shape_of(x);
  Tensor u;
  if (seed) {
    const Tensor pair = api::int_list({static_cast<int64_t>(*seed), 0}, "dropout/seed");
    u = trace::dispatch1(ops::op::StatelessRandomUniform(), {&shape, &pair}, ops::Attrs{x.dtype()}, "random_uniform");
  } else {
    u = trace::dispatch1(ops::op::RandomUniform(), {&shape}, ops::Attrs{x.dtype(), int64_t{0}, int64_t{0}},
                         "random_uniform");
  }
  Tensor keep = greater_equal(u, rate);
  return where(keep, x * (1.0 / (1.0 - rate)), zeros_like(x));
}

}  // namespace kiln
