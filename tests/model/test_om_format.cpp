// The .om container (model/om_format.h) and CRC-32C (base/crc32c.h): check
// values, a full round trip of a graph using every IR feature, execution of a
// decoded model against the original, and the reader's defences (checksums,
// truncation, mutation, versions, depth and count limits).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "base/crc32c.h"
#include "model/compiled_model.h"
#include "model/executor.h"
#include "model/om_format.h"

namespace openacl::model {
namespace {

using graph::Attribute;
using graph::Dim;
using graph::DType;
using graph::Graph;
using graph::Shape;
using graph::TensorData;
using graph::TensorType;
using graph::Value;
using Kind = graph::Attribute::Kind;

// ------------------------------------------------------------------ CRC-32C

TEST(Crc32c, CheckValues) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c_table("123456789", 9), 0xE3069283u);
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
  // RFC 3720 (iSCSI) B.4 vectors.
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xFF), inc(32), dec(32);
  for (int i = 0; i < 32; ++i) {
    inc[i] = static_cast<uint8_t>(i);
    dec[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(crc32c(inc.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(crc32c(dec.data(), 32), 0x113FDB5Cu);
}

TEST(Crc32c, ChainsOverAnySplit) {
  std::mt19937 rng(7);
  std::vector<uint8_t> buf(1000);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  const uint32_t whole = crc32c(buf.data(), buf.size());
  for (size_t split : {0, 1, 3, 7, 8, 9, 63, 500, 999, 1000}) {
    EXPECT_EQ(crc32c(buf.data() + split, buf.size() - split, crc32c(buf.data(), split)), whole) << split;
    EXPECT_EQ(crc32c_table(buf.data() + split, buf.size() - split, crc32c_table(buf.data(), split)), whole) << split;
  }
}

TEST(Crc32c, HardwareAndTablePathsAgree) {
  if (!crc32c_hw_available()) GTEST_SKIP() << "no SSE4.2 on this CPU; only the table path runs";
  std::mt19937 rng(11);
  std::vector<uint8_t> buf(4096 + 16);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t off = 0; off < 16; ++off)
    for (size_t n : {0, 1, 2, 5, 7, 8, 9, 15, 16, 17, 31, 64, 100, 1000, 4096}) {
      const uint32_t seed = static_cast<uint32_t>(rng());
      ASSERT_EQ(crc32c_hw(buf.data() + off, n, seed), crc32c_table(buf.data() + off, n, seed)) << off << " " << n;
    }
}

// Long buffers take the three-stream path (12 KiB rounds, joined by shift
// tables); lengths around the round size and unaligned starts included.
TEST(Crc32c, HardwareStreamsAgreeWithTable) {
  if (!crc32c_hw_available()) GTEST_SKIP() << "no SSE4.2 on this CPU; only the table path runs";
  std::mt19937 rng(13);
  std::vector<uint8_t> buf(3 * 12288 + 64);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  for (size_t off : {0, 1, 5, 8})
    for (size_t n : {12287, 12288, 12289, 12288 + 7, 2 * 12288 - 1, 3 * 12288 + 3}) {
      const uint32_t seed = static_cast<uint32_t>(rng());
      ASSERT_EQ(crc32c_hw(buf.data() + off, n, seed), crc32c_table(buf.data() + off, n, seed)) << off << " " << n;
    }
  std::vector<uint8_t> zeros(40000, 0);
  EXPECT_EQ(crc32c_hw(zeros.data(), zeros.size()), crc32c_table(zeros.data(), zeros.size()));
}

// ------------------------------------------------------------------ helpers

TensorType f32(Shape s) { return TensorType{DType::kFloat32, std::move(s)}; }

Value* add_input(Graph& g, const std::string& name, TensorType t) {
  Value* v = g.add_value(name, std::move(t));
  v->is_graph_input = true;
  g.inputs().push_back(v);
  return v;
}
void mark_output(Graph& g, Value* v) {
  v->is_graph_output = true;
  g.outputs().push_back(v);
}
template <class T>
std::shared_ptr<TensorData> tensor(DType dt, std::vector<int64_t> dims, std::vector<T> vals) {
  return TensorData::copy_of(dt, std::move(dims), vals.data(), vals.size() * sizeof(T));
}

// Structural comparison; "" when equal, else where they differ.
std::string diff_graph(const Graph& a, const Graph& b, const std::string& at);

std::string diff_tensor(const TensorData* a, const TensorData* b, const std::string& at) {
  if (!a || !b) return (a == b) ? "" : at + ": tensor presence";
  if (a->dtype != b->dtype) return at + ": tensor dtype";
  if (a->dims != b->dims) return at + ": tensor dims";
  if (a->bytes != b->bytes) return at + ": tensor bytes";
  if (a->bytes && std::memcmp(a->data, b->data, a->bytes) != 0) return at + ": tensor contents";
  return "";
}

std::string diff_attr(const Attribute& a, const Attribute& b, const std::string& at) {
  if (a.kind != b.kind) return at + ": kind";
  switch (a.kind) {
    case Kind::kFloat: return a.f == b.f ? "" : at + ": f";
    case Kind::kInt: return a.i == b.i ? "" : at + ": i";
    case Kind::kString: return a.s == b.s ? "" : at + ": s";
    case Kind::kTensor: return diff_tensor(a.t.get(), b.t.get(), at);
    case Kind::kGraph: return diff_graph(*a.g, *b.g, at + "/" + a.g->name);
    case Kind::kFloats: return a.floats == b.floats ? "" : at + ": floats";
    case Kind::kInts: return a.ints == b.ints ? "" : at + ": ints";
    case Kind::kStrings: return a.strings == b.strings ? "" : at + ": strings";
    case Kind::kTensors:
      if (a.tensors.size() != b.tensors.size()) return at + ": tensors count";
      for (size_t i = 0; i < a.tensors.size(); ++i) {
        std::string d = diff_tensor(a.tensors[i].get(), b.tensors[i].get(), at + "[" + std::to_string(i) + "]");
        if (!d.empty()) return d;
      }
      return "";
    case Kind::kGraphs:
      if (a.graphs.size() != b.graphs.size()) return at + ": graphs count";
      for (size_t i = 0; i < a.graphs.size(); ++i) {
        std::string d = diff_graph(*a.graphs[i], *b.graphs[i], at + "[" + std::to_string(i) + "]");
        if (!d.empty()) return d;
      }
      return "";
    default: return "";
  }
}

std::string name_of(const Value* v) { return v ? v->name : std::string("<none>"); }

std::string diff_graph(const Graph& a, const Graph& b, const std::string& at) {
  if (a.name != b.name) return at + ": graph name";
  if (a.opsets() != b.opsets()) return at + ": opsets";
  if (a.values().size() != b.values().size()) return at + ": value count";
  for (size_t i = 0; i < a.values().size(); ++i) {
    const Value& x = *a.values()[i];
    const Value& y = *b.values()[i];
    const std::string w = at + ": value '" + x.name + "'";
    if (x.name != y.name) return w + " name";
    if (x.type.dtype != y.type.dtype) return w + " dtype";
    if (x.type.shape.has_value() != y.type.shape.has_value()) return w + " rank known";
    if (x.type.shape) {
      if (x.type.shape->size() != y.type.shape->size()) return w + " rank";
      for (size_t d = 0; d < x.type.shape->size(); ++d) {
        const Dim& p = (*x.type.shape)[d];
        const Dim& q = (*y.type.shape)[d];
        if (p.value != q.value || p.symbol != q.symbol) return w + " dim " + std::to_string(d);
      }
    }
    if (x.is_graph_input != y.is_graph_input || x.is_graph_output != y.is_graph_output) return w + " flags";
    if (name_of(x.producer ? x.producer->outputs[0] : nullptr) != name_of(y.producer ? y.producer->outputs[0] : nullptr))
      return w + " producer";
    if ((x.producer ? x.producer->name : "") != (y.producer ? y.producer->name : "")) return w + " producer";
    if (x.consumers.size() != y.consumers.size()) return w + " consumers";
    std::string d = diff_tensor(x.constant.get(), y.constant.get(), w);
    if (!d.empty()) return d;
  }
  auto names = [](const std::vector<Value*>& l) {
    std::vector<std::string> n;
    for (const Value* v : l) n.push_back(name_of(v));
    return n;
  };
  if (names(a.inputs()) != names(b.inputs())) return at + ": inputs";
  if (names(a.outputs()) != names(b.outputs())) return at + ": outputs";
  if (a.nodes().size() != b.nodes().size()) return at + ": node count";
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    const auto& x = *a.nodes()[i];
    const auto& y = *b.nodes()[i];
    const std::string w = at + ": node '" + x.name + "'";
    if (x.name != y.name || x.op_type != y.op_type || x.domain != y.domain || x.opset != y.opset) return w;
    if (names(x.inputs) != names(y.inputs)) return w + " inputs";
    if (names(x.outputs) != names(y.outputs)) return w + " outputs";
    if (x.attrs.all().size() != y.attrs.all().size()) return w + " attribute count";
    for (const auto& [n, attr] : x.attrs.all()) {
      const Attribute* o = y.attrs.find(n);
      if (!o) return w + " attribute " + n + " missing";
      std::string d = diff_attr(attr, *o, w + " attribute " + n);
      if (!d.empty()) return d;
    }
  }
  return "";
}

// A small graph reading `cap` from the enclosing graph; nests `inner` levels.
std::shared_ptr<Graph> body(const std::string& name, const std::string& cap, int inner) {
  auto g = std::make_shared<Graph>();
  g->name = name;
  Value* c = g->add_value(cap, f32({Dim::symbolic("N"), 2}));  // a capture
  Value* in = add_input(*g, name + "_in", f32({}));
  Value* out = g->add_value(name + "_out", f32({Dim::symbolic("N"), 2}));
  graph::Node* n = g->add_node(name + "_add", "Add", {c, in}, {out}, "", 17);
  if (inner > 0) {
    Attribute a;
    a.kind = Kind::kGraph;
    a.g = body(name + "_inner", cap, inner - 1);
    n->attrs.set("inner", a);
  }
  mark_output(*g, out);
  return g;
}

struct Rich {
  std::shared_ptr<Graph> g;
  std::shared_ptr<TensorData> w, k;
};

// Every feature the IR has: opsets of two domains, symbolic/unknown dims and
// unknown rank, constants shared three ways, empty and scalar constants,
// omitted inputs/outputs, every attribute kind, nested subgraphs with
// captures, a value without producer that is no input (an outer capture).
Rich rich_graph() {
  Rich r;
  r.g = std::make_shared<Graph>();
  Graph& g = *r.g;
  g.name = "rich";
  g.opsets()[""] = 17;
  g.opsets()["com.microsoft"] = 1;
  Value* x = add_input(g, "x", f32({Dim::symbolic("N"), 3, Dim()}));
  Value* u = add_input(g, "u", TensorType{DType::kInt64, std::nullopt});
  r.w = tensor<float>(DType::kFloat32, {3}, {1.5f, -2, 3});
  r.k = tensor<int64_t>(DType::kInt64, {2}, {7, -9});
  Value* w = g.add_value("w", f32({3}));
  w->constant = r.w;
  Value* w2 = g.add_value("w_alias", f32({3}));
  w2->constant = r.w;  // same bytes: stored once
  Value* k = g.add_value("k", TensorType{DType::kInt64, Shape{2}});
  k->constant = r.k;
  Value* empty = g.add_value("empty", f32({0, 4}));
  empty->constant = tensor<float>(DType::kFloat32, {0, 4}, {});
  Value* scalar = g.add_value("scalar", TensorType{DType::kFloat16, Shape{}});
  scalar->constant = tensor<uint16_t>(DType::kFloat16, {}, {0x3C00});
  Value* outer = g.add_value("outer_capture", f32({2}));  // read from an enclosing graph of this one
  Value* y = g.add_value("y", f32({Dim::symbolic("N"), 3, Dim()}));
  Value* z = g.add_value("z");  // no type at all
  graph::Node* n = g.add_node("every", "Custom", {x, nullptr, w, u, w2, k, empty, scalar, outer}, {y, nullptr, z},
                              "com.microsoft", 1);
  auto set = [&](const char* name, Attribute a) { n->attrs.set(name, std::move(a)); };
  Attribute a;
  a.kind = Kind::kFloat, a.f = 1.5f, set("f", a);
  a = {}, a.kind = Kind::kInt, a.i = -7, set("i", a);
  a = {}, a.kind = Kind::kString, a.s = std::string("hi\0there", 8), set("s", a);
  a = {}, a.kind = Kind::kTensor, a.t = r.w, set("t", a);  // same bytes as w again
  a = {}, a.kind = Kind::kGraph, a.g = body("then", "x", 2), set("g", a);
  a = {}, a.kind = Kind::kFloats, a.floats = {0.f, -1.f, 1e30f}, set("floats", a);
  a = {}, a.kind = Kind::kInts, a.ints = {INT64_MIN, 0, INT64_MAX}, set("ints", a);
  a = {}, a.kind = Kind::kStrings, a.strings = {"", "a", std::string(300, 'z')}, set("strings", a);
  a = {}, a.kind = Kind::kTensors, a.tensors = {r.k, r.w, tensor<uint8_t>(DType::kBool, {3}, {1, 0, 1})},
  set("tensors", a);
  a = {}, a.kind = Kind::kGraphs, a.graphs = {body("b0", "y", 0), body("b1", "x", 1)}, set("graphs", a);
  a = {}, a.kind = Kind::kFloats, set("empty_floats", a);
  a = {}, a.kind = Kind::kUndefined, set("undefined", a);
  mark_output(g, y);
  mark_output(g, z);
  return r;
}

OmMeta sample_meta() {
  OmMeta m;
  m.producer = "OpenACL test";
  m.build_command = "atc --model=a.onnx --framework=5 --output=a --input_shape=\"x:-1,2\" --dynamic_batch_size=\"1,2,4\"";
  m.soc_version = "Ascend310P3";
  m.precision_mode = "must_keep_origin_dtype";
  m.source = "a.onnx";
  m.input_formats = {{"x", 2}, {"cond", 0}};
  m.gears.kind = GearKind::kBatch;
  m.gears.positions = {{"x", 0}};
  m.gears.gears = {{1}, {2}, {4}};
  m.work_size = 12345;
  m.weight_size = (1ull << 40) + 3;
  return m;
}

void expect_meta_eq(const OmMeta& a, const OmMeta& b) {
  EXPECT_EQ(a.producer, b.producer);
  EXPECT_EQ(a.build_command, b.build_command);
  EXPECT_EQ(a.soc_version, b.soc_version);
  EXPECT_EQ(a.precision_mode, b.precision_mode);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.input_formats, b.input_formats);
  EXPECT_EQ(a.gears.kind, b.gears.kind);
  ASSERT_EQ(a.gears.positions.size(), b.gears.positions.size());
  for (size_t i = 0; i < a.gears.positions.size(); ++i) {
    EXPECT_EQ(a.gears.positions[i].input, b.gears.positions[i].input);
    EXPECT_EQ(a.gears.positions[i].axis, b.gears.positions[i].axis);
  }
  EXPECT_EQ(a.gears.gears, b.gears.gears);
  EXPECT_EQ(a.work_size, b.work_size);
  EXPECT_EQ(a.weight_size, b.weight_size);
}

