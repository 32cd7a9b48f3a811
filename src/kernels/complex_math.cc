#include "kernels/complex_math.h"

#include <cmath>

namespace kiln::kernels {
namespace {

template <class R>
std::complex<R> mul(std::complex<R> a, std::complex<R> b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// a / b = (a * conj(b / m)) / |b / m|^2 / m with m = max(|re b|, |im b|): no overflow in |b|^2.
template <class R>
std::complex<R> div(std::complex<R> a, std::complex<R> b) {
  const R m = std::fmax(std::fabs(b.real()), std::fabs(b.imag()));
  const R c = b.real() / m, d = b.imag() / m;
  const R denom = c * c + d * d;
  const R re = a.real() * c + a.imag() * d;
  const R im = a.imag() * c - a.real() * d;
  return {re / denom / m, im / denom / m};
}

}  // namespace

// noinline: link-time optimization would otherwise inline these into callers compiled with
// contraction, and fuse their multiply-adds after all.
__attribute__((noinline)) std::complex<float> complex_mul(std::complex<float> a, std::complex<float> b) {
  return mul(a, b);
}
__attribute__((noinline)) std::complex<double> complex_mul(std::complex<double> a, std::complex<double> b) {
  return mul(a, b);
}
__attribute__((noinline)) std::complex<float> complex_div(std::complex<float> a, std::complex<float> b) {
  return div(a, b);
}
__attribute__((noinline)) std::complex<double> complex_div(std::complex<double> a, std::complex<double> b) {
  return div(a, b);
}

}  // namespace kiln::kernels
