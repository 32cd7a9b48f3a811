// Ops about shapes: Reshape, ExpandDims, Squeeze, Shape, Size, Rank.
#include <cstring>

#include "ops/batch_rows.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kSqueezeDims = attr_index(op::Squeeze(), "squeeze_dims");
const int kOutType = attr_index({{&op::Shape(), "out_type"}, {&op::Size(), "out_type"}});

// Reshape, ExpandDims and Squeeze hand out a view of their input: the same elements with
// new dims, no copy (TensorFlow's kernels share the buffer too). Eager calls and plan steps
// of static shape alias without the kernel (kView); the kernel serves a plan step whose
// shape the values decide, running the shape function on them (the checks and messages stay
// the shape function's). Data in a plan's frame, which the frame reuses after its last step,
// is copied instead (make_alias); plans keep a view's input out of the frame.
void run_view(KernelContext& c) {
  InputInfo infos[2];
  for (int i = 0; i < c.num_inputs && i < 2; ++i) infos[i] = InputInfo{c.in(i).dtype, &c.in(i).dims, false, &c.in(i)};
  InferContext ctx(c.op, infos, c.num_inputs, c.attrs);
  c.op.infer(ctx);
  c.outputs[0] = detail::make_alias(&c.in(0), ctx.out(0).shape.dims());
}
template <class T>
struct ViewKernel {
  static void run(KernelContext& c) { run_view(c); }
};
// Every dtype, String and Variant included (make_alias retains their elements).
std::array<KernelFn, kNumDTypes> view_kernels() {
  std::array<KernelFn, kNumDTypes> k = kernels_for<ViewKernel, KILN_EVERY_TYPE>();
  k[static_cast<int>(DType::String)] = &run_view;
  k[static_cast<int>(DType::Variant)] = &run_view;
  return k;
}

// Reshape(tensor, shape).
void infer_reshape(InferContext& c) {
  require_int_dtype(c, 1, "shape");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> want;
  if (!known_ints(c.in(1), &want)) {
    const Dims& sd = *c.in(1).dims;
    c.out(0).shape = (!c.in(1).unknown_rank && sd.size() == 1 && sd[0] >= 0)
                         ? TensorShape::unknown_dims(static_cast<int>(static_cast<size_t>(sd[0])))
                         : TensorShape::unknown();
    return;
  }
  if (c.in(1).dims->size() > 1) c.fail("shape must be a vector, got shape " + dims_text(*c.in(1).dims));
  int unknown = -1;
  int64_t product = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] == -1) {
      if (unknown >= 0)
        c.fail("Only one input size may be -1, not both " + std::to_string(unknown) + " and " + std::to_string(i));
      unknown = static_cast<int>(i);
    } else if (want[i] < 0) {
      c.fail("Size " + std::to_string(i) + " must be non-negative, not " + std::to_string(want[i]));
    } else {
      product = checked_mul(product, want[i], "the reshape size");
    }
  }
  const TensorShape in = shape_of(c.in(0));
  const int64_t n = in.is_fully_defined() ? detail::checked_num_elements(in.dims().data(), in.dims().size()) : -1;
  if (unknown >= 0) {
    if (n == 0 && product == 0) {
      // An empty input and a 0 in the requested shape: TensorFlow sizes the -1 from the
      // nonzero dims of both (0x3 as [-1, 0] is 3x0).
      int64_t input_nonzero = 1, wanted_nonzero = 1;
      for (int64_t d : in.dims())
        if (d != 0) input_nonzero *= d;
      for (size_t i = 0; i < want.size(); ++i)
        if (static_cast<int>(i) != unknown && want[i] != 0) wanted_nonzero *= want[i];
      want[unknown] = input_nonzero / wanted_nonzero;
    } else if (n >= 0) {
      if (product == 0 || n % product != 0)
        c.fail("Input to reshape is a tensor with " + std::to_string(n) +
               " values, but the requested shape requires a multiple of " + std::to_string(product));
      want[unknown] = n / product;
    }
  } else if (n >= 0 && n != product) {
    c.fail("Input to reshape is a tensor with " + std::to_string(n) + " values, but the requested shape has " +
           std::to_string(product));
  }
  c.out(0).shape = TensorShape(Dims(want));
}

