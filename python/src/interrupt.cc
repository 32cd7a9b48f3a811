#include "interrupt.h"

#include <signal.h>

#include <cstring>

namespace kiln::python {
namespace {

struct sigaction g_python_handler;  // what was installed before kiln's (Python's)
unsigned long g_main_thread = 0;    // PyThread ident of the main thread

void on_sigint(int sig, siginfo_t* info, void* context) {
  note_interrupt();
  if (g_python_handler.sa_flags & SA_SIGINFO)
    g_python_handler.sa_sigaction(sig, info, context);
  else
    g_python_handler.sa_handler(sig);
}

}  // namespace

void install_interrupt_handler() {
  nb::object threading = nb::module_::import_("threading");
  g_main_thread = nb::cast<unsigned long>(threading.attr("main_thread")().attr("ident"));
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) != 0) return;
  const bool is_function = (current.sa_flags & SA_SIGINFO)
                               ? current.sa_sigaction != nullptr
                               : (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
  if (!is_function || (current.sa_flags & SA_SIGINFO && current.sa_sigaction == on_sigint)) return;
  g_python_handler = current;
  struct sigaction mine {};
  mine.sa_sigaction = on_sigint;
  mine.sa_flags = SA_SIGINFO | (current.sa_flags & SA_ONSTACK);
  sigemptyset(&mine.sa_mask);
  sigaction(SIGINT, &mine, nullptr);
}

InterruptibleCall::InterruptibleCall() {
  if (g_main_thread == 0 || PyThread_get_thread_ident() != g_main_thread) return;
  scope_.emplace(RunLimits{.stop_on_interrupt = true});
  // A SIGINT that came before the scope (while Python code led up to the call) is not one the
  // scope will see, and Python would act on it only after the call: act on it now. (Called
  // with the GIL held; a later SIGINT is the scope's.)
  if (PyGILState_Check() && PyErr_CheckSignals() != 0) throw nb::python_error();
}

}  // namespace kiln::python
