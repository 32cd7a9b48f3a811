// Reductions (Sum, Mean, Max, Min, Prod with axes as an input tensor), ArgMax, ArgMin, Softmax, LogSoftmax.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "core/scratch.h"
#include "kernels/isa_dispatch.h"
#include "kernels/lane_vectors.h"
#include "kernels/vmath.h"
#include "ops/batch_rows.h"
#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

// Every reduction's keep_dims.
const int kKeepDims = attr_index({{&op::Sum(), "keep_dims"},
                                  {&op::Mean(), "keep_dims"},
                                  {&op::Max(), "keep_dims"},
                                  {&op::Min(), "keep_dims"},
                                  {&op::Prod(), "keep_dims"}});
const int kOutputType = attr_index({{&op::ArgMax(), "output_type"}, {&op::ArgMin(), "output_type"}});

// The reduced axes of a rank-r input, normalized, as a bitmap; fails on a bad axis.
std::vector<bool> reduced_axes(const InferContext* c, const std::vector<int64_t>& axes, int64_t r, const char* op) {
  std::vector<bool> mask(static_cast<size_t>(r), false);
  for (int64_t a : axes) {
    if (a < -r || a >= r) {
      const std::string msg =
          "Invalid reduction dimension " + std::to_string(a) + " for input with " + std::to_string(r) + " dimensions.";
      if (c) c->fail(msg);
      throw InvalidArgumentError(msg + " [Op:" + op + "]");
    }
    const int64_t axis = a < 0 ? a + r : a;
    if (mask[axis]) {  // TensorFlow refuses an axis named twice (1 and -1 of a rank-2 input too)
      const std::string msg = "Invalid reduction arguments: Axes contains duplicate dimension: " + std::to_string(axis);
      if (c) c->fail(msg);
      throw InvalidArgumentError(msg + " [Op:" + op + "]");
    }
    mask[axis] = true;
  }
  return mask;
}

// Reductions: inputs (input, reduction_indices); attr keep_dims.
void infer_reduce(InferContext& c) {
  require_int_dtype(c, 1, "reduction_indices");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  const bool keep = c.attrs.b(kKeepDims);
  std::vector<int64_t> axes;
  const InputInfo& ax = c.in(1);
  // No axes (a known length of 0) are known values even when the tensor is not; and
  // whatever unknown axes a scalar input is given, a valid call leaves it a scalar (the
  // kernel checks them). Either way the output shape is the input's.
  const bool no_axes = !ax.unknown_rank && std::find(ax.dims->begin(), ax.dims->end(), 0) != ax.dims->end();
  const bool scalar = !c.in(0).unknown_rank && c.in(0).dims->empty();
  if (no_axes || (scalar && !ax.value)) {
    c.out(0).shape = shape_of(c.in(0));
    return;
  }
  if (c.in(0).unknown_rank || !known_ints(ax, &axes)) {
    if (keep && !c.in(0).unknown_rank)
      c.out(0).shape = TensorShape::unknown_dims(static_cast<int>(c.in(0).dims->size()));
    else
      c.out(0).shape = TensorShape::unknown();
    return;
  }
  const Dims& d = *c.in(0).dims;
  const auto mask = reduced_axes(&c, axes, static_cast<int64_t>(d.size()), c.op.name);
  Dims out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!mask[i])
      out.push_back(d[i]);
    else if (keep)
      out.push_back(1);
  }
  c.out(0).shape = TensorShape(std::move(out));
}

// Integer sums and products wrap, as TensorFlow's do, computed in an unsigned type at least
// int's width (16-bit operands would be promoted to int, whose product can overflow).
template <class T>
using Wrap = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

