// The fused convolutions' per-channel epilogue (conv_epilogue.h). Built with -ffp-contract=off
// (CMakeLists.txt): a Mul step followed by an AddV2 step must round twice, as the two ops do,
// not once as a fused multiply-add would.
#include "ops/conv_epilogue.h"

#include <algorithm>

#include "core/scratch.h"
#include "kernels/isa_dispatch.h"
#include "kernels/vmath.h"

namespace kiln::ops::conv {

namespace {
struct Named {
  const char* name;
  EpilogueOp op;
};
constexpr Named kNamed[] = {{"BiasAdd", EpilogueOp::kBiasAdd}, {"Mul", EpilogueOp::kMul},
                            {"AddV2", EpilogueOp::kAddV2},     {"Sub", EpilogueOp::kSub},
                            {"Add", EpilogueOp::kAdd},         {"Relu", EpilogueOp::kRelu},
                            {"Relu6", EpilogueOp::kRelu6},     {"Swish", EpilogueOp::kSwish}};

// Swish is elementwise, not per channel: it runs once over a group of rows, one contiguous
// run of about kGroupValues values (still in L1 after the per-channel steps), so each call of
// the sigmoid covers many rows, not one (a row's tail would go through a padded vector every
// time). Its sigmoid goes through a stack buffer of kSwishPiece values.
constexpr int64_t kGroupValues = 2048;
constexpr int64_t kSwishPiece = 512;

// x * sigmoid(beta * x) over n values, each product rounded as the Mul ops round it.
template <class T>
KILN_ISA_BODY void swish(T* __restrict x, int64_t n, T beta) {
  T t[kSwishPiece];
  for (int64_t j0 = 0; j0 < n; j0 += kSwishPiece) {
    const int64_t len = std::min(kSwishPiece, n - j0);
    for (int64_t j = 0; j < len; ++j) t[j] = beta * x[j0 + j];
    kernels::vsigmoid(t, t, len);
    for (int64_t j = 0; j < len; ++j) x[j0 + j] = x[j0 + j] * t[j];
  }
}

// The chains models end their convolutions with (a bias, BatchNormalization's scale and
// shift, a residual Add, Relu, Relu6 or a swish) in one pass: each value goes through every
// step in registers, loaded and stored once, where the general loop below makes a pass over
// the row per step (MobileNetV2 at batch 1: the epilogue's share of the profile 19% -> 13%).
// Every chain of that grammar is one canonical form, ((x + a) * m + c) [+ r], whose absent
// steps are exact no-ops: adding -0 returns x unchanged (-0 included), multiplying by 1 too,
// and x - v is IEEE's x + (-v). So each step rounds as its op does, and the result is the
// general loop's bit for bit (a NaN stays a NaN).
template <class T>
struct CanonicalChain {
  const T *add, *mul, *shift;  // [channels] each
  int residual = -1;           // the Add step, or -1
  int act = 0;                 // 0 none, 1 Relu, 2 Relu6, 3 Swish (its beta: the last step's value)
};

// Wider outputs than any model's take the general loop, so a chain's stand-in vectors stay
// small (three of at most this many values, in the thread's scratch).
constexpr int64_t kMaxStandIns = int64_t{1} << 14;

// Whether `e` has the grammar [BiasAdd|AddV2] [Mul] [AddV2|Sub] [Add] [Relu|Relu6|Swish] (each
// part optional, in that order); fills `c`, pointing absent steps at stand-in vectors in the
// thread's scratch (filled per call: a few values per channel, against a block of rows).
template <class T>
bool canonical_chain(const Epilogue& e, int64_t channels, CanonicalChain<T>& c) {
  int s = 0;
  auto is = [&](EpilogueOp a, EpilogueOp b) { return s < e.count && (e.steps[s].op == a || e.steps[s].op == b); };
  auto is_one = [&](EpilogueOp a) { return is(a, a); };
  auto values = [&](int k) { return static_cast<const T*>(e.steps[k].channel_values); };
  const int add = is(EpilogueOp::kBiasAdd, EpilogueOp::kAddV2) ? s++ : -1;
  const int mul = is_one(EpilogueOp::kMul) ? s++ : -1;
  const int shift = is(EpilogueOp::kAddV2, EpilogueOp::kSub) ? s++ : -1;
  c.residual = is_one(EpilogueOp::kAdd) ? s++ : -1;
  c.act = is_one(EpilogueOp::kRelu)    ? (++s, 1)
          : is_one(EpilogueOp::kRelu6) ? (++s, 2)
          : is_one(EpilogueOp::kSwish) ? (++s, 3)
                                       : 0;
  if (s != e.count || channels > kMaxStandIns) return false;
  T* minus_zero = detail::scratch<T>(detail::kEpilogueScratch, 3 * static_cast<size_t>(channels));
  T* ones = minus_zero + channels;
  T* negated = ones + channels;
  if (add < 0 || shift < 0) std::fill(minus_zero, minus_zero + channels, T(-0.0));
  if (mul < 0) std::fill(ones, ones + channels, T(1));
  c.add = add >= 0 ? values(add) : minus_zero;
  c.mul = mul >= 0 ? values(mul) : ones;
  c.shift = shift >= 0 ? values(shift) : minus_zero;
  if (shift >= 0 && e.steps[shift].op == EpilogueOp::kSub) {
    for (int64_t j = 0; j < channels; ++j) negated[j] = -c.shift[j];
    c.shift = negated;
  }
  return true;
}

template <class T, bool kResidual, int kAct>
KILN_ISA_BODY void canonical_rows(T* y, int64_t first_row, int64_t rows, int64_t channels, const Epilogue& e,
                                  const CanonicalChain<T>& c) {
  const T* __restrict a = c.add;
  const T* __restrict m = c.mul;
  const T* __restrict sh = c.shift;
  for (int64_t r = 0; r < rows; ++r) {
    T* __restrict row = y + r * channels;
    const T* __restrict res = nullptr;
    if constexpr (kResidual) {
      const EpilogueStep& add = e.steps[c.residual];
      const int64_t at = add.tensor_rows > 0 ? (first_row + r) % add.tensor_rows : first_row + r;
      res = static_cast<const T*>(add.channel_values) + at * channels;
    }
    for (int64_t j = 0; j < channels; ++j) {
      T x = row[j] + a[j];
      x = x * m[j];
      x = x + sh[j];
      if constexpr (kResidual) x = x + res[j];
      if constexpr (kAct == 1) x = x < T(0) ? T(0) : x;
      if constexpr (kAct == 2) x = x < T(0) ? T(0) : (x > T(6) ? T(6) : x);
      row[j] = x;
    }
  }
}

template <class T, bool kResidual>
KILN_ISA_BODY void canonical_rows_act(T* y, int64_t first_row, int64_t rows, int64_t channels, const Epilogue& e,
                                      const CanonicalChain<T>& c, int act) {
  switch (act) {
    case 0:
      return canonical_rows<T, kResidual, 0>(y, first_row, rows, channels, e, c);
    case 1:
      return canonical_rows<T, kResidual, 1>(y, first_row, rows, channels, e, c);
    default:
      return canonical_rows<T, kResidual, 2>(y, first_row, rows, channels, e, c);
  }
}

// A Swish runs after the other steps, over groups of rows (as in the general loop below).
template <class T>
KILN_ISA_BODY void canonical_body(T* y, int64_t first_row, int64_t rows, int64_t channels, const Epilogue& e,
                                  const CanonicalChain<T>& c) {
  const bool swish_last = c.act == 3;
  const int64_t group = swish_last ? std::max<int64_t>(1, kGroupValues / channels) : rows;
  for (int64_t g0 = 0; g0 < rows; g0 += group) {
    const int64_t n = std::min(rows, g0 + group) - g0;
    if (c.residual >= 0)
      canonical_rows_act<T, true>(y + g0 * channels, first_row + g0, n, channels, e, c, swish_last ? 0 : c.act);
    else
      canonical_rows_act<T, false>(y + g0 * channels, first_row + g0, n, channels, e, c, swish_last ? 0 : c.act);
    if (swish_last) swish(y + g0 * channels, n * channels, *static_cast<const T*>(e.steps[e.count - 1].channel_values));
  }
}

// Each row: every per-channel step in turn over the row's channels (the row stays in L1),
// each loop a plain vectorizable pass; then a last Swish over the group. The activations are
// the Relu and Relu6 kernels' expressions, so a NaN passes through as it does there.
template <class T>
KILN_ISA_BODY void epilogue_rows_body(T* y, int64_t first_row, int64_t rows, int64_t channels, const Epilogue& e) {
  const bool swish_last = e.steps[e.count - 1].op == EpilogueOp::kSwish;  // an activation is last
  const int per_row = e.count - swish_last;
  const int64_t group = swish_last ? std::max<int64_t>(1, kGroupValues / channels) : rows;
  for (int64_t g0 = 0; g0 < rows; g0 += group) {
    const int64_t g1 = std::min(rows, g0 + group);
    for (int64_t r = g0; r < g1; ++r) {
      T* __restrict row = y + r * channels;
      for (int s = 0; s < per_row; ++s) {
        const T* __restrict v = static_cast<const T*>(e.steps[s].channel_values);
        switch (e.steps[s].op) {
          case EpilogueOp::kBiasAdd:
          case EpilogueOp::kAddV2:
            for (int64_t j = 0; j < channels; ++j) row[j] = row[j] + v[j];
            break;
          case EpilogueOp::kMul:
            for (int64_t j = 0; j < channels; ++j) row[j] = row[j] * v[j];
            break;
          case EpilogueOp::kSub:
            for (int64_t j = 0; j < channels; ++j) row[j] = row[j] - v[j];
            break;
          case EpilogueOp::kAdd: {
            const int64_t at = e.steps[s].tensor_rows > 0 ? (first_row + r) % e.steps[s].tensor_rows : first_row + r;
            const T* __restrict t = v + at * channels;
            for (int64_t j = 0; j < channels; ++j) row[j] = row[j] + t[j];
            break;
          }
          case EpilogueOp::kRelu:
            for (int64_t j = 0; j < channels; ++j) row[j] = row[j] < T(0) ? T(0) : row[j];
            break;
          case EpilogueOp::kRelu6:
            for (int64_t j = 0; j < channels; ++j) row[j] = row[j] < T(0) ? T(0) : (row[j] > T(6) ? T(6) : row[j]);
            break;
          case EpilogueOp::kSwish:  // last only: below
            break;
        }
      }
    }
    if (swish_last)
      swish(y + g0 * channels, (g1 - g0) * channels, *static_cast<const T*>(e.steps[e.count - 1].channel_values));
  }
}
}  // namespace

const char* epilogue_op_name(EpilogueOp op) {
  for (const Named& n : kNamed)
    if (n.op == op) return n.name;
  return "?";
}

bool takes_input(EpilogueOp op) { return op != EpilogueOp::kRelu && op != EpilogueOp::kRelu6; }
bool takes_output_sized(EpilogueOp op) { return op == EpilogueOp::kAdd; }
bool takes_scalar(EpilogueOp op) { return op == EpilogueOp::kSwish; }
bool ends_chain(EpilogueOp op) {
  return op == EpilogueOp::kRelu || op == EpilogueOp::kRelu6 || op == EpilogueOp::kSwish;
}

bool epilogue_op_named(const std::string& name, EpilogueOp& op) {
  for (const Named& n : kNamed)
    if (name == n.name) {
      op = n.op;
      return true;
    }
  return false;
}

std::string parse_epilogue(const std::string& text, Epilogue& out) {
  out = Epilogue{};
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    EpilogueOp op;
    if (!epilogue_op_named(name, op)) return "unknown fused op '" + name + "'";
    if (out.count == kMaxEpilogueSteps) return "more than " + std::to_string(kMaxEpilogueSteps) + " fused ops";
    if (out.count > 0 && ends_chain(out.steps[out.count - 1].op)) return "an activation must be the last fused op";
    out.steps[out.count++].op = op;
    start = comma + 1;
  }
  if (out.count == 0) return "no fused ops";
  return "";
}

int num_inputs(const Epilogue& e) {
  int n = 0;
  for (int s = 0; s < e.count; ++s) n += takes_input(e.steps[s].op);
  return n;
}

template <class T>
void apply_epilogue(T* y, int64_t first_row, int64_t rows, int64_t channels, const Epilogue& e) {
  if (e.count == 0 || rows <= 0 || channels <= 0) return;
  CanonicalChain<T> c;
  if (canonical_chain(e, channels, c)) {
    KILN_ISA_DISPATCH((canonical_body(y, first_row, rows, channels, e, c)));
    return;
  }
  KILN_ISA_DISPATCH((epilogue_rows_body(y, first_row, rows, channels, e)));
}
template void apply_epilogue<float>(float*, int64_t, int64_t, int64_t, const Epilogue&);
template void apply_epilogue<double>(double*, int64_t, int64_t, int64_t, const Epilogue&);

}  // namespace kiln::ops::conv
