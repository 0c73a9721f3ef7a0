// DepthToSpace, SpaceToDepth (6-D transposes), Compress, ReverseSequence,
// CenterCropPad.
#include <cstring>
#include <string>

#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

Status depth_to_space(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.rank() != 4) return ctx.fail("input must be 4-D");
  const int64_t b = ctx.attrs().get_int("blocksize", 0);
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  if (b <= 0 || C % (b * b) != 0) return ctx.fail("blocksize %lld does not divide the channels", static_cast<long long>(b));
  const int64_t c = C / (b * b);
  if (y.dims != std::vector<int64_t>{N, c, H * b, W * b}) return ctx.fail("output dims disagree");
  const std::string mode = ctx.attrs().get_string("mode", "DCR");
  if (mode == "DCR") transpose_bytes(x.data, y.data, {N, b, b, c, H, W}, {0, 3, 4, 1, 5, 2}, elem_size(x));
  else if (mode == "CRD") transpose_bytes(x.data, y.data, {N, c, b, b, H, W}, {0, 1, 4, 2, 5, 3}, elem_size(x));
  else return ctx.fail("unknown mode '%s'", mode.c_str());
  return Status::Ok();
}

Status space_to_depth(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.rank() != 4) return ctx.fail("input must be 4-D");
  const int64_t b = ctx.attrs().get_int("blocksize", 0);
  const int64_t N = x.dims[0], C = x.dims[1], H = x.dims[2], W = x.dims[3];
  if (b <= 0 || H % b != 0 || W % b != 0) return ctx.fail("blocksize %lld does not divide H and W", static_cast<long long>(b));
  if (y.dims != std::vector<int64_t>{N, C * b * b, H / b, W / b}) return ctx.fail("output dims disagree");
  const std::string mode = ctx.attrs().get_string("mode", "DCR");
  const std::vector<int64_t> dims{N, C, H / b, b, W / b, b};
  if (mode == "DCR") transpose_bytes(x.data, y.data, dims, {0, 3, 5, 1, 2, 4}, elem_size(x));
  else if (mode == "CRD") transpose_bytes(x.data, y.data, dims, {0, 1, 3, 5, 2, 4}, elem_size(x));
  else return ctx.fail("unknown mode '%s'", mode.c_str());
  return Status::Ok();
}

Status compress(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  if (cond.dtype != DType::kBool || cond.rank() != 1) return ctx.fail("condition must be a 1-D bool tensor");
  const bool has_axis = ctx.attrs().find("axis") != nullptr;
  int64_t outer = 1, d = x.elements(), inner = 1, axis = 0;
  if (has_axis) {
    axis = ctx.attrs().get_int("axis", 0);
    if (!norm_axis(&axis, x.rank())) return ctx.fail("axis %lld out of range", static_cast<long long>(axis));
    d = x.dims[axis];
    for (int64_t a = 0; a < x.rank(); ++a)
      if (a < axis) outer *= x.dims[a];
      else if (a > axis) inner *= x.dims[a];
  }
  const uint8_t* c = cond.as<const uint8_t>();
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.elements(); ++i) {
    if (!c[i]) continue;
    if (i >= d) return ctx.fail("condition selects index %lld beyond the axis size %lld", static_cast<long long>(i),
                                static_cast<long long>(d));
    keep.push_back(i);
  }
  const int64_t k = static_cast<int64_t>(keep.size());
  std::vector<int64_t> dims;
  if (has_axis) {
    dims = x.dims;
    dims[axis] = k;
  } else {
    dims = {k};
  }
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(ensure_output(ctx, 0, dims, &y));
  const size_t row = static_cast<size_t>(inner) * elem_size(x);
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(y->data);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < k; ++j) std::memcpy(dst + (o * k + j) * row, src + (o * d + keep[j]) * row, row);
  return Status::Ok();
}

Status reverse_sequence(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& lens = ctx.input(1);
  Tensor& y = ctx.output(0);
  if (x.rank() < 2) return ctx.fail("input must have rank >= 2");
  const int64_t ba = ctx.attrs().get_int("batch_axis", 1), ta = ctx.attrs().get_int("time_axis", 0);
  if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0))) return ctx.fail("batch_axis and time_axis must be 0 and 1");
  const int64_t B = x.dims[ba], T = x.dims[ta];
  std::vector<int64_t> L;
  if (!is_index_type(lens.dtype) || !read_ints(lens, &L) || static_cast<int64_t>(L.size()) != B)
    return ctx.fail("sequence_lens must be int64 with one entry per batch");
  for (int64_t v : L)
    if (v < 0 || v > T) return ctx.fail("sequence length %lld out of range", static_cast<long long>(v));
  int64_t inner = 1;
  for (int64_t a = 2; a < x.rank(); ++a) inner *= x.dims[a];
  const size_t row = static_cast<size_t>(inner) * elem_size(x);
  const int64_t d1 = x.dims[1];
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(y.data);
  parallel_for(x.dims[0] * d1, std::max<int64_t>(1, 65536 / static_cast<int64_t>(row + 1)), [&](int64_t b0, int64_t e0) {
    for (int64_t q = b0; q < e0; ++q) {
      const int64_t i0 = q / d1, i1 = q % d1;
      const int64_t b = ba == 0 ? i0 : i1, t = ba == 0 ? i1 : i0;
      const int64_t st = t < L[b] ? L[b] - 1 - t : t;
      const int64_t sq = ba == 0 ? b * d1 + st : st * d1 + b;
      std::memcpy(dst + q * row, src + sq * row, row);
    }
  });
  return Status::Ok();
}

Status center_crop_pad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank();
  std::vector<int64_t> shape, axes;
  if (!is_index_type(ctx.input(1).dtype) || !read_ints(ctx.input(1), &shape)) return ctx.fail("shape must be int64");
  if (auto a = ctx.attrs().get_ints("axes")) axes = *a;
  else
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  if (axes.size() != shape.size()) return ctx.fail("shape has %zu entries for %zu axes", shape.size(), axes.size());
  std::vector<int64_t> out(x.dims);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (!norm_axis(&a, r) || shape[i] < 0) return ctx.fail("bad axis or size");
    out[a] = shape[i];
  }
  if (y.dims != out) return ctx.fail("output dims disagree");
  std::vector<std::vector<int64_t>> maps(r);
  for (int64_t a = 0; a < r; ++a) {
    const int64_t n = x.dims[a], m = out[a];
    maps[a].resize(m);
    // Crop from (n - m) / 2, or pad (m - n) / 2 before.
    const int64_t shift = m <= n ? (n - m) / 2 : -((m - n) / 2);
    for (int64_t o = 0; o < m; ++o) {
      const int64_t i = o + shift;
      maps[a][o] = (i >= 0 && i < n) ? i : -1;
    }
  }
  map_copy(x, y, maps, nullptr);
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(DepthToSpace, "cpu").types(movable_types()).run(depth_to_space);
OPENACL_REGISTER_KERNEL(SpaceToDepth, "cpu").types(movable_types()).run(space_to_depth);
OPENACL_REGISTER_KERNEL(Compress, "cpu").types(movable_types()).run(compress);
OPENACL_REGISTER_KERNEL(ReverseSequence, "cpu").types(movable_types()).run(reverse_sequence);
OPENACL_REGISTER_KERNEL(CenterCropPad, "cpu").types(movable_types()).run(center_crop_pad);

}  // namespace
}  // namespace openacl::kernels::cpu
