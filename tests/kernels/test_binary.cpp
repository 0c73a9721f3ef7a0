// Binary / variadic element-wise kernels, Where, PRelu and (De)QuantizeLinear:
// the cases the ONNX node tests miss (every broadcast pattern the engine
// collapses, parallel sizes, 16-bit floats, integer edge cases, bad input).
#include <cmath>
#include <limits>

#include "base/fp16.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

using I64s = std::vector<int64_t>;

// Reference numpy broadcast of a binary op on float data.
template <class F>
std::vector<float> ref_broadcast(const I64s& ad, const std::vector<float>& a, const I64s& bd,
                                 const std::vector<float>& b, I64s* out_dims, F f) {
  const size_t r = std::max(ad.size(), bd.size());
  I64s pa(r - ad.size(), 1), pb(r - bd.size(), 1), od(r);
  pa.insert(pa.end(), ad.begin(), ad.end());
  pb.insert(pb.end(), bd.begin(), bd.end());
  int64_t n = 1;
  for (size_t i = 0; i < r; ++i) n *= (od[i] = std::max(pa[i], pb[i]));
  std::vector<float> y(static_cast<size_t>(n));
  for (int64_t e = 0; e < n; ++e) {
    int64_t rem = e, ia = 0, ib = 0, sa = 1, sb = 1;
    for (size_t i = r; i-- > 0;) {
      const int64_t idx = rem % od[i];
      rem /= od[i];
      ia += (pa[i] == 1 ? 0 : idx) * sa;
      ib += (pb[i] == 1 ? 0 : idx) * sb;
      sa *= pa[i];
      sb *= pb[i];
    }
    y[static_cast<size_t>(e)] = f(a[static_cast<size_t>(ia)], b[static_cast<size_t>(ib)]);
  }
  *out_dims = od;
  return y;
}