struct SumR {
  template <class T>
  static T init() {
    return T(0);
  }
  template <class T>
  static T step(T acc, T x) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Wrap<T>>(acc) + static_cast<Wrap<T>>(x));
    else
      return acc + x;
  }
  template <class T>
  static T finish(T acc, int64_t) {
    return acc;
  }
};
struct MeanR : SumR {
  template <class T>
  static T finish(T acc, int64_t n) {
    return n == 0 ? (std::is_floating_point_v<T> ? T(NAN) : T(0)) : static_cast<T>(acc / static_cast<T>(n));
  }
};
struct ProdR {
  template <class T>
  static T init() {
    return T(1);
  }
  template <class T>
  static T step(T acc, T x) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(static_cast<Wrap<T>>(acc) * static_cast<Wrap<T>>(x));
    else
      return acc * x;
  }
  template <class T>
  static T finish(T acc, int64_t) {
    return acc;
  }
};
struct MaxR {
  template <class T>
  static T init() {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                : std::numeric_limits<T>::lowest();
  }
  template <class T>
  static T step(T acc, T x) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) return x;
    return x > acc ? x : acc;
  }
  template <class T>
  static T finish(T acc, int64_t) {
    return acc;
  }
};
struct MinR {
  template <class T>
  static T init() {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  }
  template <class T>
  static T step(T acc, T x) {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(x)) return x;
    return x < acc ? x : acc;
  }
  template <class T>
  static T finish(T acc, int64_t) {
    return acc;
  }
};

// Permutes x so kept axes come first and reduced axes last; returns the data pointer to
// reduce as [outer, inner] rows (inner = product of reduced dims).
template <class T>
const T* to_kept_then_reduced(const TensorImpl& x, const std::vector<bool>& mask, int64_t* outer, int64_t* inner) {
  const size_t r = x.dims.size();
  *outer = 1;
  *inner = 1;
  std::vector<size_t> perm;
  for (size_t i = 0; i < r; ++i)
    if (!mask[i]) {
      perm.push_back(i);
      *outer *= x.dims[i];
    }
  for (size_t i = 0; i < r; ++i)
    if (mask[i]) {
      perm.push_back(i);
      *inner *= x.dims[i];
    }
  bool identity = true;
  size_t last = 0;
  for (size_t i = 0; i < r; ++i) {
    if (x.dims[perm[i]] == 1) continue;
    if (perm[i] < last) identity = false;
    last = perm[i];
  }
  if (identity) return x.as<T>();
  T* copy = detail::scratch<T>(detail::kReduceScratch, static_cast<size_t>(x.num_elements));
  const Dims st = strides_of(x.dims);
  Dims pd(r), ps(r), idx(r, 0);
  for (size_t i = 0; i < r; ++i) {
    pd[i] = x.dims[perm[i]];
    ps[i] = st[perm[i]];
  }
  const T* src = x.as<T>();
  for (int64_t o = 0; o < x.num_elements; ++o) {
    int64_t off = 0;
    for (size_t i = 0; i < r; ++i) off += idx[i] * ps[i];
    copy[o] = src[off];
    for (int i = static_cast<int>(r) - 1; i >= 0; --i) {
      if (++idx[i] < pd[i]) break;
      idx[i] = 0;
    }
  }
  return copy;
}

