// Pad (constant/reflect/edge/wrap; pads as an attribute before opset 11, as an
// input after; axes input from opset 18; negative pads crop). Each output
// coordinate maps to an input coordinate, or to the constant (-1).
#include <cstring>
#include <string>

#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

enum class Mode { kConstant, kReflect, kEdge, kWrap };

// Source coordinate of padded position i (may be outside [0, n)).
int64_t source(int64_t i, int64_t n, Mode m) {
  if (i >= 0 && i < n) return i;
  switch (m) {
    case Mode::kConstant: return -1;
    case Mode::kEdge: return i < 0 ? 0 : n - 1;
    case Mode::kWrap: return ((i % n) + n) % n;
    case Mode::kReflect: {
      if (n == 1) return 0;
      const int64_t p = 2 * (n - 1);
      int64_t k = ((i % p) + p) % p;
      return k >= n ? p - k : k;
    }
  }
  return -1;
}

Status pad(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank();
  const std::string ms = ctx.attrs().get_string("mode", "constant");
  Mode mode;
  if (ms == "constant") mode = Mode::kConstant;
  else if (ms == "reflect") mode = Mode::kReflect;
  else if (ms == "edge") mode = Mode::kEdge;
  else if (ms == "wrap") mode = Mode::kWrap;
  else return ctx.fail("unknown mode '%s'", ms.c_str());

  std::vector<int64_t> pads, axes;
  const size_t es = elem_size(x);
  alignas(16) unsigned char fill[16] = {};
  if (ctx.opset() < 11) {
    auto p = ctx.attrs().get_ints(ctx.opset() < 2 ? "paddings" : "pads");
    if (!p) p = ctx.attrs().get_ints(ctx.opset() < 2 ? "pads" : "paddings");
    if (!p) return ctx.fail("the pads attribute is required");
    pads = *p;
    const float v = ctx.attrs().get_float("value", 0.0f);
    dispatch<kAll>(x.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T t = store<T>(v);
      std::memcpy(fill, &t, sizeof(T));
    });
  } else {
    if (!ctx.has_input(1) || !is_index_type(ctx.input(1).dtype) || !read_ints(ctx.input(1), &pads))
      return ctx.fail("pads must be an int64 input");
    if (ctx.has_input(2) && ctx.input(2).elements() > 0) {
      const Tensor& c = ctx.input(2);
      if (c.dtype != x.dtype) return ctx.fail("constant_value must have the data's type");
      std::memcpy(fill, c.data, es);
    }
    if (ctx.has_input(3)) {
      const Tensor& a = ctx.input(3);
      if (!is_index_type(a.dtype) || !read_ints(a, &axes)) return ctx.fail("axes must be int32 or int64");
    }
  }
  if (axes.empty() && !(ctx.has_input(3) && ctx.opset() >= 18))
    for (int64_t a = 0; a < r; ++a) axes.push_back(a);
  const size_t n = axes.size();
  if (pads.size() != 2 * n) return ctx.fail("pads has %zu entries for %zu axes", pads.size(), n);
  std::vector<int64_t> begin(r, 0), out_dims(x.dims);
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = axes[i];
    if (!norm_axis(&a, r) || seen[a]) return ctx.fail("axis %lld out of range or repeated", static_cast<long long>(axes[i]));
    seen[a] = true;
    begin[a] = pads[i];
    out_dims[a] = x.dims[a] + pads[i] + pads[i + n];
    if (out_dims[a] < 0) return ctx.fail("pads make axis %lld negative", static_cast<long long>(a));
    if (mode != Mode::kConstant && x.dims[a] == 0 && out_dims[a] > 0)
      return ctx.fail("cannot %s-pad an empty axis", ms.c_str());
  }
  if (y.dims != out_dims) return ctx.fail("output dims disagree with pads");
  if (y.elements() == 0) return Status::Ok();
  std::vector<std::vector<int64_t>> maps(r);
  for (int64_t a = 0; a < r; ++a) {
    maps[a].resize(out_dims[a]);
    for (int64_t o = 0; o < out_dims[a]; ++o) maps[a][o] = source(o - begin[a], x.dims[a], mode);
  }
  map_copy(x, y, maps, fill);
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Pad, "cpu").types(movable_types()).run(pad);

}  // namespace
}  // namespace openacl::kernels::cpu
