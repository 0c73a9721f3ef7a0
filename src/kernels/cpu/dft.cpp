// DFT (opsets 17 and 20) and STFT (opset 17).
//
// Each 1-D transform runs in double precision (see Transform). Complex values
// are (real, imag) pairs in a trailing dim of 2; a trailing dim of 1 is a real
// signal.
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

using cd = std::complex<double>;

// Iterative radix-2 FFT of a[0, n), n a power of two; tw[k] = exp(s 2 pi i k / n).
void fft_pow2(cd* a, int64_t n, const cd* tw) {
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const int64_t half = len >> 1, step = n / len;
    for (int64_t i = 0; i < n; i += len)
      for (int64_t k = 0; k < half; ++k) {
        const cd u = a[i + k], v = a[i + k + half] * tw[k * step];
        a[i + k] = u + v;
        a[i + k + half] = u - v;
      }
  }
}

// An unscaled length-n transform: sign -1 forward, +1 inverse. Powers of two
// use the radix-2 FFT; other lengths up to kDirectMax the direct sum (exact
// enough and cheap there); longer ones Bluestein's algorithm, which turns the
// transform into a circular convolution done with power-of-two FFTs, so every
// length is O(n log n).
class Transform {
 public:
  static constexpr int64_t kDirectMax = 64;

  Transform(int64_t n, bool inverse) : n_(n) {
    const double sign = inverse ? 1.0 : -1.0;
    if (n <= 1) return;
    pow2_ = (n & (n - 1)) == 0;
    if (pow2_ || n <= kDirectMax) {
      tw_.resize(static_cast<size_t>(n));
      for (int64_t k = 0; k < n; ++k) tw_[k] = std::polar(1.0, sign * 2.0 * M_PI * k / n);
      return;
    }
    m_ = 1;
    while (m_ < 2 * n - 1) m_ <<= 1;
    // chirp[k] = exp(s pi i k^2 / n), with k^2 reduced mod 2n to keep the angle small.
    chirp_.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) chirp_[k] = std::polar(1.0, sign * M_PI * static_cast<double>((k * k) % (2 * n)) / n);
    mtw_.resize(static_cast<size_t>(m_));
    for (int64_t k = 0; k < m_; ++k) mtw_[k] = std::polar(1.0, -2.0 * M_PI * k / m_);
    bhat_.assign(static_cast<size_t>(m_), cd(0));
    bhat_[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) bhat_[k] = bhat_[m_ - k] = std::conj(chirp_[k]);
    fft_pow2(bhat_.data(), m_, mtw_.data());
    for (cd& v : bhat_) v /= static_cast<double>(m_);  // the inverse FFT's 1/m, folded in
  }
  // Values of scratch run() needs.
  int64_t scratch_size() const { return std::max(n_, m_); }

  // Transforms data[0, n) in place.
  void run(cd* data, cd* scratch) const {
    if (n_ <= 1) return;
    if (pow2_) return fft_pow2(data, n_, tw_.data());
    if (m_ == 0) {
      for (int64_t k = 0; k < n_; ++k) {
        cd acc = 0;
        int64_t idx = 0;  // k * j mod n, stepped to avoid overflow
        for (int64_t j = 0; j < n_; ++j) {
          acc += data[j] * tw_[idx];
          idx += k;
          if (idx >= n_) idx -= n_;
        }
        scratch[k] = acc;
      }
      std::copy(scratch, scratch + n_, data);
      return;
    }
    for (int64_t k = 0; k < n_; ++k) scratch[k] = data[k] * chirp_[k];
    std::fill(scratch + n_, scratch + m_, cd(0));
    fft_pow2(scratch, m_, mtw_.data());
    // Multiply by the chirp's spectrum, then inverse-transform as conj(FFT(conj(.))).
    for (int64_t k = 0; k < m_; ++k) scratch[k] = std::conj(scratch[k] * bhat_[k]);
    fft_pow2(scratch, m_, mtw_.data());
    for (int64_t k = 0; k < n_; ++k) data[k] = std::conj(scratch[k]) * chirp_[k];
  }

 private:
  int64_t n_, m_ = 0;
  bool pow2_ = false;
  std::vector<cd> tw_;     // radix-2 / direct twiddles
  std::vector<cd> chirp_;  // Bluestein
  std::vector<cd> mtw_;
  std::vector<cd> bhat_;
};