// ExpandDims(input, axis).
void infer_expand_dims(InferContext& c) {
  require_int_dtype(c, 1, "axis");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> axis;
  if (c.in(0).unknown_rank || !known_ints(c.in(1), &axis)) {
    c.out(0).shape = c.in(0).unknown_rank ? TensorShape::unknown()
                                          : TensorShape::unknown_dims(static_cast<int>(c.in(0).dims->size() + 1));
    return;
  }
  if (axis.size() != 1) c.fail("'dim' must be a tensor with a single value");
  Dims d = *c.in(0).dims;
  const int64_t r = static_cast<int64_t>(d.size()) + 1;
  const int64_t a = normalize_axis(c, axis[0], r, "`axis`");
  d.insert_at(static_cast<size_t>(a), 1);
  c.out(0).shape = TensorShape(Dims(d));
}

// Squeeze(input): attr squeeze_dims (empty: every size-1 dim).
void infer_squeeze(InferContext& c) {
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  if (c.in(0).unknown_rank) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  const Dims& d = *c.in(0).dims;
  const int64_t r = static_cast<int64_t>(d.size());
  const std::vector<int64_t>& axes = c.attrs.list(kSqueezeDims);
  std::vector<bool> drop(d.size(), false);
  for (int64_t a : axes) {
    const int64_t k = normalize_axis(c, a, r);
    if (d[k] >= 0 && d[k] != 1)
      c.fail("Can not squeeze dim[" + std::to_string(k) + "], expected a dimension of 1, got " + std::to_string(d[k]));
    drop[k] = true;
  }
  Dims out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (axes.empty() && d[i] < 0) {  // might be 1: unknown result rank
      c.out(0).shape = TensorShape::unknown();
      return;
    }
    if (axes.empty() ? d[i] == 1 : drop[i]) continue;
    out.push_back(d[i]);
  }
  c.out(0).shape = TensorShape(std::move(out));
}

// Shape, Size, Rank: attr out_type (Shape, Size).
// TensorFlow's out_type of Shape and Size: int32 or int64 (the kernels write those).
DType int_out_type(const InferContext& c) {
  const DType t = c.attrs.type(kOutType);
  require_type_in(c, "out_type", t, {DType::Int32, DType::Int64});
  return t;
}
void infer_shape(InferContext& c) {
  c.out(0).dtype = int_out_type(c);
  c.kernel_dtype = c.in(0).dtype;
  c.out(0).shape = TensorShape(Dims{c.in(0).unknown_rank ? -1 : static_cast<int64_t>(c.in(0).dims->size())});
}
void infer_scalar_int(InferContext& c) {
  c.out(0).dtype = c.op.attr_specs.empty() ? DType::Int32 : int_out_type(c);
  c.kernel_dtype = c.in(0).dtype;
  c.out(0).shape = TensorShape();
}
void write_int(TensorImpl& t, int64_t i, int64_t v) {
  if (t.dtype == DType::Int32)
    t.as<int32_t>()[i] = static_cast<int32_t>(v);
  else
    t.as<int64_t>()[i] = v;
}
template <class T>
struct ShapeKernel {
  static void run(KernelContext& c) {
    for (size_t i = 0; i < c.in(0).dims.size(); ++i) write_int(c.out(0), i, c.in(0).dims[i]);
  }
};
template <class T>
struct SizeKernel {
  static void run(KernelContext& c) { write_int(c.out(0), 0, c.in(0).num_elements); }
};
template <class T>
struct RankKernel {
  static void run(KernelContext& c) { write_int(c.out(0), 0, static_cast<int64_t>(c.in(0).dims.size())); }
};

// Reshape, ExpandDims, Squeeze: the gradient is dy in the input's shape.
void reshape_grad(GradContext& c) { c.dx[0] = grad::reshape_like(c.b, c.dy[0], c.x[0]); }