// The sum of a contiguous row of floats, pairwise as Eigen (TensorFlow's kernels) does: leaves
// of up to 1024 elements summed in 8 interleaved lanes (vectorizes), halves added together,
// so the error grows with log(n), not n (a float32 sum of 1e8 ones is 1e8, not 2^24).
// `bytes`: the caller's vector width (KILN_ISA_DISPATCH's kIsaVectorBytes; kernels/lane_vectors.h).
template <class T, int bytes>
KILN_ISA_BODY T pairwise_leaf_body(const T* p, int64_t n) {
  kernels::LaneVectors<T, 8, bytes> lanes;
  std::memset(static_cast<void*>(lanes.v), 0, sizeof lanes.v);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) lanes.add(p + i);
  T lane[8];
  lanes.store(lane);
  T tail = 0;
  for (; i < n; ++i) tail += p[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])) + tail;
}
template <class T>
T pairwise_sum(const T* p, int64_t n) {
  if (n <= 1024) {
    T sum = 0;
    KILN_ISA_DISPATCH((sum = pairwise_leaf_body<T, kIsaVectorBytes>(p, n)));
    return sum;
  }
  const int64_t half = (n / 2 + 1023) / 1024 * 1024;
  return pairwise_sum(p, half) + pairwise_sum(p + half, n - half);
}
// acc[j] += p[i * cols + j] for rows [r0, r1): whole rows at a time (vectorizes).
template <class T>
KILN_ISA_BODY void add_rows_body(const T* p, int64_t r0, int64_t r1, int64_t cols, T* acc) {
  for (int64_t i = r0; i < r1; ++i)
    for (int64_t j = 0; j < cols; ++j) acc[j] += p[i * cols + j];
}
// Column sums of a rows x cols block, with the same error growth: blocks of up to 1024 rows
// summed row by row, then the block sums combined as a binary counter (cascade summation:
// level k holds the sum of 2^k blocks, and two equal levels add into the next).
template <class T>
void column_sums(const T* p, int64_t rows, int64_t cols, T* out) {
  std::vector<std::vector<T>> level;  // level[k]: empty, or the sum of 2^k blocks
  std::vector<T> block(static_cast<size_t>(cols));
  for (int64_t r0 = 0; r0 < rows; r0 += 1024) {
    std::fill(block.begin(), block.end(), T(0));
    const int64_t r1 = std::min(rows, r0 + 1024);
    KILN_ISA_DISPATCH((add_rows_body(p, r0, r1, cols, block.data())));
    size_t k = 0;
    for (; k < level.size() && !level[k].empty(); ++k) {
      for (int64_t j = 0; j < cols; ++j) block[j] += level[k][j];
      level[k].clear();
    }
    if (k == level.size()) level.emplace_back();
    level[k] = block;
  }
  std::fill(out, out + cols, T(0));
  for (const auto& l : level)
    if (!l.empty())
      for (int64_t j = 0; j < cols; ++j) out[j] += l[j];
}
// The other reductions (max, min, prod, integer sums), in TensorFlow's order: over the
// leading rows of a [rows, cols] block into cols outputs, and along each of outer rows.
template <class R, class T>
KILN_ISA_BODY void reduce_leading_body(const T* p, int64_t rows, int64_t cols, T* out) {
  for (int64_t j = 0; j < cols; ++j) out[j] = R::template init<T>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) out[j] = R::step(out[j], p[i * cols + j]);
}
template <class R, class T>
KILN_ISA_BODY void reduce_rows_body(const T* p, int64_t outer, int64_t inner, T* out) {
  for (int64_t o = 0; o < outer; ++o) {
    const T* row = p + o * inner;
    T acc = R::template init<T>();
    for (int64_t i = 0; i < inner; ++i) acc = R::step(acc, row[i]);
    out[o] = R::finish(acc, inner);
  }
}
// Rows [lo, hi) of `inner` floats each summed pairwise (leaves inline, longer rows through
// pairwise_sum), finished by R (a mean divides).
template <class R, class T, int bytes>
KILN_ISA_BODY void sum_rows_body(const T* p, int64_t lo, int64_t hi, int64_t inner, T* out) {
  for (int64_t o = lo; o < hi; ++o) {
    const T* row = p + o * inner;
    out[o] = R::finish(inner <= 1024 ? pairwise_leaf_body<T, bytes>(row, inner) : pairwise_sum(row, inner), inner);
  }
}
template <class R, class T>
constexpr bool kPairwise = std::is_floating_point_v<T>&& std::is_base_of_v<SumR, R>;

