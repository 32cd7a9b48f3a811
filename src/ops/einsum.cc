// Einsum(inputs: N tensors, equation): one or two operands in Einstein notation, with "..."
// for broadcast leading dims. Two operands become one batched GEMM: each is read as [batch,
// free, contracted] or [batch, contracted, free] (then the GEMM takes it transposed) — in place
// when it already has either order, else copied into the one whose copy moves runs (a label
// one side lacks reads that side with stride 0, so a label summed away on one side only is a
// contraction against a constant) — and the product is written in place when the output's
// order is [batch, free0, free1], else copied into that order. Multi-head attention's scores
// einsum writes its product in place; the one that applies them reads them in place.
#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.h"
#include "kernels/gemm.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/strided_copy.h"

namespace kiln::ops {
namespace {

const int kEquation = attr_index(op::Einsum(), "equation");

// Labels as ids: letters keep their character; the dims "..." covers get ids from 256 up,
// aligned from the right (the last ellipsis dim is 256).
using Labels = std::vector<int>;
constexpr int kEllipsisBase = 256;

struct Equation {
  std::vector<Labels> inputs;
  Labels output;
};

// Parses "ab,bc->ac" for operands of the given ranks (-1 unknown), in TensorFlow's words.
template <class Fail>
Equation parse(const std::string& text, const std::vector<int64_t>& ranks, Fail fail) {
  const size_t arrow = text.find("->");
  if (arrow == std::string::npos || text.find("->", arrow + 2) != std::string::npos)
    fail("Expecting exactly one '->' in einsum equation: " + text);
  const std::string lhs = text.substr(0, arrow);
  std::vector<std::string> specs;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    specs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (specs.size() != ranks.size())
    fail("Expecting " + std::to_string(ranks.size()) + " inputs, got " + std::to_string(specs.size()) +
         " in the equation '" + text + "'");
  int ellipsis_rank = 0;
  Equation eq;
  auto labels_of = [&](const std::string& spec, int64_t rank, bool output) {
    Labels out;
    const size_t dots = spec.find("...");
    int explicit_count = 0;
    for (size_t i = 0; i < spec.size(); ++i) {
      if (i == dots) {
        i += 2;
        continue;
      }
      const char ch = spec[i];
      if (!std::isalpha(static_cast<unsigned char>(ch)))
        fail("Invalid character '" + std::string(1, ch) + "' in the equation '" + text + "'");
      ++explicit_count;
    }
    if (dots != std::string::npos && spec.find("...", dots + 3) != std::string::npos)
      fail("Found more than one ellipsis in a subscript of '" + text + "'");
    int covered = 0;
    if (dots != std::string::npos) {
      covered = output ? ellipsis_rank : static_cast<int>(rank) - explicit_count;
      if (!output && rank >= 0 && covered < 0)
        fail("Input with rank " + std::to_string(rank) + " has fewer than " + std::to_string(explicit_count) +
             " labels in the equation '" + text + "'");
      if (!output && rank < 0) covered = 0;
      ellipsis_rank = std::max(ellipsis_rank, covered);
    } else if (!output && rank >= 0 && rank != explicit_count) {
      fail("Expected input to have rank " + std::to_string(explicit_count) + " but got: " + std::to_string(rank));
    }
    for (size_t i = 0; i < spec.size(); ++i) {
      if (i == dots) {
        for (int e = covered - 1; e >= 0; --e) out.push_back(kEllipsisBase + e);
        i += 2;
        continue;
      }
      out.push_back(static_cast<unsigned char>(spec[i]));
    }
    return out;
  };
  for (size_t k = 0; k < specs.size(); ++k) eq.inputs.push_back(labels_of(specs[k], ranks[k], false));
  eq.output = labels_of(text.substr(arrow + 2), -1, true);
  for (const Labels& l : eq.inputs)
    for (size_t i = 0; i < l.size(); ++i)
      if (std::count(l.begin(), l.end(), l[i]) > 1)
        throw UnimplementedError(
            "Einsum with a label repeated in one operand (a diagonal) is not supported by kiln: '" + text + "'");
  for (int id : eq.output) {
    if (std::count(eq.output.begin(), eq.output.end(), id) > 1)
      fail("Output subscripts contain a label appearing more than once: '" + text + "'");
    bool found = false;
    for (const Labels& l : eq.inputs) found = found || std::count(l.begin(), l.end(), id) > 0;
    if (!found && id < kEllipsisBase)
      fail("Output subscripts contain the label " + std::string(1, static_cast<char>(id)) +
           " not present in the input subscripts.");
  }
  return eq;
}

// Each label's size (-1 unknown); an ellipsis dim of 1 broadcasts against the other side's.
template <class Fail>
std::map<int, int64_t> label_sizes(const Equation& eq, const std::vector<const Dims*>& dims, Fail fail) {
  std::map<int, int64_t> size;
  for (size_t k = 0; k < eq.inputs.size(); ++k) {
    if (!dims[k]) continue;
    for (size_t i = 0; i < eq.inputs[k].size(); ++i) {
      const int id = eq.inputs[k][i];
      const int64_t d = (*dims[k])[i];
      auto [it, fresh] = size.emplace(id, d);
      if (fresh || d == it->second || d < 0) continue;
      if (it->second < 0) {
        it->second = d;
      } else if (id >= kEllipsisBase && (d == 1 || it->second == 1)) {
        it->second = std::max(d, it->second);
      } else {
        fail("Expected dimension " + std::to_string(it->second) + " at axis " + std::to_string(i) + " of input " +
             std::to_string(k) + ", got " + std::to_string(d));
      }
    }
  }
  return size;
}

void infer_einsum(InferContext& c) {
  const int n = c.num_inputs;
  if (n < 1 || n > 2)
    throw UnimplementedError("Einsum with " + std::to_string(n) + " operands is not supported by kiln (1 or 2)");
  if (n == 2) require_same_dtypes(c, 0, 1);
  if (c.in(0).dtype == DType::Bool) c.fail("Einsum does not support bool tensors");
  c.out(0).dtype = c.in(0).dtype;
  c.kernel_dtype = c.in(0).dtype;
  std::vector<int64_t> ranks;
  std::vector<const Dims*> dims;
  for (int k = 0; k < n; ++k) {
    ranks.push_back(c.in(k).unknown_rank ? -1 : static_cast<int64_t>(c.in(k).dims->size()));
    dims.push_back(c.in(k).unknown_rank ? nullptr : c.in(k).dims);
  }
  const auto fail = [&](const std::string& m) { c.fail(m); };
  const Equation eq = parse(c.attrs.s(kEquation), ranks, fail);
  for (const Dims* d : dims)
    if (!d) {
      c.out(0).shape = TensorShape::unknown();
      return;
    }
  const auto size = label_sizes(eq, dims, fail);
  Dims out;
  for (int id : eq.output) out.push_back(size.count(id) ? size.at(id) : 1);
  c.out(0).shape = TensorShape(std::move(out));
}

// Storage that is not value-initialized: every element is written before it is read.
template <class T>
std::unique_ptr<T[]> scratch(int64_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<size_t>(std::max<int64_t>(n, 1))]);
}

