// float8 element types: Cast/CastLike to and from each float8 type (rounding,
// saturate, NaN/inf, fnuz zero and NaN rules, float8e8m0 round modes) and
// Quantize/DequantizeLinear with float8. Codes are the raw bytes.
#include <cmath>
#include <limits>

#include "base/fp16.h"
#include "kernels/cpu/float8.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

using graph::AttributeMap;
using Codes = std::vector<uint8_t>;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

OpRun cast(const Data& x, DType to, int64_t saturate = -1, const char* round_mode = nullptr) {
  AttributeMap a;
  a.set("to", attr_int(static_cast<int64_t>(to)));
  if (saturate >= 0) a.set("saturate", attr_int(saturate));
  if (round_mode) a.set("round_mode", attr_string(round_mode));
  return run_op("Cast", {x}, a, 25);
}

Codes to_f8(const std::vector<float>& x, DType to, int64_t saturate = -1, const char* round_mode = nullptr) {
  OpRun r = cast(tensor<float>({static_cast<int64_t>(x.size())}, x), to, saturate, round_mode);
  EXPECT_TRUE(r.status.ok()) << r.status.message();
  if (!r.status.ok()) return {};
  EXPECT_EQ(r.outputs[0]->dtype, to);
  return values<uint8_t>(r.outputs[0]);
}

std::vector<float> from_f8(const Codes& c, DType from) {
  OpRun r = cast(raw_tensor<uint8_t>(from, {static_cast<int64_t>(c.size())}, c), DType::kFloat32);
  EXPECT_TRUE(r.status.ok()) << r.status.message();
  if (!r.status.ok()) return {};
  return values<float>(r.outputs[0]);
}

TEST(Float8, E4M3FNValuesRoundTrip) {
  // 1, -2, max 448, min normal 2^-6, min subnormal 2^-9, 0, -0.
  const std::vector<float> x{1.0f, -2.0f, 448.0f, 0.015625f, 0.001953125f, 0.0f, -0.0f};
  const Codes c = to_f8(x, DType::kFloat8E4M3FN);
  EXPECT_EQ(c, (Codes{0x38, 0xC0, 0x7E, 0x08, 0x01, 0x00, 0x80}));
  const std::vector<float> back = from_f8(c, DType::kFloat8E4M3FN);
  EXPECT_EQ(back, x);
  EXPECT_TRUE(std::signbit(back[6]));
}

TEST(Float8, EveryCodeRoundTripsThroughFloatForEachType) {
  for (DType t : {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ}) {
    Codes all(256);
    for (int i = 0; i < 256; ++i) all[i] = static_cast<uint8_t>(i);
    const std::vector<float> f = from_f8(all, t);
    const Codes back = to_f8(f, t, 0);
    ASSERT_EQ(back.size(), 256u);
    for (int i = 0; i < 256; ++i) {
      if (std::isnan(f[i])) EXPECT_TRUE(std::isnan(kernels::cpu::f8::to_float(t, back[i]))) << graph::dtype_name(t) << i;
      else EXPECT_EQ(back[i], i) << graph::dtype_name(t) << " code " << i << " = " << f[i];
    }
  }
}

TEST(Float8, RoundsHalfToEven) {
  // e4m3fn around 1: step 1/8. 1.0625 ties to 1 (even), 1.1875 to 1.25; just
  // above the tie rounds up. Subnormals (step 2^-9): 2^-10 ties to 0,
  // 3 * 2^-10 to 2 * 2^-9.
  EXPECT_EQ(to_f8({1.0625f, 1.1875f, 1.0625001f, 0.0009765625f, 0.0029296875f}, DType::kFloat8E4M3FN),
            (Codes{0x38, 0x3A, 0x39, 0x00, 0x02}));
  // e5m2 around 1: step 1/4; 1.125 ties to 1, 1.375 to 1.5.
  EXPECT_EQ(to_f8({1.125f, 1.375f}, DType::kFloat8E5M2), (Codes{0x3C, 0x3E}));
}