uint32_t rd32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
uint64_t rd64(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}
struct Section {
  uint32_t kind;
  size_t offset, size;
};
// The section table, as om_format.cpp documents it (64-byte header, then
// 32-byte entries: kind, reserved, offset, size, crc).
std::vector<Section> sections(const std::string& om) {
  std::vector<Section> out;
  for (uint32_t i = 0; i < rd32(om, 12); ++i) {
    const size_t e = 64 + 32 * i;
    out.push_back({rd32(om, e), static_cast<size_t>(rd64(om, e + 8)), static_cast<size_t>(rd64(om, e + 16))});
  }
  return out;
}
// Recomputes every checksum, so an edit reaches the parsers behind them.
void reseal(std::string* om) {
  const size_t table_end = 64 + 32 * rd32(*om, 12);
  for (uint32_t i = 0; i < rd32(*om, 12); ++i) {
    const size_t e = 64 + 32 * i;
    const uint64_t off = rd64(*om, e + 8), len = rd64(*om, e + 16);
    if (off > om->size() || len > om->size() - off) continue;  // left for the reader to refuse
    uint32_t c = crc32c(om->data() + off, len);
    std::memcpy(om->data() + e + 24, &c, 4);
  }
  std::memset(om->data() + 32, 0, 4);
  uint32_t c = crc32c(om->data(), table_end);
  std::memcpy(om->data() + 32, &c, 4);
}

