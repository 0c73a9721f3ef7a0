// Conv / ConvTranspose / MatMul / Gemm / Einsum / pooling / quantized linear
// kernels: the oneDNN float32 paths checked against the reference loops on
// random shapes (groups, dilations, strides, asymmetric pads, batch > 1), plus
// the dtypes, attribute corners and bad inputs the ONNX node tests miss.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <algorithm>
#include <random>
#include <thread>

#include "base/fp16.h"
#include "kernels/cpu/conv_ref.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

using kernels::cpu::WindowGeom;

int64_t count(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " at " << i;
}

graph::AttributeMap conv_attrs(int64_t group, std::vector<int64_t> s, std::vector<int64_t> d, std::vector<int64_t> p) {
  graph::AttributeMap a;
  a.set("group", attr_int(group));
  a.set("strides", attr_ints(std::move(s)));
  a.set("dilations", attr_ints(std::move(d)));
  a.set("pads", attr_ints(std::move(p)));
  return a;
}

// Runs `op` (Conv or ConvTranspose) on X, W and B (b may be null) with
// constant weights and bias, then with runtime ones, against `want`.
void expect_both_weight_kinds(const char* op, const graph::AttributeMap& attrs, const std::vector<int64_t>& xd,
                              const std::vector<float>& x, const std::vector<int64_t>& wd, const std::vector<float>& w,
                              const std::vector<float>* b, const std::vector<int64_t>& out_dims,
                              const std::vector<double>& want, double tol, const std::string& what) {
  for (bool constant_w : {true, false}) {
    OpSpec spec;
    spec.op_type = op;
    spec.attrs = attrs;
    if (constant_w) spec.constant_inputs = {1, 2};
    std::vector<Data> ins{tensor<float>(xd, x), tensor<float>(wd, w)};
    if (b) ins.push_back(tensor<float>({static_cast<int64_t>(b->size())}, *b));
    OpRun r = run_op(spec, ins);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.outputs[0]->dims, out_dims);
    expect_near(values<float>(r.outputs[0]), want, tol, what);
  }
}

// Runs Conv (constant weights and bias, then not) on seeded random X, W and
// B against the double-precision reference.
void expect_conv_matches_reference(const graph::AttributeMap& attrs, const std::vector<int64_t>& xd,
                                   const std::vector<int64_t>& wd, bool bias, int seed, double tol) {
  const int64_t M = wd[0];
  const std::vector<float> x = random_floats(count(xd), seed), w = random_floats(count(wd), 100 + seed),
                           b = random_floats(M, 200 + seed);
  WindowGeom g;
  ASSERT_EQ(kernels::cpu::conv_geom(attrs, xd, wd, &g), "");
  std::vector<double> xs(x.begin(), x.end()), ws(w.begin(), w.end()), bs(b.begin(), b.end());
  std::vector<double> want(static_cast<size_t>(g.N * g.M * g.out_size()));
  kernels::cpu::conv_ref<double>(g, xs.data(), ws.data(), bias ? bs.data() : nullptr, want.data());
  expect_both_weight_kinds("Conv", attrs, xd, x, wd, w, bias ? &b : nullptr, kernels::cpu::geom_out_dims(g), want,
                           tol, "seed " + std::to_string(seed));
}

// The oneDNN path (weights constant: prepacked at compile time; or not) vs
// the double-precision reference.
TEST(Conv, OneDnnMatchesReferenceOnRandomShapes) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 40; ++trial) {
    const int nsp = 1 + trial % 3;
    const int64_t G = pick(0, 2) == 0 ? 1 : pick(1, 3);
    const bool depthwise = trial % 7 == 3;
    const int64_t Cg = depthwise ? 1 : pick(1, 4), Mg = depthwise ? 1 : pick(1, 4), N = pick(1, 3);
    const int64_t C = Cg * G, M = Mg * G;
    std::vector<int64_t> xd{N, C}, wd{M, Cg}, s, d, p(2 * nsp);
    for (int i = 0; i < nsp; ++i) {
      const int64_t k = pick(1, 3), dil = pick(1, 2), st = pick(1, 3);
      p[i] = pick(0, 2), p[i + nsp] = pick(0, 2);
      const int64_t in = (k - 1) * dil + 1 + pick(0, nsp == 3 ? 4 : 9);
      xd.push_back(in), wd.push_back(k), s.push_back(st), d.push_back(dil);
    }
    expect_conv_matches_reference(conv_attrs(G, s, d, p), xd, wd, trial % 2 == 0, trial, 1e-4);
  }
}

