#include <gtest/gtest.h>

#include <cmath>

#include "graph/passes.h"

namespace openacl::graph {
namespace {

Value* constant(Graph& g, const std::string& name, std::vector<int64_t> dims, std::vector<float> v) {
  Shape s(dims.begin(), dims.end());
  Value* x = g.add_value(name, TensorType{DType::kFloat32, s});
  x->constant = TensorData::copy_of(DType::kFloat32, std::move(dims), v.data(), v.size() * sizeof(float));
  return x;
}

// Conv with 2 output channels of 1x1x1 weights, then BatchNormalization.
struct ConvBn {
  Graph g;
  Node* bn = nullptr;
  Value* y = nullptr;
  ConvBn(bool with_bias, bool conv_output_shared) {
    Value* x = g.add_value("x", TensorType{DType::kFloat32, Shape{1, 1, 2, 2}});
    x->is_graph_input = true;
    g.inputs().push_back(x);
    std::vector<Value*> ins = {x, constant(g, "w", {2, 1, 1, 1}, {2, 3})};
    if (with_bias) ins.push_back(constant(g, "b", {2}, {1, -1}));
    Value* c = g.add_value("c");
    g.add_node("conv", "Conv", ins, {c}, "", 13);
    y = g.add_value("y");
    bn = g.add_node("bn", "BatchNormalization",
                    {c, constant(g, "scale", {2}, {1, 2}), constant(g, "bias", {2}, {0.5f, 0}),
                     constant(g, "mean", {2}, {1, 2}), constant(g, "var", {2}, {4, 1})},
                    {y}, "", 15);
    bn->attrs.set("epsilon", [] { Attribute a; a.kind = Attribute::Kind::kFloat; a.f = 0; return a; }());
    y->is_graph_output = true;
    g.outputs().push_back(y);
    if (conv_output_shared) {
      c->is_graph_output = true;
      g.outputs().push_back(c);
    }
  }
};

TEST(Passes, BatchNormFoldsIntoConv) {
  for (bool bias : {false, true}) {
    ConvBn m(bias, false);
    size_t n = 0;
    ASSERT_TRUE(fold_batchnorm_into_conv(m.g, &n).ok());
    EXPECT_EQ(n, 1u);
    ASSERT_EQ(m.g.nodes().size(), 1u);
    Node* conv = m.g.nodes()[0].get();
    EXPECT_EQ(conv->op_type, "Conv");
    EXPECT_EQ(conv->output(0), m.y);
    EXPECT_EQ(m.y->producer, conv);
    // s = scale / sqrt(var): {0.5, 2}; W' = W*s = {1, 6}; B' = (B - mean)*s + bias.
    const float* w = conv->input(1)->constant->as<float>();
    const float* b = conv->input(2)->constant->as<float>();
    EXPECT_FLOAT_EQ(w[0], 1);
    EXPECT_FLOAT_EQ(w[1], 6);
    EXPECT_FLOAT_EQ(b[0], ((bias ? 1 : 0) - 1) * 0.5f + 0.5f);
    EXPECT_FLOAT_EQ(b[1], ((bias ? -1 : 0) - 2) * 2.f + 0);
    std::vector<Node*> order;
    EXPECT_TRUE(m.g.topological_order(&order).ok());
  }
}

TEST(Passes, BatchNormStaysWhenConvOutputIsUsedElsewhere) {
  ConvBn m(true, true);
  size_t n = 0;
  ASSERT_TRUE(fold_batchnorm_into_conv(m.g, &n).ok());
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(m.g.nodes().size(), 2u);
}

}  // namespace
}  // namespace openacl::graph
