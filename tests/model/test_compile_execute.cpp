// Compile + execute through the public internals of the model layer, with test
// ops registered here (so the framework is tested independently of the real
// kernels): static plans, dynamic shapes, data-dependent outputs, constant
// folding, dead-node removal, error reporting, input checks, concurrency.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "graph/op_schema.h"
#include "kernels/kernel.h"
#include "model/compiled_model.h"
#include "model/executor.h"

namespace openacl::model {
namespace {

using graph::DType;
using graph::Graph;
using graph::Shape;
using graph::TensorType;
using graph::Value;
using kernels::KernelContext;
using kernels::Tensor;

Status same_shape(graph::ShapeContext& c) {
  c.output(0) = c.input(0);
  return Status::Ok();
}

// TestTwice: y = 2x (float32), in place allowed.
OPENACL_REGISTER_OP(TestTwice).inputs(1, 1).outputs(1, 1).shape(same_shape);
OPENACL_REGISTER_KERNEL(TestTwice, "cpu").types({DType::kFloat32}).in_place(0, 0).run([](KernelContext& c) {
  const float* x = c.input(0).as<float>();
  float* y = c.output(0).as<float>();
  for (int64_t i = 0; i < c.input(0).elements(); ++i) y[i] = 2 * x[i];
  return Status::Ok();
});

// TestAdd: y = a + b, same shapes (float32).
OPENACL_REGISTER_OP(TestAdd).inputs(2, 2).outputs(1, 1).shape(same_shape);
OPENACL_REGISTER_KERNEL(TestAdd, "cpu").types({DType::kFloat32}).run([](KernelContext& c) {
  if (c.input(0).dims != c.input(1).dims) return c.fail("shapes differ");
  for (int64_t i = 0; i < c.input(0).elements(); ++i)
    c.output(0).as<float>()[i] = c.input(0).as<float>()[i] + c.input(1).as<float>()[i];
  return Status::Ok();
});

// TestPositive: the positive elements of x, as a 1-D tensor (data-dependent size).
OPENACL_REGISTER_OP(TestPositive).inputs(1, 1).outputs(1, 1).shape([](graph::ShapeContext& c) {
  c.output(0).dtype = c.input(0).dtype;
  c.output(0).shape = Shape{graph::Dim()};
  return Status::Ok();
});
OPENACL_REGISTER_KERNEL(TestPositive, "cpu").types({DType::kFloat32}).run([](KernelContext& c) {
  const Tensor& x = c.input(0);
  std::vector<float> keep;
  for (int64_t i = 0; i < x.elements(); ++i)
    if (x.as<float>()[i] > 0) keep.push_back(x.as<float>()[i]);
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(c.allocate_output(0, {static_cast<int64_t>(keep.size())}, &y));
  if (!keep.empty()) std::memcpy(y->data, keep.data(), keep.size() * sizeof(float));
  return Status::Ok();
});

// TestSlowBuild: y = x. Its kernel takes a while to build, as a JIT or a
// weight repack does, notes the thread that built it, and refuses to build
// when attribute fail = 1.
std::mutex g_build_mu;
std::set<std::thread::id> g_build_threads;
class TestCopyKernel final : public kernels::Kernel {
 public:
  Status run(KernelContext& c) const override {
    std::memcpy(c.output(0).data, c.input(0).data, static_cast<size_t>(c.input(0).elements()) * sizeof(float));
    return Status::Ok();
  }
};
OPENACL_REGISTER_OP(TestSlowBuild).inputs(1, 1).outputs(1, 1).shape(same_shape);
OPENACL_REGISTER_KERNEL(TestSlowBuild, "cpu")
    .types({DType::kFloat32})
    .create([](const kernels::KernelInit& init, std::unique_ptr<kernels::Kernel>* out) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      {
        std::lock_guard<std::mutex> lock(g_build_mu);
        g_build_threads.insert(std::this_thread::get_id());
      }
      if (init.attrs().get_int("fail", 0)) return init.fail("refused to build");
      *out = std::make_unique<TestCopyKernel>();
      return Status::Ok();
    });

// TestNoKernel: has a schema but no kernel.
OPENACL_REGISTER_OP(TestNoKernel).inputs(1, 1).outputs(1, 1).shape(same_shape);

TensorType f32(Shape s) { return TensorType{DType::kFloat32, std::move(s)}; }

Value* input(Graph& g, const std::string& name, Shape s) {
  Value* v = g.add_value(name, f32(std::move(s)));
  v->is_graph_input = true;
  g.inputs().push_back(v);
  return v;
}
void mark_output(Graph& g, Value* v) {
  v->is_graph_output = true;
  g.outputs().push_back(v);
}

std::shared_ptr<const CompiledModel> compile(std::unique_ptr<Graph> g, Status* st, CompileOptions opt = {}) {
  std::unique_ptr<CompiledModel> m;
  *st = CompiledModel::compile(std::move(g), opt, &m);
  return std::shared_ptr<const CompiledModel>(std::move(m));
}

Tensor view(std::vector<float>& v, std::vector<int64_t> dims) { return Tensor{DType::kFloat32, std::move(dims), v.data()}; }

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.as<float>(), t.as<float>() + t.elements()); }