// Convolutions over a 1x1 plane (squeeze-excite gates, classifiers written
// as a Conv) run as matrix-vector products: every rank, batch > 1, channel
// counts below and past the 8-float steps and the four-row groups, with and
// without bias, constant weights or not; a padded or strided one still
// matches the reference (the padded one is not a plane product).
TEST(Conv, OverAOneByOnePlaneMatchesReference) {
  int trial = 0;
  for (int nsp : {1, 2, 3})
    for (int64_t C : {1, 7, 24, 131})
      for (int64_t M : {1, 6, 33}) {
        ++trial;
        const int64_t N = 1 + trial % 3;
        const bool padded = trial % 5 == 0, bias = trial % 2 == 0;
        std::vector<int64_t> xd{N, C}, wd{M, C}, s, d, p(2 * nsp, padded ? 1 : 0);
        for (int i = 0; i < nsp; ++i) xd.push_back(1), wd.push_back(1), s.push_back(1 + trial % 2), d.push_back(1);
        expect_conv_matches_reference(conv_attrs(1, s, d, p), xd, wd, bias, trial, 1e-5);
      }
}

// Channel counts where oneDNN's direct kernels want blocked activations (the
// kernel reorders X and Y around the convolution).
TEST(Conv, WiderChannelsMatchReference) {
  for (int64_t stride : {1, 2}) {
    const std::vector<int64_t> xd{2, 32, 11, 9}, wd{48, 32, 3, 3};
    expect_conv_matches_reference(conv_attrs(1, {stride, stride}, {1, 1}, {1, 1, 1, 0}), xd, wd, true,
                                  11 + static_cast<int>(stride), 1e-4);
  }
}

TEST(Conv, AutoPadSameLowerAndFloat64) {
  graph::AttributeMap a;
  a.set("auto_pad", attr_string("SAME_LOWER"));
  a.set("strides", attr_ints({2}));
  // x = 1..5, w = [1, 1]: SAME_LOWER pads one at the start -> windows (pad,1), (2,3), (4,5).
  OpRun r = run_op("Conv", {tensor<double>({1, 1, 5}, {1, 2, 3, 4, 5}), tensor<double>({1, 1, 2}, {1, 1})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<double>(r.outputs[0]), (std::vector<double>{1, 5, 9}));
  a.set("auto_pad", attr_string("SAME_UPPER"));
  r = run_op("Conv", {tensor<float>({1, 1, 5}, {1, 2, 3, 4, 5}), tensor<float>({1, 1, 2}, {1, 1})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{3, 7, 5}));
}

TEST(Conv, Float16) {
  auto h = [](std::initializer_list<float> v) {
    std::vector<uint16_t> o;
    for (float f : v) o.push_back(float_to_half(f));
    return o;
  };
  OpRun r = run_op("Conv", {raw_tensor(DType::kFloat16, {1, 1, 2, 2}, h({1, 2, 3, 4})),
                            raw_tensor(DType::kFloat16, {2, 1, 1, 1}, h({1, -0.5f})),
                            raw_tensor(DType::kFloat16, {2}, h({0, 1}))});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  std::vector<float> got;
  for (uint16_t v : values<uint16_t>(r.outputs[0])) got.push_back(half_to_float(v));
  EXPECT_EQ(got, (std::vector<float>{1, 2, 3, 4, 0.5f, 0, -0.5f, -1}));
}

TEST(Conv, ChannelMismatchFailsCleanly) {
  OpRun r = run_op("Conv", {tensor<float>({1, 3, 4, 4}, std::vector<float>(48, 1)),
                            tensor<float>({2, 2, 1, 1}, std::vector<float>(4, 1))});
  EXPECT_FALSE(r.status.ok());
}

TEST(Conv, FourSpatialAxesFailCleanly) {
  OpRun r = run_op("Conv", {tensor<float>({1, 1, 2, 2, 2, 2}, std::vector<float>(16, 1)),
                            tensor<float>({1, 1, 1, 1, 1, 1}, {1})});
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("spatial"), std::string::npos) << r.status.message();
}

