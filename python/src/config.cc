// kiln.config: the process-wide settings (threads).
#include <kiln/threading.h>

#include "convert.h"

namespace kiln::python {

void bind_config(nb::module_& m) {
  m.def("set_intra_op_parallelism_threads", &config::set_intra_op_parallelism_threads, nb::arg("num_threads"));
  m.def("get_intra_op_parallelism_threads", &config::get_intra_op_parallelism_threads);
}

}  // namespace kiln::python