TEST(Float8, SaturateClampsOverflowAndInfinity) {
  const std::vector<float> x{1000.0f, -1000.0f, kInf, -kInf, 1e30f};
  EXPECT_EQ(to_f8(x, DType::kFloat8E4M3FN), (Codes{0x7E, 0xFE, 0x7E, 0xFE, 0x7E}));
  EXPECT_EQ(to_f8(x, DType::kFloat8E4M3FNUZ), (Codes{0x7F, 0xFF, 0x7F, 0xFF, 0x7F}));
  const std::vector<float> y{1e6f, -1e6f, kInf, -kInf};
  EXPECT_EQ(to_f8(y, DType::kFloat8E5M2, 1), (Codes{0x7B, 0xFB, 0x7B, 0xFB}));
  EXPECT_EQ(to_f8(y, DType::kFloat8E5M2FNUZ, 1), (Codes{0x7F, 0xFF, 0x7F, 0xFF}));
}

TEST(Float8, NoSaturateGivesInfOrNaN) {
  // 464 is the tie between 448 and the (NaN) next code: stays 448; 470 overflows.
  EXPECT_EQ(to_f8({464.0f, 470.0f, -1000.0f, kInf}, DType::kFloat8E4M3FN, 0), (Codes{0x7E, 0x7F, 0xFF, 0x7F}));
  EXPECT_EQ(to_f8({1e6f, -1e6f, kInf, -kInf}, DType::kFloat8E5M2, 0), (Codes{0x7C, 0xFC, 0x7C, 0xFC}));
  EXPECT_EQ(to_f8({1000.0f, -kInf}, DType::kFloat8E4M3FNUZ, 0), (Codes{0x80, 0x80}));
  EXPECT_EQ(to_f8({1e6f, kInf}, DType::kFloat8E5M2FNUZ, 0), (Codes{0x80, 0x80}));
}

TEST(Float8, NaNAndInfinityDecode) {
  const Codes nan_e4m3 = to_f8({kNaN}, DType::kFloat8E4M3FN);
  EXPECT_EQ(nan_e4m3[0] & 0x7F, 0x7F);
  std::vector<float> f = from_f8({0x7F, 0xFF, 0x7E}, DType::kFloat8E4M3FN);
  EXPECT_TRUE(std::isnan(f[0]) && std::isnan(f[1]));
  EXPECT_EQ(f[2], 448.0f);
  f = from_f8({0x7C, 0xFC, 0x7D, 0x7B}, DType::kFloat8E5M2);
  EXPECT_EQ(f[0], kInf);
  EXPECT_EQ(f[1], -kInf);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(f[3], 57344.0f);
  EXPECT_TRUE(std::isnan(from_f8(to_f8({kNaN}, DType::kFloat8E5M2), DType::kFloat8E5M2)[0]));
}

TEST(Float8, FnuzHasOneNaNAndNoNegativeZero) {
  for (DType t : {DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2FNUZ}) {
    // -0 and negative values rounding to zero become +0; NaN is 0x80.
    EXPECT_EQ(to_f8({-0.0f, -1e-10f, kNaN, -kNaN}, t), (Codes{0x00, 0x00, 0x80, 0x80})) << graph::dtype_name(t);
    const std::vector<float> f = from_f8({0x80, 0x00, 0x7F}, t);
    EXPECT_TRUE(std::isnan(f[0]));
    EXPECT_EQ(f[1], 0.0f);
    EXPECT_FALSE(std::signbit(f[1]));
  }
  EXPECT_EQ(from_f8({0x7F, 0x01}, DType::kFloat8E4M3FNUZ), (std::vector<float>{240.0f, 0.0009765625f}));
  EXPECT_EQ(from_f8({0x7F, 0x01}, DType::kFloat8E5M2FNUZ), (std::vector<float>{57344.0f, std::ldexp(1.0f, -17)}));
}

