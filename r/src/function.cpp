// tf_function's C++ half: an R function's call walked into the front-end layer's trace cache
// (kiln::DynamicFunction), traced through an R callback on a miss, and the graph run; and
// cond / while_loop for R AutoGraph. R is only ever called from the thread that called in.
#include <cstring>
#include <unordered_map>

#include "kiln_r.h"

namespace kr {
namespace {

// One tf_function: its trace cache and, per trace, how its flat outputs rebuild the R value
// the function returned (R_NilValue: a single tensor).
struct RFunction {
  explicit RFunction(kiln::FunctionOptions options) : fn(std::move(options)) {}
  kiln::DynamicFunction fn;
  std::unordered_map<const void*, Rcpp::RObject> structures;
};

RFunction& function_of(SEXP p) { return owned_of<RFunction>(p, "kiln function"); }

// An R vector as Python prints the value reticulate would make of it: 2.0, [1.0, -1.0], 2, True, 'a'.
std::string value_text(SEXP x) {
  const R_xlen_t n = Rf_xlength(x);
  auto one = [&](R_xlen_t i) -> std::string {
    switch (TYPEOF(x)) {
      case REALSXP:
        return kiln::detail::value_text(REAL(x)[i]);
      case INTSXP:
        return kiln::detail::value_text(INTEGER(x)[i]);
      case LGLSXP:
        return kiln::detail::value_text(LOGICAL(x)[i] != 0);
      case STRSXP:
        return kiln::detail::value_text(std::string(CHAR(STRING_ELT(x, i))));
      default:
        return "?";
    }
  };
  if (n == 1) return one(0);
  std::string s = "[";
  for (R_xlen_t i = 0; i < n && i < 64; ++i) s += (i ? ", " : "") + one(i);
  return s + (n > 64 ? ", ...]" : "]");
}

bool is_spec(SEXP x) { return TYPEOF(x) == VECSXP && Rf_inherits(x, "kiln_tensor_spec"); }

kiln::TensorSpec spec_of(SEXP x) {
  kiln::TensorSpec s;
  SEXP shape = VECTOR_ELT(x, 0);
  if (Rf_isNull(shape)) {
    s.shape = kiln::TensorShape::unknown();
  } else {
    std::vector<int64_t> dims;
    SEXP d = PROTECT(Rf_coerceVector(shape, REALSXP));
    for (R_xlen_t i = 0; i < Rf_xlength(d); ++i)
      dims.push_back(ISNAN(REAL(d)[i]) ? -1 : static_cast<int64_t>(REAL(d)[i]));
    UNPROTECT(1);
    s.shape = kiln::TensorShape(dims);
  }
  s.dtype = dtype_from(VECTOR_ELT(x, 1));
  if (!Rf_isNull(VECTOR_ELT(x, 2))) s.name = CHAR(STRING_ELT(VECTOR_ELT(x, 2), 0));
  return s;
}

constexpr int kMaxDepth = 256;

// R arguments, depth first: tensors (and specs) are the graph's inputs, in this order; the
// R side fills placeholders in by the same walk (.kiln_fill).
void walk(kiln::CallArgs& a, SEXP x, std::string_view name, int depth) {
  if (depth > kMaxDepth) throw kiln::InvalidArgumentError("an argument nests deeper than 256 levels");
  if (is_tensor(x)) {
    a.tensor(tensor_of(x), name);
  } else if (is_spec(x)) {
    a.spec(spec_of(x), name);
  } else if (Rf_isNull(x)) {
    a.value("NULL", "", "None", name);
  } else if (TYPEOF(x) == VECSXP) {
    const R_xlen_t n = Rf_xlength(x);
    a.structure("list", static_cast<size_t>(n), name);
    SEXP names = Rf_getAttrib(x, R_NamesSymbol);
    for (R_xlen_t i = 0; i < n; ++i) {
      if (!Rf_isNull(names)) a.value("name", CHAR(STRING_ELT(names, i)), "", name);
      const std::string element = a.recording() ? std::string(name) + "_" + std::to_string(i) : std::string();
      walk(a, VECTOR_ELT(x, i), element, depth + 1);
    }
  } else if (TYPEOF(x) == REALSXP || TYPEOF(x) == INTSXP || TYPEOF(x) == LGLSXP || TYPEOF(x) == STRSXP) {
    // By type and value, as R tensorflow's arguments reach TensorFlow (Python values).
    const char* type = TYPEOF(x) == REALSXP  ? "double"
                       : TYPEOF(x) == INTSXP ? "integer"
                       : TYPEOF(x) == LGLSXP ? "logical"
                                             : "character";
    std::string key;
    SEXP dims = Rf_getAttrib(x, R_DimSymbol);
    if (!Rf_isNull(dims)) key.append(reinterpret_cast<const char*>(INTEGER(dims)), Rf_length(dims) * sizeof(int));
    key += '|';
    if (TYPEOF(x) == STRSXP) {
      for (R_xlen_t i = 0; i < Rf_xlength(x); ++i) {
        key += CHAR(STRING_ELT(x, i));
        key += '\0';
      }
    } else {
      const size_t bytes = TYPEOF(x) == REALSXP ? sizeof(double) : sizeof(int);
      key.append(static_cast<const char*>(DATAPTR(x)), static_cast<size_t>(Rf_xlength(x)) * bytes);
    }
    a.value(type, key, a.recording() ? value_text(x) : std::string(), name);
  } else {
    // Any other R object (a variable, a function, an environment) by identity.
    char id[32];
    std::snprintf(id, sizeof id, "%p", static_cast<void*>(x));
    a.value(Rf_type2char(TYPEOF(x)), id, a.recording() ? std::string("<") + Rf_type2char(TYPEOF(x)) + ">" : "", name);
  }
}

kiln::DynamicFunction::Walker walker(SEXP args, SEXP names) {
  return [args, names](kiln::CallArgs& a) {
    for (R_xlen_t i = 0; i < Rf_xlength(args); ++i) walk(a, VECTOR_ELT(args, i), CHAR(STRING_ELT(names, i)), 0);
  };
}

SEXP trace_hook = R_NilValue;

// What a trace needs from the call: f, its arguments, and where to put the structure.
struct TraceRequest {
  SEXP f, args;
  SEXP structure = R_NilValue;
};

// The trace: R's .trace(f, args, placeholders) returns list(flat tensors, structure). The
// lambda holds one pointer, so the std::function needs no allocation on the hot path.
kiln::DynamicFunction::Trace tracer(TraceRequest* req) {
  return [req](const std::vector<kiln::Tensor>& placeholders) {
    Rcpp::List ph(placeholders.size());
    for (size_t i = 0; i < placeholders.size(); ++i) ph[i] = Rcpp::RObject(wrap_tensor(placeholders[i]));
    Rcpp::List result = Rcpp::Function(trace_hook)(req->f, req->args, ph);
    Rcpp::List flat = result[0];
    std::vector<kiln::Tensor> out;
    for (R_xlen_t i = 0; i < flat.size(); ++i) out.push_back(tensor_of(flat[i]));
    req->structure = result[1];
    R_PreserveObject(req->structure);  // released once recorded (below)
    return out;
  };
}

SEXP call_directly_marker() {
  static SEXP s = Rf_install(".kiln_call_directly");
  return s;
}

}  // namespace

void set_trace_hook(SEXP trace) {
  if (trace_hook != R_NilValue) R_ReleaseObject(trace_hook);
  R_PreserveObject(trace);
  trace_hook = trace;
}

}  // namespace kr

