// Stateful random ops with TensorFlow's bits: a Philox stream per op, seeded by its (seed,
// seed2) attrs as TensorFlow's PhiloxRandom(seed, seed2), which every call advances by 256
// generator calls per output value (TensorFlow's ReserveRandomOutputs). TensorFlow keeps
// that stream in the op's kernel, which eager execution caches by op and attrs; kiln keeps
// one per (op, dtype, seed, seed2), so the same eager calls give the same numbers as
// TensorFlow's, and reset_random_streams() (tf.random.set_seed) restarts them. Seeds (0, 0)
// draw a fresh random stream on every call. The distributions are kernels/philox.h's.
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/philox.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/random_common.h"

namespace kiln::ops {
namespace {

using kernels::Philox;

const int kRandomDtype = attr_index(
    {{&op::RandomUniform(), "dtype"}, {&op::RandomStandardNormal(), "dtype"}, {&op::TruncatedNormal(), "dtype"}});

// Generator calls reserved per output value, as TensorFlow's stateful kernels reserve them.
constexpr uint64_t kCallsPerValue = 256;
// Streams kept at most; past it all are forgotten (programs that make this many distinct
// seeded ops restart their streams rather than grow without bound).
constexpr size_t kMaxStreams = size_t{1} << 16;

using StreamKey = std::tuple<const OpDef*, DType, int64_t, int64_t>;
struct Streams {
  std::mutex mu;
  std::map<StreamKey, Philox> at;
};
Streams& streams() {
  static Streams* s = new Streams;  // never destroyed: kernels may run during exit
  return *s;
}

uint64_t fresh_seed() {
  static std::atomic<uint64_t> counter{
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^ std::random_device{}()};
  uint64_t z = counter.fetch_add(0x9e3779b97f4a7c15ULL) + 0x9e3779b97f4a7c15ULL;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The generator for this call, the op's stream advanced past the `calls` generator calls it
// reserves (TensorFlow's ReserveSamples128).
Philox reserve_calls(const KernelContext& c, int seed_attr, DType dtype, uint64_t calls) {
  const int64_t seed = c.attrs.i(seed_attr), seed2 = c.attrs.i(seed_attr + 1);
  if (seed == 0 && seed2 == 0) return Philox::from_seeds(fresh_seed(), fresh_seed());
  Streams& s = streams();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.at.size() >= kMaxStreams) s.at.clear();
  auto it = s.at.try_emplace(StreamKey{&c.op, dtype, seed, seed2},
                             Philox::from_seeds(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2)))
                .first;
  const Philox gen = it->second;
  it->second.skip(calls);
  return gen;
}
// For `values` outputs of a distribution (TensorFlow's ReserveRandomOutputs).
Philox reserve(const KernelContext& c, int seed_attr, DType dtype, int64_t values) {
  return reserve_calls(c, seed_attr, dtype, static_cast<uint64_t>(values) * kCallsPerValue);
}

// RandomShuffle(value): attrs (seed, seed2). The rows (dimension 0) in a random order: the
// Fisher-Yates shuffle TensorFlow's kernel runs, swapping row i with row i + (word mod
// (n - i)), one generator word per swap.
const int kShuffleSeed = attr_index(op::RandomShuffle(), "seed");

void infer_shuffle(InferContext& c) {
  const InputInfo& in = c.in(0);
  c.out(0).dtype = in.dtype;
  c.kernel_dtype = in.dtype;
  c.out(0).shape = in.unknown_rank ? TensorShape::unknown() : TensorShape(*in.dims);
}
void run_shuffle(KernelContext& c) {
  const TensorImpl& x = c.in(0);
  TensorImpl& y = c.out(0);
  const int64_t rows = x.dims.empty() ? 1 : x.dims[0];
  if (x.nbytes() == 0) return;
  if (x.num_elements <= 1 || rows <= 1) {
    std::memcpy(y.data, x.data, x.nbytes());
    return;
  }
  Philox gen = reserve_calls(c, kShuffleSeed, x.dtype, static_cast<uint64_t>(rows - 1 + 3) / 4);
  kernels::Philox::Block block{};
  int used = 4;
  const auto word = [&]() {
    if (used == 4) {
      block = gen.next();
      used = 0;
    }
    return block.w[used++];
  };
  std::vector<int64_t> order(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) order[static_cast<size_t>(i)] = i;
  for (int64_t i = 0; i + 1 < rows; ++i) {
    const uint64_t n = static_cast<uint64_t>(rows - i);
    // TensorFlow draws one word below 2^32 rows and two (a 64-bit value) above.
    const uint64_t r = n <= 0xffffffffu ? word() % n : ((uint64_t{word()} | uint64_t{word()} << 32) % n);
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(i + static_cast<int64_t>(r))]);
  }
  const size_t row_bytes = x.nbytes() / static_cast<size_t>(rows);
  auto* dst = static_cast<char*>(y.data);
  const auto* src = static_cast<const char*>(x.data);
  for (int64_t i = 0; i < rows; ++i)
    std::memcpy(dst + static_cast<size_t>(i) * row_bytes,
                src + static_cast<size_t>(order[static_cast<size_t>(i)]) * row_bytes, row_bytes);
}

