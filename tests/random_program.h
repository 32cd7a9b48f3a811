// Random programs for differential tests: chains and DAGs of ops over random shapes and
// dtypes, with broadcasting, cond and while_loop. The same program runs eagerly, traced,
// saved and loaded, or exported to TensorFlow.js, and the results are compared.
#pragma once
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

#include "core/dtype_table.h"
#include "test_util.h"

namespace kiln::testing {

enum class Kind { Binary, Unary, Compare, Reduce, Transpose, Reshape, Concat, MatMul, Cast, Cond, While };

struct Instr {
  Kind kind;
  int op;     // which op within the kind
  int a, b;   // operand value indices
  int64_t p;  // parameter (axis)
};

struct Program {
  DType dtype;
  bool portable = false;  // only float32/int32 anywhere (TensorFlow.js has no 64-bit types)
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<Instr> code;
  std::vector<int> outputs;
};

// Broadcast shape, or false.
inline bool broadcast(const TensorShape& x, const TensorShape& y, std::vector<int64_t>* out) {
  const auto& a = x.dims();
  const auto& b = y.dims();
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = std::max(da, db);
  }
  return true;
}

// Runs the program on `inputs` with kiln ops: eagerly, or symbolically when traced.
inline std::vector<Tensor> run(const Program& p, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> v = inputs;
  for (const Instr& in : p.code) {
    const Tensor& a = v[in.a];
    const Tensor& b = v[in.b];
    Tensor r;
    switch (in.kind) {
      case Kind::Binary: {
        switch (in.op) {
          case 0:
            r = a + b;
            break;
          case 1:
            r = a - b;
            break;
          case 2:
            r = a * b;
            break;
          case 3:
            r = maximum(a, b);
            break;
          case 4:
            r = minimum(a, b);
            break;
          default:
            r = squared_difference(a, b);
            break;
        }
        break;
      }
      case Kind::Unary: {
        const bool fl = is_floating(a.dtype());
        switch (in.op) {
          case 0:
            r = -a;
            break;
          case 1:
            r = abs(a);
            break;
          case 2:
            r = relu(a);
            break;
          case 3:
            r = fl ? tanh(a) : square(a);
            break;
          case 4:
            r = fl ? sigmoid(a) : a * 3;
            break;
          case 5:  // a constant divisor that is not a power of two (no exact reciprocal)
            r = fl ? a / 0.001 : floordiv(a, 3);
            break;
          default:
            r = fl ? exp(minimum(a, 3)) : sign(a);
            break;
        }
        break;
      }
      case Kind::Compare:
        r = where(in.op == 0 ? a > b : a <= b, a, b);
        break;
      case Kind::Reduce: {
        const int64_t axis = in.p % std::max(1, a.rank());
        if (a.rank() == 0)
          r = a * 2;
        else if (in.op == 0)
          r = reduce_sum(a, {axis}, true);
        else if (in.op == 1)
          r = reduce_max(a, {axis});
        else
          r = reduce_min(a, {axis}, true);
        break;
      }
      case Kind::Transpose:
        r = transpose(a);
        break;
      case Kind::Reshape:
        r = reshape(a, {-1});
        break;
      case Kind::Concat:
        r = a.rank() == 0 ? stack({a, a}) : concat({a, a}, in.p % a.rank());
        break;
      case Kind::MatMul:
        r = matmul(a, b, false, true);
        break;
      case Kind::Cast:
        r = cast(cast(a, p.portable ? DType::Float32 : DType::Float64), a.dtype());
        break;
      case Kind::Cond:  // data-dependent branch; both sides keep a's shape
        r = cond(
            reduce_sum(a) > reduce_sum(b), [&] { return a * 2; }, [&] { return -a + 1; });
        break;
      case Kind::While: {  // a few data-dependent iterations
        auto out = while_loop([](Tensor i, Tensor) { return i < 3; },
                              [](Tensor i, Tensor v) { return std::make_tuple(i + 1, maximum(v, v * 2) - 1); },
                              std::make_tuple(constant(0), a));
        r = std::get<1>(out);
        break;
      }
    }
    v.push_back(r);
  }
  std::vector<Tensor> out;
  for (int o : p.outputs) out.push_back(v[o]);
  return out;
}

