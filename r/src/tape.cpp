// tf$GradientTape for R: a C++ GradientTape made when a with() block first records, paused
// outside the block (gradients are asked for after it), and dropped once a non-persistent
// tape has given its gradients, so a finished tape does not observe later ops.
#include <memory>

#include "kiln_r.h"

namespace kr {
namespace {

struct RTape {
  bool persistent = false;
  bool watch_accessed_variables = true;
  bool used = false;  // a non-persistent tape's one gradient() call happened
  std::unique_ptr<kiln::GradientTape> tape;
};

RTape& tape_of(SEXP p) { return owned_of<RTape>(p, "GradientTape"); }

kiln::GradientTape& live(RTape& t) {
  if (t.used)
    throw kiln::FailedPreconditionError(
        "A non-persistent GradientTape can only be used to compute one set of gradients (or jacobians)");
  if (!t.tape) {
    t.tape = std::make_unique<kiln::GradientTape>(t.persistent, t.watch_accessed_variables);
    t.tape->set_recording(false);
  }
  return *t.tape;
}

}  // namespace
}  // namespace kr

using namespace kr;

extern "C" {

SEXP kr_tape_new(SEXP persistent, SEXP watch_accessed_variables) {
  KR_BEGIN
  auto* t = new RTape{.persistent = Rf_asLogical(persistent) == TRUE,
                      .watch_accessed_variables = Rf_asLogical(watch_accessed_variables) == TRUE};
  return wrap_owned(t, "GradientTape");
  KR_END
}

SEXP kr_tape_record(SEXP tp, SEXP on) {
  KR_BEGIN
  live(tape_of(tp)).set_recording(Rf_asLogical(on) == TRUE);
  return R_NilValue;
  KR_END
}

SEXP kr_tape_watch(SEXP tp, SEXP x) {
  KR_BEGIN
  kiln::GradientTape& t = live(tape_of(tp));
  if (is_variable(x))
    t.watch(variable_of(x));
  else
    t.watch(tensor_of(x));
  return R_NilValue;
  KR_END
}

// d target / d sources (a list of tensors and variables); NULL entries for unconnected
// sources when `unconnected` is "none".
SEXP kr_tape_gradient(SEXP tp, SEXP target, SEXP sources, SEXP output_gradient, SEXP unconnected) {
  KR_BEGIN
  RTape& r = tape_of(tp);
  kiln::GradientTape& t = live(r);
  std::vector<kiln::GradientSource> src;
  for (R_xlen_t i = 0; i < Rf_xlength(sources); ++i) {
    SEXP s = VECTOR_ELT(sources, i);
    if (is_variable(s))
      src.push_back(kiln::GradientSource{.tensor = kiln::Tensor(), .variable = &variable_of(s)});
    else
      src.push_back(kiln::GradientSource{.tensor = tensor_of(s), .variable = nullptr});
  }
  const kiln::Tensor upstream = Rf_isNull(output_gradient) ? kiln::Tensor() : to_tensor(output_gradient, -1, false);
  const bool none = std::string(CHAR(STRING_ELT(unconnected, 0))) == "none";
  std::vector<kiln::Tensor> g = t.gradient(
      tensor_of(target), src, upstream, none ? kiln::UnconnectedGradients::kNone : kiln::UnconnectedGradients::kZero);
  if (!r.persistent) {
    r.tape.reset();
    r.used = true;
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, static_cast<R_xlen_t>(g.size())));
  for (size_t i = 0; i < g.size(); ++i)
    if (g[i].defined()) SET_VECTOR_ELT(out, static_cast<R_xlen_t>(i), wrap_tensor(g[i]));
  UNPROTECT(1);
  return out;
  KR_END
}

}  // extern "C"
