// Scan at opset 8 (batch axis, sequence_lens, directions) through compile +
// execute, against a reference computed here.
#include <gtest/gtest.h>

#include <vector>

#include "model/compiled_model.h"
#include "model/executor.h"

namespace openacl::model {
namespace {

using graph::DType;
using graph::Graph;
using graph::Shape;
using graph::TensorType;
using graph::Value;

constexpr int64_t kBatch = 2, kSeq = 3, kW = 2;

// Body: s' = s + a_t * 10 + b_t; the scan output is s'. Scan inputs a and b,
// b read in `b_reverse` order.
std::shared_ptr<Graph> make_scan8(bool with_lens, bool b_reverse) {
  auto body = std::make_shared<Graph>();
  body->opsets()[""] = 8;
  auto in = [&](Graph& g, const char* name, Shape s) {
    Value* v = g.add_value(name, TensorType{DType::kFloat32, s});
    v->is_graph_input = true;
    g.inputs().push_back(v);
    return v;
  };
  Value* s = in(*body, "s", Shape{kW});
  Value* a = in(*body, "a", Shape{kW});
  Value* b = in(*body, "b", Shape{kW});
  Value* ten = body->add_value("ten", TensorType{DType::kFloat32, Shape{}});
  const float t = 10.f;
  ten->constant = graph::TensorData::copy_of(DType::kFloat32, {}, &t, 4);
  Value* a10 = body->add_value("a10");
  body->add_node("mul", "Mul", {a, ten}, {a10}, "", 8);
  Value* sa = body->add_value("sa");
  body->add_node("add1", "Add", {s, a10}, {sa}, "", 8);
  Value* s2 = body->add_value("s2", TensorType{DType::kFloat32, Shape{kW}});
  body->add_node("add2", "Add", {sa, b}, {s2}, "", 8);
  Value* out = body->add_value("out", TensorType{DType::kFloat32, Shape{kW}});
  body->add_node("id", "Identity", {s2}, {out}, "", 8);
  s2->is_graph_output = out->is_graph_output = true;
  body->outputs() = {s2, out};

  auto g = std::make_shared<Graph>();
  g->opsets()[""] = 8;
  Value* lens = nullptr;
  if (with_lens) lens = in(*g, "lens", Shape{kBatch});
  if (lens) lens->type.dtype = DType::kInt64;
  Value* init = in(*g, "init", Shape{kBatch, kW});
  Value* xa = in(*g, "xa", Shape{kBatch, kSeq, kW});
  Value* xb = in(*g, "xb", Shape{kBatch, kSeq, kW});
  Value* fin = g->add_value("final");
  Value* ys = g->add_value("ys");
  graph::Node* scan = g->add_node("scan", "Scan", {lens, init, xa, xb}, {fin, ys}, "", 8);
  graph::Attribute ba;
  ba.kind = graph::Attribute::Kind::kGraph;
  ba.g = body;
  scan->attrs.set("body", ba);
  graph::Attribute m;
  m.kind = graph::Attribute::Kind::kInt;
  m.i = 2;
  scan->attrs.set("num_scan_inputs", m);
  graph::Attribute dirs;
  dirs.kind = graph::Attribute::Kind::kInts;
  dirs.ints = {0, b_reverse ? 1 : 0};
  scan->attrs.set("directions", dirs);
  fin->is_graph_output = ys->is_graph_output = true;
  g->outputs() = {fin, ys};
  return g;
}

TEST(Scan8, BatchLengthsAndDirections) {
  for (bool with_lens : {false, true})
    for (bool b_reverse : {false, true}) {
      std::unique_ptr<CompiledModel> cm;
      Status st = CompiledModel::compile(make_scan8(with_lens, b_reverse), CompileOptions(), &cm);
      ASSERT_TRUE(st.ok()) << st.message();
      std::shared_ptr<const CompiledModel> sm(std::move(cm));
      Executor ex(sm);
      std::vector<int64_t> lens = {kSeq, 2};
      std::vector<float> init = {1, 2, 3, 4}, xa(kBatch * kSeq * kW), xb(kBatch * kSeq * kW);
      for (size_t i = 0; i < xa.size(); ++i) xa[i] = static_cast<float>(i), xb[i] = 0.5f * static_cast<float>(i % 5);
      std::vector<kernels::Tensor> ins;
      if (with_lens) ins.push_back(kernels::Tensor{DType::kInt64, {kBatch}, lens.data()});
      ins.push_back(kernels::Tensor{DType::kFloat32, {kBatch, kW}, init.data()});
      ins.push_back(kernels::Tensor{DType::kFloat32, {kBatch, kSeq, kW}, xa.data()});
      ins.push_back(kernels::Tensor{DType::kFloat32, {kBatch, kSeq, kW}, xb.data()});
      std::vector<kernels::Tensor> outs;
      st = ex.run(ins, &outs);
      ASSERT_TRUE(st.ok()) << st.message();
      ASSERT_EQ(outs.size(), 2u);
      EXPECT_EQ(outs[0].dims, (std::vector<int64_t>{kBatch, kW}));
      EXPECT_EQ(outs[1].dims, (std::vector<int64_t>{kBatch, kSeq, kW}));
      for (int64_t b = 0; b < kBatch; ++b) {
        const int64_t len = with_lens ? lens[b] : kSeq;
        std::vector<float> s = {init[b * kW], init[b * kW + 1]};
        for (int64_t t = 0; t < kSeq; ++t)
          for (int64_t w = 0; w < kW; ++w) {
            float want = 0;  // past the entry's length: zero
            if (t < len) {
              const int64_t tb = b_reverse ? len - 1 - t : t;
              s[w] += xa[(b * kSeq + t) * kW + w] * 10 + xb[(b * kSeq + tb) * kW + w];
              want = s[w];
            }
            EXPECT_FLOAT_EQ(outs[1].as<float>()[(b * kSeq + t) * kW + w], want)
                << "lens " << with_lens << " reverse " << b_reverse << " b" << b << " t" << t << " w" << w;
          }
        for (int64_t w = 0; w < kW; ++w) EXPECT_FLOAT_EQ(outs[0].as<float>()[b * kW + w], s[w]);
      }
    }
}

TEST(Scan8, BadSequenceLengthIsRefused) {
  std::unique_ptr<CompiledModel> cm;
  ASSERT_TRUE(CompiledModel::compile(make_scan8(true, false), CompileOptions(), &cm).ok());
  std::shared_ptr<const CompiledModel> sm(std::move(cm));
  Executor ex(sm);
  std::vector<int64_t> lens = {kSeq + 1, 1};
  std::vector<float> init(kBatch * kW), xa(kBatch * kSeq * kW), xb(kBatch * kSeq * kW);
  std::vector<kernels::Tensor> outs;
  Status st = ex.run({kernels::Tensor{DType::kInt64, {kBatch}, lens.data()},
                      kernels::Tensor{DType::kFloat32, {kBatch, kW}, init.data()},
                      kernels::Tensor{DType::kFloat32, {kBatch, kSeq, kW}, xa.data()},
                      kernels::Tensor{DType::kFloat32, {kBatch, kSeq, kW}, xb.data()}},
                     &outs);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("sequence_lens[0] = 4 is outside [0, 3]"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace openacl::model
