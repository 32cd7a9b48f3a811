// oneDNN convolutions through its C API, loaded with dlopen (onednn.h). Compiled in where the
// oneDNN 2.x headers were found at build time; the library itself is looked up at run time.
#include "kernels/onednn.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/cpu_isa.h"
#include "core/parallel.h"
#include "core/sanitizers.h"
#include "core/tensor_impl.h"
#include "kiln/tensor.h"

#if defined(__has_include)
#if __has_include(<oneapi/dnnl/dnnl.h>)
#include <oneapi/dnnl/dnnl.h>
#if DNNL_VERSION_MAJOR == 2
#define KILN_ONEDNN_HEADERS 1
#endif
#endif
#endif

#if KILN_ONEDNN_HEADERS
#include <dlfcn.h>
#include <pthread.h>

#include "core/scratch.h"
#endif

namespace kiln::kernels::onednn {

namespace {
std::atomic<bool> g_enabled{true};
}  // namespace

void enable(bool on) { g_enabled.store(on, std::memory_order_relaxed); }

namespace {
// -1: not yet read from KILN_FOLD_BATCH_NORM; 0, 1: off, on.
std::atomic<int> g_fold{-1};
}  // namespace
bool fold_batch_norm_requested() {
  int v = g_fold.load(std::memory_order_relaxed);
  if (v < 0) {
    const char* e = std::getenv("KILN_FOLD_BATCH_NORM");
    v = e && std::strcmp(e, "1") == 0 ? 1 : 0;
    g_fold.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}
void set_fold_batch_norm(bool on) { g_fold.store(on ? 1 : 0, std::memory_order_relaxed); }

#if !KILN_ONEDNN_HEADERS

bool usable() { return false; }
const char* description() { return "kiln (built without the oneDNN 2.x headers)"; }
bool conv2d(const Conv2D&, const float*, const detail::TensorImpl&, float*, int, const Folded&) { return false; }
bool sgemm(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*, int64_t) {
  return false;
}
int64_t cached_filters() { return 0; }
int64_t cached_filter_bytes() { return 0; }
bool holds_filter(const void*) { return false; }
int64_t winograd_runs() { return 0; }
bool winograd_requested() { return false; }

#else

namespace {

// The C API functions kiln calls, from the dlopened library.
struct Api {
#define KILN_DNNL_FN(name) decltype(&::name) name = nullptr;
  KILN_DNNL_FN(dnnl_engine_create)
  KILN_DNNL_FN(dnnl_stream_create)
  KILN_DNNL_FN(dnnl_stream_destroy)
  KILN_DNNL_FN(dnnl_memory_desc_init_by_tag)
  KILN_DNNL_FN(dnnl_memory_desc_equal)
  KILN_DNNL_FN(dnnl_memory_desc_get_size)
  KILN_DNNL_FN(dnnl_dilated_convolution_forward_desc_init)
  KILN_DNNL_FN(dnnl_primitive_attr_create)
  KILN_DNNL_FN(dnnl_primitive_attr_destroy)
  KILN_DNNL_FN(dnnl_primitive_attr_set_scratchpad_mode)
  KILN_DNNL_FN(dnnl_primitive_desc_create)
  KILN_DNNL_FN(dnnl_primitive_desc_destroy)
  KILN_DNNL_FN(dnnl_primitive_desc_query)
  KILN_DNNL_FN(dnnl_primitive_desc_query_md)
  KILN_DNNL_FN(dnnl_reorder_primitive_desc_create)
  KILN_DNNL_FN(dnnl_primitive_create)
  KILN_DNNL_FN(dnnl_primitive_destroy)
  KILN_DNNL_FN(dnnl_primitive_execute)
  KILN_DNNL_FN(dnnl_memory_create)
  KILN_DNNL_FN(dnnl_memory_destroy)
  KILN_DNNL_FN(dnnl_stream_wait)
  KILN_DNNL_FN(dnnl_version)
  KILN_DNNL_FN(dnnl_set_max_cpu_isa)
  KILN_DNNL_FN(dnnl_get_effective_cpu_isa)
  KILN_DNNL_FN(dnnl_sgemm)
  KILN_DNNL_FN(dnnl_post_ops_create)
  KILN_DNNL_FN(dnnl_post_ops_destroy)
  KILN_DNNL_FN(dnnl_post_ops_append_eltwise)
  KILN_DNNL_FN(dnnl_primitive_attr_set_post_ops)
#undef KILN_DNNL_FN
  void (*omp_set_num_threads)(int) = nullptr;  // libgomp's, when oneDNN runs on OpenMP
  // `#pragma omp parallel`'s entry point in libgomp's ABI (LLVM's libomp has it too).
  void (*gomp_parallel)(void (*)(void*), void*, unsigned, unsigned) = nullptr;
  dnnl_engine_t engine = nullptr;
  std::string description = "kiln (libdnnl.so.2 not found)";
};

const char* isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_avx2:
      return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
      return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core:
      return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "other";
  }
}

// ThreadSanitizer cannot see libgomp's barriers (it is not built with TSan): it would report
// the team's chunks as races. Such builds use kiln's pool.
#if KILN_TSAN
constexpr bool kUnderTsan = true;
#else
constexpr bool kUnderTsan = false;
#endif

// libgomp's GOMP_parallel, once api() found it: kiln's parallel_for runs on oneDNN's team.
void (*g_gomp_parallel)(void (*)(void*), void*, unsigned, unsigned) = nullptr;
void run_on_team(void (*fn)(void*), void* arg, int threads) {
  g_gomp_parallel(fn, arg, static_cast<unsigned>(threads), 0);
}

const Api& api() {
  static const Api a = [] {
    Api r;
    const char* off = std::getenv("KILN_ONEDNN");
    if (off && std::strcmp(off, "0") == 0) {
      r.description = "kiln (KILN_ONEDNN=0)";
      return r;
    }
    void* h = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) return r;
    bool all = true;
#define KILN_DNNL_LOAD(name)                                     \
  r.name = reinterpret_cast<decltype(&::name)>(dlsym(h, #name)); \
  all = all && r.name;
    KILN_DNNL_LOAD(dnnl_engine_create)
    KILN_DNNL_LOAD(dnnl_stream_create)
    KILN_DNNL_LOAD(dnnl_stream_destroy)
    KILN_DNNL_LOAD(dnnl_memory_desc_init_by_tag)
    KILN_DNNL_LOAD(dnnl_memory_desc_equal)
    KILN_DNNL_LOAD(dnnl_memory_desc_get_size)
    KILN_DNNL_LOAD(dnnl_dilated_convolution_forward_desc_init)
    KILN_DNNL_LOAD(dnnl_primitive_attr_create)
    KILN_DNNL_LOAD(dnnl_primitive_attr_destroy)
    KILN_DNNL_LOAD(dnnl_primitive_attr_set_scratchpad_mode)
    KILN_DNNL_LOAD(dnnl_primitive_desc_create)
    KILN_DNNL_LOAD(dnnl_primitive_desc_destroy)
    KILN_DNNL_LOAD(dnnl_primitive_desc_query)
    KILN_DNNL_LOAD(dnnl_primitive_desc_query_md)
    KILN_DNNL_LOAD(dnnl_reorder_primitive_desc_create)
    KILN_DNNL_LOAD(dnnl_primitive_create)
    KILN_DNNL_LOAD(dnnl_primitive_destroy)
    KILN_DNNL_LOAD(dnnl_primitive_execute)
    KILN_DNNL_LOAD(dnnl_memory_create)
    KILN_DNNL_LOAD(dnnl_memory_destroy)
    KILN_DNNL_LOAD(dnnl_stream_wait)
    KILN_DNNL_LOAD(dnnl_version)
    KILN_DNNL_LOAD(dnnl_set_max_cpu_isa)
    KILN_DNNL_LOAD(dnnl_get_effective_cpu_isa)
    KILN_DNNL_LOAD(dnnl_sgemm)
    KILN_DNNL_LOAD(dnnl_post_ops_create)
    KILN_DNNL_LOAD(dnnl_post_ops_destroy)
    KILN_DNNL_LOAD(dnnl_post_ops_append_eltwise)
    KILN_DNNL_LOAD(dnnl_primitive_attr_set_post_ops)
#undef KILN_DNNL_LOAD
    const dnnl_version_t* v = all ? r.dnnl_version() : nullptr;
    // oneDNN's JIT runs no higher than kiln's own kernels (KILN_CPU_ISA lowers both), and
    // below SSE4.1 (its floor) not at all.
    const CpuIsa level = cpu_isa();
    if (v && v->major == 2 && level != CpuIsa::kBaseline)
      r.dnnl_set_max_cpu_isa(level == CpuIsa::kAvx2 ? dnnl_cpu_isa_avx2 : dnnl_cpu_isa_all);
    if (!v || v->major != 2 || level == CpuIsa::kBaseline ||
        r.dnnl_engine_create(&r.engine, dnnl_cpu, 0) != dnnl_success) {
      const std::string why =
          level == CpuIsa::kBaseline && v ? "runs at the x86-64 baseline" : "libdnnl.so.2 is not a usable oneDNN 2.x";
      r = Api{};
      r.description = "kiln (" + why + ")";
      return r;
    }
    r.omp_set_num_threads = reinterpret_cast<void (*)(int)>(dlsym(h, "omp_set_num_threads"));
    r.gomp_parallel = reinterpret_cast<void (*)(void (*)(void*), void*, unsigned, unsigned)>(dlsym(h, "GOMP_parallel"));
    // libgomp cannot start a team in a forked child (it waits for threads the child does not
    // have): a child of a process that loaded oneDNN on OpenMP runs kiln's own kernels.
    if (r.omp_set_num_threads)
      pthread_atfork(nullptr, nullptr, [] { g_enabled.store(false, std::memory_order_relaxed); });
    if (r.gomp_parallel && r.omp_set_num_threads && !kUnderTsan) {
      g_gomp_parallel = r.gomp_parallel;
      set_team_runner(&run_on_team);
    }
    r.description = "onednn " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                    std::to_string(v->patch) + " (" + isa_name(r.dnnl_get_effective_cpu_isa()) + ")";
    return r;
  }();
  return a;
}

dnnl_memory_desc_t md(std::initializer_list<int64_t> dims, dnnl_format_tag_t tag) {
  dnnl_memory_desc_t d;
  dnnl_dims_t v;
  int k = 0;
  for (int64_t x : dims) v[k++] = x;
  api().dnnl_memory_desc_init_by_tag(&d, k, v, dnnl_f32, tag);
  return d;
}

// A compiled convolution for one geometry.
struct Primitive {
  dnnl_primitive_desc_t pd = nullptr;
  dnnl_primitive_t prim = nullptr;
  dnnl_memory_desc_t src, weights, user_weights, dst, scratch, bias;
  size_t scratch_bytes = 0;
  // A Winograd convolution runs on blocked layouts: the input is reordered into `inner_src`
  // and the output out of `inner_dst` around it (null reorders: the layouts are kiln's).
  dnnl_memory_desc_t inner_src, inner_dst;
  dnnl_primitive_t to_inner = nullptr, from_inner = nullptr;
  bool winograd = false;
  size_t inner_src_bytes = 0, inner_dst_bytes = 0;
  Primitive() = default;
  Primitive(const Primitive&) = delete;
  Primitive& operator=(const Primitive&) = delete;
  ~Primitive() {
    if (prim) api().dnnl_primitive_destroy(prim);
    if (pd) api().dnnl_primitive_desc_destroy(pd);
    if (to_inner) api().dnnl_primitive_destroy(to_inner);
    if (from_inner) api().dnnl_primitive_destroy(from_inner);
  }
};

// A filter reordered into a primitive's weights layout; `filter` holds the tensor it came from.
struct Filter {
  Tensor filter;
  const void* data = nullptr;
  // The scale folded into it (Folded), else empty. Its values, not its tensor, identify it: a
  // loaded model computes BatchNormalization's scale from its variables on every call, a new
  // tensor of the same values each time.
  std::vector<float> scale;
  dnnl_memory_desc_t layout;
  std::unique_ptr<unsigned char[], void (*)(void*)> bytes{nullptr, std::free};
  size_t size = 0;
};

// What a primitive computes after the sums: nothing, or a bias and an activation (Folded).
struct After {
  bool bias = false;
  Activation activation = Activation::kNone;
};
After after_of(const Folded& f) { return {.bias = f.bias != nullptr, .activation = f.activation}; }

using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
Key key_of(const Conv2D& g, const After& after) {
  return {g.n,
          g.h,
          g.w,
          g.c,
          g.oh,
          g.ow,
          g.oc,
          g.kh,
          g.kw,
          g.sh,
          g.sw,
          g.dh,
          g.dw,
          g.pad_top,
          g.pad_left,
          g.groups,
          int64_t{after.bias} * 4 + static_cast<int64_t>(after.activation)};
}

// Bounds: the compiled primitives and the reordered filters kept (oldest dropped first).
constexpr size_t kMaxPrimitives = 512;
constexpr size_t kMaxFilterBytes = size_t{1} << 30;

struct Caches {
  std::mutex mu;
  std::map<Key, std::shared_ptr<Primitive> > primitives;
  std::list<std::shared_ptr<Filter> > filters;  // newest first
  size_t filter_bytes = 0;
};
Caches& caches() {
  static Caches* c = new Caches;  // never destroyed: kernels may run during exit
  return *c;
}

std::atomic<int64_t> g_winograd_runs{0};  // winograd_runs()

// A reorder between two layouts of one tensor; null where they are the same (nothing to do)
// or oneDNN cannot make one (`ok` false).
dnnl_primitive_t make_reorder(const dnnl_memory_desc_t& from, const dnnl_memory_desc_t& to, bool& ok) {
  const Api& a = api();
  if (a.dnnl_memory_desc_equal(&from, &to)) return nullptr;
  dnnl_primitive_desc_t rpd = nullptr;
  dnnl_primitive_t r = nullptr;
  ok = ok && a.dnnl_reorder_primitive_desc_create(&rpd, &from, a.engine, &to, a.engine, nullptr) == dnnl_success &&
       a.dnnl_primitive_create(&r, rpd) == dnnl_success;
  if (rpd) a.dnnl_primitive_desc_destroy(rpd);
  return r;
}

// The primitive descriptor of a convolution, kiln giving each call its scratchpad (so that
// concurrent calls of one primitive never share one); its implementation's name, null where
// oneDNN has none.
const char* describe(const dnnl_convolution_desc_t& desc, dnnl_primitive_desc_t* pd,
                     Activation activation = Activation::kNone) {
  const Api& a = api();
  dnnl_primitive_attr_t attr = nullptr;
  if (a.dnnl_primitive_attr_create(&attr) != dnnl_success) return nullptr;
  a.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  bool ok = true;
  if (activation != Activation::kNone) {
    dnnl_post_ops_t po = nullptr;
    ok = a.dnnl_post_ops_create(&po) == dnnl_success;
    // Relu is oneDNN's relu with slope 0; Relu6 its clip to [0, 6].
    ok = ok && (activation == Activation::kRelu
                    ? a.dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_relu, 0.f, 0.f)
                    : a.dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_clip, 0.f, 6.f)) == dnnl_success;
    ok = ok && a.dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
    if (po) a.dnnl_post_ops_destroy(po);
  }
  const dnnl_status_t st = ok ? a.dnnl_primitive_desc_create(pd, &desc, attr, a.engine, nullptr) : dnnl_runtime_error;
  a.dnnl_primitive_attr_destroy(attr);
  const char* impl = nullptr;
  if (st != dnnl_success || a.dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success)
    return nullptr;
  return impl;
}