// x -> TestTwice -> a; (a, x) -> TestAdd -> b; b -> TestTwice -> y  (y = 6x)
std::unique_ptr<Graph> chain(Shape s) {
  auto g = std::make_unique<Graph>();
  Value* x = input(*g, "x", s);
  Value* a = g->add_value("a");
  Value* b = g->add_value("b");
  Value* y = g->add_value("y");
  g->add_node("t1", "TestTwice", {x}, {a}, "", 1);
  g->add_node("add", "TestAdd", {a, x}, {b}, "", 1);
  g->add_node("t2", "TestTwice", {b}, {y}, "", 1);
  mark_output(*g, y);
  return g;
}

TEST(CompileExecute, StaticModelRunsFromItsPlan) {
  Status st;
  auto m = compile(chain({2, 3}), &st);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(m->is_static());
  EXPECT_EQ(m->nodes().size(), 3u);
  EXPECT_TRUE(planner::validate(m->plan()).ok());
  Executor e(m);
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<Tensor> out;
  for (int rep = 0; rep < 2; ++rep) {
    ASSERT_TRUE(e.run({view(x, {2, 3})}, &out).ok());
    EXPECT_EQ(values(out[0]), (std::vector<float>{6, 12, 18, 24, 30, 36}));
    EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2, 3}));
  }
  EXPECT_EQ(e.work_bytes() % 64, 0u);
  EXPECT_GE(e.work_bytes(), m->plan().work_size);
}

TEST(CompileExecute, DynamicModelTakesAnyShape) {
  Status st;
  auto m = compile(chain({graph::Dim::symbolic("N"), 2}), &st);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_FALSE(m->is_static());
  Executor e(m);
  std::vector<Tensor> out;
  std::vector<float> x1 = {1, 2}, x3 = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(e.run({view(x1, {1, 2})}, &out).ok());
  EXPECT_EQ(values(out[0]), (std::vector<float>{6, 12}));
  ASSERT_TRUE(e.run({view(x3, {3, 2})}, &out).ok());
  EXPECT_EQ(values(out[0]), (std::vector<float>{6, 12, 18, 24, 30, 36}));
  const size_t held = e.work_bytes();
  ASSERT_TRUE(e.run({view(x3, {3, 2})}, &out).ok());
  EXPECT_EQ(e.work_bytes(), held) << "a repeated shape reuses the pool's blocks";
  // The symbolic dim is free, the known one is checked.
  std::vector<float> bad(6);
  Status r = e.run({view(bad, {2, 3})}, &out);
  EXPECT_EQ(r.code(), code::kInvalidParam);
  EXPECT_NE(r.message().find("'x'"), std::string::npos) << r.message();
}

TEST(CompileExecute, DataDependentOutputShape) {
  auto g = std::make_unique<Graph>();
  Value* x = input(*g, "x", {4});
  Value* p = g->add_value("p");
  Value* y = g->add_value("y");
  g->add_node("pos", "TestPositive", {x}, {p}, "", 1);
  g->add_node("twice", "TestTwice", {p}, {y}, "", 1);
  mark_output(*g, y);
  Status st;
  auto m = compile(std::move(g), &st);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_FALSE(m->is_static());
  Executor e(m);
  std::vector<float> v = {-1, 2, -3, 4};
  std::vector<Tensor> out;
  ASSERT_TRUE(e.run({view(v, {4})}, &out).ok());
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{2}));
  EXPECT_EQ(values(out[0]), (std::vector<float>{4, 8}));
  std::vector<float> none = {-1, -2, -3, -4};
  ASSERT_TRUE(e.run({view(none, {4})}, &out).ok());
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{0}));
}

