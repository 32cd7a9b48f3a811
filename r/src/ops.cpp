// Ops by registry row: the rows R's tf$raw_ops is generated from, and one generic call that
// runs any of them (eagerly, or as a node of the function being traced).
#include <map>
#include <vector>

#include "kiln_r.h"

namespace kr {
namespace {

const std::vector<kiln::OpInfo>& rows() {
  static const std::vector<kiln::OpInfo> r = kiln::registered_ops();
  return r;
}

std::vector<int64_t> int_list(SEXP x) {
  SEXP d = PROTECT(Rf_coerceVector(x, REALSXP));
  std::vector<int64_t> out;
  for (R_xlen_t i = 0; i < Rf_xlength(d); ++i) out.push_back(ISNAN(REAL(d)[i]) ? -1 : static_cast<int64_t>(REAL(d)[i]));
  UNPROTECT(1);
  return out;
}

// An R value as the attr kind the row declares.
kiln::OpAttrValue attr_value(const kiln::OpAttrInfo& info, SEXP v) {
  const std::string& type = info.type;
  if (type == "type") return dtype_from(v);
  if (type == "int") return static_cast<int64_t>(Rf_asReal(v));
  if (type == "float") return Rf_asReal(v);
  if (type == "bool") return static_cast<bool>(Rf_asLogical(v) == TRUE);
  if (type == "string") return std::string(CHAR(Rf_asChar(v)));
  if (type == "list(int)") return int_list(v);
  if (type == "shape") {
    if (Rf_isNull(v)) return kiln::TensorShape::unknown();
    return kiln::TensorShape(int_list(v));
  }
  if (type == "tensor") return to_tensor(v, -1, false);
  if (is_variable(v)) return variable_of(v);
  throw kiln::UnimplementedError("attr '" + info.name + "' of type " + type + " cannot be given from R yet");
}

SEXP strings(const std::vector<std::string>& v) {
  SEXP out = PROTECT(Rf_allocVector(STRSXP, static_cast<R_xlen_t>(v.size())));
  for (size_t i = 0; i < v.size(); ++i) SET_STRING_ELT(out, static_cast<R_xlen_t>(i), Rf_mkChar(v[i].c_str()));
  UNPROTECT(1);
  return out;
}

}  // namespace
}  // namespace kr

using namespace kr;

