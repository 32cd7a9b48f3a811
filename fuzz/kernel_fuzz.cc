// The kernel fuzzer: every op row of the registry, every dtype it has a kernel for, random
// inputs and attrs drawn from the row itself. Each case runs eagerly and traced (a
// kiln::function over the same op); a crash, a sanitizer report, an exception that is not a
// kiln::Error, or eager and traced disagreeing (outcome, error class, dtype, shape or bits)
// is a finding. New rows are fuzzed the day they are registered: nothing here names an op
// except the few kinds of row it cannot build inputs for (listed in `skip_reason`).
//
//   kernel_fuzz [--seconds S] [--seed N] [--op NAME] [--dtype NAME] [--round R] [--skip A,B] [--verbose]
//
// --skip leaves rows out (say, one with an open finding while it is being fixed).
//
// A case is fixed by (seed, op, dtype, round): the line printed with a finding, or by the
// crash handler, is the command that replays it.
#include <kiln/kiln.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/dtype_table.h"
#include "core/object_value.h"
#include "core/sanitizers.h"
#include "core/tensor_impl.h"
#include "eager/execute.h"
#include "ops/op_def.h"
#include "trace/dispatch.h"

#if defined(__has_include)
#if __has_include(<sanitizer/common_interface_defs.h>) && (defined(KILN_ASAN) || defined(KILN_TSAN))
#include <sanitizer/common_interface_defs.h>
#define KILN_FUZZ_SANITIZER_CALLBACK 1
#endif
#endif

namespace {

using kiln::DType;
using kiln::Tensor;
using kiln::ops::AttrKind;
using kiln::ops::Attrs;
using kiln::ops::AttrSpec;
using kiln::ops::OpDef;

// The case being run, for the crash handler (written before each case, read only on death).
char g_current[512] = "(no case running)";

void print_current() {
  const char head[] = "\nkernel_fuzz: died in case: ";
  ssize_t ignored = write(2, head, sizeof(head) - 1);
  ignored = write(2, g_current, strlen(g_current));
  ignored = write(2, "\n", 1);
  (void)ignored;
}

void on_fatal_signal(int sig) {
  print_current();
  signal(sig, SIG_DFL);
  raise(sig);
}

// Rows the fuzzer cannot make inputs for, and why. Everything else is fuzzed.
const char* skip_reason(const OpDef& op) {
  if (op.has(kiln::ops::kNoKernel)) return "fed, not run (Placeholder)";
  if (op.has(kiln::ops::kControlFlow)) return "runs function bodies (fuzzed through the loader fuzzer)";
  if (op.has(kiln::ops::kInternal) && !op.has(kiln::ops::kFuzzedInternal))
    return "made by the optimizer from checked nodes, never by users";
  if (op.has(kiln::ops::kSideEffect)) return "prints or asserts (its output is the effect)";
  if (std::string_view(op.name) == "ReadFile") return "reads the file system (python/tests/test_file_io_oracle.py)";
  for (const AttrSpec& s : op.attr_specs)
    if (s.kind == AttrKind::kResource || s.kind == AttrKind::kFunc || s.kind == AttrKind::kFuncList)
      return "needs a variable or a function";
  if (std::string_view(op.name).starts_with("Collective") || std::string_view(op.name) == "KilnBroadcast")
    return "needs other ranks (tested by the two-rank MPI tests)";
  return nullptr;
}

std::vector<DType> kernel_dtypes(const OpDef& op) {
  std::vector<DType> v;
  for (int d = 0; d < kiln::kNumDTypes; ++d)
    if (op.kernel_for(static_cast<DType>(d))) v.push_back(static_cast<DType>(d));
  return v;
}

class CaseMaker {
 public:
  explicit CaseMaker(uint64_t seed) : rng_(seed) {}

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }

