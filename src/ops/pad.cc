// Padding: Pad (zeros), PadV2 (a given constant) and MirrorPad (REFLECT or SYMMETRIC copies
// of the edge). paddings is an int [rank, 2] matrix of (before, after) per dimension.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>

#include "ops/batch_rows.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kMirrorMode = attr_index({{&op::MirrorPad(), "mode"}, {&op::MirrorPadGrad(), "mode"}});

enum class PadMode { kConstant, kReflect, kSymmetric };

PadMode mode_of(const OpDef& op, const Attrs& attrs) {
  if (&op != &op::MirrorPad() && &op != &op::MirrorPadGrad()) return PadMode::kConstant;
  return attrs.s(kMirrorMode) == "REFLECT" ? PadMode::kReflect : PadMode::kSymmetric;
}

// Checks paddings against the input's dims in TensorFlow's words; `pads` holds (before,
// after) pairs, row-major.
void check_paddings(const std::function<void(const std::string&)>& fail, PadMode mode, const Dims& in,
                    const std::vector<int64_t>& pads, const std::string& size_name = "dimension size") {
  for (size_t d = 0; d < in.size(); ++d) {
    const int64_t before = pads[2 * d], after = pads[2 * d + 1];
    if (before < 0 || after < 0)
      fail("Paddings must be non-negative: " + std::to_string(before) + " " + std::to_string(after));
    if (mode == PadMode::kConstant || in[d] < 0) continue;
    const int64_t limit = mode == PadMode::kReflect ? in[d] - 1 : in[d];
    if (before > limit || after > limit)
      fail(mode == PadMode::kReflect
               ? "paddings must be less than the " + size_name + ": " + std::to_string(before) + ", " +
                     std::to_string(after) + " not less than " + std::to_string(in[d])
               : "paddings must be no greater than the " + size_name + ": " + std::to_string(before) + ", " +
                     std::to_string(after) + " greater than " + std::to_string(in[d]));
  }
}

// Checks the paddings matrix's shape against input 0; its values when known (else the output
// shape is set unknown, of the input's rank, and false returned).
bool known_paddings(InferContext& c, std::vector<int64_t>* pads) {
  const InputInfo& p = c.in(1);
  if (!p.unknown_rank && (p.dims->size() != 2 || ((*p.dims)[1] >= 0 && (*p.dims)[1] != 2)))
    c.fail("paddings must be a matrix with 2 columns: " + dims_text(*p.dims));
  if (!c.in(0).unknown_rank && !p.unknown_rank && (*p.dims)[0] >= 0 &&
      (*p.dims)[0] != static_cast<int64_t>(c.in(0).dims->size()))
    c.fail("The first dimension of paddings must be the rank of inputs" + dims_text(*p.dims) + " " +
           dims_text(*c.in(0).dims));
  if (c.in(0).unknown_rank || !known_ints(p, pads)) {
    c.out(0).shape = c.in(0).unknown_rank ? TensorShape::unknown()
                                          : TensorShape::unknown_dims(static_cast<int>(c.in(0).dims->size()));
    return false;
  }
  return true;
}

void infer_pad(InferContext& c) {
  require_int_dtype(c, 1, "paddings");
  if (&c.op == &op::MirrorPad()) require_string_in(c, "mode", c.attrs.s(kMirrorMode), {"REFLECT", "SYMMETRIC"});
  const PadMode mode = mode_of(c.op, c.attrs);
  if (&c.op == &op::PadV2()) {
    if (c.in(2).dtype != c.in(0).dtype)
      c.fail(std::string("cannot compute PadV2 as input #2(zero-based) was expected to be a ") +
             tf_type_name(c.in(0).dtype) + " tensor but is a " + tf_type_name(c.in(2).dtype) + " tensor");
    if (!c.in(2).unknown_rank && !c.in(2).dims->empty())
      c.fail("constant_values must be a scalar. Found: " + dims_text(*c.in(2).dims));
  }
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> pads;
  if (!known_paddings(c, &pads)) return;
  const Dims& in = *c.in(0).dims;
  check_paddings([&](const std::string& m) { c.fail(m); }, mode, in, pads);
  Dims out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    int64_t size = -1;  // paddings are checked non-negative: only a sum past int64 can go wrong
    if (in[d] >= 0 &&
        (__builtin_add_overflow(in[d], pads[2 * d], &size) || __builtin_add_overflow(size, pads[2 * d + 1], &size)))
      c.fail("Padded dimension " + std::to_string(d) + " is too large");
    out[d] = size;
  }
  c.out(0).shape = TensorShape(std::move(out));
}

