// Shape functions of the tensor / NN ops (src/graph/ops/nn_*.cpp): small
// hand-built graphs run through infer_shapes, checking dtype and shape, and the
// definite errors with their messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <initializer_list>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/op_schema.h"

namespace openacl::graph {
namespace {

Dim sym(const char* s) { return Dim::symbolic(s); }
const Dim kU;  // unknown dim

Attribute ai(int64_t v) { Attribute a; a.kind = Attribute::Kind::kInt; a.i = v; return a; }
Attribute as(std::string v) { Attribute a; a.kind = Attribute::Kind::kString; a.s = std::move(v); return a; }
Attribute ais(std::vector<int64_t> v) { Attribute a; a.kind = Attribute::Kind::kInts; a.ints = std::move(v); return a; }
Attribute afs(std::vector<float> v) { Attribute a; a.kind = Attribute::Kind::kFloats; a.floats = std::move(v); return a; }

using Attrs = std::vector<std::pair<std::string, Attribute>>;

// One-op graphs: inputs declared by type, constants by data; run() infers.
class G {
 public:
  explicit G(int opset = 18) : opset_(opset) {}

  Value* in(DType dt, std::optional<Shape> s) {
    TensorType t;
    t.dtype = dt;
    t.shape = std::move(s);
    Value* v = g_.add_value("in" + std::to_string(n_++), t);
    v->is_graph_input = true;
    g_.inputs().push_back(v);
    return v;
  }
  Value* f32(Shape s) { return in(DType::kFloat32, std::move(s)); }
  Value* i64(std::vector<int64_t> data, std::optional<std::vector<int64_t>> dims = std::nullopt) {
    std::vector<int64_t> d = dims ? *dims : std::vector<int64_t>{static_cast<int64_t>(data.size())};
    return constant(DType::kInt64, d, data.data(), data.size() * sizeof(int64_t));
  }
  Value* f32c(std::vector<float> data, std::optional<std::vector<int64_t>> dims = std::nullopt) {
    std::vector<int64_t> d = dims ? *dims : std::vector<int64_t>{static_cast<int64_t>(data.size())};
    return constant(DType::kFloat32, d, data.data(), data.size() * sizeof(float));
  }
  Value* constant(DType dt, std::vector<int64_t> dims, const void* p, size_t bytes) {
    TensorType t;
    t.dtype = dt;
    t.shape = Shape(dims.begin(), dims.end());
    Value* v = g_.add_value("c" + std::to_string(n_++), t);
    v->constant = TensorData::copy_of(dt, dims, p, bytes);
    return v;
  }
  // Adds a node with `nout` outputs; returns its outputs.
  std::vector<Value*> op(const std::string& type, std::vector<Value*> ins, Attrs attrs = {}, int nout = 1) {
    std::vector<Value*> outs;
    for (int i = 0; i < nout; ++i) outs.push_back(g_.add_value("o" + std::to_string(n_++)));
    Node* node = g_.add_node(type + std::to_string(n_++), type, std::move(ins), outs, "", opset_);
    for (auto& [k, a] : attrs) node->attrs.set(k, a);
    return outs;
  }
  Status run() { return infer_shapes(g_); }
  Graph& graph() { return g_; }

