// Cast and CastLike between the numeric types, bool, float16, bfloat16 and
// the float8 types.
//
// Rounding (ONNX semantics): float -> integer truncates toward zero; values
// outside the target's range saturate to its limits and NaN becomes 0 (ONNX
// leaves these undefined; saturating keeps them defined in C++). Any type ->
// float16/bfloat16 rounds to nearest even, from double in one rounding (not
// double -> float -> half). x -> bool is x != 0.
//
// float8 (float8.h): a source is decoded to float (exact) and converted on
// from there; a target is encoded from float, with double and integer sources
// narrowed to float by round-to-odd so the result is one rounding of the
// source value. `saturate` (default 1) and, for float8e8m0, `round_mode`
// (default "up") only concern float8 targets.
//
// int4/uint4/int2/uint2 and float4e2m1 (subbyte.h, one element per byte):
// integers wrap to the target's bits, floats go through int32 truncation
// first, float4e2m1 rounds to nearest even and saturates. string is refused
// at compile time with a reason.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels/cpu/float8.h"
#include "kernels/cpu/subbyte.h"
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
      return f8::is_float8(t) || subbyte::is_subbyte(t);
  }
}

// One element: C is the source's compute type, Out the target storage type;
// returns what store<Out> takes (float for the 16-bit floats).
template <class Out, class C>
inline auto convert(C v) {
  if constexpr (std::is_same_v<Out, bool>) {
    return static_cast<bool>(v != C(0));
  } else if constexpr (std::is_same_v<Out, Half> || std::is_same_v<Out, BFloat16>) {
    if constexpr (std::is_same_v<C, double>) return f8::narrow_to_float(v);
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

// A non-float8 source value as the float a float8 encoder takes: exact for
// float/half/bfloat16/bool and integers up to 2^24, otherwise round-to-odd
// (integers go through double, exact up to 2^53).
template <class C>
inline float float8_source(C v) {
  if constexpr (std::is_same_v<C, float>) return v;
  else if constexpr (std::is_same_v<C, bool>) return v ? 1.0f : 0.0f;
  else return f8::narrow_to_float(static_cast<double>(v));
}

Status cast_float8(KernelContext& ctx, const Tensor& x, Tensor& y) {
  const int64_t n = x.elements();
  const bool saturate = ctx.attrs().get_int("saturate", 1) != 0;
  const std::string mode_name = ctx.attrs().get_string("round_mode", "up");
  f8::RoundMode mode = f8::RoundMode::kUp;
  if (mode_name == "nearest") mode = f8::RoundMode::kNearest;
  else if (mode_name == "down") mode = f8::RoundMode::kDown;
  else if (mode_name != "up") return ctx.fail("round_mode must be \"up\", \"down\" or \"nearest\", got \"%s\"", mode_name.c_str());
  const uint8_t* xb = x.as<const uint8_t>();
  bool ok = false;
  if (f8::is_float8(x.dtype)) {
    f8::dispatch_format(x.dtype, [&](auto in_fmt) {
      constexpr f8::Format In = decltype(in_fmt)::value;
      ok = f8::dispatch_format(y.dtype, [&](auto out_fmt) {
        constexpr f8::Format Out = decltype(out_fmt)::value;
        unary::map(xb, y.as<uint8_t>(), n,
                   [=](uint8_t c) { return f8::encode<Out>(f8::decode<In>(c), saturate, mode); });
      });
      if (!ok) {
        ok = dispatch<kAll>(y.dtype, [&](auto out_tag) {
          using Out = typename decltype(out_tag)::type;
          unary::map(xb, y.as<Out>(), n, [](uint8_t c) { return convert<Out>(f8::decode<In>(c)); });
        });
      }
    });
  } else {
    dispatch<kAll>(x.dtype, [&](auto in_tag) {
      using In = typename decltype(in_tag)::type;
      ok = f8::dispatch_format(y.dtype, [&](auto out_fmt) {
        constexpr f8::Format Out = decltype(out_fmt)::value;
        unary::map(x.as<const In>(), y.as<uint8_t>(), n,
                   [=](auto v) { return f8::encode<Out>(float8_source(v), saturate, mode); });
      });
    });
  }
  if (!ok)
    return ctx.fail("cast from %s to %s is not implemented", graph::dtype_name(x.dtype), graph::dtype_name(y.dtype));
  return Status::Ok();
}

// One value (any source type) as the sub-byte target `to` holds it.
template <class V>
inline uint8_t to_subbyte(V v, DType to) {
  if (to == DType::kFloat4E2M1) {
    if constexpr (std::is_same_v<V, float> || std::is_same_v<V, double>) return subbyte::fp4_encode(v);
    else if constexpr (std::is_same_v<V, bool>) return subbyte::fp4_encode(v ? 1.f : 0.f);
    else if constexpr (std::is_integral_v<V>) return subbyte::fp4_encode(static_cast<double>(v));
    else return subbyte::fp4_encode(static_cast<float>(load(v)));  // float16, bfloat16
  }
  if constexpr (std::is_same_v<V, bool>) return subbyte::wrap(v ? 1 : 0, to);
  else if constexpr (std::is_integral_v<V>) return subbyte::wrap(static_cast<int64_t>(v), to);
  else if constexpr (std::is_floating_point_v<V>) return subbyte::wrap_float(v, to);
  else return subbyte::wrap_float(static_cast<float>(load(v)), to);
}

// A cast with a sub-byte type on either side. Sub-byte integers are read as
// the int8/uint8 they are held in, float4e2m1 and float8 decoded to float.
Status cast_subbyte(KernelContext& ctx, const Tensor& x, Tensor& y) {
  const int64_t n = x.elements();
  const DType from = x.dtype, to = y.dtype;
  const uint8_t* xb = x.as<const uint8_t>();
  bool ok = false;
  if (subbyte::is_subbyte(to)) {
    uint8_t* yb = y.as<uint8_t>();
    if (from == DType::kFloat4E2M1) {
      unary::map(xb, yb, n, [=](uint8_t c) { return to_subbyte(subbyte::fp4_decode(c), to); });
      ok = true;
    } else if (f8::is_float8(from)) {
      unary::map(xb, yb, n, [=](uint8_t c) { return to_subbyte(f8::to_float(from, c), to); });
      ok = true;
    } else {
      ok = dispatch<kAll>(subbyte::storage(from), [&](auto in_tag) {
        using In = typename decltype(in_tag)::type;
        unary::map(x.as<const In>(), yb, n, [=](auto v) { return to_subbyte(v, to); });
      });
    }
  } else if (f8::is_float8(to)) {  // exact source values, one rounding to float8
    const bool saturate = ctx.attrs().get_int("saturate", 1) != 0;
    f8::dispatch_format(to, [&](auto out_fmt) {
      constexpr f8::Format Out = decltype(out_fmt)::value;
      if (from == DType::kFloat4E2M1) {
        unary::map(xb, y.as<uint8_t>(), n, [=](uint8_t c) { return f8::encode<Out>(subbyte::fp4_decode(c), saturate); });
        ok = true;
      } else {
        ok = dispatch<kAll>(subbyte::storage(from), [&](auto in_tag) {
          using In = typename decltype(in_tag)::type;
          unary::map(x.as<const In>(), y.as<uint8_t>(), n,
                     [=](auto v) { return f8::encode<Out>(static_cast<float>(v), saturate); });
        });
      }
    });
  } else {
    ok = dispatch<kAll>(to, [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      if (from == DType::kFloat4E2M1) {
        unary::map(xb, y.as<Out>(), n, [](uint8_t c) { return convert<Out>(subbyte::fp4_decode(c)); });
      } else {
        dispatch<kAll>(subbyte::storage(from), [&](auto in_tag) {
          using In = typename decltype(in_tag)::type;
          unary::map(x.as<const In>(), y.as<Out>(), n, [](auto v) { return convert<Out>(v); });
        });
      }
    });
  }
  if (!ok)
    return ctx.fail("cast from %s to %s is not implemented", graph::dtype_name(from), graph::dtype_name(to));
  return Status::Ok();
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
  if (subbyte::is_subbyte(x.dtype) || subbyte::is_subbyte(y.dtype)) return cast_subbyte(ctx, x, y);
  if (f8::is_float8(x.dtype) || f8::is_float8(y.dtype)) return cast_float8(ctx, x, y);
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
           " is not implemented (numeric types, bool, float16, bfloat16, float8, float4e2m1 and the 4/2-bit integers only)";
  return "";
}

OPENACL_REGISTER_KERNEL(Cast, "cpu").supports(cast_supports).run(cast);
OPENACL_REGISTER_KERNEL(CastLike, "cpu").supports(cast_supports).run(cast);

}  // namespace
}  // namespace openacl::kernels::cpu
