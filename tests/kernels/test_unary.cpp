// Unary math, activations, Clip, Cast/CastLike and Dropout: the cases the ONNX
// node tests miss (integer and 16-bit types, rounding edges, opset forms,
// large tensors that take the threaded path, clean errors).
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/fp16.h"
#include "kernels/cpu/unary_common.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

using graph::AttributeMap;

std::vector<uint16_t> halves(const std::vector<float>& v) {
  std::vector<uint16_t> r;
  for (float f : v) r.push_back(float_to_half(f));
  return r;
}
std::vector<float> from_halves(const std::vector<uint16_t>& v) {
  std::vector<float> r;
  for (uint16_t h : v) r.push_back(half_to_float(h));
  return r;
}

AttributeMap attrs(std::initializer_list<std::pair<const char*, graph::Attribute>> kv) {
  AttributeMap m;
  for (const auto& [k, v] : kv) m.set(k, v);
  return m;
}

TEST(Unary, SqrtFloat16) {
  OpRun r = run_op("Sqrt", {raw_tensor<uint16_t>(DType::kFloat16, {3}, halves({4, 9, 2}))});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dtype, DType::kFloat16);
  EXPECT_EQ(from_halves(values<uint16_t>(r.outputs[0])), (std::vector<float>{2, 3, half_to_float(float_to_half(std::sqrt(2.0f)))}));
}

TEST(Unary, AbsNegSignIntegers) {
  OpRun a = run_op("Abs", {tensor<int8_t>({3}, {-128 + 1, 0, 5})});
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  EXPECT_EQ(values<int8_t>(a.outputs[0]), (std::vector<int8_t>{127, 0, 5}));
  OpRun u = run_op("Abs", {tensor<uint8_t>({2}, {200, 3})});
  ASSERT_TRUE(u.status.ok()) << u.status.message();
  EXPECT_EQ(values<uint8_t>(u.outputs[0]), (std::vector<uint8_t>{200, 3}));
  OpRun n = run_op("Neg", {tensor<int64_t>({2}, {7, -3})});
  ASSERT_TRUE(n.status.ok()) << n.status.message();
  EXPECT_EQ(values<int64_t>(n.outputs[0]), (std::vector<int64_t>{-7, 3}));
  OpRun s = run_op("Sign", {tensor<int32_t>({3}, {-9, 0, 4})});
  ASSERT_TRUE(s.status.ok()) << s.status.message();
  EXPECT_EQ(values<int32_t>(s.outputs[0]), (std::vector<int32_t>{-1, 0, 1}));
}

TEST(Unary, NegOfUnsignedIsRefused) {
  OpRun r = run_op("Neg", {tensor<uint32_t>({1}, {1})});
  EXPECT_FALSE(r.status.ok());
}

TEST(Unary, SqrtOfIntegerIsRefused) {
  OpRun r = run_op("Sqrt", {tensor<int32_t>({1}, {4})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("Sqrt"), std::string::npos) << r.status.message();
}

TEST(Unary, RoundHalfToEven) {
  OpRun r = run_op("Round", {tensor<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.6f})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{0, 2, 2, -0.0f, -2, 3}));
}

TEST(Unary, FloorCeilDouble) {
  OpRun f = run_op("Floor", {tensor<double>({2}, {-1.5, 2.5})});
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_EQ(values<double>(f.outputs[0]), (std::vector<double>{-2, 2}));
  OpRun c = run_op("Ceil", {tensor<double>({2}, {-1.5, 2.5})});
  ASSERT_TRUE(c.status.ok()) << c.status.message();
  EXPECT_EQ(values<double>(c.outputs[0]), (std::vector<double>{-1, 3}));
}

TEST(Unary, EmptyTensor) {
  OpRun r = run_op("Exp", {tensor<float>({0, 3}, {})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{0, 3}));
}

TEST(Unary, LargeTensorTakesThreadedPath) {
  const int64_t n = 100003;
  std::vector<float> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 17) - 8.0f;
  OpRun r = run_op("Relu", {tensor<float>({n}, x)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  std::vector<float> y = values<float>(r.outputs[0]);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f) << i;
}

