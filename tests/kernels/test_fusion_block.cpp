// Inverted residual block fusion (graph::fuse_inverted_residual + the Conv
// kernel's block form, kernels/cpu/conv_irb.h): the fused graph must give
// what the unfused one gives — in one pass over bands of rows (blocked
// layouts: 8- or 16-blocks, mixed; one and two threads, so that band
// carry-over, the rows two threads share and, for a block of 13 rows, its
// parts run apart are all run), and chained
// (plain layouts) — and the pass must leave alone what it cannot take.
#include <gtest/gtest.h>

#include <random>
#include <string>

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

enum class Residual { kNone, kBlockInput, kBranch };

struct Case {
  const char* name;
  int64_t stride = 1;
  bool expand = true;  // a 1x1 before the depthwise
  Residual residual = Residual::kBlockInput;
  bool biases = true;
  const char* act = "Clip";                          // after the expansion and the depthwise ("" none)
  int64_t n = 1, c = 24, hw = 56, m = 144, o = 24;   // X [n, c, hw, hw], expanded to m, projected to o
  const char* after = "";                            // an activation after the projection ("" none)
  bool dw_is_output = false;                         // the depthwise's output also a graph output
  int64_t proj_stride = 1;                           // the projection's stride
};

// x -> stem 1x1 or 3x3 (c -> c) -> [1x1 (c -> m) -> act] -> depthwise 3x3 (stride)
// -> act -> 1x1 (m -> o) [-> + residual] [-> after] -> tail 1x1 -> y. The residual is
// the block's input (read twice by the fused node), or a branch of its own
// (a 1x1 from x, whose memory the output may take over).
std::shared_ptr<graph::Graph> block(const Case& k) {
  auto g = std::make_shared<graph::Graph>();
  g->opsets()[""] = 14;
  graph::Value* x = fusion_test::input(*g, "x", {k.n, k.c, k.hw, k.hw});
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 0.3f);
  auto constant = [&](const std::string& name, std::vector<int64_t> dims) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    std::vector<float> v(static_cast<size_t>(count));
    for (float& f : v) f = nd(rng);
    return fusion_test::f32_constant(*g, name, dims, v);
  };
  auto conv = [&](const std::string& name, graph::Value* in, int64_t out_c, int64_t in_c, int64_t kk, int64_t group,
                  int64_t stride) {
    std::vector<graph::Value*> ins = {in, constant(name + "_w", {out_c, in_c / group, kk, kk})};
    if (k.biases) ins.push_back(constant(name + "_b", {out_c}));
    graph::Value* y = g->add_value(name + "_y");
    graph::Node* n = g->add_node(name, "Conv", ins, {y}, "", 13);
    if (group > 1) {
      graph::Attribute a;
      a.kind = graph::Attribute::Kind::kInt;
      a.i = group;
      n->attrs.set("group", a);
    }
    if (kk == 3) n->attrs.set("pads", ints({1, 1, 1, 1}));
    n->attrs.set("strides", ints({stride, stride}));
    return y;
  };
  // Before a depthwise alone, a 3x3 stem: a 1x1 would fuse as its expansion.
  graph::Value* x0 = conv("stem", x, k.c, k.c, k.expand ? 1 : 3, 1, 1);
  graph::Value* e = k.expand ? activation(*g, k.act, conv("expand", x0, k.m, k.c, 1, 1, 1), "act1") : x0;
  const int64_t m = k.expand ? k.m : k.c;
  graph::Value* d = activation(*g, k.act, conv("dw", e, m, m, 3, m, k.stride), "act2");
  graph::Value* y = conv("project", d, k.o, m, 1, 1, k.proj_stride);
  if (k.residual != Residual::kNone) {
    graph::Value* r = k.residual == Residual::kBlockInput ? x0 : conv("branch", x, k.o, k.c, 1, 1, 1);
    graph::Value* s = g->add_value("sum");
    g->add_node("add", "Add", {y, r}, {s}, "", 14);
    y = s;
  }
  y = activation(*g, k.after, y, "act3");
  // A tail 1x1: the block's output is then an inner tensor (blocked), as in a network.
  y = conv("tail", y, k.o, k.o, 1, 1, 1);
  y->is_graph_output = true;
  g->outputs().push_back(y);
  if (k.dw_is_output) {
    d->is_graph_output = true;
    g->outputs().push_back(d);
  }
  return g;
}

fusion_test::Result run(const Case& k, bool fold, bool blocked = true) {
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> xv(static_cast<size_t>(k.n * k.c * k.hw * k.hw));
  for (float& v : xv) v = nd(rng);
  CompileOptions opt;
  opt.fold_constants = fold;
  opt.blocked_layouts = blocked;
  return fusion_test::compile_and_run(block(k), opt,
                                      {kernels::Tensor{DType::kFloat32, {k.n, k.c, k.hw, k.hw}, xv.data()}});
}

