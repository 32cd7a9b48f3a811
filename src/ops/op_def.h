// The op registry's vocabulary. Every op is one OpDef row: TensorFlow name, arity, attrs,
// traits, shape function and kernels per dtype. Passes and executors ask an op for its
// traits; nothing outside an op's own row switches on its name.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/object_value.h"
#include "core/resource.h"
#include "core/tensor_impl.h"
#include "kernels/vmath.h"
#include "kiln/detail/small_vec.h"
#include "kiln/errors.h"

namespace kiln::ops {

using detail::TensorImpl;

// A function of the graph's library (an If branch, a While body), by name: the graph that
// holds the node resolves it in its FunctionLibrary (graph/library.h).
struct FuncRef {
  std::string name;
  bool operator==(const FuncRef& o) const { return name == o.name; }
};
// A handle to a resource (a variable) that stateful ops read and write.
struct ResourceRef {
  std::shared_ptr<Resource> resource;
  bool operator==(const ResourceRef& o) const { return resource == o.resource; }
};

// A shape attr, boxed: a TensorShape keeps its dims inline (80 bytes) and every attr slot
// of every node is as large as the largest kind, so the rare shape attr lives on the heap.
class ShapeAttr {
 public:
  ShapeAttr(TensorShape s) : shape_(std::make_shared<const TensorShape>(std::move(s))) {}  // NOLINT: implicit
  const TensorShape& get() const { return *shape_; }
  bool operator==(const ShapeAttr& o) const { return *shape_ == *o.shape_; }

