// KilnPrint: kiln::print as a runtime op (TensorFlow's tf.print lowers to StringFormat +
// PrintV2 over string tensors, which kiln does not have). attrs: template (byte 0x01 marks
// each tensor input; other text was fixed at trace time), summarize, and PrintV2's
// output_stream ("stderr", "stdout", or "file://PATH", appended to) and end.
// NoOp: nothing; a target for control dependencies.
#include <cstdio>
#include <string>

#include "core/format.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kTemplate = attr_index(op::KilnPrint(), "template");
const int kSummarize = attr_index(op::KilnPrint(), "summarize");
const int kStream = attr_index(op::KilnPrint(), "output_stream");
const int kEnd = attr_index(op::KilnPrint(), "end");

void write_line(const KernelContext& c, const std::string& line) {
  const std::string& stream = c.attrs.s(kStream);
  if (stream == "stderr" || stream == "stdout") {
    std::FILE* f = stream == "stderr" ? stderr : stdout;
    std::fwrite(line.data(), 1, line.size(), f);
    std::fflush(f);
    return;
  }
  const std::string prefix = "file://";
  if (stream.compare(0, prefix.size(), prefix) != 0 || stream.size() == prefix.size())
    c.fail("Unknown output stream: " + stream);
  std::FILE* f = std::fopen(stream.c_str() + prefix.size(), "a");
  if (!f) throw NotFoundError("Could not open the print output file " + stream.substr(prefix.size()));
  std::fwrite(line.data(), 1, line.size(), f);
  std::fclose(f);
}
const int kMessage = attr_index(op::KilnAssert(), "message");

void infer_print(InferContext&) {}  // no outputs
struct PrintKernel {
  static void run(KernelContext& c) {
    const std::string& tmpl = c.attrs.s(kTemplate);
    const int summarize = static_cast<int>(c.attrs.i(kSummarize));
    std::string line;
    int next = 0;
    for (size_t i = 0; i < tmpl.size(); ++i) {
      if (tmpl[i] == '\x01' && next < c.num_inputs) {
        line += detail::format_values_tf_print(c.in(next++), summarize);
      } else {
        line += tmpl[i];
      }
    }
    line += c.attrs.s(kEnd);
    write_line(c, line);
  }
};

void infer_noop(InferContext&) {}  // no outputs
struct NoOpKernel {
  static void run(KernelContext&) {}
};

// KilnAssert(condition): attr message. Raises InvalidArgumentError when any element is false.
void infer_assert(InferContext& c) {
  if (c.in(0).dtype != DType::Bool) c.fail("assert_that: the condition must be a bool tensor");
}
struct AssertKernel {
  static void run(KernelContext& c) {
    const TensorImpl& cond = c.in(0);
    for (int64_t i = 0; i < cond.num_elements; ++i)
      if (!cond.as<bool>()[i]) throw InvalidArgumentError("assertion failed: " + c.attrs.s(kMessage));
  }
};

}  // namespace

const OpDef& op::KilnAssert() {
  static const OpDef def = {.name = "KilnAssert",
                            .num_inputs = 1,
                            .num_outputs = 0,
                            .input_args = {"condition"},
                            .traits = kSideEffect,
                            .attr_specs = {string_attr("message")},
                            .infer = infer_assert,
                            .any_dtype_kernel = &AssertKernel::run,
                            .type_attr = nullptr};
  return def;
}

const OpDef& op::KilnPrint() {
  static const OpDef def = {.name = "KilnPrint",
                            .num_inputs = -1,
                            .num_outputs = 0,
                            .input_args = {list_arg("inputs")},
                            .traits = kSideEffect,
                            .attr_specs = {string_attr("template"), int_attr("summarize", 3),
                                           string_attr("output_stream", "stderr"), string_attr("end", "\n")},
                            .infer = infer_print,
                            .any_dtype_kernel = &PrintKernel::run,
                            .type_attr = nullptr};
  return def;
}
const OpDef& op::NoOp() {
  static const OpDef def = {.name = "NoOp",
                            .num_inputs = 0,
                            .num_outputs = 0,
                            .input_args = {},
                            .traits = kPure | kTfjs,
                            .infer = infer_noop,
                            .any_dtype_kernel = &NoOpKernel::run,
                            .type_attr = nullptr};
  return def;
}

}  // namespace kiln::ops
