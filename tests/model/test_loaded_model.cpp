// LoadedModel through the model layer: a small MatMul + Add + Relu model
// encoded as .om (with and without gears), loaded with library and caller
// memory, described, executed with every buffer check, concurrently.
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <new>
#include <thread>

#include "base/page_alloc.h"
#include "model/loaded_model.h"
#include "model/om_format.h"

// operator new is counted by openacl-run's counter (tools/openacl_run/
// alloc_count.cpp, linked into this test binary only).
#include "alloc_count.h"

namespace openacl::model {
namespace {

using graph::Dim;
using graph::DType;
using graph::Graph;
using graph::Shape;
using graph::TensorType;

constexpr int kIn = 4, kOut = 3;

float weight(int i, int o) { return 0.25f * static_cast<float>((i + 1) * (o % 2 ? -1 : 1)) + 0.1f * o; }
float bias(int o) { return 0.5f - 0.3f * static_cast<float>(o); }

// y = relu(x @ W + b), x [batch, 4] (batch unknown when batch < 0).
std::shared_ptr<Graph> make_graph(int64_t batch) {
  auto g = std::make_shared<Graph>();
  g->name = "mlp";
  g->opsets()[""] = 17;
  auto* x = g->add_value("x", TensorType{DType::kFloat32, Shape{batch < 0 ? Dim() : Dim(batch), Dim(kIn)}});
  x->is_graph_input = true;
  g->inputs().push_back(x);
  std::vector<float> w(kIn * kOut), b(kOut);
  for (int i = 0; i < kIn; ++i)
    for (int o = 0; o < kOut; ++o) w[i * kOut + o] = weight(i, o);
  for (int o = 0; o < kOut; ++o) b[o] = bias(o);
  auto* wv = g->add_value("W", TensorType{DType::kFloat32, Shape{Dim(kIn), Dim(kOut)}});
  wv->constant = graph::TensorData::copy_of(DType::kFloat32, {kIn, kOut}, w.data(), w.size() * 4);
  auto* bv = g->add_value("b", TensorType{DType::kFloat32, Shape{Dim(kOut)}});
  bv->constant = graph::TensorData::copy_of(DType::kFloat32, {kOut}, b.data(), b.size() * 4);
  auto* m = g->add_value("m");
  auto* a = g->add_value("a");
  auto* y = g->add_value("y");
  g->add_node("matmul", "MatMul", {x, wv}, {m}, "", 17);
  g->add_node("add", "Add", {m, bv}, {a}, "", 17);
  g->add_node("relu", "Relu", {a}, {y}, "", 17);
  y->is_graph_output = true;
  g->outputs().push_back(y);
  return g;
}

std::string om_bytes(int64_t batch, const GearSpec& gears = {}) {
  OmModel om;
  om.graph = make_graph(batch);
  om.meta.gears = gears;
  EXPECT_TRUE(optimize(om.graph, CompileOptions()).ok());
  std::string bytes;
  Status st = write_om(om, &bytes);
  EXPECT_TRUE(st.ok()) << st.message();
  return bytes;
}

std::vector<float> reference(const std::vector<float>& x) {
  const size_t rows = x.size() / kIn;
  std::vector<float> y(rows * kOut);
  for (size_t r = 0; r < rows; ++r)
    for (int o = 0; o < kOut; ++o) {
      float s = bias(o);
      for (int i = 0; i < kIn; ++i) s += x[r * kIn + i] * weight(i, o);
      y[r * kOut + o] = std::max(s, 0.0f);
    }
  return y;
}

bool close(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::fabs(a[i] - b[i]) > 1e-5f) return false;
  return true;
}

std::vector<float> input(size_t rows) {
  std::vector<float> x(rows * kIn);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i));
  return x;
}

GearSpec batch_gears() {
  GearSpec g;
  g.kind = GearKind::kBatch;
  g.positions = {{"x", 0}};
  g.gears = {{1}, {2}, {4}};
  return g;
}

std::shared_ptr<LoadedModel> load(const std::string& bytes, const LoadOptions& opts = {}) {
  std::shared_ptr<LoadedModel> m;
  Status st = LoadedModel::load(bytes.data(), bytes.size(), nullptr, opts, &m);
  EXPECT_TRUE(st.ok()) << st.message();
  return m;
}

TEST(LoadedModel, StaticModelDescribesAndRuns) {
  const std::string bytes = om_bytes(2);
  auto m = load(bytes);
  ASSERT_TRUE(m);
  const ModelInfo& info = m->info();
  ASSERT_EQ(info.inputs.size(), 1u);
  ASSERT_EQ(info.outputs.size(), 1u);
  EXPECT_EQ(info.inputs[0].name, "x");
  EXPECT_EQ(info.inputs[0].dims, (std::vector<int64_t>{2, kIn}));
  EXPECT_EQ(info.inputs[0].bytes, 2u * kIn * 4);
  EXPECT_EQ(info.outputs[0].dims, (std::vector<int64_t>{2, kOut}));
  EXPECT_EQ(info.outputs[0].bytes, 2u * kOut * 4);
  EXPECT_EQ(info.gear_input, -1);
  EXPECT_GE(info.weight_size, static_cast<size_t>((kIn * kOut + kOut) * 4));

  std::vector<float> x = input(2), y(2 * kOut, -1.0f);
  std::vector<std::vector<int64_t>> dims;
  Status st = m->execute({{x.data(), x.size() * 4}}, {{y.data(), y.size() * 4}}, {}, &dims);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(dims.at(0), (std::vector<int64_t>{2, kOut}));
  const auto want = reference(x);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5) << i;

  // describe() without loading agrees.
  ModelInfo d;
  ASSERT_TRUE(describe(bytes.data(), bytes.size(), "", &d).ok());
  EXPECT_EQ(d.inputs[0].dims, info.inputs[0].dims);
  EXPECT_EQ(d.work_size, info.work_size);
  EXPECT_EQ(d.weight_size, info.weight_size);
}

