// RoiAlign (opset 10/16): average or max of bilinear samples on a regular grid
// inside each bin. Opset 10 has only the "output_half_pixel" coordinates;
// opset 16 defaults to "half_pixel" (shifted by half a pixel, no min size).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

struct Sample {
  int64_t pos[4];
  float w[4];
};

template <class T, class I>
Status roi_align_typed(KernelContext& ctx, bool half_pixel, bool max_mode) {
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& bi = ctx.input(2);
  Tensor& y = ctx.output(0);
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], w = x.dims[3];
  const int64_t nr = rois.dims[0], ph = y.dims[2], pw = y.dims[3];
  const float scale = ctx.attrs().get_float("spatial_scale", 1.f);
  const int64_t ratio = ctx.attrs().get_int("sampling_ratio", 0);
  const T* rd = rois.as<T>();
  const I* bd = bi.as<I>();
  for (int64_t r = 0; r < nr; ++r)
    if (bd[r] < 0 || bd[r] >= n)
      return ctx.fail("batch_indices[%lld] = %lld is out of range [0, %lld)", (long long)r, (long long)bd[r],
                      (long long)n);
  const T* xd = x.as<T>();
  T* yd = y.as<T>();
  std::atomic<int64_t> bad_roi{-1};
  parallel_for(nr, 1, [&](int64_t rb, int64_t re) {
    std::vector<Sample> samples;
    for (int64_t r = rb; r < re; ++r) {
      const float off = half_pixel ? 0.5f : 0.f;
      const float sw = static_cast<float>(load(rd[r * 4 + 0])) * scale - off;
      const float sh = static_cast<float>(load(rd[r * 4 + 1])) * scale - off;
      const float ew = static_cast<float>(load(rd[r * 4 + 2])) * scale - off;
      const float eh = static_cast<float>(load(rd[r * 4 + 3])) * scale - off;
      float rw = ew - sw, rh = eh - sh;
      if (!half_pixel) {
        rw = std::max(rw, 1.f);
        rh = std::max(rh, 1.f);
      }
      const float bh = rh / static_cast<float>(ph), bw = rw / static_cast<float>(pw);
      // Rois are data: a non-finite or absurdly large one is refused rather
      // than turned into a huge sampling grid.
      const double ghd = ratio > 0 ? static_cast<double>(ratio) : std::ceil(rh / static_cast<float>(ph));
      const double gwd = ratio > 0 ? static_cast<double>(ratio) : std::ceil(rw / static_cast<float>(pw));
      if (!(ghd <= 4096 && gwd <= 4096) || !std::isfinite(sw) || !std::isfinite(sh) ||
          static_cast<double>(ph * pw) * std::max(ghd, 0.0) * std::max(gwd, 0.0) > double(1 << 26)) {
        bad_roi = r;
        return;
      }
      const int64_t gh_n = std::max<int64_t>(static_cast<int64_t>(ghd), 0);
      const int64_t gw_n = std::max<int64_t>(static_cast<int64_t>(gwd), 0);
      const float count = static_cast<float>(std::max<int64_t>(gh_n * gw_n, 1));
      samples.assign(static_cast<size_t>(ph * pw * gh_n * gw_n), Sample{});
      size_t k = 0;
      for (int64_t py = 0; py < ph; ++py)
        for (int64_t px = 0; px < pw; ++px)
          for (int64_t iy = 0; iy < gh_n; ++iy) {
            const float yy0 = sh + static_cast<float>(py) * bh + (static_cast<float>(iy) + 0.5f) * bh / static_cast<float>(gh_n);
            for (int64_t ix = 0; ix < gw_n; ++ix, ++k) {
              float yy = yy0;
              float xx = sw + static_cast<float>(px) * bw + (static_cast<float>(ix) + 0.5f) * bw / static_cast<float>(gw_n);
              Sample& s = samples[k];
              if (!(yy >= -1.f && yy <= static_cast<float>(h) && xx >= -1.f && xx <= static_cast<float>(w))) continue;
              yy = std::max(yy, 0.f);
              xx = std::max(xx, 0.f);
              int64_t y0 = static_cast<int64_t>(yy), x0 = static_cast<int64_t>(xx), y1, x1;
              if (y0 >= h - 1) { y0 = y1 = h - 1; yy = static_cast<float>(y0); } else { y1 = y0 + 1; }
              if (x0 >= w - 1) { x0 = x1 = w - 1; xx = static_cast<float>(x0); } else { x1 = x0 + 1; }
              const float ly = yy - static_cast<float>(y0), lx = xx - static_cast<float>(x0);
              const float hy = 1.f - ly, hx = 1.f - lx;
              s.pos[0] = y0 * w + x0, s.pos[1] = y0 * w + x1, s.pos[2] = y1 * w + x0, s.pos[3] = y1 * w + x1;
              s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
            }
          }
      const int64_t per_bin = gh_n * gw_n;
      for (int64_t ch = 0; ch < c; ++ch) {
        const T* img = xd + (static_cast<int64_t>(bd[r]) * c + ch) * h * w;
        T* out = yd + (r * c + ch) * ph * pw;
        for (int64_t b = 0; b < ph * pw; ++b) {
          const Sample* s = samples.data() + b * per_bin;
          float acc = 0.f;
          for (int64_t q = 0; q < per_bin; ++q) {
            const Sample& p = s[q];
            if (max_mode) {
              // The spec's (and onnxruntime's) max mode: max over the weighted corners.
              float v = p.w[0] * static_cast<float>(load(img[p.pos[0]]));
              for (int z = 1; z < 4; ++z) v = std::max(v, p.w[z] * static_cast<float>(load(img[p.pos[z]])));
              acc = q == 0 ? v : std::max(acc, v);
            } else {
              acc += p.w[0] * static_cast<float>(load(img[p.pos[0]])) + p.w[1] * static_cast<float>(load(img[p.pos[1]])) +
                     p.w[2] * static_cast<float>(load(img[p.pos[2]])) + p.w[3] * static_cast<float>(load(img[p.pos[3]]));
            }
          }
          out[b] = store<T>(max_mode ? acc : acc / count);
        }
      }
    }
  });
  if (bad_roi >= 0) return ctx.fail("roi %lld is not finite or too large to sample", static_cast<long long>(bad_roi.load()));
  return Status::Ok();
}

