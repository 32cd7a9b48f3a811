// Special functions in the argument's own precision, computed as TensorFlow's CPU kernels
// (Eigen's ports of Cephes) compute them, so that float32 results round alike: digamma, the
// Hurwitz zeta function and polygamma.
#pragma once
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

namespace kiln::kernels {

// Digamma (psi), in the input's own precision as TensorFlow's (Eigen's) kernel computes it, so
// float32 results round alike: the reflection psi(1 - x) - psi(x) = pi cot(pi x) for x <= 0
// (poles, 0 and the negative integers, give NaN), the recurrence psi(x) = psi(x + 1) - 1/x up
// to 10, then the asymptotic series in 1/x^2 (Bernoulli numbers: 4 terms for float, 7 for
// double).
template <class T>
T digamma(T x) {
  if (std::isnan(x)) return x;
  const T pi = std::numbers::pi_v<T>;
  T reflection = 0;
  bool negative = false;
  if (x <= T(0)) {
    T p = std::floor(x);
    if (p == x) return std::numeric_limits<T>::quiet_NaN();
    negative = true;
    T frac = x - p;
    if (frac != T(0.5)) {
      if (frac > T(0.5)) {
        p += T(1);
        frac = x - p;
      }
      reflection = pi / std::tan(pi * frac);
    }
    x = T(1) - x;
  }
  T w = 0;
  while (x < T(10)) {
    w += T(1) / x;
    x += T(1);
  }
  T series = 0;
  if (x < T(1e8)) {
    const T z = T(1) / (x * x);
    T poly;
    if constexpr (std::is_same_v<T, float>)
      poly = ((T(-1.0 / 240) * z + T(1.0 / 252)) * z + T(-1.0 / 120)) * z + T(1.0 / 12);
    else
      poly =
          (((((T(1.0 / 12) * z + T(-691.0 / 32760)) * z + T(1.0 / 132)) * z + T(-1.0 / 240)) * z + T(1.0 / 252)) * z +
           T(-1.0 / 120)) *
              z +
          T(1.0 / 12);
    series = z * poly;
  }
  const T y = std::log(x) - T(0.5) / x - series - w;
  return negative ? y - reflection : y;
}

// The Hurwitz zeta function zeta(x, q) = sum over k >= 0 of (q + k)^-x, for x > 1: direct
// terms until q + k passes 9 (at least 9 of them), then the Euler-Maclaurin tail with 12
// Bernoulli-number corrections, stopping once a term no longer changes the sum. x = 1 is
// infinity, x < 1 NaN; q at or below zero: at a pole (q an integer) infinity for an even
// integer x and NaN otherwise, elsewhere NaN unless x is an integer.
template <class T>
T zeta(T x, T q) {
  static constexpr T kA[] = {T(12.0),
                             T(-720.0),
                             T(30240.0),
                             T(-1209600.0),
                             T(47900160.0),
                             T(-1.8924375803183791606e9),
                             T(7.47242496e10),
                             T(-2.950130727918164224e12),
                             T(1.1646782814350067249e14),
                             T(-4.5979787224074726105e15),
                             T(1.8152105401943546773e17),
                             T(-7.1661652561756670113e18)};
  const T machep = std::is_same_v<T, float> ? T(5.9604644775390625e-8) : T(1.11022302462515654042e-16);
  if (x == T(1)) return std::numeric_limits<T>::infinity();
  if (x < T(1)) return std::numeric_limits<T>::quiet_NaN();
  if (q <= T(0)) {
    if (q == std::floor(q))  // a pole: infinite for an even integer x (one sign), else NaN
      return x == std::floor(x) && std::fmod(x, T(2)) == T(0) ? std::numeric_limits<T>::infinity()
                                                              : std::numeric_limits<T>::quiet_NaN();
    if (x != std::floor(x)) return std::numeric_limits<T>::quiet_NaN();
    // The direct terms step q up to 9 one at a time: a q far below zero would take as many
    // steps as it is large (forever, once q + 1 rounds to q). kiln gives NaN there; TensorFlow
    // runs the loop.
    if (q < T(-1048576)) return std::numeric_limits<T>::quiet_NaN();
  }
  T s = std::pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= T(9)) {
    ++i;
    a += T(1);
    b = std::pow(a, -x);
    s += b;
    if (b == T(0) && s == T(0) && a > T(1)) return s;  // every later term is zero too (x or q infinite)
    if (std::fabs(b / s) < machep) return s;
  }
  const T w = a;
  s += b * w / (x - T(1));
  s -= T(0.5) * b;
  a = T(1);
  T k = 0;
  for (int j = 0; j < 12; ++j) {
    a *= x + k;
    b /= w;
    T t = a * b / kA[j];
    s += t;
    if (std::fabs(t / s) < machep) return s;
    k += T(1);
    a *= x + k;
    b /= w;
    k += T(1);
  }
  return s;
}

// polygamma(n, x), the n-th derivative of digamma, for a non-negative integer n:
// (-1)^(n+1) n! zeta(n + 1, x). Any other n is NaN.
template <class T>
T polygamma(T n, T x) {
  if (n != std::floor(n) || n < T(0)) return std::numeric_limits<T>::quiet_NaN();
  if (n == T(0)) return digamma(x);
  const T n1 = n + T(1);
  const T factorial = std::exp(std::lgamma(n1));
  return std::pow(T(-1), n1) * factorial * zeta(n1, x);  // pow: (-1)^inf is 1, as in TensorFlow
}

}  // namespace kiln::kernels
