// Window generators (HannWindow, HammingWindow, BlackmanWindow) and
// MelWeightMatrix (opset 17). Values are computed in double and stored as
// `output_datatype` (integer types truncate, as a cast does).
#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

enum class Window { kHann, kHamming, kBlackman };

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

bool scalar_float(const Tensor& t, double* v) {
  if (t.elements() != 1) return false;
  return dispatch<kFloats>(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *v = static_cast<double>(load(t.as<T>()[0]));
  });
}

// Fills y[0, n) with f(i) converted to y's type.
template <class F>
Status fill(KernelContext& ctx, Tensor& y, int64_t n, F&& f) {
  const bool ok = dispatch<kNumeric>(y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = y.as<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = store<T>(f(i));
  });
  if (!ok) return ctx.fail("unsupported output type %s", graph::dtype_name(y.dtype));
  return Status::Ok();
}

Status run_window(KernelContext& ctx, Window kind) {
  int64_t size = 0;
  if (!scalar_int(ctx.input(0), &size)) return ctx.fail("size must be an integer scalar");
  if (size < 0) return ctx.fail("window size %lld is negative", static_cast<long long>(size));
  Tensor& y = ctx.output(0);
  if (y.elements() != size)
    return ctx.fail("output has %lld elements, the window %lld", static_cast<long long>(y.elements()),
                    static_cast<long long>(size));
  const bool periodic = ctx.attrs().get_int("periodic", 1) != 0;
  // A symmetric window of one sample has no period (0/0); it is 1, as in torch.
  const double n1 = periodic ? static_cast<double>(size) : static_cast<double>(size - 1);
  if (n1 == 0) return fill(ctx, y, size, [](int64_t) { return 1.0; });
  const double w = 2.0 * M_PI / n1;
  switch (kind) {
    case Window::kHann:
      return fill(ctx, y, size, [&](int64_t i) {
        const double s = std::sin(M_PI * static_cast<double>(i) / n1);
        return s * s;
      });
    case Window::kHamming: {
      const double alpha = 25.0 / 46.0, beta = 1.0 - alpha;
      return fill(ctx, y, size, [&](int64_t i) { return alpha - beta * std::cos(w * static_cast<double>(i)); });
    }
    case Window::kBlackman:
      return fill(ctx, y, size, [&](int64_t i) {
        const double t = w * static_cast<double>(i);
        return 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2.0 * t);
      });
  }
  return Status::Ok();
}

Status hann(KernelContext& ctx) { return run_window(ctx, Window::kHann); }
Status hamming(KernelContext& ctx) { return run_window(ctx, Window::kHamming); }
Status blackman(KernelContext& ctx) { return run_window(ctx, Window::kBlackman); }

// Triangular filters spaced evenly on the mel scale, mel(f) = 2595 log10(1 + f/700),
// each peaking at 1 on its centre bin. The band edges are placed exactly as the
// ONNX reference does (num_mel_bins + 2 steps, bins floor((dft_length+1) f / rate)).
Status mel_weight_matrix(KernelContext& ctx) {
  int64_t mel_bins = 0, dft_len = 0, rate = 0;
  double lower = 0, upper = 0;
  if (!scalar_int(ctx.input(0), &mel_bins) || !scalar_int(ctx.input(1), &dft_len) || !scalar_int(ctx.input(2), &rate))
    return ctx.fail("num_mel_bins, dft_length and sample_rate must be integer scalars");
  if (!scalar_float(ctx.input(3), &lower) || !scalar_float(ctx.input(4), &upper))
    return ctx.fail("lower_edge_hertz and upper_edge_hertz must be float scalars");
  if (mel_bins <= 0 || dft_len <= 0 || rate <= 0)
    return ctx.fail("num_mel_bins, dft_length and sample_rate must be positive");
  const int64_t spec_bins = dft_len / 2 + 1;
  Tensor& y = ctx.output(0);
  if (y.dims != std::vector<int64_t>{spec_bins, mel_bins}) return ctx.fail("output shape does not match the inputs");
  // The edge frequencies are float32 in the reference, and so is log1p of them.
  const double low_mel = 2595.0 * static_cast<double>(std::log1p(static_cast<float>(lower) / 700.0f)) / std::log(10.0);
  const double high_mel = 2595.0 * static_cast<double>(std::log1p(static_cast<float>(upper) / 700.0f)) / std::log(10.0);
  const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    const double hz = 700.0 * std::expm1((static_cast<double>(i) * step + low_mel) / 2595.0 * std::log(10.0));
    edge[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_len + 1) * hz / static_cast<double>(rate)));
    if (edge[i] < 0 || edge[i] >= spec_bins)
      return ctx.fail("mel band edge %lld falls outside the %lld spectrogram bins (check the edge frequencies)",
                      static_cast<long long>(edge[i]), static_cast<long long>(spec_bins));
  }
  std::vector<double> m(static_cast<size_t>(spec_bins * mel_bins), 0.0);
  for (int64_t i = 0; i < mel_bins; ++i) {
    const int64_t lo = edge[i], mid = edge[i + 1], hi = edge[i + 2];
    if (mid == lo) {
      m[mid * mel_bins + i] = 1.0;
    } else {
      for (int64_t j = lo; j <= mid; ++j)
        m[j * mel_bins + i] = static_cast<double>(j - lo) / static_cast<double>(mid - lo);
    }
    for (int64_t j = mid; j < hi; ++j)
      m[j * mel_bins + i] = static_cast<double>(hi - j) / static_cast<double>(hi - mid);
  }
  return fill(ctx, y, spec_bins * mel_bins, [&](int64_t i) { return m[i]; });
}

OPENACL_REGISTER_KERNEL(HannWindow, "cpu").types({DType::kInt32, DType::kInt64}).run(hann);
OPENACL_REGISTER_KERNEL(HammingWindow, "cpu").types({DType::kInt32, DType::kInt64}).run(hamming);
OPENACL_REGISTER_KERNEL(BlackmanWindow, "cpu").types({DType::kInt32, DType::kInt64}).run(blackman);
OPENACL_REGISTER_KERNEL(MelWeightMatrix, "cpu").types({DType::kInt32, DType::kInt64}).run(mel_weight_matrix);

}  // namespace
}  // namespace openacl::kernels::cpu