Status roi_align(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  const Tensor& bi = ctx.input(2);
  if (x.rank() != 4) return ctx.fail("X must be 4-D");
  if (rois.rank() != 2 || rois.dims[1] != 4) return ctx.fail("rois must be [num_rois, 4]");
  if (bi.rank() != 1 || bi.dims[0] != rois.dims[0]) return ctx.fail("batch_indices must be [num_rois]");
  if (rois.dtype != x.dtype) return ctx.fail("rois must have the dtype of X");
  const std::string mode = ctx.attrs().get_string("mode", "avg");
  if (mode != "avg" && mode != "max") return ctx.fail("mode '%s' is not avg or max", mode.c_str());
  const std::string ct =
      ctx.attrs().get_string("coordinate_transformation_mode", ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (ct != "half_pixel" && ct != "output_half_pixel")
    return ctx.fail("coordinate_transformation_mode '%s' is not supported", ct.c_str());
  if (bi.dtype != DType::kInt64 && bi.dtype != DType::kInt32) return ctx.fail("batch_indices must be int64");
  if (ctx.output(0).elements() == 0) return Status::Ok();
  if (x.dims[2] == 0 || x.dims[3] == 0) return ctx.fail("X has an empty spatial axis");
  Status st = Status::Ok();
  dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    st = bi.dtype == DType::kInt64 ? roi_align_typed<T, int64_t>(ctx, ct == "half_pixel", mode == "max")
                                   : roi_align_typed<T, int32_t>(ctx, ct == "half_pixel", mode == "max");
  });
  return st;
}

OPENACL_REGISTER_KERNEL(RoiAlign, "cpu").types(float_types()).run(roi_align);

}  // namespace
}  // namespace openacl::kernels::cpu