// Reads a scalar integer input (int32/int64).
bool scalar_int(const Tensor& t, int64_t* v) {
  if (t.elements() != 1) return false;
  if (t.dtype == DType::kInt64)
    *v = t.as<int64_t>()[0];
  else if (t.dtype == DType::kInt32)
    *v = t.as<int32_t>()[0];
  else
    return false;
  return true;
}

template <class T>
void dft_typed(const Tensor& x, Tensor& y, int64_t axis, int64_t len, bool inverse, bool onesided) {
  const int64_t r = x.rank(), cin = x.dims[r - 1], nin = x.dims[axis], nout = y.dims[axis], cout = y.dims[r - 1];
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x.dims[i];
  for (int64_t i = axis + 1; i < r - 1; ++i) inner *= x.dims[i];
  const bool irfft = inverse && onesided;
  const Transform tr(len, inverse);
  const T* xp = x.as<T>();
  T* yp = y.as<T>();
  const double scale = inverse ? 1.0 / static_cast<double>(len) : 1.0;
  parallel_for(outer * inner, std::max<int64_t>(1, 8192 / len), [&](int64_t b, int64_t e) {
    std::vector<cd> buf(static_cast<size_t>(len)), scratch(static_cast<size_t>(tr.scratch_size()));
    for (int64_t line = b; line < e; ++line) {
      const int64_t o = line / inner, i = line % inner;
      const T* src = xp + (o * nin * inner + i) * cin;
      auto at = [&](int64_t k) {
        const T* p = src + k * inner * cin;
        return cd(load(p[0]), cin == 2 ? static_cast<double>(load(p[1])) : 0.0);
      };
      if (irfft) {
        // Rebuild the full Hermitian spectrum from its first len/2 + 1 bins;
        // the imaginary parts of DC and (even len) Nyquist cannot survive.
        const int64_t nb = len / 2 + 1;
        for (int64_t k = 0; k < nb; ++k) buf[k] = k < nin ? at(k) : cd(0);
        buf[0] = cd(buf[0].real(), 0);
        if (len % 2 == 0) buf[len / 2] = cd(buf[len / 2].real(), 0);
        for (int64_t k = nb; k < len; ++k) buf[k] = std::conj(buf[len - k]);
      } else {
        for (int64_t k = 0; k < len; ++k) buf[k] = k < nin ? at(k) : cd(0);
      }
      tr.run(buf.data(), scratch.data());
      T* dst = yp + (o * nout * inner + i) * cout;
      for (int64_t k = 0; k < nout; ++k) {
        T* q = dst + k * inner * cout;
        q[0] = store<T>(buf[k].real() * scale);
        if (cout == 2) q[1] = store<T>(buf[k].imag() * scale);
      }
    }
  });
}

