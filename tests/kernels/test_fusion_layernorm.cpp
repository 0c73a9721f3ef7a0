// LayerNorm written out as exporters before opset 17 emit it
// (graph::fuse_layernorm): the fused model must give what the unfused one
// gives, and the pass must leave alone what is not exactly that pattern.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "graph/passes.h"
#include "model/compiled_model.h"
#include "model/executor.h"

namespace openacl::model {
namespace {

using graph::DType;
using graph::Graph;
using graph::Node;
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

Value* constant(Graph& g, const std::string& name, std::vector<int64_t> dims, const std::vector<float>& v) {
  Value* c = g.add_value(name, graph::TensorType{DType::kFloat32, graph::Shape(dims.begin(), dims.end())});
  c->constant = graph::TensorData::copy_of(DType::kFloat32, dims, v.data(), v.size() * 4);
  return c;
}

// x [2, 5, 12] -> the written-out LayerNorm over the last axis.
std::vector<std::vector<float>> run(const Case& k, bool fold, size_t* nodes) {
  auto gp = std::make_shared<Graph>();
  Graph& g = *gp;
  g.opsets()[""] = k.opset;
  Value* x = g.add_value("x", graph::TensorType{DType::kFloat32, graph::Shape{2, 5, kC}});
  x->is_graph_input = true;
  g.inputs().push_back(x);
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
      Value* axes = g.add_value("axes" + std::to_string(consts++), graph::TensorType{DType::kInt64, graph::Shape{1}});
      axes->constant = graph::TensorData::copy_of(DType::kInt64, {1}, &a, 8);
      g.add_node(out_name, "ReduceMean", {in, axes}, {out}, "", k.opset);
    } else {
      Node* n = g.add_node(out_name, "ReduceMean", {in}, {out}, "", k.opset);
      graph::Attribute axes;
      axes.kind = graph::Attribute::Kind::kInts;
      axes.ints = {k.axis};
      n->attrs.set("axes", axes);
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
                              : binary("Pow", d, constant(g, "two", {}, {2.f}), "sq");
  Value* var = mean(sq, "var");
  Value* ve = binary("Add", var, constant(g, "eps", {}, {1e-5f}), "ve", k.swap_operands);
  Value* sd = g.add_value("sd");
  g.add_node("sqrt", "Sqrt", {ve}, {sd}, "", k.opset);
  Value* n = binary("Div", d, sd, "n");
  Value* y = binary("Mul", n, constant(g, "gamma", {kC}, gamma), "scaled", k.swap_operands);
  if (k.with_beta) y = binary("Add", y, constant(g, "beta", {kC}, beta), "shifted", k.swap_operands);
  y->is_graph_output = true;
  g.outputs().push_back(y);
  if (k.d_is_output) {
    d->is_graph_output = true;
    g.outputs().push_back(d);
  }
  CompileOptions opt;
  opt.fold_constants = fold;
  std::unique_ptr<CompiledModel> cm;
  Status st = CompiledModel::compile(gp, opt, &cm);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  *nodes = cm->nodes().size();
  std::shared_ptr<const CompiledModel> sm(std::move(cm));
  Executor ex(sm);
  std::vector<float> xv(2 * 5 * kC);
  for (float& v : xv) v = 3.f * nd(rng) + 1.f;
  std::vector<kernels::Tensor> out;
  st = ex.run({kernels::Tensor{DType::kFloat32, {2, 5, kC}, xv.data()}}, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  std::vector<std::vector<float>> r;
  for (const kernels::Tensor& t : out) r.emplace_back(t.as<float>(), t.as<float>() + t.elements());
  return r;
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
    size_t unfused_nodes = 0, fused_nodes = 0;
    const auto ref = run(k, false, &unfused_nodes);
    const auto got = run(k, true, &fused_nodes);
    EXPECT_EQ(fused_nodes, k.nodes_fused) << k.name << " (unfused: " << unfused_nodes << " nodes)";
    ASSERT_EQ(ref.size(), got.size()) << k.name;
    for (size_t o = 0; o < ref.size(); ++o) {
      ASSERT_EQ(ref[o].size(), got[o].size()) << k.name;
      for (size_t i = 0; i < ref[o].size(); ++i)
        ASSERT_NEAR(got[o][i], ref[o][i], 1e-5f + 1e-5f * std::fabs(ref[o][i]))
            << k.name << " output " << o << " at " << i;
    }
  }
}

TEST(Fusion, LayerNormPatternWithAWrongExponentIsLeftAlone) {
  auto g = std::make_shared<Graph>();
  g->opsets()[""] = 17;
  Value* x = g->add_value("x", graph::TensorType{DType::kFloat32, graph::Shape{3, kC}});
  x->is_graph_input = true;
  g->inputs().push_back(x);
  auto mean_of = [&](Value* in, const char* name) {
    Value* out = g->add_value(name);
    Node* n = g->add_node(name, "ReduceMean", {in}, {out}, "", 17);
    graph::Attribute axes;
    axes.kind = graph::Attribute::Kind::kInts;
    axes.ints = {-1};
    n->attrs.set("axes", axes);
    return out;
  };
  Value* m = mean_of(x, "mean");
  Value* d = g->add_value("d");
  g->add_node("sub", "Sub", {x, m}, {d}, "", 17);
  Value* sq = g->add_value("sq");
  g->add_node("pow", "Pow", {d, constant(*g, "three", {}, {3.f})}, {sq}, "", 17);
  Value* var = mean_of(sq, "var");
  Value* ve = g->add_value("ve");
  g->add_node("add", "Add", {var, constant(*g, "eps", {}, {1e-5f})}, {ve}, "", 17);
  Value* sd = g->add_value("sd");
  g->add_node("sqrt", "Sqrt", {ve}, {sd}, "", 17);
  Value* n = g->add_value("n");
  g->add_node("div", "Div", {d, sd}, {n}, "", 17);
  Value* y = g->add_value("y");
  g->add_node("mul", "Mul", {n, constant(*g, "gamma", {kC}, std::vector<float>(kC, 1.f))}, {y}, "", 17);
  y->is_graph_output = true;
  g->outputs().push_back(y);
  size_t rewrites = 9;
  ASSERT_TRUE(graph::fuse_layernorm(*g, &rewrites).ok());
  EXPECT_EQ(rewrites, 0u);
  EXPECT_EQ(g->nodes().size(), 8u);
}

}  // namespace
}  // namespace openacl::model