// The source index along one dim for output index j, or -1 where the constant goes.
inline int64_t source_index(PadMode mode, int64_t j, int64_t before, int64_t size) {
  int64_t i = j - before;
  if (i >= 0 && i < size) return i;
  switch (mode) {
    case PadMode::kConstant:
      return -1;
    case PadMode::kReflect:
      return i < 0 ? -i : 2 * size - 2 - i;
    case PadMode::kSymmetric:
      return i < 0 ? -i - 1 : 2 * size - 1 - i;
  }
  return -1;
}

template <class T>
struct PadKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    TensorImpl& y = c.out(0);
    const PadMode mode = mode_of(c.op, c.attrs);
    const std::vector<int64_t> pads = int_values(c.in(1));
    const size_t rank = x.dims.size();
    // Checked again here: a graph's static output shape does not prove paddings were seen.
    if (pads.size() != 2 * rank) c.fail("paddings do not match the input's rank");
    check_paddings([&](const std::string& m) { c.fail(m); }, mode, x.dims, pads);
    for (size_t d = 0; d < rank; ++d)
      if (y.dims[d] != x.dims[d] + pads[2 * d] + pads[2 * d + 1]) c.fail("the output's shape does not match paddings");
    const T fill = &c.op == &op::PadV2() ? c.in(2).as<T>()[0] : T(0);
    T* out = y.as<T>();
    if (y.num_elements == 0) return;
    if (rank == 0) {
      out[0] = x.as<T>()[0];
      return;
    }
    if (x.num_elements == 0) {  // all padding (a constant pad of an empty input)
      for (int64_t i = 0; i < y.num_elements; ++i) out[i] = fill;
      return;
    }
    const T* in = x.as<T>();
    const Dims in_strides = strides_of(x.dims);
    const int64_t row = y.dims[rank - 1], in_row = x.dims[rank - 1];
    const int64_t before = pads[2 * (rank - 1)];
    const int64_t rows = y.num_elements / row;
    Dims idx(rank - 1, 0);  // the output row's index over the leading dims
    for (int64_t r = 0; r < rows; ++r, out += row) {
      int64_t src = 0;
      bool constant = false;
      for (size_t d = 0; d + 1 < rank; ++d) {
        const int64_t i = source_index(mode, idx[d], pads[2 * d], x.dims[d]);
        if (i < 0) {
          constant = true;
          break;
        }
        src += i * in_strides[d];
      }
      if (constant) {
        for (int64_t j = 0; j < row; ++j) out[j] = fill;
      } else if (mode == PadMode::kConstant) {
        for (int64_t j = 0; j < before; ++j) out[j] = fill;
        std::memcpy(out + before, in + src, in_row * sizeof(T));
        for (int64_t j = before + in_row; j < row; ++j) out[j] = fill;
      } else {
        for (int64_t j = 0; j < row; ++j) out[j] = in[src + source_index(mode, j, before, in_row)];
      }
      for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
        if (++idx[d] < y.dims[d]) break;
        idx[d] = 0;
      }
    }
  }
};

// MirrorPadGrad(input, paddings): attr mode. The gradient of MirrorPad: input is the padded
// tensor's gradient; each of its elements is added to the element it was mirrored from, so
// the output is the input less its paddings.
void infer_mirror_pad_grad(InferContext& c) {
  require_int_dtype(c, 1, "paddings");
  require_string_in(c, "mode", c.attrs.s(kMirrorMode), {"REFLECT", "SYMMETRIC"});
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> pads;
  if (!known_paddings(c, &pads)) return;
  const Dims& in = *c.in(0).dims;
  Dims out(in.size(), -1);
  for (size_t d = 0; d < in.size(); ++d) {
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0)
      c.fail("Paddings must be non-negative: " + std::to_string(pads[2 * d]) + " " + std::to_string(pads[2 * d + 1]));
    if (in[d] >= 0) out[d] = in[d] - pads[2 * d] - pads[2 * d + 1];  // both non-negative: no overflow
    if (in[d] >= 0 && out[d] < 0) c.fail("paddings are larger than the input in dimension " + std::to_string(d));
  }
  check_paddings([&](const std::string& m) { c.fail(m); }, mode_of(c.op, c.attrs), out, pads, "output dimension size");
  c.out(0).shape = TensorShape(std::move(out));
}

