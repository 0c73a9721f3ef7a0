// Clip: y = min(max(x, min), max). The bounds are float attributes before
// opset 11 and optional scalar inputs of x's type from opset 11; a missing
// bound is the type's limit. With min > max every element becomes max (as
// ONNX's reference, numpy.clip, does); NaN stays NaN.
#include <limits>

#include "kernels/cpu/unary_common.h"

namespace openacl::kernels::cpu {
namespace {

Status clip(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Status st = Status::Ok();
  const bool ok = dispatch<kNumeric>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    C lo = std::numeric_limits<C>::lowest();
    C hi = std::numeric_limits<C>::max();
    if (ctx.opset() < 11) {
      if (ctx.attrs().find("min")) lo = static_cast<C>(ctx.attrs().get_float("min", 0.0f));
      if (ctx.attrs().find("max")) hi = static_cast<C>(ctx.attrs().get_float("max", 0.0f));
    } else {
      for (size_t i = 1; i <= 2; ++i) {
        if (!ctx.has_input(i)) continue;
        const Tensor& b = ctx.input(i);
        if (b.dtype != x.dtype) {
          st = ctx.fail("Clip bound %zu has type %s, input is %s", i, graph::dtype_name(b.dtype),
                        graph::dtype_name(x.dtype));
          return;
        }
        if (b.elements() != 1) {
          st = ctx.fail("Clip bound %zu must be a scalar, got %lld elements", i, static_cast<long long>(b.elements()));
          return;
        }
        (i == 1 ? lo : hi) = load(b.as<const T>()[0]);
      }
    }
    unary::map(x.as<const T>(), ctx.output(0).as<T>(), x.elements(), [lo, hi](C v) {
      const C t = v < lo ? lo : v;
      return t > hi ? hi : t;
    });
  });
  if (!ok) return ctx.fail("element type %s is not handled", graph::dtype_name(x.dtype));
  return st;
}

OPENACL_REGISTER_KERNEL(Clip, "cpu").types(numeric_types()).in_place(0, 0).run(clip);

}  // namespace
}  // namespace openacl::kernels::cpu