// ------------------------------------------------------------------ round trip

TEST(OmFormat, RoundTripKeepsEveryGraphFeature) {
  Rich r = rich_graph();
  OmModel m{sample_meta(), r.g, {}};
  std::string bytes;
  ASSERT_TRUE(write_om(m, &bytes).ok());
  EXPECT_EQ(sniff_format(bytes.data(), bytes.size()), ModelFormat::kOm);
  if (const char* seed = std::getenv("OPENACL_OM_SEED_DIR")) std::ofstream(std::string(seed) + "/rich.om") << bytes;
  OmView view;
  Status st = open_om(bytes.data(), bytes.size(), &view);
  ASSERT_TRUE(st.ok()) << st.message();
  expect_meta_eq(view.meta, m.meta);
  // 64-aligned blocks, each once: w (12 bytes) at 0, k (16) at 64, the
  // float16 scalar (2) at 128, the bool tensor (3) at 192; the empty
  // constant takes none.
  EXPECT_EQ(view.weight_bytes, 195u);
  EXPECT_EQ((view.weights - reinterpret_cast<const uint8_t*>(bytes.data())) % 4096, 0);

  std::shared_ptr<Graph> g;
  auto owner = std::make_shared<int>(1);
  st = decode_graph(view, view.weights, owner, &g);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(diff_graph(*r.g, *g, "rich"), "");
  // Constants point into the WEIGHTS bytes, shared ones at the same address,
  // and hold the owner.
  const Value* w = g->find_value("w");
  const Value* w2 = g->find_value("w_alias");
  ASSERT_TRUE(w && w2 && w->constant && w2->constant);
  EXPECT_EQ(w->constant->data, w2->constant->data);
  EXPECT_EQ(w->constant->data, view.weights);
  EXPECT_EQ(g->nodes()[0]->attrs.find("t")->t->data, view.weights);
  EXPECT_EQ(w->constant->owner.get(), owner.get());
  EXPECT_EQ(g->find_value("empty")->constant->bytes, 0u);
  EXPECT_NE(g->find_value("empty")->constant->data, nullptr);
  // Captures and the graphs' own name lookup survive.
  const Attribute* ga = g->nodes()[0]->attrs.find("g");
  ASSERT_TRUE(ga && ga->g);
  const Value* cap = ga->g->find_value("x");
  ASSERT_TRUE(cap);
  EXPECT_FALSE(cap->producer || cap->is_graph_input || cap->constant);
  // Encoding is deterministic: the decoded graph writes the same bytes.
  std::string again;
  ASSERT_TRUE(write_om(OmModel{view.meta, g, {}}, &again).ok());
  EXPECT_EQ(again, bytes);
}

TEST(OmFormat, EmptyGraphAndNoWeights) {
  OmModel m;
  m.graph = std::make_shared<Graph>();
  std::string bytes;
  ASSERT_TRUE(write_om(m, &bytes).ok());
  OmView view;
  ASSERT_TRUE(open_om(bytes.data(), bytes.size(), &view).ok());
  EXPECT_EQ(view.weight_bytes, 0u);
  std::shared_ptr<Graph> g;
  Status st = decode_graph(view, nullptr, nullptr, &g);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(g->values().empty());
  EXPECT_TRUE(view.meta.gears.empty());
}

TEST(OmFormat, WriterRefusesWhatItCannotStore) {
  OmModel m;
  EXPECT_EQ(write_om(m, nullptr).code(), code::kInvalidParam);  // no graph
  m.graph = std::make_shared<Graph>();
  Value* v = m.graph->add_value("c", f32({2}));
  v->constant = tensor<float>(DType::kFloat32, {3}, {1, 2, 3});
  v->constant->dims = {2};  // 12 bytes, but 2 float32 elements need 8
  std::string bytes;
  Status st = write_om(m, &bytes);
  EXPECT_EQ(st.code(), code::kInvalidParam);
  EXPECT_NE(st.message().find("'c'"), std::string::npos) << st.message();
  // Two values of one name (the reader resolves captures by name).
  OmModel dup;
  dup.graph = std::make_shared<Graph>();
  dup.graph->add_value("a");
  dup.graph->add_value("a");
  st = write_om(dup, &bytes);
  EXPECT_EQ(st.code(), code::kInvalidParam);
  EXPECT_NE(st.message().find("repeated value name 'a'"), std::string::npos) << st.message();
  // Nesting deeper than the reader accepts.
  OmModel deep;
  deep.graph = std::make_shared<Graph>();
  Graph* cur = deep.graph.get();
  for (int i = 0; i < 40; ++i) {
    auto sub = std::make_shared<Graph>();
    graph::Node* n = cur->add_node("n", "If", {}, {});
    Attribute a;
    a.kind = Kind::kGraph;
    a.g = sub;
    n->attrs.set("g", a);
    cur = sub.get();
  }
  st = write_om(deep, &bytes);
  EXPECT_EQ(st.code(), code::kInvalidParam);
  EXPECT_NE(st.message().find("deeper"), std::string::npos) << st.message();
  // Gears that ATC would refuse.
  OmModel bad_gears{sample_meta(), std::make_shared<Graph>(), {}};
  bad_gears.meta.gears.gears = {{1}};
  EXPECT_EQ(write_om(bad_gears, &bytes).code(), code::kInvalidParam);
}