using namespace kr;

extern "C" {

SEXP kr_function_new(SEXP name, SEXP arg_names, SEXP reduce_retracing) {
  KR_BEGIN
  kiln::FunctionOptions o;
  o.name = CHAR(STRING_ELT(name, 0));
  for (R_xlen_t i = 0; i < Rf_xlength(arg_names); ++i) o.arg_names.emplace_back(CHAR(STRING_ELT(arg_names, i)));
  o.reduce_retracing = Rf_asLogical(reduce_retracing) == TRUE;
  return wrap_owned(new RFunction(std::move(o)), "kiln function");
  KR_END
}

// A call. Returns the single tensor, list(flat outputs, structure) for anything else, or the
// symbol .kiln_call_directly when the R function must run as it is (eagerly).
SEXP kr_function_call(SEXP fp, SEXP args, SEXP names, SEXP f_r) {
  KR_BEGIN
  if (kiln::DynamicFunction::must_call_directly()) return call_directly_marker();
  RFunction& f = function_of(fp);
  TraceRequest req{.f = f_r, .args = args};
  kiln::DynamicFunction::Result r = f.fn.call(walker(args, names), tracer(&req));
  SEXP structure = req.structure;
  const void* id = r.concrete.impl().get();
  if (structure != R_NilValue || r.traced) {
    f.structures[id] = Rcpp::RObject(structure);
    if (structure != R_NilValue) R_ReleaseObject(structure);
  }
  auto it = f.structures.find(id);
  SEXP s = it == f.structures.end() ? R_NilValue : static_cast<SEXP>(it->second);
  if (Rf_isNull(s) && r.outputs.size() == 1) return wrap_tensor(std::move(r.outputs[0]));
  SEXP flat = PROTECT(Rf_allocVector(VECSXP, static_cast<R_xlen_t>(r.outputs.size())));
  for (size_t i = 0; i < r.outputs.size(); ++i)
    SET_VECTOR_ELT(flat, static_cast<R_xlen_t>(i), wrap_tensor(r.outputs[i]));
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, flat);
  SET_VECTOR_ELT(out, 1, s);
  UNPROTECT(2);
  return out;
  KR_END
}

