// R values <-> kiln tensors, tensor external pointers, and how a tensor prints in R.
#include <atomic>
#include <cmath>
#include <cstring>

#include "kiln_r.h"

namespace kr {
namespace {

// A class attribute value, made once and kept from the collector.
SEXP preserved_class(const char* name) {
  SEXP c = Rf_mkString(name);
  R_PreserveObject(c);
  return c;
}
SEXP tensor_class() {
  static SEXP cls = preserved_class("kiln_tensor");
  return cls;
}
SEXP tensor_tag() {
  static SEXP tag = Rf_install(".kiln_tensor");  // symbols are never collected
  return tag;
}

SEXP variable_class() {
  static SEXP cls = preserved_class("kiln_variable");
  return cls;
}

// R's collector sees an external pointer as a few bytes, whatever the tensor holds: left
// alone, it would let gigabytes of dead tensors wait. Past this many bytes handed to R since
// the last collection, the next tensor made asks R for one.
constexpr size_t kCollectAfterBytes = size_t{256} << 20;
size_t bytes_since_gc = 0;
size_t live_bytes = 0;  // of the concrete tensors R holds (kr_live_tensor_bytes)

size_t bytes_of(const kiln::Tensor& t) {
  if (t.is_symbolic() || t.num_elements() <= 0) return 0;
  return static_cast<size_t>(t.num_elements()) * kiln::dtype_size(t.dtype());
}

void finalize_tensor(SEXP p) {
  auto* t = static_cast<kiln::Tensor*>(R_ExternalPtrAddr(p));
  if (t) live_bytes -= bytes_of(*t);
  delete t;
  R_ClearExternalPtr(p);
}

thread_local std::string pending_kind, pending_message;
SEXP raise_fn = R_NilValue;

template <class T>
kiln::Tensor from_vector(const T* p, R_xlen_t n, const std::vector<int64_t>& shape) {
  return kiln::constant<T>(std::vector<T>(p, p + n), shape);
}

}  // namespace

SEXP wrap_tensor(kiln::Tensor t) {
  const size_t bytes = bytes_of(t);
  if (bytes) {
    bytes_since_gc += bytes;
    if (bytes_since_gc > kCollectAfterBytes) {
      bytes_since_gc = 0;
      R_gc();
    }
    live_bytes += bytes;
  }
  SEXP p = PROTECT(R_MakeExternalPtr(new kiln::Tensor(std::move(t)), tensor_tag(), R_NilValue));
  R_RegisterCFinalizerEx(p, finalize_tensor, TRUE);
  // The class attribute set directly (what class<- does for a one-name class, without its checks).
  SEXP attrs = Rf_cons(tensor_class(), R_NilValue);
  SET_TAG(attrs, R_ClassSymbol);
  SET_ATTRIB(p, attrs);
  SET_OBJECT(p, 1);
  UNPROTECT(1);
  return p;
}

// By the pointer's tag, which only wrap_tensor sets: a pointer compare, no class strings.
bool is_tensor(SEXP x) {
  return TYPEOF(x) == EXTPTRSXP && R_ExternalPtrTag(x) == tensor_tag() && R_ExternalPtrAddr(x) != nullptr;
}

const kiln::Tensor& tensor_of(SEXP x) {
  if (!is_tensor(x)) throw kiln::InvalidArgumentError("expected a kiln tensor");
  return *static_cast<kiln::Tensor*>(R_ExternalPtrAddr(x));
}

constexpr const char* kVariableKind = "kiln variable";

SEXP wrap_variable(kiln::Variable v) {
  SEXP p = PROTECT(wrap_owned(new kiln::Variable(std::move(v)), kVariableKind));
  Rf_setAttrib(p, R_ClassSymbol, variable_class());
  UNPROTECT(1);
  return p;
}

bool is_variable(SEXP x) {
  return TYPEOF(x) == EXTPTRSXP && R_ExternalPtrTag(x) == Rf_install(kVariableKind) && R_ExternalPtrAddr(x) != nullptr;
}

kiln::Variable& variable_of(SEXP x) { return owned_of<kiln::Variable>(x, kVariableKind); }

kiln::DType dtype_from(SEXP x) {
  if (Rf_inherits(x, "kiln_dtype") || TYPEOF(x) == INTSXP || TYPEOF(x) == REALSXP) {
    const int code = Rf_asInteger(x);
    if (code < 0 || code >= kiln::kNumDTypes) throw kiln::InvalidArgumentError("not a dtype code");
    return static_cast<kiln::DType>(code);
  }
  if (TYPEOF(x) == STRSXP && Rf_xlength(x) == 1) {
    std::string name = CHAR(STRING_ELT(x, 0));
    if (name == "float") name = "float32";
    if (name == "double") name = "float64";
    for (int i = 0; i < kiln::kNumDTypes; ++i)
      if (kiln::dtype_name(static_cast<kiln::DType>(i)) == name) return static_cast<kiln::DType>(i);
    throw kiln::InvalidArgumentError("Value for attr 'dtype' is not a known dtype: '" + name + "'");
  }
  throw kiln::InvalidArgumentError("expected a dtype (tf$float32, \"float32\", ...)");
}

kiln::Tensor to_tensor(SEXP x, int dtype, bool python_floats) {
  if (is_tensor(x)) {
    const kiln::Tensor& t = tensor_of(x);
    if (dtype >= 0 && t.dtype() != static_cast<kiln::DType>(dtype))
      throw kiln::InvalidArgumentError("Tensor conversion requested dtype " +
                                       std::string(kiln::dtype_name(static_cast<kiln::DType>(dtype))) +
                                       " for Tensor with dtype " + std::string(kiln::dtype_name(t.dtype())));
    return t;
  }
  if (is_variable(x)) return variable_of(x).read();
  if (TYPEOF(x) == VECSXP) {  // a list of scalars or tensors: stacked, as TensorFlow packs a list
    const R_xlen_t n = Rf_xlength(x);
    std::vector<kiln::Tensor> parts;
    for (R_xlen_t i = 0; i < n; ++i) parts.push_back(to_tensor(VECTOR_ELT(x, i), dtype, python_floats));
    if (parts.empty()) return kiln::zeros({0}, dtype >= 0 ? static_cast<kiln::DType>(dtype) : kiln::DType::Float32);
    kiln::DType d = parts[0].dtype();
    for (auto& p : parts)
      if (p.dtype() != d) p = kiln::cast(p, d);
    return kiln::stack(parts, 0);
  }
  // The shape: R's dims reversed (R is column-major; reversing the dims and transposing
  // after gives TensorFlow's row-major view of the same array, as R tensorflow converts).
  std::vector<int64_t> shape;
  SEXP dims = Rf_getAttrib(x, R_DimSymbol);
  const R_xlen_t n = Rf_xlength(x);
  if (dims == R_NilValue) {
    if (n != 1) shape.push_back(n);
  } else {
    for (int i = Rf_length(dims) - 1; i >= 0; --i) shape.push_back(INTEGER(dims)[i]);
  }
  kiln::Tensor t;
  switch (TYPEOF(x)) {
    case REALSXP:
      if (dtype >= 0 &&
          (kiln::is_integer(static_cast<kiln::DType>(dtype)) || dtype == static_cast<int>(kiln::DType::Bool)))
        for (R_xlen_t i = 0; i < n; ++i)
          if (REAL(x)[i] != std::trunc(REAL(x)[i]))  // TensorFlow refuses to truncate a Python float
            throw kiln::InvalidArgumentError("Cannot convert " + kiln::detail::value_text(REAL(x)[i]) +
                                             " to EagerTensor of dtype " +
                                             std::string(kiln::dtype_name(static_cast<kiln::DType>(dtype))));
      t = from_vector<double>(REAL(x), n, shape);
      if (dtype < 0 && python_floats) t = kiln::cast(t, kiln::DType::Float32);
      break;
    case INTSXP:
      if (Rf_isFactor(x)) throw kiln::InvalidArgumentError("a factor cannot become a tensor");
      t = from_vector<int32_t>(INTEGER(x), n, shape);
      break;
    case LGLSXP: {
      std::vector<bool> v(static_cast<size_t>(n));
      for (R_xlen_t i = 0; i < n; ++i) {
        if (LOGICAL(x)[i] == NA_LOGICAL) throw kiln::InvalidArgumentError("NA cannot become a bool tensor");
        v[i] = LOGICAL(x)[i] != 0;
      }
      t = kiln::constant<bool>(std::move(v), shape);
      break;
    }
    case STRSXP: {
      std::vector<std::string> v;
      for (R_xlen_t i = 0; i < n; ++i) v.emplace_back(CHAR(STRING_ELT(x, i)));
      t = kiln::constant<std::string>(std::move(v), shape);
      break;
    }
    default:
      throw kiln::InvalidArgumentError(std::string("Attempt to convert a value (an R ") + Rf_type2char(TYPEOF(x)) +
                                       ") with an unsupported type to a Tensor.");
  }
  if (dims != R_NilValue && shape.size() > 1) {
    std::vector<int64_t> perm;
    for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) perm.push_back(i);
    t = kiln::transpose(t, perm);
  }
  if (dtype >= 0 && t.dtype() != static_cast<kiln::DType>(dtype)) t = kiln::cast(t, static_cast<kiln::DType>(dtype));
  return t;
}

