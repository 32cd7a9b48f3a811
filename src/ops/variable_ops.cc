// Variable ops: ReadVariableOp, AssignVariableOp, AssignAddVariableOp, AssignSubVariableOp,
// VarIsInitializedOp (attr 0 is its resource: it has no dtype attr in TensorFlow).
// The variable is a resource held in attr 1 ("_resource"); attr 0 is its dtype. They are
// stateful: in a traced function they run in program order and are never pruned.
#include <cstring>

#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/variable_state.h"

namespace kiln::ops {

void VariableState::write(const Tensor& v, const char* op) {
  if (v.dtype() != dtype_)
    throw InvalidArgumentError(std::string("Trying to assign a ") + std::string(dtype_name(v.dtype())) +
                               " value to a variable of dtype " + std::string(dtype_name(dtype_)) + " [Op:" + op + "]");
  if (v.shape() != shape_)
    throw InvalidArgumentError("Cannot update variable '" + name_ + "' with shape " + dims_text(shape_.dims()) +
                               " using a Tensor with shape " + dims_text(v.shape().dims()) +
                               ", shapes must be equal. [Op:" + op + "]");
  std::lock_guard<std::mutex> lock(mu_);
  value_ = v;
}

namespace {

// Integers add with wrap-around, as TensorFlow's kernels do.
template <class T, bool = std::is_integral_v<T>>
struct Arith {
  using type = T;
};
template <class T>
struct Arith<T, true> {
  using type = std::make_unsigned_t<T>;
};
// 16-bit floats add in float32 and round once (TensorFlow's Eigen half arithmetic).
template <>
struct Arith<float16, false> {
  using type = float;
};
template <>
struct Arith<bfloat16, false> {
  using type = float;
};

// Read and assignments: attrs (dtype, _resource).
const int kVariable = attr_index({{&op::ReadVariableOp(), "_resource"},
                                  {&op::AssignVariableOp(), "_resource"},
                                  {&op::AssignAddVariableOp(), "_resource"},
                                  {&op::AssignSubVariableOp(), "_resource"}});
const int kReadDtype = attr_index(op::ReadVariableOp(), "dtype");
const int kIsInitializedVariable = attr_index(op::VarIsInitializedOp(), "_resource");

VariableState& state(const Attrs& a) { return *static_cast<VariableState*>(a.resource(kVariable)); }

// A Tensor handle sharing an input's (immutable) value.
Tensor share(const TensorImpl& t) {
  auto* impl = const_cast<TensorImpl*>(&t);
  impl->refs.fetch_add(1, std::memory_order_relaxed);
  return Tensor(impl);
}

void infer_read(InferContext& c) {
  const VariableState& v = state(c.attrs);
  // A loaded graph says which dtype it reads; a variable of another is a mismatched checkpoint.
  if (c.attrs.type(kReadDtype) != v.dtype())
    c.fail(std::string("Trying to read variable with wrong dtype. Expected ") + tf_type_name(c.attrs.type(kReadDtype)) +
           " got " + tf_type_name(v.dtype()));
  c.out(0).dtype = v.dtype();
  c.out(0).shape = v.shape();
}
// The snapshot shares the variable's current data: values are immutable (an assignment
// replaces the variable's tensor), so no copy is needed. Each read is still a tensor of its
// own (an alias), so a gradient tape tells two reads apart.
struct ReadKernel {
  static void run(KernelContext& c) {
    const Tensor v = state(c.attrs).read();
    c.outputs[0] = detail::make_alias(v.impl(), v.impl()->dims);
  }
};

void infer_assign(InferContext& c) {
  const VariableState& v = state(c.attrs);
  if (c.in(0).dtype != v.dtype())
    c.fail("Trying to assign a " + std::string(dtype_name(c.in(0).dtype)) + " value to variable '" + v.resource_name() +
           "' of dtype " + std::string(dtype_name(v.dtype())));
  const TensorShape& want = v.shape();
  if (!c.in(0).unknown_rank) {
    const Dims& d = *c.in(0).dims;
    bool ok = d.size() == want.dims().size();
    for (size_t i = 0; ok && i < d.size(); ++i) ok = d[i] < 0 || d[i] == want.dims()[i];
    if (!ok)
      c.fail("Cannot update variable '" + v.resource_name() + "' with shape " + dims_text(want.dims()) +
             " using a Tensor with shape " + dims_text(d) + ", shapes must be equal.");
  }
}
struct AssignKernel {
  static void run(KernelContext& c) { state(c.attrs).write(share(c.in(0)), c.op.name); }
};

template <int Sign>
struct AssignAddKernel {
  struct K {
    static void run(KernelContext& c) {
      const TensorImpl& delta = c.in(0);
      VariableState::update_in_place(
          [&](TensorImpl& v) {
            if (v.dims != delta.dims)
              c.fail("Shapes of the value and the variable differ: " + dims_text(delta.dims) + " vs. " +
                     dims_text(v.dims));
            visit_dtype(v.dtype, [&](auto x) {
              using T = decltype(x);
              if constexpr (!std::is_same_v<T, bool>) {
                using U = typename Arith<T>::type;
                T* r = v.as<T>();
                const T* d = delta.as<T>();  // never r: a delta sharing the value makes update_in_place copy
                for (int64_t i = 0; i < v.num_elements; ++i)
                  r[i] = static_cast<T>(static_cast<U>(r[i]) + static_cast<U>(Sign) * static_cast<U>(d[i]));
              }
            });
          },
          state(c.attrs));
    }
  };
};

void infer_assign_add(InferContext& c) {
  if (c.in(0).dtype == DType::Bool) c.fail("assign_add needs a numeric variable");
  infer_assign(c);
}

// VarIsInitializedOp: whether the variable (attr 0) has a value yet.
void infer_is_initialized(InferContext& c) {
  c.out(0).dtype = DType::Bool;
  c.out(0).shape = TensorShape();
}
struct IsInitializedKernel {
  static void run(KernelContext& c) {
    *c.out(0).as<bool>() = static_cast<const VariableState*>(c.attrs.resource(kIsInitializedVariable))->initialized();
  }
};

}  // namespace

const OpDef& op::VarIsInitializedOp() {
  static const OpDef def = {.name = "VarIsInitializedOp",
                            .num_inputs = 0,
                            .num_outputs = 1,
                            .input_args = {},
                            .traits = kStateful,
                            .attr_specs = {resource_attr("_resource")},
                            .infer = infer_is_initialized,
                            .any_dtype_kernel = &IsInitializedKernel::run,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"is_initialized"}};
  return def;
}