  // Dims of rank 0-6 with zero-sized and size-1 dims; few elements, so cases stay fast.
  std::vector<int64_t> shape() {
    std::vector<int64_t> d(static_cast<size_t>(uniform(0, 6)));
    for (auto& x : d) {
      const int64_t r = uniform(0, 9);
      x = r == 0 ? 0 : r <= 3 ? 1 : r <= 6 ? uniform(2, 3) : uniform(4, 7);
    }
    int64_t n = 1;
    for (auto& x : d) {
      if (n * x > 4096) x = 1;
      n *= x;
    }
    return d;
  }
  // A shape that broadcasts against `base`: leading dims dropped, some dims set to 1.
  std::vector<int64_t> broadcast_of(const std::vector<int64_t>& base) {
    std::vector<int64_t> d(base.begin() + uniform(0, static_cast<int64_t>(base.size())), base.end());
    for (auto& x : d)
      if (chance(0.3)) x = 1;
    return d;
  }

  double float_value() {
    switch (uniform(0, 11)) {
      case 0:
        return std::numeric_limits<double>::quiet_NaN();
      case 1:
        return chance(0.5) ? INFINITY : -INFINITY;
      case 2:
        return chance(0.5) ? 0.0 : -0.0;
      case 3:
        return chance(0.5) ? 1e30 : -1e-30;
      case 4:
        return std::numeric_limits<double>::max();
      case 5:
        return std::numeric_limits<double>::denorm_min();
      default:
        return std::uniform_real_distribution<double>(-8, 8)(rng_);
    }
  }
  template <class T>
  T int_value() {
    switch (uniform(0, 9)) {
      case 0:
        return std::numeric_limits<T>::min();
      case 1:
        return std::numeric_limits<T>::max();
      case 2:
        return 0;
      case 3:
        return -1;
      default:
        return static_cast<T>(uniform(-3, 6));  // axes, sizes, indices: small values reach deep
    }
  }

  // Random values of any dtype. A Variant tensor is a scalar whose object pointer is null:
  // the ops that read variants must refuse it, never follow it.
  Tensor tensor(DType dtype, const std::vector<int64_t>& dims) {
    if (dtype == DType::String) {  // empty, text, numbers, base64, bytes that are no UTF-8
      static const char* const kPool[] = {"", "a", " Ab c\t", "12", "-3.5e2", "nan", "YQ==", "a+b", "\xc3\xa9", "\xff"};
      auto* impl = kiln::detail::make_concrete(dtype, kiln::Dims(dims.begin(), dims.end()));
      Tensor t = kiln::detail::wrap(impl);
      for (int64_t i = 0; i < impl->num_elements; ++i)
        impl->as<kiln::detail::ObjectValue*>()[i] = kiln::detail::make_string(std::string_view(kPool[uniform(0, 9)]));
      return t;
    }
    if (!kiln::detail::has_values(dtype)) return kiln::detail::wrap(kiln::detail::make_concrete(dtype, kiln::Dims{}));
    auto* impl = kiln::detail::make_concrete(dtype, kiln::Dims(dims.begin(), dims.end()));
    Tensor t = kiln::detail::wrap(impl);
    kiln::detail::visit_any_dtype(dtype, [&](auto zero) {
      using T = decltype(zero);
      for (int64_t i = 0; i < impl->num_elements; ++i) {
        if constexpr (std::is_same_v<T, bool>)
          impl->as<bool>()[i] = chance(0.5);
        else if constexpr (std::is_floating_point_v<T> || kiln::is_reduced_float_v<T>)
          impl->as<T>()[i] = static_cast<T>(float_value());
        else
          impl->as<T>()[i] = int_value<T>();
      }
    });
    return t;
  }

  DType dtype() { return static_cast<DType>(uniform(0, kiln::kNumDTypes - 1)); }