void set_pending(const char* kind, const char* message) {
  pending_kind = kind;
  pending_message = message;
}

void raise_pending() {
  SEXP call = PROTECT(Rf_lang3(raise_fn, Rf_mkString(pending_kind.c_str()), Rf_mkString(pending_message.c_str())));
  Rf_eval(call, R_GlobalEnv);  // stops: never returns
  UNPROTECT(1);
  Rf_error("kiln: unreachable");
}

}  // namespace kr

using namespace kr;

extern "C" {

// The package's R functions C++ calls: raise(kind, message) and trace(f, args, placeholders).
SEXP kr_set_hooks(SEXP raise, SEXP trace) {
  if (raise_fn != R_NilValue) R_ReleaseObject(raise_fn);
  R_PreserveObject(raise);
  raise_fn = raise;
  set_trace_hook(trace);
  return R_NilValue;
}

SEXP kr_as_tensor(SEXP x, SEXP dtype, SEXP python_floats) {
  KR_BEGIN
  const int d = dtype == R_NilValue ? -1 : static_cast<int>(dtype_from(dtype));
  return wrap_tensor(to_tensor(x, d, Rf_asLogical(python_floats) == TRUE));
  KR_END
}

SEXP kr_is_tensor(SEXP x) { return Rf_ScalarLogical(is_tensor(x)); }

SEXP kr_live_tensor_bytes() { return Rf_ScalarReal(static_cast<double>(live_bytes)); }

// dtype code, dims (NA for unknown; NULL for unknown rank), symbolic, name.
SEXP kr_tensor_info(SEXP x) {
  KR_BEGIN
  const kiln::Tensor& t = tensor_of(x);
  const kiln::TensorShape s = t.shape();
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 4));
  SET_VECTOR_ELT(out, 0, Rf_ScalarInteger(static_cast<int>(t.dtype())));
  if (s.rank() >= 0) {
    SEXP dims = Rf_allocVector(INTSXP, s.rank());
    SET_VECTOR_ELT(out, 1, dims);
    for (int i = 0; i < s.rank(); ++i) INTEGER(dims)[i] = s.dims()[i] < 0 ? NA_INTEGER : static_cast<int>(s.dims()[i]);
  }
  SET_VECTOR_ELT(out, 2, Rf_ScalarLogical(t.is_symbolic()));
  SET_VECTOR_ELT(out, 3, Rf_mkString(t.name().c_str()));
  UNPROTECT(1);
  return out;
  KR_END
}