// ------------------------------------------------------------------ execution

// y = If(cond, then: (x + w) * w_alias + captured c, else: c + c) with c = x + w;
// x: [N, 2], w shared by two values.
std::shared_ptr<Graph> runnable() {
  auto g = std::make_shared<Graph>();
  g->name = "runnable";
  g->opsets()[""] = 17;
  Value* cond = add_input(*g, "cond", TensorType{DType::kBool, Shape{}});
  Value* x = add_input(*g, "x", f32({Dim::symbolic("N"), 2}));
  auto wd = tensor<float>(DType::kFloat32, {2}, {1.f, 2.f});
  Value* w = g->add_value("w", f32({2}));
  w->constant = wd;
  Value* w2 = g->add_value("w_alias", f32({2}));
  w2->constant = wd;
  Value* c = g->add_value("c");
  g->add_node("add", "Add", {x, w}, {c}, "", 17);
  auto branch = [&](bool then) {
    auto b = std::make_shared<Graph>();
    b->name = then ? "then" : "else";
    Value* cap = b->add_value("c", f32({Dim::symbolic("N"), 2}));
    Value* out = b->add_value(then ? "t_out" : "e_out", f32({Dim::symbolic("N"), 2}));
    if (then) {
      Value* wa = b->add_value("w_alias", f32({2}));  // capture of an outer constant
      Value* m = b->add_value("m", f32({Dim::symbolic("N"), 2}));
      b->add_node("mul", "Mul", {cap, wa}, {m}, "", 17);
      b->add_node("add2", "Add", {m, cap}, {out}, "", 17);
    } else {
      b->add_node("twice", "Add", {cap, cap}, {out}, "", 17);
    }
    mark_output(*b, out);
    return b;
  };
  Value* y = g->add_value("y");
  graph::Node* n = g->add_node("if", "If", {cond}, {y}, "", 17);
  Attribute t, e;
  t.kind = e.kind = Kind::kGraph;
  t.g = branch(true);
  e.g = branch(false);
  n->attrs.set("then_branch", t);
  n->attrs.set("else_branch", e);
  mark_output(*g, y);
  (void)w2;
  return g;
}

std::vector<std::vector<float>> run_model(std::shared_ptr<Graph> g) {
  std::unique_ptr<CompiledModel> cm;
  Status st = CompiledModel::compile(std::move(g), {}, &cm);
  EXPECT_TRUE(st.ok()) << st.message();
  if (!st.ok()) return {};
  Executor ex(std::shared_ptr<const CompiledModel>(std::move(cm)));
  std::vector<std::vector<float>> results;
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  for (uint8_t c : {1, 0}) {
    std::vector<kernels::Tensor> out;
    kernels::Tensor ct{DType::kBool, {}, &c};
    kernels::Tensor xt{DType::kFloat32, {3, 2}, x.data()};
    st = ex.run({ct, xt}, &out);
    EXPECT_TRUE(st.ok()) << st.message();
    if (!st.ok() || out.size() != 1) return {};
    results.emplace_back(out[0].as<float>(), out[0].as<float>() + out[0].elements());
  }
  return results;
}

TEST(OmFormat, DecodedModelCompilesAndRunsLikeTheOriginal) {
  OmModel m{sample_meta(), runnable(), {}};
  char dir_tmpl[] = "/tmp/om_test_XXXXXX";
  ASSERT_NE(::mkdtemp(dir_tmpl), nullptr);
  const std::string path = std::string(dir_tmpl) + "/model.om";
  Status st = write_om_file(m, path);
  ASSERT_TRUE(st.ok()) << st.message();
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // Keep a copy for the fuzzer's seed corpus when asked (fuzz_om_reader).
  if (const char* seed = std::getenv("OPENACL_OM_SEED_DIR")) std::ofstream(std::string(seed) + "/runnable.om") << bytes;
  ::unlink(path.c_str());
  ::rmdir(dir_tmpl);
  std::string in_memory;
  ASSERT_TRUE(write_om(m, &in_memory).ok());
  EXPECT_EQ(bytes, in_memory) << "the file streams the same bytes";

  OmView view;
  st = open_om(bytes.data(), bytes.size(), &view);
  ASSERT_TRUE(st.ok()) << st.message();
  // Weights copied elsewhere (as into device memory), the file bytes then dropped.
  auto copy = std::make_shared<std::vector<uint8_t>>(view.weights, view.weights + view.weight_bytes);
  std::shared_ptr<Graph> decoded;
  st = decode_graph(view, copy->data(), copy, &decoded);
  ASSERT_TRUE(st.ok()) << st.message();
  bytes.assign(bytes.size(), '\x55');
  EXPECT_EQ(diff_graph(*runnable(), *decoded, "runnable"), "");

  auto want = run_model(runnable());
  auto got = run_model(decoded);
  ASSERT_EQ(want.size(), 2u);
  // then: (x+w)*w + (x+w); else: 2(x+w).  x+w = {2,4,4,6,6,8}
  EXPECT_EQ(want[0], (std::vector<float>{4, 12, 8, 18, 12, 24}));
  EXPECT_EQ(want[1], (std::vector<float>{4, 8, 8, 12, 12, 16}));
  EXPECT_EQ(got, want);
}

TEST(OmFormat, WriteFileFailsCleanly) {
  OmModel m{OmMeta{}, runnable(), {}};
  Status st = write_om_file(m, "/nonexistent_dir_for_om_test/x.om");
  EXPECT_EQ(st.code(), code::kWriteFile);
  EXPECT_NE(st.message().find("/nonexistent_dir_for_om_test"), std::string::npos) << st.message();
  // A folder in the way of the rename: the temp file is removed again.
  char dir_tmpl[] = "/tmp/om_test_XXXXXX";
  ASSERT_NE(::mkdtemp(dir_tmpl), nullptr);
  const std::string target = std::string(dir_tmpl) + "/taken";
  ASSERT_EQ(::mkdir(target.c_str(), 0755), 0);
  ::close(::open((target + "/f").c_str(), O_CREAT | O_WRONLY, 0644));  // non-empty: rename cannot replace it
  st = write_om_file(m, target);
  EXPECT_EQ(st.code(), code::kWriteFile);
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_tmpl)) n += e.path().filename() != "taken";
  EXPECT_EQ(n, 0u) << "the temp file is removed";
  ::unlink((target + "/f").c_str());
  ::rmdir(target.c_str());
  ::rmdir(dir_tmpl);
}

// ------------------------------------------------------------------ defences

std::string sample_bytes() {
  std::string bytes;
  Rich r = rich_graph();
  EXPECT_TRUE(write_om(OmModel{sample_meta(), r.g, {}}, &bytes).ok());
  return bytes;
}

// Two packed blobs' bytes (patterns), and the sample with them in PACKED:
// one made from the first weight byte, one from the last.
const std::string& blob_bytes(size_t i) {
  static const std::string a(100, '\x5a'), b = [] {
    std::string s(4096 + 3, '\0');
    for (size_t k = 0; k < s.size(); ++k) s[k] = static_cast<char>(k * 7 + 1);
    return s;
  }();
  return i == 0 ? a : b;
}
std::vector<kernels::PackedBlob> sample_packs(size_t weight_bytes) {
  std::vector<kernels::PackedBlob> packs(2);
  packs[0] = {0, "reorder test recipe", blob_bytes(0).data(), blob_bytes(0).size(), nullptr};
  packs[1] = {weight_bytes - 1, std::string("winograd\0binary", 15), blob_bytes(1).data(), blob_bytes(1).size(), nullptr};
  return packs;
}
std::string packed_sample_bytes() {
  const std::string plain = sample_bytes();
  OmView view;
  EXPECT_TRUE(open_om(plain.data(), plain.size(), &view).ok());
  Rich r = rich_graph();
  std::string bytes;
  EXPECT_TRUE(write_om(OmModel{sample_meta(), r.g, sample_packs(view.weight_bytes)}, &bytes).ok());
  return bytes;
}