  kiln::ops::AttrValue attr(const AttrSpec& s) {
    if (s.has_default() && chance(0.4)) return s.default_value;
    switch (s.kind) {
      case AttrKind::kInt:
        return chance(0.9) ? uniform(-2, 6) : (chance(0.5) ? int64_t{1} << 40 : std::numeric_limits<int64_t>::min());
      case AttrKind::kFloat:
        return float_value();
      case AttrKind::kBool:
        return chance(0.5);
      case AttrKind::kType:
        return dtype();
      case AttrKind::kIntList: {
        // Often a valid NHWC or NDHWC window (strides, ksize, dilations), so the image and
        // volume ops' kernels run.
        if (chance(0.3)) {
          if (chance(0.5)) return std::vector<int64_t>{1, uniform(1, 3), uniform(1, 3), 1};
          return std::vector<int64_t>{1, uniform(1, 3), uniform(1, 3), uniform(1, 3), 1};
        }
        std::vector<int64_t> v(static_cast<size_t>(uniform(0, 5)));
        for (auto& x : v) x = chance(0.95) ? uniform(-2, 4) : int64_t{1} << 40;
        return v;
      }
      case AttrKind::kString: {
        // Layouts, paddings, text encodings and decode-error modes, and two invalid ones.
        static const char* const kStrings[] = {"SAME",   "VALID",     "EXPLICIT",  "NHWC",   "NCHW",
                                               "UTF-8",  "UTF-16-BE", "UTF-32-BE", "latin1", "strict",
                                               "ignore", "",          "bogus"};
        return std::string(kStrings[uniform(0, std::size(kStrings) - 1)]);
      }
      case AttrKind::kShape: {
        if (chance(0.2)) return kiln::ops::ShapeAttr(kiln::TensorShape::unknown());
        auto d = shape();
        return kiln::ops::ShapeAttr(kiln::TensorShape(d));
      }
      case AttrKind::kTensor:
        return tensor(dtype(), shape());
      default:
        return std::monostate{};
    }
  }

  // Inputs: mostly of the case's dtype over one base shape and its broadcasts; sometimes an
  // int32/int64 tensor (axes, shapes, indices) or a random dtype, so dtype checks run too.
  std::vector<Tensor> inputs(const OpDef& op, DType dtype) {
    const int n = op.num_inputs >= 0 ? op.num_inputs : static_cast<int>(uniform(1, 4));
    const auto base = shape();
    std::vector<Tensor> v;
    for (int i = 0; i < n; ++i) {
      DType d = dtype;
      const int64_t r = uniform(0, 9);
      if (i > 0 && r == 0) d = this->dtype();
      if (i > 0 && (r == 1 || r == 2)) d = r == 1 ? DType::Int32 : DType::Int64;
      std::vector<int64_t> dims = base;
      const int64_t s = uniform(0, 9);
      if (s <= 2)
        dims = broadcast_of(base);
      else if (s <= 4 || d != dtype)  // a vector as long as the base's rank reaches index inputs' valid cases
        dims = chance(0.4)   ? std::vector<int64_t>{static_cast<int64_t>(base.size())}
               : chance(0.5) ? std::vector<int64_t>{uniform(0, 4)}
               : chance(0.5) ? std::vector<int64_t>{}
                             : shape();
      v.push_back(tensor(d, dims));
    }
    return v;
  }

 private:
  std::mt19937_64 rng_;
};

// What running a case gave: outputs, or an error (its class, by ErrorCode).
struct Outcome {
  bool ok = false;
  bool untyped = false;  // an exception that is not a kiln::Error
  std::string error;
  int code = -1;
  std::vector<Tensor> outputs;
};

template <class F>
Outcome run(F&& f) {
  Outcome o;
  try {
    o.outputs = f();
    o.ok = true;
  } catch (const kiln::Error& e) {
    o.error = e.what();
    o.code = static_cast<int>(e.code());
  } catch (const std::exception& e) {
    o.untyped = true;
    o.error = std::string("untyped exception: ") + e.what();
  }
  return o;
}

bool same_values(const Tensor& a, const Tensor& b) {
  // Variants are objects made anew by each run (a TensorList): their dtype and shape were
  // compared, and their contents are read back by the ops that take them.
  if (a.dtype() == DType::String) return a.to_vector<std::string>() == b.to_vector<std::string>();
  if (!kiln::detail::has_values(a.dtype())) return true;
  const size_t n = static_cast<size_t>(a.num_elements());
  const size_t size = kiln::dtype_size(a.dtype());
  if (n == 0 || std::memcmp(a.data(), b.data(), n * size) == 0) return true;
  // NaNs of different payloads are the same value.
  for (size_t i = 0; i < n; ++i) {
    const char* x = static_cast<const char*>(a.data()) + i * size;
    const char* y = static_cast<const char*>(b.data()) + i * size;
    if (std::memcmp(x, y, size) == 0) continue;
    if (a.dtype() == DType::Float32) {
      float u, v;
      std::memcpy(&u, x, 4);
      std::memcpy(&v, y, 4);
      if (std::isnan(u) && std::isnan(v)) continue;
    } else if (a.dtype() == DType::Float64) {
      double u, v;
      std::memcpy(&u, x, 8);
      std::memcpy(&v, y, 8);
      if (std::isnan(u) && std::isnan(v)) continue;
    }
    return false;
  }
  return true;
}

