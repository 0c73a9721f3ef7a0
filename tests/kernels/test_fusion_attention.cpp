// Scaled dot-product attention written out per head, as exporters emit it
// (graph::fuse_attention, then graph::fuse_attention_split where q, k and v
// are one Split of a packed input): the fused model (one Attention node, run by the
// kernel's sgemm path) must give what the unfused one gives, and the pass
// must leave alone what is not exactly that pattern.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "fusion_test_util.h"
#include "graph/passes.h"

namespace openacl::model {
namespace {

using graph::DType;
using graph::Graph;
using graph::Value;

constexpr int64_t kB = 2, kH = 3, kD = 4;

enum class Scale { kNone, kDiv, kMul };
enum class Mask { kNone, kPerKey, kPerBatchKey, kFull, kKeyBroadcast };
// q, k, v as three inputs, or as the parts of one Split of a packed
// [B, S, 3 * H * D] input (graph::fuse_attention_split), also with k read
// by something else (a graph output: the Split stays).
enum class Qkv { kSeparate, kPacked, kPackedKRead };

struct Case {
  const char* name;
  int64_t sq, skv;       // query and key lengths (cross-attention when they differ)
  Scale scale;
  Mask mask;
  bool mask_first;       // Add(mask, scores)
  bool two_transposes;   // Kt = Transpose(Transpose(k, 0 2 1 3), 0 1 3 2)
  bool scores_output;    // the scores are also a graph output: left alone
  bool masked_row;       // one query row masked with -inf everywhere
  size_t nodes_fused;    // expected nodes after compile with folding
  Qkv qkv = Qkv::kSeparate;  // packed: sq == skv
};

using fusion_test::ints;
using fusion_test::i64_constant;
using fusion_test::f32_scalar;
std::vector<int64_t> mask_dims(const Case& k) {
  switch (k.mask) {
    case Mask::kPerKey: return {k.skv};
    case Mask::kPerBatchKey: return {kB, 1, 1, k.skv};
    case Mask::kFull: return {kB, kH, k.sq, k.skv};
    case Mask::kKeyBroadcast: return {kB, 1, k.sq, 1};
    case Mask::kNone: break;
  }
  return {};
}

fusion_test::Result run(const Case& k, bool fold) {
  auto gp = std::make_shared<Graph>();
  Graph& g = *gp;
  g.opsets()[""] = 17;
  auto input = [&](const char* name, const std::vector<int64_t>& dims) { return fusion_test::input(g, name, dims); };
  auto node = [&](const char* op, std::vector<Value*> ins, const std::string& out_name) {
    Value* out = g.add_value(out_name);
    return std::make_pair(g.add_node(out_name, op, std::move(ins), {out}, "", 17), out);
  };
  auto transpose = [&](Value* x, std::vector<int64_t> perm, const std::string& out_name) {
    auto [n, out] = node("Transpose", {x}, out_name);
    n->attrs.set("perm", ints(std::move(perm)));
    return out;
  };
  Value *q, *kk, *v;
  if (k.qkv == Qkv::kSeparate) {
    q = input("q", {kB, k.sq, kH * kD});
    kk = input("k", {kB, k.skv, kH * kD});
    v = input("v", {kB, k.skv, kH * kD});
  } else {
    q = g.add_value("q"), kk = g.add_value("k"), v = g.add_value("v");
    g.add_node("split", "Split",
               {input("qkv", {kB, k.sq, 3 * kH * kD}), i64_constant(g, "parts", {kH * kD, kH * kD, kH * kD})},
               {q, kk, v}, "", 17)
        ->attrs.set("axis", [] {
          graph::Attribute a;
          a.kind = graph::Attribute::Kind::kInt;
          a.i = -1;
          return a;
        }());
  }
  Value* mask = k.mask == Mask::kNone ? nullptr : input("mask", mask_dims(k));
  auto heads = [&](Value* x, int64_t s, const std::string& name) {
    return node("Reshape", {x, i64_constant(g, name + "_shape", {kB, s, kH, kD})}, name + "_heads").second;
  };
  Value* qh = transpose(heads(q, k.sq, "q"), {0, 2, 1, 3}, "qh");
  Value* kt = k.two_transposes ? transpose(transpose(heads(kk, k.skv, "k"), {0, 2, 1, 3}, "kh"), {0, 1, 3, 2}, "kt")
                               : transpose(heads(kk, k.skv, "k"), {0, 2, 3, 1}, "kt");
  Value* vh = transpose(heads(v, k.skv, "v"), {0, 2, 1, 3}, "vh");
  Value* s = node("MatMul", {qh, kt}, "scores").second;
  Value* scores = s;
  if (k.scale == Scale::kDiv) s = node("Div", {s, f32_scalar(g, "sqrt_d", 2.f)}, "scaled").second;
  if (k.scale == Scale::kMul) s = node("Mul", {f32_scalar(g, "inv_sqrt_d", 0.5f), s}, "scaled").second;
  if (mask) s = node("Add", k.mask_first ? std::vector<Value*>{mask, s} : std::vector<Value*>{s, mask}, "masked").second;
  auto [sm, p] = node("Softmax", {s}, "probs");
  sm->attrs.set("axis", [] {
    graph::Attribute a;
    a.kind = graph::Attribute::Kind::kInt;
    a.i = -1;
    return a;
  }());
  Value* ctx = transpose(node("MatMul", {p, vh}, "context").second, {0, 2, 1, 3}, "context_t");
  Value* y = node("Reshape", {ctx, i64_constant(g, "y_shape", {kB, k.sq, kH * kD})}, "y").second;
  y->is_graph_output = true;
  g.outputs().push_back(y);
  if (k.scores_output) {
    scores->is_graph_output = true;
    g.outputs().push_back(scores);
  }
  if (k.qkv == Qkv::kPackedKRead) {
    kk->is_graph_output = true;
    g.outputs().push_back(kk);
  }
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto random = [&](std::vector<int64_t> dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> x(static_cast<size_t>(n));
    for (float& e : x) e = nd(rng);
    return x;
  };
  std::vector<float> qv = random({kB, k.sq, kH * kD}), kv = random({kB, k.skv, kH * kD}),
                     vv = random({kB, k.skv, kH * kD}), mv;
  std::vector<kernels::Tensor> in = {{DType::kFloat32, {kB, k.sq, kH * kD}, qv.data()},
                                     {DType::kFloat32, {kB, k.skv, kH * kD}, kv.data()},
                                     {DType::kFloat32, {kB, k.skv, kH * kD}, vv.data()}};
  std::vector<float> packed;  // each row q | k | v
  if (k.qkv != Qkv::kSeparate) {
    for (int64_t r = 0; r < kB * k.sq; ++r)
      for (const std::vector<float>* part : {&qv, &kv, &vv})
        packed.insert(packed.end(), part->begin() + r * kH * kD, part->begin() + (r + 1) * kH * kD);
    in = {{DType::kFloat32, {kB, k.sq, 3 * kH * kD}, packed.data()}};
  }
  if (mask) {
    mv = random(mask_dims(k));
    for (size_t i = 0; i < mv.size(); i += 3) mv[i] = -10000.f;  // some keys masked, as BERT's padding
    if (k.masked_row) std::fill(mv.begin(), mv.begin() + k.skv, -INFINITY);
    in.push_back({DType::kFloat32, mask_dims(k), mv.data()});
  }
  return fusion_test::compile_and_run(gp, fold, in);
}

TEST(Fusion, WrittenOutAttentionMatchesUnfused) {
  const std::vector<Case> cases = {
      {"BERT form: Div, mask [B,1,1,S]", 5, 5, Scale::kDiv, Mask::kPerBatchKey, false, false, false, false, 1},
      {"Mul(c, s), Add(mask, s), two transposes", 5, 5, Scale::kMul, Mask::kPerBatchKey, true, true, false, false, 1},
      {"no scale, no mask", 5, 5, Scale::kNone, Mask::kNone, false, false, false, false, 1},
      {"cross-attention, rank-1 mask", 3, 7, Scale::kDiv, Mask::kPerKey, false, false, false, false, 1},
      {"full mask, a fully masked row", 70, 70, Scale::kDiv, Mask::kFull, false, false, false, true, 1},
      {"long rows: several row blocks", 130, 9, Scale::kMul, Mask::kNone, false, false, false, false, 1},
      {"mask broadcast over keys: left alone", 5, 5, Scale::kDiv, Mask::kKeyBroadcast, false, false, false, false, 13},
      {"scores also an output: left alone", 5, 5, Scale::kDiv, Mask::kPerBatchKey, false, false, true, false, 13},
      {"packed QKV, split in the model", 5, 5, Scale::kDiv, Mask::kPerBatchKey, false, false, false, false, 1,
       Qkv::kPacked},
      {"packed QKV, long rows, no mask", 130, 130, Scale::kMul, Mask::kNone, false, false, false, false, 1,
       Qkv::kPacked},
      {"packed QKV with k also an output: the Split stays", 5, 5, Scale::kDiv, Mask::kPerBatchKey, false, false, false,
       false, 2, Qkv::kPackedKRead},
  };
  for (const Case& k : cases) {
    const fusion_test::Result unfused = run(k, false);
    const fusion_test::Result fused = run(k, true);
    EXPECT_EQ(fused.nodes, k.nodes_fused) << k.name << " (unfused: " << unfused.nodes << " nodes)";
    ASSERT_FALSE(unfused.outputs.empty()) << k.name;
    ASSERT_EQ(unfused.outputs.size(), fused.outputs.size()) << k.name;
    const std::vector<float>& ref = unfused.outputs[0];
    const std::vector<float>& got = fused.outputs[0];
    ASSERT_EQ(ref.size(), got.size()) << k.name;
    for (size_t i = 0; i < ref.size(); ++i) {
      if (k.masked_row && std::isnan(ref[i])) {  // softmax of -inf everywhere: NaN unfused, zeros fused
        EXPECT_EQ(got[i], 0.f) << k.name << " at " << i;
        continue;
      }
      ASSERT_NEAR(got[i], ref[i], 1e-5f + 1e-5f * std::fabs(ref[i])) << k.name << " at " << i;
    }
  }
}

TEST(Fusion, AttentionWithUnequalHeadSplitsIsLeftAlone) {
  // q split into 3 heads of 4, k into 2 heads of 6: the MatMul would not even
  // type-check as attention, and the pass must not touch it.
  auto g = std::make_shared<Graph>();
  g->opsets()[""] = 17;
  Value* q = g->add_value("q", graph::TensorType{DType::kFloat32, graph::Shape{1, 6, 12}});
  Value* k = g->add_value("k", graph::TensorType{DType::kFloat32, graph::Shape{1, 6, 12}});
  Value* qh = g->add_value("qh", graph::TensorType{DType::kFloat32, graph::Shape{1, 6, 3, 4}});
  Value* kh = g->add_value("kh", graph::TensorType{DType::kFloat32, graph::Shape{1, 6, 2, 6}});
  Value* qt = g->add_value("qt", graph::TensorType{DType::kFloat32, graph::Shape{1, 3, 6, 4}});
  Value* kt = g->add_value("kt", graph::TensorType{DType::kFloat32, graph::Shape{1, 2, 6, 6}});
  Value* s = g->add_value("s", graph::TensorType{DType::kFloat32, graph::Shape{1, 3, 6, 6}});
  Value* p = g->add_value("p", graph::TensorType{DType::kFloat32, graph::Shape{1, 3, 6, 6}});
  g->add_node("rq", "Reshape", {q, i64_constant(*g, "sq", {1, 6, 3, 4})}, {qh}, "", 17);
  g->add_node("rk", "Reshape", {k, i64_constant(*g, "sk", {1, 6, 2, 6})}, {kh}, "", 17);
  g->add_node("tq", "Transpose", {qh}, {qt}, "", 17)->attrs.set("perm", ints({0, 2, 1, 3}));
  g->add_node("tk", "Transpose", {kh}, {kt}, "", 17)->attrs.set("perm", ints({0, 2, 3, 1}));
  g->add_node("qk", "MatMul", {qt, kt}, {s}, "", 17);
  g->add_node("sm", "Softmax", {s}, {p}, "", 17);
  p->is_graph_output = true;
  g->outputs().push_back(p);
  size_t rewrites = 9;
  ASSERT_TRUE(graph::fuse_attention(*g, &rewrites).ok());
  EXPECT_EQ(rewrites, 0u);
  EXPECT_EQ(g->nodes().size(), 6u);
}

TEST(Fusion, AttentionSplitOnlyForThreeEqualPartsOfTheLastAxis) {
  // Split(qkv) -> Attention(q, k, v): rewired only where the Split cuts the
  // last axis into three equal parts.
  struct Split {
    const char* name;
    int64_t axis;
    std::vector<int64_t> sizes;
    size_t rewrites;
  };
  const Split splits[] = {{"equal parts of the last axis", -1, {12, 12, 12}, 1},
                          {"unequal parts", -1, {18, 9, 9}, 0},
                          {"another axis", 1, {12, 12, 12}, 0}};
  for (const Split& t : splits) {
    Graph g;
    g.opsets()[""] = 23;
    Value* x = fusion_test::input(g, "qkv", {1, 36, 36});
    Value* q = g.add_value("q", graph::TensorType{DType::kFloat32, graph::Shape{1, 12, 36}});
    Value* k = g.add_value("k", graph::TensorType{DType::kFloat32, graph::Shape{1, 12, 36}});
    Value* v = g.add_value("v", graph::TensorType{DType::kFloat32, graph::Shape{1, 12, 36}});
    Value* y = g.add_value("y", graph::TensorType{DType::kFloat32, graph::Shape{1, 12, 36}});
    graph::Node* split = g.add_node("split", "Split", {x, i64_constant(g, "sizes", t.sizes)}, {q, k, v}, "", 23);
    graph::Attribute axis;
    axis.kind = graph::Attribute::Kind::kInt;
    axis.i = t.axis;
    split->attrs.set("axis", axis);
    graph::Node* att = g.add_node("att", "Attention", {q, k, v}, {y}, "", 23);
    graph::Attribute heads;
    heads.kind = graph::Attribute::Kind::kInt;
    heads.i = 3;
    att->attrs.set("q_num_heads", heads);
    att->attrs.set("kv_num_heads", heads);
    y->is_graph_output = true;
    g.outputs().push_back(y);
    size_t rewrites = 9;
    ASSERT_TRUE(graph::fuse_attention_split(g, &rewrites).ok()) << t.name;
    EXPECT_EQ(rewrites, t.rewrites) << t.name;
    EXPECT_EQ(g.nodes().size(), 2 - t.rewrites) << t.name;
    EXPECT_EQ(att->input(0), t.rewrites ? x : q) << t.name;
    EXPECT_EQ(att->attrs.get_int(graph::kPackedQkvAttr, 0), static_cast<int64_t>(t.rewrites)) << t.name;
  }
}

}  // namespace
}  // namespace openacl::model
