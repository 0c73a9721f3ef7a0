// The one-level Strassen GEMM (kernels/cpu/sgemm_strassen.h) and its plain
// form against a double reference: row counts around its tiles and row
// blocks, odd panel groups, B stored both ways, with and without the bias,
// the residual (also in place) and each kind of activation (Gelu's own
// code, a vector one, and one applied from the stored rows).
#include <cmath>
#include <random>
#include <string>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "gemm_reference.h"
#include "graph/passes.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/cpu/sgemm_strassen.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

namespace ss = kernels::cpu::sgemm_strassen;

// Strassen's sums and differences cost a little accuracy: errors relative
// to the sum's scale (the inputs are in [-1, 1]: |C| up to about sqrt(K)).
void expect_near(const std::vector<float>& got, const std::vector<double>& want, int64_t K, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double tol = 4e-6 * std::sqrt(static_cast<double>(K));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " at " << i;
}

struct Case {
  int64_t M, K, N;
};
using RunFn = bool (*)(int64_t, int64_t, int64_t, const float*, int64_t, const float*, const float*, const float*,
                       float*, const kernels::cpu::Activation*);

// One GEMM form (run or run_plain) over its packed B: without an epilogue,
// then with each kind of it.
void expect_epilogues(const Case& t, const std::vector<float>& a, const std::vector<float>& b,
                      const std::vector<float>& bias, const std::vector<float>& res, const std::vector<float>& packed,
                      RunFn run, const std::string& what) {
  std::vector<float> c(t.M * t.N, 42.f);
  ASSERT_TRUE(run(t.M, t.N, t.K, a.data(), t.K, packed.data(), nullptr, nullptr, c.data(), nullptr));
  expect_near(c, gemm_reference(t.M, t.K, t.N, a, b, t.N, 1, nullptr, nullptr, ""), t.K, what);
  kernels::cpu::Activation relu{"Relu", 0.f, 0.f};
  run(t.M, t.N, t.K, a.data(), t.K, packed.data(), bias.data(), res.data(), c.data(), &relu);
  expect_near(c, gemm_reference(t.M, t.K, t.N, a, b, t.N, 1, bias.data(), res.data(), "Relu"), t.K,
              what + " bias+res+Relu");
  // The residual in place (the output over it), HardSwish.
  kernels::cpu::Activation hswish{"HardSwish", 0.f, 0.f};
  c = res;
  run(t.M, t.N, t.K, a.data(), t.K, packed.data(), nullptr, c.data(), c.data(), &hswish);
  expect_near(c, gemm_reference(t.M, t.K, t.N, a, b, t.N, 1, nullptr, res.data(), "HardSwish"), t.K,
              what + " res in place+HardSwish");
  kernels::cpu::Activation gelu{"Gelu", 0.f, 0.f};
  run(t.M, t.N, t.K, a.data(), t.K, packed.data(), bias.data(), nullptr, c.data(), &gelu);
  expect_near(c, gemm_reference(t.M, t.K, t.N, a, b, t.N, 1, bias.data(), nullptr, "Gelu"), t.K, what + " bias+Gelu");
  kernels::cpu::Activation tanh_act{"Tanh", 0.f, 0.f};
  run(t.M, t.N, t.K, a.data(), t.K, packed.data(), bias.data(), res.data(), c.data(), &tanh_act);
  expect_near(c, gemm_reference(t.M, t.K, t.N, a, b, t.N, 1, bias.data(), res.data(), "Tanh"), t.K,
              what + " bias+res+Tanh");
}

TEST(SgemmStrassen, MatchesReference) {
  if (!ss::supported()) GTEST_SKIP() << "no AVX-512F on this CPU (or OPENACL_STRASSEN=0)";
  // M/2 around the 6-row tiles and two row blocks (K/2 = 2080: 63 rows per 512 KiB; M/2 =
  // 200 over the 96-row cap, and on two threads rows enough for each to take its own);
  // N/32 panels of 16 in groups of 4, 3 and 2; operands over kOperandBytes (7 x 64 rows x
  // 900 floats): on two threads or more K/2 split over them, on one (below) the products
  // one at a time over the column groups, each call's first tile prefetching its own B.
  const Case cases[] = {{2, 2, 32},    {14, 10, 96},  {26, 64, 160},  {128, 96, 224},
                        {140, 4160, 64}, {64, 300, 352}, {400, 64, 96}, {128, 1800, 512}};
  uint32_t seed = 1;
  const auto check = [&seed](const Case& t, const std::vector<bool>& layouts, const std::string& note) {
    ASSERT_TRUE(ss::fits(t.M, t.K, t.N));
    const std::vector<float> a = random_floats(t.M * t.K, seed++), b = random_floats(t.K * t.N, seed++);
    const std::vector<float> bias = random_floats(t.N, seed++), res = random_floats(t.M * t.N, seed++);
    for (bool transposed : layouts) {
      const std::vector<float> packed = packed_b(b, t.K, t.N, ss::packed_floats(t.K, t.N), transposed, ss::pack);
      expect_epilogues(t, a, b, bias, res, packed, ss::run, gemm_case_name(t.M, t.K, t.N, transposed) + note);
    }
  };
  for (const Case& t : cases) check(t, {false, true}, "");
#if defined(_OPENMP)
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  check({128, 1800, 512}, {false}, ", one thread");
  omp_set_num_threads(threads);
#endif
}