// Eager and traced agree, or a description of how they differ.
std::string compare(const OpDef& op, const Outcome& eager, const Outcome& traced) {
  if (eager.untyped) return "eager: " + eager.error;
  if (traced.untyped) return "traced: " + traced.error;
  if (eager.ok != traced.ok)
    return eager.ok ? "eager succeeds, traced fails: " + traced.error : "eager fails, traced succeeds: " + eager.error;
  if (!eager.ok) {
    if (eager.code != traced.code)
      return "error classes differ: eager '" + eager.error + "', traced '" + traced.error + "'";
    return "";
  }
  if (eager.outputs.size() != traced.outputs.size()) return "output counts differ";
  for (size_t i = 0; i < eager.outputs.size(); ++i) {
    const Tensor& a = eager.outputs[i];
    const Tensor& b = traced.outputs[i];
    if (a.dtype() != b.dtype()) return "output " + std::to_string(i) + ": dtypes differ";
    if (a.shape() != b.shape())
      return "output " + std::to_string(i) + ": shapes differ, " + a.shape().str() + " vs " + b.shape().str();
    if (!op.is_stateful() && !same_values(a, b)) return "output " + std::to_string(i) + ": values differ";
  }
  return "";
}

std::string describe(const std::vector<Tensor>& inputs) {
  std::string s;
  for (const Tensor& t : inputs) {
    if (!s.empty()) s += ", ";
    s += std::string(kiln::dtype_name(t.dtype())) + t.shape().str();
  }
  return s;
}

struct Stats {
  int64_t cases = 0, ran = 0, rejected = 0;
};

struct Options {
  double seconds = 10;
  uint64_t seed = 1;
  std::string only_op, only_dtype;
  std::vector<std::string> skip_ops;
  int64_t only_round = -1;
  bool verbose = false;
};

uint64_t case_seed(uint64_t seed, const OpDef& op, DType d, int64_t round) {
  uint64_t h = seed * 0x9E3779B97F4A7C15ull;
  for (const char* p = op.name; *p; ++p) h = (h ^ static_cast<unsigned char>(*p)) * 0x100000001B3ull;
  return h ^ (static_cast<uint64_t>(d) << 56) ^ static_cast<uint64_t>(round) * 0xD6E8FEB86659FD93ull;
}

// One case; returns the finding, or "".
std::string run_case(const OpDef& op, DType dtype, uint64_t seed, Stats& stats) {
  CaseMaker make(seed);
  std::vector<Tensor> inputs = make.inputs(op, dtype);
  Attrs attrs;
  for (const AttrSpec& s : op.attr_specs) attrs.push(make.attr(s));
  std::vector<const kiln::detail::TensorImpl*> impls;
  for (const Tensor& t : inputs) impls.push_back(kiln::detail::impl_of(t));

  // Random sizes can ask for gigabytes: each case runs under a memory budget and a deadline,
  // so such a case is a typed refusal (ResourceExhaustedError), not a stall.
  kiln::RunLimitsScope limits({.timeout = std::chrono::seconds(5), .memory_limit_bytes = 256 << 20});
  Outcome eager = run([&] { return kiln::eager::execute(op, impls.data(), static_cast<int>(impls.size()), attrs); });
  Outcome traced = run([&] {
    auto f = kiln::function([&](std::vector<Tensor> xs) {
      std::vector<const Tensor*> p;
      for (const Tensor& x : xs) p.push_back(&x);
      return kiln::trace::dispatch(op, p.data(), static_cast<int>(p.size()), attrs);
    });
    return f(inputs);
  });
  ++stats.cases;
  if (eager.ok) ++stats.ran;
  if (!eager.ok && !eager.untyped) ++stats.rejected;
  std::string finding = compare(op, eager, traced);
  if (!finding.empty()) finding += " (inputs: " + describe(inputs) + ")";
  return finding;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kernel_fuzz: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seconds")
      o.seconds = std::stod(next());
    else if (a == "--seed")
      o.seed = std::stoull(next());
    else if (a == "--op")
      o.only_op = next();
    else if (a == "--dtype")
      o.only_dtype = next();
    else if (a == "--round")
      o.only_round = std::stoll(next());
    else if (a == "--verbose")
      o.verbose = true;
    else if (a == "--skip") {
      const std::string list = next();
      for (size_t start = 0; start <= list.size();) {
        const size_t comma = std::min(list.find(',', start), list.size());
        if (comma > start) o.skip_ops.push_back(list.substr(start, comma - start));
        start = comma + 1;
      }
    } else {
      std::fprintf(stderr,
                   "usage: kernel_fuzz [--seconds S] [--seed N] [--op NAME] [--dtype NAME] [--round R] [--skip A,B] "
                   "[--verbose]\n");
      std::exit(2);
    }
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) signal(sig, on_fatal_signal);
#ifdef KILN_FUZZ_SANITIZER_CALLBACK
  __sanitizer_set_death_callback(print_current);