TEST(ConvTranspose, OneDnnMatchesReferenceOnRandomShapes) {
  std::mt19937 rng(9);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 30; ++trial) {
    const int nsp = 1 + trial % 3;
    const int64_t G = pick(0, 1) == 0 ? 1 : pick(1, 3), Cg = pick(1, 4), Mg = pick(1, 4), N = pick(1, 2);
    const int64_t C = Cg * G, M = Mg * G;
    std::vector<int64_t> xd{N, C}, wd{C, Mg}, s, d, p(2 * nsp), op;
    for (int i = 0; i < nsp; ++i) {
      const int64_t k = pick(1, 3), dil = pick(1, 2), st = pick(1, 3);
      xd.push_back(pick(1, nsp == 3 ? 4 : 7)), wd.push_back(k), s.push_back(st), d.push_back(dil);
      p[i] = pick(0, (k - 1) * dil), p[i + nsp] = pick(0, (k - 1) * dil);
      op.push_back(pick(0, std::max(st, dil) - 1));
    }
    auto attrs = conv_attrs(G, s, d, p);
    attrs.set("output_padding", attr_ints(op));
    const std::vector<float> x = random_floats(count(xd), trial), w = random_floats(count(wd), 50 + trial),
                             b = random_floats(M, 90 + trial);
    WindowGeom g;
    ASSERT_EQ(kernels::cpu::conv_transpose_geom(attrs, xd, wd, &g), "");
    if (g.out_size() <= 0) continue;
    std::vector<double> xs(x.begin(), x.end()), ws(w.begin(), w.end()), bs(b.begin(), b.end());
    std::vector<double> want(static_cast<size_t>(g.N * g.M * g.out_size()));
    const bool bias = trial % 2 == 1;
    kernels::cpu::conv_transpose_ref<double>(g, xs.data(), ws.data(), bias ? bs.data() : nullptr, want.data());
    expect_both_weight_kinds("ConvTranspose", attrs, xd, x, wd, w, bias ? &b : nullptr, kernels::cpu::geom_out_dims(g),
                             want, 1e-4, "trial " + std::to_string(trial));
  }
}

TEST(ConvTranspose, StridesPadsGroupsAgainstScatter) {
  // 1-D, stride 2, group 2, output_padding 1: y[o] += x[i] * w[k] at o = 2i + k - pad.
  graph::AttributeMap a;
  a.set("strides", attr_ints({2}));
  a.set("group", attr_int(2));
  a.set("pads", attr_ints({1, 0}));
  a.set("output_padding", attr_ints({1}));
  OpRun r = run_op("ConvTranspose", {tensor<float>({1, 2, 2}, {1, 2, 3, 4}), tensor<float>({2, 1, 3}, {1, 1, 1, 1, 2, 3})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // out = 2*(2-1) + 1 + 3 - 1 = 5. Channel 0: x=[1,2], w=[1,1,1]: full=[1,1,3,2,2] -> drop 1 -> [1,3,2,2,0(out pad)].
  // Channel 1: x=[3,4], w=[1,2,3]: full=[3,6,13,8,12] -> [6,13,8,12,0].
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 3, 2, 2, 0, 6, 13, 8, 12, 0}));
  r = run_op("ConvTranspose", {tensor<double>({1, 2, 2}, {1, 2, 3, 4}), tensor<double>({2, 1, 3}, {1, 1, 1, 1, 2, 3})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<double>(r.outputs[0]), (std::vector<double>{1, 3, 2, 2, 0, 6, 13, 8, 12, 0}));
}

std::vector<double> naive_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t batch_a,
                                 int64_t batch_b, int64_t M, int64_t K, int64_t N) {
  const int64_t B = std::max(batch_a, batch_b);
  std::vector<double> c(static_cast<size_t>(B * M * N), 0.0);
  for (int64_t t = 0; t < B; ++t)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k)
          s += double(a[(batch_a == 1 ? 0 : t) * M * K + m * K + k]) * b[(batch_b == 1 ? 0 : t) * K * N + k * N + n];
        c[t * M * N + m * N + n] = s;
      }
  return c;
}

TEST(MatMul, BroadcastAndConstantB) {
  for (auto [ba, bb] : {std::pair<int64_t, int64_t>{3, 1}, {1, 3}, {3, 3}}) {
    const int64_t M = 5, K = 7, N = 6;
    const std::vector<float> a = random_floats(ba * M * K, 1), b = random_floats(bb * K * N, 2);
    const std::vector<double> want = naive_matmul(a, b, ba, bb, M, K, N);
    for (bool constant_b : {false, true}) {
      OpSpec spec;
      spec.op_type = "MatMul";
      if (constant_b) spec.constant_inputs = {1};
      OpRun r = run_op(spec, {tensor<float>({ba, M, K}, a), tensor<float>({bb, K, N}, b)});
      ASSERT_TRUE(r.status.ok()) << r.status.message();
      EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{std::max(ba, bb), M, N}));
      expect_near(values<float>(r.outputs[0]), want, 1e-5, "matmul");
    }
  }
}