TEST(LoadedModel, BufferChecksNameExpectedAndGiven) {
  auto m = load(om_bytes(2));
  std::vector<float> x = input(2), y(2 * kOut);
  Status st = m->execute({{x.data(), 8}}, {{y.data(), y.size() * 4}});
  EXPECT_EQ(st.code(), code::kModelInputNotMatch);
  EXPECT_NE(st.message().find("expects 32 bytes"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("holds 8 bytes"), std::string::npos) << st.message();
  st = m->execute({{x.data(), x.size() * 4}}, {{y.data(), 4}});
  EXPECT_EQ(st.code(), code::kModelOutputNotMatch) << st.message();
  st = m->execute({}, {{y.data(), y.size() * 4}});
  EXPECT_EQ(st.code(), code::kModelInputNotMatch) << st.message();
  st = m->execute({{x.data(), x.size() * 4}}, {});
  EXPECT_EQ(st.code(), code::kModelOutputNotMatch) << st.message();
  st = m->execute({{nullptr, x.size() * 4}}, {{y.data(), y.size() * 4}});
  EXPECT_EQ(st.code(), code::kModelInputNotMatch) << st.message();
  // A larger buffer than needed is fine (e.g. a max-size allocation).
  std::vector<float> big(100);
  std::memcpy(big.data(), x.data(), x.size() * 4);
  EXPECT_TRUE(m->execute({{big.data(), big.size() * 4}}, {{y.data(), y.size() * 4}}).ok());
}

TEST(LoadedModel, FreeBatchDimDeducedFromBufferSize) {
  auto m = load(om_bytes(-1));
  EXPECT_TRUE(m->info().dynamic);
  EXPECT_EQ(m->info().inputs[0].dims, (std::vector<int64_t>{-1, kIn}));
  EXPECT_EQ(m->info().inputs[0].bytes, 0u);
  for (size_t rows : {1u, 3u, 5u}) {
    std::vector<float> x = input(rows), y(rows * kOut);
    std::vector<std::vector<int64_t>> dims;
    Status st = m->execute({{x.data(), x.size() * 4}}, {{y.data(), y.size() * 4}}, {}, &dims);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(dims.at(0), (std::vector<int64_t>{static_cast<int64_t>(rows), kOut}));
    EXPECT_TRUE(close(y, reference(x)));
  }
  // Not a whole number of rows.
  std::vector<float> x = input(2), y(2 * kOut);
  EXPECT_EQ(m->execute({{x.data(), 6 * 4}}, {{y.data(), y.size() * 4}}).code(), code::kModelInputNotMatch);
  // An explicit shape wins over the buffer size; an output too small writes nothing.
  std::vector<float> small(kOut, 7.0f);
  Status st = m->execute({{x.data(), x.size() * 4}}, {{small.data(), small.size() * 4}}, {{2, kIn}});
  EXPECT_EQ(st.code(), code::kModelOutputNotMatch) << st.message();
  EXPECT_EQ(small, std::vector<float>(kOut, 7.0f));
}

TEST(LoadedModel, BatchGears) {
  auto m = load(om_bytes(-1, batch_gears()));
  const ModelInfo& info = m->info();
  ASSERT_EQ(info.inputs.size(), 2u);
  ASSERT_EQ(info.gear_input, 1);
  EXPECT_EQ(info.inputs[1].name, kGearInputName);
  EXPECT_EQ(info.inputs[1].dtype, DType::kInt64);
  EXPECT_EQ(info.inputs[1].bytes, 8u);
  EXPECT_EQ(info.inputs[0].dims, (std::vector<int64_t>{-1, kIn}));
  EXPECT_EQ(info.inputs[0].bytes, 4u * kIn * 4);  // the largest gear
  EXPECT_EQ(info.inputs[0].ranges[0], (std::pair<int64_t, int64_t>{1, 4}));
  EXPECT_EQ(info.outputs[0].dims, (std::vector<int64_t>{4, kOut}));
  EXPECT_FALSE(info.dynamic);
  ASSERT_EQ(info.gear_output_dims.size(), 3u);
  EXPECT_EQ(info.gear_output_dims[1][0], (std::vector<int64_t>{2, kOut}));

  int64_t gear = 0;
  std::vector<float> x = input(4), y(4 * kOut, -1.0f);
  // No gear selected yet: the gear input holds 0.
  Status st = m->execute({{x.data(), x.size() * 4}, {&gear, 8}}, {{y.data(), y.size() * 4}});
  EXPECT_EQ(st.code(), code::kGeDynamicBatchSizeInvalid) << st.message();
  EXPECT_EQ(m->select_gear(GearKind::kBatch, {3}, {&gear, 8}).code(), code::kGeDynamicBatchSizeInvalid);
  EXPECT_EQ(m->select_gear(GearKind::kImageSize, {2, 2}, {&gear, 8}).code(), code::kInvalidParam);
  EXPECT_EQ(m->select_gear(GearKind::kBatch, {2}, {&gear, 4}).code(), code::kInvalidParam);
  EXPECT_EQ(m->current_output_dims(0), (std::vector<int64_t>{4, kOut}));  // largest before any choice
  ASSERT_TRUE(m->select_gear(GearKind::kBatch, {2}, {&gear, 8}).ok());
  EXPECT_EQ(gear, 2);
  EXPECT_EQ(m->current_output_dims(0), (std::vector<int64_t>{2, kOut}));
  std::vector<std::vector<int64_t>> dims;
  st = m->execute({{x.data(), x.size() * 4}, {&gear, 8}}, {{y.data(), y.size() * 4}}, {}, &dims);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(dims.at(0), (std::vector<int64_t>{2, kOut}));
  const auto want = reference(std::vector<float>(x.begin(), x.begin() + 2 * kIn));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5);
  EXPECT_EQ(y[2 * kOut], -1.0f);  // rows past the gear untouched

  // A static model has no gears.
  auto s = load(om_bytes(2));
  EXPECT_EQ(s->select_gear(GearKind::kBatch, {2}, {&gear, 8}).code(), code::kModelNotDynamic);
}

