// The layout pass (model/layout.h) and the kernels that honour its marks
// (Conv, MaxPool, AveragePool, GlobalAveragePool, element-wise ops, the
// linear upsampling Resize): a network
// of convolutions, poolings, a residual, element-wise ops and a global pool
// gives the same outputs with the pass on and off; the pass marks what it
// should and leaves graph outputs and tensors read by other ops (Reshape,
// Gemm) plain; the blocks CompiledNode records let an observer read every
// intermediate as the plain run's; float32 pooling on oneDNN equals the
// reference loops (float64 runs them) for ceil_mode, pads, auto_pad,
// count_include_pad and dilations.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <random>

#include "graph/passes.h"
#include "kernels/cpu/blocked_layout.h"
#include "model/compiled_model.h"
#include "model/executor.h"

namespace openacl::model {
namespace {

using graph::DType;
using graph::Graph;
using graph::Node;
using graph::Value;

graph::Attribute ints(std::vector<int64_t> v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
graph::Attribute one(int64_t v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kInt;
  a.i = v;
  return a;
}
graph::Attribute str(std::string s) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kString;
  a.s = std::move(s);
  return a;
}

// Builds graphs with random constant weights.
struct Builder {
  std::shared_ptr<Graph> g = std::make_shared<Graph>();
  std::mt19937 rng{7};
  int n = 0;
  Builder() { g->opsets()[""] = 17; }

  Value* input(const std::string& name, std::vector<int64_t> d) {
    Value* v = g->add_value(name, graph::TensorType{DType::kFloat32, graph::Shape(d.begin(), d.end())});
    v->is_graph_input = true;
    g->inputs().push_back(v);
    return v;
  }
  Value* constant(std::vector<int64_t> d, float scale) {
    int64_t count = 1;
    for (int64_t x : d) count *= x;
    std::normal_distribution<float> nd(0.f, scale);
    std::vector<float> v(static_cast<size_t>(count));
    for (float& x : v) x = nd(rng);
    Value* c = g->add_value("c" + std::to_string(n++), graph::TensorType{DType::kFloat32, graph::Shape(d.begin(), d.end())});
    c->constant = graph::TensorData::copy_of(DType::kFloat32, d, v.data(), v.size() * sizeof(float));
    return c;
  }
  Node* node(const std::string& name, const std::string& op, std::vector<Value*> in, Value** out) {
    *out = g->add_value(name + ":0");
    return g->add_node(name, op, std::move(in), {*out}, "", 17);
  }
  // k x k convolution, pad k/2, stride s, cin -> cout.
  Value* conv(const std::string& name, Value* x, int64_t cin, int64_t cout, int64_t k, int64_t s = 1) {
    Value* y = nullptr;
    Node* c = node(name, "Conv", {x, constant({cout, cin, k, k}, 1.f / std::sqrt(float(cin * k * k))),
                                  constant({cout}, 0.1f)}, &y);
    c->attrs.set("pads", ints({k / 2, k / 2, k / 2, k / 2}));
    c->attrs.set("strides", ints({s, s}));
    return y;
  }
  // 3x3 depthwise convolution, pad 1, stride s, c channels.
  Value* dw(const std::string& name, Value* x, int64_t c, int64_t s = 1) {
    Value* y = nullptr;
    Node* d = node(name, "Conv", {x, constant({c, 1, 3, 3}, 1.f / 3.f), constant({c}, 0.1f)}, &y);
    d->attrs.set("pads", ints({1, 1, 1, 1}));
    d->attrs.set("strides", ints({s, s}));
    d->attrs.set("group", one(c));
    return y;
  }
  Value* op(const std::string& name, const std::string& type, std::vector<Value*> in) {
    Value* y = nullptr;
    node(name, type, std::move(in), &y);
    return y;
  }
  void output(Value* v) {
    v->is_graph_output = true;
    g->outputs().push_back(v);
  }
};

// x [2, 3, 19, 17]: conv 3->16 relu, conv 16->16 s2, maxpool (ceil_mode),
// conv 16->16, conv 16->16 + the pool's output as residual (fused) + relu, conv 16->24 sigmoid, conv 24->32,
// averagepool (count_include_pad), conv 32->12, conv 12->16, Abs / Neg of two
// branches and their Add (element-wise, not fusable), an AveragePool that
// oneDNN cannot take, GlobalAveragePool -> output 0; the
// 24-channel tensor is also read by a Reshape (output 1), and the 32-channel
// one is a graph output too (output 2).
std::shared_ptr<Graph> network() {
  Builder b;
  Value* x = b.input("x", {2, 3, 19, 17});
  Value* a = b.op("relu1", "Relu", {b.conv("conv1", x, 3, 16, 3)});
  Value* c = b.conv("conv2", a, 16, 16, 3, 2);
  Value* p = nullptr;
  Node* mp = b.node("maxpool", "MaxPool", {c}, &p);
  mp->attrs.set("kernel_shape", ints({3, 3}));
  mp->attrs.set("strides", ints({2, 2}));
  mp->attrs.set("pads", ints({1, 1, 0, 0}));
  mp->attrs.set("ceil_mode", one(1));
  Value* r = b.op("relu3", "Relu", {b.op("add3", "Add", {b.conv("conv3", b.conv("conv3a", p, 16, 16, 1), 16, 16, 3), p})});
  Value* s = b.op("sig4", "Sigmoid", {b.conv("conv4", r, 16, 24, 3)});
  Value* t = b.conv("conv5", s, 24, 32, 3);
  Value* q = nullptr;
  Node* ap = b.node("avgpool", "AveragePool", {t}, &q);
  ap->attrs.set("kernel_shape", ints({3, 3}));
  ap->attrs.set("pads", ints({1, 1, 1, 1}));
  ap->attrs.set("count_include_pad", one(1));
  Value* u = b.conv("conv7", b.conv("conv6", q, 32, 12, 3), 12, 16, 1);
  Value* v = b.conv("conv8", r, 16, 16, 3);
  Value* w = b.op("add9", "Add", {b.op("abs", "Abs", {u}), b.op("neg", "Neg", {v})});
  // count_include_pad with ceil_mode past the explicit pads: oneDNN would
  // differ, so this pool runs the reference loops on its blocked tensors.
  Value* w2 = nullptr;
  Node* ap2 = b.node("avgpool2", "AveragePool", {w}, &w2);
  ap2->attrs.set("kernel_shape", ints({2, 2}));
  ap2->attrs.set("strides", ints({2, 2}));
  ap2->attrs.set("ceil_mode", one(1));
  ap2->attrs.set("count_include_pad", one(1));
  b.output(b.op("gap", "GlobalAveragePool", {w2}));
  b.output(b.op("reshape", "Reshape", {s, b.g->add_value("shape")}));
  int64_t shape[2] = {2, -1};
  b.g->find_value("shape")->type = graph::TensorType{DType::kInt64, graph::Shape{2}};
  b.g->find_value("shape")->constant = graph::TensorData::copy_of(DType::kInt64, {2}, shape, sizeof shape);
  b.output(t);
  return b.g;
}

std::vector<float> random_input(size_t n) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = nd(rng);
  return v;
}

// Values by name after the run: every node's outputs, converted to plain with
// the blocks CompiledNode records (what the dump does).
class Recorder : public NodeObserver {
 public:
  void after_node(const CompiledNode& node, const std::vector<kernels::Tensor>& values, int64_t, int64_t) override {
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i] < 0) continue;
      const kernels::Tensor& t = values[static_cast<size_t>(node.outputs[i])];
      if (t.dtype != DType::kFloat32) continue;
      std::vector<float> v(t.as<float>(), t.as<float>() + t.elements());
      if (node.output_blocks[i]) {
        ++blocked;
        kernels::cpu::blocked_to_plain(t.as<float>(), v.data(), t.dims, node.output_blocks[i]);
      }
      seen[node.node->name] = std::move(v);
    }
  }
  std::map<std::string, std::vector<float>> seen;
  int blocked = 0;
};