TEST(Float8, Float16AndDoubleSources) {
  const std::vector<uint16_t> h{float_to_half(1.5f), float_to_half(-300.0f), float_to_half(1e4f)};
  OpRun r = cast(raw_tensor<uint16_t>(DType::kFloat16, {3}, h), DType::kFloat8E4M3FN);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (Codes{0x3C, 0xF9, 0x7E}));  // -300 -> -288 (step 32)
  // Just above the 1.0625 tie: one rounding of the double rounds up (through
  // float it would tie to 1.0).
  OpRun d = cast(tensor<double>({2}, {1.0625 + 1e-12, 1e300}), DType::kFloat8E4M3FN);
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(values<uint8_t>(d.outputs[0]), (Codes{0x39, 0x7E}));
}

TEST(Float8, ToFloat16IntegerBoolAndOtherFloat8) {
  const Codes c{0x3C, 0xF9, 0x00};  // 1.5, -288, 0 in e4m3fn
  const Data x = raw_tensor<uint8_t>(DType::kFloat8E4M3FN, {3}, c);
  OpRun h = cast(x, DType::kFloat16);
  ASSERT_TRUE(h.status.ok()) << h.status.message();
  std::vector<uint16_t> hv = values<uint16_t>(h.outputs[0]);
  EXPECT_EQ(half_to_float(hv[0]), 1.5f);
  EXPECT_EQ(half_to_float(hv[1]), -288.0f);
  OpRun i = cast(x, DType::kInt32);
  ASSERT_TRUE(i.status.ok()) << i.status.message();
  EXPECT_EQ(values<int32_t>(i.outputs[0]), (std::vector<int32_t>{1, -288, 0}));
  OpRun b = cast(x, DType::kBool);
  ASSERT_TRUE(b.status.ok()) << b.status.message();
  EXPECT_EQ(values<bool>(b.outputs[0]), (std::vector<bool>{true, true, false}));
  OpRun e = cast(x, DType::kFloat8E5M2);  // -288 ties between -256 and -320: even is -256
  ASSERT_TRUE(e.status.ok()) << e.status.message();
  EXPECT_EQ(from_f8(values<uint8_t>(e.outputs[0]), DType::kFloat8E5M2), (std::vector<float>{1.5f, -256.0f, 0.0f}));
  OpRun n = cast(tensor<int64_t>({2}, {7, -100000}), DType::kFloat8E4M3FN);
  ASSERT_TRUE(n.status.ok()) << n.status.message();
  EXPECT_EQ(values<uint8_t>(n.outputs[0]), (Codes{0x4E, 0xFE}));  // 7 exactly; -1e5 saturates
}

TEST(Float8, CastLikeAndEmptyTensor) {
  OpRun r = run_op("CastLike", {tensor<float>({2}, {2.0f, 1000.0f}), raw_tensor<uint8_t>(DType::kFloat8E5M2, {0}, {})},
                   [] { AttributeMap a; a.set("saturate", attr_int(0)); return a; }(), 21);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (Codes{0x40, 0x64}));  // 1000 -> 1024
  OpRun e = cast(tensor<float>({0, 3}, {}), DType::kFloat8E4M3FNUZ);
  ASSERT_TRUE(e.status.ok()) << e.status.message();
  EXPECT_EQ(e.outputs[0]->dims, (std::vector<int64_t>{0, 3}));
}

TEST(Float8, E8M0RoundModesAndSaturate) {
  // 2^(e-127); 0 -> code 0 (2^-127), the sign is dropped.
  const std::vector<float> x{0.0f, 1.0f, 1.1f, 1.5f, 1.4f, -4.0f, kNaN, kInf};
  EXPECT_EQ(to_f8(x, DType::kFloat8E8M0), (Codes{0, 127, 128, 128, 128, 129, 0xFF, 0xFF}));
  EXPECT_EQ(to_f8(x, DType::kFloat8E8M0, 1, "down"), (Codes{0, 127, 127, 127, 127, 129, 0xFF, 0xFF}));
  EXPECT_EQ(to_f8(x, DType::kFloat8E8M0, 1, "nearest"), (Codes{0, 127, 127, 128, 127, 129, 0xFF, 0xFF}));
  // Above 2^127 rounds up into NaN unless saturating.
  EXPECT_EQ(to_f8({3e38f}, DType::kFloat8E8M0, 1), (Codes{0xFE}));
  EXPECT_EQ(to_f8({3e38f}, DType::kFloat8E8M0, 0), (Codes{0xFF}));
  const std::vector<float> f = from_f8({0, 127, 130, 0xFF}, DType::kFloat8E8M0);
  EXPECT_EQ(f[0], std::ldexp(1.0f, -127));
  EXPECT_EQ(f[1], 1.0f);
  EXPECT_EQ(f[2], 8.0f);
  EXPECT_TRUE(std::isnan(f[3]));
  OpRun bad = cast(tensor<float>({1}, {1.0f}), DType::kFloat8E8M0, 1, "sideways");
  EXPECT_FALSE(bad.status.ok());
}

