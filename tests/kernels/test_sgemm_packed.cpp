// The packed-B AVX2 GEMM (kernels/cpu/sgemm_packed.h) against a double
// reference: row counts around its 6-row tiles and 192-row blocks, K around
// its 256-row blocks, N over several 128-column tasks, with and without the
// bias, the residual (also in place) and an activation (Gelu's own code too). Then MatMul with a
// constant B and a fused epilogue, which takes that GEMM on AVX2 machines
// without AVX-512 and oneDNN's elsewhere: the same results either way.
#include <cmath>
#include <random>

#include "graph/passes.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/sgemm_packed.h"
#include "gemm_reference.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

namespace sp = kernels::cpu::sgemm_packed;

void expect_near(const std::vector<float>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
}

TEST(SgemmPacked, MatchesReference) {
  if (!sp::supported()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  struct Case {
    int64_t M, K, N;
  };
  const Case cases[] = {{1, 1, 16},   {5, 7, 32},    {6, 256, 16},  {7, 257, 48},   {13, 300, 144},
                        {128, 768, 272}, {191, 40, 128}, {193, 513, 160}, {256, 64, 400}};
  uint32_t seed = 1;
  for (const Case& t : cases) {
    ASSERT_TRUE(sp::fits(t.M, t.K, t.N));
    const std::vector<float> a = random_floats(t.M * t.K, seed++), b = random_floats(t.K * t.N, seed++);
    const std::vector<float> bias = random_floats(t.N, seed++), res = random_floats(t.M * t.N, seed++);
    for (bool transposed : {false, true}) {
      const std::vector<float> packed = packed_b(b, t.K, t.N, sp::packed_floats(t.K, t.N), transposed, sp::pack);
      const std::string what = gemm_case_name(t.M, t.K, t.N, transposed);
      // plain
      std::vector<float> c(t.M * t.N, 42.f);
      ASSERT_TRUE(sp::run(t.M, t.N, t.K, a.data(), t.K, packed.data(), nullptr, nullptr, c.data(), nullptr));
      expect_near(c, gemm_reference(t.M, t.K, t.N, a, b, t.N, 1, nullptr, nullptr, ""), what);
      // bias + residual + Relu
      kernels::cpu::Activation relu{"Relu", 0.f, 0.f};
      sp::run(t.M, t.N, t.K, a.data(), t.K, packed.data(), bias.data(), res.data(), c.data(), &relu);
      expect_near(c, gemm_reference(t.M, t.K, t.N, a, b, t.N, 1, bias.data(), res.data(), "Relu"),
                  what + " bias+res+Relu");
      // the residual in place (the output over it), Clip
      kernels::cpu::Activation clip{"Clip", -0.5f, 0.5f};
      c = res;
      sp::run(t.M, t.N, t.K, a.data(), t.K, packed.data(), nullptr, c.data(), c.data(), &clip);
      expect_near(c, gemm_reference(t.M, t.K, t.N, a, b, t.N, 1, nullptr, res.data(), "Clip"),
                  what + " res in place+Clip");
      // Gelu (on 8 lanes, the tail of each row by std::erf)
      kernels::cpu::Activation gelu{"Gelu", 0.f, 0.f};
      sp::run(t.M, t.N, t.K, a.data(), t.K, packed.data(), bias.data(), nullptr, c.data(), &gelu);
      expect_near(c, gemm_reference(t.M, t.K, t.N, a, b, t.N, 1, bias.data(), nullptr, "Gelu"), what + " bias+Gelu");
    }
  }
}

// The Gelu over its whole range, against double precision: within 2e-7 of
// max(1, |x|) everywhere; where Gelu is tiny (x in (-8, -3), |Gelu| < 4e-3)
// the approximation's absolute bound leaves up to about 1% relative error.
TEST(SgemmPacked, GeluAccuracy) {
  if (!sp::supported()) GTEST_SKIP() << "no AVX2 + FMA on this CPU";
  const int64_t K = 1, N = 16, M = 200;
  std::vector<float> a(M), b(N), packed(sp::packed_floats(K, N)), c(M * N);
  for (int64_t m = 0; m < M; ++m) a[m] = -12.f + 0.12f * m;  // -12 .. 11.88
  for (int64_t n = 0; n < N; ++n) b[n] = 1.f + 0.01f * n;
  sp::pack(b.data(), K, N, N, 1, packed.data());
  kernels::cpu::Activation gelu{"Gelu", 0.f, 0.f};
  sp::run(M, N, K, a.data(), K, packed.data(), nullptr, nullptr, c.data(), &gelu);
  double worst = 0, rel = 0;
  for (int64_t i = 0; i < M * N; ++i) {
    const double x = double(a[i / N]) * b[i % N];
    const double want = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    worst = std::max(worst, std::fabs(c[i] - want) / std::max(1.0, std::fabs(x)));
    if (x < -3 && x > -8) rel = std::max(rel, std::fabs(c[i] - want) / std::fabs(want));
  }
  EXPECT_LT(worst, 2e-7);
  EXPECT_LT(rel, 2e-2) << "relative error where x in (-8, -3)";
}

TEST(SgemmPacked, FitsAndRefusals) {
  EXPECT_TRUE(sp::fits(1, 1, 16));
  EXPECT_FALSE(sp::fits(1, 1, 24));  // N not a multiple of 16
  EXPECT_FALSE(sp::fits(sp::kMaxRows + 1, 8, 16));
  EXPECT_FALSE(sp::fits(0, 8, 16));
  EXPECT_FALSE(sp::fits(4, 0, 16));
  // run() refuses what does not fit (or a CPU without AVX2 + FMA) and leaves C alone.
  std::vector<float> a(64 * 8, 1.f), packed(8 * 32, 1.f), c(64 * 32, 7.f);
  EXPECT_FALSE(sp::run(2, 24, 8, a.data(), 8, packed.data(), nullptr, nullptr, c.data(), nullptr));
  EXPECT_FALSE(sp::run(sp::kMaxRows + 1, 16, 8, a.data(), 8, packed.data(), nullptr, nullptr, c.data(), nullptr));
  EXPECT_FALSE(sp::run(2, 16, 0, a.data(), 8, packed.data(), nullptr, nullptr, c.data(), nullptr));
  for (float v : c) ASSERT_EQ(v, 7.f);
  EXPECT_EQ(sp::run(2, 16, 8, a.data(), 8, packed.data(), nullptr, nullptr, c.data(), nullptr), sp::supported());
}

// MatMul, constant B, the epilogue the graph pass fuses (bias, residual,
// activation): whichever GEMM this machine takes, the same results.
TEST(SgemmPacked, MatMulWithFusedEpilogue) {
  const int64_t batch = 3, M = 5, K = 300, N = 48;
  const std::vector<float> a = random_floats(batch * M * K, 11), b = random_floats(K * N, 12);
  const std::vector<float> bias = random_floats(N, 13), res = random_floats(batch * M * N, 14);
  for (const char* act : {"", "Relu"}) {
    OpSpec spec;
    spec.op_type = "MatMul";
    spec.constant_inputs = {1, 2};
    spec.attrs.set(graph::kFusedBiasAttr, attr_int(1));
    spec.attrs.set(graph::kFusedSumAttr, attr_int(1));
    if (*act) spec.attrs.set(graph::kFusedActivationAttr, attr_string(act));
    OpRun r = run_op(spec, {tensor<float>({batch, M, K}, a), tensor<float>({K, N}, b), tensor<float>({N}, bias),
                            tensor<float>({batch, M, N}, res)});
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{batch, M, N}));
    expect_near(values<float>(r.outputs[0]), gemm_reference(batch * M, K, N, a, b, N, 1, bias.data(), res.data(), act),
                std::string("MatMul + bias + residual ") + act);
  }
}

}  // namespace
}  // namespace openacl::testing