TEST(LoadedModel, CallerMemoryHoldsWeightsAndWork) {
  const std::string bytes = om_bytes(2);
  ModelInfo d;
  ASSERT_TRUE(describe(bytes.data(), bytes.size(), "", &d).ok());
  ASSERT_GT(d.work_size, 0u);
  void* work = std::aligned_alloc(64, (d.work_size + 63) / 64 * 64);
  void* weights = std::aligned_alloc(64, (d.weight_size + 63) / 64 * 64);
  std::memset(weights, 0, d.weight_size);
  LoadOptions opts;
  opts.work_ptr = work;
  opts.work_size = d.work_size;
  opts.weight_ptr = weights;
  opts.weight_size = d.weight_size;
  {
    auto m = load(bytes, opts);
    ASSERT_TRUE(m);
    // The weights were copied into the caller's memory (W's first value is there).
    const float w0 = weight(0, 0);
    bool found = false;
    for (size_t i = 0; i + 4 <= d.weight_size && !found; i += 4) found = std::memcmp(&w0, (char*)weights + i, 4) == 0;
    EXPECT_TRUE(found);
    std::vector<float> x = input(2), y(2 * kOut);
    ASSERT_TRUE(m->execute({{x.data(), x.size() * 4}}, {{y.data(), y.size() * 4}}).ok());
    const auto want = reference(x);
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-5);
  }
  // Too small: refused with the needed size.
  std::shared_ptr<LoadedModel> m;
  opts.weight_size = d.weight_size - 1;
  Status st = LoadedModel::load(bytes.data(), bytes.size(), nullptr, opts, &m);
  EXPECT_EQ(st.code(), code::kInvalidParam);
  EXPECT_NE(st.message().find(std::to_string(d.weight_size)), std::string::npos) << st.message();
  opts.weight_size = d.weight_size;
  opts.work_size = d.work_size - 1;
  EXPECT_EQ(LoadedModel::load(bytes.data(), bytes.size(), nullptr, opts, &m).code(), code::kInvalidParam);
  std::free(work);
  std::free(weights);
}

// y = relu(x), x [rows, 4] (rows unknown when rows < 0).
std::string relu_om(int64_t rows, const GearSpec& gears = {}) {
  OmModel om;
  om.graph = std::make_shared<Graph>();
  Graph& g = *om.graph;
  g.name = "relu";
  g.opsets()[""] = 17;
  auto* x = g.add_value("x", TensorType{DType::kFloat32, Shape{rows < 0 ? Dim() : Dim(rows), Dim(kIn)}});
  x->is_graph_input = true;
  g.inputs().push_back(x);
  auto* y = g.add_value("y");
  g.add_node("relu", "Relu", {x}, {y}, "", 17);
  y->is_graph_output = true;
  g.outputs().push_back(y);
  om.meta.gears = gears;
  EXPECT_TRUE(optimize(om.graph, CompileOptions()).ok());
  std::string bytes;
  EXPECT_TRUE(write_om(om, &bytes).ok());
  return bytes;
}

TEST(LoadedModel, StaticExecutionAllocatesNothing) {
  // DESIGN.md: executing a loaded static model performs no heap allocation in
  // the runtime's layers (after the first execution has sized the runner's
  // vectors). Relu's kernel allocates nothing itself, so any allocation here
  // would be the model layer's or the executor's. (The real models' kernels
  // are held to the same in tests/models, test_steady_execute_allocates_nothing.)
  for (const std::string& bytes : {relu_om(2), relu_om(-1, batch_gears())}) {
    auto m = load(bytes);
    const bool gears = m->info().gear_input >= 0;
    int64_t gear = 2;
    std::vector<float> x = input(2), y(2 * kIn);
    std::vector<IoBuffer> ins = {{x.data(), x.size() * 4}}, outs = {{y.data(), y.size() * 4}};
    if (gears) ins.push_back({&gear, 8});
    ASSERT_TRUE(m->execute(ins, outs).ok());
    openacl::tools::start_counting();
    Status st = Status::Ok();
    for (int i = 0; i < 10 && st.ok(); ++i) st = m->execute(ins, outs);
    const openacl::tools::AllocCounts n = openacl::tools::stop_counting();
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(n.ours + n.onednn, 0) << (gears ? "gear model" : "static model");
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], std::max(x[i], 0.0f));
  }
}

// y = relu(x), z = -y; outputs y, z and y again. y is also read by a later
// node, so it must be complete where Neg reads it, wherever it lives.
std::string relu_neg_om(int64_t rows) {
  OmModel om;
  om.graph = std::make_shared<Graph>();
  Graph& g = *om.graph;
  g.name = "relu_neg";
  g.opsets()[""] = 17;
  auto* x = g.add_value("x", TensorType{DType::kFloat32, Shape{Dim(rows), Dim(kIn)}});
  x->is_graph_input = true;
  g.inputs().push_back(x);
  auto* y = g.add_value("y");
  auto* z = g.add_value("z");
  g.add_node("relu", "Relu", {x}, {y}, "", 17);
  g.add_node("neg", "Neg", {y}, {z}, "", 17);
  y->is_graph_output = true;
  z->is_graph_output = true;
  g.outputs() = {y, z, y};
  EXPECT_TRUE(optimize(om.graph, CompileOptions()).ok());
  std::string bytes;
  EXPECT_TRUE(write_om(om, &bytes).ok());
  return bytes;
}

// Records where each node's first output was written.
class WhereWritten : public NodeObserver {
 public:
  void after_node(const CompiledNode& node, const std::vector<kernels::Tensor>& values, int64_t, int64_t) override {
    where[node.node->op_type] = values[node.outputs[0]].data;
  }
  std::map<std::string, const void*> where;
};

