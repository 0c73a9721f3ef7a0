// Activation functions (PRelu, which broadcasts a slope input, is elsewhere):
// Relu, LeakyRelu, Elu, Selu, Celu, ThresholdedRelu, Sigmoid, HardSigmoid,
// HardSwish, Tanh, Softplus, Softsign, Mish, Gelu. Each reads its attributes
// once per run and hands unary::map a functor over the compute type.
#include <cmath>
#include <string>
#include <type_traits>

#include "kernels/cpu/unary_common.h"

namespace openacl::kernels::cpu {
namespace {

using unary::run_same_type;

float attr(const KernelContext& ctx, const char* name, float def) { return ctx.attrs().get_float(name, def); }

// log(1 + exp(x)) without overflow for large x.
template <class C>
C softplus(C v) {
  if constexpr (std::is_same_v<C, float>) return unary::softplus_approx(v);  // vectorises
  else return v > C(0) ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
}

Status relu(KernelContext& ctx) {
  // Integers (opset 14+) run in their own type. NaN stays NaN (as max(x, 0)).
  return run_same_type<kNumeric>(ctx, [](auto v) { return v < decltype(v)(0) ? decltype(v)(0) : v; });
}

Status leaky_relu(KernelContext& ctx) {
  const float alpha = attr(ctx, "alpha", 0.01f);
  return run_same_type<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    return v < C(0) ? C(alpha) * v : v;
  });
}

Status elu(KernelContext& ctx) {
  const float alpha = attr(ctx, "alpha", 1.0f);
  return run_same_type<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    return v < C(0) ? C(alpha) * std::expm1(v) : v;
  });
}

Status selu(KernelContext& ctx) {
  const float alpha = attr(ctx, "alpha", 1.67326319217681884765625f);
  const float gamma = attr(ctx, "gamma", 1.05070102214813232421875f);
  return run_same_type<kFloats>(ctx, [alpha, gamma](auto v) {
    using C = decltype(v);
    return v > C(0) ? C(gamma) * v : C(gamma) * C(alpha) * std::expm1(v);
  });
}

Status celu(KernelContext& ctx) {
  const float alpha = attr(ctx, "alpha", 1.0f);
  if (alpha == 0.0f) return ctx.fail("Celu alpha must not be 0");
  return run_same_type<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    return v > C(0) ? v : C(alpha) * std::expm1(v / C(alpha));
  });
}

Status thresholded_relu(KernelContext& ctx) {
  const float alpha = attr(ctx, "alpha", 1.0f);
  return run_same_type<kFloats>(ctx, [alpha](auto v) {
    using C = decltype(v);
    return v > C(alpha) ? v : C(0);
  });
}

Status sigmoid(KernelContext& ctx) {
  return run_same_type<kFloats>(ctx, [](auto v) {
    using C = decltype(v);
    // e^-|v| never overflows, and e / (1 + e) keeps the relative precision
    // of tiny results for negative v. In float, branch-free and vectorised.
    C e;
    if constexpr (std::is_same_v<C, float>) e = unary::exp_approx(-std::fabs(v));
    else e = std::exp(-std::fabs(v));
    return (v >= C(0) ? C(1) : e) / (C(1) + e);
  });
}

Status hard_sigmoid(KernelContext& ctx) {
  const float alpha = attr(ctx, "alpha", 0.2f);
  const float beta = attr(ctx, "beta", 0.5f);
  return run_same_type<kFloats>(ctx, [alpha, beta](auto v) {
    using C = decltype(v);
    const C t = C(alpha) * v + C(beta);
    return t < C(0) ? C(0) : t > C(1) ? C(1) : t;
  });
}

Status hard_swish(KernelContext& ctx) {
  return run_same_type<kFloats>(ctx, [](auto v) {
    using C = decltype(v);
    const C t = v / C(6) + C(0.5);
    return v * (t < C(0) ? C(0) : t > C(1) ? C(1) : t);
  });
}

