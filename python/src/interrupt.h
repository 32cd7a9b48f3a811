// Ctrl-C inside a long graph: Python handles SIGINT only between bytecodes, and a graph
// call runs in C++ without the GIL. kiln chains a handler in front of Python's that notes
// the interrupt (kiln::note_interrupt); calls from the main thread run under a limits
// scope that stops on it (CancelledError), and the error translator then lets Python raise
// its KeyboardInterrupt.
#pragma once
#include <optional>

#include "convert.h"

namespace kiln::python {

// Installs the chained SIGINT handler once, if Python's own handler is in place.
void install_interrupt_handler();

// Alive around a graph call: on the main thread, an interrupt stops the call. Constructed
// with the GIL held; raises KeyboardInterrupt at once for a SIGINT still pending in Python.
class InterruptibleCall {
 public:
  InterruptibleCall();

 private:
  std::optional<RunLimitsScope> scope_;
};

}  // namespace kiln::python
