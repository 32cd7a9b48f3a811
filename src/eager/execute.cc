#include "eager/execute.h"

#include <string>

#include "ops/helpers.h"

namespace kiln::eager {

using ops::InferContext;
using ops::InputInfo;
using ops::TensorImpl;

void fail_unsupported_dtype(const ops::OpDef& op, DType d) {
  const std::string allowed = ops::dtype_list_text(op);
  throw InvalidArgumentError(std::string("Value for attr '") + (op.type_attr ? op.type_attr : "T") + "' of " +
                             ops::tf_type_name(d) + " is not in the list of allowed values: " + allowed +
                             " [Op:" + op.name + "]");
}

// String and Variant outputs hold object references that only some kernels know how to
// make: a kernel registered for that dtype, an element mover (kMovesElements) run for its
// own kernel dtype (the executor then takes the references), ops that hand out their
// outputs (aliases retain, list ops make new objects), and ops without a kernel. Any other
// op asked for one (a type attr set to string: Shape's out_type, Cast's DstT) would write
// numbers where pointers belong. Control flow passes its values on.
static void check_object_outputs(InferContext& ctx) {
  const ops::OpDef& op = ctx.op;
  if (op.has(ops::kOwnOutputs) || op.has(ops::kNoKernel) || op.has(ops::kControlFlow)) return;
  for (int i = 0; i < ctx.num_outputs; ++i) {
    const DType d = ctx.out(i).dtype;
    if (!detail::holds_objects(d) || op.kernels[static_cast<int>(d)] ||
        (op.has(ops::kMovesElements) && ctx.kernel_dtype == d))
      continue;
    throw InvalidArgumentError(std::string(op.name) + " cannot produce a " + std::string(dtype_name(d)) +
                               " tensor (output " + std::to_string(i) + ") [Op:" + op.name + "]");
  }
}

void infer_concrete(InferContext& ctx) {
  ctx.op.infer(ctx);
  if (!ctx.op.has(ops::kNoKernel) && !ctx.op.kernel_for(ctx.kernel_dtype))
    fail_unsupported_dtype(ctx.op, ctx.kernel_dtype);
  check_object_outputs(ctx);
}

TensorImpl* allocate_output(const InferContext& ctx, int i) {
  const ops::OutputInfo& o = const_cast<InferContext&>(ctx).out(i);
  return detail::make_concrete(o.dtype, o.shape.dims());
}

namespace {
constexpr int kStackInputs = 8;

template <class Done>
auto run(const ops::OpDef& op, const TensorImpl* const* inputs, int n, const ops::Attrs& attrs, Done&& done) {
  InputInfo stack_infos[kStackInputs];
  std::vector<InputInfo> heap_infos;
  InputInfo* infos = stack_infos;
  if (n > kStackInputs) {
    heap_infos.resize(n);
    infos = heap_infos.data();
  }
  for (int i = 0; i < n; ++i) {
    const TensorImpl* t = inputs[i];
    infos[i] = InputInfo{t->dtype, &t->dims, false, t};
  }
  InferContext ctx{op, infos, n, attrs};
  infer_concrete(ctx);
  return done(ctx);
}

// Allocates outputs, runs the kernel; outputs are released if the kernel throws.
struct OutputGuard {
  TensorImpl* outs[8] = {};
  std::vector<TensorImpl*> more;
  int count = 0;
  TensorImpl** data() { return count <= 8 ? outs : more.data(); }
  ~OutputGuard() {
    TensorImpl** p = data();
    for (int i = 0; i < count; ++i)
      if (p[i]) detail::destroy_tensor_impl(p[i]);
  }
};

void run_kernel(const ops::OpDef& op, const TensorImpl* const* inputs, int n, const ops::Attrs& attrs,
                InferContext& ctx, OutputGuard& g) {
  g.count = ctx.num_outputs;
  if (g.count > 8) g.more.resize(g.count);
  TensorImpl** outs = g.data();
  if (op.has(ops::kView)) {  // the shape function just gave the view's dims: no kernel to run it again
    outs[0] = detail::make_alias(inputs[0], ctx.out(0).shape.dims());
    return;
  }
  const bool own = op.has(ops::kOwnOutputs);
  for (int i = 0; i < g.count; ++i) outs[i] = own ? nullptr : allocate_output(ctx, i);
  ops::KernelContext kc{op, inputs, n, outs, g.count, attrs};
  op.kernel_for(ctx.kernel_dtype)(kc);
}
}  // namespace

std::vector<Tensor> execute(const ops::OpDef& op, const TensorImpl* const* inputs, int n, const ops::Attrs& attrs) {
  return run(op, inputs, n, attrs, [&](InferContext& ctx) {
    OutputGuard g;
    run_kernel(op, inputs, n, attrs, ctx, g);
    std::vector<Tensor> result;
    result.reserve(g.count);
    TensorImpl** outs = g.data();
    for (int i = 0; i < g.count; ++i) {
      result.emplace_back(outs[i]);
      outs[i] = nullptr;
    }
    return result;
  });
}

namespace {
// An elementwise op whose inputs agree in dtype and shape: its shape function has nothing
// to compute (ops::agreeing_elementwise), so a small eager op goes straight to its kernel.
Tensor run_agreeing(const ops::OpDef& op, const TensorImpl* const* inputs, int n, const ops::Attrs& attrs,
                    DType out_dtype) {
  const TensorImpl& x = *inputs[0];
  const ops::KernelFn kernel = op.kernel_for(x.dtype);
  if (!kernel) fail_unsupported_dtype(op, x.dtype);
  const auto bytes = x.num_elements * static_cast<int64_t>(dtype_size(out_dtype));  // no wider than x's
  Tensor out(detail::make_concrete_checked(out_dtype, x.dims.data(), x.dims.size(), x.num_elements, bytes));
  TensorImpl* o = out.impl();  // freed with `out` if the kernel throws
  ops::KernelContext kc{.op = op, .inputs = inputs, .num_inputs = n, .outputs = &o, .num_outputs = 1, .attrs = attrs};
  kernel(kc);
  return out;
}
}  // namespace

Tensor execute1(const ops::OpDef& op, const TensorImpl* const* inputs, int n, const ops::Attrs& attrs) {
  DType out_dtype;
  if (!op.has(ops::kOwnOutputs) && ops::agreeing_elementwise(op, inputs, n, &out_dtype))
    return run_agreeing(op, inputs, n, attrs, out_dtype);
  return run(op, inputs, n, attrs, [&](InferContext& ctx) {
    OutputGuard g;
    run_kernel(op, inputs, n, attrs, ctx, g);
    Tensor t(g.data()[0]);
    g.data()[0] = nullptr;
    return t;
  });
}

}  // namespace kiln::eager