// The elements, row-major, as an R vector (the R side shapes them).
SEXP kr_tensor_values(SEXP x) {
  KR_BEGIN
  kiln::Tensor t = tensor_of(x);
  if (t.is_symbolic())
    throw kiln::InvalidArgumentError(
        "A symbolic tensor has no value: it is an input or an intermediate of a function being traced.");
  const int64_t n = t.num_elements();
  using kiln::DType;
  switch (t.dtype()) {
    case DType::Bool: {
      auto v = t.to_vector<bool>();
      SEXP out = PROTECT(Rf_allocVector(LGLSXP, n));
      for (int64_t i = 0; i < n; ++i) LOGICAL(out)[i] = v[i];
      UNPROTECT(1);
      return out;
    }
    case DType::Int32:
    case DType::Int16:
    case DType::Int8:
    case DType::UInt8:
    case DType::UInt16: {
      auto v = kiln::cast(t, DType::Int32).to_vector<int32_t>();
      SEXP out = PROTECT(Rf_allocVector(INTSXP, n));
      if (n) std::memcpy(INTEGER(out), v.data(), n * sizeof(int32_t));
      UNPROTECT(1);
      return out;
    }
    case DType::String: {
      auto v = t.to_vector<std::string>();
      SEXP out = PROTECT(Rf_allocVector(STRSXP, n));
      for (int64_t i = 0; i < n; ++i) SET_STRING_ELT(out, i, Rf_mkCharLen(v[i].data(), static_cast<int>(v[i].size())));
      UNPROTECT(1);
      return out;
    }
    case DType::Complex64:
    case DType::Complex128:
    case DType::Variant:
      throw kiln::UnimplementedError("this dtype has no R vector type yet: " +
                                     std::string(kiln::dtype_name(t.dtype())));
    default: {
      auto v = (t.dtype() == DType::Float64 ? t : kiln::cast(t, DType::Float64)).to_vector<double>();
      SEXP out = PROTECT(Rf_allocVector(REALSXP, n));
      if (n) std::memcpy(REAL(out), v.data(), n * sizeof(double));
      UNPROTECT(1);
      return out;
    }
  }
  KR_END
}