// Outputs a node writes go straight into the caller's (aligned, separate)
// buffers; a misaligned buffer, one that overlaps the input and a second
// name for the same value get a copy. Every result is right either way.
TEST(LoadedModel, OutputsWrittenInPlaceOnlyWhereSafe) {
  constexpr int64_t kRows = 16;
  auto m = load(relu_neg_om(kRows));
  const size_t n = kRows * kIn, bytes = n * sizeof(float);
  auto* mem = static_cast<float*>(std::aligned_alloc(64, 8 * bytes));
  ASSERT_NE(mem, nullptr);
  const std::vector<float> x0 = input(kRows);
  auto check = [&](const float* y, const float* z, const float* y2, const char* what) {
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(y[i], std::max(x0[i], 0.0f)) << what << " y at " << i;
      ASSERT_EQ(z[i], -std::max(x0[i], 0.0f)) << what << " z at " << i;
      ASSERT_EQ(y2[i], std::max(x0[i], 0.0f)) << what << " second y at " << i;
    }
  };
  float* x = mem;
  float *y = mem + 2 * n, *z = mem + 4 * n, *y2 = mem + 6 * n;
  std::copy(x0.begin(), x0.end(), x);
  WhereWritten seen;
  ASSERT_TRUE(m->execute({{x, bytes}}, {{y, bytes}, {z, bytes}, {y2, bytes}}, {}, nullptr, &seen).ok());
  check(y, z, y2, "aligned");
  EXPECT_EQ(seen.where["Relu"], y);
  EXPECT_EQ(seen.where["Neg"], z);

  // y one float off 64-byte alignment: written in the arena, then copied.
  float* y_odd = mem + 2 * n + 1;
  ASSERT_TRUE(m->execute({{x, bytes}}, {{y_odd, bytes}, {z, bytes}, {y2, bytes}}, {}, nullptr, &seen).ok());
  check(y_odd, z, y2, "misaligned y");
  EXPECT_NE(seen.where["Relu"], y_odd);
  EXPECT_EQ(seen.where["Neg"], z);

  // z in the input's own buffer: Relu still reads x before anything lands there.
  ASSERT_TRUE(m->execute({{x, bytes}}, {{y, bytes}, {x, bytes}, {y2, bytes}}, {}, nullptr, &seen).ok());
  check(y, x, y2, "z over x");
  EXPECT_NE(seen.where["Neg"], x);
  std::free(mem);
}