 private:
  std::shared_ptr<const TensorShape> shape_;
};

// An attr value. Lists are int64 lists (axes, perms, dims); Tensor is a Const's value.
using AttrValue = std::variant<std::monostate, int64_t, double, bool, DType, std::vector<int64_t>, std::string,
                               ShapeAttr, Tensor, FuncRef, std::vector<FuncRef>, ResourceRef>;

inline constexpr int kMaxAttrs = 6;

// What an attr holds: TensorFlow's attr types, and kiln's reference to a variable (which a
// GraphDef carries as a resource input instead).
enum class AttrKind : uint8_t {
  kInt,
  kFloat,
  kBool,
  kType,
  kIntList,
  kString,
  kShape,
  kTensor,
  kFunc,
  kFuncList,
  kResource,
};
// One attr of an op as TensorFlow's REGISTER_OP declares it ("use_nesterov: bool = false"):
// its name, kind and default. The loader reads a NodeDef's attrs by these (TensorFlow
// strips attrs that hold their default); kernels read the values by position.
struct AttrSpec {
  const char* name = nullptr;
  AttrKind kind = AttrKind::kInt;
  AttrValue default_value = std::monostate{};  // none: the attr must be present
  const char* api_name = nullptr;              // its name in TensorFlow's Python raw_ops, where its api_def renames it
  // A type attr TensorFlow derives from the variable's value (its raw_ops take none): run by
  // name, the op gets it from the variable it is given.
  bool from_variable = false;
  bool has_default() const { return !std::holds_alternative<std::monostate>(default_value); }
};
// TensorFlow's name of an attr type: "int", "list(int)", "type", ...
const char* attr_kind_name(AttrKind k);
inline AttrSpec int_attr(const char* name) { return {.name = name, .kind = AttrKind::kInt}; }
inline AttrSpec int_attr(const char* name, int64_t d) {
  return {.name = name, .kind = AttrKind::kInt, .default_value = d};
}
inline AttrSpec float_attr(const char* name, double d) {
  return {.name = name, .kind = AttrKind::kFloat, .default_value = d};
}
inline AttrSpec bool_attr(const char* name, bool d) {
  return {.name = name, .kind = AttrKind::kBool, .default_value = d};
}
inline AttrSpec type_attr(const char* name) { return {.name = name, .kind = AttrKind::kType}; }
inline AttrSpec type_attr(const char* name, DType d) {
  return {.name = name, .kind = AttrKind::kType, .default_value = d};
}
inline AttrSpec int_list_attr(const char* name) { return {.name = name, .kind = AttrKind::kIntList}; }
inline AttrSpec int_list_attr(const char* name, std::vector<int64_t> d) {
  return {.name = name, .kind = AttrKind::kIntList, .default_value = std::move(d)};
}
inline AttrSpec string_attr(const char* name) { return {.name = name, .kind = AttrKind::kString}; }
inline AttrSpec string_attr(const char* name, const char* d) {
  return {.name = name, .kind = AttrKind::kString, .default_value = std::string(d)};
}
inline AttrSpec shape_attr(const char* name) { return {.name = name, .kind = AttrKind::kShape}; }
inline AttrSpec shape_attr(const char* name, TensorShape d) {
  return {.name = name, .kind = AttrKind::kShape, .default_value = std::move(d)};
}
inline AttrSpec tensor_attr(const char* name) { return {.name = name, .kind = AttrKind::kTensor}; }
inline AttrSpec func_attr(const char* name) { return {.name = name, .kind = AttrKind::kFunc}; }
inline AttrSpec func_list_attr(const char* name) { return {.name = name, .kind = AttrKind::kFuncList}; }
inline AttrSpec resource_attr(const char* name) { return {.name = name, .kind = AttrKind::kResource}; }
// The variable of an op whose TensorFlow input is named otherwise than `resource` (`var`).
inline AttrSpec resource_attr(const char* name, const char* api_name) {
  return {.name = name, .kind = AttrKind::kResource, .api_name = api_name};
}
inline AttrSpec variable_dtype_attr(const char* name) {
  return {.name = name, .kind = AttrKind::kType, .from_variable = true};
}
class Attrs;
// The function attrs of a control-flow node in attr order, lists expanded: the order a
// SubgraphRunner numbers its bodies in.
std::vector<const FuncRef*> func_refs(const Attrs& attrs);

// Attr values in the order of the op's attr_specs, so kernels read them by index: no
// string lookup per call. Only the `size()` values an op has are constructed: every node
// carries one, and tracing moves it several times, so moving or dropping the empty slots
// (a variant visit each) cost a traced op more than its real attrs.
class Attrs {
 public:
  Attrs() noexcept {}  // the slots stay raw memory until push() fills them
  Attrs(std::initializer_list<AttrValue> values) {
    for (auto& v : values) push(v);
  }
  Attrs(const Attrs& o) {
    try {
      append_copies(o);
    } catch (...) {  // a constructor that throws is never destroyed: drop the copies made
      clear();
      throw;
    }
  }
  Attrs(Attrs&& o) noexcept { take(o); }
  Attrs& operator=(const Attrs& o) {
    if (this != &o) {
      clear();
      append_copies(o);
    }
    return *this;
  }
  Attrs& operator=(Attrs&& o) noexcept {
    if (this != &o) {
      clear();
      take(o);
    }
    return *this;
  }
  ~Attrs() { clear(); }

  int size() const { return count_; }
  const AttrValue& operator[](int i) const { return slots()[i]; }
  AttrValue& operator[](int i) { return slots()[i]; }
  void push(AttrValue v) {
    if (count_ == kMaxAttrs) throw InternalError("an op row has more than kMaxAttrs attrs");
    new (slots() + count_) AttrValue(std::move(v));
    ++count_;
  }

  int64_t i(int k) const { return std::get<int64_t>((*this)[k]); }
  double f(int k) const { return std::get<double>((*this)[k]); }
  bool b(int k) const { return std::get<bool>((*this)[k]); }
  DType type(int k) const { return std::get<DType>((*this)[k]); }
  const std::vector<int64_t>& list(int k) const { return std::get<std::vector<int64_t>>((*this)[k]); }
  const std::string& s(int k) const { return std::get<std::string>((*this)[k]); }
  const TensorShape& shape(int k) const { return std::get<ShapeAttr>((*this)[k]).get(); }
  const Tensor& tensor(int k) const { return std::get<Tensor>((*this)[k]); }
  const FuncRef& func(int k) const { return std::get<FuncRef>((*this)[k]); }
  Resource* resource(int k) const { return std::get<ResourceRef>((*this)[k]).resource.get(); }

