// Test helper: runs one op as a one-node graph through the compile + execute
// path (the same path models and acl.op take), with constant folding off so
// the kernel really runs on the executor.
//
//   auto x = tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6});
//   OpRun r = run_op("Relu", {x});               // r.status, r.outputs[0]
//   EXPECT_EQ(values<float>(r.outputs[0]), (std::vector<float>{...}));
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "graph/graph.h"
#include "model/compiled_model.h"
#include "model/executor.h"

namespace openacl::testing {

using graph::DType;
using Data = std::shared_ptr<graph::TensorData>;

// n floats uniform in [-1, 1), the same for the same seed.
inline std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::kInt16;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::kUInt16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, uint64_t>) return DType::kUInt64;
  else if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else return DType::kUndefined;
}

template <class T>
Data tensor(std::vector<int64_t> dims, const std::vector<T>& v, DType dt = dtype_of<T>()) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> b(v.begin(), v.end());
    return graph::TensorData::copy_of(dt, std::move(dims), b.data(), b.size());
  } else {
    return graph::TensorData::copy_of(dt, std::move(dims), v.data(), v.size() * sizeof(T));
  }
}

// Raw-bytes tensor of any dtype (float16 as uint16 bits, etc.).
template <class T>
Data raw_tensor(DType dt, std::vector<int64_t> dims, const std::vector<T>& v) {
  return graph::TensorData::copy_of(dt, std::move(dims), v.data(), v.size() * sizeof(T));
}

// float16 tensors from float values, and back.
inline Data half(std::vector<int64_t> dims, const std::vector<float>& v) {
  std::vector<uint16_t> b;
  for (float f : v) b.push_back(float_to_half(f));
  return raw_tensor(DType::kFloat16, std::move(dims), b);
}

template <class T>
std::vector<T> values(const Data& d) {
  std::vector<T> out(static_cast<size_t>(d->elements()));
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<const uint8_t*>(d->data)[i] != 0;
  } else {
    std::memcpy(out.data(), d->data, out.size() * sizeof(T));
  }
  return out;
}

inline std::vector<float> half_values(const Data& d) {
  std::vector<float> out;
  for (uint16_t b : values<uint16_t>(d)) out.push_back(half_to_float(b));
  return out;
}

struct OpRun {
  Status status;
  std::vector<Data> outputs;
};

struct OpSpec {
  std::string op_type;
  graph::AttributeMap attrs;
  int opset = 21;
  std::string domain;
  int num_outputs = 1;
  // Inputs (by index) given as initializers (constants) instead of graph inputs:
  // what a model with weights looks like to the kernel factory.
  std::vector<int> constant_inputs;
};

inline graph::Attribute attr_int(int64_t v) { graph::Attribute a; a.kind = graph::Attribute::Kind::kInt; a.i = v; return a; }
inline graph::Attribute attr_float(float v) { graph::Attribute a; a.kind = graph::Attribute::Kind::kFloat; a.f = v; return a; }
inline graph::Attribute attr_ints(std::vector<int64_t> v) { graph::Attribute a; a.kind = graph::Attribute::Kind::kInts; a.ints = std::move(v); return a; }
inline graph::Attribute attr_floats(std::vector<float> v) { graph::Attribute a; a.kind = graph::Attribute::Kind::kFloats; a.floats = std::move(v); return a; }
inline graph::Attribute attr_string(std::string v) { graph::Attribute a; a.kind = graph::Attribute::Kind::kString; a.s = std::move(v); return a; }

inline graph::AttributeMap attrs(std::initializer_list<std::pair<const char*, graph::Attribute>> l) {
  graph::AttributeMap m;
  for (const auto& [k, v] : l) m.set(k, v);
  return m;
}

// Inputs may contain nullptr for omitted optional inputs.
inline OpRun run_op(const OpSpec& spec, const std::vector<Data>& inputs) {
  auto g = std::make_unique<graph::Graph>();
  g->opsets()[spec.domain] = spec.opset;
  std::vector<graph::Value*> ins, outs;
  std::vector<kernels::Tensor> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      ins.push_back(nullptr);
      continue;
    }
    graph::TensorType t;
    t.dtype = inputs[i]->dtype;
    t.shape = graph::Shape(inputs[i]->dims.begin(), inputs[i]->dims.end());
    graph::Value* v = g->add_value("in" + std::to_string(i), t);
    bool is_const = false;
    for (int c : spec.constant_inputs) is_const = is_const || c == static_cast<int>(i);
    if (is_const) {
      v->constant = inputs[i];
    } else {
      v->is_graph_input = true;
      g->inputs().push_back(v);
      feeds.push_back(kernels::Tensor{inputs[i]->dtype, inputs[i]->dims, const_cast<void*>(inputs[i]->data)});
    }
    ins.push_back(v);
  }
  for (int i = 0; i < spec.num_outputs; ++i) {
    graph::Value* v = g->add_value("out" + std::to_string(i));
    v->is_graph_output = true;
    g->outputs().push_back(v);
    outs.push_back(v);
  }
  graph::Node* n = g->add_node("node", spec.op_type, ins, outs, spec.domain, spec.opset);
  n->attrs = spec.attrs;
  model::CompileOptions opt;
  opt.fold_constants = false;
  std::unique_ptr<model::CompiledModel> compiled;
  OpRun r;
  r.status = model::CompiledModel::compile(std::move(g), opt, &compiled);
  if (!r.status.ok()) return r;
  std::shared_ptr<const model::CompiledModel> m(std::move(compiled));
  model::Executor exec(m);
  std::vector<kernels::Tensor> results;
  r.status = exec.run(feeds, &results);
  if (!r.status.ok()) return r;
  for (const kernels::Tensor& t : results)
    r.outputs.push_back(graph::TensorData::copy_of(t.dtype, t.dims, t.data, t.bytes()));
  return r;
}

inline OpRun run_op(const std::string& op_type, const std::vector<Data>& inputs, graph::AttributeMap attrs = {},
                    int opset = 21) {
  OpSpec s;
  s.op_type = op_type;
  s.attrs = std::move(attrs);
  s.opset = opset;
  return run_op(s, inputs);
}

}  // namespace openacl::testing
