// kiln.function's C++ half: the call key of Python arguments, the cache lookup and the call
// of the cached concrete function: the hot path of a traced call, with no Python frame. The
// Python half (kiln/_function.py) canonicalizes arguments, traces, and owns the structures.
//
// The key follows TensorFlow's trace types: tensors and numpy arrays by dtype and shape,
// bool/int/float/str/None by type and value, tuples, lists, dicts (sorted keys) and
// namedtuples by structure, TensorSpecs as the tensors they stand for, kiln.Variables by dtype,
// shape, trainability and aliasing (TensorFlow's VariableSpec: a trace serves every variable
// of that spec, rebound to the call's), any other object by identity through the Python
// layer (a weak reference: a deleted object never matches again).
#include "kiln/function.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "convert.h"
#include "interrupt.h"
#include "kiln/graph_scope.h"
#include "kiln/host_function.h"

namespace kiln::python {
namespace {

// Key words of the Python kinds the C++ core has no tag for (values far from its KeyTag).
enum PyKeyTag : uint64_t {
  kKeyNone = 0x7000,
  kKeyTuple,
  kKeyList,
  kKeyDict,
  kKeyNamedTuple,
  kKeyObject,
  kKeyIterator,
  kKeyBigInt,
  kKeyVariable,
};

// What walks the arguments: the key and the tensors to feed always; the signature (names,
// dtypes, shapes, printable values) only on a miss.
struct Walk {
  detail::KeyBuilder& key;
  detail::ArgTensors& tensors;
  detail::CallSignature* sig;  // null on the hot path
  bool specs_allowed;          // get_concrete_function: TensorSpecs stand for tensors
  // The states of the kiln.Variable arguments, each once, in walk order.
  std::vector<std::shared_ptr<Resource>> variables = {};
  int leaf = 0;   // tensor leaves so far: names the nested ones
  int depth = 0;  // nesting of the value being walked
};

struct Hooks2 {
  nb::object spec_type;        // kiln.TensorSpec
  nb::object object_key;       // object_key(obj) -> int, unique for the object's lifetime
  nb::object ndarray;          // numpy.ndarray
  nb::object numpy_scalar;     // numpy.generic: numpy scalars are tensors too
  nb::object as_tensor;        // convert_to_tensor
  nb::object spec_fields;      // spec -> (dims tuple or None, dtype enum, name or None)
  nb::object variable_type;    // kiln.Variable (its _core is a kiln::Variable)
  nb::object iterator_type;    // kiln.data.Iterator
  nb::object iterator_fields;  // iterator -> (its handle tensor, its element structure as text)
};
Hooks2& hooks2() {
  static Hooks2* h = new Hooks2();  // never destroyed (Python objects outlive no interpreter)
  return *h;
}

void value_entry(Walk& w, const std::string& name, std::string text, std::string type) {
  if (!w.sig) return;
  detail::ArgEntry e;
  e.kind = detail::ArgEntry::kValue;
  e.name = name;
  e.value = std::move(text);
  e.value_type = std::move(type);
  w.sig->entries.push_back(std::move(e));
}

std::string leaf_name(Walk& w, const std::string& name, bool top) {
  const int i = w.leaf++;
  return top ? name : name + "_" + std::to_string(i);
}

void tensor_leaf(Walk& w, const Tensor& t, const std::string& name, bool top) {
  detail::key_tensor(w.key, t);
  w.tensors.push_back(t);
  if (w.sig) {
    detail::ArgEntry e;
    e.kind = detail::ArgEntry::kTensor;
    e.name = leaf_name(w, name, top);
    e.dtype = t.dtype();
    e.shape = t.shape();
    w.sig->entries.push_back(std::move(e));
  } else {
    ++w.leaf;
  }
}

TensorSpec spec_of(nb::handle spec) {
  nb::tuple f = nb::cast<nb::tuple>(hooks2().spec_fields(spec));
  TensorSpec s;
  if (f[0].is_none()) {
    s.shape = TensorShape::unknown();
  } else {
    std::vector<int64_t> dims;
    for (nb::handle d : f[0]) dims.push_back(d.is_none() ? -1 : nb::cast<int64_t>(d));
    s.shape = TensorShape(dims);
  }
  s.dtype = static_cast<DType>(nb::cast<int>(f[1]));
  if (!f[2].is_none()) s.name = nb::cast<std::string>(f[2]);
  return s;
}

void walk(Walk& w, nb::handle obj, const std::string& name, bool top);

// A kiln.Variable: keyed by dtype, shape and trainability, and by which earlier variable
// argument of this call it is, if any (f(a, a) and f(a, b) are traced apart, as TensorFlow's
// alias ids make them).
void variable_leaf(Walk& w, nb::handle obj, const std::string& name) {
  const Variable& v = nb::cast<const Variable&>(obj.attr("_core"));
  std::shared_ptr<Resource> state = v.resource();
  std::vector<std::shared_ptr<Resource>>& seen = w.variables;
  uint64_t alias = 0;
  while (alias < seen.size() && seen[alias] != state) ++alias;
  w.key.word(kKeyVariable);
  w.key.word(static_cast<uint64_t>(v.dtype()));
  const TensorShape shape = v.shape();
  w.key.word(static_cast<uint64_t>(shape.rank()));
  if (shape.rank() > 0)
    for (int64_t d : shape.dims()) w.key.word(static_cast<uint64_t>(d));
  w.key.word(v.trainable());
  w.key.word(alias == seen.size() ? ~uint64_t{0} : alias);
  if (alias == seen.size()) seen.push_back(std::move(state));
  if (w.sig)
    value_entry(w, name, nb::cast<std::string>(nb::repr(obj)), nb::cast<std::string>(obj.type().attr("__name__")));
}

void walk_sequence(Walk& w, nb::handle seq, uint64_t tag, const std::string& name, const char* what) {
  const size_t n = nb::len(seq);
  w.key.word(tag);
  w.key.word(n);
  value_entry(w, name, std::string(what) + "(" + std::to_string(n) + ")", what);
  for (nb::handle item : seq) walk(w, item, name, false);
}

// Nesting deeper than this (or a list that contains itself) is refused, not a stack overflow.
constexpr int kMaxDepth = 512;

void walk(Walk& w, nb::handle obj, const std::string& name, bool top) {
  if (++w.depth > kMaxDepth) {
    PyErr_SetString(PyExc_RecursionError,
                    "kiln.function: an argument nests deeper than 512 levels (or contains itself)");
    throw nb::python_error();
  }
  struct Leave {
    int& depth;
    ~Leave() { --depth; }
  } leave{w.depth};
  PyObject* p = obj.ptr();
  if (nb::isinstance<Tensor>(obj)) {
    const Tensor& t = nb::cast<const Tensor&>(obj);
    if (t.is_symbolic())
      throw nb::type_error("A symbolic tensor of another trace was passed to a kiln.function from outside it.");
    tensor_leaf(w, t, name, top);
  } else if (p == Py_None) {
    w.key.word(kKeyNone);
    value_entry(w, name, "None", "NoneType");
  } else if (PyBool_Check(p)) {
    // Python numbers key by value, as TensorFlow's literals compare: True == 1 == 1.0.
    w.key.word(detail::kKeyNumber | detail::number_type_code<int64_t>() << 8);
    w.key.word(p == Py_True);
    value_entry(w, name, p == Py_True ? "True" : "False", "bool");
  } else if (PyLong_CheckExact(p)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow) {
      w.key.word(kKeyBigInt);
      detail::key_string(w.key, nb::cast<std::string>(nb::str(obj)));
    } else {
      w.key.word(detail::kKeyNumber | detail::number_type_code<int64_t>() << 8);
      w.key.word(static_cast<uint64_t>(v));
    }
    if (w.sig) value_entry(w, name, nb::cast<std::string>(nb::repr(obj)), "int");
  } else if (PyFloat_CheckExact(p)) {
    const double v = PyFloat_AS_DOUBLE(p);
    if (v == std::trunc(v) && std::fabs(v) < 9.2e18) {  // an integral float keys as the int it equals
      w.key.word(detail::kKeyNumber | detail::number_type_code<int64_t>() << 8);
      w.key.word(static_cast<uint64_t>(static_cast<int64_t>(v)));
    } else {
      w.key.word(detail::kKeyNumber | detail::number_type_code<double>() << 8);
      w.key.word(detail::number_bits(v));
    }
    if (w.sig) value_entry(w, name, nb::cast<std::string>(nb::repr(obj)), "float");
  } else if (PyUnicode_CheckExact(p)) {
    Py_ssize_t size = 0;
    const char* s = PyUnicode_AsUTF8AndSize(p, &size);
    if (!s) throw nb::python_error();
    detail::key_string(w.key, std::string_view(s, static_cast<size_t>(size)));
    if (w.sig) value_entry(w, name, nb::cast<std::string>(nb::repr(obj)), "str");
  } else if (PyTuple_CheckExact(p)) {
    walk_sequence(w, obj, kKeyTuple, name, "tuple");
  } else if (PyList_CheckExact(p)) {
    walk_sequence(w, obj, kKeyList, name, "list");
  } else if (PyDict_CheckExact(p)) {
    // Key order is irrelevant (TensorFlow sorts the keys); keys are part of the structure.
    nb::list keys = nb::steal<nb::list>(PyDict_Keys(p));
    if (PyList_Sort(keys.ptr()) != 0) throw nb::python_error();
    w.key.word(kKeyDict);
    w.key.word(nb::len(keys));
    value_entry(w, name, "dict" + nb::cast<std::string>(nb::repr(keys)), "dict");
    for (nb::handle k : keys) {
      walk(w, k, name, false);
      walk(w, nb::handle(PyDict_GetItem(p, k.ptr())), name, false);
    }
  } else if (PyTuple_Check(p) && nb::hasattr(obj, "_fields")) {
    // A namedtuple: its type (by identity) and its fields.
    w.key.word(kKeyNamedTuple);
    w.key.word(nb::cast<uint64_t>(hooks2().object_key(obj.type())));
    walk_sequence(w, obj, kKeyTuple, name, nb::cast<std::string>(obj.type().attr("__name__")).c_str());
  } else if (nb::isinstance(obj, hooks2().spec_type)) {
    if (!w.specs_allowed)
      throw nb::type_error(
          "A TensorSpec stands for a tensor in get_concrete_function(); a call needs the tensor itself.");
    const TensorSpec s = spec_of(obj);
    detail::key_spec(w.key, s);
    w.tensors.push_back(Tensor());
    if (w.sig) {
      detail::ArgEntry e;
      e.kind = detail::ArgEntry::kTensor;
      e.name = s.name.empty() ? leaf_name(w, name, top) : (++w.leaf, s.name);
      e.dtype = s.dtype;
      e.shape = s.shape;
      w.sig->entries.push_back(std::move(e));
    } else {
      ++w.leaf;
    }
  } else if (nb::isinstance(obj, hooks2().ndarray) || nb::isinstance(obj, hooks2().numpy_scalar)) {
    tensor_leaf(w, nb::cast<Tensor>(hooks2().as_tensor(obj)), name, top);
  } else if (hooks2().variable_type.is_valid() && nb::isinstance(obj, hooks2().variable_type)) {
    variable_leaf(w, obj, name);
  } else if (hooks2().iterator_type.is_valid() && nb::isinstance(obj, hooks2().iterator_type)) {
    // A tf.data iterator: keyed by its element structure (TensorFlow's IteratorSpec) and passed
    // in as its handle tensor, so one trace serves every iterator of that structure (Keras hands
    // its train function a new iterator each epoch).
    nb::tuple f = nb::cast<nb::tuple>(hooks2().iterator_fields(obj));
    w.key.word(kKeyIterator);
    std::string spec = nb::cast<std::string>(f[1]);
    detail::key_string(w.key, spec);
    // The signature says the structure too: traces are reused by signature, and every
    // iterator's handle is the same kind of tensor.
    value_entry(w, name, "IteratorSpec(" + spec + ")", "IteratorSpec");
    tensor_leaf(w, nb::cast<Tensor>(f[0]), name, top);
  } else {
    w.key.word(kKeyObject);
    w.key.word(nb::cast<uint64_t>(hooks2().object_key(obj)));
    if (w.sig)
      value_entry(w, name, nb::cast<std::string>(nb::repr(obj)), nb::cast<std::string>(obj.type().attr("__name__")));
  }
}

// A trace rebound to other variable arguments than it was traced with, most recent last.
struct Rebinds {
  static constexpr size_t kMax = 8;  // past it the oldest goes (and holds its variables no more)
  struct Entry {
    std::vector<const Resource*> variables;
    std::shared_ptr<detail::ConcreteImpl> impl;
  };
  std::vector<Entry> entries;
};

// One traced concrete function as the Python layer sees it.
struct Record {
  nb::object record;  // kiln._function.ConcreteFunction
  bool single = false;
  // The variable arguments it was traced with, and its copies for others (guarded by the GIL).
  std::vector<std::shared_ptr<Resource>> variables = {};
  std::shared_ptr<Rebinds> rebinds = {};
};

// The trace `cf` (its record r) for a call whose variable arguments are `variables`: itself
// when they are the ones it was traced with, else a copy rebound to them (made once, kept).
std::shared_ptr<detail::ConcreteImpl> for_variables(const std::shared_ptr<detail::ConcreteImpl>& cf, const Record& r,
                                                    const std::vector<std::shared_ptr<Resource>>& variables) {
  if (variables == r.variables) return cf;  // the very variables it was traced with
  if (variables.size() != r.variables.size() || !r.rebinds)
    throw InternalError("kiln.function: a trace keyed by variable arguments has no record of them");
  std::vector<const Resource*> key;
  for (const auto& v : variables) key.push_back(v.get());
  auto& entries = r.rebinds->entries;
  for (auto it = entries.begin(); it != entries.end(); ++it)
    if (it->variables == key) {
      std::rotate(it, it + 1, entries.end());  // most recent last
      return entries.back().impl;
    }
  std::vector<const Resource*> from;
  for (const auto& v : r.variables) from.push_back(v.get());
  auto impl = detail::rebind_resources(*cf, from, variables);
  if (entries.size() == Rebinds::kMax) entries.erase(entries.begin());
  entries.push_back(Rebinds::Entry{.variables = std::move(key), .impl = impl});
  return impl;
}

class PyFunction {
 public:
  PyFunction(nb::object trace, std::string name, std::vector<std::string> arg_names, bool reduce_retracing)
      : trace_(std::move(trace)),
        core_(detail::make_function_core(
            FunctionOptions{.name = name,
                            .arg_names = std::move(arg_names),
                            .reduce_retracing = reduce_retracing,
                            .retracing_warning = false},  // kiln/_function.py warns in TF's words
            name)) {}