Status dft(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank();
  if (r < 2 || (x.dims[r - 1] != 1 && x.dims[r - 1] != 2)) return ctx.fail("DFT input must be [..., 1 or 2]");
  const bool inverse = ctx.attrs().get_int("inverse", 0) != 0;
  const bool onesided = ctx.attrs().get_int("onesided", 0) != 0;
  int64_t axis = 0;
  if (ctx.opset() >= 20) {
    axis = -2;
    if (ctx.has_input(2) && !scalar_int(ctx.input(2), &axis)) return ctx.fail("axis must be an integer scalar");
  } else {
    axis = ctx.attrs().get_int("axis", 1);
  }
  const int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a > r - 2)
    return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(axis), static_cast<long long>(r));
  int64_t len = inverse && onesided ? 2 * (x.dims[a] - 1) : x.dims[a];
  if (ctx.has_input(1) && !scalar_int(ctx.input(1), &len)) return ctx.fail("dft_length must be an integer scalar");
  if (len <= 0) return ctx.fail("dft_length %lld must be positive", static_cast<long long>(len));
  const int64_t nout = onesided && !inverse ? len / 2 + 1 : len;
  if (y.rank() != r || y.dims[a] != nout || y.dims[r - 1] != (inverse && onesided ? 1 : 2))
    return ctx.fail("output shape does not match the transform");
  if (y.elements() == 0) return Status::Ok();
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dft_typed<T>(x, y, a, len, inverse, onesided);
  });
  if (!ok) return ctx.fail("unsupported type %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

template <class T>
void stft_typed(const Tensor& x, const T* window, int64_t step, int64_t flen, Tensor& y) {
  const int64_t batch = x.dims[0], slen = x.dims[1], cin = x.dims[2], frames = y.dims[1], bins = y.dims[2];
  const Transform tr(flen, false);
  const T* xp = x.as<T>();
  T* yp = y.as<T>();
  parallel_for(batch * frames, std::max<int64_t>(1, 8192 / flen), [&](int64_t b, int64_t e) {
    std::vector<cd> buf(static_cast<size_t>(flen)), scratch(static_cast<size_t>(tr.scratch_size()));
    for (int64_t item = b; item < e; ++item) {
      const int64_t n = item / frames, f = item % frames;
      const T* src = xp + (n * slen + f * step) * cin;
      for (int64_t k = 0; k < flen; ++k) {
        const double w = window ? static_cast<double>(load(window[k])) : 1.0;
        const T* p = src + k * cin;
        buf[k] = cd(load(p[0]) * w, cin == 2 ? load(p[1]) * w : 0.0);
      }
      tr.run(buf.data(), scratch.data());
      T* dst = yp + item * bins * 2;
      for (int64_t k = 0; k < bins; ++k) {
        dst[2 * k] = store<T>(buf[k].real());
        dst[2 * k + 1] = store<T>(buf[k].imag());
      }
    }
  });
}

Status stft(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.rank() != 3 || (x.dims[2] != 1 && x.dims[2] != 2)) return ctx.fail("signal must be [batch, length, 1 or 2]");
  int64_t step = 0;
  if (!scalar_int(ctx.input(1), &step) || step <= 0) return ctx.fail("frame_step must be a positive integer scalar");
  const Tensor* window = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (window && (window->rank() != 1 || window->dtype != x.dtype))
    return ctx.fail("window must be 1-D of the signal's type");
  int64_t flen = window ? window->dims[0] : x.dims[1];
  if (ctx.has_input(3) && !scalar_int(ctx.input(3), &flen)) return ctx.fail("frame_length must be an integer scalar");
  if (window && window->dims[0] != flen)
    return ctx.fail("frame_length %lld differs from the window's length", static_cast<long long>(flen));
  if (flen <= 0 || flen > x.dims[1])
    return ctx.fail("frame_length %lld does not fit the signal", static_cast<long long>(flen));
  const bool onesided = ctx.attrs().get_int("onesided", 1) != 0;
  const int64_t frames = (x.dims[1] - flen) / step + 1, bins = onesided ? flen / 2 + 1 : flen;
  if (y.dims != std::vector<int64_t>{x.dims[0], frames, bins, 2})
    return ctx.fail("output shape does not match the frames");
  if (y.elements() == 0) return Status::Ok();
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    stft_typed<T>(x, window ? window->as<T>() : nullptr, step, flen, y);
  });
  if (!ok) return ctx.fail("unsupported type %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(DFT, "cpu").types(float_types()).run(dft);
OPENACL_REGISTER_KERNEL(STFT, "cpu").types(float_types()).run(stft);

}  // namespace
}  // namespace openacl::kernels::cpu