TEST(Unary, ShrinkInteger) {
  OpRun r = run_op("Shrink", {tensor<int32_t>({5}, {-3, -1, 0, 1, 3})},
                   attrs({{"lambd", attr_float(1.5f)}, {"bias", attr_float(1.0f)}}));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{-2, 0, 0, 0, 2}));
}

TEST(Unary, BitwiseNotAndNot) {
  OpRun b = run_op("BitwiseNot", {tensor<uint16_t>({2}, {0, 0x00ff})});
  ASSERT_TRUE(b.status.ok()) << b.status.message();
  EXPECT_EQ(values<uint16_t>(b.outputs[0]), (std::vector<uint16_t>{0xffff, 0xff00}));
  OpRun n = run_op("Not", {tensor<bool>({2}, {true, false})});
  ASSERT_TRUE(n.status.ok()) << n.status.message();
  EXPECT_EQ(values<bool>(n.outputs[0]), (std::vector<bool>{false, true}));
}

TEST(Unary, IsInfDirectionsAndIsNaNHalf) {
  const float inf = std::numeric_limits<float>::infinity();
  OpRun r = run_op("IsInf", {tensor<double>({3}, {inf, -inf, 1.0})}, attrs({{"detect_positive", attr_int(0)}}));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<bool>(r.outputs[0]), (std::vector<bool>{false, true, false}));
  OpRun n = run_op("IsNaN", {raw_tensor<uint16_t>(DType::kFloat16, {2}, halves({std::nanf(""), 1.0f}))});
  ASSERT_TRUE(n.status.ok()) << n.status.message();
  EXPECT_EQ(values<bool>(n.outputs[0]), (std::vector<bool>{true, false}));
}

TEST(Activation, ReluInt32AndLeakyReluBFloat16) {
  OpRun r = run_op("Relu", {tensor<int32_t>({3}, {-5, 0, 5})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{0, 0, 5}));
  std::vector<uint16_t> bf = {float_to_bf16(-2.0f), float_to_bf16(3.0f)};
  OpRun l = run_op("LeakyRelu", {raw_tensor<uint16_t>(DType::kBFloat16, {2}, bf)}, attrs({{"alpha", attr_float(0.5f)}}));
  ASSERT_TRUE(l.status.ok()) << l.status.message();
  std::vector<uint16_t> y = values<uint16_t>(l.outputs[0]);
  EXPECT_EQ(bf16_to_float(y[0]), -1.0f);
  EXPECT_EQ(bf16_to_float(y[1]), 3.0f);
}

TEST(Activation, ExpApproxMatchesExp) {
  using kernels::cpu::unary::exp_approx;
  double worst = 0;
  for (float x = -87.0f; x < 88.7f; x += 0.00731f) {
    const double want = std::exp(static_cast<double>(x));
    worst = std::max(worst, std::fabs(exp_approx(x) - want) / want);
  }
  EXPECT_LT(worst, 3e-7);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp_approx(0.0f), 1.0f);
  EXPECT_EQ(exp_approx(89.0f), inf);
  EXPECT_EQ(exp_approx(inf), inf);
  EXPECT_EQ(exp_approx(-inf), 0.0f);
  EXPECT_EQ(exp_approx(-200.0f), 0.0f);
  EXPECT_TRUE(std::isnan(exp_approx(std::nanf(""))));
  // Denormal results round gradually, as exp's do.
  EXPECT_NEAR(exp_approx(-100.0f), static_cast<float>(std::exp(-100.0)), std::numeric_limits<float>::denorm_min());
  EXPECT_GT(exp_approx(-88.5f), 0.0f);
  EXPECT_LE(exp_approx(88.72f), std::numeric_limits<float>::max());
}

