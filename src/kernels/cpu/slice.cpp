// Slice (opset 1-9 attributes; 10+ inputs with axes and steps, negative steps,
// ONNX clamping): each output coordinate maps to start + o * step.
#include <algorithm>
#include <climits>

#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

Status read_opt(KernelContext& ctx, size_t i, const char* name, std::vector<int64_t>* v, bool* given) {
  *given = ctx.has_input(i) && ctx.input(i).dtype != DType::kUndefined;
  if (!*given) return Status::Ok();
  const Tensor& t = ctx.input(i);
  if (!is_index_type(t.dtype) || !read_ints(t, v)) return ctx.fail("%s must be int32 or int64", name);
  return Status::Ok();
}

Status slice(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  bool has_axes = false, has_steps = false;
  if (ctx.opset() < 10) {
    auto s = ctx.attrs().get_ints("starts");
    auto e = ctx.attrs().get_ints("ends");
    if (!s || !e) return ctx.fail("the starts and ends attributes are required");
    starts = *s;
    ends = *e;
    if (auto a = ctx.attrs().get_ints("axes")) {
      axes = *a;
      has_axes = true;
    }
  } else {
    bool g1, g2;
    OPENACL_RETURN_IF_ERROR(read_opt(ctx, 1, "starts", &starts, &g1));
    OPENACL_RETURN_IF_ERROR(read_opt(ctx, 2, "ends", &ends, &g2));
    if (!g1 || !g2) return ctx.fail("the starts and ends inputs are required");
    OPENACL_RETURN_IF_ERROR(read_opt(ctx, 3, "axes", &axes, &has_axes));
    OPENACL_RETURN_IF_ERROR(read_opt(ctx, 4, "steps", &steps, &has_steps));
  }
  const size_t n = starts.size();
  if (!has_axes)
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (!has_steps) steps.assign(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    return ctx.fail("starts, ends, axes and steps differ in length");
  std::vector<int64_t> first(r, 0), step(r, 1), len(x.dims);
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes[i];
    if (!norm_axis(&a, r) || seen[a]) return ctx.fail("axis %lld out of range or repeated", static_cast<long long>(axes[i]));
    seen[a] = true;
    const int64_t d = x.dims[a], st = steps[i];
    if (st == 0) return ctx.fail("step is 0");
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s = s < INT64_MIN + d ? INT64_MIN : s + d;
    if (e < 0) e = e < INT64_MIN + d ? INT64_MIN : e + d;
    int64_t l = 0;
    if (d == 0) {
      s = 0;
    } else if (st > 0) {
      s = std::clamp<int64_t>(s, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      l = e > s ? (e - s - 1) / st + 1 : 0;
    } else {
      s = std::clamp<int64_t>(s, 0, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      l = s > e ? (st == INT64_MIN ? 1 : (s - e - 1) / (-st) + 1) : 0;
    }
    first[a] = s;
    step[a] = st;
    len[a] = l;
  }
  if (y.dims != len) return ctx.fail("output dims disagree with the slice");
  if (y.elements() == 0) return Status::Ok();
  std::vector<std::vector<int64_t>> maps(r);
  for (int64_t a = 0; a < r; ++a) {
    maps[a].resize(len[a]);
    for (int64_t o = 0; o < len[a]; ++o) maps[a][o] = first[a] + o * step[a];
  }
  map_copy(x, y, maps, nullptr);
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Slice, "cpu").types(movable_types()).run(slice);

}  // namespace
}  // namespace openacl::kernels::cpu