  // A call: the result, or NotImplemented when the Python function must run directly (run
  // eagerly, inside another trace, under an eager tape).
  nb::object call(nb::tuple args, nb::tuple names) {
    if (detail::call_directly_now()) return nb::borrow(Py_NotImplemented);
    ++calls_;
    detail::KeyBuilder key;
    detail::ArgTensors tensors;
    Walk w{.key = key, .tensors = tensors, .sig = nullptr, .specs_allowed = false};
    walk_args(w, args, names);
    std::shared_ptr<detail::ConcreteImpl> cf = detail::cached_concrete(*core_, key);
    if (!cf) cf = miss(key, args, names, false, w.variables);
    // Taken before the GIL is released: a prune (another thread's trace) cannot take it away.
    const Record r = record_for(cf.get());
    if (!w.variables.empty()) cf = for_variables(cf, r, w.variables);
    std::vector<Tensor> outs;
    {
      InterruptibleCall interruptible;  // Ctrl-C stops the graph (kiln/limits.h)
      nb::gil_scoped_release unlocked;  // the graph may run on kiln's threads
      outs = detail::call_concrete(*cf, tensors);
    }
    if (r.single) return nb::cast(std::move(outs[0]));
    return r.record.attr("_rebuild")(nb::cast(std::move(outs)));
  }