// Winograd's F(2x2, 3x3) and F(4x4, 3x3) for a 3x3, stride-1, undilated, ungrouped
// convolution where oneDNN has a JIT kernel for it (AVX-512): it computes the same sums with
// about half the multiplications — ResNet50's 3x3 layers took 0.5-0.9x the direct kernel's
// time here (docs/perf/dispatch.md) — and rounds differently (its transforms add and scale
// the inputs, outputs and filter: errors up to twice the direct sum's, and no longer
// TensorFlow's bits, which the direct kernel gives). So it is asked for: KILN_ONEDNN_WINOGRAD=1.
// Null where it is not, or oneDNN has none.
std::shared_ptr<Primitive> compile_winograd(const Conv2D& g, const dnnl_convolution_desc_t& direct) {
  if (!winograd_requested() || g.kh != 3 || g.kw != 3 || g.sh != 1 || g.sw != 1 || g.dh != 1 || g.dw != 1 ||
      g.groups != 1)
    return nullptr;
  const Api& a = api();
  auto p = std::make_shared<Primitive>();
  p->src = direct.src_desc;
  p->dst = direct.dst_desc;
  const dnnl_memory_desc_t any_src = md({g.n, g.c, g.h, g.w}, dnnl_format_tag_any),
                           any_dst = md({g.n, g.oc, g.oh, g.ow}, dnnl_format_tag_any);
  dnnl_convolution_desc_t desc = direct;
  desc.alg_kind = dnnl_convolution_winograd;
  desc.src_desc = any_src;
  desc.dst_desc = any_dst;
  const char* impl = describe(desc, &p->pd);
  if (!impl || std::strstr(impl, "wino") == nullptr) return nullptr;
  p->winograd = true;
  p->inner_src = *a.dnnl_primitive_desc_query_md(p->pd, dnnl_query_src_md, 0);
  p->inner_dst = *a.dnnl_primitive_desc_query_md(p->pd, dnnl_query_dst_md, 0);
  p->inner_src_bytes = a.dnnl_memory_desc_get_size(&p->inner_src);
  p->inner_dst_bytes = a.dnnl_memory_desc_get_size(&p->inner_dst);
  bool ok = true;
  p->to_inner = make_reorder(p->src, p->inner_src, ok);
  p->from_inner = make_reorder(p->inner_dst, p->dst, ok);
  if (!ok) return nullptr;
  p->weights = *a.dnnl_primitive_desc_query_md(p->pd, dnnl_query_weights_md, 0);
  p->scratch = *a.dnnl_primitive_desc_query_md(p->pd, dnnl_query_scratchpad_md, 0);
  p->scratch_bytes = a.dnnl_memory_desc_get_size(&p->scratch);
  if (a.dnnl_primitive_create(&p->prim, p->pd) != dnnl_success) return nullptr;
  return p;
}