// portable: float32 and int32 only, as TensorFlow.js runs them. `scale` multiplies the
// innermost dim, so values cross the kernels' multi-chunk and multi-thread thresholds.
inline Program generate(std::mt19937& rng, bool portable = false, int64_t scale = 1) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  Program p;
  p.portable = portable;
  const DType dtypes[] = {DType::Float32, DType::Int32, DType::Float64, DType::Int64};
  p.dtype = dtypes[pick(portable ? 2 : 4)];
  std::vector<int64_t> base(pick(4));
  for (auto& d : base) d = 1 + pick(4);
  if (!base.empty()) base.back() *= scale;
  const int n_inputs = 1 + pick(3);
  std::vector<TensorShape> shapes;
  for (int i = 0; i < n_inputs; ++i) {
    const size_t drop = base.empty() ? 0 : pick(static_cast<int>(base.size()) + 1);  // leading dims dropped
    std::vector<int64_t> s(base.begin() + drop, base.end());
    for (auto& d : s)
      if (pick(4) == 0) d = 1;  // broadcast dims
    p.input_shapes.push_back(s);
    shapes.push_back(TensorShape(s));
  }
  const int n_ops = 2 + pick(10);
  for (int k = 0; k < n_ops; ++k) {
    const int a = pick(static_cast<int>(shapes.size()));
    const int b = pick(static_cast<int>(shapes.size()));
    const TensorShape& sa = shapes[a];
    const TensorShape& sb = shapes[b];
    std::vector<int64_t> bc;
    Instr in{Kind::Unary, pick(7), a, b, pick(4)};
    std::vector<int64_t> out = sa.dims();
    const int choice = pick(15);  // 12-14: a unary op (also the fallback of every other choice)
    if (choice < 4 && broadcast(sa, sb, &bc)) {
      in.kind = Kind::Binary;
      out = bc;
    } else if (choice == 4 && broadcast(sa, sb, &bc)) {
      in.kind = Kind::Compare;
      in.op = pick(2);
      out = bc;
    } else if (choice == 5 && sa.rank() > 0) {
      in.kind = Kind::Reduce;
      in.op = pick(3);
      const int64_t axis = in.p % sa.rank();
      if (in.op == 1)
        out.erase(out.begin() + axis);
      else
        out[axis] = 1;
    } else if (choice == 6) {
      in.kind = Kind::Transpose;
      std::reverse(out.begin(), out.end());
    } else if (choice == 7) {
      in.kind = Kind::Reshape;
      out = {sa.num_elements()};
    } else if (choice == 8 && sa.rank() <= 3) {
      in.kind = Kind::Concat;
      if (sa.rank() == 0)
        out = {2};
      else
        out[in.p % sa.rank()] *= 2;
    } else if (choice == 9 && sa.rank() == 2 && sb.rank() == 2 && sa.dims()[1] == sb.dims()[1]) {
      in.kind = Kind::MatMul;
      out = {sa.dims()[0], sb.dims()[0]};
    } else if (choice == 9) {
      in.kind = Kind::Cast;
    } else if (choice == 10) {
      in.kind = Kind::Cond;
    } else if (choice == 11) {
      in.kind = Kind::While;
    }
    p.code.push_back(in);
    shapes.push_back(TensorShape(out));
  }
  // Outputs: the last value plus a random earlier one (a DAG with unused branches too).
  p.outputs = {static_cast<int>(shapes.size()) - 1, n_inputs + pick(n_ops)};
  return p;
}

inline std::vector<Tensor> random_inputs(const Program& p, std::mt19937& rng) {
  std::vector<Tensor> v;
  for (const auto& s : p.input_shapes) v.push_back(random_uniform(s, -4, 5, p.dtype, rng()));
  return v;
}

// Inputs where about a quarter of the floating elements are NaN, +-Inf, -0, +-denormals or
// +-the largest finite value.
inline std::vector<Tensor> special_inputs(const Program& p, std::mt19937& rng) {
  std::vector<Tensor> v = random_inputs(p, rng);
  if (!is_floating(p.dtype)) return v;
  for (Tensor& t : v) {
    auto fill = [&](auto zero) {
      using T = decltype(zero);
      const T specials[] = {std::numeric_limits<T>::quiet_NaN(),  std::numeric_limits<T>::infinity(),
                            -std::numeric_limits<T>::infinity(),  T(-0.0),
                            std::numeric_limits<T>::denorm_min(), -std::numeric_limits<T>::denorm_min(),
                            std::numeric_limits<T>::max(),        std::numeric_limits<T>::lowest()};
      std::vector<T> x = t.to_vector<T>();
      for (T& e : x)
        if (rng() % 4 == 0) e = specials[rng() % 8];
      t = constant<T>(x, t.shape().dims());
    };
    if (p.dtype == DType::Float32)
      fill(0.0f);
    else
      fill(0.0);
  }
  return v;
}

// Bit for bit (any NaN equals any NaN: kernels need not agree on NaN payloads).
inline void expect_identical(const Tensor& a, const Tensor& b, const std::string& where) {
  ASSERT_EQ(a.dtype(), b.dtype()) << where;
  ASSERT_EQ(a.shape(), b.shape()) << where;
  auto same_bits = [&](auto zero) {
    using T = decltype(zero);
    const auto x = a.to_vector<T>(), y = b.to_vector<T>();
    for (size_t i = 0; i < x.size(); ++i) {
      if constexpr (std::is_floating_point_v<T>)
        if (std::isnan(x[i]) && std::isnan(y[i])) continue;
      EXPECT_EQ(std::memcmp(&x[i], &y[i], sizeof(T)), 0) << where << " element " << i << ": " << x[i] << " vs " << y[i];
    }
  };
  if (a.dtype() == DType::Bool)
    EXPECT_EQ(a.to_vector<bool>(), b.to_vector<bool>()) << where;
  else if (a.dtype() == DType::Float16 || a.dtype() == DType::BFloat16)
    EXPECT_EQ(std::memcmp(a.data(), b.data(), 2 * static_cast<size_t>(a.num_elements())), 0) << where;
  else
    kiln::detail::visit_any_dtype(a.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, bool> && !kiln::is_reduced_float_v<T>) same_bits(zero);
    });
}

inline void expect_same(const Tensor& a, const Tensor& b, const std::string& where) {
  ASSERT_EQ(a.dtype(), b.dtype()) << where;
  ASSERT_EQ(a.shape(), b.shape()) << where;
  if (a.dtype() == DType::Float16 || a.dtype() == DType::BFloat16) {  // as float32, which holds them exactly
    expect_same(cast(a, DType::Float32), cast(b, DType::Float32), where);
    return;
  }
  kiln::detail::visit_any_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_floating_point_v<T>) {
      const auto x = a.to_vector<T>(), y = b.to_vector<T>();
      const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-12;
      for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], y[i], tolerance * (1 + std::abs(x[i]))) << where;
    } else if constexpr (!kiln::is_reduced_float_v<T>) {
      EXPECT_EQ(a.to_vector<T>(), b.to_vector<T>()) << where;
    }
  });
}

}  // namespace kiln::testing