  // get_concrete_function: TensorSpecs allowed; the Python ConcreteFunction.
  nb::object concrete(nb::tuple args, nb::tuple names) {
    detail::KeyBuilder key;
    detail::ArgTensors tensors;
    Walk w{.key = key, .tensors = tensors, .sig = nullptr, .specs_allowed = true};
    walk_args(w, args, names);
    std::shared_ptr<detail::ConcreteImpl> cf = detail::cached_concrete(*core_, key);
    if (!cf) cf = miss(key, args, names, true, w.variables);
    return record_for(cf.get()).record;
  }

  // The Python ConcreteFunctions in trace order (evicted traces are gone).
  nb::list records() const {
    nb::list out;
    for (const ConcreteFunction& c : detail::concrete_functions(*core_)) {
      auto it = records_.find(c.impl().get());
      if (it != records_.end()) out.append(it->second.record);
    }
    return out;
  }
  int tracing_count() const { return detail::tracing_count(*core_); }
  uint64_t calls() const { return calls_; }
  std::vector<std::string> trace_log() const { return detail::trace_log(*core_); }
  void clear() {
    detail::clear_cache(*core_);
    prune_records();
  }
  size_t num_records() const { return records_.size(); }

 private:
  // The record of a trace found in the cache. Another thread may have published the trace
  // and not yet recorded it (it needs the GIL, which this thread holds): wait for it.
  const Record& record_for(const detail::ConcreteImpl* cf) {
    for (int waits = 0;; ++waits) {
      auto it = records_.find(cf);
      if (it != records_.end()) return it->second;
      if (waits == 10'000'000) throw InternalError("a trace of this function has no Python record");
      nb::gil_scoped_release unlocked;
      std::this_thread::yield();
    }
  }

