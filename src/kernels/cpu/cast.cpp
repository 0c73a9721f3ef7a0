// Cast and CastLike between the numeric types, bool, float16 and bfloat16.
//
// Rounding (ONNX semantics): float -> integer truncates toward zero; values
// outside the target's range saturate to its limits and NaN becomes 0 (ONNX
// leaves these undefined; saturating keeps them defined in C++). Any type ->
// float16/bfloat16 rounds to nearest even, from double in one rounding (not
// double -> float -> half). x -> bool is x != 0. The `saturate` attribute only
// concerns float8 targets, which (like int4/uint4, float4, float8e8m0, int2
// and string) are refused at compile time with a reason.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/unary_common.h"

namespace openacl::kernels::cpu {
namespace {

bool castable(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kFloat64: case DType::kFloat16: case DType::kBFloat16:
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64:
    case DType::kBool:
      return true;
    default:
      return false;
  }
}

// `d` rounded to float with round-to-odd: a later round-to-nearest-even to a
// narrower type (half: 11 bits, bfloat16: 8 bits, both far below float's 24)
// then gives the same result as rounding `d` directly.
inline float to_float_round_odd(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d && std::isfinite(f)) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    if ((bits & 1u) == 0) {
      // f was rounded onto an even neighbour: step to the odd neighbour on
      // d's side of f (sign-magnitude bits: +1 moves away from zero).
      bits = std::fabs(static_cast<double>(f)) > std::fabs(d) ? bits - 1 : bits + 1;
      std::memcpy(&f, &bits, sizeof f);
    }
  }
  return f;
}

// One element: C is the source's compute type, Out the target storage type;
// returns what store<Out> takes (float for the 16-bit floats).
template <class Out, class C>
inline auto convert(C v) {
  if constexpr (std::is_same_v<Out, bool>) {
    return static_cast<bool>(v != C(0));
  } else if constexpr (std::is_same_v<Out, Half> || std::is_same_v<Out, BFloat16>) {
    if constexpr (std::is_same_v<C, double>) return to_float_round_odd(v);
    else return static_cast<float>(v);
  } else if constexpr (std::is_integral_v<Out> && std::is_floating_point_v<C>) {
    // Compare in C: the limits of 64-bit types round up to 2^63 / 2^64 in
    // float, so `>=` on the upper side catches exactly the out-of-range values.
    constexpr C lo = static_cast<C>(std::numeric_limits<Out>::lowest());
    constexpr C hi = static_cast<C>(std::numeric_limits<Out>::max());
    if (!(v == v)) return Out(0);
    if (v <= lo) return std::numeric_limits<Out>::lowest();
    if (v >= hi) return std::numeric_limits<Out>::max();
    return static_cast<Out>(v);
  } else {
    return static_cast<Out>(v);
  }
}

// Both Cast and CastLike: the target type is output 0's (the shape function
// resolved 'to' or input 1's type).
Status cast(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t n = x.elements();
  if (x.dtype == y.dtype) {
    if (y.data != x.data && n) std::memcpy(y.data, x.data, x.bytes());
    return Status::Ok();
  }
  bool out_ok = false;
  const bool in_ok = dispatch<kAll>(x.dtype, [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    out_ok = dispatch<kAll>(y.dtype, [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      unary::map(x.as<const In>(), y.as<Out>(), n, [](auto v) { return convert<Out>(v); });
    });
  });
  if (!in_ok || !out_ok)
    return ctx.fail("cast from %s to %s is not implemented", graph::dtype_name(x.dtype), graph::dtype_name(y.dtype));
  return Status::Ok();
}

std::string cast_supports(const KernelInit& init) {
  const DType from = init.input(0).dtype;
  const DType to = init.output(0).dtype;
  if (!castable(from) || !castable(to))
    return std::string("cast from ") + graph::dtype_name(from) + " to " + graph::dtype_name(to) +
           " is not implemented (numeric types, bool, float16 and bfloat16 only)";
  return "";
}

OPENACL_REGISTER_KERNEL(Cast, "cpu").supports(cast_supports).run(cast);
OPENACL_REGISTER_KERNEL(CastLike, "cpu").supports(cast_supports).run(cast);

}  // namespace
}  // namespace openacl::kernels::cpu
