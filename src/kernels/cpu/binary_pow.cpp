// Pow with numpy broadcasting. From opset 12 the exponent may have its own
// type (T1, any numeric); the output has the base's type (T).
//
//  - same float type: pow in that type (float for 16-bit floats);
//  - mixed types with a float on either side: pow in double, converted to T
//    (numpy promotes float32 ** int32 to float64 before the cast back);
//  - integer ** integer: exact, by squaring with wrap-around. A negative
//    exponent (numpy refuses it) gives the truncated real result: 1 for base
//    1, +-1 for base -1, else 0;
//  - float results stored into an integer base type truncate toward zero and
//    saturate (NaN gives 0) instead of numpy's undefined conversion.
#include <cmath>
#include <limits>

#include "kernels/cpu/binary_common.h"

namespace openacl::kernels::cpu {
namespace {

template <class T>
T int_pow(T base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<T>)
      if (base == -1) return (e & 1) ? T(-1) : T(1);
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(static_cast<int64_t>(base));
  auto n = static_cast<uint64_t>(e);
  while (n) {
    if (n & 1) result *= b;
    b *= b;
    n >>= 1;
  }
  return static_cast<T>(result);
}

template <class T>
T saturate_to(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Base type A (its compute type CA), exponent type B.
template <class A, class B>
struct PowOp {
  using CA = ComputeType<A>;
  using CB = ComputeType<B>;
  bool square = false;  // the exponent is the single value 2 and CA is a float
  CA operator()(CA a, CB b) const {
    if constexpr (std::is_floating_point_v<CA>)
      if (square) return a * a;
    if constexpr (std::is_integral_v<CA> && std::is_integral_v<CB>) {
      int64_t e;
      if constexpr (std::is_unsigned_v<CB> && sizeof(CB) == 8)
        e = b > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(b);
      else
        e = static_cast<int64_t>(b);
      return int_pow<CA>(a, e);
    } else if constexpr (std::is_same_v<A, B>) {
      return std::pow(a, b);
    } else {
      const double r = std::pow(static_cast<double>(a), static_cast<double>(b));
      if constexpr (std::is_integral_v<CA>) return saturate_to<CA>(r);
      else return static_cast<CA>(r);
    }
  }
};

bool base_type_ok(DType t) {
  return graph::dtype_is_float(t) || t == DType::kInt32 || t == DType::kInt64;
}

Status pow_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.output(0);
  if (!base_type_ok(a.dtype)) return ctx.fail("Pow base type %s is not supported", graph::dtype_name(a.dtype));
  if (ctx.opset() < 12 && a.dtype != b.dtype)
    return ctx.fail("Pow inputs must share a type before opset 12, got %s and %s", graph::dtype_name(a.dtype),
                    graph::dtype_name(b.dtype));
  std::vector<int64_t> legacy;
  const std::vector<int64_t>* b_dims = nullptr;
  OPENACL_RETURN_IF_ERROR(binary_b_dims(ctx, &legacy, &b_dims));
  // x ** 2 (variance in decomposed normalisations) as x * x: the same
  // correctly rounded value as pow, without a libm call per element.
  bool square = false;
  if (graph::dtype_is_float(a.dtype) && b.elements() == 1)
    dispatch<kNumeric>(b.dtype, [&](auto tb) { square = static_cast<double>(load(b.as<typename decltype(tb)::type>()[0])) == 2.0; });
  bool shapes_ok = true, typed_b = true;
  const bool typed_a = dispatch<kNumeric>(a.dtype, [&](auto ta) {
    using A = typename decltype(ta)::type;
    if constexpr (is_float_v<A> || std::is_same_v<A, int32_t> || std::is_same_v<A, int64_t>) {
      typed_b = dispatch<kNumeric>(b.dtype, [&](auto tb) {
        using B = typename decltype(tb)::type;
        PowOp<A, B> op;
        op.square = square;
        shapes_ok = binary_broadcast(a.as<A>(), a.dims, b.as<B>(), *b_dims, y.as<A>(), y.dims, op, 2048);
      });
    }
  });
  if (!typed_a || !typed_b)
    return ctx.fail("Pow of %s by %s is not supported", graph::dtype_name(a.dtype), graph::dtype_name(b.dtype));
  if (!shapes_ok) return ctx.fail("input shapes do not broadcast to the output shape");
  return Status::Ok();
}

std::string pow_supports(const KernelInit& init) {
  const DType b = init.input(1).dtype;
  if (b == DType::kUndefined || graph::dtype_is_float(b) || graph::dtype_is_integer(b)) return "";
  return std::string("exponent type ") + graph::dtype_name(b) + " is not supported";
}

OPENACL_REGISTER_KERNEL(Pow, "cpu")
    .types({DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt32, DType::kInt64})
    .supports(pow_supports)
    .run(pow_kernel);

}  // namespace
}  // namespace openacl::kernels::cpu