TEST(Float8, QuantizeLinearSaturateAndPerAxis) {
  const Data zp = raw_tensor<uint8_t>(DType::kFloat8E4M3FN, {1}, {0});
  OpRun r = run_op("QuantizeLinear", {tensor<float>({4}, {0, 3, 1e5f, -1e5f}), tensor<float>({}, {2}), zp}, {}, 21);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dtype, DType::kFloat8E4M3FN);
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (Codes{0x00, 0x3C, 0x7E, 0xFE}));
  AttributeMap nosat;
  nosat.set("saturate", attr_int(0));
  OpRun n = run_op("QuantizeLinear", {tensor<float>({2}, {1e6f, 2}), tensor<float>({}, {2}),
                                      raw_tensor<uint8_t>(DType::kFloat8E5M2, {1}, {0})},
                   nosat, 21);
  ASSERT_TRUE(n.status.ok()) << n.status.message();
  EXPECT_EQ(values<uint8_t>(n.outputs[0]), (Codes{0x7C, 0x3C}));  // inf, 1
  AttributeMap axis;
  axis.set("axis", attr_int(1));
  OpRun a = run_op("QuantizeLinear", {tensor<float>({2, 2}, {1, 1, 4, 4}), tensor<float>({2}, {1, 4}),
                                      raw_tensor<uint8_t>(DType::kFloat8E4M3FNUZ, {2}, {0, 0})},
                   axis, 21);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  EXPECT_EQ(from_f8(values<uint8_t>(a.outputs[0]), DType::kFloat8E4M3FNUZ), (std::vector<float>{1, 0.25f, 4, 1}));
}

TEST(Float8, DequantizeLinear) {
  // e5m2 {1, -2, inf, NaN} * 0.5 as float16.
  OpRun r = run_op("DequantizeLinear", {raw_tensor<uint8_t>(DType::kFloat8E5M2, {4}, {0x3C, 0xC0, 0x7C, 0x7E}),
                                        raw_tensor<uint16_t>(DType::kFloat16, {}, {float_to_half(0.5f)})},
                   {}, 21);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dtype, DType::kFloat16);
  const std::vector<uint16_t> h = values<uint16_t>(r.outputs[0]);
  EXPECT_EQ(half_to_float(h[0]), 0.5f);
  EXPECT_EQ(half_to_float(h[1]), -1.0f);
  EXPECT_EQ(half_to_float(h[2]), kInf);
  EXPECT_TRUE(std::isnan(half_to_float(h[3])));
  AttributeMap axis;
  axis.set("axis", attr_int(0));
  OpRun a = run_op("DequantizeLinear", {raw_tensor<uint8_t>(DType::kFloat8E4M3FN, {2, 1}, {0x38, 0x7E}),
                                        tensor<float>({2}, {3, 2}), raw_tensor<uint8_t>(DType::kFloat8E4M3FN, {2}, {0, 0})},
                   axis, 21);
  ASSERT_TRUE(a.status.ok()) << a.status.message();
  EXPECT_EQ(values<float>(a.outputs[0]), (std::vector<float>{3, 896}));
  // A zero point of another type is refused cleanly.
  OpRun bad = run_op("DequantizeLinear", {raw_tensor<uint8_t>(DType::kFloat8E4M3FN, {1}, {0x38}), tensor<float>({}, {1}),
                                          raw_tensor<uint8_t>(DType::kFloat8E5M2, {1}, {0})},
                     {}, 21);
  EXPECT_FALSE(bad.status.ok());
}

}  // namespace
}  // namespace openacl::testing
