// tf$saved_model for R: a traced function saved as a TensorFlow SavedModel (which TensorFlow,
// TF Serving and kiln load), and a SavedModel loaded back with its signatures callable.
#include <map>

#include "kiln_r.h"

namespace kr {
namespace {

kiln::LoadedModel& model_of(SEXP p) { return owned_of<kiln::LoadedModel>(p, "SavedModel"); }
const kiln::ConcreteFunction& concrete_of(SEXP p) { return owned_of<kiln::ConcreteFunction>(p, "concrete function"); }

}  // namespace
}  // namespace kr

using namespace kr;

extern "C" {

// signatures: a named list of concrete-function pointers.
SEXP kr_saved_model_save(SEXP dir, SEXP signatures) {
  KR_BEGIN
  std::map<std::string, kiln::ConcreteFunction> sigs;
  SEXP names = Rf_getAttrib(signatures, R_NamesSymbol);
  for (R_xlen_t i = 0; i < Rf_xlength(signatures); ++i)
    sigs.emplace(CHAR(STRING_ELT(names, i)), concrete_of(VECTOR_ELT(signatures, i)));
  kiln::save(CHAR(STRING_ELT(dir, 0)), std::move(sigs));
  return R_NilValue;
  KR_END
}

SEXP kr_saved_model_load(SEXP dir) {
  KR_BEGIN
  return wrap_owned(new kiln::LoadedModel(kiln::load(CHAR(STRING_ELT(dir, 0)))), "SavedModel");
  KR_END
}

SEXP kr_saved_model_signatures(SEXP mp) {
  KR_BEGIN
  const std::vector<std::string> s = model_of(mp).signatures();
  SEXP out = PROTECT(Rf_allocVector(STRSXP, static_cast<R_xlen_t>(s.size())));
  for (size_t i = 0; i < s.size(); ++i) SET_STRING_ELT(out, static_cast<R_xlen_t>(i), Rf_mkChar(s[i].c_str()));
  UNPROTECT(1);
  return out;
  KR_END
}

// A signature called by input names (a named list); the outputs by their names.
SEXP kr_saved_model_call(SEXP mp, SEXP signature, SEXP inputs) {
  KR_BEGIN
  std::map<std::string, kiln::Tensor> in;
  SEXP names = Rf_getAttrib(inputs, R_NamesSymbol);
  if (Rf_xlength(inputs) && Rf_isNull(names))
    throw kiln::InvalidArgumentError("a signature takes its inputs by name: sig(x = ...)");
  for (R_xlen_t i = 0; i < Rf_xlength(inputs); ++i)
    in.emplace(CHAR(STRING_ELT(names, i)), to_tensor(VECTOR_ELT(inputs, i), -1, false));
  std::map<std::string, kiln::Tensor> out = model_of(mp).call(CHAR(STRING_ELT(signature, 0)), in);
  SEXP list = PROTECT(Rf_allocVector(VECSXP, static_cast<R_xlen_t>(out.size())));
  SEXP out_names = PROTECT(Rf_allocVector(STRSXP, static_cast<R_xlen_t>(out.size())));
  R_xlen_t k = 0;
  for (auto& [name, t] : out) {
    SET_STRING_ELT(out_names, k, Rf_mkChar(name.c_str()));
    SET_VECTOR_ELT(list, k++, wrap_tensor(t));
  }
  Rf_setAttrib(list, R_NamesSymbol, out_names);
  UNPROTECT(2);
  return list;
  KR_END
}

}  // extern "C"