// A constant B whose rows are a multiple of 4 KiB apart (N = 1024 floats) is
// stored transposed at build (matmul.cpp); results must not change, whether
// A's batch is folded into M or B is batched.
TEST(MatMul, ConstantBWithPageMultipleRows) {
  for (auto [ba, bb] : {std::pair<int64_t, int64_t>{2, 1}, {1, 1}, {2, 2}}) {
    const int64_t M = 3, K = 9, N = 1024;
    const std::vector<float> a = random_floats(ba * M * K, 7), b = random_floats(bb * K * N, 8);
    const std::vector<double> want = naive_matmul(a, b, ba, bb, M, K, N);
    OpSpec spec;
    spec.op_type = "MatMul";
    spec.constant_inputs = {1};
    OpRun r = run_op(spec, {tensor<float>({ba, M, K}, a), tensor<float>({bb, K, N}, b)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    expect_near(values<float>(r.outputs[0]), want, 1e-5, "matmul N=1024");
  }
  // Gemm without transB takes the same route.
  const int64_t M = 2, K = 5, N = 2048;
  const std::vector<float> a = random_floats(M * K, 9), b = random_floats(K * N, 10);
  const std::vector<double> want = naive_matmul(a, b, 1, 1, M, K, N);
  OpSpec spec;
  spec.op_type = "Gemm";
  spec.constant_inputs = {1};
  OpRun r = run_op(spec, {tensor<float>({M, K}, a), tensor<float>({K, N}, b)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), want, 1e-5, "gemm N=2048");
}

TEST(MatMul, OneDimensionalOperandsAndTypes) {
  OpRun r = run_op("MatMul", {tensor<float>({3}, {1, 2, 3}), tensor<float>({3}, {4, 5, 6})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_TRUE(r.outputs[0]->dims.empty());
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{32}));
  r = run_op("MatMul", {tensor<int32_t>({2, 2}, {1, 2, 3, 4}), tensor<int32_t>({2}, {1, -1})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{-1, -1}));
  r = run_op("MatMul", {tensor<double>({1, 2}, {1, 2}), tensor<double>({2, 2}, {1, 2, 3, 4})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<double>(r.outputs[0]), (std::vector<double>{7, 10}));
  std::vector<uint16_t> ha{float_to_half(1), float_to_half(2)}, hb{float_to_half(3), float_to_half(4)};
  r = run_op("MatMul", {raw_tensor(DType::kFloat16, {1, 2}, ha), raw_tensor(DType::kFloat16, {2, 1}, hb)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(half_to_float(values<uint16_t>(r.outputs[0])[0]), 11.f);
}

TEST(MatMul, EmptyAndMismatch) {
  OpRun r = run_op("MatMul", {tensor<float>({0, 3}, {}), tensor<float>({3, 2}, std::vector<float>(6, 1))});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{0, 2}));
  r = run_op("MatMul", {tensor<float>({2, 3}, std::vector<float>(6)), tensor<float>({2, 2}, std::vector<float>(4))});
  EXPECT_FALSE(r.status.ok());
}

TEST(Gemm, AllAttributesAgainstNaive) {
  const int64_t M = 4, K = 5, N = 3;
  for (int mode = 0; mode < 8; ++mode) {
    const bool ta = mode & 1, tb = mode & 2, constant_b = mode & 4;
    const std::vector<float> a = random_floats(M * K, 3 + mode), b = random_floats(K * N, 4 + mode), c = random_floats(N, 5);
    graph::AttributeMap attrs;
    attrs.set("transA", attr_int(ta));
    attrs.set("transB", attr_int(tb));
    attrs.set("alpha", attr_float(0.5f));
    attrs.set("beta", attr_float(2.f));
    std::vector<double> want(M * N);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += double(ta ? a[k * M + m] : a[m * K + k]) * (tb ? b[n * K + k] : b[k * N + n]);
        want[m * N + n] = 0.5 * s + 2.0 * c[n];
      }
    OpSpec spec;
    spec.op_type = "Gemm";
    spec.attrs = attrs;
    if (constant_b) spec.constant_inputs = {1};
    OpRun r = run_op(spec, {tensor<float>(ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K}, a),
                            tensor<float>(tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N}, b),
                            tensor<float>({N}, c)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    expect_near(values<float>(r.outputs[0]), want, 1e-5, "gemm mode " + std::to_string(mode));
  }
}

// One row of A against B stored [N, K] (a classifier head at batch 1) takes
// the dot-product path: K and N with and without remainders of its 8-float
// steps and 4-row groups, transA, alpha, beta and C of each broadcast form
// or none, constant B or not. A constant B is packed (GemvPacked, on
// AVX-512): N with a last 16-block pair complete, short of a block or of a
// pair, odd K.
TEST(Gemm, SingleRowTimesTransposedB) {
  struct Case {
    int64_t K, N;
    bool ta, constant_b;
    int c_rank;  // -1 none, 0 scalar, 1 [N], 2 [1, N]
    float alpha, beta;
  };
  const std::vector<Case> cases = {{1280, 1000, false, true, 1, 1.f, 1.f}, {8, 4, false, false, -1, 1.f, 1.f},
                                   {13, 7, true, true, 0, 0.5f, 2.f},      {1027, 130, false, false, 2, -1.f, 0.25f},
                                   {64, 3, true, false, 1, 2.f, 0.f},      {1027, 33, false, true, 2, -1.f, 0.25f},
                                   {9, 48, true, true, -1, 1.f, 1.f},      {64, 64, false, true, 1, 2.f, 0.f},
                                   {2, 1, false, true, 0, 1.f, -1.f}};
  for (const Case& k : cases) {
    const std::string name = "K " + std::to_string(k.K) + " N " + std::to_string(k.N);
    const std::vector<float> a = random_floats(k.K, 11), b = random_floats(k.N * k.K, 12), c = random_floats(k.N, 13);
    std::vector<double> want(static_cast<size_t>(k.N));
    for (int64_t n = 0; n < k.N; ++n) {
      double s = 0;
      for (int64_t i = 0; i < k.K; ++i) s += double(a[i]) * b[n * k.K + i];
      const double cv = k.c_rank < 0 ? 0 : k.c_rank == 0 ? c[0] : c[n];
      want[n] = k.alpha * s + k.beta * cv;
    }
    OpSpec spec;
    spec.op_type = "Gemm";
    spec.attrs.set("transA", attr_int(k.ta));
    spec.attrs.set("transB", attr_int(1));
    spec.attrs.set("alpha", attr_float(k.alpha));
    spec.attrs.set("beta", attr_float(k.beta));
    if (k.constant_b) spec.constant_inputs = {1};
    std::vector<Data> in = {tensor<float>(k.ta ? std::vector<int64_t>{k.K, 1} : std::vector<int64_t>{1, k.K}, a),
                              tensor<float>({k.N, k.K}, b)};
    if (k.c_rank == 0) in.push_back(tensor<float>({}, {c[0]}));
    if (k.c_rank == 1) in.push_back(tensor<float>({k.N}, c));
    if (k.c_rank == 2) in.push_back(tensor<float>({1, k.N}, c));
    OpRun r = run_op(spec, in);
    ASSERT_TRUE(r.status.ok()) << name << ": " << r.status.message();
    EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{1, k.N})) << name;
    expect_near(values<float>(r.outputs[0]), want, 1e-4, name);
  }
}