std::vector<float> iota_f(int64_t n, float start, float step) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + step * static_cast<float>(i % 1000);
  return v;
}
int64_t count(const I64s& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

TEST(BinaryBroadcast, EveryPatternMatchesReference) {
  const std::vector<std::pair<I64s, I64s>> cases = {
      {{2, 3}, {2, 3}},           {{2, 3}, {}},           {{}, {2, 3}},          {{2, 3}, {3}},
      {{2, 3}, {2, 1}},           {{1, 3}, {2, 1}},       {{2, 3, 4, 5}, {3, 1, 1}}, {{2, 1, 4}, {3, 1}},
      {{2, 3, 4}, {1, 3, 1}},     {{4, 1, 3, 1}, {1, 5, 1, 2}}, {{1}, {1, 1, 1}},  {{5, 1, 1, 7}, {5, 3, 2, 7}},
      {{3, 40000}, {40000}},      {{70000}, {1}},         {{1}, {70000}},        {{2, 50000}, {2, 1}},
      {{3, 7, 4000}, {7, 1}},
  };
  for (const auto& [ad, bd] : cases) {
    const auto a = iota_f(count(ad), -3.0f, 0.5f), b = iota_f(count(bd), 1.0f, 0.25f);
    I64s od;
    const auto want = ref_broadcast(ad, a, bd, b, &od, [](float x, float y) { return x * 2 - y; });
    // y = (a + a) - b exercises two kernels; compare Sub of Add output.
    OpRun add = run_op("Add", {tensor<float>(ad, a), tensor<float>(ad, a)});
    ASSERT_TRUE(add.status.ok()) << add.status.message();
    OpRun r = run_op("Sub", {add.outputs[0], tensor<float>(bd, b)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.outputs[0]->dims, od);
    EXPECT_EQ(values<float>(r.outputs[0]), want) << "shapes " << ad.size() << "/" << bd.size();
  }
}

TEST(BinaryBroadcast, EmptyOutput) {
  OpRun r = run_op("Add", {tensor<float>({0, 3}, {}), tensor<float>({3}, {1, 2, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (I64s{0, 3}));
}

TEST(BinaryBroadcast, IncompatibleShapesFailCleanly) {
  OpRun r = run_op("Mul", {tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), tensor<float>({2}, {1, 2})});
  EXPECT_FALSE(r.status.ok());
}

TEST(BinaryBroadcast, LegacyAxisBroadcast) {
  graph::AttributeMap attrs;
  attrs.set("broadcast", attr_int(1));
  attrs.set("axis", attr_int(0));
  OpRun r = run_op("Add", {tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), tensor<float>({2}, {10, 20})}, attrs, 6);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{11, 12, 13, 24, 25, 26}));
}

TEST(BinaryArith, Float16ComputedInFloat) {
  std::vector<uint16_t> a = {float_to_half(1.5f), float_to_half(-2.0f), float_to_half(65504.0f)};
  std::vector<uint16_t> b = {float_to_half(0.25f)};
  OpRun r = run_op("Mul", {raw_tensor(DType::kFloat16, {3}, a), raw_tensor(DType::kFloat16, {1}, b)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  auto y = values<uint16_t>(r.outputs[0]);
  EXPECT_EQ(half_to_float(y[0]), 0.375f);
  EXPECT_EQ(half_to_float(y[1]), -0.5f);
  EXPECT_EQ(half_to_float(y[2]), 16376.0f);
  OpRun bf = run_op("Add", {raw_tensor(DType::kBFloat16, {1}, std::vector<uint16_t>{float_to_bf16(1.0f)}),
                            raw_tensor(DType::kBFloat16, {1}, std::vector<uint16_t>{float_to_bf16(2.0f)})});
  ASSERT_TRUE(bf.status.ok()) << bf.status.message();
  EXPECT_EQ(bf16_to_float(values<uint16_t>(bf.outputs[0])[0]), 3.0f);
}

TEST(BinaryArith, IntegersWrapAround) {
  const int32_t mx = std::numeric_limits<int32_t>::max(), mn = std::numeric_limits<int32_t>::min();
  OpRun r = run_op("Add", {tensor<int32_t>({2}, {mx, mn}), tensor<int32_t>({2}, {1, -1})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{mn, mx}));
  OpRun m = run_op("Mul", {tensor<uint16_t>({1}, {65535}), tensor<uint16_t>({1}, {65535})});
  ASSERT_TRUE(m.status.ok()) << m.status.message();
  EXPECT_EQ(values<uint16_t>(m.outputs[0]), (std::vector<uint16_t>{1}));
}

TEST(BinaryArith, IntegerDivisionByZeroIsDefined) {
  const int32_t mn = std::numeric_limits<int32_t>::min();
  OpRun r = run_op("Div", {tensor<int32_t>({4}, {7, -7, mn, 5}), tensor<int32_t>({4}, {2, 2, -1, 0})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{3, -3, mn, 0}));
  OpRun m = run_op("Mod", {tensor<int8_t>({4}, {-128, 5, -7, 7}), tensor<int8_t>({4}, {-1, 0, 3, -3})});
  ASSERT_TRUE(m.status.ok()) << m.status.message();
  EXPECT_EQ(values<int8_t>(m.outputs[0]), (std::vector<int8_t>{0, 0, 2, -2}));
}

TEST(BinaryArith, ModFmodAndFloorForFloats) {
  graph::AttributeMap fmod1;
  fmod1.set("fmod", attr_int(1));
  OpRun f = run_op("Mod", {tensor<float>({2}, {-7, 7}), tensor<float>({2}, {3, -3})}, fmod1);
  ASSERT_TRUE(f.status.ok()) << f.status.message();
  EXPECT_EQ(values<float>(f.outputs[0]), (std::vector<float>{-1, 1}));
  OpRun i = run_op("Mod", {tensor<int64_t>({2}, {-7, 7}), tensor<int64_t>({2}, {3, -3})}, fmod1);
  ASSERT_TRUE(i.status.ok()) << i.status.message();
  EXPECT_EQ(values<int64_t>(i.outputs[0]), (std::vector<int64_t>{-1, 1}));
  OpRun p = run_op("Mod", {tensor<double>({3}, {-7, 7, -0.0}), tensor<double>({3}, {3, -3, 2})}, {}, 28);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  auto v = values<double>(p.outputs[0]);
  EXPECT_EQ(v[0], 2);
  EXPECT_EQ(v[1], -2);
  EXPECT_EQ(v[2], 0);
  EXPECT_FALSE(std::signbit(v[2]));
}

TEST(BinaryArith, BitShiftAndBitwise) {
  graph::AttributeMap right;
  right.set("direction", attr_string("RIGHT"));
  OpRun r = run_op("BitShift", {tensor<int16_t>({4}, {-16, 16, -1, 5}), tensor<int16_t>({1}, {2})}, right, 28);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int16_t>(r.outputs[0]), (std::vector<int16_t>{-4, 4, -1, 1}));
  graph::AttributeMap left;
  left.set("direction", attr_string("LEFT"));
  OpRun l = run_op("BitShift", {tensor<uint8_t>({3}, {1, 255, 3}), tensor<uint8_t>({3}, {7, 1, 8})}, left);
  ASSERT_TRUE(l.status.ok()) << l.status.message();
  EXPECT_EQ(values<uint8_t>(l.outputs[0]), (std::vector<uint8_t>{128, 254, 0}));
  OpRun x = run_op("BitwiseXor", {tensor<uint64_t>({2, 1}, {0xF0, 0xFF}), tensor<uint64_t>({2}, {0x0F, 0xFF})});
  ASSERT_TRUE(x.status.ok()) << x.status.message();
  EXPECT_EQ(values<uint64_t>(x.outputs[0]), (std::vector<uint64_t>{0xFF, 0x0F, 0xF0, 0x00}));
}

TEST(BinaryArith, PowMixedTypes) {
  OpRun fi = run_op("Pow", {tensor<float>({3}, {2, -2, 0.5f}), tensor<int64_t>({3}, {10, 3, -1})});
  ASSERT_TRUE(fi.status.ok()) << fi.status.message();
  EXPECT_EQ(values<float>(fi.outputs[0]), (std::vector<float>{1024, -8, 2}));
  OpRun if_ = run_op("Pow", {tensor<int32_t>({3}, {2, 9, 3}), tensor<float>({1}, {0.5f})});
  ASSERT_TRUE(if_.status.ok()) << if_.status.message();
  EXPECT_EQ(values<int32_t>(if_.outputs[0]), (std::vector<int32_t>{1, 3, 1}));
  OpRun ii = run_op("Pow", {tensor<int64_t>({4}, {3, -1, 2, 1}), tensor<int64_t>({4}, {39, -3, -2, -5})});
  ASSERT_TRUE(ii.status.ok()) << ii.status.message();
  EXPECT_EQ(values<int64_t>(ii.outputs[0]), (std::vector<int64_t>{4052555153018976267LL, -1, 0, 1}));
  // A single exponent 2 takes the x * x path; its dims still broadcast.
  OpRun sq = run_op("Pow", {tensor<double>({3}, {-3, 0.5, 1e200}), tensor<int32_t>({1, 1}, {2})});
  ASSERT_TRUE(sq.status.ok()) << sq.status.message();
  EXPECT_EQ(sq.outputs[0]->dims, (I64s{1, 3}));
  EXPECT_EQ(values<double>(sq.outputs[0]), (std::vector<double>{9, 0.25, std::pow(1e200, 2.0)}));
  OpRun bad = run_op("Pow", {tensor<int8_t>({1}, {2}), tensor<int8_t>({1}, {2})});
  EXPECT_FALSE(bad.status.ok());
}

TEST(BinaryCompare, BoolOutputWithBroadcastAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpRun r = run_op("Less", {tensor<float>({2, 2}, {1, nan, 3, 4}), tensor<float>({2}, {2, 2})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dtype, DType::kBool);
  EXPECT_EQ(values<bool>(r.outputs[0]), (std::vector<bool>{true, false, false, false}));
  OpRun e = run_op("Equal", {tensor<bool>({2}, {true, false}), tensor<bool>({1}, {false})});
  ASSERT_TRUE(e.status.ok()) << e.status.message();
  EXPECT_EQ(values<bool>(e.outputs[0]), (std::vector<bool>{false, true}));
  OpRun ge = run_op("GreaterOrEqual", {tensor<uint64_t>({2}, {5, 1}), tensor<uint64_t>({}, {5})});
  ASSERT_TRUE(ge.status.ok()) << ge.status.message();
  EXPECT_EQ(values<bool>(ge.outputs[0]), (std::vector<bool>{true, false}));
  OpRun x = run_op("Xor", {tensor<bool>({2, 1}, {true, false}), tensor<bool>({2}, {true, false})});
  ASSERT_TRUE(x.status.ok()) << x.status.message();
  EXPECT_EQ(values<bool>(x.outputs[0]), (std::vector<bool>{false, true, true, false}));
}

TEST(Variadic, SumMeanMaxMinBroadcast) {
  auto a = tensor<float>({2, 1}, {1, 2});
  auto b = tensor<float>({3}, {10, 20, 30});
  auto c = tensor<float>({}, {100});
  OpRun s = run_op("Sum", {a, b, c});
  ASSERT_TRUE(s.status.ok()) << s.status.message();
  EXPECT_EQ(s.outputs[0]->dims, (I64s{2, 3}));
  EXPECT_EQ(values<float>(s.outputs[0]), (std::vector<float>{111, 121, 131, 112, 122, 132}));
  OpRun m = run_op("Mean", {a, b, c});
  ASSERT_TRUE(m.status.ok()) << m.status.message();
  EXPECT_FLOAT_EQ(values<float>(m.outputs[0])[0], 37.0f);
  OpRun one = run_op("Max", {tensor<int8_t>({2}, {-1, 5})});
  ASSERT_TRUE(one.status.ok()) << one.status.message();
  EXPECT_EQ(values<int8_t>(one.outputs[0]), (std::vector<int8_t>{-1, 5}));
  OpRun mn = run_op("Min", {tensor<uint32_t>({2}, {7, 1}), tensor<uint32_t>({2, 1}, {3, 9})});
  ASSERT_TRUE(mn.status.ok()) << mn.status.message();
  EXPECT_EQ(values<uint32_t>(mn.outputs[0]), (std::vector<uint32_t>{3, 1, 7, 1}));
}

TEST(Variadic, LargeInputsSplitAcrossThreads) {
  const int64_t n = 40000;
  const auto a = iota_f(3 * n, -2.0f, 0.5f), b = iota_f(n, 1.0f, 0.25f);
  const std::vector<float> c = {1, 2, 3};
  OpRun r = run_op("Sum", {tensor<float>({3, n}, a), tensor<float>({n}, b), tensor<float>({3, 1}, c)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const auto y = values<float>(r.outputs[0]);
  ASSERT_EQ(y.size(), static_cast<size_t>(3 * n));
  for (int64_t i = 0; i < 3 * n; ++i)
    ASSERT_EQ(y[static_cast<size_t>(i)], (a[static_cast<size_t>(i)] + b[static_cast<size_t>(i % n)]) + c[static_cast<size_t>(i / n)]) << i;
  std::vector<bool> cond(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) cond[static_cast<size_t>(i)] = (i % 3) == 0;
  OpRun w = run_op("Where", {tensor<bool>({n}, cond), tensor<float>({3, n}, a), tensor<float>({3, 1}, c)});
  ASSERT_TRUE(w.status.ok()) << w.status.message();
  const auto wy = values<float>(w.outputs[0]);
  for (int64_t i = 0; i < 3 * n; ++i)
    ASSERT_EQ(wy[static_cast<size_t>(i)], cond[static_cast<size_t>(i % n)] ? a[static_cast<size_t>(i)] : c[static_cast<size_t>(i / n)]) << i;
}

TEST(Variadic, MaxPropagatesNaNAndFloat16) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  OpRun r = run_op("Max", {tensor<float>({3}, {nan, 1, 2}), tensor<float>({3}, {1, nan, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  auto v = values<float>(r.outputs[0]);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], 3);
  std::vector<uint16_t> h1 = {float_to_half(1.0f), float_to_half(-4.0f)}, h2 = {float_to_half(2.0f)};
  OpRun h = run_op("Min", {raw_tensor(DType::kFloat16, {2}, h1), raw_tensor(DType::kFloat16, {1}, h2)});
  ASSERT_TRUE(h.status.ok()) << h.status.message();
  auto hv = values<uint16_t>(h.outputs[0]);
  EXPECT_EQ(half_to_float(hv[0]), 1.0f);
  EXPECT_EQ(half_to_float(hv[1]), -4.0f);
}

TEST(Where, ThreeWayBroadcastEveryWidth) {
  auto cond = tensor<bool>({2, 1}, {true, false});
  OpRun r = run_op("Where", {cond, tensor<int64_t>({3}, {1, 2, 3}), tensor<int64_t>({}, {-1})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (I64s{2, 3}));
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{1, 2, 3, -1, -1, -1}));
  OpRun h = run_op("Where", {tensor<bool>({3}, {true, false, true}),
                             raw_tensor(DType::kFloat16, {1}, std::vector<uint16_t>{float_to_half(1.0f)}),
                             raw_tensor(DType::kFloat16, {3}, std::vector<uint16_t>{0, 0, 0})});
  ASSERT_TRUE(h.status.ok()) << h.status.message();
  EXPECT_EQ(values<uint16_t>(h.outputs[0]), (std::vector<uint16_t>{float_to_half(1.0f), 0, float_to_half(1.0f)}));
  OpRun b = run_op("Where", {tensor<bool>({2}, {false, true}), tensor<bool>({2}, {true, true}),
                             tensor<bool>({2}, {false, false})});
  ASSERT_TRUE(b.status.ok()) << b.status.message();
  EXPECT_EQ(values<bool>(b.outputs[0]), (std::vector<bool>{false, true}));
  OpRun bad = run_op("Where", {tensor<float>({1}, {1}), tensor<float>({1}, {1}), tensor<float>({1}, {1})});
  EXPECT_FALSE(bad.status.ok());
}

TEST(PRelu, ChannelSlopeAndIntegers) {
  OpRun r = run_op("PRelu", {tensor<float>({1, 2, 2}, {-1, 2, -3, 4}), tensor<float>({2, 1}, {0.5f, 2})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{-0.5f, 2, -6, 4}));
  OpRun i = run_op("PRelu", {tensor<int32_t>({3}, {-4, 0, 4}), tensor<int32_t>({}, {3})});
  ASSERT_TRUE(i.status.ok()) << i.status.message();
  EXPECT_EQ(values<int32_t>(i.outputs[0]), (std::vector<int32_t>{-12, 0, 4}));
  OpRun bad = run_op("PRelu", {tensor<float>({2, 2}, {1, 2, 3, 4}), tensor<float>({3}, {1, 2, 3})});
  EXPECT_FALSE(bad.status.ok());
}

TEST(Quantize, PerTensorSaturatesAndRoundsHalfToEven) {
  OpRun r = run_op("QuantizeLinear", {tensor<float>({6}, {0.5f, 1.5f, 2.5f, -2.5f, 1000, -1000}),
                                      tensor<float>({}, {1}), tensor<int8_t>({}, {0})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{0, 2, 2, -2, 127, -128}));
  // NaN saturates low, as the reference's rint-then-cast does.
  OpRun n = run_op("QuantizeLinear", {tensor<float>({1}, {std::numeric_limits<float>::quiet_NaN()}),
                                      tensor<float>({}, {1}), tensor<int8_t>({}, {5})});
  ASSERT_TRUE(n.status.ok()) << n.status.message();
  EXPECT_EQ(values<int8_t>(n.outputs[0]), (std::vector<int8_t>{-128}));
  // No zero point: uint8.
  OpRun u = run_op("QuantizeLinear", {tensor<float>({3}, {-1, 3, 600}), tensor<float>({}, {2})});
  ASSERT_TRUE(u.status.ok()) << u.status.message();
  EXPECT_EQ(u.outputs[0]->dtype, DType::kUInt8);
  EXPECT_EQ(values<uint8_t>(u.outputs[0]), (std::vector<uint8_t>{0, 2, 255}));
}

TEST(Quantize, PerAxisNegativeAxisAndUInt16) {
  graph::AttributeMap attrs;
  attrs.set("axis", attr_int(-1));
  OpRun r = run_op("QuantizeLinear", {tensor<float>({2, 2}, {10, 10, 20, 20}), tensor<float>({2}, {1, 10}),
                                      tensor<uint16_t>({2}, {100, 60000})},
                   attrs);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint16_t>(r.outputs[0]), (std::vector<uint16_t>{110, 60001, 120, 60002}));
  OpRun d = run_op("DequantizeLinear", {r.outputs[0], tensor<float>({2}, {1, 10}), tensor<uint16_t>({2}, {100, 60000})},
                   attrs);
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(values<float>(d.outputs[0]), (std::vector<float>{10, 10, 20, 20}));
}

TEST(Quantize, BlockedWithRemainderBlock) {
  graph::AttributeMap attrs;
  attrs.set("axis", attr_int(1));
  attrs.set("block_size", attr_int(2));
  // X [2, 3]: blocks along axis 1 are {0,1} and {2}.
  OpRun r = run_op("DequantizeLinear", {tensor<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), tensor<float>({2, 2}, {1, 10, 2, 20}),
                                        tensor<int8_t>({2, 2}, {0, 1, 1, 0})},
                   attrs);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 2, 20, 6, 8, 120}));
  OpRun bad = run_op("DequantizeLinear", {tensor<int8_t>({2, 3}, {1, 2, 3, 4, 5, 6}), tensor<float>({2, 3}, {1, 1, 1, 1, 1, 1})},
                     attrs);
  EXPECT_FALSE(bad.status.ok());
}