  // Drops the records of traces the cache no longer holds (evicted or cleared), so they
  // live no longer than their traces: the records are what keeps an evicted trace alive.
  // Called with the GIL, as every use of records_ is.
  void prune_records() {
    std::unordered_set<const detail::ConcreteImpl*> live;
    for (const ConcreteFunction& c : detail::concrete_functions(*core_)) live.insert(c.impl().get());
    for (auto it = records_.begin(); it != records_.end();)
      it = live.count(it->first) ? std::next(it) : records_.erase(it);
  }

  static void walk_args(Walk& w, nb::tuple args, nb::tuple names) {
    const size_t n = nb::len(args);
    for (size_t i = 0; i < n; ++i) walk(w, args[i], nb::cast<std::string>(names[i]), true);
  }

  // `variables`: this call's variable arguments, which a trace it makes is traced with.
  std::shared_ptr<detail::ConcreteImpl> miss(const detail::KeyBuilder& key, nb::tuple args, nb::tuple names,
                                             bool specs_allowed,
                                             const std::vector<std::shared_ptr<Resource>>& variables) {
    detail::CallSignature sig;
    {
      detail::KeyBuilder scratch;
      detail::ArgTensors unused;
      Walk w{.key = scratch, .tensors = unused, .sig = &sig, .specs_allowed = specs_allowed};
      walk_args(w, args, names);
    }
    nb::object traced;  // the record of a trace made by this call
    const uint64_t call_index = calls_;
    detail::TraceBody body = [&](const std::vector<Tensor>& placeholders) {
      nb::gil_scoped_acquire gil;
      nb::list ph;
      for (const Tensor& t : placeholders) ph.append(nb::cast(t));
      nb::tuple result = nb::cast<nb::tuple>(trace_(args, ph, call_index));
      traced = result[1];
      return nb::cast<std::vector<Tensor>>(result[0]);
    };
    std::shared_ptr<detail::ConcreteImpl> cf;
    {
      nb::gil_scoped_release unlocked;  // another thread may be tracing this key: it needs the GIL
      cf = detail::concrete_for(
          *core_, key, [&] { return sig; }, body);
    }
    if (traced.is_valid()) {
      const bool single = nb::cast<bool>(traced.attr("_single"));
      records_[cf.get()] = Record{.record = traced,
                                  .single = single,
                                  .variables = variables,
                                  .rebinds = variables.empty() ? nullptr : std::make_shared<Rebinds>()};
      traced.attr("_attach")(nb::cast(ConcreteFunction(cf)));
      if (records_.size() > kPruneAbove && records_.size() > 2 * detail::concrete_functions(*core_).size())
        prune_records();
    }
    return cf;
  }

