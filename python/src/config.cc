// kiln.config: the process-wide settings (threads), and limits on calls (kiln/limits.h).
#include <kiln/cpu.h>
#include <kiln/threading.h>
#include <kiln/version.h>
#include <nanobind/stl/optional.h>

#include <chrono>
#include <optional>
#include <thread>

#include "convert.h"

namespace kiln::python {
namespace {

// A RunLimitsScope that a `with` block enters and leaves (kiln.config.run_limits). The scope
// is thread-local state: it must be left on the thread that entered it.
class PyRunLimits {
 public:
  PyRunLimits(std::optional<double> timeout_seconds, int64_t memory_limit_bytes) {
    if (timeout_seconds) {
      if (!(*timeout_seconds >= 0)) throw InvalidArgumentError("timeout must be a non-negative number of seconds");
      limits_.timeout = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(*timeout_seconds));
    }
    if (memory_limit_bytes < 0) throw InvalidArgumentError("memory_limit_bytes must be non-negative");
    limits_.memory_limit_bytes = memory_limit_bytes;
    limits_.stop_on_interrupt = true;
  }
  void enter() {
    if (scope_) throw FailedPreconditionError("these run limits are already in force");
    scope_.emplace(limits_);
    thread_ = std::this_thread::get_id();
  }
  void exit() {
    if (!scope_) return;
    if (thread_ != std::this_thread::get_id())
      throw FailedPreconditionError("run limits must be left on the thread that entered them");
    scope_.reset();
  }

 private:
  RunLimits limits_;
  std::optional<RunLimitsScope> scope_;
  std::thread::id thread_;
};

}  // namespace

void bind_config(nb::module_& m) {
  m.def("set_intra_op_parallelism_threads", &config::set_intra_op_parallelism_threads, nb::arg("num_threads"));
  m.def("get_intra_op_parallelism_threads", &config::get_intra_op_parallelism_threads);
  m.def("set_inter_op_parallelism_threads", &config::set_inter_op_parallelism_threads, nb::arg("num_threads"));
  m.def("get_inter_op_parallelism_threads", &config::get_inter_op_parallelism_threads);
  m.def("cpu_isa", &config::cpu_isa);
  m.def("cpu_isa_supported", &config::cpu_isa_supported);
  m.def("gemm_library", &config::gemm_library);
  m.def("convolution_library", &config::convolution_library);
  m.def("version", &kiln::version);

  nb::class_<PyRunLimits>(m, "RunLimits")
      .def(nb::init<std::optional<double>, int64_t>(), nb::arg("timeout_seconds").none(), nb::arg("memory_limit_bytes"))
      .def("__enter__", [](PyRunLimits& self) { self.enter(); })
      .def("__exit__", [](PyRunLimits& self, nb::args) {
        self.exit();
        return false;
      });
}

}  // namespace kiln::python
