// Element-wise math: Abs, Neg, Sign, Sqrt, Reciprocal, Exp, Log, Erf, Floor,
// Ceil, Round, the trigonometric and hyperbolic functions, Shrink, BitwiseNot,
// Not, IsNaN, IsInf. Each op is a functor over the compute type run by
// unary::map (float16/bfloat16 are computed in float).
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/unary_common.h"

namespace openacl::kernels::cpu {
namespace {

using unary::run_same_type;
using unary::run_to_bool;

// Signed integer and floating-point types (Neg's type list).
std::vector<DType> signed_types() {
  return {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
          DType::kInt8,    DType::kInt16,   DType::kInt32,    DType::kInt64};
}

// A stateless functor as a kernel function.
template <unsigned Set, class F>
KernelFn stateless(F f) {
  return [f](KernelContext& ctx) { return run_same_type<Set>(ctx, f); };
}

// Float ops written once for float and double: `std::fn` picks the overload.
#define OPENACL_FLOAT_FN(name, expr)                                          \
  struct name {                                                               \
    template <class C>                                                        \
    C operator()(C v) const {                                                 \
      return expr;                                                            \
    }                                                                         \
  };

OPENACL_FLOAT_FN(SqrtF, std::sqrt(v))
OPENACL_FLOAT_FN(ReciprocalF, C(1) / v)
struct ExpF {  // float: branch-free, so the loop vectorises (libm's expf does not)
  template <class C>
  C operator()(C v) const {
    if constexpr (std::is_same_v<C, float>) return unary::exp_approx(v);
    else return std::exp(v);
  }
};
struct LogF {  // float: branch-free, so the loop vectorises (libm's logf does not)
  template <class C>
  C operator()(C v) const {
    if constexpr (std::is_same_v<C, float>) return unary::log_approx(v);
    else return std::log(v);
  }
};
OPENACL_FLOAT_FN(FloorF, std::floor(v))
OPENACL_FLOAT_FN(CeilF, std::ceil(v))
// nearbyint rounds in the current mode, which is round-half-to-even by
// default — ONNX Round's rule (std::round would round halves away from 0).
OPENACL_FLOAT_FN(RoundF, std::nearbyint(v))
OPENACL_FLOAT_FN(SinF, std::sin(v))
OPENACL_FLOAT_FN(CosF, std::cos(v))
OPENACL_FLOAT_FN(TanF, std::tan(v))
OPENACL_FLOAT_FN(AsinF, std::asin(v))
OPENACL_FLOAT_FN(AcosF, std::acos(v))
OPENACL_FLOAT_FN(AtanF, std::atan(v))
OPENACL_FLOAT_FN(SinhF, std::sinh(v))
OPENACL_FLOAT_FN(CoshF, std::cosh(v))
OPENACL_FLOAT_FN(AsinhF, std::asinh(v))
OPENACL_FLOAT_FN(AcoshF, std::acosh(v))
OPENACL_FLOAT_FN(AtanhF, std::atanh(v))
#undef OPENACL_FLOAT_FN

// Erf is defined for integer inputs too; they go through double.
struct ErfF {
  template <class C>
  auto operator()(C v) const {
    if constexpr (std::is_same_v<C, float>) return unary::erf_approx(v);
    else if constexpr (std::is_floating_point_v<C>) return std::erf(v);
    else return std::erf(static_cast<double>(v));
  }
};

struct AbsF {
  template <class C>
  C operator()(C v) const {
    if constexpr (std::is_unsigned_v<C>) return v;
    else if constexpr (std::is_floating_point_v<C>) return std::fabs(v);  // |-0| = +0
    else return v < C(0) ? C(-v) : v;
  }
};

struct NegF {
  template <class C>
  C operator()(C v) const { return C(-v); }
};

struct SignF {
  template <class C>
  C operator()(C v) const {
    if constexpr (std::is_unsigned_v<C>) return v > 0 ? C(1) : C(0);
    // NaN fails all three compares and is returned as is (numpy.sign, ONNX's
    // reference, gives NaN too).
    else if constexpr (std::is_floating_point_v<C>) return v > 0 ? C(1) : v < 0 ? C(-1) : v == 0 ? C(0) : v;
    else return v > 0 ? C(1) : v < 0 ? C(-1) : C(0);
  }
};

struct BitwiseNotF {
  template <class C>
  C operator()(C v) const { return static_cast<C>(~v); }
};

Status shrink(KernelContext& ctx) {
  const double lambd = ctx.attrs().get_float("lambd", 0.5f);
  const double bias = ctx.attrs().get_float("bias", 0.0f);
  return run_same_type<kNumeric>(ctx, [lambd, bias](auto v) {
    using C = decltype(v);
    // Integers go through double (as ONNX's reference does) so lambd/bias
    // keep their fractions.
    using W = std::conditional_t<std::is_same_v<C, float>, float, double>;
    const W x = static_cast<W>(v);
    return x < W(-lambd) ? x + W(bias) : x > W(lambd) ? x - W(bias) : W(0);
  });
}

Status not_op(KernelContext& ctx) {
  return run_same_type<kBool>(ctx, [](bool v) { return !v; });
}

Status isnan_op(KernelContext& ctx) {
  return run_to_bool<kFloats>(ctx, [](auto v) { return v != v; });
}

Status isinf_op(KernelContext& ctx) {
  const bool pos = ctx.attrs().get_int("detect_positive", 1) != 0;
  const bool neg = ctx.attrs().get_int("detect_negative", 1) != 0;
  return run_to_bool<kFloats>(ctx, [pos, neg](auto v) {
    using C = decltype(v);
    return (pos && v == std::numeric_limits<C>::infinity()) || (neg && v == -std::numeric_limits<C>::infinity());
  });
}

OPENACL_REGISTER_KERNEL(Abs, "cpu").types(numeric_types()).in_place(0, 0).run(stateless<kNumeric>(AbsF{}));
OPENACL_REGISTER_KERNEL(Neg, "cpu").types(signed_types()).in_place(0, 0).run(stateless<kNumeric>(NegF{}));
OPENACL_REGISTER_KERNEL(Sign, "cpu").types(numeric_types()).in_place(0, 0).run(stateless<kNumeric>(SignF{}));
OPENACL_REGISTER_KERNEL(Sqrt, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(SqrtF{}));
OPENACL_REGISTER_KERNEL(Reciprocal, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(ReciprocalF{}));
OPENACL_REGISTER_KERNEL(Exp, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(ExpF{}));
OPENACL_REGISTER_KERNEL(Log, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(LogF{}));
OPENACL_REGISTER_KERNEL(Erf, "cpu").types(numeric_types()).in_place(0, 0).run(stateless<kNumeric>(ErfF{}));
OPENACL_REGISTER_KERNEL(Floor, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(FloorF{}));
OPENACL_REGISTER_KERNEL(Ceil, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(CeilF{}));
OPENACL_REGISTER_KERNEL(Round, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(RoundF{}));
OPENACL_REGISTER_KERNEL(Sin, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(SinF{}));
OPENACL_REGISTER_KERNEL(Cos, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(CosF{}));
OPENACL_REGISTER_KERNEL(Tan, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(TanF{}));
OPENACL_REGISTER_KERNEL(Asin, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(AsinF{}));
OPENACL_REGISTER_KERNEL(Acos, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(AcosF{}));
OPENACL_REGISTER_KERNEL(Atan, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(AtanF{}));
OPENACL_REGISTER_KERNEL(Sinh, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(SinhF{}));
OPENACL_REGISTER_KERNEL(Cosh, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(CoshF{}));
OPENACL_REGISTER_KERNEL(Asinh, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(AsinhF{}));
OPENACL_REGISTER_KERNEL(Acosh, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(AcoshF{}));
OPENACL_REGISTER_KERNEL(Atanh, "cpu").types(float_types()).in_place(0, 0).run(stateless<kFloats>(AtanhF{}));
OPENACL_REGISTER_KERNEL(BitwiseNot, "cpu").types(int_types()).in_place(0, 0).run(stateless<kInts>(BitwiseNotF{}));
OPENACL_REGISTER_KERNEL(Shrink, "cpu").types(numeric_types()).in_place(0, 0).run(shrink);
OPENACL_REGISTER_KERNEL(Not, "cpu").types({DType::kBool}).in_place(0, 0).run(not_op);
OPENACL_REGISTER_KERNEL(IsNaN, "cpu").types(float_types()).run(isnan_op);
OPENACL_REGISTER_KERNEL(IsInf, "cpu").types(float_types()).run(isinf_op);

}  // namespace
}  // namespace openacl::kernels::cpu