  nb::object trace_;  // trace(args, placeholders, call_index) -> (flat outputs, ConcreteFunction record)
  std::shared_ptr<detail::FunctionCore> core_;
  std::unordered_map<const detail::ConcreteImpl*, Record> records_;  // guarded by the GIL
  // Records are pruned when they outnumber the cached traces twice over (amortized O(1)).
  static constexpr size_t kPruneAbove = 64;
  uint64_t calls_ = 0;
};

nb::list operations_of(const GraphView& g) {
  nb::list ops;
  for (const Operation& op : g.operations) {
    nb::dict d;
    d["name"] = op.name;
    d["type"] = op.type;
    d["inputs"] = op.inputs;
    d["control_inputs"] = op.control_inputs;
    nb::dict attrs;
    for (const auto& [k, v] : op.attrs) attrs[nb::str(k.c_str())] = v;
    d["attrs"] = attrs;
    d["outputs"] = op.outputs;
    ops.append(d);
  }
  return ops;
}

nb::tuple spec_tuple(const TensorSpec& s) {
  nb::object dims = nb::none();
  if (s.shape.rank() >= 0) {
    nb::list l;
    for (int64_t d : s.shape.dims()) l.append(d < 0 ? nb::none() : nb::cast(d));
    dims = nb::tuple(l);
  }
  return nb::make_tuple(dims, dtype_object(s.dtype), s.name);
}

// kiln.__internal__.FuncGraph(...).as_default(): a GraphScope that Python opens and closes
// explicitly (a `with` block), not when the garbage collector gets to it.
class PyGraphScope {
 public:
  void open() {
    if (scope_) throw FailedPreconditionError("this graph is already the default graph");
    scope_ = std::make_unique<GraphScope>();
  }
  void close() {
    if (scope_ && !scope_->innermost())
      throw FailedPreconditionError("graphs must stop being the default in the reverse order they became it");
    scope_.reset();
  }
  Tensor placeholder(nb::handle dtype, std::optional<std::vector<std::optional<int64_t>>> dims,
                     const std::string& name) {
    if (!scope_ || !scope_->innermost())
      throw FailedPreconditionError(
          "tf.compat.v1.placeholder() needs a graph: use it inside "
          "FuncGraph(...).as_default()");
    TensorShape shape = TensorShape::unknown();
    if (dims) {
      std::vector<int64_t> d;
      for (const auto& v : *dims) d.push_back(v ? *v : -1);
      shape = TensorShape(d);
    }
    return scope_->placeholder(dtype_from(dtype), shape, name);
  }