// To [-1, d1, ...] from an input whose other dims are known with the same product (-1 is the
// batch); or to a shape led by the batch size (Keras's Reshape layer).
RowKind reshape_rows(const RowsContext& c) {
  if (!c.rows(0)) return RowKind::kOther;
  if (c.sized()) return c.is(1, RowKind::kRowsShape) ? RowKind::kRows : RowKind::kOther;
  std::vector<int64_t> to;
  if (!c.free(1) || !c.ints(1, to) || to.empty() || to[0] != -1 || c.rank(0) < 1) return RowKind::kOther;
  // (Products in double: a hostile graph's dims must not overflow; equal products of real
  // tensors' dims are far below 2^53.)
  double want = 1, have = 1;
  for (size_t i = 1; i < to.size(); ++i) {
    if (to[i] < 0) return RowKind::kOther;
    want *= static_cast<double>(to[i]);
  }
  const Dims& from = *c.inputs[0].dims;
  for (size_t i = 1; i < from.size(); ++i) {
    if (from[i] < 0) return RowKind::kOther;
    have *= static_cast<double>(from[i]);
  }
  return want == have && want > 0 && want < 9e15 ? RowKind::kRows : RowKind::kOther;
}

// A new axis anywhere but first.
RowKind expand_dims_rows(const RowsContext& c) {
  std::vector<int64_t> axis;
  return !c.sized() && c.rows(0) && c.free(1) && c.ints(1, axis) && axis.size() == 1 && !touches_batch(axis, c.out_rank)
             ? RowKind::kRows
             : RowKind::kOther;
}

// Named axes other than the first (squeezing every axis of size 1 would squeeze a batch of one
// away).
RowKind squeeze_rows(const RowsContext& c) {
  const std::vector<int64_t>& axes = c.attrs.list(kSqueezeDims);
  return !c.sized() && c.rows(0) && !axes.empty() && !touches_batch(axes, c.rank(0)) ? RowKind::kRows : RowKind::kOther;
}

// The shape of a batch: led by the batch size.
RowKind shape_rows(const RowsContext& c) { return c.rows(0) ? RowKind::kRowsShape : RowKind::kOther; }

}  // namespace

const OpDef& op::Reshape() {
  static const OpDef def = {.name = "Reshape",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"tensor", "shape"},
                            .traits = kPure | kTfjs | kOwnOutputs | kView,
                            .infer = infer_reshape,
                            .shape_input = 1,
                            .kernels = view_kernels(),
                            .index_type_attrs = {{"Tshape", 1}},
                            .grad = &reshape_grad,
                            .rows = &reshape_rows};
  return def;
}
const OpDef& op::ExpandDims() {
  static const OpDef def = {.name = "ExpandDims",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", renamed_arg("dim", "axis")},
                            .traits = kPure | kTfjs | kOwnOutputs | kView,
                            .infer = infer_expand_dims,
                            .kernels = view_kernels(),
                            .index_type_attrs = {{"Tdim", 1}},
                            .grad = &reshape_grad,
                            .rows = &expand_dims_rows};
  return def;
}
const OpDef& op::Squeeze() {
  static const OpDef def = {.name = "Squeeze",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kPure | kTfjs | kOwnOutputs | kView,
                            .attr_specs = {renamed_attr(int_list_attr("squeeze_dims", {}), "axis")},
                            .infer = infer_squeeze,
                            .kernels = view_kernels(),
                            .grad = &reshape_grad,
                            .rows = &squeeze_rows};
  return def;
}
const OpDef& op::Shape() {
  static const OpDef def = {.name = "Shape",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kShapeOnly | kTfjs,
                            .attr_specs = {type_attr("out_type", DType::Int32)},
                            .infer = infer_shape,
                            .kernels = kernels_for<ShapeKernel, KILN_EVERY_TYPE>(),
                            .grad = &no_gradient,
                            .rows = &shape_rows};
  return def;
}
const OpDef& op::Size() {
  static const OpDef def = {.name = "Size",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kShapeOnly | kTfjs,
                            .attr_specs = {type_attr("out_type", DType::Int32)},
                            .infer = infer_scalar_int,
                            .kernels = kernels_for<SizeKernel, KILN_EVERY_TYPE>(),
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::Rank() {
  static const OpDef def = {.name = "Rank",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kShapeOnly | kTfjs,
                            .infer = infer_scalar_int,
                            .kernels = kernels_for<RankKernel, KILN_EVERY_TYPE>(),
                            .grad = &no_gradient};
  return def;
}

}  // namespace kiln::ops
