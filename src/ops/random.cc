// Stateful random ops. A nonzero (seed, seed2) pair makes a call reproducible: the same
// seeds give the same numbers on every call. Without seeds every call draws new numbers.
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>

#include "ops/gradient.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

namespace kiln::ops {
namespace {

const int kRandomDtype = attr_index(
    {{&op::RandomUniform(), "dtype"}, {&op::RandomStandardNormal(), "dtype"}, {&op::TruncatedNormal(), "dtype"}});

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256**: fast, good quality, 256-bit state seeded through splitmix64.
struct Rng {
  uint64_t s[4];
  explicit Rng(uint64_t seed) {
    for (auto& v : s) v = splitmix64(seed);
  }
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t next() {
    const uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  float uniformf() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }  // [0, 1)
};

Rng make_rng(const KernelContext& c, int seed_attr) {
  const int64_t seed = c.attrs.i(seed_attr), seed2 = c.attrs.i(seed_attr + 1);
  if (seed != 0 || seed2 != 0)
    return Rng(static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(seed2));
  static std::atomic<uint64_t> counter{
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^ std::random_device{}()};
  return Rng(counter.fetch_add(0x632BE59BD9B4E019ULL));
}

// Output shape from the `shape` input (as Fill does).
void infer_shape_input(InferContext& c, DType out) {
  require_int_dtype(c, 0, "shape");
  c.out(0).dtype = out;
  c.kernel_dtype = out;
  std::vector<int64_t> dims;
  if (known_ints(c.in(0), &dims)) {
    for (int64_t d : dims)
      if (d < 0) c.fail("Dimension " + std::to_string(d) + " must be >= 0");
    detail::checked_num_elements(dims.data(), dims.size());
    c.out(0).shape = TensorShape(Dims(dims));
  } else {
    c.out(0).shape = TensorShape::unknown();
  }
}

// RandomUniform(shape): attrs (dtype, seed, seed2). Values in [0, 1).
void infer_uniform(InferContext& c) {
  if (!is_floating(c.attrs.type(kRandomDtype))) c.fail("RandomUniform needs a floating dtype");
  infer_shape_input(c, c.attrs.type(kRandomDtype));
}
template <class T>
struct UniformKernel {
  static void run(KernelContext& c) {
    Rng rng = make_rng(c, 1);
    T* o = c.out(0).as<T>();
    for (int64_t i = 0; i < c.out(0).num_elements; ++i) {
      if constexpr (std::is_same_v<T, float>)
        o[i] = rng.uniformf();
      else
        o[i] = rng.uniform();
    }
  }
};

// RandomStandardNormal(shape): attrs (dtype, seed, seed2). Box-Muller.
template <class T>
struct NormalKernel {
  static void run(KernelContext& c) {
    Rng rng = make_rng(c, 1);
    T* o = c.out(0).as<T>();
    const int64_t n = c.out(0).num_elements;
    for (int64_t i = 0; i < n; i += 2) {
      const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
      const double r = std::sqrt(-2.0 * std::log(u1));
      o[i] = static_cast<T>(r * std::cos(2 * M_PI * u2));
      if (i + 1 < n) o[i + 1] = static_cast<T>(r * std::sin(2 * M_PI * u2));
    }
  }
};

// TruncatedNormal(shape): attrs (dtype, seed, seed2). Standard normal values (Box-Muller) with
// any of magnitude 2 or more drawn again, as TensorFlow's truncation.
template <class T>
struct TruncatedNormalKernel {
  static void run(KernelContext& c) {
    Rng rng = make_rng(c, 1);
    T* o = c.out(0).as<T>();
    const int64_t n = c.out(0).num_elements;
    for (int64_t i = 0; i < n;) {
      const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
      const double r = std::sqrt(-2.0 * std::log(u1));
      for (const double z : {r * std::cos(2 * M_PI * u2), r * std::sin(2 * M_PI * u2)})
        if (i < n && std::fabs(z) < 2.0) o[i++] = static_cast<T>(z);
    }
  }
};

// RandomUniformInt(shape, minval, maxval): attrs (seed, seed2). Values in [minval, maxval).
void infer_uniform_int(InferContext& c) {
  require_same_dtypes(c, 1, 2);
  require_int_dtype(c, 1, "minval");
  for (int i = 1; i <= 2; ++i)
    if (!c.in(i).unknown_rank && !c.in(i).dims->empty()) c.fail("minval and maxval must be scalars");
  if (c.in(1).value && c.in(2).value && int_values(*c.in(1).value)[0] >= int_values(*c.in(2).value)[0])
    c.fail("Need minval < maxval: " + std::to_string(int_values(*c.in(1).value)[0]) +
           " >= " + std::to_string(int_values(*c.in(2).value)[0]));
  infer_shape_input(c, c.in(1).dtype);
}
template <class T>
struct UniformIntKernel {
  static void run(KernelContext& c) {
    const T lo = c.in(1).as<T>()[0], hi = c.in(2).as<T>()[0];
    if (lo >= hi) c.fail("Need minval < maxval: " + std::to_string(lo) + " >= " + std::to_string(hi));
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    Rng rng = make_rng(c, 0);
    T* o = c.out(0).as<T>();
    for (int64_t i = 0; i < c.out(0).num_elements; ++i)
      o[i] = static_cast<T>(static_cast<uint64_t>(lo) + rng.next() % range);
  }
};
void infer_normal(InferContext& c) {
  if (!is_floating(c.attrs.type(kRandomDtype))) c.fail(std::string(c.op.name) + " needs a floating dtype");
  infer_shape_input(c, c.attrs.type(kRandomDtype));
}

}  // namespace

const OpDef& op::RandomUniform() {
  static const OpDef def = {.name = "RandomUniform",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"shape"},
                            .traits = kStateful | kTfjs,
                            .attr_specs = {type_attr("dtype"), int_attr("seed", 0), int_attr("seed2", 0)},
                            .infer = infer_uniform,
                            .kernels = kernels_for<UniformKernel, KILN_FLOATS>(),
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
                            .infer = infer_normal,
                            .kernels = kernels_for<NormalKernel, KILN_FLOATS>(),
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
                            .infer = infer_normal,
                            .kernels = kernels_for<TruncatedNormalKernel, KILN_FLOATS>(),
                            .type_attr = nullptr,
                            .index_type_attrs = {{"T", 0}},
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
