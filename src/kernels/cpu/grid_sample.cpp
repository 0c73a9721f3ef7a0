// GridSample (opset 16..22, 2-D and N-D) and AffineGrid (opset 20).
//
// GridSample: for each output point the grid gives normalised coordinates
// (x, y[, z]) in [-1, 1]; each spatial axis gets up to 4 taps (index, weight)
// after denormalising and applying the padding mode, and the value is the sum
// over the tensor product of the taps (4^r terms at most).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

enum class Pad { kZeros, kBorder, kReflection };
enum class Interp { kNearest, kLinear, kCubic };

// Folds x into [lo, hi] by reflecting off the borders.
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  // Floating-point floor/fmod rather than integer casts: the grid is data and
  // may hold huge values.
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::floor(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::floor(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

// Source index of integer position i on an axis of size d; -1 reads zero.
int64_t pixel_index(int64_t i, int64_t d, Pad pad, double lo, double hi) {
  if (pad == Pad::kZeros) return i >= 0 && i < d ? i : -1;
  if (pad == Pad::kBorder) return std::clamp<int64_t>(i, 0, d - 1);
  return std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi)), 0, d - 1);
}

void cubic_coeffs(double t, double* c) {
  const double a = -0.75;
  auto w = [&](double x) {
    x = std::fabs(x);
    if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
    if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
    return 0.0;
  };
  c[0] = w(t + 1), c[1] = w(t), c[2] = w(1 - t), c[3] = w(2 - t);
}

template <class T>
Status grid_sample_typed(KernelContext& ctx, Interp mode, Pad pad, bool align) {
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank() - 2;
  const int64_t n = x.dims[0], c = x.dims[1];
  int64_t points = 1;
  for (int64_t i = 1; i < grid.rank() - 1; ++i) points *= grid.dims[i];
  int64_t spatial = 1;
  for (int64_t i = 0; i < r; ++i) spatial *= x.dims[2 + i];
  const std::vector<int64_t> xs = strides_of(std::vector<int64_t>(x.dims.begin() + 2, x.dims.end()));
  const T* xd = x.as<T>();
  const T* gd = grid.as<T>();
  T* yd = y.as<T>();
  parallel_for(n * points, 64, [&](int64_t b, int64_t e) {
    int64_t idx[3][4];
    double w[3][4];
    int taps[3];
    for (int64_t q = b; q < e; ++q) {
      const int64_t bn = q / points, p = q % points;
      const T* g = gd + q * r;
      for (int64_t a = 0; a < r; ++a) {
        const int64_t d = x.dims[2 + a];
        const double nv = static_cast<double>(load(g[r - 1 - a]));  // grid is (x, y, z): reversed axes
        double v = align ? (nv + 1) / 2 * static_cast<double>(d - 1) : ((nv + 1) * static_cast<double>(d) - 1) / 2;
        const double lo = align ? 0.0 : -0.5, hi = align ? static_cast<double>(d - 1) : static_cast<double>(d) - 0.5;
        if (mode == Interp::kNearest) v = std::nearbyint(v);
        if (v < lo || v > hi) {
          if (pad == Pad::kBorder) v = std::clamp(v, 0.0, static_cast<double>(d - 1));
          else if (pad == Pad::kReflection) v = reflect(v, lo, hi);
        }
        // Keep v castable to an index: beyond a few pixels outside, every tap
        // reads padding anyway. NaN goes out of range too.
        const double far = static_cast<double>(d) + 8;
        if (!(v >= -far)) v = -far;
        if (!(v <= far)) v = far;
        if (mode == Interp::kNearest) {
          taps[a] = 1;
          idx[a][0] = pixel_index(static_cast<int64_t>(v), d, pad, lo, hi);
          w[a][0] = 1;
          continue;
        }
        const double f = std::floor(v);
        const int64_t i0 = static_cast<int64_t>(f);
        const double t = v - f;
        if (mode == Interp::kLinear) {
          taps[a] = 2;
          idx[a][0] = pixel_index(i0, d, pad, lo, hi), w[a][0] = 1 - t;
          idx[a][1] = pixel_index(i0 + 1, d, pad, lo, hi), w[a][1] = t;
        } else {
          taps[a] = 4;
          cubic_coeffs(t, w[a]);
          for (int k = 0; k < 4; ++k) idx[a][k] = pixel_index(i0 - 1 + k, d, pad, lo, hi);
        }
      }
      int64_t combos = 1;
      for (int64_t a = 0; a < r; ++a) combos *= taps[a];
      for (int64_t ch = 0; ch < c; ++ch) {
        const T* img = xd + (bn * c + ch) * spatial;
        double acc = 0;
        for (int64_t m = 0; m < combos; ++m) {
          int64_t rem = m, off = 0;
          double wt = 1;
          bool zero = false;
          for (int64_t a = r - 1; a >= 0; --a) {
            const int64_t k = rem % taps[a];
            rem /= taps[a];
            if (idx[a][k] < 0) { zero = true; break; }
            off += idx[a][k] * xs[a];
            wt *= w[a][k];
          }
          if (!zero) acc += wt * static_cast<double>(load(img[off]));
        }
        yd[(bn * c + ch) * points + p] = store<T>(static_cast<ComputeType<T>>(acc));
      }
    }
  });
  return Status::Ok();
}