TEST(OmFormat, PackedBlobsComeBackWhereTheyLie) {
  const std::string plain = sample_bytes(), packed = packed_sample_bytes();
  EXPECT_EQ(sections(plain).size(), 3u);
  const auto secs = sections(packed);
  ASSERT_EQ(secs.size(), 4u);
  EXPECT_EQ(secs[3].kind, 4u);
  EXPECT_EQ(secs[3].offset % 4096, 0u);
  EXPECT_GE(secs[3].offset, secs[2].offset + secs[2].size);
  OmView pv, view;
  ASSERT_TRUE(open_om(plain.data(), plain.size(), &pv).ok());
  Status st = open_om(packed.data(), packed.size(), &view);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(pv.packed.empty());
  ASSERT_EQ(view.weight_bytes, pv.weight_bytes);
  EXPECT_EQ(std::memcmp(view.weights, pv.weights, pv.weight_bytes), 0);
  const auto want = sample_packs(view.weight_bytes);
  ASSERT_EQ(view.packed.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const kernels::PackedBlob& b = view.packed[i];
    EXPECT_EQ(b.source_offset, want[i].source_offset) << i;
    EXPECT_EQ(b.recipe, want[i].recipe) << i;
    ASSERT_EQ(b.bytes, want[i].bytes) << i;
    EXPECT_EQ(std::memcmp(b.data, want[i].data, b.bytes), 0) << i;
    const size_t at = static_cast<const char*>(b.data) - packed.data();
    EXPECT_EQ(at % 64, 0u) << i;
    EXPECT_TRUE(at >= secs[3].offset && at + b.bytes <= secs[3].offset + secs[3].size) << i;
  }
  // The file writer streams the same bytes.
  const std::string path = ::testing::TempDir() + "/openacl_packed_sample.om";
  Rich r = rich_graph();
  ASSERT_TRUE(write_om_file(OmModel{sample_meta(), r.g, sample_packs(view.weight_bytes)}, path).ok());
  std::ifstream in(path, std::ios::binary);
  const std::string from_file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(from_file == packed);
  ::unlink(path.c_str());
}

TEST(OmFormat, WriterRefusesBadPackedBlobs) {
  const std::string plain = sample_bytes();
  OmView view;
  ASSERT_TRUE(open_om(plain.data(), plain.size(), &view).ok());
  Rich r = rich_graph();
  std::string bytes;
  auto packs = sample_packs(view.weight_bytes);
  packs[1].source_offset = view.weight_bytes;  // past the weights
  Status st = write_om(OmModel{sample_meta(), r.g, packs}, &bytes);
  EXPECT_EQ(st.code(), code::kInvalidParam);
  EXPECT_NE(st.message().find("packed blob 1"), std::string::npos) << st.message();
  packs = sample_packs(view.weight_bytes);
  packs[0].recipe.clear();
  EXPECT_EQ(write_om(OmModel{sample_meta(), r.g, packs}, &bytes).code(), code::kInvalidParam);
}

TEST(OmReader, VersionOneFilesStillOpen) {
  auto as_version_1 = [](std::string b) {
    const uint32_t v1 = 1;
    std::memcpy(b.data() + 8, &v1, 4);
    reseal(&b);
    return b;
  };
  OmView view;
  const std::string v1 = as_version_1(sample_bytes());
  Status st = open_om(v1.data(), v1.size(), &view);
  EXPECT_TRUE(st.ok()) << st.message();
  // Version 1 had no PACKED: a fourth section is refused.
  const std::string v1_packed = as_version_1(packed_sample_bytes());
  st = open_om(v1_packed.data(), v1_packed.size(), &view);
  EXPECT_EQ(st.code(), code::kDeserializeModel);
  EXPECT_NE(st.message().find("section count 4"), std::string::npos) << st.message();
}

