// Residual Add fusion (graph::fuse_conv_add + the Conv kernel's sum post-op):
// conv(x) + r, optionally followed by an activation, must give what the
// unfused graph gives — when the output takes over the residual's memory
// (r dies at the Conv), when it cannot (r is read later), with either Add
// operand order, with an activation oneDNN cannot fuse (the kernel's own
// loops), and the pass must leave alone what it cannot take.
#include <gtest/gtest.h>

#include <random>

#include "fusion_test_util.h"

namespace openacl::model {
namespace {

using graph::DType;

struct Case {
  const char* name;
  bool residual_first = false;    // Add(r, conv) instead of Add(conv, r)
  bool residual_is_output = false;  // r also a graph output: no in-place
  const char* act = "";           // activation after the Add ("" none)
  bool residual_is_x = false;     // Add(conv(x), x): must not fuse
};

using fusion_test::ints;

// x [2,8,9,9] -> r = Sigmoid(x) ; c = Conv(x) 8->8, 3x3 pad 1 ; y = act(c + r)
fusion_test::Result run(const Case& k, bool fold) {
  auto g = std::make_shared<graph::Graph>();
  g->opsets()[""] = 14;
  const std::vector<int64_t> xd = {2, 8, 9, 9};
  graph::Value* x = fusion_test::input(*g, "x", xd);
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 0.3f);
  std::vector<float> wv(8 * 8 * 9), bv(8);
  for (float& v : wv) v = nd(rng);
  for (float& v : bv) v = nd(rng);
  graph::Value* w = fusion_test::f32_constant(*g, "w", {8, 8, 3, 3}, wv);
  graph::Value* b = fusion_test::f32_constant(*g, "b", {8}, bv);
  graph::Value* r = x;
  if (!k.residual_is_x) {
    r = g->add_value("r");
    g->add_node("sig", "Sigmoid", {x}, {r}, "", 14);
  }
  graph::Value* c = g->add_value("c");
  g->add_node("conv", "Conv", {x, w, b}, {c}, "", 13)->attrs.set("pads", ints({1, 1, 1, 1}));
  graph::Value* s = g->add_value("s");
  g->add_node("add", "Add", k.residual_first ? std::vector<graph::Value*>{r, c} : std::vector<graph::Value*>{c, r},
              {s}, "", 14);
  graph::Value* y = s;
  if (*k.act) {
    y = g->add_value("y");
    g->add_node("act", k.act, {s}, {y}, "", 14);
  }
  y->is_graph_output = true;
  g->outputs().push_back(y);
  if (k.residual_is_output) {
    r->is_graph_output = true;
    g->outputs().push_back(r);
  }
  std::vector<float> xv(2 * 8 * 81);
  for (float& v : xv) v = nd(rng) * 3;
  return fusion_test::compile_and_run(g, fold, {kernels::Tensor{DType::kFloat32, xd, xv.data()}});
}

TEST(Fusion, ResidualAddMatchesUnfused) {
  const std::vector<Case> cases = {
      {"conv+r", false, false, ""},           {"r+conv", true, false, ""},
      {"conv+r, relu", false, false, "Relu"}, {"r+conv, relu, r read later", true, true, "Relu"},
      {"conv+r, r read later", false, true, ""},
      {"conv+r, hardsigmoid (not a oneDNN post-op)", false, false, "HardSigmoid"},
  };
  for (const Case& k : cases) {
    const fusion_test::Result ref = run(k, false);
    const fusion_test::Result got = run(k, true);
    EXPECT_EQ(ref.fused, 0u);
    EXPECT_EQ(got.fused, *k.act ? 2u : 1u) << k.name;  // the Add (+ the activation)
    fusion_test::expect_near(ref.outputs, got.outputs, k.name);
    // When the residual dies at the Conv, the output takes over its memory.
    if (!k.residual_is_output) {
      ASSERT_NE(got.model, nullptr) << k.name;
      bool in_place = false;
      for (const planner::Buffer& buf : got.model->plan().work) in_place = in_place || buf.in_place_of != nullptr;
      EXPECT_TRUE(in_place) << k.name << "\n" << got.model->plan().to_string();
    }
  }
}

TEST(Fusion, ResidualThatIsTheConvInputIsNotFused) {
  // Add(conv(x), x): the output may not be written over x while the Conv reads it.
  Case k{"x + conv(x)", false, false, "", true};
  const fusion_test::Result got = run(k, true);
  EXPECT_EQ(got.fused, 0u);
  fusion_test::expect_near(run(k, false).outputs, got.outputs, k.name);
}

}  // namespace
}  // namespace openacl::model
