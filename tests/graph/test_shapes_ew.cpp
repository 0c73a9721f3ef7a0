// Shape and dtype inference of the elementwise / reduction / normalisation ops
// (src/graph/ops/ew_*.cpp): one small hand-built graph per case.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph_layer.h"

namespace openacl::graph {
namespace {

using Attrs = std::vector<std::pair<std::string, Attribute>>;

Attribute ai(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}
Attribute af(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}
Attribute ais(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
Attribute as(std::string v) {
  Attribute a;
  a.kind = Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}
Dim S(const char* sym) { return Dim::symbolic(sym); }

constexpr DType F32 = DType::kFloat32;
constexpr DType F16 = DType::kFloat16;
constexpr DType I64 = DType::kInt64;
constexpr DType I32 = DType::kInt32;
constexpr DType I8 = DType::kInt8;
constexpr DType U8 = DType::kUInt8;
constexpr DType BOOL = DType::kBool;

class ew_shapes : public ::testing::Test {
 protected:
  // A graph input of the given type (nullopt shape: unknown rank).
  Value* in(DType t, std::optional<Shape> s) {
    Value* v = g_.add_value("in" + std::to_string(n_++), TensorType{t, std::move(s)});
    g_.inputs().push_back(v);
    v->is_graph_input = true;
    return v;
  }
  // A constant 1-D int64 tensor (or `scalar`: rank 0).
  Value* ints(std::vector<int64_t> v, bool scalar = false) {
    Value* val = g_.add_value("c" + std::to_string(n_++));
    std::vector<int64_t> dims;
    if (!scalar) dims.push_back(static_cast<int64_t>(v.size()));
    val->constant = TensorData::copy_of(I64, dims, v.data(), v.size() * sizeof(int64_t));
    Shape s;
    for (int64_t d : dims) s.push_back(Dim(d));
    val->type = TensorType{I64, s};
    return val;
  }
  Node* op(const std::string& type, std::vector<Value*> inputs, int opset = 0, Attrs attrs = {}, size_t outs = 1) {
    std::vector<Value*> out;
    for (size_t i = 0; i < outs; ++i) out.push_back(g_.add_value(""));
    Node* n = g_.add_node(type + "_" + std::to_string(n_++), type, std::move(inputs), std::move(out), "", opset);
    for (auto& [k, a] : attrs) n->attrs.set(k, a);
    return n;
  }
  void ok() {
    Status st = infer_shapes(g_);
    ASSERT_TRUE(st.ok()) << st.message();
  }
  // Runs inference expecting failure; returns the message.
  std::string err() {
    Status st = infer_shapes(g_);
    EXPECT_FALSE(st.ok());
    return st.message();
  }
  static std::string T(const Node* n, size_t i = 0) { return n->output(i)->type.str(); }
  static bool ranked(const Node* n, size_t i = 0) { return n->output(i)->type.has_rank(); }

  Graph g_;
  int n_ = 0;
};

#define EXPECT_HAS(haystack, needle) EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

// ---------------------------------------------------------------- binary ----

TEST_F(ew_shapes, AddBroadcastsKnownDims) {
  Node* n = op("Add", {in(F32, Shape{2, 3, 4}), in(F32, Shape{4})}, 13);
  Node* m = op("Mul", {in(F32, Shape{2, 1, 4}), in(F32, Shape{3, 1})}, 14);
  Node* s = op("Sub", {in(F32, Shape{}), in(F32, Shape{5})}, 14);
  ok();
  EXPECT_EQ(T(n), "float32[2,3,4]");
  EXPECT_EQ(T(m), "float32[2,3,4]");
  EXPECT_EQ(T(s), "float32[5]");
}

TEST_F(ew_shapes, AddBroadcastsSymbolicDims) {
  Node* a = op("Add", {in(F32, Shape{S("N"), 3, 1}), in(F32, Shape{1, 5})}, 13);
  Node* b = op("Div", {in(F32, Shape{S("N"), 1}), in(F32, Shape{S("N"), 4})}, 13);
  Node* c = op("Add", {in(F32, Shape{S("N")}), in(F32, Shape{S("M")})}, 13);
  Node* d = op("Add", {in(F32, Shape{Dim(), 7}), in(F32, Shape{3, 1})}, 13);
  ok();
  EXPECT_EQ(T(a), "float32[N,3,5]");
  EXPECT_EQ(T(b), "float32[N,4]");
  EXPECT_EQ(T(c), "float32[?]");  // N vs M: unknown, not guessed
  EXPECT_TRUE(ranked(c));
  EXPECT_EQ(T(d), "float32[3,7]");
}

TEST_F(ew_shapes, UntypedFirstInputTakesTheOthersType) {
  Node* a = op("Add", {in(DType::kUndefined, Shape{3}), in(F16, Shape{3})}, 13);
  Node* b = op("Max", {in(DType::kUndefined, Shape{3}), in(I32, Shape{1}), in(I32, Shape{3})}, 13);
  ok();
  EXPECT_EQ(T(a), "float16[3]");
  EXPECT_EQ(T(b), "int32[3]");
}

TEST_F(ew_shapes, AddUnknownRankGivesUnknownRank) {
  Node* n = op("Add", {in(F32, std::nullopt), in(F32, Shape{3})}, 13);
  ok();
  EXPECT_FALSE(ranked(n));
  EXPECT_EQ(n->output(0)->type.dtype, F32);
}

TEST_F(ew_shapes, AddIncompatibleBroadcastFails) {
  op("Add", {in(F32, Shape{2, 3}), in(F32, Shape{4})}, 13);
  const std::string m = err();
  EXPECT_HAS(m, "Add 'Add_2'");
  EXPECT_HAS(m, "do not broadcast");
  EXPECT_HAS(m, "[2,3]");
}

TEST_F(ew_shapes, AddMixedTypesFail) {
  op("Add", {in(F32, Shape{2}), in(I64, Shape{2})}, 13);
  const std::string m = err();
  EXPECT_HAS(m, "float32");
  EXPECT_HAS(m, "int64");
  EXPECT_HAS(m, "same element type");
}

TEST_F(ew_shapes, LegacyBroadcastAttributeBeforeOpset7) {
  Node* a = op("Add", {in(F32, Shape{2, 3, 4, 5}), in(F32, Shape{5})}, 6, {{"broadcast", ai(1)}});
  Node* b = op("Mul", {in(F32, Shape{2, Dim()}), in(F32, Shape{2, 3})}, 6);
  ok();
  EXPECT_EQ(T(a), "float32[2,3,4,5]");
  EXPECT_EQ(T(b), "float32[2,3]");
}

TEST_F(ew_shapes, LegacyNoBroadcastMismatchFails) {
  op("Add", {in(F32, Shape{2, 3}), in(F32, Shape{3})}, 6);
  EXPECT_HAS(err(), "broadcast=0");
}

TEST_F(ew_shapes, PowExponentTypeFreeFromOpset12) {
  Node* n = op("Pow", {in(F32, Shape{3}), in(I64, Shape{})}, 12);
  ok();
  EXPECT_EQ(T(n), "float32[3]");
}

TEST_F(ew_shapes, PowMixedTypesFailBeforeOpset12) {
  op("Pow", {in(F32, Shape{3}), in(I64, Shape{})}, 7);
  EXPECT_HAS(err(), "same element type");
}

TEST_F(ew_shapes, ModNeedsFmodForFloats) {
  Node* n = op("Mod", {in(F32, Shape{3}), in(F32, Shape{3})}, 13, {{"fmod", ai(1)}});
  Node* i = op("Mod", {in(I32, Shape{3}), in(I32, Shape{1})}, 13);
  ok();
  EXPECT_EQ(T(n), "float32[3]");
  EXPECT_EQ(T(i), "int32[3]");
}

TEST_F(ew_shapes, ModFloatWithoutFmodFailsBeforeOpset28) {
  Node* n = op("Mod", {in(F32, Shape{3}), in(F32, Shape{3})}, 28);
  op("Mod", {in(F32, Shape{3}), in(F32, Shape{3})}, 13);
  op("Mod", {in(I32, Shape{3}), in(I32, Shape{3})}, 13, {{"fmod", ai(2)}});
  const std::string m = err();
  EXPECT_HAS(m, "2 node(s)");
  EXPECT_HAS(m, "needs fmod=1 before opset 28");
  EXPECT_HAS(m, "'fmod' must be 0 or 1, got 2");
  EXPECT_EQ(T(n), "float32[3]");
}

TEST_F(ew_shapes, BitShift) {
  Node* n = op("BitShift", {in(U8, Shape{4}), in(U8, Shape{1})}, 11, {{"direction", as("LEFT")}});
  Node* s = op("BitShift", {in(I32, Shape{4}), in(I32, Shape{})}, 28, {{"direction", as("RIGHT")}});
  ok();
  EXPECT_EQ(T(n), "uint8[4]");
  EXPECT_EQ(T(s), "int32[4]");
}

TEST_F(ew_shapes, BitShiftBadDirectionAndSignedTypeFail) {
  op("BitShift", {in(U8, Shape{4}), in(U8, Shape{1})}, 11, {{"direction", as("UP")}});
  op("BitShift", {in(I32, Shape{4}), in(I32, Shape{1})}, 11, {{"direction", as("RIGHT")}});
  const std::string m = err();
  EXPECT_HAS(m, "2 node(s)");
  EXPECT_HAS(m, "\"LEFT\" or \"RIGHT\"");
  EXPECT_HAS(m, "takes unsigned integer inputs at opset 11, got int32");
}

TEST_F(ew_shapes, ComparisonsGiveBool) {
  std::vector<Node*> nodes;
  for (const char* name : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
    nodes.push_back(op(name, {in(I64, Shape{S("B"), 1}), in(I64, Shape{6})}, 13));
  ok();
  for (Node* n : nodes) EXPECT_EQ(T(n), "bool[B,6]") << n->op_type;
}

TEST_F(ew_shapes, ComparisonTypeMismatchFails) {
  op("Less", {in(F32, Shape{2}), in(I32, Shape{2})}, 13);
  EXPECT_HAS(err(), "same element type");
}

TEST_F(ew_shapes, LogicalOpsNeedBool) {
  Node* a = op("And", {in(BOOL, Shape{2, 1}), in(BOOL, Shape{3})}, 7);
  Node* o = op("Or", {in(BOOL, Shape{2}), in(BOOL, Shape{2})}, 7);
  Node* x = op("Xor", {in(BOOL, std::nullopt), in(BOOL, Shape{2})}, 7);
  Node* n = op("Not", {in(BOOL, Shape{S("N")})}, 1);
  ok();
  EXPECT_EQ(T(a), "bool[2,3]");
  EXPECT_EQ(T(o), "bool[2]");
  EXPECT_FALSE(ranked(x));
  EXPECT_EQ(T(n), "bool[N]");
}

TEST_F(ew_shapes, LogicalOnIntsFails) {
  op("And", {in(I32, Shape{2}), in(BOOL, Shape{2})}, 7);
  op("Not", {in(F32, Shape{2})}, 1);
  const std::string m = err();
  EXPECT_HAS(m, "2 node(s)");
  EXPECT_HAS(m, "And 'And_2'");
  EXPECT_HAS(m, "Not 'Not_4'");
  EXPECT_HAS(m, "must be bool");
}

TEST_F(ew_shapes, WhereBroadcastsThreeWays) {
  Node* n = op("Where", {in(BOOL, Shape{S("N"), 1}), in(F16, Shape{1, 4}), in(F16, Shape{3, 1, 1})}, 16);
  ok();
  EXPECT_EQ(T(n), "float16[3,N,4]");
}

TEST_F(ew_shapes, WhereBadConditionAndMismatchFail) {
  op("Where", {in(F32, Shape{2}), in(F32, Shape{2}), in(F32, Shape{2})}, 16);
  op("Where", {in(BOOL, Shape{2}), in(F32, Shape{2}), in(I64, Shape{2})}, 16);
  const std::string m = err();
  EXPECT_HAS(m, "condition (input 0) must be bool, got float32");
  EXPECT_HAS(m, "same element type");
}

TEST_F(ew_shapes, VariadicOpsBroadcastAll) {
  Node* s = op("Sum", {in(F32, Shape{3, 1}), in(F32, Shape{4}), in(F32, Shape{1, 1, 1})}, 13);
  Node* mx = op("Max", {in(I32, Shape{5})}, 13);
  Node* mn = op("Min", {in(F32, Shape{2, S("K")}), in(F32, Shape{1})}, 13);
  Node* me = op("Mean", {in(F32, Shape{2}), in(F32, std::nullopt)}, 13);
  ok();
  EXPECT_EQ(T(s), "float32[1,3,4]");
  EXPECT_EQ(T(mx), "int32[5]");
  EXPECT_EQ(T(mn), "float32[2,K]");
  EXPECT_FALSE(ranked(me));
}

TEST_F(ew_shapes, VariadicErrors) {
  op("Sum", {in(F32, Shape{3}), in(F32, Shape{4})}, 13);
  op("Max", {in(F32, Shape{3}), in(F32, Shape{1})}, 6);  // no broadcasting before opset 8
  op("Min", {in(F32, Shape{3}), in(I32, Shape{3})}, 13);
  const std::string m = err();
  EXPECT_HAS(m, "3 node(s)");
  EXPECT_HAS(m, "do not broadcast");
  EXPECT_HAS(m, "no broadcasting before opset 8");
  EXPECT_HAS(m, "same element type");
}

// ----------------------------------------------------------------- unary ----

TEST_F(ew_shapes, UnaryOpsKeepTypeAndShape) {
  std::vector<Node*> nodes;
  for (const char* name : {"Sqrt", "Reciprocal", "Exp", "Log", "Erf", "Abs", "Neg", "Floor", "Ceil", "Round", "Sign",
                           "Sin", "Cos", "Tan", "Tanh", "Sigmoid", "Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Gelu",
                           "HardSigmoid", "HardSwish", "Mish", "Softplus", "Softsign", "ThresholdedRelu", "Identity",
                           "MeanVarianceNormalization"})
    nodes.push_back(op(name, {in(F16, Shape{S("N"), 3, Dim(), 7})}, 21));
  Node* unk = op("Relu", {in(F32, std::nullopt)}, 14);
  ok();
  for (Node* n : nodes) EXPECT_EQ(T(n), "float16[N,3,?,7]") << n->op_type;
  EXPECT_FALSE(ranked(unk));
  EXPECT_EQ(unk->output(0)->type.dtype, F32);
}

TEST_F(ew_shapes, OpsNewerThanTheModelOpsetAreRefused) {
  op("Gelu", {in(F32, Shape{2})}, 17);
  op("LayerNormalization", {in(F32, Shape{2, 4}), in(F32, Shape{4})}, 16);
  Node* ok_node = op("Gelu", {in(F32, Shape{2})}, 20);
  const std::string m = err();
  EXPECT_HAS(m, "2 node(s)");
  EXPECT_HAS(m, "Gelu 'Gelu_1' (opset 17)");
  EXPECT_HAS(m, "operator not supported");
  EXPECT_EQ(T(ok_node), "float32[2]");
}

TEST_F(ew_shapes, IsNaNIsInfGiveBool) {
  Node* a = op("IsNaN", {in(F32, Shape{2, 3})}, 13);
  Node* b = op("IsInf", {in(F16, Shape{S("N")})}, 10);
  ok();
  EXPECT_EQ(T(a), "bool[2,3]");
  EXPECT_EQ(T(b), "bool[N]");
}

TEST_F(ew_shapes, CastUsesTo) {
  Node* a = op("Cast", {in(F32, Shape{2, S("N")})}, 13, {{"to", ai(7)}});
  Node* b = op("Cast", {in(F32, Shape{3})}, 1, {{"to", as("FLOAT16")}});
  Node* c = op("Cast", {in(I64, std::nullopt)}, 19, {{"to", ai(9)}});
  ok();
  EXPECT_EQ(T(a), "int64[2,N]");
  EXPECT_EQ(T(b), "float16[3]");
  EXPECT_FALSE(ranked(c));
  EXPECT_EQ(c->output(0)->type.dtype, BOOL);
}

TEST_F(ew_shapes, CastBadToFails) {
  op("Cast", {in(F32, Shape{2})}, 13);
  op("Cast", {in(F32, Shape{2})}, 13, {{"to", ai(0)}});
  op("Cast", {in(F32, Shape{2})}, 1, {{"to", as("REAL")}});
  const std::string m = err();
  EXPECT_HAS(m, "3 node(s)");
  EXPECT_HAS(m, "needs attribute 'to'");
  EXPECT_HAS(m, "'to' = 0");
  EXPECT_HAS(m, "\"REAL\"");
}

TEST_F(ew_shapes, CastLikeTakesTargetType) {
  Node* n = op("CastLike", {in(F32, Shape{4, 5}), in(F16, Shape{})}, 15);
  ok();
  EXPECT_EQ(T(n), "float16[4,5]");
}

TEST_F(ew_shapes, DropoutMaskTypeByOpset) {
  Node* d12 = op("Dropout", {in(F32, Shape{S("N"), 8}), in(F32, Shape{}), in(BOOL, Shape{})}, 13, {}, 2);
  Node* d10 = op("Dropout", {in(F32, Shape{2, 8})}, 10, {{"ratio", af(0.1f)}}, 2);
  Node* d7 = op("Dropout", {in(F16, Shape{2, 8})}, 7, {}, 2);
  Node* d1 = op("Dropout", {in(F32, Shape{2})}, 13);
  ok();
  EXPECT_EQ(T(d12, 0), "float32[N,8]");
  EXPECT_EQ(T(d12, 1), "bool[N,8]");
  EXPECT_EQ(T(d10, 1), "bool[2,8]");
  EXPECT_EQ(T(d7, 1), "float16[2,8]");
  EXPECT_EQ(T(d1), "float32[2]");
}

TEST_F(ew_shapes, DropoutRatioInputBeforeOpset12Fails) {
  op("Dropout", {in(F32, Shape{2}), in(F32, Shape{})}, 10);
  EXPECT_HAS(err(), "from opset 12 only");
}

TEST_F(ew_shapes, DropoutThreeOutputsRejected) {
  op("Dropout", {in(F32, Shape{2})}, 13, {}, 3);
  EXPECT_HAS(err(), "takes 1..3 inputs and 1..2 outputs");
}

TEST_F(ew_shapes, ClipAttributesThenInputs) {
  Node* a = op("Clip", {in(F32, Shape{2, 3})}, 6, {{"min", af(0)}, {"max", af(6)}});
  Node* b = op("Clip", {in(F32, Shape{2, 3}), in(F32, Shape{}), in(F32, Shape{})}, 13);
  Node* c = op("Clip", {in(I32, Shape{4}), nullptr, in(I32, Shape{})}, 13);
  ok();
  EXPECT_EQ(T(a), "float32[2,3]");
  EXPECT_EQ(T(b), "float32[2,3]");
  EXPECT_EQ(T(c), "int32[4]");
}

TEST_F(ew_shapes, ClipErrors) {
  op("Clip", {in(F32, Shape{2}), in(F32, Shape{})}, 6);
  op("Clip", {in(F32, Shape{2}), in(F16, Shape{})}, 13);
  const std::string m = err();
  EXPECT_HAS(m, "from opset 11 only");
  EXPECT_HAS(m, "same element type");
}

TEST_F(ew_shapes, PReluSlopeBroadcastsOntoX) {
  Node* a = op("PRelu", {in(F32, Shape{S("N"), 3, 8, 8}), in(F32, Shape{3, 1, 1})}, 16);
  Node* b = op("PRelu", {in(F32, Shape{S("N"), 3}), in(F32, Shape{1})}, 16);
  ok();
  EXPECT_EQ(T(a), "float32[N,3,8,8]");
  EXPECT_EQ(T(b), "float32[N,3]");
}

TEST_F(ew_shapes, PReluBadSlopeFails) {
  op("PRelu", {in(F32, Shape{2, 3}), in(F32, Shape{4})}, 16);
  op("PRelu", {in(F32, Shape{3}), in(F32, Shape{2, 3})}, 16);
  const std::string m = err();
  EXPECT_HAS(m, "2 node(s)");
  EXPECT_HAS(m, "slope of shape [4] does not broadcast to X of shape [2,3]");
  EXPECT_HAS(m, "slope of shape [2,3] does not broadcast");
}

// --------------------------------------------------------------- softmax ----

TEST_F(ew_shapes, SoftmaxAxisRulesByOpset) {
  Node* a = op("Softmax", {in(F32, Shape{2, 3})}, 9, {{"axis", ai(2)}});  // coerced: [6, 1]
  Node* b = op("LogSoftmax", {in(F32, Shape{S("B"), 5})}, 13);
  Node* c = op("Hardmax", {in(F32, Shape{7})}, 9);  // default axis 1 on rank 1
  Node* e = op("Softmax", {in(F32, Shape{2, 3, 4})}, 11, {{"axis", ai(-3)}});
  Node* d = op("Softmax", {in(F32, std::nullopt)}, 13, {{"axis", ai(5)}});
  ok();
  EXPECT_EQ(T(a), "float32[2,3]");
  EXPECT_EQ(T(b), "float32[B,5]");
  EXPECT_EQ(T(c), "float32[7]");
  EXPECT_FALSE(ranked(d));
  EXPECT_EQ(T(e), "float32[2,3,4]");
}

TEST_F(ew_shapes, SoftmaxAxisOutOfRangeFails) {
  op("Softmax", {in(F32, Shape{2, 3})}, 13, {{"axis", ai(2)}});
  op("LogSoftmax", {in(F32, Shape{2, 3})}, 9, {{"axis", ai(3)}});
  op("Hardmax", {in(F32, Shape{2, 3})}, 13, {{"axis", ai(-3)}});
  op("Softmax", {in(F32, Shape{7})}, 11);  // default axis 1 is out of range on rank 1 from opset 11
  const std::string m = err();
  EXPECT_HAS(m, "4 node(s)");
  EXPECT_HAS(m, "axis 2 is out of range for rank 2 (valid: [-2, 1] at opset 13)");
  EXPECT_HAS(m, "axis 3 is out of range for rank 2 (valid: [-2, 2] at opset 9)");
  EXPECT_HAS(m, "axis 1 is out of range for rank 1 (valid: [-1, 0] at opset 11)");
  EXPECT_HAS(m, "axis -3 is out of range");
}

// ------------------------------------------------------------ reductions ----

TEST_F(ew_shapes, ReduceAxesAttributeBeforeOpset18) {
  Node* a = op("ReduceMean", {in(F32, Shape{S("N"), 3, 4})}, 11, {{"axes", ais({-1})}});
  Node* b = op("ReduceMax", {in(F32, Shape{S("N"), 3, 4})}, 13, {{"axes", ais({0, 2})}, {"keepdims", ai(0)}});
  Node* c = op("ReduceSum", {in(I64, Shape{2, 3})}, 11, {{"axes", ais({1})}});
  ok();
  EXPECT_EQ(T(a), "float32[N,3,1]");
  EXPECT_EQ(T(b), "float32[3]");
  EXPECT_EQ(T(c), "int64[2,1]");
}

TEST_F(ew_shapes, ReduceAxesInputFromOpset13ForSumAnd18ForOthers) {
  Node* a = op("ReduceSum", {in(F32, Shape{2, 3, 4}), ints({1})}, 13);
  Node* b = op("ReduceMean", {in(F32, Shape{2, 3, 4}), ints({-1, 0})}, 18, {{"keepdims", ai(0)}});
  Node* c = op("ReduceL2", {in(F32, Shape{2, 3, 4}), ints({2})}, 18);
  ok();
  EXPECT_EQ(T(a), "float32[2,1,4]");
  EXPECT_EQ(T(b), "float32[3]");
  EXPECT_EQ(T(c), "float32[2,3,1]");
}

TEST_F(ew_shapes, ReduceAxesInputTooEarlyFails) {
  op("ReduceSum", {in(F32, Shape{2, 3}), ints({1})}, 12);
  op("ReduceMax", {in(F32, Shape{2, 3}), ints({1})}, 17);
  op("ReduceMean", {in(F32, Shape{2, 3})}, 18, {{"axes", ais({1})}});
  const std::string m = err();
  EXPECT_HAS(m, "3 node(s)");
  EXPECT_HAS(m, "the 'axes' attribute is not allowed at opset 18");
  EXPECT_HAS(m, "ReduceSum takes axes as an input from opset 13 only");
  EXPECT_HAS(m, "ReduceMax takes axes as an input from opset 18 only");
}

TEST_F(ew_shapes, ReduceEmptyAxesReducesAllOrNothing) {
  Node* all_keep = op("ReduceSum", {in(F32, Shape{2, 3})}, 13);
  Node* all_drop = op("ReduceProd", {in(F32, Shape{2, 3})}, 18, {{"keepdims", ai(0)}});
  Node* noop = op("ReduceSum", {in(F32, Shape{2, 3}), ints({})}, 13, {{"noop_with_empty_axes", ai(1)}});
  Node* unk_drop = op("ReduceMin", {in(F32, std::nullopt)}, 11, {{"keepdims", ai(0)}});
  Node* unk_keep = op("ReduceMin", {in(F32, std::nullopt)}, 11);
  Node* noop_old = op("ReduceMean", {in(F32, Shape{2, 3})}, 13, {{"noop_with_empty_axes", ai(1)}});
  ok();
  EXPECT_EQ(T(all_keep), "float32[1,1]");
  EXPECT_EQ(T(all_drop), "float32[]");
  EXPECT_EQ(T(noop), "float32[2,3]");
  EXPECT_EQ(T(unk_drop), "float32[]");
  EXPECT_FALSE(ranked(unk_keep));
  EXPECT_EQ(T(noop_old), "float32[1,1]");  // no such attribute before opset 18
}

TEST_F(ew_shapes, ReduceNonConstantAxes) {
  Node* keep = op("ReduceSum", {in(F32, Shape{S("N"), 1, 4}), in(I64, Shape{1})}, 13);
  Node* drop = op("ReduceLogSumExp", {in(F32, Shape{S("N"), 1, 4}), in(I64, Shape{1})}, 18, {{"keepdims", ai(0)}});
  Node* empty = op("ReduceSum", {in(F32, Shape{2, 3}), in(I64, Shape{0})}, 13, {{"noop_with_empty_axes", ai(1)}});
  ok();
  EXPECT_EQ(T(keep), "float32[?,1,?]");
  EXPECT_FALSE(ranked(drop));
  EXPECT_EQ(drop->output(0)->type.dtype, F32);
  EXPECT_EQ(T(empty), "float32[2,3]");
}

TEST_F(ew_shapes, ReduceUnknownRankWithAxes) {
  Node* n = op("ReduceMean", {in(F32, std::nullopt)}, 13, {{"axes", ais({1})}});
  ok();
  EXPECT_FALSE(ranked(n));
}

TEST_F(ew_shapes, EveryReduceOp) {
  std::vector<Node*> nodes;
  for (const char* name : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    nodes.push_back(op(name, {in(F32, Shape{S("B"), 16, 9})}, 11, {{"axes", ais({1})}, {"keepdims", ai(0)}}));
  ok();
  for (Node* n : nodes) EXPECT_EQ(T(n), "float32[B,9]") << n->op_type;
}

TEST_F(ew_shapes, ReduceAxisOutOfRangeFails) {
  op("ReduceSum", {in(F32, Shape{2, 3, 4}), ints({3})}, 13);
  op("ReduceL1", {in(F32, Shape{2, 3, 4})}, 11, {{"axes", ais({-4})}});
  const std::string m = err();
  EXPECT_HAS(m, "axis 3 is out of range for rank 3 (valid: [-3, 2])");
  EXPECT_HAS(m, "axis -4 is out of range for rank 3");
}

TEST_F(ew_shapes, ArgMaxArgMin) {
  Node* a = op("ArgMax", {in(F32, Shape{S("N"), 10})}, 13, {{"axis", ai(1)}});
  Node* b = op("ArgMin", {in(F16, Shape{S("N"), 10})}, 13, {{"axis", ai(-1)}, {"keepdims", ai(0)}});
  Node* c = op("ArgMax", {in(F32, Shape{4, 5})}, 12, {{"select_last_index", ai(1)}});
  Node* d = op("ArgMax", {in(F32, std::nullopt)}, 13);
  ok();
  EXPECT_EQ(T(a), "int64[N,1]");
  EXPECT_EQ(T(b), "int64[N]");
  EXPECT_EQ(T(c), "int64[1,5]");
  EXPECT_FALSE(ranked(d));
  EXPECT_EQ(d->output(0)->type.dtype, I64);
}

TEST_F(ew_shapes, ArgMaxAxisOutOfRangeFails) {
  op("ArgMax", {in(F32, Shape{4, 5})}, 13, {{"axis", ai(2)}});
  EXPECT_HAS(err(), "axis 2 is out of range for rank 2");
}

TEST_F(ew_shapes, TopKFromAttributeThenInput) {
  Node* a = op("TopK", {in(F32, Shape{5, 10})}, 1, {{"k", ai(3)}}, 2);
  Node* b = op("TopK", {in(F32, Shape{5, 10}), ints({2})}, 11, {{"axis", ai(0)}}, 2);
  Node* c = op("TopK", {in(F16, Shape{S("N"), 10}), in(I64, Shape{1})}, 11, {}, 2);
  ok();
  EXPECT_EQ(T(a, 0), "float32[5,3]");
  EXPECT_EQ(T(a, 1), "int64[5,3]");
  EXPECT_EQ(T(b, 0), "float32[2,10]");
  EXPECT_EQ(T(b, 1), "int64[2,10]");
  EXPECT_EQ(T(c, 0), "float16[N,?]");
  EXPECT_EQ(T(c, 1), "int64[N,?]");
}

TEST_F(ew_shapes, TopKErrors) {
  op("TopK", {in(F32, Shape{5, 10})}, 1, {}, 2);
  op("TopK", {in(F32, Shape{5, 10})}, 11, {}, 2);
  op("TopK", {in(F32, Shape{5, 10}), ints({11})}, 11, {}, 2);
  op("TopK", {in(F32, Shape{5, 10}), ints({1})}, 11, {{"axis", ai(2)}}, 2);
  op("TopK", {in(F32, Shape{5, 10}), ints({1})}, 1, {{"k", ai(1)}}, 2);
  const std::string m = err();
  EXPECT_HAS(m, "5 node(s)");
  EXPECT_HAS(m, "needs attribute 'k'");
  EXPECT_HAS(m, "needs input K");
  EXPECT_HAS(m, "k = 11 is larger than dim 1");
  EXPECT_HAS(m, "axis 2 is out of range");
  EXPECT_HAS(m, "K as an input from opset 10 only");
}

TEST_F(ew_shapes, CumSum) {
  Node* a = op("CumSum", {in(F32, Shape{2, 3}), ints({1}, true)}, 14);
  Node* b = op("CumSum", {in(I64, Shape{S("N")}), in(I32, Shape{})}, 14);
  ok();
  EXPECT_EQ(T(a), "float32[2,3]");
  EXPECT_EQ(T(b), "int64[N]");
}

TEST_F(ew_shapes, CumSumBadAxisFails) {
  op("CumSum", {in(F32, Shape{2, 3}), ints({2}, true)}, 14);
  op("CumSum", {in(F32, Shape{2, 3}), in(F32, Shape{})}, 14);
  const std::string m = err();
  EXPECT_HAS(m, "axis 2 is out of range for rank 2");
  EXPECT_HAS(m, "must be int32 or int64");
}

// --------------------------------------------------------- normalisation ----

TEST_F(ew_shapes, BatchNormalizationOutputs) {
  auto c = [&](int64_t n) { return in(F32, Shape{n}); };
  Node* a = op("BatchNormalization", {in(F32, Shape{S("N"), 3, 8, 8}), c(3), c(3), c(3), c(3)}, 15);
  Node* b = op("BatchNormalization", {in(F32, Shape{S("N"), 3, 8, 8}), c(3), c(3), c(3), c(3)}, 15,
               {{"training_mode", ai(1)}}, 3);
  Node* d = op("BatchNormalization", {in(F32, Shape{2, 4}), c(4), c(4), c(4), c(4)}, 9, {}, 5);
  ok();
  EXPECT_EQ(T(a), "float32[N,3,8,8]");
  EXPECT_EQ(T(b, 1), "float32[3]");
  EXPECT_EQ(T(b, 2), "float32[3]");
  EXPECT_EQ(T(d, 4), "float32[4]");
}

TEST_F(ew_shapes, BatchNormalizationErrors) {
  auto c = [&](int64_t n) { return in(F32, Shape{n}); };
  op("BatchNormalization", {in(F32, Shape{2, 3, 4}), c(4), c(3), c(3), c(3)}, 15);
  op("BatchNormalization", {in(F32, Shape{2, 3}), c(3), c(3), c(3), c(3)}, 14, {}, 5);
  op("BatchNormalization", {in(F32, Shape{3}), c(3), c(3), c(3), c(3)}, 15);
  const std::string m = err();
  EXPECT_HAS(m, "scale (input 1) has 4 elements but X has 3 channels");
  EXPECT_HAS(m, "at most 3 outputs from opset 14");
  EXPECT_HAS(m, "rank >= 2");
}

TEST_F(ew_shapes, InstanceNormalization) {
  Node* a = op("InstanceNormalization", {in(F32, Shape{1, 16, S("H"), S("W")}), in(F32, Shape{16}), in(F32, Shape{16})},
               6);
  ok();
  EXPECT_EQ(T(a), "float32[1,16,H,W]");
}

TEST_F(ew_shapes, LayerNormalizationStatsShape) {
  Node* a = op("LayerNormalization", {in(F32, Shape{S("B"), S("S"), 768}), in(F32, Shape{768}), in(F32, Shape{768})},
               17, {}, 3);
  Node* b = op("LayerNormalization", {in(F16, Shape{2, 5, 6}), in(F16, Shape{5, 6})}, 17, {{"axis", ai(1)}}, 3);
  Node* c = op("LayerNormalization", {in(F32, std::nullopt), in(F32, Shape{4})}, 17, {}, 2);
  ok();
  EXPECT_EQ(T(a, 0), "float32[B,S,768]");
  EXPECT_EQ(T(a, 1), "float32[B,S,1]");
  EXPECT_EQ(T(a, 2), "float32[B,S,1]");
  EXPECT_EQ(T(b, 0), "float16[2,5,6]");
  EXPECT_EQ(T(b, 1), "float32[2,1,1]");  // stash_type float32
  EXPECT_FALSE(ranked(c, 1));
}

TEST_F(ew_shapes, OmittedOptionalOutputsAreSkipped) {
  Value* y = g_.add_value("y");
  Value* inv = g_.add_value("inv");
  g_.add_node("ln", "LayerNormalization", {in(F32, Shape{2, 4}), in(F32, Shape{4})}, {y, nullptr, inv}, "", 17);
  Value* d = g_.add_value("d");
  g_.add_node("drop", "Dropout", {in(F32, Shape{3})}, {d, nullptr}, "", 13);
  ok();
  EXPECT_EQ(y->type.str(), "float32[2,4]");
  EXPECT_EQ(inv->type.str(), "float32[2,1]");
  EXPECT_EQ(d->type.str(), "float32[3]");
}

TEST_F(ew_shapes, LayerNormalizationAxisOutOfRangeFails) {
  op("LayerNormalization", {in(F32, Shape{2, 4}), in(F32, Shape{4})}, 17, {{"axis", ai(2)}});
  EXPECT_HAS(err(), "axis 2 is out of range for rank 2");
}

TEST_F(ew_shapes, GroupNormalization) {
  Node* a = op("GroupNormalization", {in(F32, Shape{2, 64, 8, 8}), in(F32, Shape{32}), in(F32, Shape{32})}, 18,
               {{"num_groups", ai(32)}});
  Node* b = op("GroupNormalization", {in(F32, Shape{2, 64, 8}), in(F32, Shape{64}), in(F32, Shape{64})}, 21,
               {{"num_groups", ai(8)}});
  ok();
  EXPECT_EQ(T(a), "float32[2,64,8,8]");
  EXPECT_EQ(T(b), "float32[2,64,8]");
}

TEST_F(ew_shapes, GroupNormalizationErrors) {
  op("GroupNormalization", {in(F32, Shape{2, 30, 8}), in(F32, Shape{4}), in(F32, Shape{4})}, 18,
     {{"num_groups", ai(4)}});
  op("GroupNormalization", {in(F32, Shape{2, 32, 8}), in(F32, Shape{4}), in(F32, Shape{4})}, 18);
  op("GroupNormalization", {in(F32, Shape{2, 32, 8}), in(F32, Shape{4}), in(F32, Shape{4})}, 21,
     {{"num_groups", ai(4)}});
  const std::string m = err();
  EXPECT_HAS(m, "not divisible by num_groups 4");
  EXPECT_HAS(m, "needs attribute 'num_groups'");
  EXPECT_HAS(m, "scale (input 1) has 4 elements but X has 32 channels");
}

TEST_F(ew_shapes, LRN) {
  Node* a = op("LRN", {in(F32, Shape{1, 96, 55, 55})}, 13, {{"size", ai(5)}});
  op("LRN", {in(F32, Shape{1, 96, 55, 55})}, 13);
  const std::string m = err();
  EXPECT_HAS(m, "LRN needs attribute 'size'");
  EXPECT_EQ(T(a), "float32[1,96,55,55]");
}

TEST_F(ew_shapes, MeanVarianceNormalizationAxes) {
  Node* a = op("MeanVarianceNormalization", {in(F32, Shape{2, 3, 4})}, 13, {{"axes", ais({1, 2})}});
  op("MeanVarianceNormalization", {in(F32, Shape{2, 3, 4})}, 13);  // default axes [0,2,3]
  const std::string m = err();
  EXPECT_HAS(m, "axis 3 is out of range for rank 3");
  EXPECT_EQ(T(a), "float32[2,3,4]");
}

// ------------------------------------------------------------- quantise ----

TEST_F(ew_shapes, QuantizeLinearOutputType) {
  Node* a = op("QuantizeLinear", {in(F32, Shape{S("N"), 8}), in(F32, Shape{}), in(I8, Shape{})}, 13);
  Node* b = op("QuantizeLinear", {in(F32, Shape{4}), in(F32, Shape{})}, 10);
  Node* c = op("QuantizeLinear", {in(F32, Shape{4}), in(F32, Shape{})}, 21, {{"output_dtype", ai(3)}});
  Node* d = op("QuantizeLinear", {in(F32, Shape{64, 3, 3, 3}), in(F32, Shape{64}), in(U8, Shape{64})}, 13,
               {{"axis", ai(0)}});
  ok();
  EXPECT_EQ(T(a), "int8[N,8]");
  EXPECT_EQ(T(b), "uint8[4]");
  EXPECT_EQ(T(c), "int8[4]");
  EXPECT_EQ(T(d), "uint8[64,3,3,3]");
}

TEST_F(ew_shapes, DequantizeLinearOutputType) {
  Node* a = op("DequantizeLinear", {in(I8, Shape{4, 5}), in(F32, Shape{}), in(I8, Shape{})}, 10);
  Node* b = op("DequantizeLinear", {in(U8, Shape{4, 5}), in(F16, Shape{})}, 19);
  Node* c = op("DequantizeLinear", {in(I8, Shape{4, 5}), in(F32, Shape{5})}, 13, {{"axis", ai(1)}});
  ok();
  EXPECT_EQ(T(a), "float32[4,5]");
  EXPECT_EQ(T(b), "float16[4,5]");
  EXPECT_EQ(T(c), "float32[4,5]");
}

TEST_F(ew_shapes, QuantErrors) {
  op("QuantizeLinear", {in(F32, Shape{64, 3}), in(F32, Shape{5})}, 13, {{"axis", ai(0)}});
  op("QuantizeLinear", {in(F32, Shape{64, 3}), in(F32, Shape{64})}, 10);
  op("QuantizeLinear", {in(F32, Shape{4}), in(F32, Shape{}), in(U8, Shape{})}, 21, {{"output_dtype", ai(3)}});
  op("DequantizeLinear", {in(I8, Shape{4}), in(F32, Shape{}), in(U8, Shape{})}, 13);
  op("DequantizeLinear", {in(I8, Shape{4, 5}), in(F32, Shape{5})}, 13, {{"axis", ai(2)}});
  const std::string m = err();
  EXPECT_HAS(m, "5 node(s)");
  EXPECT_HAS(m, "per-axis scale has 5 elements but X[64,3] has 64 at axis 0");
  EXPECT_HAS(m, "scale must be a scalar before opset 13");
  EXPECT_HAS(m, "output_dtype int8 differs from y_zero_point's type uint8");
  EXPECT_HAS(m, "input 0 is int8 but input 2 is uint8");
  EXPECT_HAS(m, "axis 2 is out of range for rank 2");
}

// ------------------------------------------------------ graphs, opset 0 ----

TEST_F(ew_shapes, GeluApproximateValidated) {
  Node* a = op("Gelu", {in(F32, Shape{2})}, 20, {{"approximate", as("tanh")}});
  op("Gelu", {in(F32, Shape{2})}, 20, {{"approximate", as("erf")}});
  EXPECT_HAS(err(), "\"none\" or \"tanh\", got \"erf\"");
  EXPECT_EQ(T(a), "float32[2]");
}

// A node without an opset (aclopInferShape on a bare op) gets the newest rules.
TEST_F(ew_shapes, OpsetZeroMeansNewest) {
  Node* r = op("ReduceMean", {in(F32, Shape{2, 3, 4}), ints({1})}, 0, {{"keepdims", ai(0)}});
  Node* s = op("Softmax", {in(F32, Shape{7})}, 0);
  Node* d = op("DequantizeLinear", {in(I8, Shape{4}), in(F16, Shape{})}, 0);
  ok();
  EXPECT_EQ(T(r), "float32[2,4]");
  EXPECT_EQ(T(s), "float32[7]");
  EXPECT_EQ(T(d), "float16[4]");
}

// A decomposed LayerNorm as exporters write it: types and symbolic dims flow
// through the chain.
TEST_F(ew_shapes, DecomposedLayerNormChain) {
  Value* x = in(F32, Shape{S("batch"), S("seq"), 768});
  Node* mean = op("ReduceMean", {x}, 13, {{"axes", ais({-1})}});
  Node* sub = op("Sub", {x, mean->output(0)}, 13);
  Node* sq = op("Pow", {sub->output(0), in(F32, Shape{})}, 13);
  Node* var = op("ReduceMean", {sq->output(0)}, 13, {{"axes", ais({-1})}});
  Node* add = op("Add", {var->output(0), in(F32, Shape{})}, 13);
  Node* sd = op("Sqrt", {add->output(0)}, 13);
  Node* div = op("Div", {sub->output(0), sd->output(0)}, 13);
  Node* mask = op("Greater", {div->output(0), in(F32, Shape{768})}, 13);
  Node* cast = op("Cast", {mask->output(0)}, 13, {{"to", ai(1)}});
  ok();
  EXPECT_EQ(T(mean), "float32[batch,seq,1]");
  EXPECT_EQ(T(sub), "float32[batch,seq,768]");
  EXPECT_EQ(T(sd), "float32[batch,seq,1]");
  EXPECT_EQ(T(div), "float32[batch,seq,768]");
  EXPECT_EQ(T(mask), "bool[batch,seq,768]");
  EXPECT_EQ(T(cast), "float32[batch,seq,768]");
}

// ------------------------------------------------------------- registry ----

TEST_F(ew_shapes, BitwiseOpsBroadcastAndNeedOpset18) {
  Graph g;
  g.opsets()[""] = 18;
  Value* a = g.add_value("a", {DType::kInt32, Shape{4, 1}});
  Value* b = g.add_value("b", {DType::kInt32, Shape{3}});
  Value* y = g.add_value("y");
  g.add_node("and", "BitwiseAnd", {a, b}, {y}, "", 18);
  ASSERT_TRUE(infer_shapes(g).ok());
  EXPECT_EQ(y->type.str(), "int32[4,3]");
  Graph old;
  Value* c = old.add_value("c", {DType::kInt32, Shape{4}});
  Value* z = old.add_value("z");
  old.add_node("not", "BitwiseNot", {c}, {z}, "", 17);
  Status st = infer_shapes(old);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("operator not supported"), std::string::npos) << st.message();
}

TEST_F(ew_shapes, EveryOpIsRegistered) {
  for (const char* name :
       {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "BitShift", "Sum", "Mean", "Min", "Max", "Where", "Equal", "Less",
        "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Not", "Xor", "Sqrt", "Reciprocal", "Exp", "Log", "Erf",
        "Abs", "Neg", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Tanh", "Sigmoid", "Relu", "LeakyRelu",
        "PRelu", "Elu", "Selu", "Celu", "Gelu", "HardSigmoid", "HardSwish", "Mish", "Softplus", "Softsign",
        "ThresholdedRelu", "Clip", "IsNaN", "IsInf", "Identity", "Dropout", "Cast", "CastLike", "Softmax", "LogSoftmax",
        "Hardmax", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
        "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "TopK", "CumSum", "BatchNormalization",
        "InstanceNormalization", "LayerNormalization", "GroupNormalization", "LRN", "MeanVarianceNormalization",
        "QuantizeLinear", "DequantizeLinear", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
        "Shrink", "BitwiseNot", "BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    int count = 0;
    for (const OpSchema* s : OpRegistry::instance().all())
      if (s->op_type == name && s->domain.empty()) ++count;
    EXPECT_EQ(count, 1) << name;
  }
}

}  // namespace
}  // namespace openacl::graph
