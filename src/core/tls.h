// KILN_TLS marks libkiln's own thread-locals for the initial-exec TLS model: a plain
// %fs-relative load on the per-op hot path. The library's default model stays dynamic, so
// references to other libraries' thread-locals (libstdc++'s, for std::call_once) do not
// force those libraries into static TLS.
//
// libkiln is loaded with dlopen (Python, R) beside TensorFlow, JAX and MPI, and its
// initial-exec block comes from the small static surplus glibc keeps for such libraries:
// with 1.6 KB of thread-locals libkiln could not be imported after TensorFlow ("cannot
// allocate memory in static TLS block"). So every thread-local here is a pointer, a flag or
// a small counter; large per-thread state lives on the heap behind one (buffer.cc,
// scratch.h). The tls_budget test holds the block under 256 bytes.
#pragma once

#if defined(__GNUC__) && defined(__ELF__)
#define KILN_TLS __attribute__((tls_model("initial-exec")))
#else
#define KILN_TLS
#endif