template <class T>
struct MirrorPadGradKernel {
  static void run(KernelContext& c) {
    const TensorImpl& g = c.in(0);
    TensorImpl& dx = c.out(0);
    const PadMode mode = mode_of(c.op, c.attrs);
    const std::vector<int64_t> pads = int_values(c.in(1));
    const size_t rank = g.dims.size();
    if (pads.size() != 2 * rank || dx.dims.size() != rank) c.fail("paddings do not match the input's rank");
    for (size_t d = 0; d < rank; ++d)
      if (dx.dims[d] != g.dims[d] - pads[2 * d] - pads[2 * d + 1]) c.fail("the output's shape does not match paddings");
    check_paddings([&](const std::string& m) { c.fail(m); }, mode, dx.dims, pads);
    T* out = dx.as<T>();
    std::fill(out, out + dx.num_elements, T(0));
    if (g.num_elements == 0 || dx.num_elements == 0) return;
    const T* in = g.as<T>();
    if (rank == 0) {
      out[0] = in[0];
      return;
    }
    const Dims out_strides = strides_of(dx.dims);
    const int64_t row = g.dims[rank - 1], out_row = dx.dims[rank - 1], before = pads[2 * (rank - 1)];
    const int64_t rows = g.num_elements / row;
    Dims idx(rank - 1, 0);  // the input row's index over the leading dims
    for (int64_t r = 0; r < rows; ++r, in += row) {
      int64_t dst = 0;
      for (size_t d = 0; d + 1 < rank; ++d) dst += source_index(mode, idx[d], pads[2 * d], dx.dims[d]) * out_strides[d];
      for (int64_t j = 0; j < row; ++j) out[dst + source_index(mode, j, before, out_row)] += in[j];
      for (int d = static_cast<int>(rank) - 2; d >= 0; --d) {
        if (++idx[d] < g.dims[d]) break;
        idx[d] = 0;
      }
    }
  }
};

// The gradient of a constant pad is the padded region's inside: a Slice of dy at the
// paddings' befores, the input's size (TensorFlow's PadGrad).
using namespace grad;  // NOLINT: the shorthands read as math
void pad_grad(GradContext& c) {
  const std::vector<int64_t> pads = known_input_ints(c, 1, "paddings");
  std::vector<int64_t> begin;
  for (size_t i = 0; i < pads.size(); i += 2) begin.push_back(pads[i]);
  const Tensor b = ints(c.b, begin);
  const Tensor size = shape(c.b, c.x[0]);
  c.dx[0] = emit1(c.b, op::Slice(), {&c.dy[0], &b, &size});
}

// MirrorPad and MirrorPadGrad are each other's gradients (both linear, one the other's transpose).
void mirror_pad_grad(GradContext& c) { c.dx[0] = emit1(c.b, op::MirrorPadGrad(), {&c.dy[0], &c.x[1]}, c.attrs); }
void mirror_pad_grad_grad(GradContext& c) { c.dx[0] = emit1(c.b, op::MirrorPad(), {&c.dy[0], &c.x[1]}, c.attrs); }

}  // namespace

namespace {

// Padding that leaves the batch axis alone, by free paddings and constant.
RowKind pad_rows(const RowsContext& c) {
  std::vector<int64_t> paddings;
  if (c.sized() || !c.rows(0)) return RowKind::kOther;
  for (int i = 1; i < c.num_inputs; ++i)
    if (!c.free(i)) return RowKind::kOther;
  return c.ints(1, paddings) && paddings.size() >= 2 && paddings[0] == 0 && paddings[1] == 0 ? RowKind::kRows
                                                                                             : RowKind::kOther;
}

}  // namespace

const OpDef& op::Pad() {
  static const OpDef def = {.name = "Pad",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "paddings"},
                            .traits = kTfjs,
                            .infer = infer_pad,
                            .kernels = kernels_for<PadKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tpaddings", 1}},
                            .grad = &pad_grad,
                            .rows = &pad_rows};
  return def;
}

const OpDef& op::PadV2() {
  static const OpDef def = {.name = "PadV2",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"input", "paddings", "constant_values"},
                            .traits = kTfjs,
                            .infer = infer_pad,
                            .kernels = kernels_for<PadKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tpaddings", 1}},
                            .grad = &pad_grad,
                            .rows = &pad_rows};
  return def;
}

const OpDef& op::MirrorPad() {
  static const OpDef def = {.name = "MirrorPad",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "paddings"},
                            .traits = kTfjs,
                            .attr_specs = {string_attr("mode")},
                            .infer = infer_pad,
                            .kernels = kernels_for<PadKernel, KILN_EVERY_TYPE>(),
                            .index_type_attrs = {{"Tpaddings", 1}},
                            .grad = &mirror_pad_grad,
                            .rows = &pad_rows};
  return def;
}

const OpDef& op::MirrorPadGrad() {
  static const OpDef def = {.name = "MirrorPadGrad",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "paddings"},
                            .attr_specs = {string_attr("mode")},
                            .infer = infer_mirror_pad_grad,
                            .kernels = kernels_for<MirrorPadGradKernel, KILN_NUMERIC_COMPLEX, KILN_STORAGE_INTS>(),
                            .index_type_attrs = {{"Tpaddings", 1}},
                            .grad = &mirror_pad_grad_grad};
  return def;
}

}  // namespace kiln::ops