TEST(OmReader, BadPackedTableIsAParseError) {
  const std::string good = packed_sample_bytes();
  const Section packed = sections(good)[3];
  OmView view;
  ASSERT_TRUE(open_om(good.data(), good.size(), &view).ok());
  // Entry i's field at byte `field`, set to v, the checksums made right again.
  auto patch = [&](size_t i, size_t field, uint64_t v, size_t width) {
    std::string b = good;
    std::memcpy(b.data() + packed.offset + 8 + 32 * i + field, &v, width);
    reseal(&b);
    OmView v2;
    return open_om(b.data(), b.size(), &v2);
  };
  auto expect = [](const Status& st, const char* what) {
    EXPECT_EQ(st.code(), code::kParseModel) << st.message();
    EXPECT_NE(st.message().find("PACKED"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  };
  expect(patch(0, 0, view.weight_bytes, 8), "source offset");
  const uint64_t blob1 = rd64(good, packed.offset + 8 + 32 + 8);
  expect(patch(1, 8, blob1 + 4, 8), "aligned");
  expect(patch(1, 16, packed.size, 8), "outside");
  expect(patch(1, 8, UINT64_MAX - 63, 8), "outside");
  expect(patch(0, 28, packed.size, 4), "recipe");
  expect(patch(0, 28, 0, 4), "recipe");
  std::string b = good;
  const uint32_t many = 1u << 30;
  std::memcpy(b.data() + packed.offset, &many, 4);
  reseal(&b);
  expect(open_om(b.data(), b.size(), &view), "do not fit");
}

TEST(OmReader, CorruptedByteInEverySectionIsAChecksumError) {
  const std::string good = sample_bytes();
  OmView view;
  auto expect_bad = [&](size_t at, const std::string& what) {
    std::string b = good;
    b[at] = static_cast<char>(b[at] ^ 0x10);
    Status st = open_om(b.data(), b.size(), &view);
    EXPECT_EQ(st.code(), code::kDeserializeModel) << at;
    EXPECT_NE(st.message().find(what), std::string::npos) << at << ": " << st.message();
  };
  expect_bad(40, "header checksum");       // reserved header bytes
  expect_bad(64 + 8, "header checksum");   // the table: META's offset
  expect_bad(64 + 32 + 24, "header checksum");  // GRAPH's stored crc
  const auto secs = sections(good);
  ASSERT_EQ(secs.size(), 3u);
  const char* names[] = {"", "META", "GRAPH", "WEIGHTS", "PACKED"};
  for (const Section& s : secs) {
    ASSERT_GT(s.size, 0u);
    for (size_t at : {s.offset, s.offset + s.size / 2, s.offset + s.size - 1})
      expect_bad(at, std::string(names[s.kind]) + " section checksum");
  }
  const std::string packed = packed_sample_bytes();
  const Section p = sections(packed)[3];
  for (size_t at : {p.offset, p.offset + p.size / 2, p.offset + p.size - 1}) {
    std::string b = packed;
    b[at] = static_cast<char>(b[at] ^ 0x10);
    Status st = open_om(b.data(), b.size(), &view);
    EXPECT_EQ(st.code(), code::kDeserializeModel) << at;
    EXPECT_NE(st.message().find("PACKED section checksum"), std::string::npos) << st.message();
  }
}

// defer_weights: WEIGHTS' and PACKED's checksums are left to verify_sections
// (which finds a bad byte in either); META's and GRAPH's are still checked.
TEST(OmReader, DeferredWeightChecksums) {
  const std::string packed = packed_sample_bytes();
  const auto secs = sections(packed);
  ASSERT_EQ(secs.size(), 4u);
  OmView view;
  ASSERT_TRUE(open_om(packed.data(), packed.size(), &view, false, true).ok());
  ASSERT_EQ(view.deferred.size(), 2u);
  EXPECT_TRUE(verify_sections(view.deferred).ok());
  const char* names[] = {"", "META", "GRAPH", "WEIGHTS", "PACKED"};
  for (const Section& s : secs) {
    std::string b = packed;
    b[s.offset + s.size / 2] = static_cast<char>(b[s.offset + s.size / 2] ^ 0x10);
    const std::string want = std::string(names[s.kind]) + " section checksum";
    Status st = open_om(b.data(), b.size(), &view, false, true);
    if (s.kind == 3 || s.kind == 4) {
      ASSERT_TRUE(st.ok()) << st.message();
      st = verify_sections(view.deferred);
    }
    EXPECT_EQ(st.code(), code::kDeserializeModel) << want;
    EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
  }
}

TEST(OmReader, TruncatedAtAnyLengthFails) {
  const std::string good = sample_bytes();
  OmView view;
  for (size_t n = 0; n < good.size(); n += (n < 512 ? 1 : 61)) {
    std::string b = good.substr(0, n);
    Status st = open_om(b.data(), b.size(), &view);
    ASSERT_FALSE(st.ok()) << n;
    EXPECT_EQ(st.code(), code::kDeserializeModel) << n;
  }
  std::string longer = good + "x";
  EXPECT_NE(open_om(longer.data(), longer.size(), &view).message().find("appended"), std::string::npos);
  // The GRAPH section cut short anywhere (checksums bypassed): an error
  // naming the section and an offset, never a crash.
  ASSERT_TRUE(open_om(good.data(), good.size(), &view).ok());
  const size_t full = view.graph_bytes;
  for (size_t n = 0; n < full; ++n) {
    OmView cut = view;
    cut.graph_bytes = n;
    std::shared_ptr<Graph> g;
    Status st = decode_graph(cut, view.weights, nullptr, &g);
    ASSERT_EQ(st.code(), code::kParseModel) << n;
    ASSERT_NE(st.message().find("GRAPH section is malformed at offset"), std::string::npos) << st.message();
  }
  // Weights shorter than the graph says.
  OmView small = view;
  small.weight_bytes = 64;
  std::shared_ptr<Graph> g;
  Status st = decode_graph(small, view.weights, nullptr, &g);
  EXPECT_EQ(st.code(), code::kParseModel);
  EXPECT_NE(st.message().find("outside"), std::string::npos) << st.message();
}

TEST(OmReader, MutatedGraphNeverCrashes) {
  const std::string good = sample_bytes();
  OmView view;
  ASSERT_TRUE(open_om(good.data(), good.size(), &view).ok());
  std::mt19937 rng(1234);
  int ok = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> g(view.graph, view.graph + view.graph_bytes);
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t at = rng() % g.size();
      switch (rng() % 3) {
        case 0: g[at] = static_cast<uint8_t>(rng()); break;
        case 1: g[at] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        default: g[at] = (rng() & 1) ? 0xFF : 0x00; break;
      }
    }
    OmView v = view;
    v.graph = g.data();
    std::shared_ptr<Graph> out;
    Status st = decode_graph(v, view.weights, nullptr, &out);
    if (st.ok()) {
      ++ok;
      std::string again;
      (void)write_om(OmModel{{}, out, {}}, &again);  // whatever decodes can be written again
    } else {
      EXPECT_EQ(st.code(), code::kParseModel);
    }
  }
  SUCCEED() << ok << " mutations still decoded";
}

// A GRAPH section made by hand: `depth` graphs, each holding the next in a
// graph attribute.
void nested_graph(std::string* out, int depth) {
  auto u32 = [&](uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); };
  auto str = [&](const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    out->append(s);
  };
  str("g");
  u32(0);  // opsets
  u32(0);  // values
  u32(0);  // inputs
  u32(0);  // outputs
  if (depth == 0) {
    u32(0);
    return;
  }
  u32(1);
  str("n");
  str("If");
  str("");
  u32(0);  // opset
  u32(0);  // inputs
  u32(0);  // outputs
  u32(1);  // attributes
  str("a");
  out->push_back(static_cast<char>(Kind::kGraph));
  nested_graph(out, depth - 1);
}

Status decode_raw(const std::string& graph_bytes, std::shared_ptr<Graph>* g) {
  OmView v;
  v.graph = reinterpret_cast<const uint8_t*>(graph_bytes.data());
  v.graph_bytes = graph_bytes.size();
  return decode_graph(v, nullptr, nullptr, g);
}

