// TopKV2(input, k): the k largest entries of each row (the last dim) and their indices,
// largest first; equal values keep their order (the lower index first), as TensorFlow's CPU
// kernel orders them. `sorted` = false allows any order; kiln's is the sorted one.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "ops/grad_util.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kIndexType = attr_index(op::TopKV2(), "index_type");

void require_index_dtype(const InferContext& c, DType d, const char* what) {
  require_type_in(c, what, d, {DType::Int16, DType::Int32, DType::Int64});
}

// k from its tensor; fails in TensorFlow's words.
int64_t k_of(const std::function<void(const std::string&)>& fail, const TensorImpl& t) {
  if (!t.dims.empty()) fail("k must be 0-D, got shape " + dims_text(t.dims));
  const int64_t k = int_values(t)[0];
  if (k < 0) fail("Need k >= 0, got " + std::to_string(k));
  return k;
}

void infer_top_k(InferContext& c) {
  require_index_dtype(c, c.in(1).dtype, "Tk");
  require_index_dtype(c, c.attrs.type(kIndexType), "index_type");
  c.kernel_dtype = c.in(0).dtype;
  c.out(0).dtype = c.in(0).dtype;
  c.out(1).dtype = c.attrs.type(kIndexType);
  const InputInfo& x = c.in(0);
  if (!x.unknown_rank && x.dims->empty()) c.fail("input must be >= 1-D, got shape []");
  if (!c.in(1).unknown_rank && !c.in(1).dims->empty()) c.fail("k must be 0-D, got shape " + dims_text(*c.in(1).dims));
  std::vector<int64_t> kv;
  const bool k_known = known_ints(c.in(1), &kv);
  if (k_known && kv[0] < 0) c.fail("Need k >= 0, got " + std::to_string(kv[0]));
  if (x.unknown_rank) {
    c.out(0).shape = c.out(1).shape = TensorShape::unknown();
    return;
  }
  Dims out = *x.dims;
  const int64_t n = out.back();
  if (k_known && n >= 0 && n < kv[0])
    c.fail("input must have at least k columns. Had " + std::to_string(n) + ", needed " + std::to_string(kv[0]));
  out.back() = k_known ? kv[0] : -1;
  c.out(0).shape = c.out(1).shape = TensorShape(out);
}

template <class T>
bool before(T a, T b) {  // descending; NaN below everything, where TensorFlow's CPU kernel puts it
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a > b;
}

template <class T>
struct TopKKernel {
  static void run(KernelContext& c) {
    const TensorImpl& x = c.in(0);
    auto fail = [&](const std::string& m) { c.fail(m); };
    if (x.dims.empty()) c.fail("input must be >= 1-D, got shape []");
    const int64_t k = k_of(fail, c.in(1));
    const int64_t n = x.dims.back();
    if (n < k) c.fail("input must have at least k columns. Had " + std::to_string(n) + ", needed " + std::to_string(k));
    const int64_t rows = n ? x.num_elements / n : 0;
    const T* in = x.as<T>();
    T* values = c.out(0).as<T>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = in + r * n;
      std::iota(order.begin(), order.end(), 0);
      auto cmp = [&](int64_t a, int64_t b) {
        if (before(row[a], row[b])) return true;
        if (before(row[b], row[a])) return false;
        return a < b;
      };
      std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
      for (int64_t j = 0; j < k; ++j) values[r * k + j] = row[order[static_cast<size_t>(j)]];
      visit_dtype(c.out(1).dtype, [&](auto zero) {
        using I = decltype(zero);
        if constexpr (std::is_integral_v<I>) {
          I* idx = c.out(1).as<I>();
          for (int64_t j = 0; j < k; ++j) idx[r * k + j] = static_cast<I>(order[static_cast<size_t>(j)]);
        }
      });
    }
  }
};

// The gradient goes to the entries chosen, summed where an index repeats (it cannot, but the
// form does not rely on it): sum over k of one_hot(indices, n) * dy.
void top_k_grad(GradContext& c) {
  if (!c.dy[0].defined()) return;
  GradBuilder& b = c.b;
  const Tensor shape = grad::shape(b, c.x[0]);
  const Tensor last = grad::ints(b, {-1}), zero = grad::ints(b, {0}), one = grad::ints(b, {1});
  // shape[-1], a scalar (shrink_axis_mask 1; end_mask 1 runs to the end).
  const Tensor n = grad::emit1(
      b, op::StridedSlice(), {&shape, &last, &zero, &one},
      ops::with_defaults(op::StridedSlice(), Attrs{int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0}, int64_t{1}}));
  const Tensor on = grad::scalar(b, c.dy[0], 1.0), off = grad::scalar(b, c.dy[0], 0.0);
  const Tensor hot = grad::emit1(b, op::OneHot(), {&c.y[1], &n, &on, &off}, Attrs{int64_t{-1}});
  const Tensor axis = grad::int_scalar(b, -1);
  const Tensor dy = grad::emit1(b, op::ExpandDims(), {&c.dy[0], &axis});
  c.dx[0] = grad::sum(b, grad::mul(b, hot, dy), {-2}, false);
}

}  // namespace

const OpDef& op::TopKV2() {
  static const OpDef def = {.name = "TopKV2",
                            .num_inputs = 2,
                            .num_outputs = 2,
                            .input_args = {"input", "k"},
                            .traits = kTfjs,
                            .attr_specs = {bool_attr("sorted", true), type_attr("index_type", DType::Int32)},
                            .infer = infer_top_k,
                            .kernels = kernels_for<TopKKernel, KILN_NUMERIC, KILN_STORAGE_INTS>(),
                            .index_type_attrs = {{"Tk", 1}},
                            .grad = &top_k_grad,
                            .output_args = {"values", "indices"}};
  return def;
}

}  // namespace kiln::ops