// The float32 tanh, erf, softplus and log (branch-free, so Tanh / Erf /
// Gelu / Softplus / Mish / Log loops vectorise) against double libm: relative error near
// 0 (the series), a few ulp of the result elsewhere, and the special values.
TEST(Activation, TanhErfSoftplusLogApproxMatchLibm) {
  using kernels::cpu::unary::erf_approx;
  using kernels::cpu::unary::softplus_approx;
  using kernels::cpu::unary::tanh_approx;
  double worst_tanh = 0, worst_erf = 0, worst_softplus = 0;
  auto rel = [](double got, double want) { return std::fabs(got - want) / std::max(std::fabs(want), 1e-30); };
  auto check = [&](float x) {
    const double v = x;
    worst_tanh = std::max(worst_tanh, rel(tanh_approx(x), std::tanh(v)));
    worst_erf = std::max(worst_erf, rel(erf_approx(x), std::erf(v)));
    const double sp = v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
    if (sp > 1e-37) worst_softplus = std::max(worst_softplus, rel(softplus_approx(x), sp));  // normal results
  };
  for (float x = -12.0f; x < 12.0f; x += 0.000731f) check(x);
  for (float x = 1e-30f; x < 1.0f; x *= 1.37f) check(x), check(-x);
  for (float x = 12.0f; x < 100.0f; x *= 1.01f) check(x), check(-x);
  EXPECT_LT(worst_tanh, 4e-7);
  EXPECT_LT(worst_erf, 4e-7);
  EXPECT_LT(worst_softplus, 4e-7);
  // log: every binade from the smallest denormal up, and around 1.
  using kernels::cpu::unary::log_approx;
  double worst_log = 0;
  for (float x = std::numeric_limits<float>::denorm_min(); x < 3e38f;
       x = std::max(x * 1.0137f, std::nextafter(x, 1.0f))) {  // denormals: at least one step
    const double want = std::log(static_cast<double>(x));
    worst_log = std::max(worst_log, std::fabs(log_approx(x) - want) / std::max(std::fabs(want), 1.0));
  }
  for (float x = 0.5f; x < 2.0f; x += 1e-5f) {
    const double want = std::log(static_cast<double>(x));
    if (std::fabs(want) > 1e-6) worst_log = std::max(worst_log, std::fabs(log_approx(x) - want) / std::fabs(want));
  }
  EXPECT_LT(worst_log, 4e-7);
  EXPECT_EQ(log_approx(1.0f), 0.0f);
  EXPECT_EQ(log_approx(0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(log_approx(-0.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(log_approx(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(log_approx(-1.0f)));
  EXPECT_TRUE(std::isnan(log_approx(-std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(log_approx(std::nanf(""))));
  EXPECT_EQ(softplus_approx(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  EXPECT_EQ(softplus_approx(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_TRUE(std::isnan(softplus_approx(std::nanf(""))));
  const float inf = std::numeric_limits<float>::infinity();
  for (float v : {inf, 100.0f, 1e30f}) {
    EXPECT_EQ(tanh_approx(v), 1.0f) << v;
    EXPECT_EQ(tanh_approx(-v), -1.0f) << v;
    EXPECT_EQ(erf_approx(v), 1.0f) << v;
    EXPECT_EQ(erf_approx(-v), -1.0f) << v;
  }
  EXPECT_EQ(tanh_approx(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(tanh_approx(-0.0f)));
  EXPECT_TRUE(std::signbit(erf_approx(-0.0f)));
  EXPECT_EQ(erf_approx(1e-40f), static_cast<float>(1.1283791670955126 * 1e-40f));  // denormals keep their value
  EXPECT_TRUE(std::isnan(tanh_approx(std::nanf(""))));
  EXPECT_TRUE(std::isnan(erf_approx(std::nanf(""))));
  // Through the ops (float32 Exp, Tanh, Erf), the threaded path included.
  std::vector<float> x(100000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -9.0f + 18.0f * static_cast<float>(i) / static_cast<float>(x.size());
  for (const std::string op : {"Exp", "Tanh", "Erf", "Softplus", "Mish", "Log"}) {
    std::vector<float> in = x;
    if (op == "Log")
      for (float& v : in) v = std::fabs(v);
    OpRun r = run_op(op, {tensor<float>({static_cast<int64_t>(in.size())}, in)});
    ASSERT_TRUE(r.status.ok()) << op << ": " << r.status.message();
    const std::vector<float> y = values<float>(r.outputs[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = op == "Log" ? std::fabs(x[i]) : x[i], sp = std::log1p(std::exp(v));
      const double want = op == "Exp" ? std::exp(v) : op == "Tanh" ? std::tanh(v) : op == "Erf" ? std::erf(v)
                          : op == "Softplus" ? sp : op == "Mish" ? v * std::tanh(sp) : std::log(v);
      if (std::isinf(want)) ASSERT_EQ(y[i], want) << op << " at " << v;  // log(0)
      else ASSERT_NEAR(y[i], want, 4e-7 * std::fabs(want) + 1e-30) << op << " at " << v;
    }
  }
}

TEST(Activation, GeluBothForms) {
  OpRun e = run_op("Gelu", {tensor<float>({2}, {1.0f, -1.0f})});
  ASSERT_TRUE(e.status.ok()) << e.status.message();
  EXPECT_NEAR(values<float>(e.outputs[0])[0], 0.8413447f, 1e-6);
  EXPECT_NEAR(values<float>(e.outputs[0])[1], -0.1586553f, 1e-6);
  OpRun t = run_op("Gelu", {tensor<float>({1}, {1.0f})}, attrs({{"approximate", attr_string("tanh")}}));
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  EXPECT_NEAR(values<float>(t.outputs[0])[0], 0.8411920f, 1e-6);
}

TEST(Activation, SigmoidSoftplusExtremes) {
  OpRun s = run_op("Sigmoid", {tensor<float>({4}, {-1000.0f, 1000.0f, 0.0f, -20.0f})});
  ASSERT_TRUE(s.status.ok()) << s.status.message();
  std::vector<float> sy = values<float>(s.outputs[0]);
  EXPECT_EQ(sy[0], 0.0f);
  EXPECT_EQ(sy[1], 1.0f);
  EXPECT_EQ(sy[2], 0.5f);
  EXPECT_NEAR(sy[3] / 2.0611536e-9f, 1.0f, 1e-6);  // tiny results keep their precision
  OpRun p = run_op("Softplus", {tensor<float>({2}, {-1000.0f, 1000.0f})});
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_EQ(values<float>(p.outputs[0]), (std::vector<float>{0.0f, 1000.0f}));
}

TEST(Clip, Int8MinInputOnly) {
  OpRun r = run_op("Clip", {tensor<int8_t>({3}, {-100, 0, 100}), tensor<int8_t>({}, {-5})}, {}, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{-5, 0, 100}));
}

TEST(Clip, MaxOnlyWithOmittedMin) {
  OpRun r = run_op("Clip", {tensor<uint32_t>({2}, {1, 9}), nullptr, tensor<uint32_t>({}, {4})}, {}, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint32_t>(r.outputs[0]), (std::vector<uint32_t>{1, 4}));
}

TEST(Clip, AttributesBeforeOpset11) {
  OpRun r = run_op("Clip", {tensor<float>({3}, {-2, 0.5f, 2})},
                   attrs({{"min", attr_float(-1.0f)}, {"max", attr_float(1.0f)}}), 6);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{-1, 0.5f, 1}));
}

TEST(Clip, MinAboveMaxGivesMax) {
  OpRun r = run_op("Clip", {tensor<float>({2}, {-3, 3}), tensor<float>({}, {2}), tensor<float>({}, {1})}, {}, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 1}));
}

TEST(Clip, NonScalarBoundFails) {
  OpRun r = run_op("Clip", {tensor<float>({2}, {-3, 3}), tensor<float>({2}, {0, 1})}, {}, 13);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("scalar"), std::string::npos) << r.status.message();
}

OpRun cast(const Data& x, DType to) {
  return run_op("Cast", {x}, attrs({{"to", attr_int(static_cast<int64_t>(to))}}));
}

TEST(Cast, FloatToIntTruncatesAndSaturates) {
  const float nan = std::nanf("");
  OpRun r = cast(tensor<float>({6}, {2.7f, -2.7f, 1e10f, -1e10f, nan, 0.0f}), DType::kInt32);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]),
            (std::vector<int32_t>{2, -2, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0, 0}));
  OpRun u = cast(tensor<double>({2}, {300.9, 1e30}), DType::kUInt64);
  ASSERT_TRUE(u.status.ok()) << u.status.message();
  EXPECT_EQ(values<uint64_t>(u.outputs[0]), (std::vector<uint64_t>{300, std::numeric_limits<uint64_t>::max()}));
}

TEST(Cast, IntegersWrapAndBool) {
  OpRun w = cast(tensor<int64_t>({2}, {257, -1}), DType::kUInt8);
  ASSERT_TRUE(w.status.ok()) << w.status.message();
  EXPECT_EQ(values<uint8_t>(w.outputs[0]), (std::vector<uint8_t>{1, 255}));
  OpRun b = cast(tensor<float>({3}, {0.0f, -0.5f, 2.0f}), DType::kBool);
  ASSERT_TRUE(b.status.ok()) << b.status.message();
  EXPECT_EQ(values<bool>(b.outputs[0]), (std::vector<bool>{false, true, true}));
  OpRun f = cast(tensor<bool>({2}, {true, false}), DType::kFloat64);
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_EQ(values<double>(f.outputs[0]), (std::vector<double>{1.0, 0.0}));
}

TEST(Cast, ToFloat16RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): even is 1.
  // From double, 1 + 2^-11 + 2^-40 must round up (double -> float -> half
  // would round twice and give 1).
  OpRun r = cast(tensor<double>({3}, {1.0 + std::ldexp(1.0, -11), 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
                                      1.0 + 3 * std::ldexp(1.0, -11)}),
                 DType::kFloat16);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(from_halves(values<uint16_t>(r.outputs[0])),
            (std::vector<float>{1.0f, 1.0f + std::ldexp(1.0f, -10), 1.0f + 2 * std::ldexp(1.0f, -10)}));
}

TEST(Cast, Float16ToBFloat16AndInt) {
  OpRun r = cast(raw_tensor<uint16_t>(DType::kFloat16, {2}, halves({1.5f, -3.75f})), DType::kBFloat16);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  std::vector<uint16_t> y = values<uint16_t>(r.outputs[0]);
  EXPECT_EQ(bf16_to_float(y[0]), 1.5f);
  EXPECT_EQ(bf16_to_float(y[1]), -3.75f);
  OpRun i = cast(raw_tensor<uint16_t>(DType::kFloat16, {2}, halves({1.5f, -3.75f})), DType::kInt16);
  ASSERT_TRUE(i.status.ok()) << i.status.message();
  EXPECT_EQ(values<int16_t>(i.outputs[0]), (std::vector<int16_t>{1, -3}));
}

TEST(Cast, LegacyStringTarget) {
  OpRun r = run_op("Cast", {tensor<float>({1}, {3.9f})}, attrs({{"to", attr_string("INT64")}}), 1);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{3}));
}

// Sub-byte targets, held one per byte (subbyte.h), as the ONNX reference
// (ml_dtypes) converts: integers wrap, floats truncate through int32 first,
// float4e2m1 rounds to nearest even and saturates.
TEST(Cast, SubByteTargetsWrapOrRound) {
  const float nan = std::nanf("");
  OpRun r = cast(tensor<float>({6}, {-9.7f, -8.5f, 7.5f, 16.f, nan, 1e10f}), DType::kInt4);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{7, -8, 7, 0, 0, 0}));
  OpRun u = cast(tensor<int32_t>({4}, {-1, 4, 5, 100}), DType::kUInt2);
  ASSERT_TRUE(u.status.ok()) << u.status.message();
  EXPECT_EQ(values<uint8_t>(u.outputs[0]), (std::vector<uint8_t>{3, 0, 1, 0}));
  OpRun f = cast(tensor<float>({7}, {0.25f, 0.75f, 2.5f, 5.f, 5.01f, -100.f, -0.f}), DType::kFloat4E2M1);
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_EQ(values<uint8_t>(f.outputs[0]), (std::vector<uint8_t>{0, 2, 4, 6, 7, 15, 8}));
  OpRun back = cast(f.outputs[0], DType::kFloat32);
  ASSERT_TRUE(back.status.ok()) << back.status.message();
  EXPECT_EQ(values<float>(back.outputs[0]), (std::vector<float>{0.f, 1.f, 2.f, 4.f, 6.f, -6.f, -0.f}));
}