const OpDef& op::ReadVariableOp() {
  static const OpDef def = {.name = "ReadVariableOp",
                            .num_inputs = 0,
                            .num_outputs = 1,
                            .input_args = {},
                            .traits = kStateful | kReadsVariable | kOwnOutputs,
                            .attr_specs = {type_attr("dtype"), resource_attr("_resource")},
                            .infer = infer_read,
                            .any_dtype_kernel = &ReadKernel::run,
                            .type_attr = nullptr,
                            .grad = &no_gradient,  // tapes treat its output as the variable itself
                            .output_args = {"value"}};
  return def;
}
const OpDef& op::AssignVariableOp() {
  static const OpDef def = {
      .name = "AssignVariableOp",
      .num_inputs = 1,
      .num_outputs = 0,
      .input_args = {"value"},
      .traits = kStateful,
      // validate_shape: TensorFlow's attr, read by no kernel: kiln's variables keep their shape (an
      // assignment of another shape is an error, where TensorFlow's False lets it change)
      .attr_specs = {variable_dtype_attr("dtype"), resource_attr("_resource"), bool_attr("validate_shape", false)},
      .infer = infer_assign,
      .any_dtype_kernel = &AssignKernel::run,
      .type_attr = nullptr,
      .grad = &no_gradient};
  return def;
}
const OpDef& op::AssignAddVariableOp() {
  static const OpDef def = {.name = "AssignAddVariableOp",
                            .num_inputs = 1,
                            .num_outputs = 0,
                            .input_args = {"value"},
                            .traits = kStateful,
                            .attr_specs = {variable_dtype_attr("dtype"), resource_attr("_resource")},
                            .infer = infer_assign_add,
                            .any_dtype_kernel = &AssignAddKernel<1>::K::run,
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::AssignSubVariableOp() {
  static const OpDef def = {.name = "AssignSubVariableOp",
                            .num_inputs = 1,
                            .num_outputs = 0,
                            .input_args = {"value"},
                            .traits = kStateful,
                            .attr_specs = {variable_dtype_attr("dtype"), resource_attr("_resource")},
                            .infer = infer_assign_add,
                            .any_dtype_kernel = &AssignAddKernel<-1>::K::run,
                            .type_attr = nullptr,
                            .grad = &no_gradient};
  return def;
}

}  // namespace kiln::ops