// Multiply-adds per batch from which attention-like einsums read their operands in place
// (kernels::gemm's library path starts at about this size too).
constexpr int64_t kInPlaceMinWork = 48 * 48 * 48;

// A group of labels as one dimension of a tensor: its size and the stride between its
// elements, when the labels are nested in memory in the group's order (stride 0 where the
// group is empty). False where they are not, or where a label broadcasts (stride 0).
struct Dim {
  int64_t size = 1, stride = 0;
};
bool as_one_dim(std::vector<int64_t> sizes, std::vector<int64_t> strides, Dim& d) {
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] > 1 && strides[i] == 0) return false;
  const StridedWalk w = collapse_walk(sizes.data(), strides.data(), sizes.size());
  if (w.sizes.size() > 1) return false;
  d = w.sizes.empty() ? Dim{} : Dim{w.sizes[0], w.strides[0]};
  return true;
}
// A [rows, cols] matrix through its two dims: row-major with leading dimension ld when its
// columns are adjacent, else its transpose stored row-major (the GEMM's transpose flag) when
// its rows are. False when neither (then the operand is copied).
bool as_matrix(const Dim& rows, const Dim& cols, bool& transposed, int64_t& ld) {
  if (cols.size == 1 || cols.stride == 1) {
    transposed = false;
    ld = rows.size == 1 ? std::max<int64_t>(cols.size, 1) : rows.stride;
    return ld >= cols.size;
  }
  if (rows.size == 1 || rows.stride == 1) {
    transposed = true;
    ld = cols.stride;
    return ld >= rows.size;
  }
  return false;
}