Status grid_sample(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  if (x.rank() < 3 || x.rank() > 5) return ctx.fail("X must be 3-D to 5-D (1 to 3 spatial axes)");
  if (grid.rank() != x.rank() || grid.dims.back() != x.rank() - 2 || grid.dims[0] != x.dims[0])
    return ctx.fail("grid must be [N, out..., %lld] with X's batch", static_cast<long long>(x.rank() - 2));
  if (grid.dtype != x.dtype) return ctx.fail("grid must have X's dtype");
  std::string m = ctx.attrs().get_string("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  Interp mode;
  if (m == "nearest") mode = Interp::kNearest;
  else if (m == "linear" || m == "bilinear") mode = Interp::kLinear;
  else if (m == "cubic" || m == "bicubic") mode = Interp::kCubic;
  else return ctx.fail("mode '%s' is not supported", m.c_str());
  const std::string pm = ctx.attrs().get_string("padding_mode", "zeros");
  Pad pad;
  if (pm == "zeros") pad = Pad::kZeros;
  else if (pm == "border") pad = Pad::kBorder;
  else if (pm == "reflection") pad = Pad::kReflection;
  else return ctx.fail("padding_mode '%s' is not supported", pm.c_str());
  const bool align = ctx.attrs().get_int("align_corners", 0) != 0;
  if (ctx.output(0).elements() == 0) return Status::Ok();
  for (int64_t i = 2; i < x.rank(); ++i)
    if (x.dims[i] == 0) return ctx.fail("X has an empty spatial axis");
  Status st = Status::Ok();
  dispatch<kFloats>(x.dtype, [&](auto tag) { st = grid_sample_typed<typename decltype(tag)::type>(ctx, mode, pad, align); });
  return st;
}

// AffineGrid: grid[n, (d,) h, w] = theta[n] · (x_w, y_h, (z_d,) 1).
template <class T>
Status affine_grid_typed(KernelContext& ctx) {
  const Tensor& theta = ctx.input(0);
  Tensor& y = ctx.output(0);
  const bool align = ctx.attrs().get_int("align_corners", 0) != 0;
  const int64_t r = y.rank() - 2;  // 2 or 3 spatial axes
  const int64_t n = y.dims[0];
  if ((r != 2 && r != 3) || theta.rank() != 3 || theta.dims[0] != n || theta.dims[1] != r || theta.dims[2] != r + 1)
    return ctx.fail("theta must be [N, %lld, %lld]", static_cast<long long>(r), static_cast<long long>(r + 1));
  std::vector<int64_t> sp(y.dims.begin() + 1, y.dims.end() - 1);  // (D,) H, W
  auto coord = [&](int64_t i, int64_t size) {
    if (align) return size == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(size - 1);
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(size);
  };
  int64_t pts = 1;
  for (int64_t s : sp) pts *= s;
  const T* th = theta.as<T>();
  T* out = y.as<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t p = 0; p < pts; ++p) {
      double base[4];
      int64_t rem = p;
      // base = (x, y, (z,) 1): x follows the last axis.
      for (int64_t a = r - 1; a >= 0; --a) {
        base[r - 1 - a] = coord(rem % sp[a], sp[a]);
        rem /= sp[a];
      }
      base[r] = 1.0;
      for (int64_t o = 0; o < r; ++o) {
        double acc = 0;
        for (int64_t k = 0; k <= r; ++k) acc += static_cast<double>(load(th[(b * r + o) * (r + 1) + k])) * base[k];
        out[(b * pts + p) * r + o] = store<T>(static_cast<ComputeType<T>>(acc));
      }
    }
  return Status::Ok();
}

Status affine_grid(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = affine_grid_typed<typename decltype(tag)::type>(ctx); }))
    return ctx.fail("theta must be a float tensor");
  return st;
}

OPENACL_REGISTER_KERNEL(GridSample, "cpu").types(float_types()).run(grid_sample);
OPENACL_REGISTER_KERNEL(AffineGrid, "cpu").types(float_types()).run(affine_grid);

}  // namespace
}  // namespace openacl::kernels::cpu