// The plain form: rows around the 6-row tiles (and one, and a row block of
// 512 KiB: 170 rows at K = 770), K odd and even, N in groups of 1 to 4
// 16-column panels and more.
TEST(SgemmStrassen, PlainFormMatchesReference) {
  if (!ss::plain_supported()) GTEST_SKIP() << "no AVX-512F on this CPU (or OPENACL_GEMM512=0)";
  const Case cases[] = {{1, 1, 16}, {5, 3, 32}, {6, 17, 48}, {7, 64, 64}, {13, 9, 80}, {64, 96, 272}, {200, 770, 96}};
  uint32_t seed = 101;
  for (const Case& t : cases) {
    const std::vector<float> a = random_floats(t.M * t.K, seed++), b = random_floats(t.K * t.N, seed++);
    const std::vector<float> bias = random_floats(t.N, seed++), res = random_floats(t.M * t.N, seed++);
    for (bool transposed : {false, true}) {
      const std::vector<float> packed = packed_b(b, t.K, t.N, ss::plain_floats(t.K, t.N), transposed, ss::pack_plain);
      expect_epilogues(t, a, b, bias, res, packed, ss::run_plain, "plain " + gemm_case_name(t.M, t.K, t.N, transposed));
    }
  }
  EXPECT_TRUE(ss::plain_pays(128, 768, 2304));  // BERT's QKV at batch 1
  EXPECT_FALSE(ss::plain_pays(16, 768, 768));   // too few rows
  EXPECT_FALSE(ss::plain_pays(128, 768, 40));   // N not a multiple of 16
  std::vector<float> a(64, 1.f), packed(64, 1.f), c(64, 7.f);
  EXPECT_FALSE(ss::run_plain(2, 24, 2, a.data(), 2, packed.data(), nullptr, nullptr, c.data(), nullptr));
  for (float v : c) ASSERT_EQ(v, 7.f);
}

TEST(SgemmStrassen, FitsAndRefusals) {
  EXPECT_TRUE(ss::fits(2, 2, 32));
  EXPECT_FALSE(ss::fits(3, 2, 32));  // M odd
  EXPECT_FALSE(ss::fits(2, 3, 32));  // K odd
  EXPECT_FALSE(ss::fits(2, 2, 48));  // N not a multiple of 32
  EXPECT_FALSE(ss::fits(0, 2, 32));
  EXPECT_TRUE(ss::pays(128, 768, 3072));    // BERT's feed-forward at batch 1
  EXPECT_TRUE(ss::pays(128, 3072, 768));
  EXPECT_TRUE(ss::pays(128, 768, 2304));    // its QKV (2.3e8 multiply-adds)
  EXPECT_FALSE(ss::pays(128, 768, 768));    // its output projection: too little work at batch 1
  EXPECT_TRUE(ss::pays(1024, 768, 768));    // ... enough at batch 8
  EXPECT_FALSE(ss::pays(32, 768, 3072));    // too few rows
  EXPECT_FALSE(ss::pays(4096, 256, 1024));  // K too short
  EXPECT_FALSE(ss::pays(1 << 20, 512, 256));  // too few weights
  EXPECT_TRUE(ss::pays(int64_t{1} << 30, 1 << 20, 1 << 20));  // no overflow in M x K x N
  std::vector<float> a(64 * 8, 1.f), packed(8 * 64, 1.f), c(64 * 64, 7.f);
  EXPECT_FALSE(ss::run(3, 32, 2, a.data(), 2, packed.data(), nullptr, nullptr, c.data(), nullptr));
  EXPECT_FALSE(ss::run(2, 48, 2, a.data(), 2, packed.data(), nullptr, nullptr, c.data(), nullptr));
  for (float v : c) ASSERT_EQ(v, 7.f);
}

// A float32 MatMul of [batch, M, K] x a constant [K, N] with a fused bias,
// residual and Gelu, through the op.
void expect_matmul_epilogue(int64_t batch, int64_t M, int64_t K, int64_t N) {
  const std::vector<float> a = random_floats(batch * M * K, 21), b = random_floats(K * N, 22);
  const std::vector<float> bias = random_floats(N, 23), res = random_floats(batch * M * N, 24);
  OpSpec spec;
  spec.op_type = "MatMul";
  spec.constant_inputs = {1, 2};
  spec.attrs.set(graph::kFusedBiasAttr, attr_int(1));
  spec.attrs.set(graph::kFusedSumAttr, attr_int(1));
  spec.attrs.set(graph::kFusedActivationAttr, attr_string("Gelu"));
  OpRun r = run_op(spec, {tensor<float>({batch, M, K}, a), tensor<float>({K, N}, b), tensor<float>({N}, bias),
                          tensor<float>({batch, M, N}, res)});
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(r.outputs[0]->dims, (std::vector<int64_t>{batch, M, N}));
  expect_near(values<float>(r.outputs[0]), gemm_reference(batch * M, K, N, a, b, N, 1, bias.data(), res.data(), "Gelu"),
              K, "MatMul + bias + residual + Gelu");
}

// MatMul with a constant B large enough for Strassen (rows = batch x M =
// 128, K x N = 2^21: 2^28 multiply-adds), and one for the plain form (48
// rows, N = 80), with the epilogue the graph pass fuses: the result a user
// sees, whichever GEMM this machine takes (oneDNN's without AVX-512).
TEST(SgemmStrassen, MatMulWithFusedEpilogue) {
  struct Shape {
    int64_t batch, M, K, N;
  };
  for (const Shape& sh : {Shape{2, 64, 1024, 2048}, Shape{3, 16, 200, 80}}) {
    SCOPED_TRACE(std::to_string(sh.K) + "x" + std::to_string(sh.N));
    expect_matmul_epilogue(sh.batch, sh.M, sh.K, sh.N);
  }
  EXPECT_TRUE(ss::pays(2 * 64, 1024, 2048));
  EXPECT_FALSE(ss::pays(3 * 16, 200, 80));
}

}  // namespace
}  // namespace openacl::testing
