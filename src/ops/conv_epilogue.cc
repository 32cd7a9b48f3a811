// The fused convolutions' per-channel epilogue (conv_epilogue.h). Built with -ffp-contract=off
// (CMakeLists.txt): a Mul step followed by an AddV2 step must round twice, as the two ops do,
// not once as a fused multiply-add would.
#include "ops/conv_epilogue.h"

#include <algorithm>

#include "kernels/isa_dispatch.h"

namespace kiln::ops::conv {

namespace {
struct Named {
  const char* name;
  EpilogueOp op;
};
constexpr Named kNamed[] = {{"BiasAdd", EpilogueOp::kBiasAdd}, {"Mul", EpilogueOp::kMul}, {"AddV2", EpilogueOp::kAddV2},
                            {"Sub", EpilogueOp::kSub},         {"Add", EpilogueOp::kAdd}, {"Relu", EpilogueOp::kRelu},
                            {"Relu6", EpilogueOp::kRelu6}};

// One row: every step in turn over the row's channels (the row stays in L1), each loop a
// plain vectorizable pass. The activations are the Relu and Relu6 kernels' expressions, so a
// NaN passes through as it does there.
template <class T>
KILN_ISA_BODY void epilogue_rows_body(T* y, int64_t first_row, int64_t rows, int64_t channels, const Epilogue& e) {
  for (int64_t r = 0; r < rows; ++r) {
    T* __restrict row = y + r * channels;
    for (int s = 0; s < e.count; ++s) {
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
      }
    }
  }
}
}  // namespace

const char* epilogue_op_name(EpilogueOp op) {
  for (const Named& n : kNamed)
    if (n.op == op) return n.name;
  return "?";
}

bool takes_channel_values(EpilogueOp op) { return op != EpilogueOp::kRelu && op != EpilogueOp::kRelu6; }
bool takes_output_sized(EpilogueOp op) { return op == EpilogueOp::kAdd; }

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
    if (out.count > 0 && !takes_channel_values(out.steps[out.count - 1].op))
      return "an activation must be the last fused op";
    out.steps[out.count++].op = op;
    start = comma + 1;
  }
  if (out.count == 0) return "no fused ops";
  return "";
}

int num_channel_values(const Epilogue& e) {
  int n = 0;
  for (int s = 0; s < e.count; ++s) n += takes_channel_values(e.steps[s].op);
  return n;
}

template <class T>
void apply_epilogue(T* y, int64_t first_row, int64_t rows, int64_t channels, const Epilogue& e) {
  if (e.count == 0 || rows <= 0 || channels <= 0) return;
  KILN_ISA_DISPATCH((epilogue_rows_body(y, first_row, rows, channels, e)));
}
template void apply_epilogue<float>(float*, int64_t, int64_t, int64_t, const Epilogue&);
template void apply_epilogue<double>(double*, int64_t, int64_t, int64_t, const Epilogue&);

}  // namespace kiln::ops::conv