// RandomUniform(shape): attrs (dtype, seed, seed2). Values in [0, 1).
template <class T>
struct UniformKernel {
  static void run(KernelContext& c) {
    const int64_t n = c.out(0).num_elements;
    kernels::fill_uniform(reserve(c, 1, c.out(0).dtype, n), c.out(0).as<T>(), n);
  }
};

// RandomStandardNormal(shape): attrs (dtype, seed, seed2).
template <class T>
struct NormalKernel {
  static void run(KernelContext& c) {
    const int64_t n = c.out(0).num_elements;
    kernels::fill_normal(reserve(c, 1, c.out(0).dtype, n), c.out(0).as<T>(), n);
  }
};

// TruncatedNormal(shape): attrs (dtype, seed, seed2). Standard normal values below 2 in
// magnitude (pairs outside are drawn again).
template <class T>
struct TruncatedNormalKernel {
  static void run(KernelContext& c) {
    const int64_t n = c.out(0).num_elements;
    kernels::fill_truncated_normal(reserve(c, 1, c.out(0).dtype, n), c.out(0).as<T>(), n);
  }
};

// RandomUniformInt(shape, minval, maxval): attrs (seed, seed2). Values in [minval, maxval).
void infer_uniform_int(InferContext& c) {
  require_same_dtypes(c, 1, 2);
  require_int_dtype(c, 1, "minval");
  for (int i = 1; i <= 2; ++i)
    if (!c.in(i).unknown_rank && !c.in(i).dims->empty()) c.fail("minval and maxval must be scalars");
  if (c.in(1).value && c.in(2).value && int_values(*c.in(1).value)[0] >= int_values(*c.in(2).value)[0])
    c.fail("Need minval < maxval, got " + std::to_string(int_values(*c.in(1).value)[0]) +
           " >= " + std::to_string(int_values(*c.in(2).value)[0]));
  infer_random_output(c, 0, c.in(1).dtype);
}
template <class T>
struct UniformIntKernel {
  static void run(KernelContext& c) {
    const T lo = c.in(1).as<T>()[0], hi = c.in(2).as<T>()[0];
    if (lo >= hi) c.fail("Need minval < maxval, got " + std::to_string(lo) + " >= " + std::to_string(hi));
    const int64_t n = c.out(0).num_elements;
    kernels::fill_uniform_int(reserve(c, 0, c.out(0).dtype, n), c.out(0).as<T>(), n, lo, hi);
  }
};
// RandomUniform, RandomStandardNormal, TruncatedNormal: the float dtypes TensorFlow registers.
void infer_float_random(InferContext& c) {
  const DType d = c.attrs.type(kRandomDtype);
  require_type_in(c, "dtype", d, {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64});
  infer_random_output(c, 0, d);
}

}  // namespace

