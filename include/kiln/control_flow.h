// Data-dependent control flow. C++ has no AutoGraph: a branch or loop that depends on a
// tensor's value is written with these. Eagerly they run the C++ branch or loop directly;
// inside a trace they become If/While/Case nodes whose branches are graph functions (the
// stateless variants when nothing inside is stateful), and only the taken branch runs.
#pragma once
#include <functional>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kiln/function.h"

namespace kiln {

struct WhileOptions {
  std::optional<int64_t> maximum_iterations = std::nullopt;
  // One per loop variable (flattened), or empty: a less specific shape lets a variable's
  // shape change across iterations (e.g. {-1} for a growing vector).
  std::vector<TensorShape> shape_invariants = {};
};

// A loop bound for fori_loop: a C++ integer or an int32/int64 scalar tensor.
struct LoopBound {
  LoopBound(int64_t v) : value(v) {}
  LoopBound(int v) : value(v) {}
  LoopBound(Tensor t) : tensor(std::move(t)) {}
  int64_t value = 0;
  Tensor tensor;
};

namespace detail {
using Branch = std::function<std::vector<Tensor>()>;
using LoopCond = std::function<Tensor(const std::vector<Tensor>&)>;
using LoopBody = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
std::vector<Tensor> build_cond(const Tensor& pred, const Branch& then_fn, const Branch& else_fn);
std::vector<Tensor> build_case(const Tensor& index, const std::vector<Branch>& branches);
std::vector<Tensor> build_while(const LoopCond& cond, const LoopBody& body, const std::vector<Tensor>& vars,
                                const WhileOptions& options);
Tensor loop_bound_tensor(const LoopBound& b);
int64_t loop_bound_value(const LoopBound& b);  // eager

template <class R>
std::vector<Tensor> flat_of(const R& r) {
  std::vector<Tensor> v;
  if constexpr (!std::is_void_v<R>) flatten_result(r, v);
  return v;
}
template <class F, class V>
decltype(auto) apply_vars(F& f, const V& v) {
  if constexpr (is_tuple_like<V>::value)
    return std::apply(f, v);
  else
    return f(v);
}
template <class F, class V>
decltype(auto) apply_vars_i(F& f, const Tensor& i, const V& v) {
  if constexpr (is_tuple_like<V>::value)
    return std::apply([&](const auto&... e) { return f(i, e...); }, v);
  else
    return f(i, v);
}
template <class V>
V rebuild(std::vector<Tensor> flat, size_t offset = 0) {
  size_t i = offset;
  return unflatten_result<V>(flat, i);
}
}  // namespace detail

template <class Then, class Else>
auto cond(const Tensor& pred, Then then_fn, Else else_fn) {
  using R = std::decay_t<decltype(then_fn())>;
  static_assert(std::is_same_v<R, std::decay_t<decltype(else_fn())>>,
                "both branches of kiln::cond must return the same C++ type");
  if (!detail::tracing_active()) return static_cast<bool>(pred) ? then_fn() : else_fn();
  auto out = detail::build_cond(
      pred,
      [&] {
        if constexpr (std::is_void_v<R>) {
          then_fn();
          return std::vector<Tensor>{};
        } else
          return detail::flat_of(then_fn());
      },
      [&] {
        if constexpr (std::is_void_v<R>) {
          else_fn();
          return std::vector<Tensor>{};
        } else
          return detail::flat_of(else_fn());
      });
  if constexpr (!std::is_void_v<R>) return detail::rebuild<R>(out);
}

template <class Cond, class Body, class Vars>
Vars while_loop(Cond cond_fn, Body body_fn, Vars vars, WhileOptions options = {}) {
  if (!detail::tracing_active()) {
    for (int64_t it = 0; !options.maximum_iterations || it < *options.maximum_iterations; ++it) {
      if (!static_cast<bool>(Tensor(detail::apply_vars(cond_fn, vars)))) break;
      vars = Vars(detail::apply_vars(body_fn, vars));
    }
    return vars;
  }
  auto out = detail::build_while(
      [&](const std::vector<Tensor>& v) { return Tensor(detail::apply_vars(cond_fn, detail::rebuild<Vars>(v))); },
      [&](const std::vector<Tensor>& v) {
        return detail::flat_of(Vars(detail::apply_vars(body_fn, detail::rebuild<Vars>(v))));
      },
      detail::flat_of(vars), options);
  return detail::rebuild<Vars>(out);
}

// for i in [lower, upper): vars = body_fn(i, vars...); i is an int32 scalar tensor.
template <class Body, class Vars>
Vars fori_loop(LoopBound lower, LoopBound upper, Body body_fn, Vars init) {
  if (!detail::tracing_active()) {
    const int64_t lo = detail::loop_bound_value(lower), hi = detail::loop_bound_value(upper);
    for (int64_t i = lo; i < hi; ++i)
      init = Vars(detail::apply_vars_i(body_fn, constant(static_cast<int32_t>(i)), init));
    return init;
  }
  std::vector<Tensor> flat = detail::flat_of(init);
  flat.insert(flat.begin(), detail::loop_bound_tensor(lower));
  const Tensor hi = detail::loop_bound_tensor(upper);
  auto out = detail::build_while([&](const std::vector<Tensor>& v) { return less(v[0], hi); },
                                 [&](const std::vector<Tensor>& v) {
                                   std::vector<Tensor> next = detail::flat_of(
                                       Vars(detail::apply_vars_i(body_fn, v[0], detail::rebuild<Vars>(v, 1))));
                                   next.insert(next.begin(), v[0] + 1);
                                   return next;
                                 },
                                 flat, {});
  return detail::rebuild<Vars>(out, 1);
}

// Runs branches[index]; an out-of-range index runs the last branch, as TensorFlow does.
Tensor switch_case(const Tensor& index, const std::vector<std::function<Tensor()>>& branches);

}  // namespace kiln