TEST(OmReader, DepthAndCountLimits) {
  std::shared_ptr<Graph> g;
  std::string ok_bytes, deep_bytes;
  nested_graph(&ok_bytes, 30);
  Status st = decode_raw(ok_bytes, &g);
  EXPECT_TRUE(st.ok()) << st.message();
  nested_graph(&deep_bytes, 5000);
  st = decode_raw(deep_bytes, &g);
  EXPECT_EQ(st.code(), code::kParseModel);
  EXPECT_NE(st.message().find("deeper"), std::string::npos) << st.message();
  // A count the bytes cannot hold is refused before any allocation.
  std::string huge;
  auto u32 = [&](uint32_t v) { huge.append(reinterpret_cast<const char*>(&v), 4); };
  u32(0);  // name ""
  u32(0);  // opsets
  u32(0xFFFFFFFFu);  // values
  st = decode_raw(huge, &g);
  EXPECT_EQ(st.code(), code::kParseModel);
  EXPECT_NE(st.message().find("value count 4294967295 cannot fit"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("offset 12"), std::string::npos) << st.message();
  // Trailing bytes after the graph.
  std::string trailing = ok_bytes + "zz";
  EXPECT_EQ(decode_raw(trailing, &g).code(), code::kParseModel);
}

TEST(OmReader, UnknownKindsAndDtypesAreRefused) {
  // value "v" with dtype 99.
  std::string b;
  auto u32 = [&](uint32_t v) { b.append(reinterpret_cast<const char*>(&v), 4); };
  auto str = [&](const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    b.append(s);
  };
  str("g");
  u32(0);
  u32(1);
  str("v");
  u32(99);
  b.push_back(0);
  u32(0);
  u32(0);
  u32(0);
  std::shared_ptr<Graph> g;
  Status st = decode_raw(b, &g);
  EXPECT_NE(st.message().find("unknown dtype 99"), std::string::npos) << st.message();
  // The same with dtype float32 decodes; then an attribute of kind 42.
  std::memset(b.data() + 4 + 1 + 4 + 4 + 4 + 1, 0, 4);
  b[4 + 1 + 4 + 4 + 4 + 1] = 1;
  st = decode_raw(b, &g);
  ASSERT_TRUE(st.ok()) << st.message();
  b.resize(b.size() - 4);
  u32(1);  // one node
  str("n");
  str("Op");
  str("");
  u32(0);
  u32(0);
  u32(0);
  u32(1);
  str("a");
  b.push_back(42);
  st = decode_raw(b, &g);
  EXPECT_NE(st.message().find("unknown kind 42"), std::string::npos) << st.message();
}

TEST(OmReader, MagicVersionAndCann) {
  std::string good = sample_bytes();
  OmView view;
  std::string b = good;
  b[0] = 'X';
  Status st = open_om(b.data(), b.size(), &view);
  EXPECT_EQ(st.code(), code::kDeserializeModel);
  EXPECT_NE(st.message().find("magic"), std::string::npos) << st.message();
  b = good;
  const uint32_t later = kOmVersion + 1;
  std::memcpy(b.data() + 8, &later, 4);
  st = open_om(b.data(), b.size(), &view);
  EXPECT_EQ(st.code(), code::kDeserializeModel);
  EXPECT_NE(st.message().find("version " + std::to_string(later)), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("reads version " + std::to_string(kOmVersion)), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("atc"), std::string::npos) << st.message();
  reseal(&b);  // even with a valid checksum
  EXPECT_EQ(open_om(b.data(), b.size(), &view).code(), code::kDeserializeModel);
  const uint32_t v0 = 0;
  std::memcpy(b.data() + 8, &v0, 4);
  EXPECT_EQ(open_om(b.data(), b.size(), &view).code(), code::kDeserializeModel);
  std::string cann(256, '\0');
  const uint32_t magic = 0x444F4D49;
  std::memcpy(cann.data(), &magic, 4);
  EXPECT_EQ(sniff_format(cann.data(), cann.size()), ModelFormat::kCannOm);
  st = open_om(cann.data(), cann.size(), &view);
  EXPECT_EQ(st.code(), code::kDeserializeModel);
  EXPECT_NE(st.message().find("CANN"), std::string::npos) << st.message();
  EXPECT_EQ(open_om(nullptr, 0, &view).code(), code::kDeserializeModel);
}

TEST(OmReader, BadMetaIsAParseError) {
  const std::string good = sample_bytes();
  const auto secs = sections(good);
  const Section& meta = secs[0];
  ASSERT_EQ(meta.kind, 1u);
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string b = good;
    const size_t at = b.find(from, meta.offset);
    EXPECT_LT(at, meta.offset + meta.size) << from;
    b.replace(at, from.size(), to);  // same length
    reseal(&b);
    OmView view;
    return open_om(b.data(), b.size(), &view);
  };
  Status st = edit("\"batch\"", "\"bitch\"");
  EXPECT_EQ(st.code(), code::kParseModel);
  EXPECT_NE(st.message().find("META"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("bitch"), std::string::npos) << st.message();
  std::string b = good;
  b[meta.offset] = '[';  // '{' -> '[': JSON, but an array
  reseal(&b);
  OmView view;
  st = open_om(b.data(), b.size(), &view);
  EXPECT_EQ(st.code(), code::kParseModel) << st.message();
  b = good;
  b[meta.offset + 1] = '\x01';  // not JSON
  reseal(&b);
  st = open_om(b.data(), b.size(), &view);
  EXPECT_EQ(st.code(), code::kParseModel);
  EXPECT_NE(st.message().find("not valid JSON"), std::string::npos) << st.message();
  st = edit("\"work_size\":12345", "\"work_size\":-1234");
  EXPECT_EQ(st.code(), code::kParseModel);
  EXPECT_NE(st.message().find("work_size"), std::string::npos) << st.message();
  st = edit("[[1],[2],[4]]", "[[1],[2],[1]]");  // a repeated gear
  EXPECT_EQ(st.code(), code::kParseModel);
  EXPECT_NE(st.message().find("repeats"), std::string::npos) << st.message();
}

TEST(OmReader, SectionTableChecks) {
  const std::string good = sample_bytes();
  OmView view;
  auto patch64 = [&](size_t at, uint64_t v) {
    std::string b = good;
    std::memcpy(b.data() + at, &v, 8);
    reseal(&b);
    return open_om(b.data(), b.size(), &view);
  };
  const auto secs = sections(good);
  // GRAPH's size running past the end of the file.
  Status st = patch64(64 + 32 + 16, good.size());
  EXPECT_NE(st.message().find("outside"), std::string::npos) << st.message();
  // GRAPH moved onto META.
  st = patch64(64 + 32 + 8, secs[0].offset);
  EXPECT_NE(st.message().find("overlap"), std::string::npos) << st.message();
  // WEIGHTS not 4096-aligned.
  st = patch64(64 + 64 + 8, secs[2].offset - 64);
  EXPECT_NE(st.message().find("aligned"), std::string::npos) << st.message();
  // A section of a kind this version does not know.
  std::string b = good;
  const uint32_t kind = 9;
  std::memcpy(b.data() + 64 + 64, &kind, 4);
  reseal(&b);
  st = open_om(b.data(), b.size(), &view);
  EXPECT_NE(st.message().find("unknown kind 9"), std::string::npos) << st.message();
  // Two META sections.
  b = good;
  const uint32_t meta_kind = 1;
  std::memcpy(b.data() + 64 + 32, &meta_kind, 4);
  reseal(&b);
  st = open_om(b.data(), b.size(), &view);
  EXPECT_NE(st.message().find("twice"), std::string::npos) << st.message();
}

// ------------------------------------------------------------------ sniffing, JSON

TEST(OmFormat, SniffFormat) {
  auto sniff = [](std::vector<uint8_t> b) { return sniff_format(b.data(), b.size()); };
  EXPECT_EQ(sniff({'O', 'A', 'C', 'L', 'O', 'M', '\r', '\n'}), ModelFormat::kOm);
  EXPECT_EQ(sniff({'O', 'A', 'C', 'L', 'O', 'M', '\n', '\n'}), ModelFormat::kUnknown);
  EXPECT_EQ(sniff({0x49, 0x4D, 0x4F, 0x44, 0, 0}), ModelFormat::kCannOm);
  EXPECT_EQ(sniff({0x08, 0x07, 0x12, 0x04}), ModelFormat::kOnnx);  // ir_version 7
  EXPECT_EQ(sniff({0x3A, 0x10}), ModelFormat::kOnnx);              // graph first
  EXPECT_EQ(sniff({0x42, 0x02}), ModelFormat::kOnnx);              // opset_import first
  EXPECT_EQ(sniff({0x72, 0x00}), ModelFormat::kOnnx);              // metadata_props
  EXPECT_EQ(sniff({0xA2, 0x01, 0x00}), ModelFormat::kOnnx);        // training_info
  EXPECT_EQ(sniff({0xCA, 0x01, 0x00}), ModelFormat::kOnnx);        // functions
  EXPECT_EQ(sniff({0xA2, 0x02}), ModelFormat::kUnknown);
  EXPECT_EQ(sniff({0xA2}), ModelFormat::kUnknown);
  EXPECT_EQ(sniff({0x0A}), ModelFormat::kUnknown);  // field 1 with the wrong wire type
  EXPECT_EQ(sniff({0x48}), ModelFormat::kUnknown);  // field 9
  EXPECT_EQ(sniff({'{', '"'}), ModelFormat::kUnknown);
  EXPECT_EQ(sniff({}), ModelFormat::kUnknown);
  EXPECT_EQ(sniff_format(nullptr, 10), ModelFormat::kUnknown);
  EXPECT_STREQ(format_name(ModelFormat::kOnnx), "ONNX");
  EXPECT_STRNE(format_name(ModelFormat::kOm), format_name(ModelFormat::kCannOm));
}

TEST(OmFormat, JsonDump) {
  Rich r = rich_graph();
  const std::string s = om_to_json(OmModel{sample_meta(), r.g, {}});
  auto j = nlohmann::json::parse(s, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << s;
  EXPECT_EQ(j["meta"]["gears"]["kind"], "batch");
  EXPECT_EQ(j["meta"]["gears"]["gears"], nlohmann::json::parse("[[1],[2],[4]]"));
  EXPECT_EQ(j["meta"]["gears"]["positions"][0]["input"], "x");
  EXPECT_EQ(j["meta"]["soc_version"], "Ascend310P3");
  EXPECT_EQ(j["graph"]["inputs"][0]["shape"], nlohmann::json::parse("[\"N\",3,-1]"));
  EXPECT_TRUE(j["graph"]["inputs"][1]["shape"].is_null());
  const auto& node = j["graph"]["nodes"][0];
  EXPECT_EQ(node["op_type"], "Custom");
  EXPECT_EQ(node["attributes"]["t"]["value"]["bytes"], 12);
  EXPECT_EQ(node["attributes"]["g"]["value"]["name"], "then");
  EXPECT_EQ(s.find("1.5, -2"), std::string::npos) << "no weight values";
}

// ------------------------------------------------------------------ gears

std::unique_ptr<Graph> gear_graph() {
  auto gp = std::make_unique<Graph>();
  Graph& g = *gp;
  g.name = "gears";
  add_input(g, "x", f32({Dim(), 3, Dim::symbolic("H"), Dim::symbolic("W")}));
  add_input(g, "y", f32({Dim(), 8}));
  add_input(g, "z", TensorType{DType::kFloat32, std::nullopt});
  return gp;
}

TEST(GearSpec, Validate) {
  GearSpec s;
  EXPECT_TRUE(s.validate().ok());
  EXPECT_EQ(s.values_per_gear(), 0u);
  s.gears = {{1}};
  EXPECT_FALSE(s.validate().ok()) << "kind none with gears";
  s = {GearKind::kBatch, {{"x", 0}, {"y", 0}}, {{1}, {2}, {8}}};
  EXPECT_TRUE(s.validate().ok()) << s.validate().message();
  EXPECT_EQ(s.values_per_gear(), 1u);
  s.gears = {{1}};
  EXPECT_NE(s.validate().message().find("2 to 100"), std::string::npos);
  s.gears.clear();
  for (int i = 1; i <= 101; ++i) s.gears.push_back({i});
  EXPECT_EQ(s.validate().code(), code::kInvalidParam);
  s.gears.pop_back();
  EXPECT_TRUE(s.validate().ok());
  s.gears = {{1}, {1, 2}};
  EXPECT_FALSE(s.validate().ok());
  s.gears = {{1}, {0}};
  EXPECT_NE(s.validate().message().find("> 0"), std::string::npos);
  s.gears = {{2}, {2}};
  EXPECT_NE(s.validate().message().find("repeats"), std::string::npos);
  s.positions.clear();
  s.gears = {{1}, {2}};
  EXPECT_FALSE(s.validate().ok()) << "no positions";
  s.positions = {{"x", 0}, {"x", 0}};
  EXPECT_FALSE(s.validate().ok()) << "repeated position";
  s.positions = {{"x", 0}, {"y", 0}, {"x", 1}};
  EXPECT_FALSE(s.validate().ok()) << "positions of x split";

  s = {GearKind::kImageSize, {{"x", 2}, {"x", 3}}, {{112, 112}, {224, 224}}};
  EXPECT_TRUE(s.validate().ok()) << s.validate().message();
  EXPECT_EQ(s.values_per_gear(), 2u);
  s.gears = {{112}, {224}};
  EXPECT_FALSE(s.validate().ok());
  s.gears = {{112, 112}, {224, 224}};
  s.positions = {{"x", 2}, {"x", 3}, {"y", 0}};
  EXPECT_NE(s.validate().message().find("exactly 2"), std::string::npos) << s.validate().message();

  s = {GearKind::kDims, {{"x", 0}, {"y", 0}}, {{1, 2}, {4, 8}}};
  EXPECT_TRUE(s.validate().ok());
  EXPECT_EQ(s.values_per_gear(), 2u);
  s.gears = {{1, 2}, {4}};
  EXPECT_FALSE(s.validate().ok());
  EXPECT_EQ(s.find({1, 2}), 0);
}

TEST(GearSpec, InputShapesAndFind) {
  auto gp = gear_graph();
  const Graph& g = *gp;
  std::map<std::string, Shape> shapes;
  GearSpec batch{GearKind::kBatch, {{"x", 0}, {"y", 0}}, {{1}, {4}}};
  ASSERT_TRUE(batch.input_shapes(1, g, &shapes).ok());
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(graph::shape_str(shapes["x"]), "[4,3,H,W]");
  EXPECT_EQ(graph::shape_str(shapes["y"]), "[4,8]");
  EXPECT_EQ(batch.find({4}), 1);
  EXPECT_EQ(batch.find({3}), -1);
  EXPECT_EQ(batch.find({}), -1);
  EXPECT_FALSE(batch.input_shapes(2, g, &shapes).ok()) << "no gear 2";

  GearSpec image{GearKind::kImageSize, {{"x", 2}, {"x", 3}}, {{112, 96}, {224, 200}}};
  ASSERT_TRUE(image.input_shapes(0, g, &shapes).ok());
  EXPECT_EQ(graph::shape_str(shapes["x"]), "[?,3,112,96]");
  EXPECT_EQ(image.find({224, 200}), 1);

  GearSpec dims{GearKind::kDims, {{"x", 0}, {"x", 3}, {"y", 0}}, {{1, 5, 2}, {2, 6, 3}}};
  ASSERT_TRUE(dims.input_shapes(1, g, &shapes).ok());
  EXPECT_EQ(graph::shape_str(shapes["x"]), "[2,3,H,6]");
  EXPECT_EQ(graph::shape_str(shapes["y"]), "[3,8]");

  GearSpec missing{GearKind::kBatch, {{"nope", 0}}, {{1}, {2}}};
  Status st = missing.input_shapes(0, g, &shapes);
  EXPECT_EQ(st.code(), code::kInvalidParam);
  EXPECT_NE(st.message().find("'nope'"), std::string::npos) << st.message();
  GearSpec axis{GearKind::kBatch, {{"y", 2}}, {{1}, {2}}};
  EXPECT_NE(axis.input_shapes(0, g, &shapes).message().find("out of range"), std::string::npos);
  GearSpec rankless{GearKind::kBatch, {{"z", 0}}, {{1}, {2}}};
  EXPECT_FALSE(rankless.input_shapes(0, g, &shapes).ok());
  GearSpec fixed{GearKind::kBatch, {{"y", 1}}, {{8}, {2}}};
  EXPECT_TRUE(fixed.input_shapes(0, g, &shapes).ok()) << "declared 8, gear 8";
  st = fixed.input_shapes(1, g, &shapes);
  EXPECT_NE(st.message().find("declared 8"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace openacl::model