std::shared_ptr<Primitive> compile(const Conv2D& g, const After& after) {
  const Api& a = api();
  auto p = std::make_shared<Primitive>();
  p->src = md({g.n, g.c, g.h, g.w}, dnnl_nhwc);
  p->dst = md({g.n, g.oc, g.oh, g.ow}, dnnl_nhwc);
  p->bias = md({g.oc}, dnnl_x);
  // kiln's [KH, KW, C / G, OC] filter is oneDNN's [G, OC / G, C / G, KH, KW] in "hwigo" order.
  const int64_t gr = g.groups;
  p->user_weights =
      gr == 1 ? md({g.oc, g.c, g.kh, g.kw}, dnnl_hwio) : md({gr, g.oc / gr, g.c / gr, g.kh, g.kw}, dnnl_hwigo);
  const dnnl_memory_desc_t any_weights = gr == 1 ? md({g.oc, g.c, g.kh, g.kw}, dnnl_format_tag_any)
                                                 : md({gr, g.oc / gr, g.c / gr, g.kh, g.kw}, dnnl_format_tag_any);
  // oneDNN's padding after is whatever the output size leaves; never negative.
  const int64_t pad_bottom = std::max<int64_t>(0, (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.h - g.pad_top);
  const int64_t pad_right = std::max<int64_t>(0, (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.w - g.pad_left);
  dnnl_dims_t strides = {g.sh, g.sw}, dilates = {g.dh - 1, g.dw - 1}, pad_l = {g.pad_top, g.pad_left},
              pad_r = {pad_bottom, pad_right};
  dnnl_convolution_desc_t desc;
  if (a.dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &p->src,
                                                   &any_weights, after.bias ? &p->bias : nullptr, &p->dst, strides,
                                                   dilates, pad_l, pad_r) != dnnl_success)
    return nullptr;
  const bool plain = !after.bias && after.activation == Activation::kNone;
  if (auto w = plain ? compile_winograd(g, desc) : nullptr) {
    w->user_weights = p->user_weights;
    return w;
  }
  // Where oneDNN has no direct JIT kernel for the shape it picks a reference loop ("ref:any"),
  // much slower than kiln's own kernels, or im2col + GEMM ("gemm:jit"), what kiln's own
  // kernels do (and which gave wrong depthwise results with a multiplier at the AVX2 level on
  // one thread): those stay kiln's.
  const char* impl = describe(desc, &p->pd, after.activation);
  if (!impl || std::strncmp(impl, "ref", 3) == 0 || std::strstr(impl, "gemm") != nullptr) return nullptr;
  p->weights = *a.dnnl_primitive_desc_query_md(p->pd, dnnl_query_weights_md, 0);
  p->scratch = *a.dnnl_primitive_desc_query_md(p->pd, dnnl_query_scratchpad_md, 0);
  p->scratch_bytes = a.dnnl_memory_desc_get_size(&p->scratch);
  if (a.dnnl_primitive_create(&p->prim, p->pd) != dnnl_success) return nullptr;
  return p;
}

// Runs a primitive with memory objects over the given pointers (each call makes its own:
// they are small, and nothing is shared between concurrent calls).
bool execute(dnnl_primitive_t prim,
             std::initializer_list<std::pair<int, std::pair<const dnnl_memory_desc_t*, void*> > > args) {
  const Api& a = api();
  dnnl_exec_arg_t exec[5];  // source, weights, bias, destination, scratchpad
  if (args.size() > 5) return false;
  int n = 0;
  bool ok = true;
  for (const auto& [arg, m] : args) {
    exec[n].arg = arg;
    if (a.dnnl_memory_create(&exec[n].memory, m.first, a.engine, m.second) != dnnl_success) {
      ok = false;
      break;
    }
    ++n;
  }
  dnnl_stream_t stream = nullptr;
  ok = ok && a.dnnl_stream_create(&stream, a.engine, dnnl_stream_default_flags) == dnnl_success;
  ok = ok && a.dnnl_primitive_execute(prim, stream, n, exec) == dnnl_success;
  ok = ok && a.dnnl_stream_wait(stream) == dnnl_success;
  if (stream) a.dnnl_stream_destroy(stream);
  for (int i = 0; i < n; ++i) a.dnnl_memory_destroy(exec[i].memory);
  return ok;
}

// Whether `t`'s memory can change under a cached copy: memory kiln does not own (a numpy
// array's) may be written by its owner.
bool foreign(const detail::TensorImpl& t) { return t.buffer && t.buffer->external_release; }

// The filter reordered into the primitive's layout, times the per-output-channel `scale`
// where one is given (Folded: kiln's filter layout ends in the output channel, so element i
// is multiplied by scale[i % OC]).
std::shared_ptr<Filter> reordered(const Primitive& p, const detail::TensorImpl& filter,
                                  const detail::TensorImpl* scale) {
  const Api& a = api();
  Caches& c = caches();
  const float* s = scale ? static_cast<const float*>(scale->data) : nullptr;
  const size_t oc = scale ? static_cast<size_t>(scale->num_elements) : 0;
  auto same_scale = [&](const Filter& f) {
    return f.scale.size() == oc && (oc == 0 || std::memcmp(f.scale.data(), s, oc * sizeof(float)) == 0);
  };
  {
    std::lock_guard<std::mutex> lock(c.mu);
    for (const auto& f : c.filters)
      if (f->data == filter.data && same_scale(*f) && a.dnnl_memory_desc_equal(&f->layout, &p.weights)) return f;
  }
  auto f = std::make_shared<Filter>();
  f->data = filter.data;
  f->scale.assign(s, s + oc);
  f->layout = p.weights;
  f->size = a.dnnl_memory_desc_get_size(&p.weights);
  f->bytes.reset(static_cast<unsigned char*>(std::aligned_alloc(64, (f->size + 63) / 64 * 64)));
  if (!f->bytes) return nullptr;
  std::vector<float> folded;
  const void* source = filter.data;
  if (scale) {
    const float* w = static_cast<const float*>(filter.data);
    folded.resize(static_cast<size_t>(filter.num_elements));
    for (int64_t i = 0; i < filter.num_elements; ++i) folded[i] = w[i] * s[i % static_cast<int64_t>(oc)];
    source = folded.data();
  }
  // The same layout needs no reorder: a copy keeps the cache's rule that it owns its bytes.
  bool ok = true;
  dnnl_primitive_t reorder = make_reorder(p.user_weights, p.weights, ok);
  if (ok && !reorder) std::memcpy(f->bytes.get(), source, f->size);
  ok = ok && (!reorder || execute(reorder, {{DNNL_ARG_FROM, {&p.user_weights, const_cast<void*>(source)}},
                                            {DNNL_ARG_TO, {&f->layout, f->bytes.get()}}}));
  if (reorder) a.dnnl_primitive_destroy(reorder);
  if (!ok) return nullptr;
  if (foreign(filter)) return f;  // used once, not cached
  // Holding the tensor keeps its memory alive and unchanged: a variable whose value is held
  // elsewhere is updated into a copy (ops/variable_state.h).
  const_cast<detail::TensorImpl&>(filter).refs.fetch_add(1, std::memory_order_relaxed);
  f->filter = Tensor(const_cast<detail::TensorImpl*>(&filter));
  std::lock_guard<std::mutex> lock(c.mu);
  // Filters whose memory only the cache still holds are gone for good (a step's old weights,
  // an eager call's filter): drop them, then the oldest while over the bound. (A variable's
  // reads are aliases of its buffer, new each call: the buffer says whether it lives.) One
  // filter may have several entries (its layouts; a folded scale's values, each its own), so
  // the references the cache holds are counted: an entry's tensor is dead when every
  // reference to it, and to its buffer, is an entry's.
  std::map<const detail::TensorImpl*, int64_t> held_tensors;
  std::map<const void*, std::set<const detail::TensorImpl*> > held_buffers;
  for (const auto& e : c.filters) {
    const detail::TensorImpl* t = e->filter.impl();
    ++held_tensors[t];
    if (t->buffer) held_buffers[t->buffer].insert(t);
  }
  auto dead = [&](const detail::TensorImpl* t) {
    if (t->refs.load(std::memory_order_acquire) != held_tensors[t]) return false;
    if (!t->buffer) return true;
    return !t->buffer->external_release &&
           t->buffer->refs.load(std::memory_order_acquire) == static_cast<int64_t>(held_buffers[t->buffer].size());
  };
  // A filter keeps one folded entry per layout, its newest scale's: where the scale changes on
  // every call (training with the fold on), old ones would fill the cache to its bound.
  auto replaced = [&](const Filter& e) {
    return !f->scale.empty() && e.data == f->data && !e.scale.empty() &&
           a.dnnl_memory_desc_equal(&e.layout, &f->layout);
  };
  c.filters.remove_if([&](const std::shared_ptr<Filter>& e) {
    const bool gone = dead(e->filter.impl()) || replaced(*e);
    if (gone) c.filter_bytes -= e->size;
    return gone;
  });
  c.filters.push_front(f);
  c.filter_bytes += f->size;
  while (c.filter_bytes > kMaxFilterBytes && c.filters.size() > 1) {
    c.filter_bytes -= c.filters.back()->size;
    c.filters.pop_back();
  }
  return f;
}

}  // namespace