TEST(CompileExecute, ConstantsFoldAndDeadNodesGo) {
  auto g = std::make_unique<Graph>();
  Value* x = input(*g, "x", {3});
  Value* w = g->add_value("w", f32({3}));
  std::vector<float> wv = {1, 2, 3};
  w->constant = graph::TensorData::copy_of(DType::kFloat32, {3}, wv.data(), sizeof(float) * 3);
  Value* w2 = g->add_value("w2");
  Value* y = g->add_value("y");
  Value* unused = g->add_value("unused");
  g->add_node("fold_me", "TestTwice", {w}, {w2}, "", 1);   // constant input: folded
  g->add_node("add", "TestAdd", {x, w2}, {y}, "", 1);
  g->add_node("dead", "TestTwice", {x}, {unused}, "", 1);  // nobody reads it
  mark_output(*g, y);
  Status st;
  auto m = compile(std::move(g), &st);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(m->folded_nodes(), 1u);
  EXPECT_EQ(m->removed_nodes(), 1u);
  ASSERT_EQ(m->nodes().size(), 1u);
  EXPECT_EQ(m->nodes()[0].node->name, "add");
  Executor e(m);
  std::vector<float> xv = {10, 20, 30};
  std::vector<Tensor> out;
  ASSERT_TRUE(e.run({view(xv, {3})}, &out).ok());
  EXPECT_EQ(values(out[0]), (std::vector<float>{12, 24, 36}));
}

TEST(CompileExecute, EveryNodeThatCannotRunIsListed) {
  auto g = std::make_unique<Graph>();
  Value* x = input(*g, "x", {2});
  Value* a = g->add_value("a");
  Value* b = g->add_value("b");
  Value* c = g->add_value("c");
  g->add_node("n1", "TestNoKernel", {x}, {a}, "", 1);
  g->add_node("n2", "NotAnOp", {a}, {b}, "", 1);
  g->add_node("n3", "TestNoKernel", {x}, {c}, "", 1);
  mark_output(*g, b);
  mark_output(*g, c);
  Status st;
  compile(std::move(g), &st);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("n2"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("not supported"), std::string::npos) << st.message();
  // The shape step fails first (n2 unknown), so the kernel step is not reached;
  // a graph of only schema-known ops reports every missing kernel.
  auto g2 = std::make_unique<Graph>();
  Value* x2 = input(*g2, "x", {2});
  Value* a2 = g2->add_value("a");
  Value* c2 = g2->add_value("c");
  g2->add_node("n1", "TestNoKernel", {x2}, {a2}, "", 1);
  g2->add_node("n3", "TestNoKernel", {x2}, {c2}, "", 1);
  mark_output(*g2, a2);
  mark_output(*g2, c2);
  compile(std::move(g2), &st);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("2 node(s)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'n1'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'n3'"), std::string::npos) << st.message();
}

// Kernels are built in parallel (compute threads permitting), but the
// compiled nodes and the list of those that failed keep the graph's order.
TEST(CompileExecute, KernelsBuiltInParallelKeepTheNodeOrder) {
#if defined(_OPENMP)
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);
#endif
  auto build = [](std::set<int> failing, Status* st) {
    auto g = std::make_unique<Graph>();
    Value* x = input(*g, "x", {3});
    for (int i = 0; i < 12; ++i) {
      Value* y = g->add_value("y" + std::to_string(i));
      graph::Node* n = g->add_node("n" + std::to_string(i), "TestSlowBuild", {x}, {y}, "", 1);
      graph::Attribute fail;
      fail.kind = graph::Attribute::Kind::kInt;
      fail.i = failing.count(i) ? 1 : 0;
      n->attrs.set("fail", fail);
      mark_output(*g, y);
    }
    return compile(std::move(g), st);
  };
  g_build_threads.clear();
  Status st;
  auto m = build({}, &st);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(m->nodes().size(), 12u);
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(m->nodes()[i].node->name, "n" + std::to_string(i));
  Executor e(m);
  std::vector<float> xv = {1, -2, 3};
  std::vector<Tensor> out;
  ASSERT_TRUE(e.run({view(xv, {3})}, &out).ok());
  ASSERT_EQ(out.size(), 12u);
  for (const Tensor& t : out) EXPECT_EQ(values(t), xv);
#if defined(_OPENMP)
  EXPECT_EQ(g_build_threads.size(), 2u);  // twelve 5 ms builds, two threads: both took some
#endif
  build({9, 2, 5}, &st);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("3 node(s)"), std::string::npos) << st.message();
  const size_t p2 = st.message().find("'n2'"), p5 = st.message().find("'n5'"), p9 = st.message().find("'n9'");
  ASSERT_NE(p9, std::string::npos) << st.message();
  EXPECT_LT(p2, p5) << st.message();
  EXPECT_LT(p5, p9) << st.message();
