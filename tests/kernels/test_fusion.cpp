// Conv + activation fusion (graph::fuse_conv_activation + the Conv kernel's
// post-op): the fused model must give what the unfused one gives, for every
// activation the pass takes, on the oneDNN path and on the float64 reference
// path (which the pass must leave unfused).
#include <gtest/gtest.h>

#include <random>

#include "fusion_test_util.h"

namespace openacl::model {
namespace {

using graph::DType;

struct Act {
  const char* op;
  graph::AttributeMap attrs;
  std::vector<float> clip;  // Clip bounds as constant inputs (opset 13)
};

fusion_test::Result run(const Act& act, bool fold) {
  auto g = std::make_shared<graph::Graph>();
  g->opsets()[""] = 14;
  const std::vector<int64_t> xd = {2, 8, 9, 9};
  graph::Value* x = fusion_test::input(*g, "x", xd);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 0.3f);
  std::vector<float> wv(16 * 8 * 9), bv(16);
  for (float& v : wv) v = nd(rng);
  for (float& v : bv) v = nd(rng);
  graph::Value* w = fusion_test::f32_constant(*g, "w", {16, 8, 3, 3}, wv);
  graph::Value* b = fusion_test::f32_constant(*g, "b", {16}, bv);
  graph::Value* c = g->add_value("c");
  g->add_node("conv", "Conv", {x, w, b}, {c}, "", 13)->attrs.set("pads", fusion_test::ints({1, 1, 1, 1}));
  std::vector<graph::Value*> ins = {c};
  for (size_t i = 0; i < act.clip.size(); ++i) ins.push_back(fusion_test::f32_scalar(*g, "clip" + std::to_string(i), act.clip[i]));
  graph::Value* y = g->add_value("y");
  graph::Node* a = g->add_node("act", act.op, ins, {y}, "", 14);
  a->attrs = act.attrs;
  y->is_graph_output = true;
  g->outputs().push_back(y);
  std::vector<float> xv(2 * 8 * 81);
  for (float& v : xv) v = nd(rng) * 4;
  return fusion_test::compile_and_run(g, fold, {kernels::Tensor{DType::kFloat32, xd, xv.data()}});
}

TEST(Fusion, ConvActivationMatchesUnfused) {
  graph::AttributeMap leaky, hsig;
  leaky.set("alpha", [] { graph::Attribute a; a.kind = graph::Attribute::Kind::kFloat; a.f = 0.1f; return a; }());
  hsig.set("alpha", [] { graph::Attribute a; a.kind = graph::Attribute::Kind::kFloat; a.f = 0.25f; return a; }());
  const std::vector<Act> acts = {{"Relu", {}, {}},        {"LeakyRelu", leaky, {}}, {"Clip", {}, {0.f, 6.f}},
                                 {"Clip", {}, {-0.5f}},   {"Sigmoid", {}, {}},      {"Tanh", {}, {}},
                                 {"HardSwish", {}, {}},   {"HardSigmoid", hsig, {}}};
  for (const Act& act : acts) {
    const fusion_test::Result ref = run(act, false);
    const fusion_test::Result got = run(act, true);
    EXPECT_EQ(ref.fused, 0u);
    EXPECT_EQ(got.fused, 1u) << act.op;
    fusion_test::expect_near(ref.outputs, got.outputs, act.op);
  }
}

}  // namespace
}  // namespace openacl::model
