// NonMaxSuppression (opset 10/11): greedy per-(batch, class) selection by
// score, dropping boxes whose IoU with a kept box exceeds the threshold. The
// number of selections depends on the data, so the output is allocated here.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

struct Box {
  float x0, y0, x1, y1, area;
};

template <class T>
float scalar_of(const Tensor& t, float fallback) {
  return t.elements() > 0 ? static_cast<float>(load(t.as<T>()[0])) : fallback;
}

float read_scalar(const KernelContext& ctx, size_t i, float fallback) {
  if (!ctx.has_input(i)) return fallback;
  const Tensor& t = ctx.input(i);
  float v = fallback;
  dispatch<kNumeric>(t.dtype, [&](auto tag) { v = scalar_of<typename decltype(tag)::type>(t, fallback); });
  return v;
}

// True when b suppresses a (IoU strictly above the threshold).
bool overlaps(const Box& a, const Box& b, float iou_threshold) {
  const float ix0 = std::max(a.x0, b.x0), ix1 = std::min(a.x1, b.x1);
  if (ix1 <= ix0) return false;
  const float iy0 = std::max(a.y0, b.y0), iy1 = std::min(a.y1, b.y1);
  if (iy1 <= iy0) return false;
  const float inter = (ix1 - ix0) * (iy1 - iy0);
  const float uni = a.area + b.area - inter;
  if (a.area <= 0 || b.area <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

template <class T>
Status nms_typed(KernelContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  if (boxes.rank() != 3 || boxes.dims[2] != 4) return ctx.fail("boxes must be [batch, boxes, 4]");
  if (scores.rank() != 3) return ctx.fail("scores must be [batch, classes, boxes]");
  const int64_t nb = boxes.dims[0], n = boxes.dims[1], nc = scores.dims[1];
  if (scores.dims[0] != nb || scores.dims[2] != n) return ctx.fail("boxes and scores disagree on batch or box count");
  int64_t max_out = 0;
  if (ctx.has_input(2) && ctx.input(2).elements() > 0) {
    const Tensor& m = ctx.input(2);
    if (m.dtype != DType::kInt64) return ctx.fail("max_output_boxes_per_class must be int64");
    max_out = std::max<int64_t>(0, m.as<int64_t>()[0]);
  }
  const float iou = read_scalar(ctx, 3, 0.f);
  const bool has_score_threshold = ctx.has_input(4) && ctx.input(4).elements() > 0;
  const float score_threshold = read_scalar(ctx, 4, 0.f);
  const int64_t center = ctx.attrs().get_int("center_point_box", 0);
  if (center != 0 && center != 1) return ctx.fail("center_point_box must be 0 or 1");

  std::vector<int64_t> selected;  // triples
  std::vector<Box> bx(static_cast<size_t>(n));
  std::vector<std::pair<float, int64_t>> cand;
  std::vector<int64_t> kept;
  const T* bd = boxes.as<T>();
  const T* sd = scores.as<T>();
  for (int64_t b = 0; b < nb && max_out > 0; ++b) {
    for (int64_t i = 0; i < n; ++i) {
      const T* p = bd + (b * n + i) * 4;
      const float v0 = static_cast<float>(load(p[0])), v1 = static_cast<float>(load(p[1]));
      const float v2 = static_cast<float>(load(p[2])), v3 = static_cast<float>(load(p[3]));
      Box& q = bx[i];
      if (center == 0) {  // [y0, x0, y1, x1], corners in any order
        q.y0 = std::min(v0, v2), q.y1 = std::max(v0, v2);
        q.x0 = std::min(v1, v3), q.x1 = std::max(v1, v3);
      } else {  // [xc, yc, w, h]
        q.x0 = v0 - v2 / 2, q.x1 = v0 + v2 / 2;
        q.y0 = v1 - v3 / 2, q.y1 = v1 + v3 / 2;
      }
      q.area = (q.x1 - q.x0) * (q.y1 - q.y0);
    }
    for (int64_t c = 0; c < nc; ++c) {
      const T* s = sd + (b * nc + c) * n;
      cand.clear();
      for (int64_t i = 0; i < n; ++i) {
        const float v = static_cast<float>(load(s[i]));
        if (std::isnan(v)) continue;  // unordered: it would break the sort
        if (!has_score_threshold || v > score_threshold) cand.emplace_back(v, i);
      }
      std::stable_sort(cand.begin(), cand.end(), [](const auto& l, const auto& r) { return l.first > r.first; });
      kept.clear();
      for (const auto& [score, i] : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool drop = false;
        for (int64_t k : kept)
          if (overlaps(bx[i], bx[k], iou)) {
            drop = true;
            break;
          }
        if (drop) continue;
        kept.push_back(i);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  Tensor* out = &ctx.output(0);
  const int64_t count = static_cast<int64_t>(selected.size() / 3);
  if (out->data == nullptr || out->dims != std::vector<int64_t>{count, 3})
    OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, {count, 3}, &out));
  if (count) std::copy(selected.begin(), selected.end(), out->as<int64_t>());
  return Status::Ok();
}

Status nms(KernelContext& ctx) {
  Status st = Status::Ok();
  if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) { st = nms_typed<typename decltype(tag)::type>(ctx); }))
    return ctx.fail("boxes must be a float tensor");
  if (ctx.input(1).dtype != ctx.input(0).dtype) return ctx.fail("scores must have the dtype of boxes");
  return st;
}

OPENACL_REGISTER_KERNEL(NonMaxSuppression, "cpu").types(float_types()).run(nms);

}  // namespace
}  // namespace openacl::kernels::cpu