template <class T>
struct EinsumKernel {
  // Two operands whose every batch is a matrix (columns or rows adjacent, the other dim at a
  // stride) and an output whose every batch is a row-major matrix, as multi-head attention's
  // einsums read and write the heads of [batch, time, heads, depth] tensors: the GEMMs read
  // and write them in place through leading dimensions instead of copying them (two operand
  // transposes and an output transpose per call), the batches split over the threads.
  // False, having written nothing, where a view is not a matrix.
  static bool in_place_heads(int first, int second, const std::vector<int>& free0, const std::vector<int>& free1,
                             const std::vector<int>& contracted, const std::vector<int>& batch,
                             const std::map<int, int64_t>& size, const Equation& eq, KernelContext& c) {
    const Dims out_strides = strides_of(c.out(0).dims);
    // Label id's stride in operand k (2: the output); 0 where absent or broadcast.
    auto stride_of = [&](int k, int id) -> int64_t {
      const std::vector<int>& l = k == 2 ? eq.output : eq.inputs[k];
      const auto it = std::find(l.begin(), l.end(), id);
      if (it == l.end()) return 0;
      const auto axis = static_cast<size_t>(it - l.begin());
      const Dims& dims = k == 2 ? c.out(0).dims : c.in(k).dims;
      if (dims[axis] == 1 && size.at(id) != 1) return 0;
      return k == 2 ? out_strides[axis] : strides_of(c.in(k).dims)[axis];
    };
    auto group = [&](int k, const std::vector<int>& labels, Dim& d) {
      std::vector<int64_t> sizes, strides;
      for (int id : labels) {
        sizes.push_back(size.at(id));
        strides.push_back(stride_of(k, id));
      }
      return as_one_dim(sizes, strides, d);
    };
    Dim a_rows, a_cols, b_rows, b_cols, c_rows, c_cols;
    bool ta = false, tb = false, tc = false;
    int64_t lda = 0, ldb = 0, ldc = 0;
    if (!group(first, free0, a_rows) || !group(first, contracted, a_cols) || !group(second, contracted, b_rows) ||
        !group(second, free1, b_cols) || !group(2, free0, c_rows) || !group(2, free1, c_cols) ||
        !as_matrix(a_rows, a_cols, ta, lda) || !as_matrix(b_rows, b_cols, tb, ldb) ||
        !as_matrix(c_rows, c_cols, tc, ldc) || tc)
      return false;
    const int64_t m = a_rows.size, n = b_cols.size, k = a_cols.size;
    // Smaller products run kernels::gemm's own kernels (the sums in TensorFlow's order), whose
    // operands must be copied; for them a library GEMM's call costs more than the copies.
    if (m * n * k < kInPlaceMinWork) return false;
    std::vector<int64_t> batch_sizes, a_step, b_step, c_step;
    for (int id : batch) {
      batch_sizes.push_back(size.at(id));
      a_step.push_back(stride_of(first, id));
      b_step.push_back(stride_of(second, id));
      c_step.push_back(stride_of(2, id));
    }
    int64_t nb = 1;
    for (int64_t s : batch_sizes) nb *= s;
    const T* a = c.in(first).as<T>();
    const T* b = c.in(second).as<T>();
    T* out = c.out(0).as<T>();
    parallel_for(nb, 2, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) {
        int64_t rest = i, ao = 0, bo = 0, co = 0;
        for (size_t d = batch_sizes.size(); d-- > 0;) {
          const int64_t idx = rest % batch_sizes[d];
          rest /= batch_sizes[d];
          ao += idx * a_step[d];
          bo += idx * b_step[d];
          co += idx * c_step[d];
        }
        kernels::gemm_strided<T>(ta, tb, m, n, k, a + ao, lda, b + bo, ldb, out + co, ldc);
      }
    });
    return true;
  }

  static void run(KernelContext& c) {
    const int n = c.num_inputs;
    std::vector<int64_t> ranks;
    std::vector<const Dims*> dims;
    for (int k = 0; k < n; ++k) {
      ranks.push_back(static_cast<int64_t>(c.in(k).dims.size()));
      dims.push_back(&c.in(k).dims);
    }
    const auto fail = [&](const std::string& m) { c.fail(m); };
    const Equation eq = parse(c.attrs.s(kEquation), ranks, fail);
    const auto size = label_sizes(eq, dims, fail);
    // A label's stride in operand k (0 where it lacks the label or broadcasts a dim of 1).
    auto stride_in = [&](int k, int id) -> int64_t {
      const Labels& l = eq.inputs[k];
      const auto it = std::find(l.begin(), l.end(), id);
      if (it == l.end()) return 0;
      const auto axis = static_cast<size_t>(it - l.begin());
      if (c.in(k).dims[axis] == 1 && size.at(id) != 1) return 0;
      return strides_of(c.in(k).dims)[axis];
    };
    auto in_output = [&](int id) { return std::count(eq.output.begin(), eq.output.end(), id) > 0; };
    auto in_operand = [&](int k, int id) {
      return k < n && std::count(eq.inputs[k].begin(), eq.inputs[k].end(), id) > 0;
    };
    Labels batch, free0, free1, contracted;
    for (const auto& [id, s] : size) {
      if (in_output(id)) {
        if (in_operand(0, id) && in_operand(1, id))
          batch.push_back(id);
        else if (in_operand(0, id))
          free0.push_back(id);
        else
          free1.push_back(id);
      } else {
        contracted.push_back(id);
      }
    }
    auto product = [&](const Labels& l) {
      int64_t p = 1;
      for (int id : l) p *= size.at(id);
      return p;
    };
    const int64_t nb = product(batch), m = product(free0), nn = product(free1), kk = product(contracted);
    auto walk_of = [&](int k, const std::vector<Labels>& order) {
      std::vector<int64_t> sizes, strides;
      for (const Labels& group : order)
        for (int id : group) {
          sizes.push_back(size.at(id));
          strides.push_back(stride_in(k, id));
        }
      return collapse_walk(sizes.data(), strides.data(), sizes.size());
    };
    // Operand k in one of two orders, [batch, rows, cols] or [batch, cols, rows] (then the GEMM
    // reads it transposed): the one it already has if either, else the one that copies runs.
    // Returns the operand's values in that order (in place when they already are).
    std::vector<std::unique_ptr<T[]>> held;
    auto operand = [&](int k, const Labels& rows, const Labels& cols, bool& transposed) -> const T* {
      const StridedWalk plain = walk_of(k, {batch, rows, cols}), flipped = walk_of(k, {batch, cols, rows});
      transposed = !plain.contiguous() && (flipped.contiguous() || (!plain.unit_inner() && flipped.unit_inner()));
      const StridedWalk& w = transposed ? flipped : plain;
      if (w.contiguous()) return c.in(k).as<T>();
      held.push_back(scratch<T>(w.total));
      strided_copy(c.in(k).as<T>(), w, held.back().get());
      return held.back().get();
    };
    // The product is [batch, free0, free1]; the output follows its own label order, and the
    // GEMMs write into it directly when that order is the product's.
    auto output_walk = [&](const Labels& rows, const Labels& cols) {
      Labels layout = batch;
      layout.insert(layout.end(), rows.begin(), rows.end());
      layout.insert(layout.end(), cols.begin(), cols.end());
      std::vector<int64_t> layout_sizes;
      for (int id : layout) layout_sizes.push_back(size.at(id));
      Dims layout_dims(layout_sizes.begin(), layout_sizes.end());
      const Dims layout_strides = strides_of(layout_dims);
      std::vector<int64_t> out_sizes, out_strides;
      for (int id : eq.output) {
        const auto it = std::find(layout.begin(), layout.end(), id);
        out_sizes.push_back(it == layout.end() ? 1 : size.at(id));
        out_strides.push_back(it == layout.end() ? 0 : layout_strides[it - layout.begin()]);
      }
      return collapse_walk(out_sizes.data(), out_strides.data(), out_sizes.size());
    };
    if (c.out(0).num_elements != nb * m * nn) c.fail("the output's shape does not match the equation");
    StridedWalk out_walk = output_walk(free0, free1);
    // An output ordered [batch, free1, free0] (multi-head attention's scores, "aecd,abcd->acbe")
    // is the product of the operands the other way round, written in place instead of staged
    // and transposed: each element is the same sum of the same products.
    int first = 0, second = 1;
    int64_t rows = m, cols = nn;
    if (n == 2 && !out_walk.contiguous()) {
      StridedWalk swapped = output_walk(free1, free0);
      if (swapped.contiguous()) {
        out_walk = swapped;
        std::swap(first, second);
        std::swap(free0, free1);
        std::swap(rows, cols);
      }
    }
    if constexpr (std::is_floating_point_v<T>) {
      // Only where run() would copy: operands already [batch, rows, cols] (either way round)
      // go to kernels::gemm, which may split one large product over the threads.
      auto copied = [&](int k, const Labels& row_labels, const Labels& col_labels) {
        return !walk_of(k, {batch, row_labels, col_labels}).contiguous() &&
               !walk_of(k, {batch, col_labels, row_labels}).contiguous();
      };
      if (n == 2 && nb >= 2 && kk > 0 &&
          (!out_walk.contiguous() || copied(first, free0, contracted) || copied(second, contracted, free1)) &&
          in_place_heads(first, second, free0, free1, contracted, batch, size, eq, c))
        return;
    }
    std::unique_ptr<T[]> staged;
    T* prod = c.out(0).as<T>();
    if (!out_walk.contiguous()) {
      staged = scratch<T>(nb * m * nn);
      prod = staged.get();
    }
    bool ta = false, tb = false;
    const T* a = operand(first, free0, contracted, ta);
    if (n == 2) {
      const T* b = operand(second, contracted, free1, tb);
      for (int64_t i = 0; i < nb; ++i) {
        if (kk == 0) {
          std::fill(prod + i * rows * cols, prod + (i + 1) * rows * cols, T(0));
          continue;
        }
        kernels::gemm<T>(ta, tb, rows, cols, kk, a + i * rows * kk, b + i * kk * cols, prod + i * rows * cols);
      }
    } else if (!ta) {
      for (int64_t r = 0; r < nb * m; ++r) {
        T acc = T(0);
        for (int64_t j = 0; j < kk; ++j) acc += a[r * kk + j];
        prod[r] = acc;
      }
    } else {  // [batch, contracted, free0]: the same sums, in the same order per element
      for (int64_t i = 0; i < nb; ++i)
        for (int64_t r = 0; r < m; ++r) {
          T acc = T(0);
          for (int64_t j = 0; j < kk; ++j) acc += a[(i * kk + j) * m + r];
          prod[i * m + r] = acc;
        }
    }
    if (staged) strided_copy(prod, out_walk, c.out(0).as<T>());
  }
};

