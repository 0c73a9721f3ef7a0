// Window geometry and reference Conv / ConvTranspose (see conv_ref.h).
#include "kernels/cpu/conv_ref.h"

#include <algorithm>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Reads strides/dilations/pads (defaults 1/1/0) for n axes.
std::string read_common(const graph::AttributeMap& a, int n, std::vector<int64_t>* s, std::vector<int64_t>* d,
                        std::vector<int64_t>* p) {
  *s = a.get_ints("strides").value_or(std::vector<int64_t>(n, 1));
  *d = a.get_ints("dilations").value_or(std::vector<int64_t>(n, 1));
  *p = a.get_ints("pads").value_or(std::vector<int64_t>(2 * n, 0));
  if (static_cast<int>(s->size()) != n || static_cast<int>(d->size()) != n || static_cast<int>(p->size()) != 2 * n)
    return "strides " + ints_str(*s) + ", dilations " + ints_str(*d) + " or pads " + ints_str(*p) +
           " do not match " + std::to_string(n) + " spatial axes";
  for (int i = 0; i < n; ++i) {
    if ((*s)[i] < 1 || (*d)[i] < 1) return "strides and dilations must be >= 1";
    if ((*p)[i] < 0 || (*p)[i + n] < 0) return "pads must be >= 0";
  }
  return "";
}

std::string check_ranks(const std::vector<int64_t>& x, const std::vector<int64_t>* w, WindowGeom* g) {
  if (x.size() < 3 || x.size() > 2 + kMaxSpatial)
    return "input of rank " + std::to_string(x.size()) + " (1..3 spatial axes are supported)";
  if (w && w->size() != x.size()) return "weight rank " + std::to_string(w->size()) + " != input rank " + std::to_string(x.size());
  for (int64_t v : x)
    if (v < 0) return "negative input dim";
  g->nsp = static_cast<int>(x.size()) - 2;
  g->N = x[0];
  g->C = x[1];
  return "";
}

// Forward window (Conv, pools): fills axis p from input size `in`.
std::string forward_axis(WindowGeom* g, int p, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                         const std::string& auto_pad, bool ceil_mode) {
  if (k < 1) return "kernel size must be >= 1";
  const int64_t eff = (k - 1) * d + 1;
  int64_t out;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + eff - in);
    pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pe = total - pb;
  } else {
    if (auto_pad == "VALID") pb = pe = 0;
    else if (auto_pad != "NOTSET" && !auto_pad.empty()) return "unknown auto_pad '" + auto_pad + "'";
    const int64_t span = in + pb + pe - eff;
    if (span < 0) return "input smaller than the window";
    out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + pb) --out;  // last window must start inside input or leading pad
  }
  g->in[p] = in, g->out[p] = out, g->k[p] = k, g->s[p] = s, g->d[p] = d, g->pb[p] = pb, g->pe[p] = pe;
  return "";
}

}  // namespace

std::string conv_geom(const graph::AttributeMap& a, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                      WindowGeom* g) {
  *g = WindowGeom();
  std::string err = check_ranks(x, &w, g);
  if (!err.empty()) return err;
  const int n = g->nsp;
  g->G = a.get_int("group", 1);
  g->M = w[0];
  if (g->G < 1 || g->C % g->G != 0 || g->M % g->G != 0 || w[1] * g->G != g->C)
    return "channels: X " + ints_str(x) + ", W " + ints_str(w) + ", group " + std::to_string(g->G) + " disagree";
  std::vector<int64_t> s, d, p;
  if (!(err = read_common(a, n, &s, &d, &p)).empty()) return err;
  if (auto ks = a.get_ints("kernel_shape"))
    if (*ks != std::vector<int64_t>(w.begin() + 2, w.end())) return "kernel_shape disagrees with W " + ints_str(w);
  const std::string ap = a.get_string("auto_pad", "NOTSET");
  for (int i = 0; i < n; ++i) {
    err = forward_axis(g, kMaxSpatial - n + i, x[2 + i], w[2 + i], s[i], d[i], p[i], p[i + n], ap, false);
    if (!err.empty()) return err;
  }
  return "";
}

