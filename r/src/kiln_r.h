// The R package's C++ half: R values <-> kiln tensors, and the entry points R's .Call
// reaches. Every entry point is wrapped in KR_BEGIN/KR_END: a kiln error becomes an R
// condition of TensorFlow's class only after every C++ frame has unwound, and an R error
// raised inside a callback (a trace) unwinds C++ first (Rcpp's unwind protection) and then
// resumes in R.
#pragma once
#define RCPP_USE_UNWIND_PROTECT
#include <Rcpp.h>

#include <string>

#include "kiln/kiln.h"

namespace kr {

// Tensors and variables live in R as external pointers with a class ("kiln_tensor",
// "kiln_variable"); R's garbage collector frees them.
SEXP wrap_tensor(kiln::Tensor t);
bool is_tensor(SEXP x);
const kiln::Tensor& tensor_of(SEXP x);  // InvalidArgumentError for anything else
SEXP wrap_variable(kiln::Variable v);
bool is_variable(SEXP x);
kiln::Variable& variable_of(SEXP x);

// An R vector (or array, or tensor, or variable) as a tensor. `dtype` < 0: R's own type
// (double -> float64, integer -> int32, logical -> bool, character -> string), or, with
// `python_floats`, as TensorFlow's Python API converts the same values (double -> float32).
kiln::Tensor to_tensor(SEXP x, int dtype, bool python_floats);
kiln::DType dtype_from(SEXP x);  // a kiln_dtype (its code) or a name ("float64")

// The R function that traces: .trace(f, args, placeholders) -> list(flat tensors, structure).
void set_trace_hook(SEXP trace);

// An object C++ owns, handed to R as an external pointer tagged with its kind, and deleted
// when R collects it. owned_of checks the tag: a pointer of another kind is refused, never
// reinterpreted.
template <class T>
SEXP wrap_owned(T* object, const char* kind) {
  SEXP p = PROTECT(R_MakeExternalPtr(object, Rf_install(kind), R_NilValue));
  R_RegisterCFinalizerEx(
      p,
      [](SEXP q) {
        delete static_cast<T*>(R_ExternalPtrAddr(q));
        R_ClearExternalPtr(q);
      },
      TRUE);
  UNPROTECT(1);
  return p;
}
template <class T>
T& owned_of(SEXP p, const char* kind) {
  if (TYPEOF(p) != EXTPTRSXP || R_ExternalPtrTag(p) != Rf_install(kind) || !R_ExternalPtrAddr(p))
    throw kiln::InvalidArgumentError(std::string("expected a ") + kind);
  return *static_cast<T*>(R_ExternalPtrAddr(p));
}

// Records an error to raise once C++ has unwound (see KR_END).
void set_pending(const char* kind, const char* message);
[[noreturn]] void raise_pending();

}  // namespace kr

#define KR_BEGIN try {
#define KR_END                                                  \
  }                                                             \
  catch (Rcpp::LongjumpException & e) {                         \
    Rcpp::internal::resumeJump(e.token);                        \
  }                                                             \
  catch (const kiln::Error& e) {                                \
    kr::set_pending(kiln::error_code_name(e.code()), e.what()); \
  }                                                             \
  catch (const std::exception& e) {                             \
    kr::set_pending("Error", e.what());                         \
  }                                                             \
  kr::raise_pending();
