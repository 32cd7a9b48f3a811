// kiln.distribute's C++ half: kiln::distribute (MPI collectives as ops) for the Horovod-style
// Python API in kiln/distribute.py. Collectives release the GIL while they wait for the ranks.
#include <kiln/distribute.h>
#include <nanobind/stl/vector.h>

#include "convert.h"

namespace kiln::python {

void bind_distribute(nb::module_& m) {
  namespace d = kiln::distribute;
  nb::enum_<d::ReduceOp>(m, "ReduceOp")
      .value("Average", d::ReduceOp::kAverage)
      .value("Sum", d::ReduceOp::kSum)
      .value("Min", d::ReduceOp::kMin)
      .value("Max", d::ReduceOp::kMax);
  m.def("dist_available", &d::available);
  m.def("dist_init", &d::init);
  m.def("dist_is_initialized", &d::is_initialized);
  m.def("dist_shutdown", &d::shutdown);
  m.def("dist_abort_job", &d::abort_job, nb::arg("exit_code"));
  m.def("dist_rank", &d::rank);
  m.def("dist_size", &d::size);
  m.def("dist_local_rank", &d::local_rank);
  m.def("dist_local_size", &d::local_size);
  m.def("dist_allreduce", &d::allreduce, nb::arg("tensor"), nb::arg("op"), nb::call_guard<nb::gil_scoped_release>());
  m.def("dist_grouped_allreduce", &d::grouped_allreduce, nb::arg("tensors"), nb::arg("op"), nb::arg("fusion_bytes"),
        nb::call_guard<nb::gil_scoped_release>());
  m.def("dist_allgather", &d::allgather, nb::arg("tensor"), nb::call_guard<nb::gil_scoped_release>());
  m.def("dist_broadcast", &d::broadcast, nb::arg("tensor"), nb::arg("root_rank"),
        nb::call_guard<nb::gil_scoped_release>());
  m.def("dist_timeout_seconds", &d::timeout_seconds);
  m.def("dist_set_timeout_seconds", &d::set_timeout_seconds, nb::arg("seconds"));
  m.def("dist_collective_calls", &d::collective_calls);
}

}  // namespace kiln::python