#endif

  struct Target {
    const OpDef* op;
    DType dtype;
  };
  std::vector<Target> targets;
  int skipped = 0;
  for (const OpDef* op : kiln::ops::all_ops()) {
    if (!opt.only_op.empty() && opt.only_op != op->name) continue;
    if (std::find(opt.skip_ops.begin(), opt.skip_ops.end(), op->name) != opt.skip_ops.end()) {
      ++skipped;
      if (opt.verbose) std::printf("skip %s: --skip (an open finding)\n", op->name);
      continue;
    }
    if (const char* why = skip_reason(*op)) {
      ++skipped;
      if (opt.verbose) std::printf("skip %s: %s\n", op->name, why);
      continue;
    }
    for (DType d : kernel_dtypes(*op))
      if (opt.only_dtype.empty() || opt.only_dtype == kiln::dtype_name(d)) targets.push_back({op, d});
  }
  if (targets.empty()) {
    std::fprintf(stderr, "kernel_fuzz: nothing to fuzz\n");
    return 2;
  }

  std::map<std::string, Stats> per_op;
  int64_t findings = 0;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int64_t round = opt.only_round >= 0 ? opt.only_round : 0;
  for (;; ++round) {
    for (const Target& t : targets) {
      const uint64_t seed = case_seed(opt.seed, *t.op, t.dtype, round);
      std::snprintf(g_current, sizeof(g_current), "kernel_fuzz --seed %llu --op %s --dtype %s --round %lld",
                    static_cast<unsigned long long>(opt.seed), t.op->name,
                    std::string(kiln::dtype_name(t.dtype)).c_str(), static_cast<long long>(round));
      if (opt.verbose) std::printf("%s\n", g_current);
      const std::string finding = run_case(*t.op, t.dtype, seed, per_op[t.op->name]);
      if (!finding.empty()) {
        ++findings;
        std::printf("FINDING %s: %s\n  replay: %s\n", t.op->name, finding.c_str(), g_current);
      }
    }
    if (opt.only_round >= 0 || elapsed() >= opt.seconds) break;
  }
  std::snprintf(g_current, sizeof(g_current), "(no case running)");

  int64_t cases = 0, ran = 0, rejected = 0;
  for (const auto& [name, s] : per_op) {
    cases += s.cases;
    ran += s.ran;
    rejected += s.rejected;
  }
  std::printf(
      "kernel_fuzz: %zu ops x dtypes (%d rows skipped), %lld rounds, %lld cases in %.1f s: %lld ran, %lld "
      "rejected with a typed error, %lld findings\n",
      targets.size(), skipped, static_cast<long long>(round + 1), static_cast<long long>(cases), elapsed(),
      static_cast<long long>(ran), static_cast<long long>(rejected), static_cast<long long>(findings));
  return findings == 0 ? 0 : 1;
}