TEST(Cast, CastLikeTakesInput1Type) {
  OpRun r = run_op("CastLike", {tensor<int32_t>({2}, {-1, 7}), tensor<double>({1}, {0.0})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<double>(r.outputs[0]), (std::vector<double>{-1.0, 7.0}));
}

OpRun dropout(const std::vector<Data>& in, int opset, AttributeMap a = {}) {
  OpSpec s;
  s.op_type = "Dropout";
  s.opset = opset;
  s.attrs = std::move(a);
  s.num_outputs = 2;
  return run_op(s, in);
}

TEST(Dropout, TrainingWithRatioZeroIsIdentity) {
  OpRun r = dropout({tensor<float>({2}, {1, 2}), tensor<float>({}, {0.0f}), tensor<bool>({}, {true})}, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(values<bool>(r.outputs[1]), (std::vector<bool>{true, true}));
}

TEST(Dropout, TrainingWithRatioFailsCleanly) {
  OpRun r = dropout({tensor<float>({2}, {1, 2}), tensor<float>({}, {0.3f}), tensor<bool>({}, {true})}, 13);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("training"), std::string::npos) << r.status.message();
}

TEST(Dropout, InferenceIgnoresRatio) {
  OpRun r = dropout({tensor<float>({2}, {1, 2}), tensor<float>({}, {0.3f})}, 13);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 2}));
}

