// KilnPrint: kiln::print as a runtime op (TensorFlow's tf.print lowers to StringFormat +
// PrintV2 over string tensors, which kiln does not have). attrs: template (byte 0x01 marks
// each tensor input; other text was fixed at trace time), summarize. One line to stderr.
// NoOp: nothing; a target for control dependencies.
#include <cstdio>
#include <string>

#include "core/format.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

void infer_print(InferContext& c) {
  c.set_num_outputs(0);
  c.kernel_dtype = DType::Bool;  // one kernel handles every input dtype
}
template <class T> struct PrintKernel {
  static void run(KernelContext& c) {
    const std::string& tmpl = c.attrs.s(0);
    const int summarize = static_cast<int>(c.attrs.i(1));
    std::string line;
    int next = 0;
    for (size_t i = 0; i < tmpl.size(); ++i) {
      if (tmpl[i] == '\x01' && next < c.num_inputs) {
        line += detail::format_values_tf_print(c.in(next++), summarize);
      } else {
        line += tmpl[i];
      }
    }
    line += "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }
};

void infer_noop(InferContext& c) {
  c.set_num_outputs(0);
  c.kernel_dtype = DType::Bool;
}
template <class T> struct NoOpKernel {
  static void run(KernelContext&) {}
};

}  // namespace

const OpDef& op::KilnPrint() {
  static const OpDef def{"KilnPrint", -1, 0, kSideEffect, {"template", "summarize"}, infer_print,
                         kernels_for<PrintKernel, bool>(), nullptr};
  return def;
}
const OpDef& op::NoOp() {
  static const OpDef def{"NoOp", 0, 0, kPure, {}, infer_noop, kernels_for<NoOpKernel, bool>(), nullptr};
  return def;
}

}  // namespace kiln::ops
