// 1x1 Conv + depthwise 3x3 Conv fusion (graph::fuse_conv_depthwise + the
// Conv kernel's fused form): the fused graph must give what the unfused one
// gives — with oneDNN's one-primitive kernel (blocked 8-channel layouts on
// this machine), and with the chained fallback (plain layouts, 16-channel
// blocks, an activation oneDNN has no post-op for) — and the pass must
// leave alone what it cannot take.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <thread>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "fusion_test_util.h"
#include "graph/passes.h"
#include "kernels/cpu/blocked_layout.h"

namespace openacl::model {
namespace {

using graph::DType;
using fusion_test::activation;
using fusion_test::ints;

struct Case {
  const char* name;
  int64_t stride = 1;
  bool biases = true;
  const char* act1 = "Clip";  // after the 1x1 ("" none)
  const char* act2 = "Clip";  // after the depthwise ("" none)
  int64_t n = 1, c = 16, hw = 96, m = 96;  // X [n, c, hw, hw], the 1x1 to m channels (3.4 MiB between)
  std::vector<int64_t> dw_pads = {1, 1, 1, 1};
  bool mid_is_output = false;  // the 1x1's output also a graph output
};

// x -> Conv 1x1 (c -> c) -> Conv 1x1 (c -> m) -> act1 -> Conv depthwise 3x3 (stride) -> act2 -> Conv 1x1 (m -> c)
// -> Relu -> y
std::shared_ptr<graph::Graph> block(const Case& k) {
  auto g = std::make_shared<graph::Graph>();
  g->opsets()[""] = 14;
  const std::vector<int64_t> xd = {k.n, k.c, k.hw, k.hw};
  graph::Value* x = fusion_test::input(*g, "x", xd);
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 0.4f);
  auto values = [&](size_t count) {
    std::vector<float> v(count);
    for (float& f : v) f = nd(rng);
    return v;
  };
  graph::Value* w1 = fusion_test::f32_constant(*g, "w1", {k.m, k.c, 1, 1}, values(static_cast<size_t>(k.m * k.c)));
  graph::Value* b1 = k.biases ? fusion_test::f32_constant(*g, "b1", {k.m}, values(static_cast<size_t>(k.m))) : nullptr;
  graph::Value* w2 = fusion_test::f32_constant(*g, "w2", {k.m, 1, 3, 3}, values(static_cast<size_t>(k.m * 9)));
  graph::Value* b2 = k.biases ? fusion_test::f32_constant(*g, "b2", {k.m}, values(static_cast<size_t>(k.m))) : nullptr;
  graph::Value* c1 = g->add_value("c1");
  // A stem conv first: the fused node's input is then an inner tensor too.
  graph::Value* w0 = fusion_test::f32_constant(*g, "w0", {k.c, k.c, 1, 1}, values(static_cast<size_t>(k.c * k.c)));
  graph::Value* x0 = g->add_value("x0");
  g->add_node("stem", "Conv", {x, w0}, {x0}, "", 13);
  std::vector<graph::Value*> ins1 = {x0, w1};
  if (b1) ins1.push_back(b1);
  g->add_node("pw", "Conv", ins1, {c1}, "", 13);
  graph::Value* a1 = activation(*g, k.act1, c1, "act1");
  graph::Value* c2 = g->add_value("c2");
  std::vector<graph::Value*> ins2 = {a1, w2};
  if (b2) ins2.push_back(b2);
  graph::Node* dw = g->add_node("dw", "Conv", ins2, {c2}, "", 13);
  dw->attrs.set("group", [&] { graph::Attribute a; a.kind = graph::Attribute::Kind::kInt; a.i = k.m; return a; }());
  if (!k.dw_pads.empty()) dw->attrs.set("pads", ints(k.dw_pads));  // empty: no attribute (padding 0)
  dw->attrs.set("strides", ints({k.stride, k.stride}));
  graph::Value* a2 = activation(*g, k.act2, c2, "act2");
  // A projection back to c channels, as in an inverted residual block: the
  // depthwise output is then an inner tensor (blocked), not the graph's.
  graph::Value* w3 = fusion_test::f32_constant(*g, "w3", {k.c, k.m, 1, 1}, values(static_cast<size_t>(k.c * k.m)));
  graph::Value* p = g->add_value("p");
  g->add_node("proj", "Conv", {a2, w3}, {p}, "", 13);
  // A Relu after it: with a projection without an activation, the whole
  // block would fuse (graph::fuse_inverted_residual, test_fusion_block.cpp).
  graph::Value* y = activation(*g, "Relu", p, "act3");
  y->is_graph_output = true;
  g->outputs().push_back(y);
  if (k.mid_is_output) {
    a1->is_graph_output = true;
    g->outputs().push_back(a1);
  }
  return g;
}

std::vector<float> input_values(const Case& k, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 0.8f);
  std::vector<float> xv(static_cast<size_t>(k.n * k.c * k.hw * k.hw));
  for (float& v : xv) v = nd(rng);
  return xv;
}

fusion_test::Result run(const Case& k, bool fold, bool blocked = true) {
  std::vector<float> xv = input_values(k, 9);
  CompileOptions opt;
  opt.fold_constants = fold;
  opt.blocked_layouts = blocked;
  return fusion_test::compile_and_run(block(k), opt,
                                      {kernels::Tensor{DType::kFloat32, {k.n, k.c, k.hw, k.hw}, xv.data()}});
}

// The activations fused: act1, act2 and the projection's Relu.
size_t activations(const Case& k) { return (*k.act1 ? 1u : 0u) + (*k.act2 ? 1u : 0u) + 1u; }