TEST(Dropout, Opset7MaskHasInputType) {
  OpRun r = dropout({tensor<double>({2}, {1, 2})}, 7, attrs({{"ratio", attr_float(0.4f)}}));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[1]->dtype, DType::kFloat64);
  EXPECT_EQ(values<double>(r.outputs[1]), (std::vector<double>{1.0, 1.0}));
}

TEST(Dropout, ConstantTrainingModeRefusedAtCompile) {
  OpSpec s;
  s.op_type = "Dropout";
  s.opset = 13;
  s.constant_inputs = {1, 2};
  OpRun r = run_op(s, {tensor<float>({2}, {1, 2}), tensor<float>({}, {0.5f}), tensor<bool>({}, {true})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("random"), std::string::npos) << r.status.message();
  OpRun z = run_op(s, {tensor<float>({2}, {1, 2}), tensor<float>({}, {0.0f}), tensor<bool>({}, {true})});
  ASSERT_TRUE(z.status.ok()) << z.status.message();
}

TEST(Activation, NaNPropagates) {
  const float nan = std::nanf("");
  for (const char* op : {"Relu", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Sigmoid", "Tanh", "Softplus", "Gelu"}) {
    OpRun r = run_op(op, {tensor<float>({1}, {nan})});
    ASSERT_TRUE(r.status.ok()) << op << ": " << r.status.message();
    EXPECT_TRUE(std::isnan(values<float>(r.outputs[0])[0])) << op;
  }
}

TEST(Unary, AbsOfNegativeZeroIsPositive) {
  OpRun r = run_op("Abs", {tensor<float>({1}, {-0.0f})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_FALSE(std::signbit(values<float>(r.outputs[0])[0]));
}

TEST(Dropout, Opset6TrainingRefused) {
  OpRun r = dropout({tensor<float>({2}, {1, 2})}, 6, attrs({{"is_test", attr_int(0)}}));
  EXPECT_FALSE(r.status.ok());
  OpRun t = dropout({tensor<float>({2}, {1, 2})}, 6, attrs({{"is_test", attr_int(1)}}));
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  EXPECT_EQ(values<float>(t.outputs[0]), (std::vector<float>{1, 2}));
}

}  // namespace
}  // namespace openacl::testing