SEXP kr_function_concrete(SEXP fp, SEXP args, SEXP names, SEXP f_r) {
  KR_BEGIN
  RFunction& f = function_of(fp);
  TraceRequest req{.f = f_r, .args = args};
  kiln::DynamicFunction::Result r = f.fn.concrete(walker(args, names), tracer(&req));
  SEXP structure = req.structure;
  if (r.traced) {
    f.structures[r.concrete.impl().get()] = Rcpp::RObject(structure);
    if (structure != R_NilValue) R_ReleaseObject(structure);
  }
  return wrap_owned(new kiln::ConcreteFunction(r.concrete), "concrete function");
  KR_END
}

// what: "signatures", "tracing_count", "trace_log", "clear".
SEXP kr_function_info(SEXP fp, SEXP what) {
  KR_BEGIN
  RFunction& f = function_of(fp);
  const std::string w = CHAR(STRING_ELT(what, 0));
  if (w == "signatures") return Rf_mkString(f.fn.pretty_printed_concrete_signatures().c_str());
  if (w == "tracing_count") return Rf_ScalarInteger(f.fn.tracing_count());
  if (w == "clear") {
    f.fn.clear_cache();
    f.structures.clear();
    return R_NilValue;
  }
  if (w == "trace_log") {
    auto log = f.fn.trace_log();
    SEXP out = PROTECT(Rf_allocVector(STRSXP, static_cast<R_xlen_t>(log.size())));
    for (size_t i = 0; i < log.size(); ++i) SET_STRING_ELT(out, static_cast<R_xlen_t>(i), Rf_mkChar(log[i].c_str()));
    UNPROTECT(1);
    return out;
  }
  throw kiln::InvalidArgumentError("unknown function query: " + w);
  KR_END
}

// what: "graph_def", "signature", "name", "optimized_graph_def".
SEXP kr_concrete_info(SEXP cp, SEXP what) {
  KR_BEGIN
  const auto& cf = owned_of<kiln::ConcreteFunction>(cp, "concrete function");
  const std::string w = CHAR(STRING_ELT(what, 0));
  if (w == "graph_def") return Rf_mkString(cf.as_graph_def().str().c_str());
  if (w == "optimized_graph_def") return Rf_mkString(cf.optimized_graph_def().str().c_str());
  if (w == "signature") return Rf_mkString(cf.pretty_printed_signature().c_str());
  if (w == "name") return Rf_mkString(cf.name().c_str());
  throw kiln::InvalidArgumentError("unknown concrete function query: " + w);
  KR_END
}