template <class R>
struct ReduceKernel {
  template <class T>
  struct K {
    static void run(KernelContext& c) {
      const TensorImpl& x = c.in(0);
      const auto mask = reduced_axes(nullptr, int_values(c.in(1)), static_cast<int64_t>(x.dims.size()), c.op.name);
      T* out = c.out(0).as<T>();
      // One run of reduced axes followed by kept ones, [A, R, B] with B > 1 (a mean over an
      // image's height and width, NHWC): each of the A blocks reduces its R rows of B
      // contiguous values by accumulating whole rows (vectorizes), with no transpose.
      size_t first = 0;
      while (first < mask.size() && !mask[first]) ++first;
      size_t past = first;
      while (past < mask.size() && mask[past]) ++past;
      bool one_run = past < mask.size();
      for (size_t i = past; i < mask.size(); ++i) one_run &= !mask[i];
      if constexpr (std::is_same_v<R, MeanR> && std::is_same_v<T, int32_t>) {
        // TensorFlow sums an int32 mean in 64 bits: the mean of two INT32_MAX is INT32_MAX.
        int64_t outer, inner;
        const T* p = to_kept_then_reduced<T>(x, mask, &outer, &inner);
        for (int64_t o = 0; o < outer; ++o) {
          int64_t acc = 0;
          for (int64_t i = 0; i < inner; ++i) acc += p[o * inner + i];
          out[o] = inner == 0 ? 0 : static_cast<T>(acc / inner);
        }
        return;
      }
      if (one_run && first < past) {
        int64_t blocks = 1, rows = 1, cols = 1;
        for (size_t i = 0; i < first; ++i) blocks *= x.dims[i];
        for (size_t i = first; i < past; ++i) rows *= x.dims[i];
        for (size_t i = past; i < mask.size(); ++i) cols *= x.dims[i];
        for (int64_t a = 0; a < blocks; ++a) {
          const T* p = x.as<T>() + a * rows * cols;
          T* o = out + a * cols;
          if constexpr (kPairwise<R, T>) {
            column_sums(p, rows, cols, o);
          } else {
            KILN_ISA_DISPATCH((reduce_leading_body<R, T>(p, rows, cols, o)));
          }
          for (int64_t j = 0; j < cols; ++j) o[j] = R::finish(o[j], rows);
        }
        return;
      }
      int64_t outer, inner;
      const T* p = to_kept_then_reduced<T>(x, mask, &outer, &inner);
      if constexpr (kPairwise<R, T>) {
        // Rows split over threads from ~64K elements (a layer norm's mean over [4096, 256]):
        // each row's sum is the same whichever thread computes it.
        parallel_for(outer, std::max<int64_t>(2, 65536 / std::max<int64_t>(inner, 1)), [&](int64_t lo, int64_t hi) {
          KILN_ISA_DISPATCH((sum_rows_body<R, T, kIsaVectorBytes>(p, lo, hi, inner, out)));
        });
      } else {
        KILN_ISA_DISPATCH((reduce_rows_body<R, T>(p, outer, inner, out)));
      }
    }
  };
};

