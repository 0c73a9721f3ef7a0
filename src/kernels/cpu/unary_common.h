// The one element-wise loop every unary op, activation and cast shares: each
// op is a functor over the compute type (float for float16/bfloat16), so the
// per-op code is a line and the loop is a flat, contiguous, vectorisable one
// split across threads only when the tensor is large.
#pragma once

#include <cstdint>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu::unary {

// Elements per thread chunk: below 2x this a tensor is processed serially
// (spawning threads costs more than a few thousand cheap element ops).
constexpr int64_t kGrain = 16384;

// y[i] = store<Out>(f(load(x[i]))) for i in [0, n). x and y may alias exactly
// (in-place), never partially.
template <class In, class Out, class F>
void map(const In* x, Out* y, int64_t n, const F& f) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
#pragma omp simd
    for (int64_t i = b; i < e; ++i) y[i] = store<Out>(f(load(x[i])));
  });
}

// Runs `f` on input 0 into output 0, both of the same element type in `Set`.
template <unsigned Set, class F>
Status run_same_type(KernelContext& ctx, const F& f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.dtype != x.dtype) return ctx.fail("output type %s differs from input type %s", graph::dtype_name(y.dtype),
                                          graph::dtype_name(x.dtype));
  const bool ok = dispatch<Set>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map(x.as<const T>(), y.as<T>(), x.elements(), f);
  });
  if (!ok) return ctx.fail("element type %s is not handled", graph::dtype_name(x.dtype));
  return Status::Ok();
}

// Runs the predicate `f` on input 0 (types in `Set`) into a bool output 0.
template <unsigned Set, class F>
Status run_to_bool(KernelContext& ctx, const F& f) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.dtype != DType::kBool) return ctx.fail("output type %s is not bool", graph::dtype_name(y.dtype));
  const bool ok = dispatch<Set>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    map(x.as<const T>(), y.as<bool>(), x.elements(), f);
  });
  if (!ok) return ctx.fail("element type %s is not handled", graph::dtype_name(x.dtype));
  return Status::Ok();
}

}  // namespace openacl::kernels::cpu::unary
