// MatMul epilogue fusion (graph::fuse_gelu + graph::fuse_matmul_epilogue +
// the MatMul kernel's bias and post-ops): the fused graph must give what the
// unfused one gives, and the passes must take exactly what they promise.
#include <gtest/gtest.h>

#include <random>

#include "fusion_test_util.h"
#include "graph/passes.h"

namespace openacl::model {
namespace {

using graph::DType;
using graph::Graph;
using graph::Value;

struct Case {
  const char* name;
  std::vector<int64_t> bias_dims;  // {} no bias
  const char* tail;                // "", "gelu", "gelu-mul", "relu", "residual"
  size_t nodes_fused;              // expected m->nodes().size() when folded
};

using fusion_test::f32_scalar;

// x [2,5,8] @ W [8,6] (+ b) then the tail; x2 [2,5,6] feeds the residual.
fusion_test::Result run(const Case& k, bool fold) {
  auto gp = std::make_shared<Graph>();
  Graph& g = *gp;
  g.opsets()[""] = 17;
  Value* x = fusion_test::input(g, "x", {2, 5, 8});
  Value* x2 = fusion_test::input(g, "x2", {2, 5, 6});
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 0.5f);
  std::vector<float> wv(8 * 6), bv(6);
  for (float& v : wv) v = nd(rng);
  for (float& v : bv) v = nd(rng);
  Value* w = fusion_test::f32_constant(g, "w", {8, 6}, wv);
  Value* y = g.add_value("mm");
  g.add_node("mm", "MatMul", {x, w}, {y}, "", 17);
  if (!k.bias_dims.empty()) {
    Value* b = fusion_test::f32_constant(g, "b", k.bias_dims, bv);
    Value* s = g.add_value("biased");
    g.add_node("bias", "Add", {b, y}, {s}, "", 17);  // bias first, as PyTorch exports it
    y = s;
  }
  const std::string tail = k.tail;
  if (tail == "gelu" || tail == "gelu-mul") {
    Value* t = g.add_value("t");
    if (tail == "gelu") g.add_node("div", "Div", {y, f32_scalar(g, "sqrt2", 1.4142135f)}, {t}, "", 17);
    else g.add_node("scale", "Mul", {f32_scalar(g, "rsqrt2", 0.70710678f), y}, {t}, "", 17);
    Value* e = g.add_value("e");
    g.add_node("erf", "Erf", {t}, {e}, "", 17);
    Value* a = g.add_value("a");
    g.add_node("add1", "Add", {e, f32_scalar(g, "one", 1.f)}, {a}, "", 17);
    Value* m = g.add_value("m");
    g.add_node("mul", "Mul", {y, a}, {m}, "", 17);
    Value* h = g.add_value("h");
    g.add_node("half", "Mul", {m, f32_scalar(g, "half", 0.5f)}, {h}, "", 17);
    y = h;
  } else if (tail == "relu") {
    Value* r = g.add_value("r");
    g.add_node("relu", "Relu", {y}, {r}, "", 17);
    y = r;
  } else if (tail == "residual") {
    Value* r = g.add_value("sig");
    g.add_node("sig", "Sigmoid", {x2}, {r}, "", 17);
    Value* s = g.add_value("sum");
    g.add_node("res", "Add", {r, y}, {s}, "", 17);
    y = s;
  }
  y->is_graph_output = true;
  g.outputs().push_back(y);
  std::vector<float> xv(2 * 5 * 8), x2v(2 * 5 * 6);
  for (float& v : xv) v = nd(rng) * 2;
  for (float& v : x2v) v = nd(rng) * 2;
  return fusion_test::compile_and_run(
      gp, fold,
      {kernels::Tensor{DType::kFloat32, {2, 5, 8}, xv.data()}, kernels::Tensor{DType::kFloat32, {2, 5, 6}, x2v.data()}});
}

TEST(Fusion, MatMulEpilogueMatchesUnfused) {
  const std::vector<Case> cases = {
      {"bias", {6}, "", 1},
      {"bias [1,6]", {1, 6}, "", 1},
      {"bias + gelu (Div)", {6}, "gelu", 1},
      {"bias + gelu (Mul by 1/sqrt2)", {6}, "gelu-mul", 1},
      {"gelu without bias", {}, "gelu", 1},
      {"bias + relu", {6}, "relu", 1},
      {"bias + residual", {6}, "residual", 2},  // Sigmoid + fused MatMul
      {"residual without bias", {}, "residual", 2},
  };
  for (const Case& k : cases) {
    const fusion_test::Result ref = run(k, false);
    const fusion_test::Result got = run(k, true);
    EXPECT_EQ(got.nodes, k.nodes_fused) << k.name << " (unfused: " << ref.nodes << " nodes)";
    fusion_test::expect_near(ref.outputs, got.outputs, k.name);
  }
}

TEST(Fusion, GeluPatternWithOtherConstantsIsLeftAlone) {
  // 0.4 instead of 0.5: not GELU, so the five nodes stay (and MatMul keeps its bias).
  auto g = std::make_shared<Graph>();
  g->opsets()[""] = 17;
  Value* x = fusion_test::input(*g, "x", {3, 4});
  Value* t = g->add_value("t");
  g->add_node("div", "Div", {x, f32_scalar(*g, "sqrt2", 1.4142135f)}, {t}, "", 17);
  Value* e = g->add_value("e");
  g->add_node("erf", "Erf", {t}, {e}, "", 17);
  Value* a = g->add_value("a");
  g->add_node("add1", "Add", {e, f32_scalar(*g, "one", 1.f)}, {a}, "", 17);
  Value* m = g->add_value("m");
  g->add_node("mul", "Mul", {x, a}, {m}, "", 17);
  Value* h = g->add_value("h");
  g->add_node("half", "Mul", {m, f32_scalar(*g, "notahalf", 0.4f)}, {h}, "", 17);
  h->is_graph_output = true;
  g->outputs().push_back(h);
  size_t rewrites = 9;
  ASSERT_TRUE(graph::fuse_gelu(*g, &rewrites).ok());
  EXPECT_EQ(rewrites, 0u);
  EXPECT_EQ(g->nodes().size(), 5u);
}

}  // namespace
}  // namespace openacl::model
