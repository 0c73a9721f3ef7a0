// DeformConv (opset 19+), 2-D: a convolution whose kernel taps are moved by
// learned per-position offsets. Tap (y, x) of output (i, j) reads the input at
//   (i*stride_h - pad_top  + y*dil_h + off_h,  j*stride_w - pad_left + x*dil_w + off_w)
// by bilinear interpolation (corners outside the image read 0), scaled by the
// optional mask. Offsets/masks come per offset group of input channels:
//   offset [N, offset_group * kH * kW * 2, oH, oW]  (h then w per tap)
//   mask   [N, offset_group * kH * kW,     oH, oW]
// Done as deformable im2col (columns [C/group * kH * kW, oH * oW] per group)
// followed by a plain product with the weights, both parallel.
#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

template <class T>
Status deform_conv_typed(KernelContext& ctx) {
  using C = ComputeType<T>;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& off = ctx.input(2);
  if (x.rank() != 4 || w.rank() != 4 || off.rank() != 4)
    return ctx.fail("only 2-D DeformConv (4-D X, W and offset) is supported");
  const graph::AttributeMap& at = ctx.attrs();
  const int64_t N = x.dims[0], IC = x.dims[1], IH = x.dims[2], IW = x.dims[3];
  const int64_t OC = w.dims[0], KH = w.dims[2], KW = w.dims[3];
  const int64_t group = at.get_int("group", 1), og = at.get_int("offset_group", 1);
  if (group < 1 || og < 1) return ctx.fail("group and offset_group must be >= 1");
  if (IC != w.dims[1] * group || OC % group) return ctx.fail("X channels, W shape and group disagree");
  if (IC % og) return ctx.fail("input channels are not divisible by offset_group");
  auto ints = [&](const char* name, std::vector<int64_t> def) {
    auto v = at.get_ints(name);
    return v ? *v : def;
  };
  const std::vector<int64_t> ks = ints("kernel_shape", {KH, KW});
  const std::vector<int64_t> st = ints("strides", {1, 1}), dil = ints("dilations", {1, 1}), pads = ints("pads", {0, 0, 0, 0});
  if (ks.size() != 2 || ks[0] != KH || ks[1] != KW) return ctx.fail("kernel_shape disagrees with W");
  if (st.size() != 2 || dil.size() != 2 || pads.size() != 4) return ctx.fail("strides, dilations or pads have the wrong length");
  Tensor& y = ctx.output(0);
  if (y.rank() != 4) return ctx.fail("unexpected output rank");
  const int64_t OH = y.dims[2], OW = y.dims[3], K = KH * KW, P = OH * OW;
  if (off.dims != std::vector<int64_t>{N, og * K * 2, OH, OW})
    return ctx.fail("offset must be [N, offset_group * kH * kW * 2, %lld, %lld]", (long long)OH, (long long)OW);
  const T* bias = nullptr;
  if (ctx.has_input(3)) {
    if (ctx.input(3).elements() != OC) return ctx.fail("B must have %lld elements", (long long)OC);
    bias = ctx.input(3).as<const T>();
  }
  const T* mask = nullptr;
  if (ctx.has_input(4)) {
    if (ctx.input(4).dims != std::vector<int64_t>{N, og * K, OH, OW})
      return ctx.fail("mask must be [N, offset_group * kH * kW, oH, oW]");
    mask = ctx.input(4).as<const T>();
  }
  for (size_t i : {1, 2, 3, 4})
    if (ctx.has_input(i) && ctx.input(i).dtype != x.dtype) return ctx.fail("input %zu must have X's dtype", i);

  const T* xd = x.as<const T>();
  const T* wd = w.as<const T>();
  const T* od = off.as<const T>();
  T* yd = y.as<T>();
  const int64_t icg = IC / group, ocg = OC / group, ic_per_og = IC / og;
  std::vector<C> wf(static_cast<size_t>(w.elements()));
  for (size_t i = 0; i < wf.size(); ++i) wf[i] = load(wd[i]);
  std::vector<C> cols(static_cast<size_t>(IC * K * P));  // row (c, ky, kx), column position
  std::vector<C> acc_rows(static_cast<size_t>(OC * P));
  for (int64_t n = 0; n < N; ++n) {
    const T* on = od + n * og * K * 2 * P;
    const T* mn = mask ? mask + n * og * K * P : nullptr;
    parallel_for(IC * K, 4, [&](int64_t begin, int64_t end) {
      for (int64_t ck = begin; ck < end; ++ck) {
        const int64_t c = ck / K, k = ck % K, ky = k / KW, kx = k % KW, g = c / ic_per_og;
        const T* img = xd + (n * IC + c) * IH * IW;
        const T* oh_p = on + ((g * K + k) * 2) * P;
        const T* ow_p = oh_p + P;
        const T* m_p = mn ? mn + (g * K + k) * P : nullptr;
        C* col = cols.data() + ck * P;
        for (int64_t i = 0; i < OH; ++i)
          for (int64_t j = 0; j < OW; ++j) {
            const int64_t p = i * OW + j;
            const C h = static_cast<C>(i * st[0] - pads[0] + ky * dil[0]) + load(oh_p[p]);
            const C wv = static_cast<C>(j * st[1] - pads[1] + kx * dil[1]) + load(ow_p[p]);
            C v = 0;
            if (h > C(-1) && h < C(IH) && wv > C(-1) && wv < C(IW)) {
              const C hf = std::floor(h), wf0 = std::floor(wv);
              const int64_t h0 = static_cast<int64_t>(hf), w0 = static_cast<int64_t>(wf0);
              const C lh = h - hf, lw = wv - wf0;
              auto at_px = [&](int64_t yy, int64_t xx) -> C {
                return yy >= 0 && yy < IH && xx >= 0 && xx < IW ? static_cast<C>(load(img[yy * IW + xx])) : C(0);
              };
              v = (1 - lh) * (1 - lw) * at_px(h0, w0) + (1 - lh) * lw * at_px(h0, w0 + 1) +
                  lh * (1 - lw) * at_px(h0 + 1, w0) + lh * lw * at_px(h0 + 1, w0 + 1);
            }
            if (m_p) v *= load(m_p[p]);
            col[p] = v;
          }
      }
    });
    parallel_for(OC, 1, [&](int64_t begin, int64_t end) {
      for (int64_t oc = begin; oc < end; ++oc) {
        const int64_t g = oc / ocg;
        C* acc = acc_rows.data() + oc * P;
        const C b0 = bias ? static_cast<C>(load(bias[oc])) : C(0);
        for (int64_t p = 0; p < P; ++p) acc[p] = b0;
        for (int64_t r = 0; r < icg * K; ++r) {
          const C wv = wf[static_cast<size_t>(oc * icg * K + r)];
          const C* col = cols.data() + (g * icg * K + r) * P;
#pragma omp simd
          for (int64_t p = 0; p < P; ++p) acc[p] += wv * col[p];
        }
        T* yo = yd + (n * OC + oc) * P;
        for (int64_t p = 0; p < P; ++p) yo[p] = store<T>(acc[p]);
      }
    });
  }
  return Status::Ok();
}

Status deform_conv(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = deform_conv_typed<typename decltype(tag)::type>(ctx); }))
    return ctx.fail("X must be a float tensor");
  return st;
}

OPENACL_REGISTER_KERNEL(DeformConv, "cpu").types(float_types()).run(deform_conv);

}  // namespace
}  // namespace openacl::kernels::cpu