// What a tensor prints: the values as numpy shows them (summarize < 0) or as tf.print does
// (summarize items at each end), or Python's str of a symbolic tensor.
SEXP kr_tensor_text(SEXP x, SEXP summarize) {
  KR_BEGIN
  const kiln::Tensor& t = tensor_of(x);
  if (t.is_symbolic()) return Rf_mkString(t.str().c_str());
  if (Rf_asInteger(summarize) >= 0) return Rf_mkString(kiln::print_string(t, Rf_asInteger(summarize)).c_str());
  // numpy's text of the values, as Tensor::str() writes them between its prefix and ", shape=".
  const std::string s = t.str();
  const size_t begin = s.find('(') + 1, end = s.rfind(", shape=");
  std::string values = s.substr(begin, end - begin);
  if (!values.empty() && values[0] == '\n') values.erase(0, 1);
  return Rf_mkString(values.c_str());
  KR_END
}

SEXP kr_dtype_name(SEXP code) {
  KR_BEGIN
  return Rf_mkString(std::string(kiln::dtype_name(dtype_from(code))).c_str());
  KR_END
}

SEXP kr_dtype_code(SEXP name) {
  KR_BEGIN
  return Rf_ScalarInteger(static_cast<int>(dtype_from(name)));
  KR_END
}

SEXP kr_cast(SEXP x, SEXP dtype) {
  KR_BEGIN
  return wrap_tensor(kiln::cast(to_tensor(x, -1, false), dtype_from(dtype)));
  KR_END
}

SEXP kr_reshape(SEXP x, SEXP shape) {
  KR_BEGIN
  SEXP d = PROTECT(Rf_coerceVector(shape, REALSXP));
  std::vector<int64_t> dims;
  for (R_xlen_t i = 0; i < Rf_xlength(d); ++i)
    dims.push_back(ISNAN(REAL(d)[i]) ? -1 : static_cast<int64_t>(REAL(d)[i]));
  UNPROTECT(1);
  return wrap_tensor(kiln::reshape(to_tensor(x, -1, false), dims));
  KR_END
}

SEXP kr_variable(SEXP init, SEXP name) {
  KR_BEGIN
  return wrap_variable(kiln::Variable(to_tensor(init, -1, false), CHAR(STRING_ELT(name, 0))));
  KR_END
}

SEXP kr_variable_read(SEXP v) {
  KR_BEGIN
  return wrap_tensor(variable_of(v).read());
  KR_END
}

SEXP kr_variable_assign(SEXP v, SEXP value, SEXP how) {
  KR_BEGIN
  kiln::Variable& var = variable_of(v);
  const kiln::Tensor t = to_tensor(value, static_cast<int>(var.dtype()), false);
  const std::string h = CHAR(STRING_ELT(how, 0));
  if (h == "add")
    var.assign_add(t);
  else if (h == "sub")
    var.assign_sub(t);
  else
    var.assign(t);
  return v;
  KR_END
}

SEXP kr_variable_name(SEXP v) {
  KR_BEGIN
  return Rf_mkString(variable_of(v).name().c_str());
  KR_END
}

}  // extern "C"
