// Shared scaffolding of the fusion tests (test_fusion*.cpp): a graph built by
// hand is compiled with folding (the fusion passes run) or without, run once
// on the given inputs, and the fused outputs are compared with the unfused.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "model/compiled_model.h"
#include "model/executor.h"

namespace openacl::model::fusion_test {

inline graph::Attribute ints(std::vector<int64_t> v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

inline graph::Value* input(graph::Graph& g, const std::string& name, const std::vector<int64_t>& dims) {
  graph::Value* v = g.add_value(name, graph::TensorType{graph::DType::kFloat32, graph::Shape(dims.begin(), dims.end())});
  v->is_graph_input = true;
  g.inputs().push_back(v);
  return v;
}

inline graph::Value* f32_constant(graph::Graph& g, const std::string& name, const std::vector<int64_t>& dims,
                                  const std::vector<float>& values) {
  graph::Value* c = g.add_value(name, graph::TensorType{graph::DType::kFloat32, graph::Shape(dims.begin(), dims.end())});
  c->constant = graph::TensorData::copy_of(graph::DType::kFloat32, dims, values.data(), values.size() * 4);
  return c;
}

inline graph::Value* f32_scalar(graph::Graph& g, const std::string& name, float v) {
  return f32_constant(g, name, {}, {v});
}

// A 1-D int64 constant (a Reshape shape, say).
inline graph::Value* i64_constant(graph::Graph& g, const std::string& name, const std::vector<int64_t>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  graph::Value* c = g.add_value(name, graph::TensorType{graph::DType::kInt64, graph::Shape{n}});
  c->constant = graph::TensorData::copy_of(graph::DType::kInt64, {n}, values.data(), values.size() * 8);
  return c;
}

// `op` ("Clip" between 0 and 6, "Relu", ...; "" none) applied to `in`, as an
// opset-14 node named `name`; its output (or `in` when op is "").
inline graph::Value* activation(graph::Graph& g, const char* op, graph::Value* in, const std::string& name) {
  if (!*op) return in;
  graph::Value* out = g.add_value(name);
  std::vector<graph::Value*> ins = {in};
  if (std::string(op) == "Clip") {
    ins.push_back(f32_scalar(g, name + "_lo", 0.f));
    ins.push_back(f32_scalar(g, name + "_hi", 6.f));
  }
  g.add_node(name, op, ins, {out}, "", 14);
  return out;
}

struct Result {
  std::vector<std::vector<float>> outputs;      // empty when compile or run failed (a test failure)
  size_t nodes = 0;                             // nodes after compile
  size_t fused = 0;                             // CompiledModel::fused_nodes()
  std::shared_ptr<const CompiledModel> model;   // keeps the plan alive for inspection
};

inline Result compile_and_run(std::shared_ptr<graph::Graph> g, const CompileOptions& opt,
                              const std::vector<kernels::Tensor>& inputs) {
  Result r;
  std::unique_ptr<CompiledModel> m;
  Status st = CompiledModel::compile(std::move(g), opt, &m);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return r;
  r.nodes = m->nodes().size();
  r.fused = m->fused_nodes();
  r.model = std::move(m);
  Executor ex(r.model);
  std::vector<kernels::Tensor> out;
  st = ex.run(inputs, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return r;
  for (const kernels::Tensor& t : out) r.outputs.emplace_back(t.as<float>(), t.as<float>() + t.elements());
  return r;
}

inline Result compile_and_run(std::shared_ptr<graph::Graph> g, bool fold, const std::vector<kernels::Tensor>& inputs) {
  CompileOptions opt;
  opt.fold_constants = fold;
  return compile_and_run(std::move(g), opt, inputs);
}

// Every output of `got` equal to `ref`'s within 1e-5 absolute + 1e-5 relative.
inline void expect_near(const std::vector<std::vector<float>>& ref, const std::vector<std::vector<float>>& got,
                        const std::string& what) {
  ASSERT_FALSE(ref.empty()) << what;
  ASSERT_EQ(ref.size(), got.size()) << what;
  for (size_t o = 0; o < ref.size(); ++o) {
    ASSERT_EQ(ref[o].size(), got[o].size()) << what << " output " << o;
    for (size_t i = 0; i < ref[o].size(); ++i)
      ASSERT_NEAR(got[o][i], ref[o][i], 1e-5f + 1e-5f * std::fabs(ref[o][i])) << what << " output " << o << " at " << i;
  }
}

}  // namespace openacl::model::fusion_test