// ArgMax/ArgMin(input, dimension): attr output_type (int64).
void infer_argmax(InferContext& c) {
  if (c.in(0).dtype == DType::Bool) c.fail(std::string(c.op.name) + " does not support bool tensors");
  require_int_dtype(c, 1, "dimension");
  c.out(0).dtype = c.attrs.type(kOutputType);
  if (c.out(0).dtype != DType::Int32 && c.out(0).dtype != DType::Int64)
    c.fail("output_type must be int32 or int64, got " + std::string(dtype_name(c.out(0).dtype)));
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> axis;
  if (c.in(0).unknown_rank || !known_ints(c.in(1), &axis)) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  if (!c.in(1).unknown_rank && !c.in(1).dims->empty())
    c.fail("dim must be a scalar, but received tensor of shape: " + dims_text(*c.in(1).dims));
  if (axis.size() != 1) c.fail("dimension must be a scalar");
  const Dims& d = *c.in(0).dims;
  if (d.empty()) c.fail("Expected the input to have rank >= 1, got a scalar");
  const int64_t a = normalize_axis(c, axis[0], static_cast<int64_t>(d.size()), "dimension");
  if (d[a] == 0) c.fail("Reduction axis " + std::to_string(a) + " is empty in shape " + dims_text(d));
  Dims out;
  for (size_t i = 0; i < d.size(); ++i)
    if (static_cast<int64_t>(i) != a) out.push_back(d[i]);
  c.out(0).shape = TensorShape(std::move(out));
}
template <bool Max>
struct ArgExtremumKernel {
  template <class T>
  struct K {
    static void run(KernelContext& c) {
      const TensorImpl& x = c.in(0);
      const std::vector<int64_t> dim = int_values(c.in(1));
      const auto rank = static_cast<int64_t>(x.dims.size());
      if (!c.in(1).dims.empty() || dim.size() != 1 || dim[0] < -rank || dim[0] >= rank)
        c.fail("dimension must be a scalar in [-rank, rank)");
      int64_t a = dim[0];
      if (a < 0) a += rank;
      if (x.dims[a] == 0) c.fail("Reduction axis " + std::to_string(a) + " is empty in shape " + dims_text(x.dims));
      int64_t outer = 1, inner = 1;
      for (int64_t i = 0; i < a; ++i) outer *= x.dims[i];
      for (size_t i = a + 1; i < x.dims.size(); ++i) inner *= x.dims[i];
      const int64_t n = x.dims[a];
      const T* p = x.as<T>();
      const bool i64 = c.out(0).dtype == DType::Int64;
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
          int64_t best = 0;
          T bv = p[o * n * inner + j];
          for (int64_t k = 1; k < n; ++k) {
            const T v = p[(o * n + k) * inner + j];
            // TensorFlow's CPU kernel passes over NaNs: a NaN is chosen only while nothing else is.
            if ((Max ? v > bv : v < bv) || (std::is_floating_point_v<T> && std::isnan(bv) && !std::isnan(v))) {
              bv = v;
              best = k;
            }
          }
          if (i64)
            c.out(0).as<int64_t>()[o * inner + j] = best;
          else
            c.out(0).as<int32_t>()[o * inner + j] = static_cast<int32_t>(best);
        }
    }
  };
};

// Softmax / LogSoftmax over the last axis.
void infer_softmax(InferContext& c) {
  if (!c.in(0).unknown_rank && c.in(0).dims->empty()) c.fail("logits must have >= 1 dimension, got []");
  c.out(0).dtype = c.in(0).dtype;
  c.out(0).shape = shape_of(c.in(0));
  c.kernel_dtype = c.in(0).dtype;
}
// A row's max in 16 independent lanes: one accumulator is a serial chain the
// compiler must keep in order; lanes become vector instructions. std::max(a, b) keeps a when
// b is NaN, as the vector max does: a NaN row's outputs are NaN either way (its sum is).
template <class T, int bytes>
KILN_ISA_BODY T row_max(const T* x, int64_t n) {
  constexpr int L = 16;
  T m = x[0];
  int64_t i = 1;
  if (n >= 2 * L) {
    kernels::LaneVectors<T, L, bytes> lanes;
    lanes.load(x);
    for (i = L; i + L <= n; i += L) lanes.max(x + i);
    T acc[L];
    lanes.store(acc);
    for (int j = 0; j < L; ++j) m = std::max(m, acc[j]);
  }
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}
// A row's sum as Reduce's (pairwise, error growing with log(n)): the leaf inline in the
// caller's instruction-set variant, longer rows through pairwise_sum.
template <class T, int bytes>
KILN_ISA_BODY T row_sum(const T* x, int64_t n) {
  return n <= 1024 ? pairwise_leaf_body<T, bytes>(x, n) : pairwise_sum(x, n);
}