// Nodes left when the block fuses: the stem, the block, the tail, the residual branch.
size_t fused_nodes(const Case& k) { return 3u + (k.residual == Residual::kBranch ? 1u : 0u); }

void set_threads(int n) {
#if defined(_OPENMP)
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

const std::vector<Case>& fusing_cases() {
  static const std::vector<Case> cases = {
      {"stride 1, residual: the block input"},
      {"stride 1, residual: a branch (output over its memory)", 1, true, Residual::kBranch},
      {"stride 2, 24 -> 144 -> 32, odd size", 2, true, Residual::kNone, true, "Clip", 1, 24, 57, 144, 32},
      {"stride 1, no biases, no activations", 1, true, Residual::kBlockInput, false, ""},
      {"stride 1, HardSwish, batch 2, 40 -> 120", 1, true, Residual::kBlockInput, true, "HardSwish", 2, 40, 30, 120, 40},
      // 13 rows: fused on one thread, its parts run apart on two (fewer
      // than kMinRowsPerThread rows a thread).
      {"stride 1, 16 -> 576 -> 16 at 13x13", 1, true, Residual::kBlockInput, true, "Clip", 1, 16, 13, 576, 16},
      {"depthwise alone, stride 1, 32 -> 16", 1, false, Residual::kNone, true, "Clip", 1, 32, 112, 0, 16},
      {"depthwise alone, stride 2, residual-free, 16 -> 24", 2, false, Residual::kNone, true, "Relu", 1, 16, 129, 0, 24},
  };
  return cases;
}

TEST(FusionBlock, InvertedResidualMatchesUnfused) {
#if defined(_OPENMP)
  const int threads = omp_get_max_threads();
#endif
  for (const Case& k : fusing_cases()) {
    const fusion_test::Result ref = run(k, false);
    EXPECT_EQ(ref.fused, 0u);
    for (int t : {1, 2}) {
      set_threads(t);
      for (bool blocked : {true, false}) {
        const std::string what = std::string(k.name) + (blocked ? " (blocked, " : " (plain, ") + std::to_string(t) + " threads)";
        const fusion_test::Result got = run(k, true, blocked);
        EXPECT_EQ(got.nodes, fused_nodes(k)) << what;
        fusion_test::expect_near(ref.outputs, got.outputs, what);
      }
    }
  }
#if defined(_OPENMP)
  set_threads(threads);
#endif
}

TEST(FusionBlock, InvertedResidualIn16And8BlocksMatchesUnfused) {
  // The layouts an AVX-512 machine chooses: 16-blocks, and 8 mixed with 16
  // (24 and 40 channels in 8-blocks, the expansion reads them so).
#if defined(_OPENMP)
  const int threads = omp_get_max_threads();
#endif
  for (int block : {8, 16}) {
    kernels::cpu::set_channel_block_for_testing(block);
    for (int mixed : {0, 1}) {
      kernels::cpu::set_mixed_blocks_for_testing(mixed);
      for (const Case& k : fusing_cases()) {
        const fusion_test::Result ref = run(k, false);
        for (int t : {1, 2}) {
          set_threads(t);
          const std::string what = std::string(k.name) + " (block " + std::to_string(block) +
                                   (mixed ? ", mixed, " : ", ") + std::to_string(t) + " threads)";
          const fusion_test::Result got = run(k, true);
          EXPECT_EQ(got.nodes, fused_nodes(k)) << what;
          fusion_test::expect_near(ref.outputs, got.outputs, what);
        }
      }
    }
  }
  kernels::cpu::set_mixed_blocks_for_testing(-1);
  kernels::cpu::set_channel_block_for_testing(-1);
#if defined(_OPENMP)
  set_threads(threads);
#endif
}

TEST(FusionBlock, InvertedResidualLeftAloneWhereItCannotFuse) {
  struct Left {
    Case k;
    size_t nodes;  // after compile
  };
  const std::vector<Left> cases = {
      // An activation after the projection (here, after the residual add:
      // the add and the Relu go into the projection).
      {{"activation after", 1, true, Residual::kBlockInput, true, "Clip", 1, 24, 56, 144, 24, "Relu"}, 5},
      {{"depthwise output also a graph output", 1, true, Residual::kNone, true, "Clip", 1, 24, 56, 144, 24, "", true}, 5},
      // 12 x 12 x 144 floats between: 81 KiB, under kBlockFusionMinBytes.
      {{"small", 1, true, Residual::kBlockInput, true, "Clip", 1, 24, 12, 144, 24}, 5},
      {{"a projection of stride 2", 1, true, Residual::kNone, true, "Clip", 1, 24, 56, 144, 24, "", false, 2}, 5},
  };
  for (const Left& l : cases) {
    const fusion_test::Result ref = run(l.k, false);
    const fusion_test::Result got = run(l.k, true);
    EXPECT_EQ(got.nodes, l.nodes) << l.k.name;
    fusion_test::expect_near(ref.outputs, got.outputs, l.k.name);
  }
}

}  // namespace
}  // namespace openacl::model