struct NetRun {
  std::shared_ptr<const CompiledModel> model;
  std::vector<std::vector<float>> outputs;
  Recorder rec;
};

void run_network(bool blocked, NetRun* r) {
  CompileOptions opt;
  opt.blocked_layouts = blocked;
  std::unique_ptr<CompiledModel> m;
  Status st = CompiledModel::compile(network(), opt, &m);
  ASSERT_TRUE(st.ok()) << st.message();
  r->model = std::move(m);
  Executor e(r->model);
  std::vector<float> x = random_input(2 * 3 * 19 * 17);
  std::vector<kernels::Tensor> out;
  st = e.run({kernels::Tensor{DType::kFloat32, {2, 3, 19, 17}, x.data()}}, &out, nullptr, &r->rec);
  ASSERT_TRUE(st.ok()) << st.message();
  for (const auto& t : out) r->outputs.emplace_back(t.as<float>(), t.as<float>() + t.elements());
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5f + 1e-5f * std::fabs(want[i])) << what << " at " << i;
}

// Blocks to check: this machine's, then 8 and 16 whatever the ISA (an .om
// compiled on one machine runs on another; a block the jit kernels lack
// takes oneDNN's reorders or reference code, which must agree too), and 16
// mixed with 8 (kernels::cpu::mixed_blocks) whatever the machine measured.
struct BlockMode {
  int64_t block;  // -1: this machine's
  int mixed;      // -1: this machine's
};
void PrintTo(const BlockMode& m, std::ostream* os) {
  *os << (m.block < 0 ? std::string("machine") : std::to_string(m.block)) << (m.mixed > 0 ? " mixed" : "");
}
class Blocks : public ::testing::TestWithParam<BlockMode> {
 protected:
  void SetUp() override {
    kernels::cpu::set_channel_block_for_testing(GetParam().block);
    kernels::cpu::set_mixed_blocks_for_testing(GetParam().mixed);
  }
  void TearDown() override {
    kernels::cpu::set_channel_block_for_testing(-1);
    kernels::cpu::set_mixed_blocks_for_testing(-1);
  }
};
using LayoutPass = Blocks;
INSTANTIATE_TEST_SUITE_P(Block, LayoutPass,
                         ::testing::Values(BlockMode{-1, -1}, BlockMode{8, 0}, BlockMode{16, 0}, BlockMode{16, 1}));

TEST_P(LayoutPass, SameOutputsOnAndOff) {
  NetRun on, off;
  run_network(true, &on);
  run_network(false, &off);
  ASSERT_EQ(on.outputs.size(), 3u);
  ASSERT_EQ(off.outputs.size(), 3u);
  for (size_t o = 0; o < 3; ++o) expect_close(on.outputs[o], off.outputs[o], "output " + std::to_string(o));
  EXPECT_EQ(off.model->blocked_marked(), 0u);
  EXPECT_GT(on.model->blocked_marked(), 0u);
  // Every intermediate, read back through the recorded blocks, is the plain run's.
  EXPECT_EQ(off.rec.blocked, 0);
  if (kernels::cpu::channel_block() > 0) {
    EXPECT_GT(on.rec.blocked, 0);
  }
  ASSERT_EQ(on.rec.seen.size(), off.rec.seen.size());
  for (const auto& [name, v] : off.rec.seen) {
    ASSERT_TRUE(on.rec.seen.count(name)) << name;
    expect_close(on.rec.seen.at(name), v, name);
  }
}