 private:
  Graph g_;
  int opset_;
  int n_ = 0;
};

// Type string after inference of a one-node graph; "ERROR: <message>" on failure.
std::string infer1(G& g, const std::string& type, std::vector<Value*> ins, Attrs attrs = {}, size_t which = 0,
                   int nout = 1) {
  auto outs = g.op(type, std::move(ins), std::move(attrs), nout);
  Status st = g.run();
  if (!st.ok()) return "ERROR: " + st.message();
  return outs[which]->type.str();
}

#define EXPECT_ERROR(expr, text)                                             \
  do {                                                                       \
    const std::string _r = (expr);                                           \
    EXPECT_NE(_r.find("ERROR"), std::string::npos) << _r;                    \
    EXPECT_NE(_r.find(text), std::string::npos) << _r;                       \
  } while (0)

// ---------------------------------------------------------------- Conv / pool

TEST(ShapesNN, ResNetStem) {
  G g(13);
  Value* x = g.f32({sym("N"), 3, 224, 224});
  Value* w = g.f32({64, 3, 7, 7});
  auto c = g.op("Conv", {x, w}, {{"strides", ais({2, 2})}, {"pads", ais({3, 3, 3, 3})}});
  auto p = g.op("MaxPool", {c[0]}, {{"kernel_shape", ais({3, 3})}, {"strides", ais({2, 2})}, {"pads", ais({1, 1, 1, 1})}});
  Value* w2 = g.f32({64, 64, 3, 3});
  auto c2 = g.op("Conv", {p[0], w2, g.f32({64})}, {{"pads", ais({1, 1, 1, 1})}});
  auto gp = g.op("GlobalAveragePool", {c2[0]});
  auto fl = g.op("Flatten", {gp[0]});
  auto fc = g.op("Gemm", {fl[0], g.f32({1000, 64}), g.f32({1000})}, {{"transB", ai(1)}});
  ASSERT_TRUE(g.run().ok()) << g.run().message();
  EXPECT_EQ(c[0]->type.str(), "float32[N,64,112,112]");
  EXPECT_EQ(p[0]->type.str(), "float32[N,64,56,56]");
  EXPECT_EQ(c2[0]->type.str(), "float32[N,64,56,56]");
  EXPECT_EQ(gp[0]->type.str(), "float32[N,64,1,1]");
  EXPECT_EQ(fl[0]->type.str(), "float32[N,64]");
  EXPECT_EQ(fc[0]->type.str(), "float32[N,1000]");
}

TEST(ShapesNN, ConvDepthwiseDilatedSame) {
  G g;
  EXPECT_EQ(infer1(g, "Conv", {g.f32({1, 32, 112, 112}), g.f32({32, 1, 3, 3})},
                   {{"group", ai(32)}, {"strides", ais({2, 2})}, {"pads", ais({1, 1, 1, 1})}}),
            "float32[1,32,56,56]");
  G g2;
  EXPECT_EQ(infer1(g2, "Conv", {g2.f32({1, 8, 64, 64}), g2.f32({16, 8, 3, 3})},
                   {{"dilations", ais({2, 2})}}),
            "float32[1,16,60,60]");
  G g3;
  EXPECT_EQ(infer1(g3, "Conv", {g3.f32({1, 8, 65, 64}), g3.f32({16, 8, 3, 3})},
                   {{"auto_pad", as("SAME_UPPER")}, {"strides", ais({2, 2})}}),
            "float32[1,16,33,32]");
  G g4;
  EXPECT_EQ(infer1(g4, "Conv", {g4.f32({1, 8, 10, 10}), g4.f32({16, 8, 3, 3})}, {{"auto_pad", as("VALID")}, {"strides", ais({2, 2})}}),
            "float32[1,16,4,4]");
  // 1-D and 3-D convolutions.
  G g5;
  EXPECT_EQ(infer1(g5, "Conv", {g5.f32({2, 4, 100}), g5.f32({8, 4, 5})}, {{"pads", ais({2, 2})}}), "float32[2,8,100]");
  G g6;
  EXPECT_EQ(infer1(g6, "Conv", {g6.f32({1, 3, 16, 32, 32}), g6.f32({8, 3, 3, 3, 3})}), "float32[1,8,14,30,30]");
}

TEST(ShapesNN, ConvSymbolicSpatialKeptWhenSizePreserving) {
  G g;
  EXPECT_EQ(infer1(g, "Conv", {g.f32({sym("N"), 3, sym("H"), sym("W")}), g.f32({8, 3, 3, 3})},
                   {{"pads", ais({1, 1, 1, 1})}}),
            "float32[N,8,H,W]");
  G g2;
  EXPECT_EQ(infer1(g2, "Conv", {g2.f32({sym("N"), 3, sym("H"), kU}), g2.f32({8, 3, 3, 3})}, {{"strides", ais({2, 2})}}),
            "float32[N,8,?,?]");
  G g3;  // unknown rank input: rank comes from the weight
  EXPECT_EQ(infer1(g3, "Conv", {g3.in(DType::kFloat32, std::nullopt), g3.f32({8, 3, 3, 3})}), "float32[?,8,?,?]");
}

TEST(ShapesNN, ConvErrors) {
  G g;
  EXPECT_ERROR(infer1(g, "Conv", {g.f32({1, 3, 32, 32}), g.f32({8, 4, 3, 3})}), "input channels 3 != weight channels 4 x group 1");
  G g2;
  EXPECT_ERROR(infer1(g2, "Conv", {g2.f32({1, 3, 32, 32}), g2.f32({8, 3, 3})}), "differ in rank");
  G g3;
  EXPECT_ERROR(infer1(g3, "Conv", {g3.f32({1, 3, 2, 2}), g3.f32({8, 3, 3, 3})}), "smaller than the kernel window 3");
  G g4;
  EXPECT_ERROR(infer1(g4, "Conv", {g4.f32({1, 4, 8, 8}), g4.f32({6, 1, 3, 3})}, {{"group", ai(4)}}),
               "output channels 6 (W dim 0) are not divisible by group 4");
  G g4b;
  EXPECT_ERROR(infer1(g4b, "Conv", {g4b.f32({1, 8, 8, 8}), g4b.f32({8, 1, 3, 3})}, {{"group", ai(4)}}),
               "input channels 8 != weight channels 1 x group 4");
  G g5;
  EXPECT_ERROR(infer1(g5, "Conv", {g5.f32({1, 4, 8, 8}), g5.f32({6, 2, 3, 3})}, {{"group", ai(2)}, {"pads", ais({1, 1})}}),
               "pads [1,1] has 2 entries; expected 4");
  G g6;
  EXPECT_ERROR(infer1(g6, "Conv", {g6.f32({1, 4, 8, 8}), g6.f32({6, 4, 3, 3}), g6.f32({5})}), "bias B float32[5]");
}

// A 1x1 Conv that absorbed the depthwise after it (graph::fuse_conv_depthwise):
// the output is the depthwise's; what an .om could carry wrongly is refused.
TEST(ShapesNN, ConvWithFusedDepthwise) {
  const Attrs s2 = {{"__openacl_dw_stride", ai(2)}};
  G g;
  EXPECT_EQ(infer1(g, "Conv", {g.f32({sym("N"), 16, 113, 112}), g.f32({96, 16, 1, 1}), g.f32({96}), nullptr,
                               g.f32({96, 1, 3, 3}), g.f32({96})}, s2),
            "float32[N,96,57,56]");
  G g1;  // stride 1, no biases
  EXPECT_EQ(infer1(g1, "Conv", {g1.f32({1, 16, 56, 56}), g1.f32({96, 16, 1, 1}), nullptr, nullptr,
                                g1.f32({96, 1, 3, 3})}, {{"__openacl_dw_stride", ai(1)}}),
            "float32[1,96,56,56]");
  G e1;
  EXPECT_ERROR(infer1(e1, "Conv", {e1.f32({1, 16, 56, 56}), e1.f32({96, 16, 3, 3}), nullptr, nullptr,
                                   e1.f32({96, 1, 3, 3})}, s2),
               "follows a 1x1 Conv only");
  G e2;
  EXPECT_ERROR(infer1(e2, "Conv", {e2.f32({1, 16, 56, 56}), e2.f32({96, 16, 1, 1})}, s2), "input 4) are missing");
  G e3;
  EXPECT_ERROR(infer1(e3, "Conv", {e3.f32({1, 16, 56, 56}), e3.f32({96, 16, 1, 1}), nullptr, nullptr,
                                   e3.f32({64, 1, 3, 3})}, s2),
               "fused depthwise input 4 must be float32 [C, 1, 3, 3]");
  G e4;
  EXPECT_ERROR(infer1(e4, "Conv", {e4.f32({1, 16, 56, 56}), e4.f32({96, 16, 1, 1}), nullptr, nullptr,
                                   e4.f32({96, 1, 3, 3})}, {{"__openacl_dw_stride", ai(3)}}),
               "stride 3 must be 1 or 2");
  G e5;
  EXPECT_ERROR(infer1(e5, "Conv", {e5.f32({1, 16, 56, 56}), e5.f32({96, 16, 1, 1}), nullptr, e5.f32({1, 96, 28, 28}),
                                   e5.f32({96, 1, 3, 3})}, s2),
               "takes no residual input");
}

// A Conv that absorbed the projection after it (graph::fuse_inverted_residual):
// a 1x1 + depthwise or a depthwise, then the 1x1 projection (inputs 6, 7)
// and the residual (input 3, with the sum attribute).
TEST(ShapesNN, ConvWithFusedProjection) {
  const Attrs block = {{"__openacl_dw_stride", ai(1)}, {"__openacl_project", ai(1)}, {"__openacl_sum", ai(1)}};
  G g;
  EXPECT_EQ(infer1(g, "Conv", {g.f32({sym("N"), 24, 56, 56}), g.f32({144, 24, 1, 1}), g.f32({144}),
                               g.f32({sym("N"), 24, 56, 56}), g.f32({144, 1, 3, 3}), g.f32({144}),
                               g.f32({24, 144, 1, 1}), g.f32({24})}, block),
            "float32[N,24,56,56]");
  G g1;  // the depthwise alone, stride 2, no residual, no biases
  EXPECT_EQ(infer1(g1, "Conv", {g1.f32({1, 32, 112, 112}), g1.f32({32, 1, 3, 3}), nullptr, nullptr, nullptr, nullptr,
                                g1.f32({16, 32, 1, 1})},
                   {{"group", ai(32)}, {"pads", ais({1, 1, 1, 1})}, {"strides", ais({2, 2})}, {"__openacl_project", ai(1)}}),
            "float32[1,16,56,56]");
  G e1;
  EXPECT_ERROR(infer1(e1, "Conv", {e1.f32({1, 24, 56, 56}), e1.f32({144, 24, 1, 1}), nullptr, e1.f32({1, 24, 56, 56}),
                                   e1.f32({144, 1, 3, 3})}, block),
               "projection's weights (input 6) are missing");
  G e2;
  EXPECT_ERROR(infer1(e2, "Conv", {e2.f32({1, 24, 56, 56}), e2.f32({144, 24, 1, 1}), nullptr, nullptr,
                                   e2.f32({144, 1, 3, 3}), nullptr, e2.f32({24, 144, 1, 1})}, block),
               "goes with the sum attribute");
  G e3;
  EXPECT_ERROR(infer1(e3, "Conv", {e3.f32({1, 24, 56, 56}), e3.f32({144, 24, 1, 1}), nullptr, e3.f32({1, 24, 56, 56}),
                                   e3.f32({144, 1, 3, 3}), nullptr, e3.f32({24, 96, 1, 1})}, block),
               "input 6) must be float32 [M, C, 1, 1]");
  G e4;
  EXPECT_ERROR(infer1(e4, "Conv", {e4.f32({1, 24, 56, 56}), e4.f32({144, 24, 1, 1}), nullptr, e4.f32({1, 32, 56, 56}),
                                   e4.f32({144, 1, 3, 3}), nullptr, e4.f32({24, 144, 1, 1})}, block),
               "residual input must have the block output's type float32[1,24,56,56]");
}

TEST(ShapesNN, ConvTranspose) {
  G g;
  EXPECT_EQ(infer1(g, "ConvTranspose", {g.f32({1, 16, 14, 14}), g.f32({16, 8, 3, 3})},
                   {{"strides", ais({2, 2})}, {"pads", ais({1, 1, 1, 1})}, {"output_padding", ais({1, 1})}}),
            "float32[1,8,28,28]");
  G g2;  // grouped: output channels = W[1] * group
  EXPECT_EQ(infer1(g2, "ConvTranspose", {g2.f32({1, 16, 7, 7}), g2.f32({16, 2, 4, 4})},
                   {{"strides", ais({2, 2})}, {"group", ai(4)}}),
            "float32[1,8,16,16]");
  G g3;
  EXPECT_EQ(infer1(g3, "ConvTranspose", {g3.f32({2, 4, 5, 5}), g3.f32({4, 3, 3, 3})},
                   {{"strides", ais({2, 2})}, {"output_shape", ais({10, 11})}}),
            "float32[2,3,10,11]");
  G g4;
  EXPECT_EQ(infer1(g4, "ConvTranspose", {g4.f32({2, 4, 5, 5}), g4.f32({4, 3, 3, 3})},
                   {{"strides", ais({2, 2})}, {"auto_pad", as("SAME_UPPER")}}),
            "float32[2,3,10,10]");
  G g5;
  EXPECT_ERROR(infer1(g5, "ConvTranspose", {g5.f32({1, 16, 7, 7}), g5.f32({8, 2, 4, 4})}), "input channels 16 != weight dim 0 8");
}

TEST(ShapesNN, Pooling) {
  G g;
  auto mp = g.op("MaxPool", {g.f32({1, 8, 7, 7})},
                 {{"kernel_shape", ais({2, 2})}, {"strides", ais({2, 2})}, {"ceil_mode", ai(1)}}, 2);
  ASSERT_TRUE(g.run().ok());
  EXPECT_EQ(mp[0]->type.str(), "float32[1,8,4,4]");
  EXPECT_EQ(mp[1]->type.str(), "int64[1,8,4,4]");
  G g2;
  EXPECT_EQ(infer1(g2, "AveragePool", {g2.f32({1, 8, 7, 7})}, {{"kernel_shape", ais({2, 2})}, {"strides", ais({2, 2})}}),
            "float32[1,8,3,3]");
  G g3;  // ceil_mode: the last window must start inside the input or left padding
  EXPECT_EQ(infer1(g3, "MaxPool", {g3.f32({1, 1, 6, 6})},
                   {{"kernel_shape", ais({3, 3})}, {"strides", ais({2, 2})}, {"pads", ais({1, 1, 1, 1})}, {"ceil_mode", ai(1)}}),
            "float32[1,1,4,4]");
  G g4;
  EXPECT_EQ(infer1(g4, "LpPool", {g4.f32({1, 1, 9})}, {{"kernel_shape", ais({3})}, {"auto_pad", as("SAME_LOWER")}, {"strides", ais({2})}}),
            "float32[1,1,5]");
  G g5;
  EXPECT_EQ(infer1(g5, "GlobalMaxPool", {g5.in(DType::kFloat16, Shape{sym("B"), 16, 3, 4, 5})}), "float16[B,16,1,1,1]");
  G g6;
  EXPECT_EQ(infer1(g6, "MaxPool", {g6.f32({1, 1, 10, 10})}, {{"kernel_shape", ais({3, 3})}, {"dilations", ais({2, 2})}}),
            "float32[1,1,6,6]");
  G g7;
  EXPECT_ERROR(infer1(g7, "MaxPool", {g7.f32({1, 1, 10})}, {{"kernel_shape", ais({3, 3})}}), "must have rank 4");
  G g8;
  EXPECT_ERROR(infer1(g8, "AveragePool", {g8.f32({1, 1, 10, 10})}), "kernel_shape attribute is required");
}

// ---------------------------------------------------------------- MatMul & co

TEST(ShapesNN, MatMul) {
  G g;
  EXPECT_EQ(infer1(g, "MatMul", {g.f32({sym("B"), 1, 128, 64}), g.f32({12, 64, 32})}), "float32[B,12,128,32]");
  G g2;
  EXPECT_EQ(infer1(g2, "MatMul", {g2.f32({64}), g2.f32({3, 64, 8})}), "float32[3,8]");
  G g3;
  EXPECT_EQ(infer1(g3, "MatMul", {g3.f32({3, 5, 64}), g3.f32({64})}), "float32[3,5]");
  G g4;
  EXPECT_EQ(infer1(g4, "MatMul", {g4.f32({64}), g4.f32({64})}), "float32[]");
  G g5;
  EXPECT_ERROR(infer1(g5, "MatMul", {g5.f32({4, 5}), g5.f32({6, 7})}), "inner dimensions differ");
  G g6;
  EXPECT_ERROR(infer1(g6, "MatMul", {g6.f32({2, 4, 5}), g6.f32({3, 5, 7})}), "do not broadcast");
  G g7;
  EXPECT_EQ(infer1(g7, "MatMul", {g7.in(DType::kFloat32, std::nullopt), g7.f32({5, 7})}), "float32[?]");
  G g8;
  EXPECT_EQ(infer1(g8, "MatMulInteger", {g8.in(DType::kUInt8, Shape{4, 5}), g8.in(DType::kInt8, Shape{5, 6})}), "int32[4,6]");
}

TEST(ShapesNN, Gemm) {
  G g;
  EXPECT_EQ(infer1(g, "Gemm", {g.f32({10, 4}), g.f32({10, 6}), g.f32({6})}, {{"transA", ai(1)}}), "float32[4,6]");
  G g2;
  EXPECT_ERROR(infer1(g2, "Gemm", {g2.f32({4, 10}), g2.f32({6, 10})}), "inner dimensions differ");
  G g3;
  EXPECT_ERROR(infer1(g3, "Gemm", {g3.f32({4, 10}), g3.f32({10, 6}), g3.f32({5})}), "does not broadcast");
}

TEST(ShapesNN, Einsum) {
  G g;
  EXPECT_EQ(infer1(g, "Einsum", {g.f32({2, 3, 4}), g.f32({2, 4, 5})}, {{"equation", as("bij,bjk->bik")}}), "float32[2,3,5]");
  G g2;  // implicit output: letters seen once, sorted
  EXPECT_EQ(infer1(g2, "Einsum", {g2.f32({3, 4}), g2.f32({4, 5})}, {{"equation", as("ij,jk")}}), "float32[3,5]");
  G g3;
  EXPECT_EQ(infer1(g3, "Einsum", {g3.f32({sym("B"), 7, 8, 3}), g3.f32({3, 5})}, {{"equation", as("...i,ij->...j")}}),
            "float32[B,7,8,5]");
  G g4;
  EXPECT_EQ(infer1(g4, "Einsum", {g4.f32({4, 4})}, {{"equation", as("ii->i")}}), "float32[4]");
  G g5;
  EXPECT_EQ(infer1(g5, "Einsum", {g5.f32({4, 5})}, {{"equation", as("ij->ji")}}), "float32[5,4]");
  G g6;
  EXPECT_EQ(infer1(g6, "Einsum", {g6.f32({2, 3})}, {{"equation", as("ij->")}}), "float32[]");
  G g7;
  EXPECT_ERROR(infer1(g7, "Einsum", {g7.f32({3, 4}), g7.f32({5, 6})}, {{"equation", as("ij,jk->ik")}}), "label 'j' has sizes 4 and 5");
}

// ---------------------------------------------------------------- reshaping

TEST(ShapesNN, Reshape) {
  G g;
  EXPECT_EQ(infer1(g, "Reshape", {g.f32({2, 3, 4}), g.i64({0, -1})}), "float32[2,12]");
  G g2;  // symbolic dims cancel: [B,S,12,64] -> [0,0,-1]
  EXPECT_EQ(infer1(g2, "Reshape", {g2.f32({sym("B"), sym("S"), 12, 64}), g2.i64({0, 0, -1})}), "float32[B,S,768]");
  G g3;  // the lone symbol is what -1 stands for
  EXPECT_EQ(infer1(g3, "Reshape", {g3.f32({sym("B"), 768}), g3.i64({-1, 12, 64})}), "float32[B,12,64]");
  G g3b;  // two symbols folded into one: unknown
  EXPECT_EQ(infer1(g3b, "Reshape", {g3b.f32({sym("B"), sym("S"), 768}), g3b.i64({-1, 768})}), "float32[?,768]");
  G g4;  // a lone symbol moved: [B,768] -> [-1, 768] keeps B
  EXPECT_EQ(infer1(g4, "Reshape", {g4.f32({sym("B"), 12, 64}), g4.i64({-1, 768})}), "float32[B,768]");
  G g5;  // allowzero: 0 is a real size
  EXPECT_EQ(infer1(g5, "Reshape", {g5.f32({0, 4}), g5.i64({0, 4})}, {{"allowzero", ai(1)}}), "float32[0,4]");
  G g6;  // shape not constant but of known length
  Value* shp = g6.in(DType::kInt64, Shape{3});
  EXPECT_EQ(infer1(g6, "Reshape", {g6.f32({6, 4}), shp}), "float32[?,?,?]");
  G g7(4);  // opset 1..4: shape attribute
  EXPECT_EQ(infer1(g7, "Reshape", {g7.f32({6, 4})}, {{"shape", ais({3, -1})}}), "float32[3,8]");
  G g8;
  EXPECT_ERROR(infer1(g8, "Reshape", {g8.f32({2, 3, 4}), g8.i64({5, -1})}), "do not divide by 5");
  G g9;
  EXPECT_ERROR(infer1(g9, "Reshape", {g9.f32({2, 3, 4}), g9.i64({5, 5})}), "(24 elements) to [5,5] (25 elements)");
  G g10;
  EXPECT_ERROR(infer1(g10, "Reshape", {g10.f32({2, 3, 4}), g10.i64({-1, -1})}), "more than one -1");
  G g11;
  EXPECT_EQ(infer1(g11, "Reshape", {g11.in(DType::kFloat32, std::nullopt), g11.i64({0, 5, -1})}), "float32[?,5,?]");
}

TEST(ShapesNN, FlattenSqueezeUnsqueezeTranspose) {
  G g;
  EXPECT_EQ(infer1(g, "Flatten", {g.f32({2, 3, 4, 5})}, {{"axis", ai(-2)}}), "float32[6,20]");
  G g1;
  EXPECT_EQ(infer1(g1, "Flatten", {g1.f32({2, 3})}, {{"axis", ai(0)}}), "float32[1,6]");
  G g2(11);
  EXPECT_EQ(infer1(g2, "Squeeze", {g2.f32({1, 3, 1, 5})}, {{"axes", ais({0, -2})}}), "float32[3,5]");
  G g3(13);
  EXPECT_EQ(infer1(g3, "Squeeze", {g3.f32({1, 3, 1, 5}), g3.i64({2})}), "float32[1,3,5]");
  G g4(13);
  EXPECT_EQ(infer1(g4, "Squeeze", {g4.f32({1, 3, 1, 5})}), "float32[3,5]");
  G g5(13);
  EXPECT_ERROR(infer1(g5, "Squeeze", {g5.f32({1, 3}), g5.i64({1})}), "its size is 3, not 1");
  G g6(13);
  EXPECT_EQ(infer1(g6, "Unsqueeze", {g6.f32({sym("N"), 5}), g6.i64({0, -1})}), "float32[1,N,5,1]");
  G g7(11);
  EXPECT_EQ(infer1(g7, "Unsqueeze", {g7.f32({3})}, {{"axes", ais({1})}}), "float32[3,1]");
  G g8;
  EXPECT_EQ(infer1(g8, "Transpose", {g8.f32({sym("N"), 3, 4, 5})}, {{"perm", ais({0, 2, 3, 1})}}), "float32[N,4,5,3]");
  G g9;
  EXPECT_EQ(infer1(g9, "Transpose", {g9.f32({2, 3, 4})}), "float32[4,3,2]");
  G g10;
  EXPECT_ERROR(infer1(g10, "Transpose", {g10.f32({2, 3, 4})}, {{"perm", ais({0, 0, 1})}}), "not a permutation");
}

TEST(ShapesNN, ConcatSplit) {
  G g;
  EXPECT_EQ(infer1(g, "Concat", {g.f32({sym("N"), 3, 8}), g.f32({kU, 5, 8})}, {{"axis", ai(1)}}), "float32[N,8,8]");
  G g2;
  EXPECT_ERROR(infer1(g2, "Concat", {g2.f32({2, 3}), g2.f32({4, 3})}, {{"axis", ai(1)}}), "differs from the others in dim 0");
  G g3;
  EXPECT_ERROR(infer1(g3, "Concat", {g3.f32({2, 3}), g3.f32({2, 3, 1})}, {{"axis", ai(0)}}), "has rank 3");
  G g4(13);
  auto s = g4.op("Split", {g4.f32({2, 10}), g4.i64({3, 7})}, {{"axis", ai(-1)}}, 2);
  ASSERT_TRUE(g4.run().ok());
  EXPECT_EQ(s[0]->type.str(), "float32[2,3]");
  EXPECT_EQ(s[1]->type.str(), "float32[2,7]");
  G g5(11);
  auto s5 = g5.op("Split", {g5.f32({6, 2})}, {}, 3);
  ASSERT_TRUE(g5.run().ok());
  EXPECT_EQ(s5[2]->type.str(), "float32[2,2]");
  G g6(18);
  auto s6 = g6.op("Split", {g6.f32({7})}, {{"num_outputs", ai(3)}}, 3);
  ASSERT_TRUE(g6.run().ok());
  EXPECT_EQ(s6[0]->type.str(), "float32[3]");
  EXPECT_EQ(s6[2]->type.str(), "float32[1]");
  G g7(13);
  EXPECT_ERROR(infer1(g7, "Split", {g7.f32({2, 10}), g7.i64({3, 6})}, {{"axis", ai(1)}}, 0, 2), "sums to 9");
  G g8(11);
  EXPECT_EQ(infer1(g8, "Split", {g8.f32({2, 10})}, {{"axis", ai(1)}, {"split", ais({4, 6})}}, 1, 2), "float32[2,6]");
}

// ---------------------------------------------------------------- indexing

TEST(ShapesNN, Slice) {
  G g;
  EXPECT_EQ(infer1(g, "Slice", {g.f32({10, 20, 30}), g.i64({1, -5}), g.i64({1000, -1}), g.i64({0, 2}), g.i64({2, 1})}),
            "float32[5,20,4]");
  G g2;  // negative step reverses
  EXPECT_EQ(infer1(g2, "Slice", {g2.f32({10}), g2.i64({-1}), g2.i64({INT64_MIN}), g2.i64({0}), g2.i64({-1})}),
            "float32[10]");
  G g3;
  EXPECT_EQ(infer1(g3, "Slice", {g3.f32({10}), g3.i64({8}), g3.i64({1}), g3.i64({0}), g3.i64({-3})}), "float32[3]");
  G g4;  // symbolic axis sliced whole keeps its symbol; other slices of it are unknown
  EXPECT_EQ(infer1(g4, "Slice", {g4.f32({sym("N"), sym("S"), 8}), g4.i64({0, 1}), g4.i64({INT64_MAX, 3}), g4.i64({0, 1})}),
            "float32[N,?,8]");
  G g5(9);
  EXPECT_EQ(infer1(g5, "Slice", {g5.f32({4, 6})}, {{"starts", ais({1})}, {"ends", ais({3})}, {"axes", ais({1})}}),
            "float32[4,2]");
  G g6;  // starts not constant, axes known
  EXPECT_EQ(infer1(g6, "Slice", {g6.f32({4, 6}), g6.in(DType::kInt64, Shape{1}), g6.i64({3}), g6.i64({1})}), "float32[4,?]");
  G g7;
  EXPECT_ERROR(infer1(g7, "Slice", {g7.f32({4, 6}), g7.i64({0}), g7.i64({3}), g7.i64({1}), g7.i64({0})}), "steps [0] contain 0");
  G g8;
  EXPECT_EQ(infer1(g8, "Slice", {g8.f32({4, 6}), g8.i64({5}), g8.i64({2}), g8.i64({0})}), "float32[0,6]");
}

TEST(ShapesNN, GatherScatter) {
  G g;
  EXPECT_EQ(infer1(g, "Gather", {g.f32({5, 6, 7}), g.in(DType::kInt64, Shape{sym("B"), 3})}, {{"axis", ai(1)}}),
            "float32[5,B,3,7]");
  G g2;  // scalar index drops the axis
  EXPECT_EQ(infer1(g2, "Gather", {g2.in(DType::kInt64, Shape{4}), g2.i64({2}, std::vector<int64_t>{})}), "int64[]");
  G g3;
  EXPECT_ERROR(infer1(g3, "Gather", {g3.f32({4, 3}), g3.i64({7})}), "index 7 is out of range");
  G g4;
  EXPECT_EQ(infer1(g4, "GatherElements", {g4.f32({3, 4}), g4.in(DType::kInt64, Shape{3, 2})}, {{"axis", ai(1)}}),
            "float32[3,2]");
  G g5;
  EXPECT_EQ(infer1(g5, "GatherND", {g5.f32({2, 3, 4, 5}), g5.in(DType::kInt64, Shape{2, 7, 2})}, {{"batch_dims", ai(1)}}),
            "float32[2,7,5]");
  G g6;
  EXPECT_ERROR(infer1(g6, "GatherND", {g6.f32({2, 3}), g6.in(DType::kInt64, Shape{7, 3})}), "index 3 dims");
  G g7;
  EXPECT_EQ(infer1(g7, "ScatterND", {g7.f32({4, 5}), g7.in(DType::kInt64, Shape{2, 1}), g7.f32({2, 5})}), "float32[4,5]");
  G g8;
  EXPECT_EQ(infer1(g8, "ScatterElements", {g8.f32({4, 5}), g8.in(DType::kInt64, Shape{2, 2}), g8.f32({2, 2})}), "float32[4,5]");
  G g9;
  EXPECT_ERROR(infer1(g9, "ScatterElements", {g9.f32({4, 5}), g9.in(DType::kInt64, Shape{2, 2}), g9.f32({2, 3})}),
               "must have the same shape");
  G g10;
  uint8_t cond[] = {1, 0, 1};
  EXPECT_EQ(infer1(g10, "Compress", {g10.f32({3, 2}), g10.constant(DType::kBool, {3}, cond, 3)}, {{"axis", ai(0)}}),
            "float32[2,2]");
  G g11;
  EXPECT_EQ(infer1(g11, "Compress", {g11.f32({3, 2}), g11.in(DType::kBool, Shape{3})}), "float32[?]");
}

TEST(ShapesNN, ExpandTilePad) {
  G g;
  EXPECT_EQ(infer1(g, "Expand", {g.f32({3, 1}), g.i64({2, 1, 6})}), "float32[2,3,6]");
  G g2;
  EXPECT_ERROR(infer1(g2, "Expand", {g2.f32({3, 2}), g2.i64({4})}), "cannot expand");
  G g3;
  EXPECT_EQ(infer1(g3, "Tile", {g3.f32({sym("N"), 2}), g3.i64({1, 3})}), "float32[N,6]");
  G g4;
  EXPECT_EQ(infer1(g4, "Pad", {g4.f32({1, 3, 4, 4}), g4.i64({0, 0, 1, 2, 0, 0, 3, 4})}, {{"mode", as("reflect")}}),
            "float32[1,3,8,10]");
  G g5(2);
  EXPECT_EQ(infer1(g5, "Pad", {g5.f32({4, 4})}, {{"pads", ais({1, 1, 1, 1})}}), "float32[6,6]");
  G g6(18);
  EXPECT_EQ(infer1(g6, "Pad", {g6.f32({sym("N"), 3, 4}), g6.i64({2, 1}), g6.f32c({0.f}, std::vector<int64_t>{}), g6.i64({-1})}),
            "float32[N,3,7]");
  G g7;
  EXPECT_ERROR(infer1(g7, "Pad", {g7.f32({4, 4}), g7.i64({0, -3, 0, -2})}), "negative");
  G g8;
  EXPECT_ERROR(infer1(g8, "Pad", {g8.f32({4, 4}), g8.i64({0, 0})}), "pads [0,0] has 2 entries; expected 4");
}

TEST(ShapesNN, ResizeUpsample) {
  G g(13);
  Value* x = g.f32({sym("N"), 3, 20, 30});
  EXPECT_EQ(infer1(g, "Resize", {x, nullptr, g.f32c({1, 1, 2, 1.5f})}), "float32[N,3,40,45]");
  G g2(13);
  Value* x2 = g2.f32({sym("N"), 3, 20, 30});
  EXPECT_EQ(infer1(g2, "Resize", {x2, g2.f32c({}), g2.f32c({}), g2.i64({1, 3, 64, 64})}), "float32[1,3,64,64]");
  G g3(10);
  EXPECT_EQ(infer1(g3, "Resize", {g3.f32({1, 3, 5, 5}), g3.f32c({1, 1, 0.5f, 0.5f})}), "float32[1,3,2,2]");
  G g4(18);
  EXPECT_EQ(infer1(g4, "Resize", {g4.f32({1, 3, 20, 40}), nullptr, nullptr, g4.i64({30, 30})},
                   {{"axes", ais({2, 3})}, {"keep_aspect_ratio_policy", as("not_larger")}}),
            "float32[1,3,15,30]");
  G g5(13);
  EXPECT_EQ(infer1(g5, "Resize", {g5.f32({1, 3, 20, 30}), nullptr, g5.in(DType::kFloat32, Shape{4})}), "float32[?,?,?,?]");
  G g6(13);
  EXPECT_ERROR(infer1(g6, "Resize", {g6.f32({1, 3, 20, 30}), nullptr, g6.f32c({2, 2})}), "scales has 2 entries; expected 4");
  G g7(9);
  EXPECT_EQ(infer1(g7, "Upsample", {g7.f32({1, 3, 4, 4}), g7.f32c({1, 1, 2, 2})}), "float32[1,3,8,8]");
  G g8(7);
  EXPECT_EQ(infer1(g8, "Upsample", {g8.f32({1, 3, 4, 4})}, {{"scales", afs({1, 1, 2, 3})}}), "float32[1,3,8,12]");
}

// ---------------------------------------------------------------- misc

TEST(ShapesNN, ShapeSizeConstantOfShapeRange) {
  G g(15);
  EXPECT_EQ(infer1(g, "Shape", {g.f32({sym("N"), 3, 4, 5})}, {{"start", ai(1)}, {"end", ai(-1)}}), "int64[2]");
  G g1;
  EXPECT_EQ(infer1(g1, "Shape", {g1.in(DType::kFloat32, std::nullopt)}), "int64[?]");
  G g2;
  EXPECT_EQ(infer1(g2, "Size", {g2.f32({2, 3})}), "int64[]");
  G g3;
  EXPECT_EQ(infer1(g3, "ConstantOfShape", {g3.i64({2, 5})}), "float32[2,5]");
  G g4;
  Attribute v;
  v.kind = Attribute::Kind::kTensor;
  int64_t one = 1;
  v.t = TensorData::copy_of(DType::kInt64, {1}, &one, sizeof one);
  EXPECT_EQ(infer1(g4, "ConstantOfShape", {g4.in(DType::kInt64, Shape{3})}, {{"value", v}}), "int64[?,?,?]");
  G g5;
  EXPECT_EQ(infer1(g5, "Range", {g5.i64({0}, std::vector<int64_t>{}), g5.i64({10}, std::vector<int64_t>{}),
                                 g5.i64({3}, std::vector<int64_t>{})}),
            "int64[4]");
  G g6;
  EXPECT_EQ(infer1(g6, "Range", {g6.f32c({1}, std::vector<int64_t>{}), g6.f32c({0}, std::vector<int64_t>{}),
                                 g6.f32c({-0.25f}, std::vector<int64_t>{})}),
            "float32[4]");
  G g7;
  EXPECT_EQ(infer1(g7, "Range", {g7.in(DType::kInt32, Shape{}), g7.in(DType::kInt32, Shape{}), g7.in(DType::kInt32, Shape{})}),
            "int32[?]");
  G g8;
  EXPECT_ERROR(infer1(g8, "ConstantOfShape", {g8.i64({2, -5})}), "negative size");
}

TEST(ShapesNN, OneHotNonZeroTriluBlocks) {
  G g;
  EXPECT_EQ(infer1(g, "OneHot", {g.in(DType::kInt64, Shape{sym("N"), 4}), g.i64({10}, std::vector<int64_t>{}),
                                 g.f32c({0, 1})},
                   {{"axis", ai(1)}}),
            "float32[N,10,4]");
  G g1;
  EXPECT_EQ(infer1(g1, "NonZero", {g1.f32({3, 4})}), "int64[2,?]");
  G g2;
  EXPECT_EQ(infer1(g2, "Trilu", {g2.f32({sym("B"), 4, 4}), g2.i64({1}, std::vector<int64_t>{})}), "float32[B,4,4]");
  G g3;
  EXPECT_EQ(infer1(g3, "DepthToSpace", {g3.f32({1, 16, 5, 6})}, {{"blocksize", ai(2)}}), "float32[1,4,10,12]");
  G g4;
  EXPECT_EQ(infer1(g4, "SpaceToDepth", {g4.f32({1, 3, 8, 6})}, {{"blocksize", ai(2)}}), "float32[1,12,4,3]");
  G g5;
  EXPECT_ERROR(infer1(g5, "SpaceToDepth", {g5.f32({1, 3, 7, 6})}, {{"blocksize", ai(2)}}), "not divisible by blocksize 2");
}

TEST(ShapesNN, DetectionAndRandom) {
  G g;
  EXPECT_EQ(infer1(g, "NonMaxSuppression", {g.f32({1, 100, 4}), g.f32({1, 5, 100})}), "int64[?,3]");
  G g1;
  EXPECT_EQ(infer1(g1, "RoiAlign", {g1.f32({2, 256, 50, 50}), g1.f32({sym("R"), 4}), g1.in(DType::kInt64, Shape{sym("R")})},
                   {{"output_height", ai(7)}, {"output_width", ai(7)}}),
            "float32[R,256,7,7]");
  G g2;
  EXPECT_EQ(infer1(g2, "ReverseSequence", {g2.f32({5, 4, 3}), g2.in(DType::kInt64, Shape{4})}), "float32[5,4,3]");
  G g3;
  EXPECT_EQ(infer1(g3, "EyeLike", {g3.f32({3, 4})}, {{"dtype", ai(7)}}), "int64[3,4]");
  G g4;
  auto u = g4.op("Unique", {g4.f32({3, 4})}, {}, 4);
  ASSERT_TRUE(g4.run().ok());
  EXPECT_EQ(u[0]->type.str(), "float32[?]");
  EXPECT_EQ(u[1]->type.str(), "int64[?]");
  EXPECT_EQ(u[2]->type.str(), "int64[12]");
  EXPECT_EQ(u[3]->type.str(), "int64[?]");
  G g5;
  EXPECT_EQ(infer1(g5, "RandomNormal", {}, {{"shape", ais({2, 3})}}), "float32[2,3]");
  G g6;
  EXPECT_EQ(infer1(g6, "RandomUniformLike", {g6.in(DType::kFloat16, Shape{sym("N"), 2})}), "float16[N,2]");
  G g7;
  EXPECT_EQ(infer1(g7, "Bernoulli", {g7.f32({4})}, {{"dtype", ai(9)}}), "bool[4]");
}

TEST(ShapesNN, QuantizedConvMatMulAndConstant) {
  G g;
  EXPECT_EQ(infer1(g, "ConvInteger", {g.in(DType::kUInt8, Shape{1, 3, 8, 8}), g.in(DType::kUInt8, Shape{4, 3, 3, 3})}),
            "int32[1,4,6,6]");
  G g2;
  Value* x = g2.in(DType::kUInt8, Shape{1, 3, 8, 8});
  Value* sc = g2.f32({});
  Value* zp = g2.in(DType::kUInt8, Shape{});
  Value* w = g2.in(DType::kInt8, Shape{4, 3, 3, 3});
  Value* wzp = g2.in(DType::kInt8, Shape{});
  Value* yzp = g2.in(DType::kInt8, Shape{});
  EXPECT_EQ(infer1(g2, "QLinearConv", {x, sc, zp, w, sc, wzp, sc, yzp, g2.in(DType::kInt32, Shape{4})},
                   {{"pads", ais({1, 1, 1, 1})}}),
            "int8[1,4,8,8]");
  G g3;
  Value* a = g3.in(DType::kUInt8, Shape{sym("B"), 5, 6});
  Value* s3 = g3.f32({});
  Value* z3 = g3.in(DType::kUInt8, Shape{});
  EXPECT_EQ(infer1(g3, "QLinearMatMul", {a, s3, z3, g3.in(DType::kUInt8, Shape{6, 2}), s3, z3, s3, z3}), "uint8[B,5,2]");
  G g4;
  Attribute t;
  t.kind = Attribute::Kind::kTensor;
  float vals[6] = {};
  t.t = TensorData::copy_of(DType::kFloat32, {2, 3}, vals, sizeof vals);
  EXPECT_EQ(infer1(g4, "Constant", {}, {{"value", t}}), "float32[2,3]");
  G g5;
  EXPECT_EQ(infer1(g5, "Constant", {}, {{"value_ints", ais({1, 2, 3})}}), "int64[3]");
  G g6;
  EXPECT_ERROR(infer1(g6, "Constant", {}), "exactly one value attribute");
}

TEST(ShapesNN, IndexInputsMustBeIntegers) {
  G g;
  EXPECT_ERROR(infer1(g, "Gather", {g.f32({4, 3}), g.f32({2})}), "indices (input 1) must be int32 or int64, not float32");
  G g2;
  EXPECT_ERROR(infer1(g2, "Reshape", {g2.f32({4, 3}), g2.f32c({12})}), "shape (input 1) must be int32 or int64");
  G g3;
  EXPECT_ERROR(infer1(g3, "Slice", {g3.f32({4, 3}), g3.i64({0}), g3.f32c({2})}), "ends (input 2)");
  G g4;  // int32 indices are fine
  EXPECT_EQ(infer1(g4, "Gather", {g4.f32({4, 3}), g4.in(DType::kInt32, Shape{5})}), "float32[5,3]");
}

TEST(ShapesNN, RecurrentLayers) {
  G g;
  auto y = g.op("LSTM", {g.f32({sym("T"), 4, 16}), g.f32({2, 128, 16}), g.f32({2, 128, 32})},
                {{"hidden_size", ai(32)}, {"direction", as("bidirectional")}}, 3);
  ASSERT_TRUE(g.run().ok()) << g.run().message();
  EXPECT_EQ(y[0]->type.str(), "float32[T,2,4,32]");
  EXPECT_EQ(y[1]->type.str(), "float32[2,4,32]");
  EXPECT_EQ(y[2]->type.str(), "float32[2,4,32]");
  G g2;  // batch-first layout, hidden size from W
  EXPECT_EQ(infer1(g2, "GRU", {g2.f32({4, 7, 16}), g2.f32({1, 24, 16}), g2.f32({1, 24, 8})}, {{"layout", ai(1)}}),
            "float32[4,7,1,8]");
  G g3;
  EXPECT_ERROR(infer1(g3, "RNN", {g3.f32({5, 4, 16}), g3.f32({2, 8, 16}), g3.f32({2, 8, 8})}),
               "has 2 directions; direction 'forward' needs 1");
}

TEST(ShapesNN, SamplingOps) {
  G g;
  EXPECT_EQ(infer1(g, "GridSample", {g.f32({2, 3, 32, 32}), g.f32({2, 10, 12, 2})}), "float32[2,3,10,12]");
  G g2;
  EXPECT_EQ(infer1(g2, "AffineGrid", {g2.f32({2, 2, 3}), g2.i64({2, 3, 5, 6})}), "float32[2,5,6,2]");
  G g3;
  EXPECT_EQ(infer1(g3, "Col2Im", {g3.f32({1, 12, 20}), g3.i64({5, 6}), g3.i64({2, 2})}), "float32[1,3,5,6]");
  G g4;
  EXPECT_EQ(infer1(g4, "CenterCropPad", {g4.f32({20, 10, 3}), g4.i64({12, 14})}, {{"axes", ais({0, 1})}}),
            "float32[12,14,3]");
  G g5;
  EXPECT_EQ(infer1(g5, "MaxUnpool", {g5.f32({1, 1, 2, 2}), g5.in(DType::kInt64, Shape{1, 1, 2, 2})},
                   {{"kernel_shape", ais({2, 2})}, {"strides", ais({2, 2})}}),
            "float32[1,1,4,4]");
  G g6;
  EXPECT_EQ(infer1(g6, "DeformConv", {g6.f32({1, 4, 9, 9}), g6.f32({8, 4, 3, 3}), g6.f32({1, 18, 7, 7})}),
            "float32[1,8,7,7]");
}

// A symbolic batch flowing through a small transformer-style block.
TEST(ShapesNN, SymbolicBatchThroughAttentionBlock) {
  G g(13);
  Value* x = g.f32({sym("B"), sym("S"), 768});
  auto q = g.op("MatMul", {x, g.f32({768, 768})});
  auto r = g.op("Reshape", {q[0], g.i64({0, 0, 12, 64})});
  auto t = g.op("Transpose", {r[0]}, {{"perm", ais({0, 2, 1, 3})}});
  auto kt = g.op("Transpose", {r[0]}, {{"perm", ais({0, 2, 3, 1})}});
  auto s = g.op("MatMul", {t[0], kt[0]});
  auto o = g.op("MatMul", {s[0], t[0]});
  auto back = g.op("Transpose", {o[0]}, {{"perm", ais({0, 2, 1, 3})}});
  auto merged = g.op("Reshape", {back[0], g.i64({0, 0, -1})});
  ASSERT_TRUE(g.run().ok()) << g.run().message();
  EXPECT_EQ(s[0]->type.str(), "float32[B,12,S,S]");
  EXPECT_EQ(merged[0]->type.str(), "float32[B,S,768]");
}

// Hostile attribute and constant values fail cleanly (or stay unknown); run
// under UBSan this also proves the arithmetic is overflow-free.
TEST(ShapesNN, HostileValuesDoNotOverflow) {
  const int64_t big = INT64_MAX;
  G g;
  EXPECT_ERROR(infer1(g, "Tile", {g.f32({1LL << 40, 2}), g.i64({1LL << 40, 1})}), "overflows");
  G g2;
  EXPECT_ERROR(infer1(g2, "Pad", {g2.f32({4, 4}), g2.i64({0, big, 0, big})}), "overflow");
  G g3;
  EXPECT_EQ(infer1(g3, "Slice", {g3.f32({10}), g3.i64({INT64_MAX}), g3.i64({INT64_MIN}), g3.i64({0}), g3.i64({INT64_MIN})}),
            "float32[1]");
  G g4;
  EXPECT_EQ(infer1(g4, "Slice", {g4.f32({10}), g4.i64({0}), g4.i64({INT64_MAX}), g4.i64({0}), g4.i64({INT64_MAX})}),
            "float32[1]");
  G g5;
  EXPECT_EQ(infer1(g5, "Range", {g5.i64({INT64_MIN}, std::vector<int64_t>{}), g5.i64({INT64_MAX}, std::vector<int64_t>{}),
                                 g5.i64({INT64_MAX}, std::vector<int64_t>{})}),
            "int64[3]");
  G g6;
  EXPECT_ERROR(infer1(g6, "Conv", {g6.f32({1, 1, 8, 8}), g6.f32({1, 1, 3, 3})}, {{"dilations", ais({big, 1})}}), "overflows");
  G g7;
  EXPECT_ERROR(infer1(g7, "Conv", {g7.f32({1, 1, 8, 8}), g7.f32({1, 1, 3, 3})}, {{"pads", ais({big, big, 0, 0})}}), "overflow");
  G g8;
  EXPECT_ERROR(infer1(g8, "Reshape", {g8.f32({1LL << 40, 1LL << 40}), g8.i64({-1})}), "overflows");
  G g9;
  EXPECT_ERROR(infer1(g9, "ConvTranspose", {g9.f32({1, 1, 1LL << 40, 8}), g9.f32({1, 1, 3, 3})}, {{"strides", ais({big, 1})}}),
               "overflows");
  G g10;
  EXPECT_ERROR(infer1(g10, "Concat", {g10.f32({big, 2}), g10.f32({big, 2})}, {{"axis", ai(0)}}), "overflows");
  G g11;
  EXPECT_ERROR(infer1(g11, "DepthToSpace", {g11.f32({1, 4, 2, 2})}, {{"blocksize", ai(big)}}), "blocksize");
  G g12(13);
  EXPECT_EQ(infer1(g12, "Resize", {g12.f32({1, 1, 1LL << 40, 2}), nullptr, g12.f32c({1, 1, 1e30f, 1})}), "float32[1,1,?,2]");
}

// Property test: random ranks, dims (unknown, symbolic, huge), constant
// inputs and attribute values never crash a shape function (run it under
// ASan/UBSan), and a successful inference never yields a dim below -1.
TEST(ShapesNN, RandomInputsNeverCrash) {
  const char* kOps[] = {"Conv", "ConvTranspose", "ConvInteger", "DeformConv", "MaxPool", "AveragePool", "LpPool",
                        "GlobalAveragePool", "MatMul", "Gemm", "Einsum", "Reshape", "Flatten", "Squeeze", "Unsqueeze",
                        "Transpose", "Concat", "Split", "Slice", "Gather", "GatherElements", "GatherND",
                        "ScatterElements", "ScatterND", "Expand", "Tile", "Pad", "Shape", "ConstantOfShape", "Range",
                        "OneHot", "NonZero", "Trilu", "DepthToSpace", "SpaceToDepth", "Resize", "Upsample",
                        "NonMaxSuppression", "RoiAlign", "Compress", "ReverseSequence", "EyeLike", "Unique", "LSTM",
                        "GridSample", "AffineGrid", "Col2Im", "CenterCropPad", "MaxUnpool"};
  const int64_t kVals[] = {INT64_MIN, -7, -2, -1, 0, 1, 2, 3, 4, 7, 1LL << 40, INT64_MAX};
  const char* kIntAttrs[] = {"axis", "group", "num_outputs", "blocksize", "batch_dims", "hidden_size", "transA",
                             "allowzero", "ceil_mode", "start", "end", "output_height", "layout", "dtype"};
  const char* kIntsAttrs[] = {"axes", "perm", "pads", "strides", "dilations", "kernel_shape", "split", "starts",
                              "ends", "output_shape", "output_padding", "shape"};
  const char* kStrAttrs[][2] = {{"auto_pad", "SAME_UPPER"}, {"auto_pad", "VALID"}, {"equation", "ij,jk->ik"},
                                {"equation", "...i,i"}, {"mode", "edge"}, {"direction", "bidirectional"},
                                {"keep_aspect_ratio_policy", "not_smaller"}};
  uint64_t state = 12345;
  auto rnd = [&](uint64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>((state >> 33) % n);
  };
  const int kOpsets[] = {0, 7, 9, 10, 11, 13, 18};
  for (int iter = 0; iter < 4000; ++iter) {
    const char* op = kOps[rnd(std::size(kOps))];
    const OpSchema* schema = OpRegistry::instance().find(op, "", 0);
    ASSERT_NE(schema, nullptr) << op;
    G g(kOpsets[rnd(std::size(kOpsets))]);
    const int nin = schema->min_inputs + static_cast<int>(rnd(std::min(schema->max_inputs, 6) - schema->min_inputs + 1));
    std::vector<Value*> ins;
    for (int i = 0; i < nin; ++i) {
      const DType dts[] = {DType::kFloat32, DType::kInt64, DType::kInt32, DType::kBool, DType::kUndefined};
      const DType dt = dts[rnd(5)];
      if (rnd(10) == 0) {
        ins.push_back(i == 0 ? g.in(dt, std::nullopt) : nullptr);
        continue;
      }
      const size_t rank = rnd(6);
      if (dt == DType::kInt64 && rank <= 1 && rnd(2)) {  // a constant
        std::vector<int64_t> data(rank == 0 ? 1 : rnd(6));
        for (int64_t& v : data) v = kVals[rnd(std::size(kVals))];
        ins.push_back(g.i64(data, rank == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{static_cast<int64_t>(data.size())}));
        continue;
      }
      Shape sh;
      for (size_t d = 0; d < rank; ++d) {
        const Dim choices[] = {Dim(0), Dim(1), Dim(2), Dim(3), Dim(5), kU, sym("N"), Dim(1LL << 40), Dim(INT64_MAX)};
        sh.push_back(choices[rnd(std::size(choices))]);
      }
      ins.push_back(g.in(dt, rnd(8) ? std::optional<Shape>(sh) : std::nullopt));
    }
    Attrs attrs;
    for (size_t k = rnd(5); k > 0; --k) {
      switch (rnd(3)) {
        case 0: attrs.push_back({kIntAttrs[rnd(std::size(kIntAttrs))], ai(kVals[rnd(std::size(kVals))])}); break;
        case 1: {
          std::vector<int64_t> v(rnd(7));
          for (int64_t& x : v) x = kVals[rnd(std::size(kVals))];
          attrs.push_back({kIntsAttrs[rnd(std::size(kIntsAttrs))], ais(v)});
          break;
        }
        default: {
          const auto& sa = kStrAttrs[rnd(std::size(kStrAttrs))];
          attrs.push_back({sa[0], as(sa[1])});
        }
      }
    }
    const int nout = std::max(schema->min_outputs, 1) + static_cast<int>(rnd(std::min(schema->max_outputs, 4) - std::max(schema->min_outputs, 1) + 1));
    auto outs = g.op(op, ins, attrs, nout);
    if (!g.run().ok()) continue;
    for (Value* o : outs) {
      if (!o->type.shape) continue;
      for (const Dim& d : *o->type.shape) EXPECT_GE(d.value, -1) << op << " -> " << o->type.str();
    }
  }
}

// Every failing node is reported at once, with the node named.
TEST(ShapesNN, ErrorsNameTheNode) {
  G g;
  g.op("Transpose", {g.f32({2, 3})}, {{"perm", ais({1, 2})}});
  g.op("Conv", {g.f32({1, 3, 8, 8}), g.f32({4, 2, 3, 3})});
  Status st = g.run();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("2 node(s)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("Transpose"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("Conv"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace openacl::graph