#if defined(_OPENMP)
  omp_set_num_threads(threads);
#endif
}

TEST(CompileExecute, KernelTypeMismatchNamesTheTypes) {
  auto g = std::make_unique<Graph>();
  Value* x = g->add_value("x", TensorType{DType::kFloat64, Shape{2}});
  x->is_graph_input = true;
  g->inputs().push_back(x);
  Value* y = g->add_value("y");
  g->add_node("t", "TestTwice", {x}, {y}, "", 1);
  mark_output(*g, y);
  Status st;
  compile(std::move(g), &st);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("float64"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("float32"), std::string::npos) << st.message();
}

TEST(CompileExecute, InputsAreChecked) {
  Status st;
  auto m = compile(chain({2}), &st);
  ASSERT_TRUE(st.ok());
  Executor e(m);
  std::vector<Tensor> out;
  std::vector<float> v(2);
  EXPECT_EQ(e.run({}, &out).code(), code::kInvalidParam);
  Tensor wrong_type{DType::kInt32, {2}, v.data()};
  Status r = e.run({wrong_type}, &out);
  EXPECT_NE(r.message().find("int32"), std::string::npos) << r.message();
  EXPECT_EQ(e.run({view(v, {3})}, &out).code(), code::kInvalidParam);
  Tensor no_data{DType::kFloat32, {2}, nullptr};
  EXPECT_EQ(e.run({no_data}, &out).code(), code::kInvalidParam);
}

TEST(CompileExecute, InputShapeOverride) {
  CompileOptions opt;
  opt.input_shapes["x"] = Shape{4};
  Status st;
  auto m = compile(chain({graph::Dim::symbolic("N")}), &st, opt);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(m->is_static());
  opt.input_shapes.clear();
  opt.input_shapes["nope"] = Shape{4};
  compile(chain({2}), &st, opt);
  EXPECT_NE(st.message().find("nope"), std::string::npos) << st.message();
}

TEST(CompileExecute, ExecutorsShareOneCompiledModel) {
  Status st;
  auto m = compile(chain({1000}), &st);
  ASSERT_TRUE(st.ok());
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Executor e(m);
      std::vector<float> x(1000, static_cast<float>(t + 1));
      std::vector<Tensor> out;
      for (int rep = 0; rep < 50; ++rep) {
        if (!e.run({view(x, {1000})}, &out).ok()) return;
        for (float y : values(out[0]))
          if (y != 6.0f * (t + 1)) return;
      }
      ok[t] = 1;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok, (std::vector<int>{1, 1, 1, 1}));
}

// If with branches that read an outer value (a capture): then = 2a, else = a,
// where a = 2x is computed in the outer graph.
TEST(CompileExecute, IfBranchesReadOuterValues) {
  auto g = std::make_unique<Graph>();
  Value* cond = g->add_value("cond", TensorType{DType::kBool, Shape{}});
  cond->is_graph_input = true;
  g->inputs().push_back(cond);
  Value* x = input(*g, "x", {2});
  Value* a = g->add_value("a");
  g->add_node("pre", "TestTwice", {x}, {a}, "", 1);
  auto branch = [&](bool twice) {
    auto b = std::make_shared<Graph>();
    Value* cap = b->add_value("a", f32({2}));  // a capture: no producer, not an input
    Value* out = b->add_value(twice ? "t_out" : "e_out", f32({2}));
    b->add_node(twice ? "t" : "e", twice ? "TestTwice" : "Identity", {cap}, {out}, "", 1);
    mark_output(*b, out);
    return b;
  };
  Value* y = g->add_value("y");
  graph::Node* n = g->add_node("if", "If", {cond}, {y}, "", 1);
  graph::Attribute t, e;
  t.kind = e.kind = graph::Attribute::Kind::kGraph;
  t.g = branch(true);
  e.g = branch(false);
  n->attrs.set("then_branch", t);
  n->attrs.set("else_branch", e);
  mark_output(*g, y);
  Status st;
  auto m = compile(std::move(g), &st);
  ASSERT_TRUE(st.ok()) << st.message();
  Executor ex(m);
  std::vector<float> xv = {1, 2};
  std::vector<Tensor> out;
  for (uint8_t c : {1, 0}) {
    Tensor ct{DType::kBool, {}, &c};
    ASSERT_TRUE(ex.run({ct, view(xv, {2})}, &out).ok());
    EXPECT_EQ(values(out[0]), c ? (std::vector<float>{4, 8}) : (std::vector<float>{2, 4}));
  }
}

}  // namespace
}  // namespace openacl::model