TEST(Quantize, Float16ScaleAndInt32Dequantize) {
  OpRun r = run_op("DequantizeLinear", {tensor<int32_t>({2}, {-1000000, 7}),
                                        raw_tensor(DType::kFloat16, {}, std::vector<uint16_t>{float_to_half(0.5f)})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dtype, DType::kFloat16);
  auto v = values<uint16_t>(r.outputs[0]);
  EXPECT_TRUE(std::isinf(half_to_float(v[0])));
  EXPECT_EQ(half_to_float(v[1]), 3.5f);
}

TEST(Quantize, SubByteIntegersSaturateToTheirRange) {
  graph::AttributeMap attrs;
  attrs.set("output_dtype", attr_int(static_cast<int64_t>(DType::kInt4)));
  OpRun r = run_op("QuantizeLinear", {tensor<float>({4}, {2.4f, 40.f, -40.f, -2.5f}), tensor<float>({}, {1})}, attrs);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dtype, DType::kInt4);
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{2, 7, -8, -2}));
  OpRun d = run_op("DequantizeLinear", {r.outputs[0], tensor<float>({}, {0.5f})});
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(values<float>(d.outputs[0]), (std::vector<float>{1.f, 3.5f, -4.f, -1.f}));
}

TEST(Quantize, Float4E2M1RoundsToNearestEvenAndSaturates) {
  graph::AttributeMap attrs;
  attrs.set("output_dtype", attr_int(static_cast<int64_t>(DType::kFloat4E2M1)));
  // Halfway cases go to the even code: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1,
  // 2.5 -> 2, 5 -> 4; beyond 6 saturates; -0.3 -> -0.5 (code 9).
  OpRun r = run_op("QuantizeLinear",
                   {tensor<float>({9}, {0.f, 0.5f, 1.5f, 2.5f, 5.f, 10.f, 14.f, -200.f, -0.6f}),
                    tensor<float>({}, {2})},
                   attrs);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dtype, DType::kFloat4E2M1);
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{0, 0, 2, 2, 4, 6, 7, 15, 9}));
  OpRun d = run_op("DequantizeLinear", {r.outputs[0], tensor<float>({}, {0.5f})});
  ASSERT_TRUE(d.status.ok()) << d.status.message();
  EXPECT_EQ(values<float>(d.outputs[0]), (std::vector<float>{0.f, 0.f, 0.5f, 0.5f, 1.f, 2.f, 3.f, -3.f, -0.25f}));
}

TEST(Quantize, UnsupportedTypesSayWhy) {
  graph::AttributeMap attrs;
  attrs.set("output_dtype", attr_int(static_cast<int64_t>(DType::kFloat8E8M0)));  // a scale type, not quantised to
  OpRun r = run_op("QuantizeLinear", {tensor<float>({1}, {1}), tensor<float>({}, {1})}, attrs);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("float8e8m0"), std::string::npos) << r.status.message();
  OpRun bad = run_op("QuantizeLinear", {tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6}), tensor<float>({2}, {1, 1})});
  EXPECT_FALSE(bad.status.ok());
}

}  // namespace
}  // namespace openacl::testing