 private:
  std::unique_ptr<GraphScope> scope_;
};

}  // namespace

void bind_function(nb::module_& m) {
  nb::class_<PyGraphScope>(m, "_GraphScope")
      .def(nb::init<>())
      .def("open", &PyGraphScope::open)
      .def("close", &PyGraphScope::close)
      .def("placeholder", &PyGraphScope::placeholder, nb::arg("dtype"), nb::arg("dims").none(), nb::arg("name"));
  m.def("_set_function_hooks", [](nb::object spec_type, nb::object object_key, nb::object ndarray,
                                  nb::object numpy_scalar, nb::object as_tensor, nb::object spec_fields) {
    hooks2() = Hooks2{.spec_type = spec_type,
                      .object_key = object_key,
                      .ndarray = ndarray,
                      .numpy_scalar = numpy_scalar,
                      .as_tensor = as_tensor,
                      .spec_fields = spec_fields,
                      .variable_type = hooks2().variable_type,
                      .iterator_type = hooks2().iterator_type,
                      .iterator_fields = hooks2().iterator_fields};
  });
  m.def("_set_iterator_hooks", [](nb::object iterator_type, nb::object iterator_fields) {
    hooks2().iterator_type = iterator_type;
    hooks2().iterator_fields = iterator_fields;
  });
  // A concrete function called with other variables than it was traced with (same specs).
  m.def(
      "rebind_variables",
      [](const ConcreteFunction& cf, const std::vector<const Variable*>& traced,
         const std::vector<const Variable*>& given) {
        std::vector<const Resource*> from;
        std::vector<std::shared_ptr<Resource>> to;
        for (const Variable* v : traced) from.push_back(v->resource().get());
        for (const Variable* v : given) to.push_back(v->resource());
        return ConcreteFunction(detail::rebind_resources(*cf.impl(), from, to));
      },
      nb::arg("concrete"), nb::arg("traced"), nb::arg("given"));
  m.def("_set_variable_type", [](nb::object variable_type) { hooks2().variable_type = variable_type; });
  m.def("run_functions_eagerly", &config::run_functions_eagerly, nb::arg("enabled"));
  m.def("functions_run_eagerly", &config::functions_run_eagerly);
  m.def("call_directly_now", &detail::call_directly_now);
  m.def("tracing_active", &detail::tracing_active);
  // kiln.py_function: `f` takes and returns a list of tensors; it runs with the GIL taken
  // (kiln's threads run graphs with it released). A Python exception becomes the error
  // TensorFlow reports for a py_function's: its class by the exception's, its text first.
  m.def(
      "host_function",
      [](nb::callable f, std::vector<Tensor> inputs, nb::list dtype_objects) {
        std::vector<DType> output_dtypes;
        for (nb::handle d : dtype_objects) output_dtypes.push_back(dtype_from(d));
        // The callable is kept forever by the registry: a leaked reference, never released
        // after the interpreter is gone.
        auto* held = new nb::object(f);
        auto call = [held](const std::vector<Tensor>& in) {
          nb::gil_scoped_acquire gil;
          try {
            return nb::cast<std::vector<Tensor>>((*held)(in));
          } catch (nb::python_error& e) {
            // "ZeroDivisionError: division by zero" first, then the traceback, as TensorFlow's
            const std::string kind = nb::cast<std::string>(nb::str(e.type().attr("__name__")));
            const std::string message = nb::cast<std::string>(nb::str(e.value()));
            // TensorFlow's classes for a py_function's exceptions
            const std::string text = kind + ": " + message + "\n" + e.what();
            if (e.matches(PyExc_TypeError) || e.matches(PyExc_ValueError)) throw InvalidArgumentError(text);
            if (e.matches(PyExc_StopIteration)) throw OutOfRangeError(text);
            if (e.matches(PyExc_NotImplementedError)) throw UnimplementedError(text);
            if (e.matches(PyExc_MemoryError)) throw ResourceExhaustedError(text);
            throw UnknownError(text);
          } catch (nb::cast_error&) {
            throw InvalidArgumentError("py_function: the Python function must return tensors");
          }
        };
        return host_function(call, inputs, output_dtypes);
      },
      nb::arg("f"), nb::arg("inputs"), nb::arg("output_dtypes"));
  m.def("trace_serial", &detail::trace_serial);

  nb::class_<PyFunction>(m, "FunctionCore")
      .def(nb::init<nb::object, std::string, std::vector<std::string>, bool>(), nb::arg("trace"), nb::arg("name"),
           nb::arg("arg_names"), nb::arg("reduce_retracing"))
      .def("call", &PyFunction::call)
      .def("concrete", &PyFunction::concrete)
      .def("records", &PyFunction::records)
      .def("num_records", &PyFunction::num_records)
      .def("tracing_count", &PyFunction::tracing_count)
      .def("calls", &PyFunction::calls)
      .def("trace_log", &PyFunction::trace_log)
      .def("clear", &PyFunction::clear);

  nb::class_<ConcreteFunction>(m, "ConcreteFunctionCore")
      .def(
          "call",
          [](const ConcreteFunction& cf, std::vector<Tensor> inputs) {
            InterruptibleCall interruptible;
            nb::gil_scoped_release unlocked;
            return cf(inputs);
          },
          nb::arg("inputs"))
      .def_prop_ro("name", &ConcreteFunction::name)
      .def("operations", [](const ConcreteFunction& cf) { return operations_of(cf.graph()); })
      .def("optimized_operations", [](const ConcreteFunction& cf) { return operations_of(cf.optimized_graph()); })
      .def("graph_def_text", [](const ConcreteFunction& cf) { return cf.as_graph_def().str(); })
      .def("graph_def_bytes",
           [](const ConcreteFunction& cf) {
             const std::string b = cf.as_graph_def().serialized();
             return nb::bytes(b.data(), b.size());
           })
      .def("optimized_graph_def_text", [](const ConcreteFunction& cf) { return cf.optimized_graph_def().str(); })
      .def("input_specs",
           [](const ConcreteFunction& cf) {
             nb::list l;
             for (const TensorSpec& s : cf.input_specs()) l.append(spec_tuple(s));
             return l;
           })
      .def("output_specs",
           [](const ConcreteFunction& cf) {
             nb::list l;
             for (const TensorSpec& s : cf.output_specs()) l.append(spec_tuple(s));
             return l;
           })
      .def("captured_inputs", &ConcreteFunction::captured_inputs)
      .def("variables", &ConcreteFunction::variables)
      .def("optimization_report", &ConcreteFunction::optimization_report)
      .def("to_dot", &ConcreteFunction::to_dot);
}

}  // namespace kiln::python
