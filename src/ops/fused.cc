// KilnFusedElementwise: a chain or tree of elementwise ops made into one kernel by the
// fusion pass. It walks memory once in chunks of kChunkBytes per operand; intermediates live
// in small stack buffers. Each step calls the original op's own run function (OpDef::chunk), so the
// fused result is exactly the unfused one. A float32 program whose every op has a register form
// (OpDef::lane; lane_program) runs in registers at the AVX-512 and AVX2 levels instead (kernels::vlanes, the
// ops' own instructions: the same bits), each chunk's last elements short of eight vectors
// step by step.
// attrs: program = [num_inputs, num_registers, then per step: op, dst, a, b (-1: unary)],
// with op an index into fusable_ops(); output_shape. Registers 0..num_inputs-1 are inputs.
// An input has the output's elements, one element (broadcast), the output's last dimension
// (a per-channel vector, read through a copy repeated to a chunk's length) or one element per
// row of the last dimension (spread over each chunk on the stack). When
// output_shape has unknown dimensions, the output has the inputs' broadcast shape at run
// time, and an input of another shape is broadcast into a copy first.
// windows (optional): per input, a pair (columns, offset); columns 0 for an input read as
// above. Otherwise the input is a wider tensor whose last dimension has `columns` elements,
// and the operand is its columns [offset, offset + c) for the output's last dimension c:
// an LSTM's gates, Split or sliced from one product, read in place instead of copied out
// by a Split step first (each chunk's rows are gathered on the stack).
#include "ops/fused.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "core/scratch.h"
#include "kernels/vmath.h"
#include "ops/channel_vector.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {

const std::vector<const OpDef*>& fusable_ops() {
  static const std::vector<const OpDef*> table = [] {
    std::vector<const OpDef*> v;
    for (const OpDef* d : all_ops())
      if (d->chunk) v.push_back(d);
    return v;
  }();
  return table;
}

int fusable_index(const OpDef* op) {
  const auto& t = fusable_ops();
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i] == op) return static_cast<int>(i);
  return -1;
}