// The marks, by the node that writes / reads each value.
TEST_P(LayoutPass, MarksOnlyWhatAllReadersHandle) {
  auto g = network();
  std::unique_ptr<CompiledModel> m;
  Status st = CompiledModel::compile(g, CompileOptions(), &m);
  ASSERT_TRUE(st.ok()) << st.message();
  std::map<std::string, const CompiledNode*> by_name;
  for (const CompiledNode& cn : m->nodes()) by_name[cn.node->name] = &cn;
  auto node = [&](const std::string& n) -> const CompiledNode& {
    EXPECT_TRUE(by_name.count(n)) << n;
    return by_name.count(n) ? *by_name.at(n) : m->nodes().front();
  };
  auto out_marked = [&](const std::string& n) {
    auto o = node(n).node->attrs.get_ints(kernels::cpu::kBlockedOutputsAttr);
    return o && *o == std::vector<int64_t>{0};
  };
  auto in_marks = [&](const std::string& n) {
    return node(n).node->attrs.get_ints(kernels::cpu::kBlockedInputsAttr).value_or(std::vector<int64_t>{});
  };
  // Fused away: relu1 (into conv1), add3 + relu3 (into conv3), sig4 (into conv4).
  EXPECT_FALSE(by_name.count("relu1"));
  EXPECT_FALSE(by_name.count("add3"));
  EXPECT_TRUE(out_marked("conv1"));
  EXPECT_EQ(in_marks("conv1"), std::vector<int64_t>{});  // x: a graph input
  EXPECT_TRUE(out_marked("conv2"));
  EXPECT_TRUE(out_marked("maxpool"));
  EXPECT_EQ(in_marks("maxpool"), std::vector<int64_t>{0});
  EXPECT_EQ(in_marks("conv3a"), std::vector<int64_t>{0});
  EXPECT_EQ(in_marks("conv3"), (std::vector<int64_t>{0, 3}));  // x and the fused residual
  EXPECT_TRUE(out_marked("conv3"));
  EXPECT_FALSE(out_marked("conv4"));  // read by the Reshape
  EXPECT_EQ(in_marks("conv5"), std::vector<int64_t>{});
  EXPECT_FALSE(out_marked("conv5"));  // a graph output
  EXPECT_EQ(in_marks("avgpool"), std::vector<int64_t>{});
  EXPECT_TRUE(out_marked("avgpool"));
  EXPECT_TRUE(out_marked("conv6"));  // 12 channels: marked, plain unless the block divides 12
  EXPECT_TRUE(out_marked("conv7"));
  EXPECT_TRUE(out_marked("conv8"));
  EXPECT_TRUE(out_marked("add9"));
  EXPECT_TRUE(out_marked("abs"));
  EXPECT_EQ(in_marks("neg"), std::vector<int64_t>{0});
  EXPECT_EQ(in_marks("add9"), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(out_marked("avgpool2"));
  EXPECT_EQ(in_marks("avgpool2"), std::vector<int64_t>{0});
  EXPECT_EQ(in_marks("gap"), std::vector<int64_t>{0});
  EXPECT_FALSE(out_marked("gap"));  // a graph output
  // The recorded blocks follow the one predicate: blocked when C % block == 0.
  const int64_t b = kernels::cpu::channel_block();
  auto expect_block = [&](const std::string& n, int64_t channels) {
    const int64_t want = b && channels % b == 0 ? b : 0;
    EXPECT_EQ(node(n).output_blocks.at(0), want) << n;
  };
  expect_block("conv1", 16);
  expect_block("conv6", 12);
  expect_block("add9", 16);
  EXPECT_EQ(node("conv5").output_blocks.at(0), 0);
  EXPECT_EQ(node("conv6").input_blocks.at(0), node("avgpool").output_blocks.at(0));
  // Compiling the marked graph again (an .om read back) gives the same marks;
  // compiling it with the pass off removes them.
  const size_t marked = m->blocked_marked();
  std::unique_ptr<CompiledModel> again;
  ASSERT_TRUE(CompiledModel::compile(g, CompileOptions(), &again).ok());
  EXPECT_EQ(again->blocked_marked(), marked);
  CompileOptions off;
  off.blocked_layouts = false;
  ASSERT_TRUE(CompiledModel::compile(g, off, &again).ok());
  for (const CompiledNode& cn : again->nodes()) {
    EXPECT_FALSE(cn.node->attrs.has(kernels::cpu::kBlockedInputsAttr)) << cn.node->name;
    EXPECT_FALSE(cn.node->attrs.has(kernels::cpu::kBlockedOutputsAttr)) << cn.node->name;
  }
}

// Weights that are not constants (a graph input): the Conv builds its
// primitive at the first run, in the layouts it was compiled for.
TEST_P(LayoutPass, ConvWithRuntimeWeights) {
  std::vector<std::vector<float>> outs[2];
  for (int on = 0; on < 2; ++on) {
    Builder b;
    Value* x = b.input("x", {1, 16, 7, 9});
    Value* w = b.input("w", {16, 16, 3, 3});
    Value* c1 = b.conv("conv1", x, 16, 16, 3);
    Value* c2 = nullptr;
    Node* n = b.node("conv2", "Conv", {c1, w}, &c2);
    n->attrs.set("pads", ints({1, 1, 1, 1}));
    b.output(b.op("gap", "GlobalAveragePool", {b.conv("conv3", c2, 16, 16, 1)}));
    CompileOptions opt;
    opt.blocked_layouts = on != 0;
    std::unique_ptr<CompiledModel> cm;
    Status st = CompiledModel::compile(b.g, opt, &cm);
    ASSERT_TRUE(st.ok()) << st.message();
    for (const CompiledNode& cn : cm->nodes()) {
      if (cn.node->name == "conv2") {
        EXPECT_EQ(cn.output_blocks.at(0), on ? kernels::cpu::channel_block() : 0);
      }
    }
    Executor e(std::shared_ptr<const CompiledModel>(std::move(cm)));
    std::vector<float> xv = random_input(16 * 63), wv = random_input(16 * 16 * 9);
    for (float& v : wv) v *= 0.1f;
    for (int rep = 0; rep < 2; ++rep) {  // the second run reuses the entry built by the first
      std::vector<kernels::Tensor> out;
      st = e.run({kernels::Tensor{DType::kFloat32, {1, 16, 7, 9}, xv.data()},
                  kernels::Tensor{DType::kFloat32, {16, 16, 3, 3}, wv.data()}}, &out);
      ASSERT_TRUE(st.ok()) << st.message();
      outs[on].emplace_back(out[0].as<float>(), out[0].as<float>() + out[0].elements());
    }
  }
  for (size_t i = 0; i < outs[0].size(); ++i) expect_close(outs[1][i], outs[0][i], "run " + std::to_string(i));
}

// Compiles b's graph with the layout pass on or off, lets `check` look at
// the compiled nodes, runs it on a random input of `dims` and returns every
// output.
std::vector<std::vector<float>> compile_and_run(Builder& b, bool on, const std::vector<int64_t>& dims,
                                                const std::function<void(const CompiledModel&)>& check) {
  CompileOptions opt;
  opt.blocked_layouts = on;
  std::unique_ptr<CompiledModel> cm;
  Status st = CompiledModel::compile(b.g, opt, &cm);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  check(*cm);
  Executor e(std::shared_ptr<const CompiledModel>(std::move(cm)));
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> xv = random_input(static_cast<size_t>(n));
  std::vector<kernels::Tensor> out;
  st = e.run({kernels::Tensor{DType::kFloat32, dims, xv.data()}}, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  std::vector<std::vector<float>> values;
  for (const auto& o : out) values.emplace_back(o.as<float>(), o.as<float>() + o.elements());
  return values;
}

// A region holding a 24-channel tensor takes 8-blocks throughout (the
// kBlockedMaxAttr cap); a region cut off from it by a plain graph output
// keeps the machine's block. Where blocks are mixed, the cap is ignored:
// the 24-channel tensor, read by a convolution only, takes padded 16-blocks
// (see PaddedBlocks... below). Outputs match the plain run either way.
TEST_P(LayoutPass, RegionWithAMultipleOf8IsCappedAt8) {
  std::vector<std::vector<float>> outs[2];
  for (int on = 0; on < 2; ++on) {
    Builder b;
    Value* x = b.input("x", {1, 16, 10, 10});
    Value* t = b.conv("conv3", b.conv("conv2", b.conv("conv1", x, 16, 32, 3), 32, 24, 1), 24, 32, 3);
    b.output(t);  // plain: the regions on either side are separate
    b.output(b.op("gap", "GlobalAveragePool", {b.conv("conv5", b.conv("conv4", t, 32, 16, 1), 16, 16, 3)}));
    outs[on] = compile_and_run(b, on != 0, {1, 16, 10, 10}, [&](const CompiledModel& cm) {
      const int64_t block = kernels::cpu::channel_block();
      const bool mixed = block == 16 && kernels::cpu::mixed_blocks();
      for (const CompiledNode& cn : cm.nodes()) {
        const std::string& n = cn.node->name;
        const bool first = n == "conv1" || n == "conv2" || n == "conv3";
        EXPECT_EQ(cn.node->attrs.get_int(kernels::cpu::kBlockedMaxAttr, 0), on && first ? 8 : 0) << n;
        if (on && n == "conv1") {
          EXPECT_EQ(cn.output_blocks.at(0), mixed ? 16 : block ? 8 : 0) << n;
        }
        if (on && n == "conv2") {  // mixed: 16-blocks, padded (only convolutions read it)
          EXPECT_EQ(cn.output_blocks.at(0), mixed ? 16 : block ? 8 : 0) << n;
        }
        if (on && n == "conv4") {
          EXPECT_EQ(cn.output_blocks.at(0), block) << n;
        }
      }
    });
  }
  ASSERT_EQ(outs[1].size(), 2u);
  for (size_t i = 0; i < 2; ++i) expect_close(outs[1][i], outs[0][i], "output " + std::to_string(i));
}

// A squeeze-excite gate: Mul of a blocked tensor by a plain per-channel
// scale [1, C, 1, 1], in either operand order, stays blocked; the scale and
// its producers stay plain. Outputs match the plain run.
TEST_P(LayoutPass, ChannelScaleMulStaysBlocked) {
  std::vector<std::vector<float>> outs[2];
  for (int on = 0; on < 2; ++on) {
    Builder b;
    Value* x = b.input("x", {2, 16, 9, 7});
    Value* a = b.conv("conv1", x, 16, 32, 3);
    Value* s = b.op("sig", "Sigmoid", {b.conv("fc", b.op("gap", "GlobalAveragePool", {a}), 32, 32, 1)});
    Value* m1 = b.op("mul1", "Mul", {s, a});  // scale first, as torchvision's SE writes it
    Value* m2 = b.op("mul2", "Mul", {b.conv("conv2", m1, 32, 32, 3), s});
    b.output(b.op("gap2", "GlobalAveragePool", {b.conv("conv3", m2, 32, 16, 1)}));
    outs[on] = compile_and_run(b, on != 0, {2, 16, 9, 7}, [&](const CompiledModel& cm) {
      const int64_t block = kernels::cpu::channel_block();
      for (const CompiledNode& cn : cm.nodes()) {
        const std::string& n = cn.node->name;
        if (n == "mul1" || n == "mul2") {
          EXPECT_EQ(cn.output_blocks.at(0), on ? block : 0) << n;
          const size_t scale = n == "mul1" ? 0 : 1;
          EXPECT_EQ(cn.input_blocks.at(scale), 0) << n;
          EXPECT_EQ(cn.input_blocks.at(1 - scale), on ? block : 0) << n;
        }
        if (n == "fc" || n == "sig") {
          EXPECT_EQ(cn.output_blocks.at(0), 0) << n;
        }
      }
    });
  }
  ASSERT_EQ(outs[1].size(), 1u);
  expect_close(outs[1][0], outs[0][0], "output");
}

// A squeeze-excite block whose gate convolutions run over a 1x1 plane
// (ConvKernel's matrix-vector path, no oneDNN primitive): x [2, 16, 6, 5] ->
// conv1 -> a, 24 channels (padded 16-blocks where blocks are mixed) -> GAP
// -> fc1 (24 -> 8, Relu; its output blocked, padded where blocks are 16)
// -> fc2 (8 -> 24, reading that) + the GAP's output (a fused residual) ->
// HardSigmoid -> scales a -> conv2 -> output. Outputs match the plain run.
TEST_P(LayoutPass, SqueezeExciteGateOverAOneByOnePlane) {
  std::vector<std::vector<float>> outs[2];
  for (int on = 0; on < 2; ++on) {
    Builder b;
    Value* x = b.input("x", {2, 16, 6, 5});
    Value* a = b.conv("conv1", x, 16, 24, 3);
    Value* gap = b.op("gap", "GlobalAveragePool", {a});
    Value* h = b.op("relu", "Relu", {b.conv("fc1", gap, 24, 8, 1)});
    Value* s = b.op("hsig", "HardSigmoid", {b.op("add", "Add", {b.conv("fc2", h, 8, 24, 1), gap})});
    b.output(b.conv("conv2", b.op("mul", "Mul", {a, s}), 24, 16, 3));
    outs[on] = compile_and_run(b, on != 0, {2, 16, 6, 5}, [&](const CompiledModel& cm) {
      bool fc1 = false, fc2 = false;
      for (const CompiledNode& cn : cm.nodes()) {
        const std::string& n = cn.node->name;
        const bool blocked = on && kernels::cpu::channel_block() > 0;
        if (n == "fc1") {
          fc1 = true;
          // Blocked output (8 channels: padded where blocks are 16).
          EXPECT_EQ(cn.output_blocks.at(0) > 0, blocked);
        }
        if (n == "fc2") {
          fc2 = true;
          // The Add and the HardSigmoid went into it.
          EXPECT_EQ(cn.node->attrs.get_int(graph::kFusedSumAttr, 0), 1);
          EXPECT_EQ(cn.node->attrs.get_string(graph::kFusedActivationAttr, ""), "HardSigmoid");
          EXPECT_EQ(cn.input_blocks.at(0) > 0, blocked);
        }
      }
      EXPECT_TRUE(fc1 && fc2);
    });
  }
  ASSERT_EQ(outs[1].size(), 1u);
  expect_close(outs[1][0], outs[0][0], "output");
}

// A float32 linear upsampling Resize with constant scales or sizes between
// convolutions reads and writes their blocks (kernels/cpu/resize.h): x [2,
// 16, 9, 7] -> conv1 -> 32 channels -> Resize x2 (scales) -> conv2 -> 24
// channels (padded 16-blocks where blocks are mixed, else 8-blocks, as is
// the whole region) ->
// Resize to 23x17 (sizes, align_corners) -> conv3 -> output; conv3's output
// is also upsampled straight into a graph output, so that Resize and its
// input stay plain. Outputs match the plain run.
TEST_P(LayoutPass, LinearUpsampleBetweenConvolutionsStaysBlocked) {
  std::vector<std::vector<float>> outs[2];
  for (int on = 0; on < 2; ++on) {
    Builder b;
    auto resize = [&](const std::string& name, Value* x, std::vector<float> scales, std::vector<int64_t> sizes,
                      const char* coord) {
      Value* y = nullptr;
      Value* c = b.g->add_value(name + ":param");
      if (!scales.empty()) {
        c->type = graph::TensorType{DType::kFloat32, graph::Shape{4}};
        c->constant = graph::TensorData::copy_of(DType::kFloat32, {4}, scales.data(), 4 * sizeof(float));
      } else {
        c->type = graph::TensorType{DType::kInt64, graph::Shape{4}};
        c->constant = graph::TensorData::copy_of(DType::kInt64, {4}, sizes.data(), 4 * sizeof(int64_t));
      }
      Node* n = b.node(name, "Resize", scales.empty() ? std::vector<Value*>{x, nullptr, nullptr, c}
                                                      : std::vector<Value*>{x, nullptr, c}, &y);
      n->attrs.set("mode", str("linear"));
      n->attrs.set("coordinate_transformation_mode", str(coord));
      return y;
    };
    Value* x = b.input("x", {2, 16, 9, 7});
    Value* r1 = resize("up1", b.conv("conv1", x, 16, 32, 3), {1, 1, 2, 2}, {}, "half_pixel");
    Value* r2 = resize("up2", b.conv("conv2", r1, 32, 24, 3), {}, {2, 24, 23, 17}, "align_corners");
    Value* c3 = b.conv("conv3", r2, 24, 16, 3);
    b.output(b.op("gap", "GlobalAveragePool", {b.conv("conv4", c3, 16, 16, 1)}));
    b.output(resize("up3", c3, {1, 1, 2, 2}, {}, "pytorch_half_pixel"));
    outs[on] = compile_and_run(b, on != 0, {2, 16, 9, 7}, [&](const CompiledModel& cm) {
      const int64_t block = kernels::cpu::channel_block();
      const bool mixed = block == 16 && kernels::cpu::mixed_blocks();
      const int64_t b24 = mixed ? 16 : block ? 8 : 0;
      for (const CompiledNode& cn : cm.nodes()) {
        const std::string& n = cn.node->name;
        if (n == "up1") {  // in the region of the 24-channel tensors: capped at 8 unless blocks are mixed
          EXPECT_EQ(cn.input_blocks.at(0), on ? b24 : 0) << n;
          EXPECT_EQ(cn.output_blocks.at(0), on ? b24 : 0) << n;
        }
        if (n == "up2") {
          EXPECT_EQ(cn.input_blocks.at(0), on ? b24 : 0) << n;
          EXPECT_EQ(cn.output_blocks.at(0), on ? b24 : 0) << n;
          EXPECT_EQ(cn.node->attrs.has(kernels::cpu::kBlockedPadOutputsAttr), on != 0) << n;  // used where mixed
        }
        if (n == "up3") {
          EXPECT_EQ(cn.input_blocks.at(0), 0) << n;
          EXPECT_EQ(cn.output_blocks.at(0), 0) << n;
        }
      }
    });
  }
  ASSERT_EQ(outs[1].size(), 2u);
  ASSERT_EQ(outs[0].size(), 2u);
  expect_close(outs[1][0], outs[0][0], "output 0");
  expect_close(outs[1][1], outs[0][1], "output 1");
}

// Where blocks are mixed, a 24- or 40-channel tensor that only convolutions,
// a GlobalAveragePool and a squeeze-excite Mul write and read takes 16-blocks
// with its channels padded (kBlockedPad*Attr); one an element-wise op reads
// keeps 8-blocks. x [2, 16, 76, 76]: conv1 1x1 -> 24 channels (a), read by
// an inverted residual block fused into one node (conv2: 1x1 to 48 channels,
// depthwise, conv3 48 -> 24 and the residual add of a; c), and as that
// node's residual; conv4 3x3 s2 -> 40 channels (e),
// gated by GAP -> fc -> Sigmoid -> Mul (f), conv5 -> 16; conv7 -> 24 read by
// Abs (not padded), conv8 -> 16. The outputs (two GAPs, and Abs of a second
// input of free length, which makes the model run the dynamic path when
// `dynamic`) match the plain run, every intermediate read back through the
// recorded blocks too, and with the work arena filled with NaN first (what
// the padding channels hold must not leak into the real ones).
std::shared_ptr<Graph> padded_network(bool dynamic) {
  Builder b;
  Value* x = b.input("x", {2, 16, 76, 76});
  Value* a = b.conv("conv1", x, 16, 24, 1);
  Value* d = b.dw("dw2", b.conv("conv2", a, 24, 48, 1), 48);
  Value* c = b.op("add3", "Add", {b.conv("conv3", d, 48, 24, 1), a});
  Value* e = b.conv("conv4", c, 24, 40, 3, 2);
  Value* s = b.op("sig", "Sigmoid", {b.conv("fc", b.op("gap1", "GlobalAveragePool", {e}), 40, 40, 1)});
  Value* f = b.op("mul", "Mul", {e, s});
  b.output(b.op("gap5", "GlobalAveragePool", {b.conv("conv5", f, 40, 16, 1)}));
  Value* t = b.op("abs", "Abs", {b.conv("conv7", c, 24, 24, 1)});
  b.output(b.op("gap8", "GlobalAveragePool", {b.conv("conv8", t, 24, 16, 1)}));
  if (dynamic) b.output(b.op("absz", "Abs", {b.input("z", {-1})}));
  return b.g;
}

struct PaddedRun {
  std::vector<std::vector<float>> outputs;
  Recorder rec;
};

void run_padded(bool on, bool dynamic, bool poison, PaddedRun* r) {
  CompileOptions opt;
  opt.blocked_layouts = on;
  std::unique_ptr<CompiledModel> m;
  Status st = CompiledModel::compile(padded_network(dynamic), opt, &m);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(m->is_static(), !dynamic);
  const int64_t block = kernels::cpu::channel_block();
  const bool mixed = block == 16 && kernels::cpu::mixed_blocks();
  for (const CompiledNode& cn : m->nodes()) {
    const std::string& n = cn.node->name;
    const bool padded = n == "conv1" || n == "conv2" || n == "conv4" || n == "mul";  // conv2 writes c
    EXPECT_EQ(cn.node->attrs.has(kernels::cpu::kBlockedPadOutputsAttr), on && padded) << n;
    if (on && padded) {
      EXPECT_EQ(cn.output_blocks.at(0), mixed ? 16 : block ? 8 : 0) << n;
    }
    if (on && (n == "conv2" || n == "gap1" || n == "conv5")) {  // readers of padded tensors
      EXPECT_EQ(cn.input_blocks.at(0), mixed ? 16 : block ? 8 : 0) << n;
      EXPECT_TRUE(cn.node->attrs.has(kernels::cpu::kBlockedPadInputsAttr)) << n;
    }
    if (on && n == "conv7") {
      EXPECT_EQ(cn.output_blocks.at(0), block ? 8 : 0) << n;
    }
    if (on && n == "conv2") {
      EXPECT_EQ(cn.input_blocks.at(3), cn.output_blocks.at(0)) << n;  // the fused residual
    }
    EXPECT_NE(n, "dw2");   // fused into conv2 (graph::fuse_inverted_residual)
    EXPECT_NE(n, "conv3");  // likewise
    EXPECT_NE(n, "add3");  // fused into conv3, then conv2
  }
  std::vector<char> arena;
  std::unique_ptr<Executor> e;
  std::shared_ptr<const CompiledModel> cm(std::move(m));
  if (poison && cm->is_static()) {
    arena.resize(cm->plan().work_size + 64);
    void* p = arena.data() + (64 - reinterpret_cast<uintptr_t>(arena.data()) % 64) % 64;
    std::fill_n(static_cast<float*>(p), cm->plan().work_size / sizeof(float), std::nanf(""));
    e = std::make_unique<Executor>(cm, p, cm->plan().work_size);
  } else {
    e = std::make_unique<Executor>(cm);
  }
  std::vector<float> xv = random_input(2 * 16 * 76 * 76), zv = {-1.f, 2.f, -3.f};
  std::vector<kernels::Tensor> in = {kernels::Tensor{DType::kFloat32, {2, 16, 76, 76}, xv.data()}};
  if (dynamic) in.push_back(kernels::Tensor{DType::kFloat32, {3}, zv.data()});
  std::vector<kernels::Tensor> out;
  st = e->run(in, &out, nullptr, &r->rec);
  ASSERT_TRUE(st.ok()) << st.message();
  for (const auto& t : out) r->outputs.emplace_back(t.as<float>(), t.as<float>() + t.elements());
}

TEST_P(LayoutPass, PaddedBlocksWhereOnlyConvolutionsPoolsAndGatesRead) {
  for (const bool dynamic : {false, true}) {
    PaddedRun on, off;
    run_padded(false, dynamic, false, &off);
    run_padded(true, dynamic, true, &on);
    ASSERT_EQ(on.outputs.size(), dynamic ? 3u : 2u);
    ASSERT_EQ(off.outputs.size(), on.outputs.size());
    for (size_t o = 0; o < on.outputs.size(); ++o)
      expect_close(on.outputs[o], off.outputs[o], "output " + std::to_string(o) + (dynamic ? " (dynamic)" : ""));
    ASSERT_EQ(on.rec.seen.size(), off.rec.seen.size());
    for (const auto& [name, v] : off.rec.seen) {
      ASSERT_TRUE(on.rec.seen.count(name)) << name;
      expect_close(on.rec.seen.at(name), v, name + (dynamic ? " (dynamic)" : ""));
    }
  }
}

// A Resize the upsampling kernel does not take is no blocked reader or
// writer: nearest mode, a linear downsampling, linear scales that are a
// graph input (known only per run), and tf_crop_and_resize. Each sits between
// two convolutions and keeps both sides plain; the model still runs.
TEST(LayoutMarks, OtherResizesStayPlain) {
  struct Case {
    const char* mode;
    const char* coord;
    float scale;
    bool runtime_scales;
  };
  for (const Case& k : {Case{"nearest", "half_pixel", 2.f, false}, Case{"linear", "half_pixel", 0.5f, false},
                        Case{"linear", "half_pixel", 2.f, true}, Case{"linear", "tf_crop_and_resize", 2.f, false}}) {
    SCOPED_TRACE(std::string(k.mode) + " " + k.coord + " x" + std::to_string(k.scale) +
                 (k.runtime_scales ? " (runtime scales)" : ""));
    Builder b;
    Value* x = b.input("x", {1, 16, 8, 8});
    Value* sc = nullptr;
    const float scales[4] = {1.f, 1.f, k.scale, k.scale};
    if (k.runtime_scales) {
      sc = b.input("scales", {4});
    } else {
      sc = b.g->add_value("scales", graph::TensorType{DType::kFloat32, graph::Shape{4}});
      sc->constant = graph::TensorData::copy_of(DType::kFloat32, {4}, scales, sizeof scales);
    }
    Value* y = nullptr;
    Node* r = b.node("resize", "Resize", {b.conv("conv1", x, 16, 16, 3), nullptr, sc}, &y);
    r->attrs.set("mode", str(k.mode));
    r->attrs.set("coordinate_transformation_mode", str(k.coord));
    const int64_t side = k.scale > 1.f ? 16 : 4;
    if (!k.runtime_scales) y->type = graph::TensorType{DType::kFloat32, graph::Shape{1, 16, side, side}};
    b.output(b.op("gap", "GlobalAveragePool", {b.conv("conv2", y, 16, 16, 1)}));
    std::unique_ptr<CompiledModel> cm;
    Status st = CompiledModel::compile(b.g, CompileOptions(), &cm);
    ASSERT_TRUE(st.ok()) << st.message();
    for (const CompiledNode& cn : cm->nodes())
      if (cn.node->name == "resize") {
        EXPECT_EQ(cn.input_blocks.at(0), 0);
        EXPECT_EQ(cn.output_blocks.at(0), 0);
        EXPECT_FALSE(cn.node->attrs.has(kernels::cpu::kBlockedInputsAttr));
      }
    Executor e(std::shared_ptr<const CompiledModel>(std::move(cm)));
    std::vector<float> xv = random_input(16 * 8 * 8);
    std::vector<kernels::Tensor> in = {kernels::Tensor{DType::kFloat32, {1, 16, 8, 8}, xv.data()}};
    std::vector<float> sv(scales, scales + 4);
    if (k.runtime_scales) in.push_back(kernels::Tensor{DType::kFloat32, {4}, sv.data()});
    std::vector<kernels::Tensor> out;
    st = e.run(in, &out);
    ASSERT_TRUE(st.ok()) << st.message();
  }
}

// A Gemm (after Flatten) and a Mul broadcasting other than per channel are
// not blocked readers.
TEST(LayoutMarks, LeavesOtherReadersPlain) {
  Builder b;
  Value* x = b.input("x", {1, 8, 6, 6});
  Value* c = b.conv("conv", x, 8, 16, 3);
  Value* m = b.op("mul", "Mul", {c, b.constant({1, 1, 6, 6}, 1.f)});  // a spatial broadcast
  Value* f = nullptr;
  b.node("flatten", "Flatten", {b.conv("conv2", m, 16, 16, 1)}, &f);
  b.output(b.op("gemm", "Gemm", {f, b.constant({16 * 36, 4}, 0.1f)}));
  std::unique_ptr<CompiledModel> cm;
  Status st = CompiledModel::compile(b.g, CompileOptions(), &cm);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(cm->blocked_marked(), 0u);
}

// float32 pooling (oneDNN where it matches) against the reference loops
// (float64 always takes them), plain and with C a multiple of the block.
struct PoolCase {
  const char* op;
  std::vector<int64_t> x, kernel, strides, pads, dilations;
  int64_t ceil_mode = 0, count_include_pad = 0;
  const char* auto_pad = "NOTSET";
};

std::vector<double> run_pool(const PoolCase& k, DType dt, const std::vector<double>& xv, bool* ok) {
  auto g = std::make_shared<Graph>();
  g->opsets()[""] = 19;
  Value* x = g->add_value("x", graph::TensorType{dt, graph::Shape(k.x.begin(), k.x.end())});
  x->is_graph_input = true;
  g->inputs().push_back(x);
  Value* y = g->add_value("y");
  Node* n = g->add_node("pool", k.op, {x}, {y}, "", 19);
  n->attrs.set("kernel_shape", ints(k.kernel));
  if (!k.strides.empty()) n->attrs.set("strides", ints(k.strides));
  if (!k.pads.empty()) n->attrs.set("pads", ints(k.pads));
  if (!k.dilations.empty()) n->attrs.set("dilations", ints(k.dilations));
  n->attrs.set("ceil_mode", one(k.ceil_mode));
  if (std::string(k.op) == "AveragePool") n->attrs.set("count_include_pad", one(k.count_include_pad));
  n->attrs.set("auto_pad", str(k.auto_pad));
  y->is_graph_output = true;
  g->outputs().push_back(y);
  std::unique_ptr<CompiledModel> m;
  Status st = CompiledModel::compile(g, CompileOptions(), &m);
  *ok = st.ok();
  if (!st.ok()) {
    ADD_FAILURE() << st.message();
    return {};
  }
  Executor e(std::shared_ptr<const CompiledModel>(std::move(m)));
  std::vector<float> xf(xv.begin(), xv.end());
  std::vector<kernels::Tensor> out;
  st = dt == DType::kFloat32 ? e.run({kernels::Tensor{dt, k.x, xf.data()}}, &out)
                             : e.run({kernels::Tensor{dt, k.x, const_cast<double*>(xv.data())}}, &out);
  *ok = st.ok();
  if (!st.ok()) {
    ADD_FAILURE() << st.message();
    return {};
  }
  if (dt == DType::kFloat32) return std::vector<double>(out[0].as<float>(), out[0].as<float>() + out[0].elements());
  return std::vector<double>(out[0].as<double>(), out[0].as<double>() + out[0].elements());
}

TEST(Pooling, Float32MatchesReference) {
  const std::vector<PoolCase> cases = {
      {"MaxPool", {1, 16, 11, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
      {"MaxPool", {1, 16, 11, 10}, {3, 3}, {2, 2}, {0, 1, 1, 0}, {}, 1},
      {"MaxPool", {2, 3, 9, 9}, {2, 2}, {2, 2}, {}, {}, 1},
      {"MaxPool", {1, 8, 12, 13}, {3, 2}, {1, 2}, {2, 0, 2, 1}, {2, 2}},
      {"MaxPool", {1, 16, 10, 10}, {3, 3}, {3, 3}, {}, {}, 0, 0, "SAME_UPPER"},
      {"MaxPool", {1, 8, 20}, {4}, {3}, {1, 2}, {}, 1},
      {"MaxPool", {1, 8, 5, 6, 7}, {2, 3, 2}, {2, 1, 2}, {0, 1, 1, 1, 0, 0}, {}, 1},
      {"MaxPool", {1, 8, 6, 6}, {1, 1}, {2, 2}, {2, 2, 2, 2}, {}},  // windows wholly in padding: the reference
      {"AveragePool", {1, 16, 11, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 0, 1},
      {"AveragePool", {1, 16, 11, 11}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 0, 0},
      {"AveragePool", {1, 16, 12, 12}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 1, 1},  // past the explicit pad
      {"AveragePool", {1, 16, 12, 12}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 1, 0},
      {"AveragePool", {1, 8, 13, 13}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 0, 1},
      {"AveragePool", {1, 8, 13, 13}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 0, 0},
      {"AveragePool", {2, 5, 7, 9}, {2, 3}, {2, 2}, {}, {}, 0, 0, "SAME_LOWER"},
      {"AveragePool", {1, 8, 17}, {3}, {2}, {1, 1}, {}, 1, 1},
      {"AveragePool", {1, 16, 4, 5, 6}, {2, 2, 3}, {1, 2, 2}, {1, 0, 1, 0, 1, 1}, {}, 0, 0},
  };
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> ud(-2.f, 2.f);
  for (size_t i = 0; i < cases.size(); ++i) {
    const PoolCase& k = cases[i];
    int64_t count = 1;
    for (int64_t d : k.x) count *= d;
    std::vector<double> xv(static_cast<size_t>(count));
    for (double& v : xv) v = static_cast<double>(ud(rng));  // float-representable
    bool ok32 = false, ok64 = false;
    const std::vector<double> got = run_pool(k, DType::kFloat32, xv, &ok32);
    const std::vector<double> want = run_pool(k, DType::kFloat64, xv, &ok64);
    ASSERT_TRUE(ok32 && ok64) << "case " << i;
    ASSERT_EQ(got.size(), want.size()) << "case " << i;
    for (size_t j = 0; j < want.size(); ++j) {
      if (std::isinf(want[j])) {
        EXPECT_EQ(got[j], want[j]) << "case " << i << " at " << j;
        continue;
      }
      ASSERT_NEAR(got[j], want[j], 1e-5 + 1e-5 * std::fabs(want[j])) << "case " << i << " (" << k.op << ") at " << j;
    }
  }
}

}  // namespace
}  // namespace openacl::model