TEST(LoadedModel, ConcurrentExecutions) {
  auto m = load(om_bytes(-1, batch_gears()));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const int64_t batch = t % 2 ? 4 : 1;
      int64_t gear = batch;
      std::vector<float> x = input(static_cast<size_t>(batch)), y(static_cast<size_t>(batch) * kOut);
      for (int i = 0; i < 50; ++i) {
        Status st = m->execute({{x.data(), x.size() * 4}, {&gear, 8}}, {{y.data(), y.size() * 4}});
        if (!st.ok() || !close(y, reference(x))) ++failures;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

bool write_file(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

// Graph building for the weight tests: an input, a float32 constant
// holding scale * (i % 13 - 6), a Conv padded by one, the optimised .om.
graph::Value* graph_input(Graph& g, const char* name, Shape shape, DType dtype = DType::kFloat32) {
  auto* v = g.add_value(name, TensorType{dtype, std::move(shape)});
  v->is_graph_input = true;
  g.inputs().push_back(v);
  return v;
}

graph::Value* pattern_constant(Graph& g, const char* name, std::vector<int64_t> dims, float scale) {
  Shape shape;
  int64_t n = 1;
  for (int64_t d : dims) shape.push_back(Dim(d)), n *= d;
  std::vector<float> w(static_cast<size_t>(n));
  for (size_t i = 0; i < w.size(); ++i) w[i] = scale * static_cast<float>(static_cast<int>(i % 13) - 6);
  auto* v = g.add_value(name, TensorType{DType::kFloat32, shape});
  v->constant = graph::TensorData::copy_of(DType::kFloat32, dims, w.data(), w.size() * 4);
  return v;
}

void conv_padded_by_one(Graph& g, const char* name, graph::Value* x, graph::Value* w, graph::Value* y) {
  auto* conv = g.add_node(name, "Conv", {x, w}, {y}, "", 17);
  graph::Attribute pads;
  pads.kind = graph::Attribute::Kind::kInts;
  pads.ints = {1, 1, 1, 1};
  conv->attrs.set("pads", pads);
}

std::string optimized_om(std::shared_ptr<Graph> g, const std::vector<graph::Value*>& outputs) {
  for (auto* v : outputs) {
    v->is_graph_output = true;
    g->outputs().push_back(v);
  }
  OmModel om;
  om.graph = std::move(g);
  EXPECT_TRUE(optimize(om.graph, CompileOptions()).ok());
  std::string bytes;
  Status st = write_om(om, &bytes);
  EXPECT_TRUE(st.ok()) << st.message();
  return bytes;
}

// A Conv (weights packed at load) and a MatMul reading its weights in place.
std::string two_weights_om() {
  auto g = std::make_shared<Graph>();
  g->name = "two_weights";
  g->opsets()[""] = 17;
  auto* x = graph_input(*g, "x", Shape{Dim(1), Dim(64), Dim(16), Dim(16)});
  auto* a = graph_input(*g, "a", Shape{Dim(4), Dim(256)});
  auto* w = pattern_constant(*g, "W", {64, 64, 3, 3}, 0.01f);
  auto* b = pattern_constant(*g, "B", {256, 256}, 0.02f);
  auto* y = g->add_value("y");
  auto* z = g->add_value("z");
  conv_padded_by_one(*g, "conv", x, w, y);
  g->add_node("matmul", "MatMul", {a, b}, {z}, "", 17);
  return optimized_om(g, {y, z});
}

// Writes `bytes` to `path`, then loads the model from the file (mapped) and
// from the bytes (copied).
void load_both_ways(const std::string& path, const std::string& bytes, std::shared_ptr<LoadedModel>* mapped,
                    std::shared_ptr<LoadedModel>* copied) {
  ASSERT_TRUE(write_file(path, bytes));
  Status st = LoadedModel::load_file(path, {}, mapped);
  ASSERT_TRUE(st.ok()) << st.message();
  st = LoadedModel::load(bytes.data(), bytes.size(), nullptr, {}, copied);
  ASSERT_TRUE(st.ok()) << st.message();
}

TEST(LoadedModel, MappedFileReleasesWeightsAfterPacking) {
  const std::string bytes = two_weights_om();
  const std::string path = ::testing::TempDir() + "/openacl_release_weights.om";
  std::shared_ptr<LoadedModel> mapped, copied;
  ASSERT_NO_FATAL_FAILURE(load_both_ways(path, bytes, &mapped, &copied));
  Status st;
  // Our own copy is never released; of the mapping, at least every page
  // wholly inside the two weights (147456 and 262144 bytes) can be.
  EXPECT_EQ(copied->released_weight_bytes(), 0u);
  EXPECT_GE(mapped->released_weight_bytes(), 147456u + 262144u - 4 * 4096u);

  std::vector<float> x(64 * 16 * 16), a(4 * 256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.001f * static_cast<float>(i % 97);
  for (size_t i = 0; i < a.size(); ++i) a[i] = 0.01f * static_cast<float>(i % 31) - 0.1f;
  std::vector<float> y1(x.size()), z1(a.size()), y2(x.size()), z2(a.size());
  const std::vector<IoBuffer> in = {{x.data(), x.size() * 4}, {a.data(), a.size() * 4}};
  // Twice: the MatMul reads its released weights in place, faulted back in
  // from the file; the packed Conv no longer needs them.
  for (int round = 0; round < 2; ++round) {
    st = mapped->execute(in, {{y1.data(), y1.size() * 4}, {z1.data(), z1.size() * 4}});
    ASSERT_TRUE(st.ok()) << st.message();
    st = copied->execute(in, {{y2.data(), y2.size() * 4}, {z2.data(), z2.size() * 4}});
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * 4), 0);
    EXPECT_EQ(std::memcmp(z1.data(), z2.data(), z1.size() * 4), 0);
  }
  // z = a @ B against a direct sum (B[k][n] = 0.02 * ((k*256+n) % 13 - 6)).
  for (int r = 0; r < 4; ++r)
    for (int n = 0; n < 256; n += 51) {
      double want = 0;
      for (int k = 0; k < 256; ++k) want += a[r * 256 + k] * 0.02 * ((k * 256 + n) % 13 - 6);
      EXPECT_NEAR(z1[r * 256 + n], want, 1e-3) << r << "," << n;
    }
  std::remove(path.c_str());
}

// Resident bytes of this process's mappings of `path` (/proc/self/smaps);
// -1 when it has none.
int64_t resident_bytes_of(const std::string& path) {
  FILE* f = std::fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  size_t kb = 0;
  bool in = false, found = false;
  char line[4096];
  while (std::fgets(line, sizeof line, f)) {
    size_t n = 0;
    if (std::strchr(line, '-') && std::strchr(line, '-') < std::strchr(line, ' ')) {  // a mapping's first line
      std::string s(line);
      while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
      in = s.size() >= path.size() && s.compare(s.size() - path.size(), path.size(), path) == 0;
      found = found || in;
    } else if (in && std::sscanf(line, "Rss: %zu kB", &n) == 1) {
      kb += n;
    }
  }
  std::fclose(f);
  return found ? static_cast<int64_t>(kb) * 1024 : -1;
}

// y = Gather(table, ids): a 16 MiB table of 16384 rows of 256 floats, 512 ids.
TEST(LoadedModel, MappedFileGatherReadsRowsFromTheFile) {
  constexpr int64_t kRows = 16384, kCols = 256, kIds = 512;
  auto g = std::make_shared<Graph>();
  g->name = "embedding";
  g->opsets()[""] = 17;
  auto* ids = graph_input(*g, "ids", Shape{Dim(kIds)}, DType::kInt64);
  auto* table = pattern_constant(*g, "table", {kRows, kCols}, 0.5f);
  auto* y = g->add_value("y");
  g->add_node("gather", "Gather", {table, ids}, {y}, "", 17);
  const std::string bytes = optimized_om(g, {y});
  std::string path = ::testing::TempDir();
  if (path.empty() || path.back() != '/') path += '/';
  path += "openacl_gather_rows.om";  // as /proc/self/smaps spells it
  std::shared_ptr<LoadedModel> mapped, copied;
  ASSERT_NO_FATAL_FAILURE(load_both_ways(path, bytes, &mapped, &copied));
  Status st;

  // One row in every 32 (one per 32 KiB of the table: through the mapping,
  // at least 512 pages), then a run of consecutive rows read as one,
  // repeats, negatives (from the end), the first and last rows.
  std::vector<int64_t> x(kIds);
  for (int64_t i = 0; i < kIds; ++i) x[i] = (i * 32 + 5) % kRows;
  for (int64_t i = 100; i < 140; ++i) x[i] = 7000 + (i - 100);
  x[200] = x[201] = x[202] = 9;
  x[300] = -1;
  x[301] = -kRows;
  x[302] = kRows - 1;
  x[303] = 0;
  std::vector<float> y1(kIds * kCols), y2(kIds * kCols);
  for (int round = 0; round < 2; ++round) {
    st = mapped->execute({{x.data(), x.size() * 8}}, {{y1.data(), y1.size() * 4}});
    ASSERT_TRUE(st.ok()) << st.message();
    st = copied->execute({{x.data(), x.size() * 8}}, {{y2.data(), y2.size() * 4}});
    ASSERT_TRUE(st.ok()) << st.message();
    ASSERT_EQ(std::memcmp(y1.data(), y2.data(), y1.size() * 4), 0);
  }
  for (int64_t i = 0; i < kIds; ++i) {
    const int64_t row = x[i] < 0 ? x[i] + kRows : x[i];
    for (int64_t c = 0; c < kCols; c += 37)
      ASSERT_EQ(y1[i * kCols + c], 0.5f * static_cast<float>(static_cast<int>((row * kCols + c) % 13) - 6))
          << i << "," << c;
  }
  // The rows were read from the file: the mapping holds no more than the
  // .om's own structures, not the 2 MiB at the least (16 MiB on a Linux 6.18
  // host) that reading the rows through it makes resident.
  const int64_t resident = resident_bytes_of(path);
  EXPECT_GE(resident, 0);  // the mapping is there
  EXPECT_LT(resident, int64_t{1} << 20);
  // An out-of-range id still fails before anything is read.
  x[10] = kRows;
  st = mapped->execute({{x.data(), x.size() * 8}}, {{y1.data(), y1.size() * 4}});
  EXPECT_FALSE(st.ok());
  std::remove(path.c_str());
}

// x [1, 64, 16, 16] -> 3x3 Conv (Winograd: its U is packed) -> 1x1 Conv to
// 32 channels (oneDNN wants its weights blocked) -> y.
std::string packable_om() {
  auto g = std::make_shared<Graph>();
  g->name = "packable";
  g->opsets()[""] = 17;
  // 128 channels: Winograd's threshold on every machine (WinogradConv::applies).
  auto* x = graph_input(*g, "x", Shape{Dim(1), Dim(128), Dim(16), Dim(16)});
  auto* mid = g->add_value("mid");
  auto* y = g->add_value("y");
  conv_padded_by_one(*g, "conv3x3", x, pattern_constant(*g, "W1", {128, 128, 3, 3}, 0.01f), mid);
  g->add_node("conv1x1", "Conv", {mid, pattern_constant(*g, "W2", {32, 128, 1, 1}, 0.02f)}, {y}, "", 17);
  return optimized_om(g, {y});
}

// What atc does: compiles the stored graph with a recording PackCache over
// its weights, then writes the same model with what was recorded. `edit`
// may change the blobs first.
std::string with_packs(const std::string& bytes, std::vector<kernels::PackedBlob>* packs,
                       const std::function<void(std::vector<kernels::PackedBlob>*)>& edit = nullptr) {
  OmView view;
  EXPECT_TRUE(open_om(bytes.data(), bytes.size(), &view).ok());
  std::shared_ptr<Graph> g;
  EXPECT_TRUE(decode_graph(view, view.weights, nullptr, &g).ok());
  kernels::PackCache recorder(kernels::PackCache::Mode::kRecord, view.weights, view.weight_bytes);
  CompileOptions co;
  co.packs = &recorder;
  std::unique_ptr<CompiledModel> cm;
  Status st = CompiledModel::compile(g, co, &cm);
  EXPECT_TRUE(st.ok()) << st.message();
  OmModel om;
  st = read_model(bytes.data(), bytes.size(), "", &om);
  EXPECT_TRUE(st.ok()) << st.message();
  om.packs = recorder.recorded();
  if (edit) edit(&om.packs);
  *packs = om.packs;
  std::string out;
  st = write_om(om, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

std::vector<float> run_packable(LoadedModel& m) {
  std::vector<float> x(128 * 16 * 16), y(32 * 16 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.01f * static_cast<float>(static_cast<int>(i % 23) - 11);
  Status st = m.execute({{x.data(), x.size() * 4}}, {{y.data(), y.size() * 4}});
  EXPECT_TRUE(st.ok()) << st.message();
  return y;
}

TEST(LoadedModel, PackedWeightsFromTheOmAreUsedWhereTheyLie) {
  const std::string plain = packable_om();
  std::vector<kernels::PackedBlob> blobs;
  auto packed = std::make_shared<std::string>(with_packs(plain, &blobs));
  // Both kinds of pack were recorded: the Winograd transform and a reorder.
  size_t winograd = 0, reorder = 0;
  for (const auto& b : blobs) {
    winograd += b.recipe.rfind("winograd", 0) == 0;
    reorder += b.recipe.rfind("reorder", 0) == 0;
  }
  ASSERT_EQ(winograd, 1u);
  ASSERT_EQ(reorder, 1u);
  // The WEIGHTS section is the same bytes at the same place.
  OmView pv, qv;
  ASSERT_TRUE(open_om(plain.data(), plain.size(), &pv).ok());
  ASSERT_TRUE(open_om(packed->data(), packed->size(), &qv).ok());
  ASSERT_EQ(pv.weight_bytes, qv.weight_bytes);
  EXPECT_EQ(std::memcmp(pv.weights, qv.weights, pv.weight_bytes), 0);
  EXPECT_EQ(qv.packed.size(), 2u);

  std::shared_ptr<LoadedModel> reference_model = load(plain), in_place, copied;
  EXPECT_EQ(reference_model->packs(), nullptr);
  // Bytes kept alive: the blobs are used where they lie, every one. (On
  // bytes that are not 64-byte aligned, as a string's may be, they are not.)
  std::shared_ptr<void> aligned(std::aligned_alloc(4096, (packed->size() + 4095) / 4096 * 4096), std::free);
  std::memcpy(aligned.get(), packed->data(), packed->size());
  Status st = LoadedModel::load(aligned.get(), packed->size(), aligned, {}, &in_place);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_NE(in_place->packs(), nullptr);
  EXPECT_EQ(in_place->packs()->used(), 2u);
  // Bytes only lent for the call: copied whole into the model's own memory
  // and the blobs used from there; the caller's bytes may go at once.
  {
    std::string lent = *packed;
    copied = load(lent);
    std::fill(lent.begin(), lent.end(), '\x5a');
  }
  ASSERT_NE(copied->packs(), nullptr);
  EXPECT_EQ(copied->packs()->used(), 2u);
  // Weights in the caller's memory, bytes lent: the weights are copied
  // there, the blobs into memory of the model's, and used from there.
  std::shared_ptr<void> weight_mem(std::aligned_alloc(64, (qv.weight_bytes + 63) / 64 * 64), std::free);
  LoadOptions with_weights;
  with_weights.weight_ptr = weight_mem.get();
  with_weights.weight_size = qv.weight_bytes;
  std::shared_ptr<LoadedModel> into_callers;
  {
    std::string lent = *packed;
    into_callers = load(lent, with_weights);
    std::fill(lent.begin(), lent.end(), '\x5a');
  }
  ASSERT_NE(into_callers->packs(), nullptr);
  EXPECT_EQ(into_callers->packs()->used(), 2u);
  const std::vector<float> want = run_packable(*reference_model);
  const std::vector<float> got = run_packable(*in_place);
  EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * 4), 0);
  const std::vector<float> again = run_packable(*copied);
  EXPECT_EQ(std::memcmp(want.data(), again.data(), want.size() * 4), 0);
  const std::vector<float> repacked = run_packable(*into_callers);
  EXPECT_EQ(std::memcmp(want.data(), repacked.data(), want.size() * 4), 0);

  // Through a mapped file, as aclmdlLoadFromFile does.
  const std::string path = ::testing::TempDir() + "/openacl_packed.om";
  ASSERT_TRUE(write_file(path, *packed));
  std::shared_ptr<LoadedModel> mapped;
  st = LoadedModel::load_file(path, {}, &mapped);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(mapped->packs()->used(), 2u);
  const std::vector<float> from_file = run_packable(*mapped);
  EXPECT_EQ(std::memcmp(want.data(), from_file.data(), want.size() * 4), 0);
  // From the file into the caller's weight memory: the blobs are used where
  // they lie in the mapping.
  std::shared_ptr<void> file_weights(std::aligned_alloc(64, (qv.weight_bytes + 63) / 64 * 64), std::free);
  with_weights.weight_ptr = file_weights.get();
  std::shared_ptr<LoadedModel> file_into_callers;
  st = LoadedModel::load_file(path, with_weights, &file_into_callers);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(file_into_callers->packs()->used(), 2u);
  const std::vector<float> from_file_mem = run_packable(*file_into_callers);
  EXPECT_EQ(std::memcmp(want.data(), from_file_mem.data(), want.size() * 4), 0);
  std::remove(path.c_str());
}

// y = x + c with a constant of n floats (n * 4 bytes of WEIGHTS).
std::string add_constant_om(int64_t n) {
  auto g = std::make_shared<Graph>();
  g->name = "add_constant";
  g->opsets()[""] = 17;
  auto* x = g->add_value("x", TensorType{DType::kFloat32, Shape{Dim(n)}});
  x->is_graph_input = true;
  g->inputs().push_back(x);
  std::vector<float> c(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) c[static_cast<size_t>(i)] = 0.5f * static_cast<float>(i % 7);
  auto* cv = g->add_value("c", TensorType{DType::kFloat32, Shape{Dim(n)}});
  cv->constant = graph::TensorData::copy_of(DType::kFloat32, {n}, c.data(), c.size() * 4);
  auto* y = g->add_value("y");
  g->add_node("add", "Add", {x, cv}, {y}, "", 17);
  y->is_graph_output = true;
  g->outputs().push_back(y);
  OmModel om;
  om.graph = g;
  std::string bytes;
  EXPECT_TRUE(write_om(om, &bytes).ok());
  return bytes;
}

// `good` and `bad` (the same .om with a bit flipped) loaded from memory and
// from a file: `good` loads, `bad` fails with a checksum error naming
// `section` ("WEIGHTS", "PACKED").
void expect_only_intact_loads(const std::string& good, const std::string& bad, const std::string& section) {
  const std::string path = ::testing::TempDir() + "/openacl_corrupted.om";
  const std::string* const corrupted = &bad;
  for (const std::string* bytes : {&good, corrupted}) {
    ASSERT_TRUE(write_file(path, *bytes));
    std::shared_ptr<LoadedModel> from_mem, from_file;
    const Status sm = LoadedModel::load(bytes->data(), bytes->size(), nullptr, {}, &from_mem);
    const Status sf = LoadedModel::load_file(path, {}, &from_file);
    std::remove(path.c_str());
    if (bytes == &good) {
      ASSERT_TRUE(sm.ok()) << sm.message();
      ASSERT_TRUE(sf.ok()) << sf.message();
      continue;
    }
    for (const Status* st : {&sm, &sf}) {
      EXPECT_EQ(st->code(), code::kDeserializeModel) << good.size() << " bytes: " << st->message();
      EXPECT_NE(st->message().find(section + " section checksum"), std::string::npos) << st->message();
    }
    EXPECT_EQ(from_mem, nullptr);
    EXPECT_EQ(from_file, nullptr);
  }
}

// A flipped bit in the weights fails the load, whether their checksum runs
// while the kernels are built (2 MiB loaded from memory: on a helper
// thread) or before them (64 bytes; or a mapped file without PACKED, whose
// WEIGHTS are always checked first); the intact bytes load.
TEST(LoadedModel, CorruptedWeightsFailTheLoad) {
  for (int64_t n : {int64_t{16}, int64_t{1} << 19}) {  // 64 B and 2 MiB of weights
    const std::string good = add_constant_om(n);
    OmView view;
    ASSERT_TRUE(open_om(good.data(), good.size(), &view).ok());
    const size_t weights_at = static_cast<size_t>(view.weights - reinterpret_cast<const uint8_t*>(good.data()));
    std::string bad = good;
    bad[weights_at + view.weight_bytes / 2] ^= 0x08;
    expect_only_intact_loads(good, bad, "WEIGHTS");
  }
}

// A flipped bit in a packed blob fails the load (PACKED over 1 MiB: its
// checksum runs on a helper thread while the kernels are built, WEIGHTS'
// before them), from memory and from a file; the intact bytes load.
TEST(LoadedModel, CorruptedPackedWeightsFailTheLoad) {
  std::vector<kernels::PackedBlob> blobs;
  const std::string good = with_packs(packable_om(), &blobs);
  OmView view;
  ASSERT_TRUE(open_om(good.data(), good.size(), &view).ok());
  ASSERT_FALSE(view.packed.empty());
  size_t packed_bytes = 0;
  for (const kernels::PackedBlob& b : view.packed) packed_bytes += b.bytes;
  ASSERT_GE(packed_bytes, size_t{1} << 20);
  const kernels::PackedBlob& blob = view.packed.back();
  std::string bad = good;
  bad[static_cast<size_t>(static_cast<const char*>(blob.data) - good.data()) + blob.bytes / 2] ^= 0x10;
  expect_only_intact_loads(good, bad, "PACKED");
}

// A blob whose recipe this machine does not use (another CPU, another
// oneDNN, an older transform) is left alone: the kernel packs its own.
TEST(LoadedModel, PackedBlobOfAnotherRecipeIsIgnored) {
  const std::string plain = packable_om();
  std::vector<kernels::PackedBlob> blobs;
  auto packed = std::make_shared<std::string>(with_packs(plain, &blobs, [](std::vector<kernels::PackedBlob>* b) {
    ASSERT_EQ(b->size(), 2u);
    (*b)[0].recipe += " (another machine)";
    // The same recipe, but its bytes zeroed and a size no kernel asks for.
    static const std::vector<char> zeros(4096, 0);
    (*b)[1].data = zeros.data();
    (*b)[1].bytes = zeros.size();
  }));
  const std::string path = ::testing::TempDir() + "/openacl_packed_other.om";
  ASSERT_TRUE(write_file(path, *packed));
  std::shared_ptr<LoadedModel> m;
  Status st = LoadedModel::load_file(path, {}, &m);
  std::remove(path.c_str());
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_NE(m->packs(), nullptr);
  EXPECT_EQ(m->packs()->used(), 0u);
  const std::vector<float> want = run_packable(*load(plain));
  const std::vector<float> got = run_packable(*m);
  EXPECT_EQ(std::memcmp(want.data(), got.data(), want.size() * 4), 0);
}

// alloc_pages (packed weights, arenas): aligned, usable end to end,
// populated or not; a size that cannot be had is an empty buffer, not a
// wrapped-around small one.
TEST(PageAlloc, AlignedUsableAndRefusesImpossibleSizes) {
  for (size_t bytes : {size_t{0}, size_t{100}, size_t{300} << 10, size_t{5} << 20}) {
    PageBuffer b = alloc_pages(bytes);
    ASSERT_TRUE(b) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.get()) % 64, 0u) << bytes;
    std::memset(b.get(), 0x5a, bytes ? bytes : 1);
    EXPECT_EQ(static_cast<unsigned char*>(b.get())[bytes ? bytes - 1 : 0], 0x5a);
  }
  EXPECT_FALSE(alloc_pages(SIZE_MAX));
  EXPECT_FALSE(alloc_pages(SIZE_MAX - 10));
}

// populate_pages (the weight copy in device memory) keeps what is there, on
// unaligned ranges too, and ignores null and small ranges.
TEST(PageAlloc, PopulateKeepsContents) {
  const size_t bytes = size_t{3} << 20;
  std::vector<unsigned char> buf(bytes + 100);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>(i * 7);
  populate_pages(buf.data() + 13, bytes);
  populate_pages(buf.data(), 10);
  populate_pages(nullptr, bytes);
  for (size_t i = 0; i < buf.size(); ++i) ASSERT_EQ(buf[i], static_cast<unsigned char>(i * 7)) << i;
}

// release_pages hands back only whole pages inside the range and says how
// many bytes; null, empty, sub-page and wrapping ranges release nothing.
TEST(PageAlloc, ReleaseOnlyWholePagesInside) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  void* raw = ::mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(raw, MAP_FAILED);
  auto* p = static_cast<unsigned char*>(raw);
  std::memset(p, 0x5a, 4 * page);
  EXPECT_EQ(release_pages(nullptr, page), 0u);
  EXPECT_EQ(release_pages(p, 0), 0u);
  EXPECT_EQ(release_pages(p + 1, page), 0u);  // no whole page inside
  EXPECT_EQ(release_pages(p + 1, SIZE_MAX), 0u);
  EXPECT_EQ(p[1], 0x5a);
  // From the middle of page 0 to the middle of page 3: pages 1 and 2 go
  // (anonymous memory reads back as zeros), 0 and 3 keep their bytes.
  EXPECT_EQ(release_pages(p + page / 2, 3 * page), 2 * page);
  EXPECT_EQ(p[page - 1], 0x5a);
  EXPECT_EQ(p[page], 0);
  EXPECT_EQ(p[3 * page - 1], 0);
  EXPECT_EQ(p[3 * page], 0x5a);
  ::munmap(raw, 4 * page);
}

TEST(LoadedModel, RefusesWhatItCannotRead) {
  std::shared_ptr<LoadedModel> m;
  const std::string junk = "definitely not a model";
  Status st = LoadedModel::load(junk.data(), junk.size(), nullptr, {}, &m);
  EXPECT_EQ(st.code(), code::kParseModel) << st.message();
  uint8_t cann[256] = {0x49, 0x4D, 0x4F, 0x44};
  st = LoadedModel::load(cann, sizeof cann, nullptr, {}, &m);
  EXPECT_EQ(st.code(), code::kDeserializeModel);
  EXPECT_NE(st.message().find("atc"), std::string::npos) << st.message();
  st = LoadedModel::load_file("/nonexistent/model.om", {}, &m);
  EXPECT_EQ(st.code(), code::kInvalidFile) << st.message();
  const std::string bytes = om_bytes(2);
  for (size_t cut : {size_t(10), bytes.size() / 2, bytes.size() - 1}) {
    st = LoadedModel::load(bytes.data(), cut, nullptr, {}, &m);
    EXPECT_FALSE(st.ok()) << cut;
  }
}

}  // namespace
}  // namespace openacl::model
