// LayerNorm written out as exporters before opset 17 emit it
// (graph::fuse_layernorm): the fused model must give what the unfused one
// gives, and the pass must leave alone what is not exactly that pattern.
#include <gtest/gtest.h>

#include <random>

#include "fusion_test_util.h"
#include "graph/passes.h"

namespace openacl::model {
namespace {

using graph::DType;
using graph::Graph;
using graph::Value;

constexpr int64_t kC = 12;

struct Case {
  const char* name;
  int opset;            // 17: ReduceMean axes as an attribute; 18: as an input
  bool square_by_mul;   // Mul(d, d) instead of Pow(d, 2)
  bool swap_operands;   // Add(eps, v), Mul(gamma, n), Add(beta, .)
  bool with_beta;
  int64_t axis;         // ReduceMean's axis (-1 or 2: the last; 1: not)
  bool d_is_output;     // d = x - mean also a graph output
  size_t nodes_fused;   // expected nodes after compile with folding
};

using fusion_test::f32_constant;

// x [2, 5, 12] -> the written-out LayerNorm over the last axis.
fusion_test::Result run(const Case& k, bool fold) {
  auto gp = std::make_shared<Graph>();
  Graph& g = *gp;
  g.opsets()[""] = k.opset;
  Value* x = fusion_test::input(g, "x", {2, 5, kC});
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> gamma(kC), beta(kC);
  for (float& v : gamma) v = 1.f + 0.3f * nd(rng);
  for (float& v : beta) v = 0.2f * nd(rng);
  int consts = 0;
  auto mean = [&](Value* in, const char* out_name) {
    Value* out = g.add_value(out_name);
    if (k.opset >= 18) {
      const int64_t a = k.axis;
      Value* axes = fusion_test::i64_constant(g, "axes" + std::to_string(consts++), {a});
      g.add_node(out_name, "ReduceMean", {in, axes}, {out}, "", k.opset);
    } else {
      g.add_node(out_name, "ReduceMean", {in}, {out}, "", k.opset)->attrs.set("axes", fusion_test::ints({k.axis}));
    }
    return out;
  };
  auto binary = [&](const char* op, Value* a, Value* b, const char* out_name, bool swap = false) {
    Value* out = g.add_value(out_name);
    g.add_node(out_name, op, swap ? std::vector<Value*>{b, a} : std::vector<Value*>{a, b}, {out}, "", k.opset);
    return out;
  };
  Value* m = mean(x, "mean");
  Value* d = binary("Sub", x, m, "d");
  Value* sq = k.square_by_mul ? binary("Mul", d, d, "sq")
                              : binary("Pow", d, f32_constant(g, "two", {}, {2.f}), "sq");
  Value* var = mean(sq, "var");
  Value* ve = binary("Add", var, f32_constant(g, "eps", {}, {1e-5f}), "ve", k.swap_operands);
  Value* sd = g.add_value("sd");
  g.add_node("sqrt", "Sqrt", {ve}, {sd}, "", k.opset);
  Value* n = binary("Div", d, sd, "n");
  Value* y = binary("Mul", n, f32_constant(g, "gamma", {kC}, gamma), "scaled", k.swap_operands);
  if (k.with_beta) y = binary("Add", y, f32_constant(g, "beta", {kC}, beta), "shifted", k.swap_operands);
  y->is_graph_output = true;
  g.outputs().push_back(y);
  if (k.d_is_output) {
    d->is_graph_output = true;
    g.outputs().push_back(d);
  }
  std::vector<float> xv(2 * 5 * kC);
  for (float& v : xv) v = 3.f * nd(rng) + 1.f;
  return fusion_test::compile_and_run(gp, fold, {kernels::Tensor{DType::kFloat32, {2, 5, kC}, xv.data()}});
}

TEST(Fusion, WrittenOutLayerNormMatchesUnfused) {
  const std::vector<Case> cases = {
      {"opset 17, Pow, gamma and beta", 17, false, false, true, -1, false, 1},
      {"opset 18, Mul(d, d), operands swapped", 18, true, true, true, 2, false, 1},
      {"gamma only", 17, false, false, false, -1, false, 1},
      {"mean over axis 1: not a LayerNorm", 17, false, false, true, 1, false, 9},
      {"d also an output: left alone", 18, false, false, true, -1, true, 9},
  };
  for (const Case& k : cases) {
    const fusion_test::Result ref = run(k, false);
    const fusion_test::Result got = run(k, true);
    EXPECT_EQ(got.nodes, k.nodes_fused) << k.name << " (unfused: " << ref.nodes << " nodes)";
    fusion_test::expect_near(ref.outputs, got.outputs, k.name);
  }
}

TEST(Fusion, LayerNormPatternWithAWrongExponentIsLeftAlone) {
  auto g = std::make_shared<Graph>();
  g->opsets()[""] = 17;
  Value* x = fusion_test::input(*g, "x", {3, kC});
  auto mean_of = [&](Value* in, const char* name) {
    Value* out = g->add_value(name);
    g->add_node(name, "ReduceMean", {in}, {out}, "", 17)->attrs.set("axes", fusion_test::ints({-1}));
    return out;
  };
  Value* m = mean_of(x, "mean");
  Value* d = g->add_value("d");
  g->add_node("sub", "Sub", {x, m}, {d}, "", 17);
  Value* sq = g->add_value("sq");
  g->add_node("pow", "Pow", {d, f32_constant(*g, "three", {}, {3.f})}, {sq}, "", 17);
  Value* var = mean_of(sq, "var");
  Value* ve = g->add_value("ve");
  g->add_node("add", "Add", {var, f32_constant(*g, "eps", {}, {1e-5f})}, {ve}, "", 17);
  Value* sd = g->add_value("sd");
  g->add_node("sqrt", "Sqrt", {ve}, {sd}, "", 17);
  Value* n = g->add_value("n");
  g->add_node("div", "Div", {d, sd}, {n}, "", 17);
  Value* y = g->add_value("y");
  g->add_node("mul", "Mul", {n, f32_constant(*g, "gamma", {kC}, std::vector<float>(kC, 1.f))}, {y}, "", 17);
  y->is_graph_output = true;
  g->outputs().push_back(y);
  size_t rewrites = 9;
  ASSERT_TRUE(graph::fuse_layernorm(*g, &rewrites).ok());
  EXPECT_EQ(rewrites, 0u);
  EXPECT_EQ(g->nodes().size(), 8u);
}

}  // namespace
}  // namespace openacl::model
