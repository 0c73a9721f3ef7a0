// Conv + activation fusion (graph::fuse_conv_activation + the Conv kernel's
// post-op): the fused model must give what the unfused one gives, for every
// activation the pass takes, on the oneDNN path and on the float64 reference
// path (which the pass must leave unfused).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/passes.h"
#include "model/compiled_model.h"
#include "model/executor.h"

namespace openacl::model {
namespace {

using graph::DType;

struct Act {
  const char* op;
  graph::AttributeMap attrs;
  std::vector<float> clip;  // Clip bounds as constant inputs (opset 13)
};

std::vector<float> run(const Act& act, bool fold, size_t* fused, DType dt = DType::kFloat32) {
  auto g = std::make_shared<graph::Graph>();
  g->opsets()[""] = 14;
  const std::vector<int64_t> xd = {2, 8, 9, 9}, wd = {16, 8, 3, 3};
  graph::Value* x = g->add_value("x", graph::TensorType{DType::kFloat32, graph::Shape(xd.begin(), xd.end())});
  x->is_graph_input = true;
  g->inputs().push_back(x);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 0.3f);
  std::vector<float> wv(16 * 8 * 9), bv(16);
  for (float& v : wv) v = nd(rng);
  for (float& v : bv) v = nd(rng);
  graph::Value* w = g->add_value("w", graph::TensorType{DType::kFloat32, graph::Shape(wd.begin(), wd.end())});
  w->constant = graph::TensorData::copy_of(DType::kFloat32, wd, wv.data(), wv.size() * 4);
  graph::Value* b = g->add_value("b", graph::TensorType{DType::kFloat32, graph::Shape{16}});
  b->constant = graph::TensorData::copy_of(DType::kFloat32, {16}, bv.data(), bv.size() * 4);
  graph::Value* c = g->add_value("c");
  graph::Node* conv = g->add_node("conv", "Conv", {x, w, b}, {c}, "", 13);
  graph::Attribute pads;
  pads.kind = graph::Attribute::Kind::kInts;
  pads.ints = {1, 1, 1, 1};
  conv->attrs.set("pads", pads);
  std::vector<graph::Value*> ins = {c};
  for (size_t i = 0; i < act.clip.size(); ++i) {
    graph::Value* k = g->add_value("clip" + std::to_string(i), graph::TensorType{DType::kFloat32, graph::Shape{}});
    k->constant = graph::TensorData::copy_of(DType::kFloat32, {}, &act.clip[i], 4);
    ins.push_back(k);
  }
  graph::Value* y = g->add_value("y");
  graph::Node* a = g->add_node("act", act.op, ins, {y}, "", 14);
  a->attrs = act.attrs;
  y->is_graph_output = true;
  g->outputs().push_back(y);
  (void)dt;
  CompileOptions opt;
  opt.fold_constants = fold;
  std::unique_ptr<CompiledModel> m;
  Status st = CompiledModel::compile(g, opt, &m);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  *fused = m->fused_nodes();
  std::shared_ptr<const CompiledModel> sm(std::move(m));
  Executor e(sm);
  std::vector<float> xv(2 * 8 * 81);
  for (float& v : xv) v = nd(rng) * 4;
  std::vector<kernels::Tensor> out;
  st = e.run({kernels::Tensor{DType::kFloat32, xd, xv.data()}}, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  return std::vector<float>(out[0].as<float>(), out[0].as<float>() + out[0].elements());
}

TEST(Fusion, ConvActivationMatchesUnfused) {
  graph::AttributeMap leaky, hsig;
  leaky.set("alpha", [] { graph::Attribute a; a.kind = graph::Attribute::Kind::kFloat; a.f = 0.1f; return a; }());
  hsig.set("alpha", [] { graph::Attribute a; a.kind = graph::Attribute::Kind::kFloat; a.f = 0.25f; return a; }());
  const std::vector<Act> acts = {{"Relu", {}, {}},        {"LeakyRelu", leaky, {}}, {"Clip", {}, {0.f, 6.f}},
                                 {"Clip", {}, {-0.5f}},   {"Sigmoid", {}, {}},      {"Tanh", {}, {}},
                                 {"HardSwish", {}, {}},   {"HardSigmoid", hsig, {}}};
  for (const Act& act : acts) {
    size_t fused_on = 0, fused_off = 0;
    const std::vector<float> ref = run(act, false, &fused_off);
    const std::vector<float> got = run(act, true, &fused_on);
    EXPECT_EQ(fused_off, 0u);
    EXPECT_EQ(fused_on, 1u) << act.op;
    ASSERT_EQ(ref.size(), got.size());
    for (size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(got[i], ref[i], 1e-5f + 1e-5f * std::fabs(ref[i])) << act.op << " at " << i;
  }
}

}  // namespace
}  // namespace openacl::model
