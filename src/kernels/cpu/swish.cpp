// Swish (opset 24): x * sigmoid(alpha * x); SwiGLU (opset 28): Swish(A) * B
// with A and B of one shape (no broadcasting).
#include <cmath>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

template <class T>
void swish_typed(const T* a, const T* b, T* y, int64_t n, float alpha_f) {
  using A = ComputeType<T>;
  const A alpha = static_cast<A>(alpha_f);
  parallel_for(n, 16384, [&](int64_t s, int64_t e) {
    if (b) {
#pragma omp simd
      for (int64_t i = s; i < e; ++i) {
        const A v = load(a[i]);
        y[i] = store<T>(v / (A(1) + std::exp(-alpha * v)) * load(b[i]));
      }
    } else {
#pragma omp simd
      for (int64_t i = s; i < e; ++i) {
        const A v = load(a[i]);
        y[i] = store<T>(v / (A(1) + std::exp(-alpha * v)));
      }
    }
  });
}

Status run_swish(KernelContext& ctx, bool gated) {
  const Tensor& a = ctx.input(0);
  Tensor& y = ctx.output(0);
  const void* b = nullptr;
  if (gated) {
    const Tensor& bt = ctx.input(1);
    if (bt.dtype != a.dtype || bt.dims != a.dims) return ctx.fail("A and B must have the same type and shape");
    b = bt.data;
  }
  const float alpha = ctx.attrs().get_float("alpha", 1.0f);
  if (a.elements() == 0) return Status::Ok();
  const bool ok = dispatch<kFloats>(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    swish_typed<T>(a.as<T>(), static_cast<const T*>(b), y.as<T>(), a.elements(), alpha);
  });
  if (!ok) return ctx.fail("unsupported type %s", graph::dtype_name(a.dtype));
  return Status::Ok();
}

Status swish(KernelContext& ctx) { return run_swish(ctx, false); }
Status swiglu(KernelContext& ctx) { return run_swish(ctx, true); }

OPENACL_REGISTER_KERNEL(Swish, "cpu").types(float_types()).in_place(0, 0).run(swish);
OPENACL_REGISTER_KERNEL(SwiGLU, "cpu").types(float_types()).in_place(0, 0).in_place(1, 0).run(swiglu);

}  // namespace
}  // namespace openacl::kernels::cpu