// ---- gradient: each operand's is the einsum of the output's gradient with the other operand,
// the equation turned around (TensorFlow's EinsumGrad for the cases without broadcasting) ----
std::vector<std::string> split_specs(const std::string& equation, std::string* output) {
  const size_t arrow = equation.find("->");
  *output = equation.substr(arrow + 2);
  std::vector<std::string> specs;
  const std::string lhs = equation.substr(0, arrow);
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    specs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return specs;
}
bool letters_within(const std::string& spec, const std::string& a, const std::string& b) {
  for (char ch : spec)
    if (ch != '.' && a.find(ch) == std::string::npos && b.find(ch) == std::string::npos) return false;
  return true;
}
Tensor einsum_of(GradContext& c, const std::string& equation, std::vector<const Tensor*> in) {
  const auto n = static_cast<int64_t>(in.size());
  return c.b.emit(op::Einsum(), in.data(), static_cast<int>(in.size()), Attrs{equation, n})[0];
}
void einsum_grad(GradContext& c) {
  const std::string& equation = c.attrs.s(kEquation);
  std::string out;
  const std::vector<std::string> specs = split_specs(equation, &out);
  const auto unsupported = [&]() {
    throw UnimplementedError("The gradient of Einsum '" + equation +
                             "' (a label summed in one operand only, or broadcast '...' dims) is not supported by "
                             "kiln yet");
  };
  if (equation.find("...") != std::string::npos) {  // only when both operands' '...' dims agree exactly
    if (c.x.size() == 2) {
      const TensorShape& a = c.x[0].shape();
      const TensorShape& b = c.x[1].shape();
      if (a.rank() < 0 || b.rank() < 0 || !a.is_fully_defined() || !b.is_fully_defined()) unsupported();
      const auto lead = [](const std::string& spec, const TensorShape& s) {
        const size_t letters = spec.size() - 3;
        return std::vector<int64_t>(s.dims().begin(), s.dims().begin() + (s.rank() - static_cast<int64_t>(letters)));
      };
      if (specs[0].find("...") == std::string::npos || specs[1].find("...") == std::string::npos ||
          lead(specs[0], a) != lead(specs[1], b))
        unsupported();
    }
  }
  if (c.x.size() == 1) {
    if (!letters_within(specs[0], out, "")) unsupported();
    c.dx[0] = einsum_of(c, out + "->" + specs[0], {&c.dy[0]});
    return;
  }
  if (!letters_within(specs[0], out, specs[1]) || !letters_within(specs[1], out, specs[0])) unsupported();
  if (c.needs[0]) c.dx[0] = einsum_of(c, out + "," + specs[1] + "->" + specs[0], {&c.dy[0], &c.x[1]});
  if (c.needs[1]) c.dx[1] = einsum_of(c, specs[0] + "," + out + "->" + specs[1], {&c.x[0], &c.dy[0]});
}

}  // namespace

const OpDef& op::Einsum() {
  static const OpDef def = {.name = "Einsum",
                            .num_inputs = -1,
                            .num_outputs = 1,
                            .input_args = {list_arg("inputs", "N")},
                            .traits = kPure | kTfjs,
                            .attr_specs = {string_attr("equation"), int_attr("N")},
                            .infer = infer_einsum,
                            .kernels = kernels_for<EinsumKernel, KILN_NUMERIC>(),
                            .grad = &einsum_grad};
  return def;
}

}  // namespace kiln::ops
