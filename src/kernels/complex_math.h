// Complex multiplication and division as TensorFlow's CPU kernels compute them (Eigen's packet
// math): the textbook product, and a quotient scaled by the divisor's larger part. Neither
// recovers infinities as C's Annex G (std::complex's operators) does, so NaN and infinity
// come out where TensorFlow's do. complex_math.cc is compiled without multiply-add
// contraction: each product rounds, as Eigen's separate multiply and add/subtract do.
#pragma once
#include <complex>

namespace kiln::kernels {

std::complex<float> complex_mul(std::complex<float> a, std::complex<float> b);
std::complex<double> complex_mul(std::complex<double> a, std::complex<double> b);
std::complex<float> complex_div(std::complex<float> a, std::complex<float> b);
std::complex<double> complex_div(std::complex<double> a, std::complex<double> b);

}  // namespace kiln::kernels