namespace {

const int kProgram = attr_index(op::KilnFusedElementwise(), "program");
const int kOutputShape = attr_index(op::KilnFusedElementwise(), "output_shape");
const int kWindows = attr_index(op::KilnFusedElementwise(), "windows");

// Input r's window, when it has one: its columns and the operand's first column.
struct Window {
  int64_t columns = 0, offset = 0;
};
Window window_of(const std::vector<int64_t>& windows, int r) {
  if (windows.empty()) return {};
  return {.columns = windows[2 * static_cast<size_t>(r)], .offset = windows[2 * static_cast<size_t>(r) + 1]};
}

// A chunk is kChunkBytes of each operand: 512 float32 or 256 float64 elements. Long enough
// that a step's call costs little beside its loop (256 float32 elements were 2-3% slower on
// a 1M chain; 1024 no faster), short enough that a chain's live chunks stay in L1.
constexpr int64_t kChunkBytes = 2048;

// The output's dims when every input's are known (a plan's call, not a trace) and broadcast
// to exactly the output's rank: the general path's answer without building a shape per
// input, which an LSTM's gates paid at each step. False where the general path must decide
// (unknown dims, a rank it would refuse, sizes that do not broadcast: its message).
bool broadcast_known_dims(const InferContext& c, const TensorShape& shape, int64_t width,
                          const std::vector<int64_t>& windows, Dims& out) {
  const size_t rank = shape.dims().size();
  out = Dims(rank, 1);
  size_t widest = 0;
  for (int i = 0; i < c.num_inputs; ++i) {
    const InputInfo& in = c.in(i);
    if (in.unknown_rank || in.dims->size() > rank) return false;
    widest = std::max(widest, in.dims->size());
    const size_t shift = rank - in.dims->size();
    const bool windowed = window_of(windows, i).columns != 0;
    for (size_t k = 0; k < in.dims->size(); ++k) {
      const int64_t d = windowed && k + 1 == in.dims->size() ? width : (*in.dims)[k];
      int64_t& o = out[shift + k];
      if (d < 0) return false;
      if (d == 1 || d == o) continue;
      if (o != 1) return false;
      o = d;
    }
  }
  if (widest != rank) return false;
  for (size_t k = 0; k < rank; ++k)
    if (shape.dims()[k] >= 0 && shape.dims()[k] != out[k]) return false;
  return true;
}

void infer_fused(InferContext& c) {
  const auto& p = c.attrs.list(kProgram);
  if (p.size() < 2 || p[0] != c.num_inputs || (p.size() - 2) % 4 != 0) c.fail("malformed fused program");
  c.out(0).dtype = c.in(0).dtype;
  const TensorShape& shape = c.attrs.shape(kOutputShape);
  c.out(0).shape = shape;
  // Windows need the output's last dimension: what each window is as wide as.
  const auto& windows = c.attrs.list(kWindows);
  if (!windows.empty() && windows.size() != 2 * static_cast<size_t>(c.num_inputs))
    c.fail("malformed fused windows: " + std::to_string(windows.size()) + " entries for " +
           std::to_string(c.num_inputs) + " inputs");
  const int64_t width = shape.unknown_rank() || shape.rank() == 0 ? -1 : shape.dims().back();
  for (int i = 0; i < c.num_inputs; ++i) {
    const Window w = window_of(windows, i);
    if (w.columns == 0) continue;
    if (w.columns < 0 || w.offset < 0 || width < 0 || w.offset > w.columns - width)
      c.fail("malformed fused window " + std::to_string(i) + ": columns " + std::to_string(w.columns) + ", offset " +
             std::to_string(w.offset) + " for an output of shape " + shape_text(shape));
    const InputInfo& in = c.in(i);
    if (in.unknown_rank) continue;
    if (in.dims->size() != shape.dims().size() || (in.dims->back() >= 0 && in.dims->back() != w.columns))
      c.fail("fused window " + std::to_string(i) + " expects " + std::to_string(w.columns) + " columns of rank " +
             std::to_string(shape.rank()) + ", got shape " + dims_text(*in.dims));
  }
  if (shape.is_fully_defined() || shape.unknown_rank()) return;
  if (Dims known; broadcast_known_dims(c, shape, width, windows, known)) {
    c.out(0).shape = TensorShape(std::move(known));
    return;
  }
  // Unknown dimensions (a served model's batch): the inputs' broadcast shape, which is what
  // the separate ops give (elementwise ops commute with broadcasting); what does not
  // broadcast fails as they would, "Incompatible shapes: [2,4] vs. [3,4]".
  Dims acc;
  bool known = false;
  for (int i = 0; i < c.num_inputs; ++i) {
    if (c.in(i).unknown_rank) return;
    // A window's operand: its input with the output's last dimension.
    Dims dims = *c.in(i).dims;
    if (window_of(windows, i).columns) dims.back() = width;
    if (!known) {
      acc = dims;
      known = true;
      continue;
    }
    const InputInfo so_far{.dtype = c.in(0).dtype, .dims = &acc, .unknown_rank = false, .value = nullptr};
    const InputInfo operand{.dtype = c.in(i).dtype, .dims = &dims, .unknown_rank = false, .value = nullptr};
    acc = broadcast_shapes(c, so_far, operand).dims();
  }
  if (acc.size() != shape.dims().size()) c.fail("the fused inputs' broadcast rank is not the output's");
  for (size_t k = 0; k < acc.size(); ++k)
    if (acc[k] < 0) acc[k] = shape.dims()[k];
  c.out(0).shape = TensorShape(std::move(acc));
}

// Input `in` broadcast to `dims` into `dst` (numpy rules, which the shape function checked):
// the rare case of a served model's tensors of unknown batch whose batches differ at run
// time. Element by element: the common cases never come here.
void broadcast_into(const void* data, const Dims& in_dims, const Dims& dims, size_t es, unsigned char* dst) {
  const size_t rank = dims.size(), shift = rank - in_dims.size();
  std::vector<int64_t> stride(rank, 0), index(rank, 0);
  for (int64_t k = static_cast<int64_t>(rank) - 1, step = 1; k >= static_cast<int64_t>(shift); --k) {
    const int64_t d = in_dims[static_cast<size_t>(k) - shift];
    stride[static_cast<size_t>(k)] = d == 1 ? 0 : step;
    step *= d;
  }
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  const auto* src = static_cast<const unsigned char*>(data);
  int64_t offset = 0;
  for (int64_t i = 0; i < total; ++i) {
    std::memcpy(dst + i * static_cast<int64_t>(es), src + offset * static_cast<int64_t>(es), es);
    for (int64_t k = static_cast<int64_t>(rank) - 1; k >= 0; --k) {  // the next index, last dimension fastest
      const auto u = static_cast<size_t>(k);
      offset += stride[u];
      if (++index[u] < dims[u]) break;
      offset -= stride[u] * dims[u];
      index[u] = 0;
    }
  }
}

// Elements [start, start + len) of an output whose rows of `channels` elements each take one
// element of `rows`: runs of copies of each row's element.
void spread_rows(unsigned char* dst, const unsigned char* rows, size_t es, int64_t start, int64_t len,
                 int64_t channels) {
  int64_t row = start / channels, pos = start % channels;
  for (int64_t j = 0; j < len; ++row, pos = 0) {
    const int64_t run = std::min(channels - pos, len - j);
    const unsigned char* v = rows + row * static_cast<int64_t>(es);
    unsigned char* d = dst + j * static_cast<int64_t>(es);
    switch (es) {
      case 4: {
        uint32_t x;
        std::memcpy(&x, v, 4);
        std::fill_n(reinterpret_cast<uint32_t*>(d), run, x);
        break;
      }
      case 8: {
        uint64_t x;
        std::memcpy(&x, v, 8);
        std::fill_n(reinterpret_cast<uint64_t*>(d), run, x);
        break;
      }
      default:
        for (int64_t k = 0; k < run; ++k) std::memcpy(d + k * static_cast<int64_t>(es), v, es);
    }
    j += run;
  }
}

// Elements [start, start + len) of an operand that is columns [offset, offset + width) of
// `src`, whose rows have `columns` elements: copied into `dst` run by run.
void gather_window(unsigned char* dst, const unsigned char* src, size_t es, int64_t start, int64_t len, int64_t width,
                   const Window& w) {
  int64_t row = start / width, col = start % width;
  for (int64_t j = 0; j < len; ++row, col = 0) {
    const int64_t run = std::min(width - col, len - j);
    std::memcpy(dst + j * static_cast<int64_t>(es), src + (row * w.columns + w.offset + col) * static_cast<int64_t>(es),
                static_cast<size_t>(run) * es);
    j += run;
  }
}

// The program's steps as register steps (kernels/vmath.h), where each step's op row names one
// (OpDef::lane).
static_assert(kMaxFusedRegisters <= kernels::kMaxLaneRegisters);
// Each step reads inputs or earlier steps' results and writes a register of its own beyond the
// inputs (the fusion pass's programs do; anything else stays on the step-by-step path).
bool lane_program(const std::vector<int64_t>& p, int num_inputs, int num_regs, int steps, kernels::LaneStep* out) {
  const auto& ops = fusable_ops();
  bool written[kMaxFusedRegisters] = {};
  for (int r = 0; r < num_inputs; ++r) written[r] = true;
  auto readable = [&](int64_t r) { return r >= 0 && r < num_regs && written[r]; };
  for (int s = 0; s < steps; ++s) {
    const int64_t* ins = &p[2 + 4 * static_cast<size_t>(s)];
    if (ins[0] < 0 || ins[0] >= static_cast<int64_t>(ops.size())) return false;
    if (ins[1] < num_inputs || ins[1] >= num_regs || !readable(ins[2]) || (ins[3] >= 0 && !readable(ins[3])))
      return false;
    const kernels::LaneOp lane = ops[static_cast<size_t>(ins[0])]->lane;
    if (lane == kernels::LaneOp::kNone) return false;
    const bool unary = kernels::lane_op_is_unary(lane);
    if (unary != (ins[3] < 0)) return false;
    written[ins[1]] = true;
    out[s] = {.op = lane,
              .dst = static_cast<int8_t>(ins[1]),
              .a = static_cast<int8_t>(ins[2]),
              .b = static_cast<int8_t>(unary ? 0 : ins[3])};
  }
  kernels::plan_lanes(out, steps);
  return steps > 0;
}

struct FusedKernel {
  static void run(KernelContext& c) {
    const auto& p = c.attrs.list(kProgram);
    const int num_inputs = static_cast<int>(p[0]), num_regs = static_cast<int>(p[1]);
    const int steps = static_cast<int>((p.size() - 2) / 4);
    const auto& ops = fusable_ops();
    TensorImpl& out = c.out(0);
    const DType d = out.dtype;
    const size_t es = dtype_size(d);
    const int64_t n = out.num_elements;
    if (num_inputs > num_regs || num_regs - num_inputs > kMaxFusedTemps || num_regs > kMaxFusedRegisters)
      c.fail("fused program too large");
    // Per-channel vectors, each repeated to cover a chunk from any offset within the vector.
    const int64_t channels = out.dims.empty() ? 0 : out.dims.back();
    // Windows: each input's columns checked against the output's (the attr is the fusion
    // pass's, but the tensors are whatever the graph gave at run time).
    const auto& windows = c.attrs.list(kWindows);
    if (!windows.empty() && windows.size() != 2 * static_cast<size_t>(num_inputs)) c.fail("malformed fused windows");
    int window_slot[kMaxFusedRegisters];       // input r's gather buffer in a chunk, -1 for none
    int64_t window_bytes[kMaxFusedRegisters];  // where input r's window starts when read in place, -1 for none
    bool windowed[kMaxFusedRegisters];
    int window_inputs = 0;
    // The rare inputs broadcast to the output's size once per call, one after another in one
    // buffer: input r's copy at broadcast_at[r] bytes, -1 for none. (An array of a vector per
    // register, zeroed and destroyed on every call, was a third of the kernel's own time in an
    // LSTM classifier's gates at batch 1.)
    std::vector<unsigned char> broadcast;
    int64_t broadcast_at[kMaxFusedRegisters];
    auto materialize = [&](int r) {
      broadcast_at[r] = static_cast<int64_t>(broadcast.size());
      broadcast.resize(broadcast.size() + static_cast<size_t>(n) * es);
      return broadcast.data() + broadcast_at[r];
    };
    for (int r = 0; r < num_inputs; ++r) {
      window_slot[r] = -1;
      window_bytes[r] = -1;
      broadcast_at[r] = -1;
      const Window w = window_of(windows, r);
      windowed[r] = w.columns != 0;
      if (!windowed[r]) continue;
      const TensorImpl& in = c.in(r);
      if (out.dims.empty() || in.dims.size() != out.dims.size() || in.dims.back() != w.columns || w.offset < 0 ||
          channels > w.columns || w.offset > w.columns - channels)
        c.fail("fused window " + std::to_string(r) + " (columns " + std::to_string(w.columns) + ", offset " +
               std::to_string(w.offset) + ") does not fit input shape " + dims_text(in.dims) + " for output " +
               dims_text(out.dims));
      bool rows_match = true;
      for (size_t k = 0; k + 1 < out.dims.size(); ++k) rows_match &= in.dims[k] == out.dims[k];
      if (rows_match && n <= channels) {
        // One row (a batch of one): the window's columns are contiguous and read in place,
        // so the call can run as one register program over the row with nothing gathered.
        window_bytes[r] = w.offset * static_cast<int64_t>(es);
        continue;
      }
      if (rows_match) {
        if (window_inputs == kMaxFusedWindowInputs) c.fail("fused program has too many windows");
        window_slot[r] = window_inputs++;
        continue;
      }
      // A served model's unknown batch that differs at run time (the shape function checked
      // it broadcasts): the window copied out, then broadcast as any other input.
      Dims operand = in.dims;
      operand.back() = channels;
      for (size_t k = 0; k < operand.size(); ++k)
        if (operand[k] != out.dims[k] && operand[k] != 1)
          c.fail("fused window " + std::to_string(r) + " of input shape " + dims_text(in.dims) +
                 " does not broadcast to output " + dims_text(out.dims));
      const int64_t count = detail::checked_num_elements(operand.data(), operand.size());
      std::vector<unsigned char> copy(static_cast<size_t>(count) * es);
      if (count > 0) gather_window(copy.data(), static_cast<const unsigned char*>(in.data), es, 0, count, channels, w);
      broadcast_into(copy.data(), operand, out.dims, es, materialize(r));
    }
    // (In this thread's scratch: a call allocates nothing once warm.)
    int64_t tiled_at[kMaxFusedRegisters];  // byte offset of input r's copy, -1 for none
    int row_slot[kMaxFusedRegisters];      // input r's spread buffer in a chunk, -1 for none
    int row_inputs = 0;
    int64_t tiled_bytes = 0;
    const int64_t chunk_len = kChunkBytes / static_cast<int64_t>(es);
    const int64_t span = std::min(chunk_len, n) + channels;  // a chunk reads from any offset in the first copy
    for (int r = 0; r < num_inputs; ++r) {
      const TensorImpl& in = c.in(r);
      tiled_at[r] = -1;
      row_slot[r] = -1;
      if (windowed[r] || in.num_elements == n || in.num_elements == 1) continue;
      if (row_inputs < kMaxFusedRowInputs && is_row_vector(in.dims, out.dims)) {
        row_slot[r] = row_inputs++;
        continue;
      }
      if (channels > 1 && is_channel_vector(in.dims, channels, out.dims.size())) {
        tiled_at[r] = tiled_bytes;
        tiled_bytes += span * static_cast<int64_t>(es);
        continue;
      }
      broadcast_into(in.data, in.dims, out.dims, es, materialize(r));
    }
    unsigned char* tiled =
        tiled_bytes ? static_cast<unsigned char*>(detail::scratch_bytes(detail::kFusedScratch, tiled_bytes)) : nullptr;
    for (int r = 0; r < num_inputs; ++r) {
      if (tiled_at[r] < 0) continue;
      repeat_row(tiled + tiled_at[r], c.in(r).data, channels * static_cast<int64_t>(es),
                 span * static_cast<int64_t>(es));
    }
    kernels::LaneStep lane_steps[kMaxFusedRegisters];
    const bool lanes =
        d == DType::Float32 && steps <= kMaxFusedRegisters && lane_program(p, num_inputs, num_regs, steps, lane_steps);
    bool in_place = true;  // no input gathered, spread or tiled per chunk
    for (int r = 0; r < num_inputs; ++r)
      in_place &= window_slot[r] < 0 && row_slot[r] < 0 && tiled_at[r] < 0 && (!windowed[r] || window_bytes[r] >= 0);
    // Input r's elements from `start` on, where it is read in place (a scalar: its one element).
    auto in_place_operand = [&](int r, bool is_scalar, int64_t start) -> const void* {
      const int64_t offset = is_scalar ? 0 : start * static_cast<int64_t>(es);
      return broadcast_at[r] >= 0
                 ? static_cast<const void*>(broadcast.data() + broadcast_at[r] + offset)
                 : static_cast<const char*>(c.in(r).data) + std::max<int64_t>(window_bytes[r], 0) + offset;
    };
    // Split over threads from 64K elements of float32 (as many bytes for other dtypes).
    parallel_for((n + chunk_len - 1) / chunk_len, (int64_t{256} << 10) / kChunkBytes, [&](int64_t lo, int64_t hi) {
      alignas(64) unsigned char temps[kMaxFusedTemps * kChunkBytes];  // on the stack: no allocation
      alignas(64) unsigned char spread[kMaxFusedRowInputs * kChunkBytes];
      alignas(64) unsigned char gathered[kMaxFusedWindowInputs * kChunkBytes];
      const void* reg[kMaxFusedRegisters];
      char scalar[kMaxFusedRegisters] = {};
      for (int r = 0; r < num_inputs; ++r) scalar[r] = !windowed[r] && c.in(r).num_elements == 1 && n != 1;
      int64_t first = lo * chunk_len;
      const int64_t end = std::min(hi * chunk_len, n);
      // Where every input is read in place, the register program runs over the whole range in
      // one call: its setup (the program's copy, the scalars' broadcasts, a divisor's constants)
      // cost 15% of a 1M chain when paid for every chunk. The few elements short of eight
      // vectors (or all of them at the baseline level) go on in chunks below.
      if (lanes && in_place) {
        for (int r = 0; r < num_inputs; ++r) reg[r] = in_place_operand(r, scalar[r], first);
        first += kernels::vlanes(lane_steps, steps, num_inputs, reinterpret_cast<const float* const*>(reg), scalar,
                                 static_cast<float*>(out.data) + first, end - first);
      }
      for (int64_t start = first; start < end; start += chunk_len) {
        const int64_t len = std::min(chunk_len, end - start);
        for (int r = 0; r < num_inputs; ++r) {
          const TensorImpl& in = c.in(r);
          // Again per chunk: a step of a malformed program may have written an input's register.
          scalar[r] = !windowed[r] && in.num_elements == 1 && n != 1;
          if (window_slot[r] >= 0) {
            unsigned char* dst = gathered + static_cast<size_t>(window_slot[r]) * kChunkBytes;
            gather_window(dst, static_cast<const unsigned char*>(in.data), es, start, len, channels,
                          window_of(windows, r));
            reg[r] = dst;
          } else if (row_slot[r] >= 0) {
            unsigned char* dst = spread + static_cast<size_t>(row_slot[r]) * kChunkBytes;
            spread_rows(dst, static_cast<const unsigned char*>(in.data), es, start, len, channels);
            reg[r] = dst;
          } else if (tiled_at[r] >= 0)
            reg[r] = tiled + tiled_at[r] + (start % channels) * static_cast<int64_t>(es);
          else
            reg[r] = in_place_operand(r, scalar[r], start);
        }
        // In registers where every step has a register form; the rest (the last elements
        // short of eight vectors, or every element) step by step, each a pass over the chunk.
        const int64_t done =
            lanes ? kernels::vlanes(lane_steps, steps, num_inputs, reinterpret_cast<const float* const*>(reg), scalar,
                                    static_cast<float*>(out.data) + start, len)
                  : 0;
        if (done == len) continue;
        for (int r = 0; r < num_inputs; ++r)
          if (!scalar[r]) reg[r] = static_cast<const char*>(reg[r]) + done * static_cast<int64_t>(es);
        for (int s = 0; s < steps; ++s) {
          const int64_t* ins = &p[2 + 4 * s];
          const int dst = static_cast<int>(ins[1]), a = static_cast<int>(ins[2]), b = static_cast<int>(ins[3]);
          void* target =
              s == steps - 1
                  ? static_cast<void*>(static_cast<char*>(out.data) + (start + done) * static_cast<int64_t>(es))
                  : static_cast<void*>(temps + static_cast<size_t>(dst - num_inputs) * kChunkBytes);
          ops[ins[0]]->chunk(d, reg[a], scalar[a], b >= 0 ? reg[b] : nullptr, b >= 0 && scalar[b], target, len - done);
          reg[dst] = target;
          scalar[dst] = 0;
        }
      }
    });
  }
};

}  // namespace

const OpDef& op::KilnFusedElementwise() {
  static const OpDef def = {
      .name = "KilnFusedElementwise",
      .num_inputs = -1,
      .num_outputs = 1,
      .input_args = {list_arg("inputs")},
      .traits = kElementwise | kInternal,
      .attr_specs = {int_list_attr("program"), shape_attr("output_shape"), int_list_attr("windows", {})},
      .infer = infer_fused,
      .any_dtype_kernel = &FusedKernel::run};
  return def;
}

}  // namespace kiln::ops