bool usable() { return g_enabled.load(std::memory_order_relaxed) && api().engine; }

const char* description() { return api().description.c_str(); }

bool sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
           float* c, int64_t ldc) {
  if (!usable()) return false;
  // One thread: the caller splits. Inside a team member oneDNN sees the parallel region and
  // runs serially anyway; elsewhere this thread's team size would otherwise be the cores'.
  if (api().omp_set_num_threads) api().omp_set_num_threads(1);
  return api().dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc) == dnnl_success;
}

bool conv2d(const Conv2D& g, const float* x, const detail::TensorImpl& filter, float* y, int threads,
            const Folded& folded) {
  if (!usable()) return false;
  const After after = after_of(folded);
  // OpenMP's team size is per calling thread: set before compiling or reordering runs any.
  if (api().omp_set_num_threads) api().omp_set_num_threads(threads);
  std::shared_ptr<Primitive> p;
  Caches& c = caches();
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.primitives.find(key_of(g, after));
    if (it != c.primitives.end()) {
      known = true;
      p = it->second;
    }
  }
  if (!known) {
    p = compile(g, after);  // null: oneDNN has nothing better for it, remembered as such
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.primitives.size() >= kMaxPrimitives) c.primitives.clear();
    c.primitives.emplace(key_of(g, after), p);
  }
  if (!p) return false;
  std::shared_ptr<Filter> f = reordered(*p, filter, folded.scale);
  if (!f) return false;
  void* scratch = detail::scratch_bytes(detail::kConvScratch, std::max<size_t>(p->scratch_bytes, 64));
  // Winograd's blocked input and output live in the GEMM's scratch slots (unused while this
  // runs), kept by the thread as its other scratch is: at batch 32 ResNet50's largest pair
  // is about 50 MB.
  if (p->winograd) {
    g_winograd_runs.fetch_add(1, std::memory_order_relaxed);
    void* in = p->to_inner ? detail::scratch_bytes(detail::kGemmScratchA, p->inner_src_bytes) : const_cast<float*>(x);
    void* out = p->from_inner ? detail::scratch_bytes(detail::kGemmScratchB, p->inner_dst_bytes) : y;
    return (!p->to_inner || execute(p->to_inner, {{DNNL_ARG_FROM, {&p->src, const_cast<float*>(x)}},
                                                  {DNNL_ARG_TO, {&p->inner_src, in}}})) &&
           execute(p->prim, {{DNNL_ARG_SRC, {&p->inner_src, in}},
                             {DNNL_ARG_WEIGHTS, {&p->weights, f->bytes.get()}},
                             {DNNL_ARG_DST, {&p->inner_dst, out}},
                             {DNNL_ARG_SCRATCHPAD, {&p->scratch, scratch}}}) &&
           (!p->from_inner ||
            execute(p->from_inner, {{DNNL_ARG_FROM, {&p->inner_dst, out}}, {DNNL_ARG_TO, {&p->dst, y}}}));
  }
  if (folded.bias && p->scratch_bytes == 0)
    return execute(p->prim, {{DNNL_ARG_SRC, {&p->src, const_cast<float*>(x)}},
                             {DNNL_ARG_WEIGHTS, {&p->weights, f->bytes.get()}},
                             {DNNL_ARG_BIAS, {&p->bias, const_cast<float*>(folded.bias)}},
                             {DNNL_ARG_DST, {&p->dst, y}}});
  if (folded.bias)
    return execute(p->prim, {{DNNL_ARG_SRC, {&p->src, const_cast<float*>(x)}},
                             {DNNL_ARG_WEIGHTS, {&p->weights, f->bytes.get()}},
                             {DNNL_ARG_BIAS, {&p->bias, const_cast<float*>(folded.bias)}},
                             {DNNL_ARG_DST, {&p->dst, y}},
                             {DNNL_ARG_SCRATCHPAD, {&p->scratch, scratch}}});
  if (p->scratch_bytes == 0)
    return execute(p->prim, {{DNNL_ARG_SRC, {&p->src, const_cast<float*>(x)}},
                             {DNNL_ARG_WEIGHTS, {&p->weights, f->bytes.get()}},
                             {DNNL_ARG_DST, {&p->dst, y}}});
  return execute(p->prim, {{DNNL_ARG_SRC, {&p->src, const_cast<float*>(x)}},
                           {DNNL_ARG_WEIGHTS, {&p->weights, f->bytes.get()}},
                           {DNNL_ARG_DST, {&p->dst, y}},
                           {DNNL_ARG_SCRATCHPAD, {&p->scratch, scratch}}});
}

int64_t winograd_runs() { return g_winograd_runs.load(std::memory_order_relaxed); }
bool winograd_requested() {
  static const bool on = [] {
    const char* v = std::getenv("KILN_ONEDNN_WINOGRAD");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

int64_t cached_filters() {
  std::lock_guard<std::mutex> lock(caches().mu);
  return static_cast<int64_t>(caches().filters.size());
}
int64_t cached_filter_bytes() {
  std::lock_guard<std::mutex> lock(caches().mu);
  return static_cast<int64_t>(caches().filter_bytes);
}
bool holds_filter(const void* data) {
  std::lock_guard<std::mutex> lock(caches().mu);
  for (const auto& f : caches().filters)
    if (f->data == data) return true;
  return false;
}

#endif

}  // namespace kiln::kernels::onednn

namespace kiln::config {
const char* convolution_library() { return kernels::onednn::description(); }
}  // namespace kiln::config
