// The .Call entry points, registered (R finds them by symbol, never by a dynamic lookup).
#include <R_ext/Rdynload.h>

#include "kiln_r.h"

extern "C" {
SEXP kr_set_hooks(SEXP, SEXP);
SEXP kr_as_tensor(SEXP, SEXP, SEXP);
SEXP kr_is_tensor(SEXP);
SEXP kr_live_tensor_bytes();
SEXP kr_tensor_info(SEXP);
SEXP kr_tensor_values(SEXP);
SEXP kr_tensor_text(SEXP, SEXP);
SEXP kr_dtype_name(SEXP);
SEXP kr_dtype_code(SEXP);
SEXP kr_cast(SEXP, SEXP);
SEXP kr_reshape(SEXP, SEXP);
SEXP kr_variable(SEXP, SEXP);
SEXP kr_variable_read(SEXP);
SEXP kr_variable_assign(SEXP, SEXP, SEXP);
SEXP kr_variable_name(SEXP);
SEXP kr_op_rows();
SEXP kr_execute(SEXP, SEXP, SEXP, SEXP);
SEXP kr_print(SEXP);
SEXP kr_binary(SEXP, SEXP, SEXP);
SEXP kr_tape_new(SEXP, SEXP);
SEXP kr_tape_record(SEXP, SEXP);
SEXP kr_tape_watch(SEXP, SEXP);
SEXP kr_tape_gradient(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP kr_saved_model_save(SEXP, SEXP);
SEXP kr_saved_model_load(SEXP);
SEXP kr_saved_model_signatures(SEXP);
SEXP kr_saved_model_call(SEXP, SEXP, SEXP);
SEXP kr_random_uniform(SEXP, SEXP, SEXP, SEXP, SEXP);
SEXP kr_eye(SEXP, SEXP);
SEXP kr_function_new(SEXP, SEXP, SEXP);
SEXP kr_function_call(SEXP, SEXP, SEXP, SEXP);
SEXP kr_function_concrete(SEXP, SEXP, SEXP, SEXP);
SEXP kr_function_info(SEXP, SEXP);
SEXP kr_concrete_info(SEXP, SEXP);
SEXP kr_concrete_call(SEXP, SEXP);
SEXP kr_run_functions_eagerly(SEXP);
SEXP kr_tracing();
SEXP kr_cond(SEXP, SEXP, SEXP);
SEXP kr_while(SEXP, SEXP, SEXP, SEXP);

#define KR_ENTRY(name, n) \
  { #name, reinterpret_cast < DL_FUNC>(&name), n }
static const R_CallMethodDef entries[] = {KR_ENTRY(kr_set_hooks, 2),
                                          KR_ENTRY(kr_as_tensor, 3),
                                          KR_ENTRY(kr_is_tensor, 1),
                                          KR_ENTRY(kr_live_tensor_bytes, 0),
                                          KR_ENTRY(kr_tensor_info, 1),
                                          KR_ENTRY(kr_tensor_values, 1),
                                          KR_ENTRY(kr_tensor_text, 2),
                                          KR_ENTRY(kr_dtype_name, 1),
                                          KR_ENTRY(kr_dtype_code, 1),
                                          KR_ENTRY(kr_cast, 2),
                                          KR_ENTRY(kr_reshape, 2),
                                          KR_ENTRY(kr_variable, 2),
                                          KR_ENTRY(kr_variable_read, 1),
                                          KR_ENTRY(kr_variable_assign, 3),
                                          KR_ENTRY(kr_variable_name, 1),
                                          KR_ENTRY(kr_op_rows, 0),
                                          KR_ENTRY(kr_execute, 4),
                                          KR_ENTRY(kr_print, 1),
                                          KR_ENTRY(kr_random_uniform, 5),
                                          KR_ENTRY(kr_eye, 2),
                                          KR_ENTRY(kr_function_new, 3),
                                          KR_ENTRY(kr_function_call, 4),
                                          KR_ENTRY(kr_function_concrete, 4),
                                          KR_ENTRY(kr_function_info, 2),
                                          KR_ENTRY(kr_concrete_info, 2),
                                          KR_ENTRY(kr_concrete_call, 2),
                                          KR_ENTRY(kr_run_functions_eagerly, 1),
                                          KR_ENTRY(kr_tracing, 0),
                                          KR_ENTRY(kr_cond, 3),
                                          KR_ENTRY(kr_binary, 3),
                                          KR_ENTRY(kr_tape_new, 2),
                                          KR_ENTRY(kr_tape_record, 2),
                                          KR_ENTRY(kr_tape_watch, 2),
                                          KR_ENTRY(kr_tape_gradient, 5),
                                          KR_ENTRY(kr_saved_model_save, 2),
                                          KR_ENTRY(kr_saved_model_load, 1),
                                          KR_ENTRY(kr_saved_model_signatures, 1),
                                          KR_ENTRY(kr_saved_model_call, 3),
                                          KR_ENTRY(kr_while, 4),
                                          {nullptr, nullptr, 0}};

void R_init_kiln(DllInfo* dll) {
  R_registerRoutines(dll, nullptr, entries, nullptr, nullptr);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
}
}
