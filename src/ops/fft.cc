// Fourier transforms over the innermost dimension, as TensorFlow's FFT, IFFT (scaled by 1/n),
// RFFT (a real signal zero-padded or cut to fft_length; the n/2 + 1 non-redundant outputs) and
// IRFFT (the real signal of length fft_length whose spectrum starts with the input; the imaginary
// parts of the zero and Nyquist terms play no part). Eigen's FFT (its KISS FFT backend, any
// length) computes each row. tf.signal builds on these (python/kiln/signal.py).
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "kernels/eigen_core.h"
#include "ops/helpers.h"
#include "ops/op_list.h"

KILN_EIGEN_HEADERS_BEGIN
#include <unsupported/Eigen/FFT>
KILN_EIGEN_HEADERS_END

namespace kiln::ops {
namespace {

const int kRfftComplex = attr_index(op::RFFT(), "Tcomplex");
const int kIrfftReal = attr_index(op::IRFFT(), "Treal");

// The input's dims; the rank is at least 1 (TensorFlow's words). Null when unknown.
const Dims* signal_dims(const InferContext& c) {
  const InputInfo& in = c.in(0);
  if (in.unknown_rank) return nullptr;
  if (in.dims->empty()) c.fail("Shape must be at least rank 1 but is rank 0");
  return in.dims;
}

void infer_fft(InferContext& c) {
  require_type_in(c, "Tcomplex", c.in(0).dtype, {DType::Complex64, DType::Complex128});
  signal_dims(c);
  c.out(0).dtype = c.kernel_dtype = c.in(0).dtype;
  c.out(0).shape = shape_of(c.in(0));
}

// fft_length: an int32 vector of one element; its value, or -1 when not known yet.
int64_t fft_length(InferContext& c) {
  const InputInfo& len = c.in(1);
  if (len.dtype != DType::Int32) c.fail(std::string("fft_length must be int32, got ") + tf_type_name(len.dtype));
  if (!len.unknown_rank && len.dims->size() != 1)
    c.fail("Shape must be rank 1 but is rank " + std::to_string(len.dims->size()));
  if (!len.unknown_rank && (*len.dims)[0] >= 0 && (*len.dims)[0] != 1)
    c.fail("Dimension must be 1 but is " + std::to_string((*len.dims)[0]));
  std::vector<int64_t> v;
  if (!known_ints(len, &v) || v.size() != 1) return -1;
  if (v[0] < 0) c.fail("fft_length must be non-negative, got " + std::to_string(v[0]));
  return v[0];
}

// The output shape: the input's with its innermost dimension `inner` (-1: unknown).
void set_inner(InferContext& c, const Dims* d, int64_t inner) {
  if (!d) {
    c.out(0).shape = TensorShape::unknown();
    return;
  }
  Dims out = *d;
  out.back() = inner;
  c.out(0).shape = TensorShape(std::move(out));
}

void infer_rfft(InferContext& c) {
  require_type_in(c, "Treal", c.in(0).dtype, {DType::Float32, DType::Float64});
  const DType complex = c.attrs.type(kRfftComplex);
  if (complex != (c.in(0).dtype == DType::Float32 ? DType::Complex64 : DType::Complex128))
    c.fail(std::string("Tcomplex ") + tf_type_name(complex) + " does not match Treal " + tf_type_name(c.in(0).dtype));
  const Dims* d = signal_dims(c);
  const int64_t n = fft_length(c);
  c.out(0).dtype = complex;
  c.kernel_dtype = c.in(0).dtype;
  set_inner(c, d, n < 0 ? -1 : n / 2 + 1);
}

void infer_irfft(InferContext& c) {
  require_type_in(c, "Tcomplex", c.in(0).dtype, {DType::Complex64, DType::Complex128});
  const DType real = c.attrs.type(kIrfftReal);
  if (real != real_of(c.in(0).dtype))
    c.fail(std::string("Treal ") + tf_type_name(real) + " does not match Tcomplex " + tf_type_name(c.in(0).dtype));
  const Dims* d = signal_dims(c);
  const int64_t n = fft_length(c);
  c.out(0).dtype = real;
  c.kernel_dtype = c.in(0).dtype;
  set_inner(c, d, n);
}

int64_t largest_prime_factor(int64_t n) {
  int64_t largest = 1;
  for (int64_t f = 2; f * f <= n; ++f)
    while (n % f == 0) {
      largest = f;
      n /= f;
    }
  return n > 1 ? n : largest;
}

// Transforms of one length. KISS FFT's butterfly for a prime factor p costs p per element, so a
// length with a large prime factor (a hostile fft_length of a big prime would take hours) goes
// through Bluestein's chirp convolution instead: power-of-two transforms of at least 2n - 1.
template <class R>
class RowFft {
 public:
  using C = std::complex<R>;
  static constexpr int64_t kLargestDirectFactor = 61;