TEST(Gemm, Float16TransposedWithScalarC) {
  auto h = [](std::initializer_list<float> v) {
    std::vector<uint16_t> o;
    for (float f : v) o.push_back(float_to_half(f));
    return o;
  };
  graph::AttributeMap a;
  a.set("transA", attr_int(1));
  // A^T = [[1, 3], [2, 4]]; A^T x I + 0.5.
  OpRun r = run_op("Gemm", {raw_tensor(DType::kFloat16, {2, 2}, h({1, 2, 3, 4})),
                            raw_tensor(DType::kFloat16, {2, 2}, h({1, 0, 0, 1})),
                            raw_tensor(DType::kFloat16, {}, h({0.5f}))}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  std::vector<float> got;
  for (uint16_t v : values<uint16_t>(r.outputs[0])) got.push_back(half_to_float(v));
  EXPECT_EQ(got, (std::vector<float>{1.5f, 3.5f, 2.5f, 4.5f}));
}

TEST(Gemm, NoBiasFloat64AndBadC) {
  OpRun r = run_op("Gemm", {tensor<double>({1, 2}, {1, 2}), tensor<double>({2, 1}, {3, 4})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<double>(r.outputs[0]), (std::vector<double>{11}));
  r = run_op("Gemm", {tensor<float>({2, 2}, {1, 0, 0, 1}), tensor<float>({2, 2}, {1, 2, 3, 4}),
                      tensor<float>({2, 1}, {10, 20})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{11, 12, 23, 24}));
  r = run_op("Gemm", {tensor<float>({2, 2}, {1, 0, 0, 1}), tensor<float>({2, 2}, {1, 2, 3, 4}),
                      tensor<float>({3}, {1, 2, 3})});
  EXPECT_FALSE(r.status.ok());
}

TEST(MaxPool, IndicesStorageOrderAndInt8) {
  graph::AttributeMap a;
  a.set("kernel_shape", attr_ints({2, 2}));
  a.set("storage_order", attr_int(1));
  OpSpec spec;
  spec.op_type = "MaxPool";
  spec.attrs = a;
  spec.num_outputs = 2;
  // 2x3 input; the 2x2 windows' maxima sit at (1,1) and (0,2).
  OpRun r = run_op(spec, {tensor<float>({1, 1, 2, 3}, {1, 2, 9, 4, 5, 3})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{5, 9}));
  EXPECT_EQ(values<int64_t>(r.outputs[1]), (std::vector<int64_t>{1 + 1 * 2, 0 + 2 * 2}));  // column-major h + w * H
  a.set("storage_order", attr_int(0));
  a.set("pads", attr_ints({1, 1, 1, 1}));
  a.set("strides", attr_ints({2, 2}));
  r = run_op("MaxPool", {tensor<int8_t>({1, 1, 2, 2}, {-5, -6, -7, -8})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int8_t>(r.outputs[0]), (std::vector<int8_t>{-5, -6, -7, -8}));  // padding never wins
}

TEST(AveragePool, CountIncludePadAndFloat16) {
  graph::AttributeMap a;
  a.set("kernel_shape", attr_ints({3}));
  a.set("pads", attr_ints({1, 1}));
  OpRun r = run_op("AveragePool", {tensor<float>({1, 1, 3}, {3, 6, 9})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{4.5f, 6, 7.5f}));
  a.set("count_include_pad", attr_int(1));
  r = run_op("AveragePool", {raw_tensor(DType::kFloat16, {1, 1, 3}, std::vector<uint16_t>{float_to_half(3), float_to_half(6), float_to_half(9)})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  std::vector<float> got;
  for (uint16_t v : values<uint16_t>(r.outputs[0])) got.push_back(half_to_float(v));
  EXPECT_EQ(got, (std::vector<float>{3, 6, 5}));
}

TEST(Pool, GlobalAndLpAndBadKernel) {
  OpRun r = run_op("GlobalAveragePool", {tensor<double>({1, 2, 2}, {1, 2, 3, 5})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<double>(r.outputs[0]), (std::vector<double>{1.5, 4}));
  r = run_op("GlobalLpPool", {tensor<float>({1, 1, 2}, {3, 4})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_FLOAT_EQ(values<float>(r.outputs[0])[0], 5.f);
  graph::AttributeMap a;
  a.set("kernel_shape", attr_ints({5}));
  r = run_op("MaxPool", {tensor<float>({1, 1, 3}, {1, 2, 3})}, a);
  EXPECT_FALSE(r.status.ok());
}

TEST(Einsum, CommonForms) {
  auto eq = [](const char* e) {
    graph::AttributeMap a;
    a.set("equation", attr_string(e));
    return a;
  };
  const auto m = tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  OpRun r = run_op("Einsum", {m}, eq("ij->ji"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  r = run_op("Einsum", {m, tensor<float>({3}, {1, 0, -1})}, eq("ij,j"));  // implicit output "i"
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{-2, -2}));
  r = run_op("Einsum", {tensor<int64_t>({2, 2}, {1, 2, 3, 4})}, eq("ii->"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int64_t>(r.outputs[0]), (std::vector<int64_t>{5}));
  r = run_op("Einsum", {tensor<float>({2, 1, 2}, {1, 2, 3, 4}), tensor<float>({2, 1}, {1, 1})}, eq("...ij,jk->...ik"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{3, 7}));
  r = run_op("Einsum", {m}, eq("ij->k"));
  EXPECT_FALSE(r.status.ok());
}

TEST(Einsum, MatmulShapedEquations) {
  auto eq = [](const char* e) {
    graph::AttributeMap a;
    a.set("equation", attr_string(e));
    return a;
  };
  const int64_t B = 3, M = 4, K = 5, N = 2;
  const std::vector<float> a = random_floats(B * M * K, 31), b = random_floats(B * K * N, 32);
  OpRun r = run_op("Einsum", {tensor<float>({B, M, K}, a), tensor<float>({B, K, N}, b)}, eq("bij,bjk->bik"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  expect_near(values<float>(r.outputs[0]), naive_matmul(a, b, B, B, M, K, N), 1e-5, "bij,bjk->bik");
  r = run_op("Einsum", {tensor<float>({2, 2}, {1, 2, 3, 4}), tensor<float>({3, 2}, {1, 0, 0, 1, 1, 1})}, eq("ij,kj->ki"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{1, 3, 2, 4, 3, 7}));
  r = run_op("Einsum", {tensor<double>({2, 2}, {1, 2, 3, 4}), tensor<double>({2}, {1, 1})}, eq("ij,j->i"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<double>(r.outputs[0]), (std::vector<double>{3, 7}));
}

TEST(Quantized, MatMulIntegerAndQLinearMatMul) {
  OpRun r = run_op("MatMulInteger", {tensor<uint8_t>({2, 2}, {10, 11, 12, 13}), tensor<int8_t>({2, 1}, {1, -1}),
                                     tensor<uint8_t>({}, {10}), tensor<int8_t>({}, {0})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{-1, -1}));
  // (a - 1) x (b - 0) = [4] -> 4 * 0.5 * 1 / 0.25 = 8, + 100.
  r = run_op("QLinearMatMul", {tensor<uint8_t>({1, 2}, {2, 3}), tensor<float>({}, {0.5f}), tensor<uint8_t>({}, {1}),
                               tensor<uint8_t>({2, 1}, {2, 1}), tensor<float>({}, {1.f}), tensor<uint8_t>({}, {0}),
                               tensor<float>({}, {0.25f}), tensor<uint8_t>({}, {100})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{108}));
}

TEST(Quantized, QLinearConvPerChannelScale) {
  // 1x1 conv, two output channels with w_scale 1 and 2: y = round(x * w * xs * ws / ys) + yzp.
  OpRun r = run_op("QLinearConv", {tensor<uint8_t>({1, 1, 1, 2}, {3, 5}), tensor<float>({}, {1.f}), tensor<uint8_t>({}, {1}),
                                   tensor<int8_t>({2, 1, 1, 1}, {1, 1}), tensor<float>({2}, {1.f, 2.f}), tensor<int8_t>({2}, {0, 0}),
                                   tensor<float>({}, {0.5f}), tensor<uint8_t>({}, {10}), tensor<int32_t>({2}, {0, 1})});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // x - 1 = [2, 4]; channel 0: [2, 4] * 2 + 10; channel 1: ([2, 4] + 1) * 4 + 10.
  EXPECT_EQ(values<uint8_t>(r.outputs[0]), (std::vector<uint8_t>{14, 18, 22, 30}));
}

TEST(Quantized, ConvIntegerPerChannelZeroPoint) {
  // Padding counts as the zero point, i.e. contributes 0.
  graph::AttributeMap a;
  a.set("pads", attr_ints({1, 0}));
  OpRun r = run_op("ConvInteger", {tensor<uint8_t>({1, 1, 2}, {5, 7}), tensor<uint8_t>({2, 1, 2}, {1, 2, 3, 3}),
                                   tensor<uint8_t>({}, {5}), tensor<uint8_t>({2}, {1, 2})}, a);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // x - 5 = [0, 2]; w0 - 1 = [0, 1], w1 - 2 = [1, 1]; windows [pad, 0], [0, 2].
  EXPECT_EQ(values<int32_t>(r.outputs[0]), (std::vector<int32_t>{0, 2, 0, 2}));
}

// Compiles one node; non-constant inputs become graph inputs, with all dims
// unknown when `dynamic` (the executor then re-infers shapes per run and the
// kernel builds its primitives lazily). *feeds gets the inputs' tensors.
std::shared_ptr<const model::CompiledModel> compile_node(const OpSpec& spec, const std::vector<Data>& inputs,
                                                         bool dynamic, std::vector<kernels::Tensor>* feeds) {
  auto g = std::make_unique<graph::Graph>();
  g->opsets()[spec.domain] = spec.opset;
  std::vector<graph::Value*> ins;
  feeds->clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    graph::TensorType t;
    t.dtype = inputs[i]->dtype;
    const bool is_const = std::count(spec.constant_inputs.begin(), spec.constant_inputs.end(), static_cast<int>(i));
    t.shape = (dynamic && !is_const) ? graph::Shape(inputs[i]->dims.size())
                                     : graph::Shape(inputs[i]->dims.begin(), inputs[i]->dims.end());
    graph::Value* v = g->add_value("in" + std::to_string(i), t);
    if (is_const) {
      v->constant = inputs[i];
    } else {
      v->is_graph_input = true;
      g->inputs().push_back(v);
      feeds->push_back(kernels::Tensor{inputs[i]->dtype, inputs[i]->dims, const_cast<void*>(inputs[i]->data)});
    }
    ins.push_back(v);
  }
  graph::Value* out = g->add_value("out0");
  out->is_graph_output = true;
  g->outputs().push_back(out);
  graph::Node* n = g->add_node("node", spec.op_type, ins, {out}, spec.domain, spec.opset);
  n->attrs = spec.attrs;
  model::CompileOptions opt;
  opt.fold_constants = false;
  std::unique_ptr<model::CompiledModel> compiled;
  const Status st = model::CompiledModel::compile(std::move(g), opt, &compiled);
  EXPECT_TRUE(st.ok()) << st.message();
  return std::shared_ptr<const model::CompiledModel>(std::move(compiled));
}

// Dynamic shapes: one compiled model, X of several shapes, several threads at
// once (run() is const and shared).
TEST(Conv, DynamicShapesAndConcurrentRuns) {
  const std::vector<int64_t> wd{16, 8, 3, 3};
  const std::vector<float> w = random_floats(count(wd), 21), b = random_floats(16, 22);
  OpSpec spec;
  spec.op_type = "Conv";
  spec.attrs = conv_attrs(1, {1, 1}, {1, 1}, {1, 1, 1, 1});
  spec.constant_inputs = {1, 2};
  std::vector<kernels::Tensor> feeds;
  auto m = compile_node(spec, {tensor<float>({1, 8, 5, 5}, random_floats(200, 1)), tensor<float>(wd, w),
                               tensor<float>({16}, b)}, /*dynamic=*/true, &feeds);
  ASSERT_TRUE(m);
  ASSERT_FALSE(m->is_static());
  std::vector<std::vector<int64_t>> shapes{{1, 8, 5, 5}, {2, 8, 7, 6}, {1, 8, 12, 12}};
  std::vector<std::string> errors(6);
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      model::Executor exec(m);
      for (int rep = 0; rep < 3; ++rep) {
        const std::vector<int64_t>& xd = shapes[(t + rep) % shapes.size()];
        const std::vector<float> x = random_floats(count(xd), t * 10 + rep);
        WindowGeom g;
        kernels::cpu::conv_geom(spec.attrs, xd, wd, &g);
        std::vector<double> xs(x.begin(), x.end()), ws(w.begin(), w.end()), bs(b.begin(), b.end());
        std::vector<double> want(static_cast<size_t>(g.N * g.M * g.out_size()));
        kernels::cpu::conv_ref<double>(g, xs.data(), ws.data(), bs.data(), want.data());
        std::vector<kernels::Tensor> results;
        const Status st = exec.run({kernels::Tensor{DType::kFloat32, xd, const_cast<float*>(x.data())}}, &results);
        if (!st.ok()) {
          errors[t] = st.message();
          return;
        }
        const float* y = results[0].as<float>();
        for (size_t i = 0; i < want.size(); ++i)
          if (std::fabs(y[i] - want[i]) > 1e-4 * (1 + std::fabs(want[i]))) {
            errors[t] = "mismatch at " + std::to_string(i);
            return;
          }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
}

// Timing (not an assertion): compiles one node once, then runs it `reps`
// times. Returns wall ms per run; *cpu_ms gets process CPU ms per run (all
// threads): on a shared, oversubscribed machine the CPU time is the steadier number.
double time_node(const OpSpec& spec, const std::vector<Data>& inputs, int reps, double* cpu_ms) {
  std::vector<kernels::Tensor> feeds;
  auto m = compile_node(spec, inputs, false, &feeds);
  model::Executor exec(m);
  std::vector<kernels::Tensor> results;
  EXPECT_TRUE(exec.run(feeds, &results).ok());
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  for (int i = 0; i < reps; ++i) EXPECT_TRUE(exec.run(feeds, &results).ok());
  *cpu_ms = 1000.0 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC / reps;
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
}

TEST(Perf, DISABLED_ConvAndMatMul) {
  for (int64_t k : {3, 1}) {
    OpSpec spec;
    spec.op_type = "Conv";
    spec.attrs = conv_attrs(1, {1, 1}, {1, 1}, {k / 2, k / 2, k / 2, k / 2});
    spec.constant_inputs = {1, 2};
    const int64_t C = 64, H = 56;
    double cpu = 0;
    const double ms = time_node(spec, {tensor<float>({1, C, H, H}, random_floats(C * H * H, 1)),
                                       tensor<float>({C, C, k, k}, random_floats(C * C * k * k, 2)),
                                       tensor<float>({C}, random_floats(C, 3))}, 50, &cpu);
    const double flop = 2.0 * C * C * k * k * H * H;
    std::printf("Conv %lldx%lld N=1 C=K=64 56x56: wall %.3f ms (%.1f GFLOP/s), cpu %.3f ms (%.1f GFLOP/s per cpu-second)\n",
                (long long)k, (long long)k, ms, flop / ms / 1e6, cpu, flop / cpu / 1e6);
  }
  for (bool constant_b : {false, true}) {
    OpSpec spec;
    spec.op_type = "MatMul";
    if (constant_b) spec.constant_inputs = {1};
    const int64_t n = 512;
    double cpu = 0;
    const double ms = time_node(spec, {tensor<float>({n, n}, random_floats(n * n, 1)),
                                       tensor<float>({n, n}, random_floats(n * n, 2))}, 50, &cpu);
    const double flop = 2.0 * n * n * n;
    std::printf("MatMul 512^3 (B %s): wall %.3f ms (%.1f GFLOP/s), cpu %.3f ms (%.1f GFLOP/s per cpu-second)\n",
                constant_b ? "constant" : "input", ms, flop / ms / 1e6, cpu, flop / cpu / 1e6);
  }
}

}  // namespace
}  // namespace openacl::testing