  size_t hash() const;
  bool operator==(const Attrs& o) const;

 private:
  AttrValue* slots() { return std::launder(reinterpret_cast<AttrValue*>(storage_)); }
  const AttrValue* slots() const { return std::launder(reinterpret_cast<const AttrValue*>(storage_)); }
  void clear() noexcept {
    for (int k = count_ - 1; k >= 0; --k) slots()[k].~AttrValue();
    count_ = 0;
  }
  // Copies o's values after this one's (count_ counts each as it is made, so a copy that
  // throws leaves the ones made to clear()).
  void append_copies(const Attrs& o) {
    for (int k = 0; k < o.count_; ++k) {
      new (slots() + count_) AttrValue(o[k]);
      ++count_;
    }
  }
  void take(Attrs& o) noexcept {
    for (int k = 0; k < o.count_; ++k) new (slots() + k) AttrValue(std::move(o[k]));
    count_ = o.count_;
    o.clear();
  }
  alignas(AttrValue) unsigned char storage_[kMaxAttrs * sizeof(AttrValue)];
  int count_ = 0;
};

// A shape function's view of one input: dims borrowed from a tensor or a graph node's
// TensorShape, never owned.
struct InputInfo {
  DType dtype;
  const Dims* dims;  // -1 for unknown dims
  bool unknown_rank;
  const TensorImpl* value;  // the concrete value when known (eager, or a Const in a graph)
};

struct OutputInfo {
  DType dtype = DType::Float32;
  TensorShape shape;
};

// One input argument as TensorFlow's REGISTER_OP names it. A list argument ("values: N * T",
// "input: Tin") takes several tensors; its length is attr `number_attr` when it has one,
// else whatever the other arguments leave. Generated front ends (kiln.raw_ops) and docs
// read these; executors see the flat input list.
struct ArgSpec {
  ArgSpec(const char* n) : name(n) {}  // NOLINT: implicit, so rows list plain names
  const char* name;
  bool list = false;
  const char* number_attr = nullptr;
  const char* api_name = nullptr;  // its name in TensorFlow's Python raw_ops, where its api_def renames it
};
// An argument TensorFlow's api_def renames in Python (Sum's reduction_indices is raw_ops' axis).
inline ArgSpec renamed_arg(const char* name, const char* api_name) {
  ArgSpec a(name);
  a.api_name = api_name;
  return a;
}
inline AttrSpec renamed_attr(AttrSpec spec, const char* api_name) {
  spec.api_name = api_name;
  return spec;
}
inline ArgSpec list_arg(const char* name, const char* number_attr = nullptr) {
  ArgSpec a(name);
  a.list = true;
  a.number_attr = number_attr;
  return a;
}

struct OpDef;
struct GradContext;
// How the op's upstream gradients become input gradients (ops/gradient.h); null: the op is
// not differentiable and a gradient that must pass through it is an error.
using GradFn = void (*)(GradContext&);

// What a shape function sees and produces. It validates dtypes, shapes and attrs, and
// throws InvalidArgumentError in TensorFlow's words; it never reads input data unless
// `value` is set.
struct InferContext {
  // Starts with the row's output count (1 when the shape function decides it), so a
  // multi-output row's shape function only sets the outputs' dtypes and shapes.
  InferContext(const OpDef& o, const InputInfo* in, int n, const Attrs& a);
  const OpDef& op;
  const InputInfo* inputs;
  int num_inputs;
  const Attrs& attrs;
  std::array<OutputInfo, 2> fixed_outputs;
  std::vector<OutputInfo> more_outputs;
  int num_outputs = 1;                  // set by the constructor from the row
  DType kernel_dtype = DType::Float32;  // which per-dtype kernel runs