  explicit RowFft(int64_t n) : n_(n) {
    if (n <= 1 || largest_prime_factor(n) <= kLargestDirectFactor) return;
    m_ = 1;
    while (m_ < 2 * n - 1) m_ *= 2;
    chirp_.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      // exp(-i pi k^2 / n), with k^2 reduced mod 2n first so that large k keep their precision
      const double angle = M_PI * static_cast<double>((static_cast<unsigned __int128>(k) * k) % (2 * n)) / n;
      chirp_[k] = C(static_cast<R>(std::cos(angle)), static_cast<R>(-std::sin(angle)));
    }
    std::vector<C> b(m_, C(0));
    for (int64_t k = 0; k < n; ++k) b[k] = b[(m_ - k) % m_] = std::conj(chirp_[k]);
    kernel_.resize(m_);
    fft_.fwd(kernel_, b);
  }

  void run(std::vector<C>& out, const std::vector<C>& in, bool inverse) {
    if (n_ <= 1) {
      out = in;
    } else if (chirp_.empty()) {
      inverse ? fft_.inv(out, in) : fft_.fwd(out, in);
    } else if (inverse) {  // ifft(x) = conj(fft(conj(x))) / n
      std::vector<C> conj(in.size());
      for (size_t i = 0; i < in.size(); ++i) conj[i] = std::conj(in[i]);
      bluestein(out, conj);
      for (C& v : out) v = std::conj(v) / static_cast<R>(n_);
    } else {
      bluestein(out, in);
    }
  }

 private:
  void bluestein(std::vector<C>& out, const std::vector<C>& in) {
    std::vector<C> a(m_, C(0)), spectrum(m_), conv(m_);
    for (int64_t k = 0; k < n_; ++k) a[k] = in[k] * chirp_[k];
    fft_.fwd(spectrum, a);
    for (int64_t k = 0; k < m_; ++k) spectrum[k] *= kernel_[k];
    fft_.inv(conv, spectrum);
    out.resize(n_);
    for (int64_t k = 0; k < n_; ++k) out[k] = conv[k] * chirp_[k];
  }