template <bool Log>
struct SoftmaxKernel {
  template <class T>
  struct K {
    static void run(KernelContext& c) {
      const TensorImpl& x = c.in(0);
      const int64_t n = x.dims[x.dims.size() - 1];
      const int64_t rows = n == 0 ? 0 : x.num_elements / n;
      const T* p = x.as<T>();
      T* o = c.out(0).as<T>();
      // KilnScaledSoftmax's scale: each logit is multiplied by it first, rounded as the Mul
      // it replaces rounds it.
      const T* scale = nullptr;
      if (c.num_inputs > 1) {
        if (c.in(1).num_elements != 1) c.fail("the scale must be a scalar, got shape " + dims_text(c.in(1).dims));
        scale = c.in(1).as<T>();
      }
      // Rows split over threads from ~32K elements on (an attention's scores: 2M and more).
      parallel_for(rows, std::max<int64_t>(2, 32768 / std::max<int64_t>(n, 1)), [&](int64_t lo, int64_t hi) {
        KILN_ISA_DISPATCH(rows_body<kIsaVectorBytes>(p, o, n, lo, hi, scale));
      });
    }
    template <int bytes>
    KILN_ISA_BODY static void rows_body(const T* p, T* o, int64_t n, int64_t lo, int64_t hi, const T* scale) {
      for (int64_t r = lo; r < hi; ++r) {
        const T* xr = p + r * n;
        T* orow = o + r * n;
        if (scale) {  // the scaled row, in the output, is the row from here on
          const T s = *scale;
          for (int64_t i = 0; i < n; ++i) orow[i] = xr[i] * s;
          xr = orow;
        }
        const T mx = row_max<T, bytes>(xr, n);
        for (int64_t i = 0; i < n; ++i) orow[i] = xr[i] - mx;
        if constexpr (Log) {
          T* tmp = detail::scratch<T>(detail::kReduceScratch, static_cast<size_t>(n));
          kernels::vexp(orow, tmp, n);
          const T ls = std::log(row_sum<T, bytes>(tmp, n));
          for (int64_t i = 0; i < n; ++i) orow[i] -= ls;
        } else {
          kernels::vexp(orow, orow, n);
          const T inv = T(1) / row_sum<T, bytes>(orow, n);
          for (int64_t i = 0; i < n; ++i) orow[i] *= inv;
        }
      }
    }
  };
};

// ---- gradients (TensorFlow's math_grad) ----
using namespace grad;  // NOLINT: the shorthands read as math