std::string conv_transpose_geom(const graph::AttributeMap& a, const std::vector<int64_t>& x,
                                const std::vector<int64_t>& w, WindowGeom* g) {
  *g = WindowGeom();
  std::string err = check_ranks(x, &w, g);
  if (!err.empty()) return err;
  const int n = g->nsp;
  g->G = a.get_int("group", 1);
  if (g->G < 1 || g->C % g->G != 0 || w[0] != g->C)
    return "channels: X " + ints_str(x) + ", W " + ints_str(w) + ", group " + std::to_string(g->G) + " disagree";
  g->M = w[1] * g->G;
  std::vector<int64_t> s, d, p;
  if (!(err = read_common(a, n, &s, &d, &p)).empty()) return err;
  const std::vector<int64_t> op = a.get_ints("output_padding").value_or(std::vector<int64_t>(n, 0));
  if (static_cast<int>(op.size()) != n) return "output_padding " + ints_str(op) + " does not match the spatial axes";
  auto os = a.get_ints("output_shape");
  if (os && static_cast<int>(os->size()) == n + 2) os->erase(os->begin(), os->begin() + 2);
  if (os && static_cast<int>(os->size()) != n) return "output_shape " + ints_str(*os) + " does not match the spatial axes";
  const std::string ap = a.get_string("auto_pad", "NOTSET");
  const bool same = ap == "SAME_UPPER" || ap == "SAME_LOWER";
  for (int i = 0; i < n; ++i) {
    const int q = kMaxSpatial - n + i;
    const int64_t in = x[2 + i], k = w[2 + i], eff = (k - 1) * d[i] + 1;
    if (k < 1) return "kernel size must be >= 1";
    int64_t out, pb, pe;
    if (os || same) {
      out = os ? (*os)[i] : in * s[i];
      const int64_t total = s[i] * (in - 1) + op[i] + eff - out;
      pb = ap == "SAME_UPPER" ? floor_div2(total) : total - floor_div2(total);
      pe = total - pb;
    } else {
      pb = ap == "VALID" ? 0 : p[i];
      pe = ap == "VALID" ? 0 : p[i + n];
      out = s[i] * (in - 1) + op[i] + eff - pb - pe;
    }
    if (out < 0) return "negative output size";
    g->in[q] = in, g->out[q] = out, g->k[q] = k, g->s[q] = s[i], g->d[q] = d[i], g->pb[q] = pb, g->pe[q] = pe;
  }
  return "";
}

std::string pool_geom(const graph::AttributeMap& a, const std::vector<int64_t>& x, WindowGeom* g) {
  *g = WindowGeom();
  std::string err = check_ranks(x, nullptr, g);
  if (!err.empty()) return err;
  const int n = g->nsp;
  g->M = g->G = g->C;
  auto ks = a.get_ints("kernel_shape");
  if (!ks || static_cast<int>(ks->size()) != n) return "kernel_shape must have one entry per spatial axis";
  std::vector<int64_t> s, d, p;
  if (!(err = read_common(a, n, &s, &d, &p)).empty()) return err;
  const std::string ap = a.get_string("auto_pad", "NOTSET");
  const bool ceil_mode = a.get_int("ceil_mode", 0) != 0;
  for (int i = 0; i < n; ++i) {
    err = forward_axis(g, kMaxSpatial - n + i, x[2 + i], (*ks)[i], s[i], d[i], p[i], p[i + n], ap, ceil_mode);
    if (!err.empty()) return err;
  }
  return "";
}

std::vector<int64_t> geom_out_dims(const WindowGeom& g) {
  std::vector<int64_t> o{g.N, g.M};
  for (int i = kMaxSpatial - g.nsp; i < kMaxSpatial; ++i) o.push_back(g.out[i]);
  return o;
}

// Valid output range [lo, hi) on one axis for kernel tap kk: the outputs
// whose input index o*s - pb + kk*d falls inside [0, in).
inline void tap_range(int64_t in, int64_t out, int64_t s, int64_t pb, int64_t kk_off, int64_t* lo, int64_t* hi) {
  const int64_t base = kk_off - pb;  // input index of output 0
  *lo = base >= 0 ? 0 : (-base + s - 1) / s;
  *hi = base >= in ? 0 : std::min<int64_t>(out, (in - 1 - base) / s + 1);
  if (*hi < *lo) *hi = *lo;
}