  int64_t n_, m_ = 0;
  Eigen::FFT<R> fft_;
  std::vector<C> chirp_, kernel_;  // Bluestein's: empty for a direct transform
};

// Rows of the innermost dimension: (count, length).
std::pair<int64_t, int64_t> rows(const TensorImpl& t) {
  const int64_t n = t.dims.back();
  return {n > 0 ? t.num_elements / n : 0, n};
}

template <class C, bool kInverse>
struct FftKernel {
  static void run(KernelContext& c) {
    const auto [count, n] = rows(c.in(0));
    if (count == 0) return;
    RowFft<typename C::value_type> fft(n);
    std::vector<C> in(n), out(n);
    for (int64_t r = 0; r < count; ++r) {
      std::copy_n(c.in(0).as<C>() + r * n, n, in.begin());
      fft.run(out, in, kInverse);
      std::copy_n(out.begin(), n, c.out(0).as<C>() + r * n);
    }
  }
};
template <class C>
using ForwardFft = FftKernel<C, false>;
template <class C>
using InverseFft = FftKernel<C, true>;

template <class R>
struct RfftKernel {
  static void run(KernelContext& c) {
    using C = std::complex<R>;
    const int64_t n = int_values(c.in(1))[0];
    const int64_t given = c.in(0).dims.back(), outer = c.out(0).dims.back();
    const int64_t count = outer > 0 ? c.out(0).num_elements / outer : 0;
    if (count == 0) return;  // n is then bounded by nothing allocated: make no rows of it
    RowFft<R> fft(n);
    std::vector<C> signal(n), spectrum(n);
    for (int64_t r = 0; r < count; ++r) {
      for (int64_t i = 0; i < n; ++i) signal[i] = C(i < given ? c.in(0).as<R>()[r * given + i] : R(0), R(0));
      fft.run(spectrum, signal, false);
      for (int64_t k = 0; k < outer; ++k) c.out(0).as<C>()[r * outer + k] = k < n ? spectrum[k] : C(0);
    }
  }
};

template <class C>
struct IrfftKernel {
  static void run(KernelContext& c) {
    using R = typename C::value_type;
    const int64_t n = int_values(c.in(1))[0];
    const int64_t given = c.in(0).dims.back();
    const int64_t count = n > 0 ? c.out(0).num_elements / n : 0;
    if (count == 0) return;
    RowFft<R> fft(n);
    std::vector<C> spectrum(n), signal(n);
    for (int64_t r = 0; r < count; ++r) {
      const C* x = c.in(0).as<C>() + r * given;
      // The Hermitian spectrum of a real signal from its first n/2 + 1 terms.
      for (int64_t k = 0; k <= n / 2; ++k) spectrum[k] = k < given ? x[k] : C(0);
      for (int64_t k = n / 2 + 1; k < n; ++k) spectrum[k] = std::conj(spectrum[n - k]);
      fft.run(signal, spectrum, true);
      for (int64_t i = 0; i < n; ++i) c.out(0).as<R>()[r * n + i] = signal[i].real();
    }
  }
};

}  // namespace

const OpDef& op::FFT() {
  static const OpDef def = {.name = "FFT",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kPure,
                            .infer = infer_fft,
                            .kernels = kernels_for<ForwardFft, KILN_COMPLEX_TYPES>(),
                            .type_attr = "Tcomplex"};
  return def;
}
const OpDef& op::IFFT() {
  static const OpDef def = {.name = "IFFT",
                            .num_inputs = 1,
                            .num_outputs = 1,
                            .input_args = {"input"},
                            .traits = kPure,
                            .infer = infer_fft,
                            .kernels = kernels_for<InverseFft, KILN_COMPLEX_TYPES>(),
                            .type_attr = "Tcomplex"};
  return def;
}
const OpDef& op::RFFT() {
  static const OpDef def = {.name = "RFFT",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "fft_length"},
                            .traits = kPure,
                            .attr_specs = {type_attr("Tcomplex", DType::Complex64)},
                            .infer = infer_rfft,
                            .kernels = kernels_for<RfftKernel, KILN_FLOATS>(),
                            .type_attr = "Treal"};
  return def;
}
const OpDef& op::IRFFT() {
  static const OpDef def = {.name = "IRFFT",
                            .num_inputs = 2,
                            .num_outputs = 1,
                            .input_args = {"input", "fft_length"},
                            .traits = kPure,
                            .attr_specs = {type_attr("Treal", DType::Float32)},
                            .infer = infer_irfft,
                            .kernels = kernels_for<IrfftKernel, KILN_COMPLEX_TYPES>(),
                            .type_attr = "Tcomplex"};
  return def;
}

}  // namespace kiln::ops