// The reduction's axes, normalized and sorted; the input's rank must be known.
std::vector<int64_t> reduced_axes(const GradContext& c) {
  Dims d;
  if (!static_dims(c.x[0], &d))
    throw UnimplementedError(std::string("The gradient of ") + c.op.name + " needs an input of known rank");
  std::vector<int64_t> axes = known_input_ints(c, 1, "reduction_indices");
  const int64_t r = static_cast<int64_t>(d.size());
  for (int64_t& a : axes)
    if (a < 0) a += r;
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}
// dy (or y) given back its reduced dims and broadcast to the input's shape.
Tensor spread(GradContext& c, const Tensor& t, const std::vector<int64_t>& axes) {
  return broadcast_like(c.b, unreduce(c.b, t, axes, c.attrs.b(kKeepDims)), c.x[0]);
}
void sum_grad(GradContext& c) { c.dx[0] = spread(c, c.dy[0], reduced_axes(c)); }
void mean_grad(GradContext& c) {
  const std::vector<int64_t> axes = reduced_axes(c);
  Dims d;
  static_dims(c.x[0], &d);
  int64_t count = 1;
  for (int64_t a : axes) count = (count < 0 || d[a] < 0) ? -1 : count * d[a];
  Tensor n;
  if (count >= 0) {
    n = scalar(c.b, c.dy[0], static_cast<double>(count));
  } else {  // |x| / |y|, known when running
    const Tensor sx = emit1(c.b, op::Size(), {&c.x[0]}, Attrs{DType::Int32});
    const Tensor sy = emit1(c.b, op::Size(), {&c.y[0]}, Attrs{DType::Int32});
    n = div(c.b, cast(c.b, sx, c.dy[0].dtype()), cast(c.b, sy, c.dy[0].dtype()));
  }
  c.dx[0] = div(c.b, spread(c, c.dy[0], axes), n);
}
// Max/Min: the gradient is shared evenly between the elements equal to the extremum.
void extremum_grad(GradContext& c) {
  const std::vector<int64_t> axes = reduced_axes(c);
  const Tensor hit = cast(c.b, equal(c.b, c.x[0], spread(c, c.y[0], axes)), c.x[0].dtype());
  const Tensor count = sum(c.b, hit, axes, true);
  c.dx[0] = mul(c.b, div(c.b, hit, count), spread(c, c.dy[0], axes));
}
// Prod: each element's gradient is the product of the others, exact with zeros present
// (one zero: only it gets the product of the rest; two or more: all zero).
void prod_grad(GradContext& c) {
  const std::vector<int64_t> axes = reduced_axes(c);
  const Tensor& x = c.x[0];
  const Tensor zero = scalar(c.b, x, 0), one = scalar(c.b, x, 1);
  const Tensor is_zero = equal(c.b, x, zero);
  const Tensor nonzero = where(c.b, is_zero, one, x);
  const Tensor axes_t = ints(c.b, axes);
  const Tensor p = emit1(c.b, op::Prod(), {&nonzero, &axes_t}, Attrs{true});
  const Tensor zeros = sum(c.b, cast(c.b, is_zero, x.dtype()), axes, true);
  const Tensor others = where(c.b, is_zero, where(c.b, equal(c.b, zeros, one), p, zero),
                              where(c.b, equal(c.b, zeros, zero), div(c.b, p, nonzero), zero));
  c.dx[0] = mul(c.b, others, spread(c, c.dy[0], axes));
}
void softmax_grad(GradContext& c) {
  const Tensor& y = c.y[0];
  c.dx[0] = mul(c.b, sub(c.b, c.dy[0], sum(c.b, mul(c.b, c.dy[0], y), {-1}, true)), y);
}
void log_softmax_grad(GradContext& c) {
  c.dx[0] = sub(c.b, c.dy[0], mul(c.b, sum(c.b, c.dy[0], {-1}, true), exp(c.b, c.y[0])));
}

// A reduction over axes other than the batch's.
RowKind reduce_rows(const RowsContext& c) {
  std::vector<int64_t> axes;
  return !c.sized() && c.rows(0) && c.free(1) && c.ints(1, axes) && !touches_batch(axes, c.rank(0)) ? RowKind::kRows
                                                                                                    : RowKind::kOther;
}
// Softmax over the last axis of a batch of rank 2 or more.
RowKind softmax_rows(const RowsContext& c) { return c.rows(0) && c.out_rank >= 2 ? RowKind::kRows : RowKind::kOther; }

#define KILN_REDUCE_OP(Name, R, Types, Grad)                                                     \
  const OpDef& op::Name() {                                                                      \
    static const OpDef def = {.name = #Name,                                                     \
                              .num_inputs = 2,                                                   \
                              .num_outputs = 1,                                                  \
                              .input_args = {"input", renamed_arg("reduction_indices", "axis")}, \
                              .traits = kPure | kTfjs,                                           \
                              .attr_specs = {bool_attr("keep_dims", false)},                     \
                              .infer = infer_reduce,                                             \
                              .kernels = kernels_for<ReduceKernel<R>::K, Types>(),               \
                              .index_type_attrs = {{"Tidx", 1}},                                 \
                              .grad = Grad,                                                      \
                              .rows = &reduce_rows};                                             \
    return def;                                                                                  \
  }
}  // namespace

