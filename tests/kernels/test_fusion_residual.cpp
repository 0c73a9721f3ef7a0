// Residual Add fusion (graph::fuse_conv_add + the Conv kernel's sum post-op):
// conv(x) + r, optionally followed by an activation, must give what the
// unfused graph gives — when the output takes over the residual's memory
// (r dies at the Conv), when it cannot (r is read later), with either Add
// operand order, with an activation oneDNN cannot fuse (the kernel's own
// loops), and the pass must leave alone what it cannot take.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/passes.h"
#include "model/compiled_model.h"
#include "model/executor.h"

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

graph::Attribute ints(std::vector<int64_t> v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

// x [2,8,9,9] -> r = Sigmoid(x) ; c = Conv(x) 8->8, 3x3 pad 1 ; y = act(c + r)
std::vector<std::vector<float>> run(const Case& k, bool fold, size_t* fused, const planner::MemoryPlan** plan_out,
                                    std::shared_ptr<const CompiledModel>* keep) {
  auto g = std::make_shared<graph::Graph>();
  g->opsets()[""] = 14;
  const std::vector<int64_t> xd = {2, 8, 9, 9}, wd = {8, 8, 3, 3};
  graph::Value* x = g->add_value("x", graph::TensorType{DType::kFloat32, graph::Shape(xd.begin(), xd.end())});
  x->is_graph_input = true;
  g->inputs().push_back(x);
  std::mt19937 rng(11);
  std::normal_distribution<float> nd(0.f, 0.3f);
  std::vector<float> wv(8 * 8 * 9), bv(8);
  for (float& v : wv) v = nd(rng);
  for (float& v : bv) v = nd(rng);
  graph::Value* w = g->add_value("w", graph::TensorType{DType::kFloat32, graph::Shape(wd.begin(), wd.end())});
  w->constant = graph::TensorData::copy_of(DType::kFloat32, wd, wv.data(), wv.size() * 4);
  graph::Value* b = g->add_value("b", graph::TensorType{DType::kFloat32, graph::Shape{8}});
  b->constant = graph::TensorData::copy_of(DType::kFloat32, {8}, bv.data(), bv.size() * 4);
  graph::Value* r = x;
  if (!k.residual_is_x) {
    r = g->add_value("r");
    g->add_node("sig", "Sigmoid", {x}, {r}, "", 14);
  }
  graph::Value* c = g->add_value("c");
  graph::Node* conv = g->add_node("conv", "Conv", {x, w, b}, {c}, "", 13);
  conv->attrs.set("pads", ints({1, 1, 1, 1}));
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
  CompileOptions opt;
  opt.fold_constants = fold;
  std::unique_ptr<CompiledModel> m;
  Status st = CompiledModel::compile(g, opt, &m);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  *fused = m->fused_nodes();
  std::shared_ptr<const CompiledModel> sm(std::move(m));
  *keep = sm;
  *plan_out = &sm->plan();
  Executor e(sm);
  std::vector<float> xv(2 * 8 * 81);
  for (float& v : xv) v = nd(rng) * 3;
  std::vector<kernels::Tensor> out;
  st = e.run({kernels::Tensor{DType::kFloat32, xd, xv.data()}}, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  std::vector<std::vector<float>> result;
  for (const auto& t : out) result.emplace_back(t.as<float>(), t.as<float>() + t.elements());
  return result;
}

TEST(Fusion, ResidualAddMatchesUnfused) {
  const std::vector<Case> cases = {
      {"conv+r", false, false, ""},           {"r+conv", true, false, ""},
      {"conv+r, relu", false, false, "Relu"}, {"r+conv, relu, r read later", true, true, "Relu"},
      {"conv+r, r read later", false, true, ""},
      {"conv+r, hardsigmoid (not a oneDNN post-op)", false, false, "HardSigmoid"},
  };
  for (const Case& k : cases) {
    size_t fused_on = 0, fused_off = 0;
    const planner::MemoryPlan* plan_on = nullptr;
    const planner::MemoryPlan* plan_off = nullptr;
    std::shared_ptr<const CompiledModel> keep_on, keep_off;
    const auto ref = run(k, false, &fused_off, &plan_off, &keep_off);
    const auto got = run(k, true, &fused_on, &plan_on, &keep_on);
    EXPECT_EQ(fused_off, 0u);
    EXPECT_EQ(fused_on, *k.act ? 2u : 1u) << k.name;  // the Add (+ the activation)
    ASSERT_EQ(ref.size(), got.size()) << k.name;
    for (size_t o = 0; o < ref.size(); ++o) {
      ASSERT_EQ(ref[o].size(), got[o].size());
      for (size_t i = 0; i < ref[o].size(); ++i)
        ASSERT_NEAR(got[o][i], ref[o][i], 1e-5f + 1e-5f * std::fabs(ref[o][i])) << k.name << " output " << o << " at " << i;
    }
    // When the residual dies at the Conv, the output takes over its memory.
    if (!k.residual_is_output) {
      bool in_place = false;
      for (const planner::Buffer& buf : plan_on->work) in_place = in_place || buf.in_place_of != nullptr;
      EXPECT_TRUE(in_place) << k.name << "\n" << plan_on->to_string();
    }
  }
}

TEST(Fusion, ResidualThatIsTheConvInputIsNotFused) {
  // Add(conv(x), x): the output may not be written over x while the Conv reads it.
  size_t fused = 0;
  const planner::MemoryPlan* plan = nullptr;
  std::shared_ptr<const CompiledModel> keep;
  Case k{"x + conv(x)", false, false, "", true};
  const auto got = run(k, true, &fused, &plan, &keep);
  EXPECT_EQ(fused, 0u);
  size_t unused = 0;
  const auto ref = run(k, false, &unused, &plan, &keep);
  ASSERT_EQ(got.size(), 1u);
  for (size_t i = 0; i < got[0].size(); ++i) ASSERT_NEAR(got[0][i], ref[0][i], 1e-5f + 1e-5f * std::fabs(ref[0][i]));
}

}  // namespace
}  // namespace openacl::model
