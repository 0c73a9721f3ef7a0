// Variadic element-wise ops Sum Mean Max Min: 1..N same-typed inputs,
// numpy-broadcast to one output (opset 8+; the shape function rejects
// broadcasting before that).
//
// Folded pairwise into the output like numpy's reduce over the inputs: y =
// op(x0, x1), then y = op(y, xi), each step stored in T (so float16 sums round
// per step as numpy's do). Mean divides the sum by N at the end. Max/Min
// propagate NaN (numpy.maximum/minimum).
#include <cmath>

#include "kernels/cpu/binary_common.h"

namespace openacl::kernels::cpu {
namespace {

struct SumOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    else return a + b;
  }
};
struct MaxOp {
  template <class T>
  T operator()(T a, T b) const {
    // Branch-free so it vectorises; a NaN b fails a >= b and is picked.
    if constexpr (std::is_floating_point_v<T>) return (a >= b || std::isnan(a)) ? a : b;
    else return a >= b ? a : b;
  }
};
struct MinOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return (a <= b || std::isnan(a)) ? a : b;
    else return a <= b ? a : b;
  }
};
struct FirstOp {
  template <class T>
  T operator()(T a, T) const { return a; }
};

template <unsigned Set, class Op>
Status variadic(KernelContext& ctx, const Op& op, bool mean) {
  const size_t n = ctx.num_inputs();
  Tensor& y = ctx.output(0);
  if (n == 0) return ctx.fail("needs at least one input");
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.has_input(i)) return ctx.fail("input %zu is missing", i);
    if (ctx.input(i).dtype != y.dtype)
      return ctx.fail("input %zu has type %s, expected %s", i, graph::dtype_name(ctx.input(i).dtype),
                      graph::dtype_name(y.dtype));
  }
  bool shapes_ok = true;
  const bool typed = dispatch<Set>(y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* out = y.as<T>();
    const Tensor& x0 = ctx.input(0);
    if (n == 1) {
      shapes_ok = binary_broadcast(x0.as<T>(), x0.dims, x0.as<T>(), x0.dims, out, y.dims, FirstOp{});
    } else {
      const Tensor& x1 = ctx.input(1);
      shapes_ok = binary_broadcast(x0.as<T>(), x0.dims, x1.as<T>(), x1.dims, out, y.dims, op);
      for (size_t i = 2; shapes_ok && i < n; ++i) {
        const Tensor& xi = ctx.input(i);
        shapes_ok = binary_broadcast(static_cast<const T*>(out), y.dims, xi.as<T>(), xi.dims, out, y.dims, op);
      }
    }
    if constexpr (is_float_v<T>) {
      if (shapes_ok && mean) {
        const ComputeType<T> count = static_cast<ComputeType<T>>(n);
        parallel_for(y.elements(), kElementwiseGrain, [&](int64_t b, int64_t e) {
#pragma omp simd
          for (int64_t i = b; i < e; ++i) out[i] = store<T>(load(out[i]) / count);
        });
      }
    }
  });
  if (!typed) return ctx.fail("element type %s is not supported", graph::dtype_name(y.dtype));
  if (!shapes_ok) return ctx.fail("input shapes do not broadcast to the output shape");
  return Status::Ok();
}

Status sum(KernelContext& ctx) { return variadic<kNumeric>(ctx, SumOp{}, false); }
Status mean(KernelContext& ctx) { return variadic<kFloats>(ctx, SumOp{}, true); }
Status max(KernelContext& ctx) { return variadic<kNumeric>(ctx, MaxOp{}, false); }
Status min(KernelContext& ctx) { return variadic<kNumeric>(ctx, MinOp{}, false); }

OPENACL_REGISTER_KERNEL(Sum, "cpu").types(numeric_types()).run(sum);
OPENACL_REGISTER_KERNEL(Mean, "cpu").types(float_types()).run(mean);
OPENACL_REGISTER_KERNEL(Max, "cpu").types(numeric_types()).run(max);
OPENACL_REGISTER_KERNEL(Min, "cpu").types(numeric_types()).run(min);

}  // namespace
}  // namespace openacl::kernels::cpu