// Direct convolution, one (n, m) output plane at a time: for every input
// channel and kernel tap, the plane gets w * (shifted input rows); the inner
// loop runs along the output row (contiguous input when the stride is 1).
template <class T>
void conv_ref(const WindowGeom& g, const T* x, const T* w, const T* b, T* y) {
  const int64_t Cg = g.C / g.G, Mg = g.M / g.G, isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  const int64_t work = osz * Cg * ksz;
  parallel_for(g.N * g.M, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, work)), [&](int64_t begin, int64_t end) {
    for (int64_t nm = begin; nm < end; ++nm) {
      const int64_t nn = nm / g.M, m = nm % g.M, grp = m / Mg;
      const T* xg = x + (nn * g.C + grp * Cg) * isz;
      T* yo = y + nm * osz;
      std::fill(yo, yo + osz, b ? b[m] : T(0));
      for (int64_t c = 0; c < Cg; ++c) {
        const T* xc = xg + c * isz;
        for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
          int64_t lo0, hi0;
          tap_range(g.in[0], g.out[0], g.s[0], g.pb[0], k0 * g.d[0], &lo0, &hi0);
          for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
            int64_t lo1, hi1;
            tap_range(g.in[1], g.out[1], g.s[1], g.pb[1], k1 * g.d[1], &lo1, &hi1);
            for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
              int64_t lo2, hi2;
              tap_range(g.in[2], g.out[2], g.s[2], g.pb[2], k2 * g.d[2], &lo2, &hi2);
              const T wv = w[(m * Cg + c) * ksz + (k0 * g.k[1] + k1) * g.k[2] + k2];
              const int64_t s2 = g.s[2], off2 = k2 * g.d[2] - g.pb[2];
              for (int64_t o0 = lo0; o0 < hi0; ++o0) {
                const int64_t i0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
                for (int64_t o1 = lo1; o1 < hi1; ++o1) {
                  const int64_t i1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
                  const T* xr = xc + (i0 * g.in[1] + i1) * g.in[2];
                  T* yr = yo + (o0 * g.out[1] + o1) * g.out[2];
                  if (s2 == 1) {
#pragma omp simd
                    for (int64_t o2 = lo2; o2 < hi2; ++o2) yr[o2] += wv * xr[o2 + off2];
                  } else {
                    for (int64_t o2 = lo2; o2 < hi2; ++o2) yr[o2] += wv * xr[o2 * s2 + off2];
                  }
                }
              }
            }
          }
        }
      }
    }
  });
}

template <class T>
void conv_transpose_ref(const WindowGeom& g, const T* x, const T* w, const T* b, T* y) {
  const int64_t Cg = g.C / g.G, Mg = g.M / g.G, isz = g.in_size(), osz = g.out_size(), ksz = g.k_size();
  const int64_t work = isz * Cg * ksz;
  parallel_for(g.N * g.M, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, work)), [&](int64_t begin, int64_t end) {
    for (int64_t nm = begin; nm < end; ++nm) {
      const int64_t nn = nm / g.M, m = nm % g.M, grp = m / Mg, mm = m % Mg;
      T* yo = y + nm * osz;
      std::fill(yo, yo + osz, b ? b[m] : T(0));
      for (int64_t c = 0; c < Cg; ++c) {
        const T* xc = x + (nn * g.C + grp * Cg + c) * isz;
        const T* wc = w + ((grp * Cg + c) * Mg + mm) * ksz;
        for (int64_t i0 = 0; i0 < g.in[0]; ++i0)
          for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
            const int64_t o0 = i0 * g.s[0] - g.pb[0] + k0 * g.d[0];
            if (o0 < 0 || o0 >= g.out[0]) continue;
            for (int64_t i1 = 0; i1 < g.in[1]; ++i1)
              for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                const int64_t o1 = i1 * g.s[1] - g.pb[1] + k1 * g.d[1];
                if (o1 < 0 || o1 >= g.out[1]) continue;
                const T* xr = xc + (i0 * g.in[1] + i1) * g.in[2];
                const T* wr = wc + (k0 * g.k[1] + k1) * g.k[2];
                T* yr = yo + (o0 * g.out[1] + o1) * g.out[2];
                for (int64_t i2 = 0; i2 < g.in[2]; ++i2)
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    const int64_t o2 = i2 * g.s[2] - g.pb[2] + k2 * g.d[2];
                    if (o2 >= 0 && o2 < g.out[2]) yr[o2] += xr[i2] * wr[k2];
                  }
              }
          }
      }
    }
  });
}

template void conv_ref<float>(const WindowGeom&, const float*, const float*, const float*, float*);
template void conv_ref<double>(const WindowGeom&, const double*, const double*, const double*, double*);
template void conv_ref<int32_t>(const WindowGeom&, const int32_t*, const int32_t*, const int32_t*, int32_t*);
template void conv_transpose_ref<float>(const WindowGeom&, const float*, const float*, const float*, float*);
template void conv_transpose_ref<double>(const WindowGeom&, const double*, const double*, const double*, double*);

}  // namespace openacl::kernels::cpu
