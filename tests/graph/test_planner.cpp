// Memory planner: lifetimes, offsets, in-place reuse, weights, errors, and a
// randomized check of validity and closeness to the lower bound.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "graph/op_schema.h"
#include "planner/memory_plan.h"

namespace openacl::planner {
namespace {

using graph::DType;
using graph::Graph;
using graph::Node;
using graph::Shape;
using graph::TensorType;
using graph::Value;

// Small helper building graphs of float tensors.
struct Builder {
  Graph g;
  int nodes = 0;

  Value* input(const std::string& name, Shape shape) {
    Value* v = g.add_value(name, TensorType{DType::kFloat32, std::move(shape)});
    v->is_graph_input = true;
    g.inputs().push_back(v);
    return v;
  }
  Value* constant(const std::string& name, size_t floats) {
    std::vector<float> data(floats, 1.0f);
    Value* v = g.add_value(name, TensorType{DType::kFloat32, Shape{static_cast<int64_t>(floats)}});
    v->constant = graph::TensorData::copy_of(DType::kFloat32, {static_cast<int64_t>(floats)}, data.data(),
                                             floats * sizeof(float));
    return v;
  }
  // One node `op` reading `ins`, writing one new value of `shape`.
  Value* op(const std::string& op_type, std::vector<Value*> ins, Shape shape, const std::string& name = "") {
    std::string n = name.empty() ? op_type + std::to_string(nodes) : name;
    Value* out = g.add_value(n + "_out", TensorType{DType::kFloat32, std::move(shape)});
    g.add_node(n, op_type, std::move(ins), {out});
    ++nodes;
    return out;
  }
  void output(Value* v) {
    v->is_graph_output = true;
    g.outputs().push_back(v);
  }
};

MemoryPlan plan_ok(const Graph& g, const PlanOptions& opt = {}) {
  MemoryPlan p;
  Status st = plan_memory(g, opt, &p);
  EXPECT_TRUE(st.ok()) << st.message();
  Status v = validate(p);
  EXPECT_TRUE(v.ok()) << v.message() << "\n" << p.to_string();
  EXPECT_GE(p.work_size, p.lower_bound);
  return p;
}

PlanOptions always_in_place() {
  PlanOptions o;
  o.can_alias = [](const Node&, size_t, size_t) { return true; };
  return o;
}

constexpr size_t kS = 4032;  // 1000 floats rounded up to 64

TEST(Planner, EmptyGraph) {
  Graph g;
  MemoryPlan p = plan_ok(g);
  EXPECT_EQ(p.work_size, 0u);
  EXPECT_EQ(p.weight_size, 0u);
  EXPECT_TRUE(p.order.empty());
}

TEST(Planner, ChainPingPongs) {
  Builder b;
  Value* v = b.input("x", {1000});
  for (int i = 0; i < 6; ++i) v = b.op("Relu", {v}, {1000});
  b.output(v);
  MemoryPlan p = plan_ok(b.g);
  ASSERT_EQ(p.work.size(), 6u);
  EXPECT_EQ(p.work[0].bytes, kS);
  EXPECT_EQ(p.lower_bound, 2 * kS);
  EXPECT_EQ(p.work_size, 2 * kS);
  EXPECT_EQ(p.find(b.g.find_value("x")), nullptr);  // graph inputs are user memory
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(p.work[i].first_use, i);
    EXPECT_EQ(p.work[i].last_use, i + 1);
  }
}

TEST(Planner, ChainInPlaceUsesOneSlot) {
  Builder b;
  Value* v = b.input("x", {1000});
  for (int i = 0; i < 6; ++i) v = b.op("Relu", {v}, {1000});
  b.output(v);
  MemoryPlan p = plan_ok(b.g, always_in_place());
  EXPECT_EQ(p.work_size, kS);
  EXPECT_EQ(p.lower_bound, kS);
  EXPECT_EQ(p.work[0].in_place_of, nullptr);  // its input is a graph input: not ours to overwrite
  for (size_t i = 1; i < p.work.size(); ++i) {
    EXPECT_EQ(p.work[i].in_place_of, p.work[i - 1].value);
    EXPECT_EQ(p.work[i].offset, p.work[0].offset);
  }
  EXPECT_NE(p.to_string().find("in place of"), std::string::npos);
}

TEST(Planner, InPlaceOnlyWhereDeclared) {
  Builder b;
  Value* v = b.input("x", {1000});
  v = b.op("Conv", {v}, {1000});
  v = b.op("Relu", {v}, {1000});
  v = b.op("Conv", {v}, {1000});
  v = b.op("Relu", {v}, {1000});
  b.output(v);
  PlanOptions o;
  o.can_alias = [](const Node& n, size_t in, size_t out) { return n.op_type == "Relu" && in == 0 && out == 0; };
  MemoryPlan p = plan_ok(b.g, o);
  int in_place = 0;
  for (const Buffer& buf : p.work) {
    if (buf.in_place_of) {
      ++in_place;
      EXPECT_EQ(buf.value->producer->op_type, "Relu");
    }
  }
  EXPECT_EQ(in_place, 2);
  EXPECT_EQ(p.work_size, 2 * kS);
}

TEST(Planner, DiamondKeepsSharedInputAlive) {
  Builder b;
  Value* x = b.input("x", {1000});
  Value* a = b.op("Relu", {x}, {1000}, "a");
  Value* l = b.op("Relu", {a}, {1000}, "l");
  Value* r = b.op("Relu", {a}, {1000}, "r");
  Value* d = b.op("Add", {l, r}, {1000}, "d");
  b.output(d);
  MemoryPlan p = plan_ok(b.g, always_in_place());
  const Buffer* ba = p.find(a);
  ASSERT_NE(ba, nullptr);
  EXPECT_EQ(ba->last_use, 2);
  EXPECT_EQ(p.find(l)->in_place_of, nullptr);  // a is still read by r
  EXPECT_EQ(p.find(r)->in_place_of, a);        // a dies at r
  EXPECT_EQ(p.find(d)->in_place_of, l);        // first input that dies at d
  EXPECT_EQ(p.lower_bound, 2 * kS);
  EXPECT_EQ(p.work_size, 2 * kS);

  MemoryPlan q = plan_ok(b.g);  // no in-place: a, l, r live together
  EXPECT_EQ(q.lower_bound, 3 * kS);
  EXPECT_EQ(q.work_size, 3 * kS);
}

TEST(Planner, SameValueTwiceIsNotOverwritten) {
  Builder b;
  Value* x = b.input("x", {1000});
  Value* a = b.op("Relu", {x}, {1000});
  Value* m = b.op("Mul", {a, a}, {1000});
  b.output(m);
  MemoryPlan p = plan_ok(b.g, always_in_place());
  EXPECT_EQ(p.find(m)->in_place_of, nullptr);
}

TEST(Planner, LargerOutputDoesNotReuseSmallerInput) {
  Builder b;
  Value* x = b.input("x", {1000});
  Value* a = b.op("Relu", {x}, {1000});
  Value* c = b.op("Concat", {a}, {2000});
  b.output(c);
  MemoryPlan p = plan_ok(b.g, always_in_place());
  EXPECT_EQ(p.find(c)->in_place_of, nullptr);
}

TEST(Planner, TwoOutputsCannotShareOneDyingInput) {
  Builder b;
  Value* x = b.input("x", {1000});
  Value* a = b.op("Relu", {x}, {1000});
  Value* o1 = b.g.add_value("o1", TensorType{DType::kFloat32, Shape{1000}});
  Value* o2 = b.g.add_value("o2", TensorType{DType::kFloat32, Shape{1000}});
  b.g.add_node("split", "Split", {a}, {o1, o2});
  b.output(o1);
  b.output(o2);
  MemoryPlan p = plan_ok(b.g, always_in_place());
  EXPECT_EQ(p.find(o1)->in_place_of, a);
  EXPECT_EQ(p.find(o2)->in_place_of, nullptr);
  EXPECT_NE(p.find(o1)->offset, p.find(o2)->offset);
}

TEST(Planner, ResidualBlocks) {
  // ResNet-like: x -> [conv, relu, conv] + skip -> relu, repeated; sizes vary by stage.
  Builder b;
  Value* v = b.input("x", {1, 64, 56, 56});
  int64_t c = 64, hw = 56;
  for (int stage = 0; stage < 3; ++stage) {
    for (int blk = 0; blk < 2; ++blk) {
      Value* skip = v;
      Value* t = b.op("Conv", {v}, {1, c, hw, hw});
      t = b.op("Relu", {t}, {1, c, hw, hw});
      t = b.op("Conv", {t}, {1, c, hw, hw});
      t = b.op("Add", {t, skip}, {1, c, hw, hw});
      v = b.op("Relu", {t}, {1, c, hw, hw});
    }
    c *= 2;
    hw /= 2;
    v = b.op("Conv", {v}, {1, c, hw, hw});
  }
  b.output(b.op("GlobalAveragePool", {v}, {1, c, 1, 1}));
  MemoryPlan p = plan_ok(b.g);
  EXPECT_LE(p.ratio(), 1.25) << p.to_string();
  PlanOptions o;
  o.can_alias = [](const Node& n, size_t, size_t) { return n.op_type == "Relu" || n.op_type == "Add"; };
  MemoryPlan q = plan_ok(b.g, o);
  EXPECT_LE(q.ratio(), 1.25) << q.to_string();
  // The peak is at the second conv (skip, relu, conv out all live), where nothing
  // runs in place; in place helps elsewhere but cannot lower the arena.
  EXPECT_LE(q.work_size, p.work_size);
  int in_place = 0;
  for (const Buffer& buf : q.work) in_place += buf.in_place_of != nullptr;
  EXPECT_EQ(in_place, 6 * 3);  // per block: Relu over conv1, Add over conv2, Relu over the Add
}

TEST(Planner, ManyBranches) {
  Builder b;
  Value* x = b.input("x", {1, 256});
  Value* a = b.op("Relu", {x}, {1, 256});
  std::vector<Value*> branches;
  for (int i = 0; i < 32; ++i) {
    Value* t = b.op("MatMul", {a}, {1, 64 * (1 + i % 7)});
    branches.push_back(b.op("Relu", {t}, {1, 64 * (1 + i % 7)}));
  }
  b.output(b.op("Concat", branches, {1, 64 * 32 * 4}));
  MemoryPlan p = plan_ok(b.g);
  EXPECT_LE(p.ratio(), 1.25) << p.to_string();
}

TEST(Planner, GraphOutputsLiveToTheEnd) {
  Builder b;
  Value* x = b.input("x", {1000});
  Value* early = b.op("Relu", {x}, {1000}, "early");
  Value* v = early;
  for (int i = 0; i < 4; ++i) v = b.op("Relu", {v}, {1000});
  b.output(early);
  b.output(v);
  MemoryPlan p = plan_ok(b.g, always_in_place());
  const int last = static_cast<int>(p.order.size()) - 1;
  EXPECT_EQ(p.find(early)->last_use, last);
  EXPECT_EQ(p.find(v)->last_use, last);
  for (const Buffer& buf : p.work) EXPECT_NE(buf.in_place_of, early);  // outputs are never overwritten
  EXPECT_EQ(p.lower_bound, 2 * kS);  // early + one slot the chain reuses in place
  EXPECT_EQ(p.work_size, 2 * kS);
  MemoryPlan r = plan_ok(b.g);
  EXPECT_EQ(r.lower_bound, 3 * kS);  // early + a ping-pong pair
  EXPECT_EQ(r.find(early)->last_use, last);

  PlanOptions o = always_in_place();
  o.outputs_in_work_arena = false;  // the caller brings output buffers
  MemoryPlan q = plan_ok(b.g, o);
  EXPECT_EQ(q.find(early), nullptr);
  EXPECT_EQ(q.find(v), nullptr);
  EXPECT_EQ(q.work.size(), 3u);
}

TEST(Planner, UnusedOutputLivesOneStep) {
  Builder b;
  Value* x = b.input("x", {1000});
  Value* y = b.g.add_value("y", TensorType{DType::kFloat32, Shape{1000}});
  Value* mask = b.g.add_value("mask", TensorType{DType::kBool, Shape{1000}});
  b.g.add_node("drop", "Dropout", {x}, {y, mask});
  b.output(b.op("Relu", {y}, {1000}));
  MemoryPlan p = plan_ok(b.g);
  ASSERT_NE(p.find(mask), nullptr);
  EXPECT_EQ(p.find(mask)->first_use, 0);
  EXPECT_EQ(p.find(mask)->last_use, 0);
  EXPECT_EQ(p.find(mask)->bytes, 1024u);
}

TEST(Planner, WeightsArePackedAligned) {
  Builder b;
  Value* x = b.input("x", {10});
  Value* w1 = b.constant("w1", 10);   // 40 bytes -> 64
  Value* w2 = b.constant("w2", 100);  // 400 -> 448
  Value* unused = b.constant("unused", 1000);
  Value* w3 = b.constant("w3", 16);  // 64 -> 64
  Value* v = b.op("Add", {x, w1}, {10});
  v = b.op("MatMul", {v, w2}, {10});
  v = b.op("Add", {v, w3}, {10});
  b.output(v);
  MemoryPlan p = plan_ok(b.g);
  ASSERT_EQ(p.weights.size(), 3u);
  EXPECT_EQ(p.find(unused), nullptr);
  EXPECT_EQ(p.find(w1)->offset, 0u);
  EXPECT_EQ(p.find(w2)->offset, 64u);
  EXPECT_EQ(p.find(w3)->offset, 512u);
  EXPECT_EQ(p.weight_size, 576u);
  for (const Buffer& buf : p.work) EXPECT_FALSE(buf.value->constant);

  PlanOptions o;
  o.alignment = 256;
  MemoryPlan q = plan_ok(b.g, o);
  EXPECT_EQ(q.find(w2)->offset, 256u);
  EXPECT_EQ(q.weight_size, 1024u);
}

TEST(Planner, UnknownShapeIsRefusedWithNames) {
  Builder b;
  Value* x = b.input("x", {graph::Dim::symbolic("N"), 3});
  Value* a = b.op("Relu", {x}, {graph::Dim::symbolic("N"), 3}, "relu_dyn");
  Value* c = b.op("Shape", {a}, {2});
  b.output(c);
  Value* norank = b.g.add_value("norank", TensorType{DType::kFloat32, std::nullopt});
  b.g.add_node("mystery", "Custom", {c}, {norank});
  MemoryPlan p;
  Status st = plan_memory(b.g, {}, &p);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), code::kInvalidParam);
  EXPECT_NE(st.message().find("relu_dyn_out"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("norank"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("2 value(s)"), std::string::npos) << st.message();
}

TEST(Planner, PlansAfterShapeInference) {
  // The intended flow: symbolic input, caller sets a concrete shape, the ops'
  // shape functions fill the types, then the plan.
  Builder b;
  Value* x = b.input("x", {graph::Dim::symbolic("N"), 8});
  Value* w = b.constant("w", 8 * 16);
  w->type.shape = Shape{8, 16};
  w->constant->dims = {8, 16};
  Value* bias = b.constant("bias", 16);
  Value* mm = b.g.add_value("mm");
  Value* act = b.g.add_value("act");
  Value* y = b.g.add_value("y");
  b.g.add_node("matmul", "MatMul", {x, w}, {mm}, "", 13);
  b.g.add_node("relu", "Relu", {mm}, {act}, "", 13);
  b.g.add_node("add", "Add", {act, bias}, {y}, "", 13);
  b.output(y);
  b.g.opsets()[""] = 13;
  ASSERT_TRUE(graph::infer_shapes(b.g).ok());
  MemoryPlan p;
  EXPECT_EQ(plan_memory(b.g, {}, &p).code(), code::kInvalidParam);  // N is still symbolic
  x->type.shape = Shape{4, 8};
  Status st = graph::infer_shapes(b.g);
  ASSERT_TRUE(st.ok()) << st.message();
  p = plan_ok(b.g);
  EXPECT_EQ(p.find(y)->bytes, 4u * 16 * 4);
  EXPECT_EQ(p.weight_size, 8u * 16 * 4 + 64);
  EXPECT_EQ(p.work_size, 2u * 256);
}

TEST(Planner, BadAlignmentIsRefused) {
  Builder b;
  b.output(b.op("Relu", {b.input("x", {4})}, {4}));
  PlanOptions o;
  o.alignment = 48;
  MemoryPlan p;
  EXPECT_EQ(plan_memory(b.g, o, &p).code(), code::kInvalidParam);
}

TEST(Planner, ValidateCatchesOverlaps) {
  Builder b;
  Value* x = b.input("x", {1000});
  Value* a = b.op("Relu", {x}, {1000});
  Value* c = b.op("Relu", {a}, {1000});
  b.output(c);
  MemoryPlan p = plan_ok(b.g);
  ASSERT_EQ(p.work.size(), 2u);
  MemoryPlan bad = p;
  bad.work[1].offset = bad.work[0].offset;  // a and c are both live at step 1
  EXPECT_FALSE(validate(bad).ok());
  bad = p;
  bad.work[1].offset = 32;  // misaligned
  EXPECT_FALSE(validate(bad).ok());
  bad = p;
  bad.work_size = kS;  // too small for both
  EXPECT_FALSE(validate(bad).ok());
}

// Random DAGs: each node reads 1-3 earlier values (mostly recent ones, some
// long skips), writes 1-2 values; sizes as in real networks (a few sizes per
// graph, varying by stage).
struct RandomStats {
  double worst = 0;
  double sum = 0;
  int graphs = 0;
};

void random_graphs(bool in_place, uint32_t seed, int count, RandomStats* stats) {
  std::mt19937 rng(seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int gi = 0; gi < count; ++gi) {
    Builder b;
    std::vector<Value*> vals;
    const int inputs = uni(1, 3);
    for (int i = 0; i < inputs; ++i) vals.push_back(b.input("in" + std::to_string(i), {uni(1, 4096)}));
    const int n = uni(3, 120);
    int64_t base = uni(64, 1 << 16);
    for (int i = 0; i < n; ++i) {
      if (uni(0, 15) == 0) {  // a new stage (one draw per statement: evaluation order is unspecified)
        const int64_t mul = uni(1, 4);
        const int64_t div = uni(1, 4);
        base = std::max<int64_t>(16, base * mul / div);
      }
      std::vector<Value*> ins;
      const int k = uni(1, 3);
      for (int j = 0; j < k; ++j) {
        int back = uni(0, 9) < 8 ? uni(1, std::min<int>(4, vals.size())) : uni(1, vals.size());
        ins.push_back(vals[vals.size() - back]);
      }
      const int outs = uni(0, 5) == 0 ? 2 : 1;
      std::vector<Value*> outv;
      for (int o = 0; o < outs; ++o) {
        int64_t elems = uni(0, 3) == 0 ? base * uni(1, 8) : base;
        if (uni(0, 20) == 0) elems = uni(1, 64);  // tiny (shapes, scalars)
        outv.push_back(b.g.add_value("v" + std::to_string(i) + "_" + std::to_string(o),
                                     TensorType{DType::kFloat32, Shape{elems}}));
      }
      b.g.add_node("n" + std::to_string(i), "Op", ins, outv);
      for (Value* v : outv) vals.push_back(v);
    }
    for (size_t i = inputs; i < vals.size(); ++i)
      if (vals[i]->consumers.empty() && uni(0, 2) > 0) b.output(vals[i]);
    b.output(vals.back());
    PlanOptions o;
    if (in_place) o.can_alias = [](const Node& node, size_t in, size_t) { return (node.name.size() + in) % 2 == 0; };
    MemoryPlan p;
    Status st = plan_memory(b.g, o, &p);
    ASSERT_TRUE(st.ok()) << st.message();
    Status v = validate(p);
    ASSERT_TRUE(v.ok()) << "graph " << gi << ": " << v.message();
    ASSERT_LE(p.ratio(), 1.25) << "graph " << gi << "\n" << p.to_string();
    stats->worst = std::max(stats->worst, p.ratio());
    stats->sum += p.ratio();
    ++stats->graphs;
  }
}

TEST(Planner, LargeGraph) {
  // 5000 nodes: a deep residual-style chain with side branches; checks that
  // planning stays valid and near the bound at model scale.
  Builder b;
  Value* v = b.input("x", {4096});
  std::mt19937 rng(7);
  for (int i = 0; i < 1000; ++i) {
    int64_t n = 1024 * (1 + static_cast<int64_t>(rng() % 8));
    Value* skip = v;
    Value* t = b.op("Conv", {v}, {n});
    Value* side = b.op("Conv", {v}, {n / 2});
    t = b.op("Relu", {t}, {n});
    t = b.op("Concat", {t, side}, {n + n / 2});
    v = b.op("Add", {t, skip}, {4096});
  }
  b.output(v);
  PlanOptions o;
  o.can_alias = [](const Node& n, size_t in, size_t) { return n.op_type == "Relu" || (n.op_type == "Add" && in == 0); };
  MemoryPlan p = plan_ok(b.g, o);
  EXPECT_EQ(p.order.size(), 5000u);
  EXPECT_LE(p.ratio(), 1.25);
}

TEST(Planner, RandomDagsAreValidAndNearTheLowerBound) {
  RandomStats plain, aliased;
  random_graphs(false, 12345, 600, &plain);
  random_graphs(true, 777, 600, &aliased);
  std::printf("random DAGs: worst work/lower-bound ratio %.4f (mean %.4f) over %d graphs; with in-place %.4f "
              "(mean %.4f) over %d\n",
              plain.worst, plain.sum / plain.graphs, plain.graphs, aliased.worst, aliased.sum / aliased.graphs,
              aliased.graphs);
  RecordProperty("worst_ratio", std::to_string(std::max(plain.worst, aliased.worst)));
}

}  // namespace
}  // namespace openacl::planner