  const InputInfo& in(int i) const { return inputs[i]; }
  OutputInfo& out(int i) { return i < 2 ? fixed_outputs[i] : more_outputs[i - 2]; }
  void set_num_outputs(int n) {
    num_outputs = n;
    if (n > 2) more_outputs.resize(n - 2);
  }
  [[noreturn]] void fail(const std::string& message) const;
};

// What a kernel sees: concrete inputs, outputs already allocated with their final shapes.
struct KernelContext {
  const OpDef& op;
  const TensorImpl* const* inputs;
  int num_inputs;
  TensorImpl** outputs;
  int num_outputs;
  const Attrs& attrs;
  // A kUpdatesInput kernel may change input 0 and hand it out as output 0: the caller holds
  // the only reference to it and drops that reference after the step.
  bool may_update_input0 = false;
  const TensorImpl& in(int i) const { return *inputs[i]; }
  TensorImpl& out(int i) const { return *outputs[i]; }
  [[noreturn]] void fail(const std::string& message) const;
};

using ShapeFn = void (*)(InferContext&);
using KernelFn = void (*)(KernelContext&);

// Runs the bodies of a control-flow node. A body's index is its position among the node's
// function attrs in attr order (lists expanded): If: 0 then, 1 else; While: 0 cond, 1 body.
class SubgraphRunner {
 public:
  virtual ~SubgraphRunner() = default;
  virtual void run(int body, const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) = 0;
  virtual int num_bodies() const = 0;
};
// An elementwise op over a run of n contiguous elements of dtype d (its own functor, so a
// fused kernel computes exactly what the op computes). A scalar operand is broadcast.
using ChunkFn = void (*)(DType d, const void* a, bool a_scalar, const void* b, bool b_scalar, void* out, int64_t n);

// TensorFlow's truth of a condition tensor: a scalar's value, else non-emptiness.
bool condition_truth(const Tensor& t);
bool condition_truth(const TensorImpl& concrete);

// Estimated work of one call (multiply-adds or element visits), for scheduling decisions.
// Ops without one cost their input plus output elements.
using CostFn = int64_t (*)(const InputInfo* inputs, int num_inputs, const Attrs& attrs);

// What an If/While/Case does with its bodies: inputs in, outputs out.
using ControlFlowFn = void (*)(const Attrs& attrs, const std::vector<Tensor>& inputs, SubgraphRunner& runner,
                               std::vector<Tensor>& outputs);

enum Trait : uint32_t {
  kPure = 0,                   // no state, same inputs give the same outputs
  kStateful = 1u << 0,         // reads/writes state or draws random numbers: never folded, merged or pruned
  kSideEffect = 1u << 1,       // observable effects (print, assert)
  kCommutative = 1u << 2,      // binary op whose two inputs may swap (CSE normalizes them)
  kElementwise = 1u << 3,      // output element i depends on input element i (after broadcasting)
  kNoKernel = 1u << 4,         // Placeholder-like: executors feed it rather than run it
  kConstValue = 1u << 5,       // Const-like: output 0 is attr kConstValueAttr ("value"), known before running
  kControlFlow = 1u << 6,      // If/While/Case: the executor runs its function attrs' bodies
  kForwardsInput = 1u << 7,    // output 0 is input 0 unchanged (Identity): plans alias the slot
  kShapeOnly = 1u << 8,        // reads only its input's shape (Shape, Size, Rank): folds when it is known
  kInternal = 1u << 9,         // made by the optimizer, never saved: loaders refuse it
  kReadsVariable = 1u << 10,   // output 0 is the value of the variable in attr kReadsVariableAttr (tapes watch it)
  kOwnOutputs = 1u << 11,      // the kernel hands out its outputs (KernelContext::outputs start null,
                               // it stores owned impls): memory plans leave them alone. A variable
                               // read shares the variable's immutable value instead of copying it.
  kLoop = 1u << 12,            // While: attrs cond and body; the executor runs the loop itself,
                               // keeping both parts' slots and frames across iterations
  kTfjs = 1u << 13,            // TensorFlow.js's graph-model runtime has the op: export-tfjs may write it
  kMovesElements = 1u << 14,   // the kernel only moves input elements to outputs (as bytes: Concat,
                               // Gather, Transpose): it serves String and Variant tensors too, the
                               // executor taking one reference per moved element (run_moving_objects)
  kFuzzedInternal = 1u << 15,  // a kInternal row users reach through kiln's API (a parser, not an
                               // optimizer's fusion): the kernel fuzzer builds it from the row anyway
  kView = 1u << 16,            // output 0 is input 0's elements under the dims the shape function
                               // gives (Reshape, ExpandDims, Squeeze): an alias, no copy. With
                               // kOwnOutputs. Eager calls and static plan steps make the alias
                               // themselves (the shape is known: no second shape function); plans
                               // keep input 0 out of the frame, which would reuse its memory
  kSharesInput = 1u << 17,     // output 0 may hold views of input 0's elements (TensorListFromTensor's
                               // items): plans keep input 0 out of the frame, so it has a buffer
                               // the views retain (a frame input is copied instead)
  kPassesThrough = 1u << 18,   // each output i is input i unchanged, only the gradient differs
                               // (StopGradient, PreventGradient, IdentityN): the optimizer's graphs
                               // only run, so it reads the inputs directly (remove_identity)
  kUpdatesInput = 1u << 19,    // output 0 is input 0 changed (TensorListSetItem, PushBack; with
                               // kOwnOutputs): where input 0 dies at the step and nothing else holds
                               // it, a plan lets the kernel change it in place
                               // (KernelContext::may_update_input0) instead of copying it, as
                               // TensorFlow forwards a list whose reference count is one: a loop's
                               // n writes to a list cost O(n), not O(n^2)
  kWindowed = 1u << 20,        // output pixels read windows of input pixels (convolutions, poolings):
                               // exec/batch_split runs a batch image by image only for a graph that
                               // has one, where one image's activations stay in the caches a whole
                               // batch's overflow
};

// What a value is to a batch of rows, and an op's rule for its outputs (ops/batch_rows.h).
enum class RowKind : char;
struct RowsContext;
using RowsFn = RowKind (*)(const RowsContext&);

// Type attr an op writes to GraphDef: T (from an input's dtype) or explicit attrs.
// Rows are written with designated initializers; every field has a default, so a row names
// only what differs.
struct OpDef {
  const char* name = nullptr;
  int num_inputs = 0;   // -1: variadic
  int num_outputs = 0;  // -1: decided by the shape function
  // TensorFlow's input argument names, in order (a test compares them with TensorFlow's).
  // Inputs TensorFlow passes as resource handles are attrs in kiln and are not listed.
  std::vector<ArgSpec> input_args = {};
  uint32_t traits = 0;
  std::vector<AttrSpec> attr_specs = {};  // in the order kernels read them (Attrs)
  ShapeFn infer = nullptr;
  // Output 0's shape is this input's value (Reshape's shape, Fill's dims, BroadcastTo's
  // shape), or -1. A graph evaluates that input partially when it adds the node, as
  // TensorFlow's shape inference does (graph/shape_tensor.h), and the optimizer again.
  int shape_input = -1;
  std::array<KernelFn, kNumDTypes> kernels{};  // indexed by the kernel dtype
  // Instead of `kernels`: one kernel for inputs of every dtype (it moves bytes or dispatches
  // on the dtype itself), whatever kernel dtype the shape function left.
  KernelFn any_dtype_kernel = nullptr;
  // GraphDef: the name of the type attr derived from input `type_attr_input` ("T"), or null.
  const char* type_attr = "T";
  int type_attr_input = 0;
  // GraphDef: more type attrs taken from inputs' dtypes, e.g. {"Tidx", 1}; -1 is the last input.
  std::vector<std::pair<const char*, int>> index_type_attrs = {};
  // GraphDef: a list(type) attr holding every input's dtype (IdentityN's "T"), or null.
  const char* type_list_attr = nullptr;
  // Control flow ops (kControlFlow): how the node runs its bodies.
  ControlFlowFn control_flow = nullptr;
  // Elementwise ops whose output dtype is their input dtype: the run used by fusion.
  ChunkFn chunk = nullptr;
  // Its float32 form in a fused chain's registers (kernels::vlanes), computing what `chunk`
  // does bit for bit; kNone for an op without one (its steps run one by one).
  kernels::LaneOp lane = kernels::LaneOp::kNone;
  CostFn cost = nullptr;
  GradFn grad = nullptr;
  // Whether the outputs compute each row of a batch from that row alone, given what each input
  // is to the batch (ops/batch_rows.h; exec/batch_split runs such graphs image by image); the
  // rule of an op of several outputs (Split) speaks for every one of them. Null: kElementwise
  // and kForwardsInput ops keep rows where broadcasting does not stretch an operand along the
  // batch; any other op's output is no batch's rows.
  RowsFn rows = nullptr;
  // TensorFlow's output arg names, which function bodies use to name outputs
  // ("node:arg:index"). One name: every output belongs to it (a list output, as If's, or a
  // single tensor). Several: output i is arg i.
  std::vector<const char*> output_args = {"output"};