// float: the branch-free forms (unary_common.h), so the loops vectorise.
template <class C>
C tanh_of(C v) {
  if constexpr (std::is_same_v<C, float>) return unary::tanh_approx(v);
  else return std::tanh(v);
}
template <class C>
C erf_of(C v) {
  if constexpr (std::is_same_v<C, float>) return unary::erf_approx(v);
  else return std::erf(v);
}

Status tanh_op(KernelContext& ctx) {
  return run_same_type<kFloats>(ctx, [](auto v) { return tanh_of(v); });
}

Status softplus_op(KernelContext& ctx) {
  return run_same_type<kFloats>(ctx, [](auto v) { return softplus(v); });
}

Status softsign(KernelContext& ctx) {
  return run_same_type<kFloats>(ctx, [](auto v) { return v / (decltype(v)(1) + std::fabs(v)); });
}

Status mish(KernelContext& ctx) {
  return run_same_type<kFloats>(ctx, [](auto v) { return v * tanh_of(softplus(v)); });
}

Status gelu(KernelContext& ctx) {
  const std::string approx = ctx.attrs().get_string("approximate", "none");
  if (approx == "tanh") {
    return run_same_type<kFloats>(ctx, [](auto v) {
      using C = decltype(v);
      const C k = C(0.7978845608028654);  // sqrt(2 / pi)
      return C(0.5) * v * (C(1) + tanh_of(k * (v + C(0.044715) * v * v * v)));
    });
  }
  if (approx != "none") return ctx.fail("Gelu approximate must be \"none\" or \"tanh\", got \"%s\"", approx.c_str());
  return run_same_type<kFloats>(ctx, [](auto v) {
    using C = decltype(v);
    return C(0.5) * v * (C(1) + erf_of(v * C(0.7071067811865476)));  // x / sqrt(2)
  });
}

std::vector<DType> relu_types() {
  return {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
          DType::kInt8,    DType::kInt16,   DType::kInt32,    DType::kInt64};
}

OPENACL_REGISTER_KERNEL(Relu, "cpu").types(relu_types()).in_place(0, 0).run(relu);
OPENACL_REGISTER_KERNEL(LeakyRelu, "cpu").types(float_types()).in_place(0, 0).run(leaky_relu);
OPENACL_REGISTER_KERNEL(Elu, "cpu").types(float_types()).in_place(0, 0).run(elu);
OPENACL_REGISTER_KERNEL(Selu, "cpu").types(float_types()).in_place(0, 0).run(selu);
OPENACL_REGISTER_KERNEL(Celu, "cpu").types(float_types()).in_place(0, 0).run(celu);
OPENACL_REGISTER_KERNEL(ThresholdedRelu, "cpu").types(float_types()).in_place(0, 0).run(thresholded_relu);
OPENACL_REGISTER_KERNEL(Sigmoid, "cpu").types(float_types()).in_place(0, 0).run(sigmoid);
OPENACL_REGISTER_KERNEL(HardSigmoid, "cpu").types(float_types()).in_place(0, 0).run(hard_sigmoid);
OPENACL_REGISTER_KERNEL(HardSwish, "cpu").types(float_types()).in_place(0, 0).run(hard_swish);
OPENACL_REGISTER_KERNEL(Tanh, "cpu").types(float_types()).in_place(0, 0).run(tanh_op);
OPENACL_REGISTER_KERNEL(Softplus, "cpu").types(float_types()).in_place(0, 0).run(softplus_op);
OPENACL_REGISTER_KERNEL(Softsign, "cpu").types(float_types()).in_place(0, 0).run(softsign);
OPENACL_REGISTER_KERNEL(Mish, "cpu").types(float_types()).in_place(0, 0).run(mish);
OPENACL_REGISTER_KERNEL(Gelu, "cpu").types(float_types()).in_place(0, 0).run(gelu);

}  // namespace
}  // namespace openacl::kernels::cpu
