// Stateless random ops, which give the same numbers for the same seed on every call, and
// TensorFlow's numbers (kernels/philox.h):
//   V1 (shape, seed[2]): the seed pair is scrambled into a Philox key and counter
//     (StatelessRandomUniform, -Normal, TruncatedNormal, -UniformInt, -UniformFullInt);
//   V2 (shape, key[1], counter[2], alg): the key and counter given, as tf.random.Generator and
//     tf.random.stateless_* call them after StatelessRandomGetKeyCounter scrambled a seed;
//   RngReadAndSkip: tf.random.Generator's state variable [counter_lo, counter_hi, key] read
//     and advanced by delta values (256 generator calls each).
// Algorithms: Philox (1) and auto-select (3, Philox on CPU). ThreeFry (2) is refused as
// TensorFlow's CPU kernels refuse it.
#include <cstring>
#include <string>

#include "kernels/philox.h"
#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"
#include "ops/random_common.h"
#include "ops/variable_state.h"

namespace kiln::ops {
namespace {

using kernels::Philox;

constexpr int64_t kPhilox = 1, kThreeFry = 2, kAutoSelect = 3;
constexpr int64_t kPhiloxStateSize = 3;  // counter (2 x 64 bits), key (64 bits)
constexpr uint64_t kCallsPerValue = 256;

// ---- inputs ------------------------------------------------------------------------------

const std::initializer_list<DType> kFloatTypes = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

void require_shape(const InferContext& c, int i, const Dims& want, const std::string& message,
                   const std::string& note = "") {
  const InputInfo& in = c.in(i);
  if (in.unknown_rank) return;
  bool ok = in.dims->size() == want.size();
  for (size_t d = 0; ok && d < want.size(); ++d) ok = (*in.dims)[d] < 0 || (*in.dims)[d] == want[d];
  if (!ok) c.fail(message + dims_text(*in.dims) + note);
}
void require_input_dtype(const InferContext& c, int i, DType want) {
  if (c.in(i).dtype != want)
    c.fail(std::string("cannot compute ") + c.op.name + " as input #" + std::to_string(i) +
           "(zero-based) was expected to be a " + tf_type_name(want) + " tensor but is a " +
           tf_type_name(c.in(i).dtype) + " tensor");
}
// `shown`: the input's number in TensorFlow's message (which counts a resource input).
void require_scalar_input(const InferContext& c, int i, int shown) {
  const InputInfo& in = c.in(i);
  if (!in.unknown_rank && !in.dims->empty())
    c.fail("input " + std::to_string(shown) + " (0-based) must have shape [], not " + dims_text(*in.dims));
}

// V1's seed: int32 or int64, shape [2].
void check_seed(const InferContext& c, int i) {
  require_type_in(c, "Tseed", c.in(i).dtype, {DType::Int32, DType::Int64});
  require_shape(c, i, {2}, "seed must have shape [2], not ");
}
// V2's key (uint64 [1]), counter (uint64, at least 2 values) and alg (int32 scalar).
void check_key_counter_alg(const InferContext& c, int key) {
  require_input_dtype(c, key, DType::UInt64);
  require_input_dtype(c, key + 1, DType::UInt64);
  require_input_dtype(c, key + 2, DType::Int32);
  require_shape(c, key, {1}, "key must have shape [1], not ", ". (Note that batched keys are not supported yet.)");
  const InputInfo& counter = c.in(key + 1);
  if (!counter.unknown_rank && (counter.dims->size() != 1 || ((*counter.dims)[0] >= 0 && (*counter.dims)[0] < 2)))
    c.fail("counter must be a vector with length at least 2; got shape: " + dims_text(*counter.dims) +
           ". (Note that batched counters are not supported yet.)");
  require_scalar_input(c, key + 2, key + 2);
}
void check_alg(const KernelContext& c, int64_t alg) {
  if (alg == kThreeFry) c.fail("Unsupported algorithm id: 2");
  if (alg != kPhilox && alg != kAutoSelect) c.fail("Unsupported algorithm id: " + std::to_string(alg));
}

Philox seeded(const TensorImpl& seed) {
  const std::vector<int64_t> s = int_values(seed);
  return Philox::from_stateless_seed(static_cast<uint64_t>(s[0]), static_cast<uint64_t>(s[1]));
}
Philox keyed(const KernelContext& c, int key) {
  check_alg(c, c.in(key + 2).as<int32_t>()[0]);
  const uint64_t* counter = c.in(key + 1).as<uint64_t>();
  return Philox::from_key_counter(c.in(key).as<uint64_t>()[0], counter[0], counter[1]);
}

// The dtype attr is attr 0 of the float and full-range rows (the bounded-int rows take it
// from minval).
constexpr int kDtype = 0;

// ---- shape functions ---------------------------------------------------------------------

// V1 floats (shape, seed).
void infer_v1_float(InferContext& c) {
  require_type_in(c, "dtype", c.attrs.type(kDtype), kFloatTypes);
  check_seed(c, 1);
  infer_random_output(c, 0, c.attrs.type(kDtype));
}
// V2 floats (shape, key, counter, alg).
void infer_v2_float(InferContext& c) {
  require_type_in(c, "dtype", c.attrs.type(kDtype), kFloatTypes);
  check_key_counter_alg(c, 1);
  infer_random_output(c, 0, c.attrs.type(kDtype));
}
// minval and maxval: scalars of one int dtype, which the output takes (its "dtype" attr is
// theirs).
void check_bounds(InferContext& c, int lo) {
  const DType d = c.in(lo).dtype;
  require_type_in(c, "dtype", d, {DType::Int32, DType::Int64});
  require_input_dtype(c, lo + 1, d);
  for (int i = lo; i <= lo + 1; ++i)
    if (!c.in(i).unknown_rank && !c.in(i).dims->empty())
      c.fail(std::string(i == lo ? "minval" : "maxval") + " must be 0-D, got shape " + dims_text(*c.in(i).dims));
}
// StatelessRandomUniformInt(shape, seed, minval, maxval).
void infer_v1_int(InferContext& c) {
  check_bounds(c, 2);
  check_seed(c, 1);
  infer_random_output(c, 0, c.in(2).dtype);
}
// StatelessRandomUniformIntV2(shape, key, counter, alg, minval, maxval).
void infer_v2_int(InferContext& c) {
  check_bounds(c, 4);
  check_key_counter_alg(c, 1);
  infer_random_output(c, 0, c.in(4).dtype);
}
const std::initializer_list<DType> kFullIntTypes = {DType::Int32, DType::Int64, DType::UInt32, DType::UInt64};
void infer_v1_full_int(InferContext& c) {
  require_type_in(c, "dtype", c.attrs.type(kDtype), kFullIntTypes);
  if (c.in(1).dtype != DType::Int32 && c.in(1).dtype != DType::Int64)
    c.fail(std::string("Invalid seed type: ") + tf_type_name(c.in(1).dtype));
  require_shape(c, 1, {2}, "seed must have shape [2], not ");
  infer_random_output(c, 0, c.attrs.type(kDtype));
}
void infer_v2_full_int(InferContext& c) {
  require_type_in(c, "dtype", c.attrs.type(kDtype), kFullIntTypes);
  check_key_counter_alg(c, 1);
  infer_random_output(c, 0, c.attrs.type(kDtype));
}

// ---- kernels: the distribution from the generator the seed or key makes -------------------

// One kernel per distribution and op version: the generator from V1's seed (input 1) or
// V2's key, counter and alg (inputs 1-3); the bounded ints' minval and maxval follow them.
enum class Dist { kUniform, kNormal, kTruncated, kInt, kFullInt };

template <Dist D, bool V2>
struct Draw {
  template <class T>
  struct Kernel {
    static void run(KernelContext& c) {
      const Philox gen = V2 ? keyed(c, 1) : seeded(c.in(1));
      T* out = c.out(0).as<T>();
      const int64_t n = c.out(0).num_elements;
      if constexpr (D == Dist::kUniform) {
        kernels::fill_uniform(gen, out, n);
      } else if constexpr (D == Dist::kNormal) {
        kernels::fill_normal(gen, out, n);
      } else if constexpr (D == Dist::kTruncated) {
        kernels::fill_truncated_normal(gen, out, n);
      } else if constexpr (D == Dist::kFullInt) {
        kernels::fill_full_int(gen, out, n);
      } else {
        const int lo_input = V2 ? 4 : 2;
        const T lo = c.in(lo_input).as<T>()[0], hi = c.in(lo_input + 1).as<T>()[0];
        if (lo >= hi) c.fail("Need minval < maxval, got " + std::to_string(lo) + " >= " + std::to_string(hi));
        kernels::fill_uniform_int(gen, out, n, lo, hi);
      }
    }
  };
};

// ---- the seed scrambling and the algorithm, as ops ---------------------------------------

// StatelessRandomGetKeyCounter(seed) -> key [1], counter [2] (uint64); ...Alg adds alg.
void infer_key_counter(InferContext& c) {
  check_seed(c, 0);
  c.out(0) = {.dtype = DType::UInt64, .shape = TensorShape(Dims{1})};
  c.out(1) = {.dtype = DType::UInt64, .shape = TensorShape(Dims{2})};
  if (c.num_outputs == 3) c.out(2) = {.dtype = DType::Int32, .shape = TensorShape(Dims{})};
  c.kernel_dtype = DType::UInt64;
}
void run_key_counter(KernelContext& c) {
  const Philox p = seeded(c.in(0));
  c.out(0).as<uint64_t>()[0] = p.key64();
  c.out(1).as<uint64_t>()[0] = p.counter64(0);
  c.out(1).as<uint64_t>()[1] = p.counter64(1);
  if (c.num_outputs == 3) c.out(2).as<int32_t>()[0] = static_cast<int32_t>(kPhilox);
}
void infer_get_alg(InferContext& c) {
  c.out(0) = {.dtype = DType::Int32, .shape = TensorShape(Dims{})};
  c.kernel_dtype = DType::Int32;
}
void run_get_alg(KernelContext& c) { c.out(0).as<int32_t>()[0] = static_cast<int32_t>(kPhilox); }

// RngReadAndSkip(resource, alg, delta) -> the state before; the counter advanced by delta
// values. The variable: int64, one dimension, at least 3 values.
const int kRngResource = attr_index(op::RngReadAndSkip(), "_resource");

void infer_read_and_skip(InferContext& c) {
  require_input_dtype(c, 0, DType::Int32);
  require_input_dtype(c, 1, DType::UInt64);
  require_scalar_input(c, 0, 1);
  require_scalar_input(c, 1, 2);
  c.out(0) = {.dtype = DType::Int64, .shape = TensorShape(Dims{kPhiloxStateSize})};
  c.kernel_dtype = DType::Int64;
}
void run_read_and_skip(KernelContext& c) {
  const int64_t alg = c.in(0).as<int32_t>()[0];
  if (alg == kThreeFry) throw UnimplementedError("Non-XLA devices don't support the ThreeFry algorithm.");
  if (alg != kPhilox && alg != kAutoSelect) c.fail("Unsupported algorithm id: " + std::to_string(alg));
  const uint64_t delta = c.in(1).as<uint64_t>()[0];
  auto& var = *static_cast<VariableState*>(c.attrs.resource(kRngResource));
  int64_t* out = c.out(0).as<int64_t>();
  VariableState::update_in_place(
      [&](TensorImpl& v) {
        if (v.dtype != DType::Int64)
          c.fail(std::string("dtype of RNG state variable must be int64, not ") + tf_type_name(v.dtype));
        if (v.dims.size() != 1)
          c.fail("RNG state must have one and only one dimension, not " + std::to_string(v.dims.size()));
        if (v.dims[0] < kPhiloxStateSize)
          c.fail("For the Philox algorithm, the size of state must be at least 3; got " + std::to_string(v.dims[0]));
        auto* state = v.as<int64_t>();
        std::memcpy(out, state, kPhiloxStateSize * sizeof(int64_t));
        // The 128-bit counter (low word first) skips delta * 256 calls, a product TensorFlow
        // takes modulo 2^64.
        const uint64_t lo = static_cast<uint64_t>(state[0]), sum = lo + delta * kCallsPerValue;
        state[0] = static_cast<int64_t>(sum);
        state[1] = static_cast<int64_t>(static_cast<uint64_t>(state[1]) + (sum < lo ? 1 : 0));
      },
      var);
}

// The rows of the distribution ops: V1 takes (shape, seed, ...), V2 (shape, key, counter,
// alg, ...); `dtype` is their output's type attr.
OpDef distribution_row(const char* name, std::vector<ArgSpec> args, ShapeFn infer,
                       std::array<KernelFn, kNumDTypes> kernels, DType default_dtype) {
  const bool v2 = args.size() > 1 && std::string(args[1].name) == "key";
  const int n = static_cast<int>(args.size());
  OpDef d = {.name = name,
             .num_inputs = n,
             .num_outputs = 1,
             .input_args = std::move(args),
             .traits = kPure,
             .attr_specs = {type_attr("dtype", default_dtype)},
             .infer = infer,
             .kernels = kernels,
             .type_attr = nullptr,
             .index_type_attrs = {{v2 ? "Tshape" : "T", 0}},
             .grad = &no_gradient};
  if (!v2) d.index_type_attrs.push_back({"Tseed", 1});
  return d;
}
// The bounded-int ops: their dtype is minval's (input `lo`), not an attr of its own.
OpDef bounded_int_row(const char* name, std::vector<ArgSpec> args, ShapeFn infer,
                      std::array<KernelFn, kNumDTypes> kernels, DType) {
  OpDef d = distribution_row(name, std::move(args), infer, kernels, DType::Int32);
  d.attr_specs.clear();
  d.type_attr = "dtype";
  d.type_attr_input = d.num_inputs - 2;
  return d;
}

}  // namespace

#define KILN_DISTRIBUTION_ROW(Name, Args, Infer, Kernels, Dtype, Make) \
  const OpDef& op::Name() {                                            \
    static const OpDef def = Make(#Name, Args, Infer, Kernels, Dtype); \
    return def;                                                        \
  }
#define KILN_V1_ARGS \
  { "shape", "seed" }
#define KILN_V2_ARGS \
  { "shape", "key", "counter", "alg" }
#define KILN_RANDOM_FLOATS KILN_FLOATS, KILN_HALF_TYPES
KILN_DISTRIBUTION_ROW(StatelessRandomUniform, KILN_V1_ARGS, infer_v1_float,
                      (kernels_for<Draw<Dist::kUniform, false>::Kernel, KILN_RANDOM_FLOATS>()), DType::Float32,
                      distribution_row)
KILN_DISTRIBUTION_ROW(StatelessRandomNormal, KILN_V1_ARGS, infer_v1_float,
                      (kernels_for<Draw<Dist::kNormal, false>::Kernel, KILN_RANDOM_FLOATS>()), DType::Float32,
                      distribution_row)
KILN_DISTRIBUTION_ROW(StatelessTruncatedNormal, KILN_V1_ARGS, infer_v1_float,
                      (kernels_for<Draw<Dist::kTruncated, false>::Kernel, KILN_RANDOM_FLOATS>()), DType::Float32,
                      distribution_row)
KILN_DISTRIBUTION_ROW(StatelessRandomUniformInt, (std::vector<ArgSpec>{"shape", "seed", "minval", "maxval"}),
                      infer_v1_int, (kernels_for<Draw<Dist::kInt, false>::Kernel, int32_t, int64_t>()), DType::Int32,
                      bounded_int_row)
KILN_DISTRIBUTION_ROW(StatelessRandomUniformFullInt, KILN_V1_ARGS, infer_v1_full_int,
                      (kernels_for<Draw<Dist::kFullInt, false>::Kernel, int32_t, int64_t, uint32_t, uint64_t>()),
                      DType::UInt64, distribution_row)
KILN_DISTRIBUTION_ROW(StatelessRandomUniformV2, KILN_V2_ARGS, infer_v2_float,
                      (kernels_for<Draw<Dist::kUniform, true>::Kernel, KILN_RANDOM_FLOATS>()), DType::Float32,
                      distribution_row)
KILN_DISTRIBUTION_ROW(StatelessRandomNormalV2, KILN_V2_ARGS, infer_v2_float,
                      (kernels_for<Draw<Dist::kNormal, true>::Kernel, KILN_RANDOM_FLOATS>()), DType::Float32,
                      distribution_row)
KILN_DISTRIBUTION_ROW(StatelessTruncatedNormalV2, KILN_V2_ARGS, infer_v2_float,
                      (kernels_for<Draw<Dist::kTruncated, true>::Kernel, KILN_RANDOM_FLOATS>()), DType::Float32,
                      distribution_row)
KILN_DISTRIBUTION_ROW(StatelessRandomUniformIntV2,
                      (std::vector<ArgSpec>{"shape", "key", "counter", "alg", "minval", "maxval"}), infer_v2_int,
                      (kernels_for<Draw<Dist::kInt, true>::Kernel, int32_t, int64_t>()), DType::Int32, bounded_int_row)
KILN_DISTRIBUTION_ROW(StatelessRandomUniformFullIntV2, KILN_V2_ARGS, infer_v2_full_int,
                      (kernels_for<Draw<Dist::kFullInt, true>::Kernel, int32_t, int64_t, uint32_t, uint64_t>()),
                      DType::UInt64, distribution_row)
#undef KILN_RANDOM_FLOATS
#undef KILN_V2_ARGS
#undef KILN_V1_ARGS
#undef KILN_DISTRIBUTION_ROW

namespace {
// StatelessRandomGetKeyCounter and its ...Alg twin, which adds the algorithm as output 2.
OpDef key_counter_row(const char* name, std::vector<const char*> outputs) {
  const int n = static_cast<int>(outputs.size());
  return {.name = name,
          .num_inputs = 1,
          .num_outputs = n,
          .input_args = {"seed"},
          .traits = kPure,
          .infer = infer_key_counter,
          .any_dtype_kernel = run_key_counter,
          .type_attr = nullptr,
          .index_type_attrs = {{"Tseed", 0}},
          .grad = &no_gradient,
          .output_args = std::move(outputs)};
}
}  // namespace

const OpDef& op::StatelessRandomGetKeyCounter() {
  static const OpDef def = key_counter_row("StatelessRandomGetKeyCounter", {"key", "counter"});
  return def;
}
const OpDef& op::StatelessRandomGetKeyCounterAlg() {
  static const OpDef def = key_counter_row("StatelessRandomGetKeyCounterAlg", {"key", "counter", "alg"});
  return def;
}
const OpDef& op::StatelessRandomGetAlg() {
  static const OpDef def = {.name = "StatelessRandomGetAlg",
                            .num_inputs = 0,
                            .num_outputs = 1,
                            .traits = kPure,
                            .infer = infer_get_alg,
                            .any_dtype_kernel = run_get_alg,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"alg"}};
  return def;
}
const OpDef& op::RngReadAndSkip() {
  static const OpDef def = {.name = "RngReadAndSkip",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"alg", "delta"},
                            .traits = kStateful,
                            .attr_specs = {resource_attr("_resource")},
                            .infer = infer_read_and_skip,
                            .any_dtype_kernel = run_read_and_skip,
                            .type_attr = nullptr,
                            .grad = &no_gradient,
                            .output_args = {"value"}};
  return def;
}
}  // namespace kiln::ops
