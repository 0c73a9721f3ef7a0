// DynamicQuantizeLinear (opset 11): uint8 quantisation of a float32 tensor
// with scale and zero point computed from its range (widened to include 0).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

Status dyn_quant(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dtype != DType::kFloat32) return ctx.fail("x must be float32, got %s", graph::dtype_name(x.dtype));
  const float* xp = x.as<float>();
  const int64_t n = x.elements();
  // Per-chunk partial min/max, combined serially: no shared writes in the loop.
  const int64_t chunk = 65536;
  const int64_t nchunks = (n + chunk - 1) / chunk;
  std::vector<float> lo(static_cast<size_t>(nchunks), 0.0f), hi(static_cast<size_t>(nchunks), 0.0f);
  parallel_for(nchunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      float mn = 0.0f, mx = 0.0f;  // the range always includes 0
      const int64_t s = c * chunk, t = std::min(n, s + chunk);
      for (int64_t i = s; i < t; ++i) {
        mn = std::min(mn, xp[i]);
        mx = std::max(mx, xp[i]);
      }
      lo[c] = mn;
      hi[c] = mx;
    }
  });
  float mn = 0.0f, mx = 0.0f;
  for (int64_t c = 0; c < nchunks; ++c) {
    mn = std::min(mn, lo[c]);
    mx = std::max(mx, hi[c]);
  }
  if (!std::isfinite(mn) || !std::isfinite(mx)) return ctx.fail("x holds an infinite value; its range is undefined");
  // As the ONNX reference: an all-zero input gets scale 1/255.
  const float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
  const float zp = std::nearbyint(std::clamp(0.0f - mn / scale, 0.0f, 255.0f));
  uint8_t* y = ctx.output(0).as<uint8_t>();
  parallel_for(n, 16384, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const float q = std::nearbyint(xp[i] / scale) + zp;
      y[i] = static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f));
    }
  });
  if (ctx.has_output(1)) ctx.output(1).as<float>()[0] = scale;
  if (ctx.has_output(2)) ctx.output(2).as<uint8_t>()[0] = static_cast<uint8_t>(zp);
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(DynamicQuantizeLinear, "cpu").types({DType::kFloat32}).run(dyn_quant);

}  // namespace
}  // namespace openacl::kernels::cpu