extern "C" {

// Every op runnable by name: list(name, inputs, list_inputs, attrs, attr_types, attr_defaults
// (NA: required), num_outputs).
SEXP kr_op_rows() {
  KR_BEGIN
  std::vector<const kiln::OpInfo*> runnable;
  for (const auto& r : rows())
    if (r.runnable_by_name && !r.internal) runnable.push_back(&r);
  SEXP out = PROTECT(Rf_allocVector(VECSXP, static_cast<R_xlen_t>(runnable.size())));
  for (size_t i = 0; i < runnable.size(); ++i) {
    const kiln::OpInfo& r = *runnable[i];
    std::vector<std::string> inputs, list_inputs, attrs, types, defaults;
    for (const auto& a : r.inputs) {
      inputs.push_back(a.api_name.empty() ? a.name : a.api_name);
      if (a.list)
        list_inputs.push_back(a.number_attr);
      else
        list_inputs.push_back("");
    }
    for (const auto& a : r.attrs) {
      attrs.push_back(a.api_name.empty() ? a.name : a.api_name);
      types.push_back(a.type);
      defaults.push_back(a.default_value ? *a.default_value : "\x01");
    }
    SEXP row = PROTECT(Rf_allocVector(VECSXP, 8));
    SET_VECTOR_ELT(row, 0, Rf_mkString(r.name.c_str()));
    SET_VECTOR_ELT(row, 1, strings(inputs));
    SET_VECTOR_ELT(row, 2, strings(list_inputs));
    SET_VECTOR_ELT(row, 3, strings(attrs));
    SET_VECTOR_ELT(row, 4, strings(types));
    SET_VECTOR_ELT(row, 5, strings(defaults));
    SET_VECTOR_ELT(row, 6, Rf_ScalarInteger(r.num_outputs));
    SET_VECTOR_ELT(row, 7, Rf_ScalarInteger(static_cast<int>(&r - rows().data())));
    SET_VECTOR_ELT(out, static_cast<R_xlen_t>(i), row);
    UNPROTECT(1);
  }
  UNPROTECT(1);
  return out;
  KR_END
}

// Runs row `index` on `inputs` (a list of tensors, variables or R values) with `attrs` (a
// named list; names are TensorFlow's). `groups` (an integer per input, or NULL) says which
// inputs share a dtype attr: an R value converts to the dtype of the first tensor of its
// group, as TensorFlow's Python API converts Python values; with none, to Python's default
// (double -> float32). One output: the tensor; several: a list.
SEXP kr_execute(SEXP index, SEXP inputs, SEXP groups, SEXP attrs) {
  KR_BEGIN
  const int i = Rf_asInteger(index);
  if (i < 0 || static_cast<size_t>(i) >= rows().size()) throw kiln::InvalidArgumentError("no such op row");
  const kiln::OpInfo& row = rows()[static_cast<size_t>(i)];
  const R_xlen_t n = Rf_xlength(inputs);
  std::vector<kiln::Tensor> in(static_cast<size_t>(n));
  for (R_xlen_t k = 0; k < n; ++k) {
    SEXP v = VECTOR_ELT(inputs, k);
    if (is_tensor(v))
      in[k] = tensor_of(v);
    else if (is_variable(v))
      in[k] = variable_of(v).read();
  }
  for (R_xlen_t k = 0; k < n; ++k) {
    if (in[k].defined()) continue;
    int d = -1;
    const int g = Rf_isNull(groups) ? NA_INTEGER : INTEGER(groups)[k];
    if (g != NA_INTEGER)
      for (R_xlen_t j = 0; j < n && d < 0; ++j)
        if (INTEGER(groups)[j] == g && in[j].defined() &&
            (is_tensor(VECTOR_ELT(inputs, j)) || is_variable(VECTOR_ELT(inputs, j))))
          d = static_cast<int>(in[j].dtype());
    in[k] = to_tensor(VECTOR_ELT(inputs, k), d, true);
  }
  std::map<std::string, kiln::OpAttrValue> attr_map;
  SEXP names = Rf_getAttrib(attrs, R_NamesSymbol);
  for (R_xlen_t k = 0; k < Rf_xlength(attrs); ++k) {
    const std::string name = CHAR(STRING_ELT(names, k));
    SEXP v = VECTOR_ELT(attrs, k);
    if (Rf_isNull(v)) continue;
    const kiln::OpAttrInfo* info = nullptr;
    for (const auto& a : row.attrs)
      if (a.name == name || a.api_name == name) info = &a;
    if (!info) {
      if (name == row.variable_arg && is_variable(v)) {
        attr_map.emplace(name, variable_of(v));
        continue;
      }
      throw kiln::InvalidArgumentError(row.name + " got an unexpected keyword argument '" + name + "'");
    }
    attr_map.emplace(info->name, attr_value(*info, v));
  }
  std::vector<kiln::Tensor> out = kiln::execute_op(row.name, in, attr_map);
  if (out.size() == 1 && row.num_outputs == 1) return wrap_tensor(std::move(out[0]));
  SEXP list = PROTECT(Rf_allocVector(VECSXP, static_cast<R_xlen_t>(out.size())));
  for (size_t k = 0; k < out.size(); ++k)
    SET_VECTOR_ELT(list, static_cast<R_xlen_t>(k), wrap_tensor(std::move(out[k])));
  UNPROTECT(1);
  return list;
  KR_END
}

// The common case of R's operators and tf$add-like functions: two inputs of one dtype attr
// and no attrs (no list to build on the R side).
SEXP kr_binary(SEXP index, SEXP x, SEXP y) {
  KR_BEGIN
  const int i = Rf_asInteger(index);
  if (i < 0 || static_cast<size_t>(i) >= rows().size()) throw kiln::InvalidArgumentError("no such op row");
  const kiln::OpInfo& row = rows()[static_cast<size_t>(i)];
  const bool xt = is_tensor(x) || is_variable(x), yt = is_tensor(y) || is_variable(y);
  kiln::Tensor a = xt ? to_tensor(x, -1, true) : kiln::Tensor();
  kiln::Tensor b = yt ? to_tensor(y, -1, true) : kiln::Tensor();
  if (!xt) a = to_tensor(x, yt ? static_cast<int>(b.dtype()) : -1, true);
  if (!yt) b = to_tensor(y, static_cast<int>(a.dtype()), true);
  std::vector<kiln::Tensor> out = kiln::execute_op(row.name, {a, b});
  return wrap_tensor(std::move(out[0]));
  KR_END
}

// tf$print: tensors and R strings, space-separated, one line to stderr at run time.
SEXP kr_print(SEXP pieces) {
  KR_BEGIN
  std::vector<kiln::detail::PrintPiece> p;
  for (R_xlen_t k = 0; k < Rf_xlength(pieces); ++k) {
    SEXP v = VECTOR_ELT(pieces, k);
    if (TYPEOF(v) == STRSXP)
      p.push_back({false, kiln::Tensor(), CHAR(STRING_ELT(v, 0))});
    else
      p.push_back({true, to_tensor(v, -1, true), ""});
  }
  kiln::detail::print_pieces(p);
  return R_NilValue;
  KR_END
}

SEXP kr_random_uniform(SEXP shape, SEXP minval, SEXP maxval, SEXP dtype, SEXP seed) {
  KR_BEGIN
  const kiln::DType d = dtype_from(dtype);
  std::optional<uint64_t> s;
  if (!Rf_isNull(seed)) s = static_cast<uint64_t>(Rf_asReal(seed));
  std::vector<int64_t> dims = int_list(shape);
  if (kiln::is_integer(d)) {
    if (Rf_isNull(maxval))
      throw kiln::InvalidArgumentError("Must specify maxval for integer dtype " + std::string(kiln::dtype_name(d)));
    return wrap_tensor(kiln::random_uniform_int(dims, static_cast<int64_t>(Rf_asReal(minval)),
                                                static_cast<int64_t>(Rf_asReal(maxval)), d, s));
  }
  return wrap_tensor(kiln::random_uniform(dims, Rf_asReal(minval), Rf_isNull(maxval) ? 1.0 : Rf_asReal(maxval), d, s));
  KR_END
}

SEXP kr_eye(SEXP n, SEXP dtype) {
  KR_BEGIN
  return wrap_tensor(kiln::eye(static_cast<int64_t>(Rf_asReal(n)), dtype_from(dtype)));
  KR_END
}

}  // extern "C"
