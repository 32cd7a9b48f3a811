// Identities that change only what flows back: StopGradient (nothing), PreventGradient (an
// error), and IdentityN (a list of tensors passed through together). Forward, each output is
// its input unchanged, shared rather than copied. Traced graphs keep them (a tape or a
// gradient built later reads them); the optimizer's copy, which only runs, reads their inputs
// directly (kPassesThrough): Keras's swish, a custom gradient, ends in an IdentityN that would
// otherwise keep its input from fusing into the convolution before it.
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kPreventMessage = attr_index(op::PreventGradient(), "message");

// Output i shares input i's data.
void run_forward_all(KernelContext& c) {
  for (int i = 0; i < c.num_inputs; ++i) c.outputs[i] = detail::make_alias(c.inputs[i], c.inputs[i]->dims);
}

void infer_identity_n(InferContext& c) {
  c.set_num_outputs(c.num_inputs);
  for (int i = 0; i < c.num_inputs; ++i) {
    c.out(i).dtype = c.in(i).dtype;
    c.out(i).shape = shape_of(c.in(i));
  }
  c.kernel_dtype = c.num_inputs ? c.in(0).dtype : DType::Float32;
}

// TensorFlow raises LookupError("Gradient explicitly disabled. Reason: ...").
void prevent_gradient_grad(GradContext& c) {
  throw InvalidArgumentError("Gradient explicitly disabled. Reason: " + c.attrs.s(kPreventMessage));
}
void identity_n_grad(GradContext& c) {
  for (size_t i = 0; i < c.dx.size(); ++i) c.dx[i] = c.dy[i];
}

}  // namespace

const OpDef& op::StopGradient() {
  static const OpDef def = {.name = "StopGradient",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kOwnOutputs | kPassesThrough | kTfjs,
                            .infer = infer_unary,
                            .any_dtype_kernel = &run_forward_all,
                            .grad = &no_gradient};
  return def;
}

const OpDef& op::PreventGradient() {
  static const OpDef def = {.name = "PreventGradient",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kOwnOutputs | kPassesThrough,
                            .attr_specs = {string_attr("message", "")},
                            .infer = infer_unary,
                            .any_dtype_kernel = &run_forward_all,
                            .grad = &prevent_gradient_grad};
  return def;
}

const OpDef& op::IdentityN() {
  static const OpDef def = {.name = "IdentityN",
                            .num_inputs = -1,
                            .num_outputs = -1,
                            .input_args = {list_arg("input")},
                            .traits = kOwnOutputs | kPassesThrough | kTfjs,
                            .infer = infer_identity_n,
                            .any_dtype_kernel = &run_forward_all,
                            .type_attr = nullptr,
                            .type_list_attr = "T",
                            .grad = &identity_n_grad};
  return def;
}

}  // namespace kiln::ops