void infer_random_output(InferContext& c, int shape_input, DType dtype) {
  require_int_dtype(c, shape_input, "shape");
  const InputInfo& in = c.in(shape_input);
  if (!in.unknown_rank && in.dims->size() != 1)
    c.fail("shape must be a vector of {int32,int64}, got shape " + dims_text(*in.dims));
  c.out(0).dtype = dtype;
  c.kernel_dtype = dtype;
  std::vector<int64_t> dims;
  if (!known_ints(in, &dims)) {
    c.out(0).shape =
        in.unknown_rank || (*in.dims)[0] < 0 ? TensorShape::unknown() : TensorShape::unknown_dims((*in.dims)[0]);
    return;
  }
  for (int64_t d : dims)
    if (d < 0) c.fail("Dimension " + std::to_string(d) + " must be >= 0");
  detail::checked_num_elements(dims.data(), dims.size());
  c.out(0).shape = TensorShape(Dims(dims));
}

void reset_random_streams() {
  Streams& s = streams();
  std::lock_guard<std::mutex> lock(s.mu);
  s.at.clear();
}

const OpDef& op::RandomUniform() {
  static const OpDef def = {.name = "RandomUniform",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"shape"},
                            .traits = kStateful | kTfjs,
                            .attr_specs = {type_attr("dtype"), int_attr("seed", 0), int_attr("seed2", 0)},
                            .infer = infer_float_random,
                            .kernels = kernels_for<UniformKernel, KILN_FLOATS, KILN_HALF_TYPES>(),
                            .type_attr = nullptr,
                            .index_type_attrs = {{"T", 0}},
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::RandomStandardNormal() {
  static const OpDef def = {.name = "RandomStandardNormal",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"shape"},
                            .traits = kStateful | kTfjs,
                            .attr_specs = {type_attr("dtype"), int_attr("seed", 0), int_attr("seed2", 0)},
                            .infer = infer_float_random,
                            .kernels = kernels_for<NormalKernel, KILN_FLOATS, KILN_HALF_TYPES>(),
                            .type_attr = nullptr,
                            .index_type_attrs = {{"T", 0}},
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::TruncatedNormal() {
  static const OpDef def = {.name = "TruncatedNormal",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"shape"},
                            .traits = kStateful,
                            .attr_specs = {type_attr("dtype"), int_attr("seed", 0), int_attr("seed2", 0)},
                            .infer = infer_float_random,
                            .kernels = kernels_for<TruncatedNormalKernel, KILN_FLOATS, KILN_HALF_TYPES>(),
                            .type_attr = nullptr,
                            .index_type_attrs = {{"T", 0}},
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::RandomShuffle() {
  static const OpDef def = {.name = "RandomShuffle",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"value"},
                            .traits = kStateful | kMovesElements,
                            .attr_specs = {int_attr("seed", 0), int_attr("seed2", 0)},
                            .infer = infer_shuffle,
                            .any_dtype_kernel = run_shuffle,
                            .grad = &no_gradient};
  return def;
}
const OpDef& op::RandomUniformInt() {
  static const OpDef def = {.name = "RandomUniformInt",
                            .num_inputs = 3,
                            .num_outputs = 1,
                            .input_args = {"shape", "minval", "maxval"},
                            .traits = kStateful,
                            .attr_specs = {int_attr("seed", 0), int_attr("seed2", 0)},
                            .infer = infer_uniform_int,
                            .kernels = kernels_for<UniformIntKernel, int32_t, int64_t>(),
                            .type_attr = "Tout",
                            .type_attr_input = 1,
                            .index_type_attrs = {{"T", 0}},
                            .grad = &no_gradient};
  return def;
}

}  // namespace kiln::ops