  bool has(Trait t) const { return (traits & t) != 0; }
  bool is_stateful() const { return (traits & (kStateful | kSideEffect)) != 0; }
  // The kernel for a kernel dtype: the any-dtype kernel if the op has one; null if none.
  KernelFn kernel_for(DType d) const {
    if (detail::holds_objects(d) && !kernels[static_cast<int>(d)]) {
      if (traits & kMovesElements) return &run_moving_objects;
      if (traits & kShapeOnly) return kernels[static_cast<int>(DType::Int64)];  // reads dims, not elements
    }
    return any_dtype_kernel ? any_dtype_kernel : kernels[static_cast<int>(d)];
  }
  // The kernel that moves 8-byte elements: the any-dtype kernel or the Int64 one.
  KernelFn mover() const { return any_dtype_kernel ? any_dtype_kernel : kernels[static_cast<int>(DType::Int64)]; }
  // A kMovesElements op's kernel for object elements: mover() moves the pointers, then each
  // moved element gains a reference (on an error, the outputs are cleared instead).
  static void run_moving_objects(KernelContext& c);
};

inline InferContext::InferContext(const OpDef& o, const InputInfo* in, int n, const Attrs& a)
    : op(o), inputs(in), num_inputs(n), attrs(a) {
  set_num_outputs(o.num_outputs >= 0 ? o.num_outputs : 1);
}

// Look up an op by TensorFlow name (for loaders and tests); null if unknown.
const OpDef* find_op(std::string_view name);
std::vector<const OpDef*> all_ops();

// Where the traits' attrs sit (a test checks every row): kConstValue's "value" and
// kReadsVariable's variable.
inline constexpr int kConstValueAttr = 1;
inline constexpr int kReadsVariableAttr = 1;

// Where attr `name` sits among an op's attrs (the order of its row's attr_specs, which its
// Attrs follow). Code reads attrs through constants made with it, never by bare number;
// InternalError if the op has no such attr. The list form names one attr of several ops
// that share code, and requires them to sit at one position.
int attr_index(const OpDef& op, std::string_view name);

// `attrs` with the row's defaults appended for the attrs it leaves out at its end: code that
// builds a node names the attrs it sets, and a row that gains a defaulted attr (as TensorFlow's
// ops do) keeps working. InternalError if a left-out attr has no default.
Attrs with_defaults(const OpDef& op, Attrs attrs);
int attr_index(std::initializer_list<std::pair<const OpDef*, const char*>> same_position);

// "Incompatible shapes: [2,3] vs. [4]" style dims text.
std::string dims_text(const Dims& d);
std::string shape_text(const TensorShape& s);  // TensorFlow's "[2,?]", "<unknown>"
std::string dtype_list_text(const OpDef& op);

}  // namespace kiln::ops