TEST(Fusion, PointwiseThenDepthwiseMatchesUnfused) {
  const std::vector<Case> cases = {
      {"stride 1, Clip both", 1},
      {"stride 2, Clip both", 2},
      {"stride 2, no biases", 2, false},
      {"stride 1, no activations", 1, true, "", ""},
      {"stride 2, Relu then nothing", 2, true, "Relu", ""},
      {"stride 1, HardSigmoid (no oneDNN post-op: chained)", 1, true, "Clip", "HardSigmoid"},
      {"stride 2, batch 2, odd size", 2, true, "Clip", "Clip", 2, 24, 45, 136},
  };
  for (const Case& k : cases) {
    const fusion_test::Result ref = run(k, false);
    for (bool blocked : {true, false}) {
      const fusion_test::Result got = run(k, true, blocked);
      EXPECT_EQ(ref.fused, 0u);
      EXPECT_EQ(got.fused, activations(k) + 1) << k.name;  // the activations, then the depthwise
      EXPECT_EQ(got.nodes, 3u) << k.name;
      fusion_test::expect_near(ref.outputs, got.outputs, std::string(k.name) + (blocked ? " (blocked)" : " (plain)"));
    }
  }
}

TEST(Fusion, PointwiseThenDepthwiseIn16BlocksMatchesUnfused) {
  // The layouts an AVX-512 machine chooses (on AVX2, oneDNN has no direct
  // fused kernel for them: the chained form runs), with 16-blocks alone and
  // mixed with 8 (24 input channels in 8-blocks, 96 expanded in 16: the
  // fused primitive reads X through a padded 16-block copy). One compute
  // thread: at two, oneDNN 2.6 chains these shapes itself.
#if defined(_OPENMP)
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
  kernels::cpu::set_channel_block_for_testing(16);
  for (int mixed : {0, 1}) {
    kernels::cpu::set_mixed_blocks_for_testing(mixed);
    for (const Case& k : {Case{"stride 2, 16-blocks", 2}, Case{"stride 1, 24 -> 96 channels", 1, true, "Clip", "Clip",
                                                                 1, 24, 96, 96}}) {
      const fusion_test::Result ref = run(k, false);
      const fusion_test::Result got = run(k, true);
      EXPECT_EQ(got.fused, 4u) << k.name;  // Clip, Clip, Relu, the depthwise
      fusion_test::expect_near(ref.outputs, got.outputs, std::string(k.name) + (mixed ? " (mixed)" : ""));
    }
  }
  kernels::cpu::set_mixed_blocks_for_testing(-1);
  kernels::cpu::set_channel_block_for_testing(-1);
#if defined(_OPENMP)
  omp_set_num_threads(threads);
#endif
}

TEST(Fusion, PointwiseThenDepthwiseLeftAloneWhereItCannotFuse) {
  const std::vector<Case> cases = {
      // The expanded tensor is below kDwFusionMinBytes: stays in cache anyway.
      {"small", 1, true, "Clip", "Clip", 1, 16, 16, 96},
      {"depthwise without padding", 1, true, "Clip", "Clip", 1, 16, 96, 96, {0, 0, 0, 0}},
      {"depthwise without a pads attribute", 1, true, "Clip", "Clip", 1, 16, 96, 96, {}},
      {"expanded tensor also an output", 1, true, "Clip", "Clip", 1, 16, 96, 96, {1, 1, 1, 1}, true},
      // 1.5 MiB between at batch 1: under kDwFusionMinBytes in all.
      {"below the size", 1, true, "Clip", "Clip", 1, 16, 64, 96},
      // 3 MiB in all at batch 8, but 384 KiB per image: under kDwFusionMinImageBytes.
      {"small images, batch 8", 1, true, "Clip", "Clip", 8, 16, 32, 96},
  };
  for (const Case& k : cases) {
    const fusion_test::Result ref = run(k, false);
    const fusion_test::Result got = run(k, true);
    EXPECT_EQ(got.fused, activations(k)) << k.name;
    EXPECT_EQ(got.nodes, 4u) << k.name;
    fusion_test::expect_near(ref.outputs, got.outputs, k.name);
  }
}

// Several threads running one compiled model at once share its kernels
// (their reused execute arguments included): each must get its own input's
// result.
TEST(Fusion, PointwiseThenDepthwiseConcurrentRuns) {
  const Case k{"stride 2", 2};
  std::unique_ptr<CompiledModel> m;
  ASSERT_TRUE(CompiledModel::compile(block(k), CompileOptions{}, &m).ok());
  std::shared_ptr<const CompiledModel> model = std::move(m);
  constexpr int kThreads = 4;
  std::vector<std::vector<float>> xs, want(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(input_values(k, 100 + t));
    Executor ex(model);
    std::vector<kernels::Tensor> out;
    ASSERT_TRUE(ex.run({kernels::Tensor{DType::kFloat32, {k.n, k.c, k.hw, k.hw}, xs[t].data()}}, &out).ok());
    want[t].assign(out[0].as<float>(), out[0].as<float>() + out[0].elements());
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      Executor ex(model);
      for (int i = 0; i < 20; ++i) {
        std::vector<kernels::Tensor> out;
        if (!ex.run({kernels::Tensor{DType::kFloat32, {k.n, k.c, k.hw, k.hw}, xs[t].data()}}, &out).ok()) {
          ++bad;
          continue;
        }
        const float* y = out[0].as<float>();
        for (size_t j = 0; j < want[t].size(); ++j)
          if (std::fabs(y[j] - want[t][j]) > 1e-5f + 1e-5f * std::fabs(want[t][j])) {
            ++bad;
            break;
          }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace openacl::model