// TensorFlow registers Sum, Max, Min, Prod, ArgMax and ArgMin for the 8-, 16- and unsigned
// integer dtypes too. (Its Mean of those accumulates in a wider type; kiln's does not, so
// kiln leaves Mean out for them.)
#define KILN_NUMERIC_INTS KILN_NUMERIC, KILN_STORAGE_INTS
KILN_REDUCE_OP(Sum, SumR, KILN_NUMERIC_INTS, &sum_grad)
KILN_REDUCE_OP(Mean, MeanR, KILN_NUMERIC, &mean_grad)
KILN_REDUCE_OP(Max, MaxR, KILN_NUMERIC_INTS, &extremum_grad)
KILN_REDUCE_OP(Min, MinR, KILN_NUMERIC_INTS, &extremum_grad)
KILN_REDUCE_OP(Prod, ProdR, KILN_NUMERIC_INTS, &prod_grad)

const OpDef& op::ArgMax() {
  static const OpDef def = {.name = "ArgMax",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "dimension"},
                            .traits = kPure | kTfjs,
                            .attr_specs = {type_attr("output_type", DType::Int64)},
                            .infer = infer_argmax,
                            .kernels = kernels_for<ArgExtremumKernel<true>::K, KILN_NUMERIC_INTS>(),
                            .index_type_attrs = {{"Tidx", 1}},
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::ArgMin() {
  static const OpDef def = {.name = "ArgMin",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "dimension"},
                            .traits = kPure | kTfjs,
                            .attr_specs = {type_attr("output_type", DType::Int64)},
                            .infer = infer_argmax,
                            .kernels = kernels_for<ArgExtremumKernel<false>::K, KILN_NUMERIC_INTS>(),
                            .index_type_attrs = {{"Tidx", 1}},
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::Softmax() {
  static const OpDef def = {.name = "Softmax",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"logits"},
                            .traits = kPure | kTfjs,
                            .infer = infer_softmax,
                            .kernels = kernels_for<SoftmaxKernel<false>::K, KILN_FLOATS>(),
                            .grad = &softmax_grad,
                            .rows = &softmax_rows,
                            .output_args = {"softmax"}};
  return def;
}
// KilnScaledSoftmax(logits, scale): Softmax(logits * scale), scale a scalar of the logits'
// dtype, made by the optimizer (optimize/fuse_softmax_scale.cc) from a Mul and a Softmax:
// attention's scores scaled by 1/sqrt(depth) are not written out and read back. Bit for bit
// the two ops.
void infer_scaled_softmax(InferContext& c) {
  infer_softmax(c);
  const InputInfo& s = c.in(1);
  if (s.dtype != c.in(0).dtype) c.fail("the scale must have the logits' dtype");
  if (!s.unknown_rank && std::any_of(s.dims->begin(), s.dims->end(), [](int64_t d) { return d != 1 && d >= 0; }))
    c.fail("the scale must be a scalar, got shape " + dims_text(*s.dims));
}
const OpDef& op::KilnScaledSoftmax() {
  static const OpDef def = {.name = "KilnScaledSoftmax",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"logits", "scale"},
                            .traits = kPure | kInternal,
                            .infer = infer_scaled_softmax,
                            .kernels = kernels_for<SoftmaxKernel<false>::K, KILN_FLOATS>(),
                            .output_args = {"softmax"}};
  return def;
}
const OpDef& op::LogSoftmax() {
  static const OpDef def = {.name = "LogSoftmax",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"logits"},
                            .traits = kPure | kTfjs,
                            .infer = infer_softmax,
                            .kernels = kernels_for<SoftmaxKernel<true>::K, KILN_FLOATS>(),
                            .grad = &log_softmax_grad,
                            .rows = &softmax_rows,
                            .output_args = {"logsoftmax"}};
  return def;
}

}  // namespace kiln::ops