SEXP kr_concrete_call(SEXP cp, SEXP inputs) {
  KR_BEGIN
  const auto& cf = owned_of<kiln::ConcreteFunction>(cp, "concrete function");
  std::vector<kiln::Tensor> in;
  for (R_xlen_t i = 0; i < Rf_xlength(inputs); ++i) in.push_back(to_tensor(VECTOR_ELT(inputs, i), -1, false));
  std::vector<kiln::Tensor> out = cf(in);
  SEXP list = PROTECT(Rf_allocVector(VECSXP, static_cast<R_xlen_t>(out.size())));
  for (size_t i = 0; i < out.size(); ++i) SET_VECTOR_ELT(list, static_cast<R_xlen_t>(i), wrap_tensor(out[i]));
  UNPROTECT(1);
  return list;
  KR_END
}

SEXP kr_run_functions_eagerly(SEXP enabled) {
  KR_BEGIN
  if (!Rf_isNull(enabled)) kiln::config::run_functions_eagerly(Rf_asLogical(enabled) == TRUE);
  return Rf_ScalarLogical(kiln::config::functions_run_eagerly());
  KR_END
}

SEXP kr_tracing() { return Rf_ScalarLogical(kiln::detail::tracing_active()); }

std::vector<kiln::Tensor> r_tensor_list(SEXP x) {
  std::vector<kiln::Tensor> out;
  for (R_xlen_t i = 0; i < Rf_xlength(x); ++i) out.push_back(to_tensor(VECTOR_ELT(x, i), -1, true));
  return out;
}
SEXP tensor_list(const std::vector<kiln::Tensor>& v) {
  SEXP list = PROTECT(Rf_allocVector(VECSXP, static_cast<R_xlen_t>(v.size())));
  for (size_t i = 0; i < v.size(); ++i) SET_VECTOR_ELT(list, static_cast<R_xlen_t>(i), wrap_tensor(v[i]));
  UNPROTECT(1);
  return list;
}

// A graph cond: each branch is an R function of no arguments returning a list of tensors.
SEXP kr_cond(SEXP pred, SEXP then_fn, SEXP else_fn) {
  KR_BEGIN
  const kiln::Tensor p = to_tensor(pred, -1, false);
  auto branch = [](SEXP fn) {
    return [fn]() -> std::vector<kiln::Tensor> {
      Rcpp::RObject r = Rcpp::Function(fn)();
      return r_tensor_list(r);
    };
  };
  return tensor_list(kiln::cond(p, branch(then_fn), branch(else_fn)));
  KR_END
}

// A graph while loop over a list of tensors: cond_fn(vars) -> bool tensor, body_fn(vars) -> vars.
SEXP kr_while(SEXP cond_fn, SEXP body_fn, SEXP vars, SEXP maximum_iterations) {
  KR_BEGIN
  kiln::WhileOptions o;
  if (!Rf_isNull(maximum_iterations)) o.maximum_iterations = static_cast<int64_t>(Rf_asReal(maximum_iterations));
  auto cond = [cond_fn](const std::vector<kiln::Tensor>& v) {
    Rcpp::RObject r = Rcpp::Function(cond_fn)(Rcpp::RObject(tensor_list(v)));
    return to_tensor(r, -1, false);
  };
  auto body = [body_fn](const std::vector<kiln::Tensor>& v) {
    Rcpp::RObject r = Rcpp::Function(body_fn)(Rcpp::RObject(tensor_list(v)));
    return r_tensor_list(r);
  };
  return tensor_list(kiln::while_loop(cond, body, r_tensor_list(vars), o));
  KR_END
}

}  // extern "C"
