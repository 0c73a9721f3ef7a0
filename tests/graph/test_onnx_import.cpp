// ONNX importer: models built with the generated classes, every initializer
// storage form, external data, Constant folding, subgraphs, and hostile input.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/onnx/onnx_import.h"
#include "openacl_onnx.pb.h"

namespace {

namespace pb = ::openacl_onnx;
namespace ox = ::openacl::graph::onnx;
namespace fs = std::filesystem;
using openacl::Status;
using openacl::graph::Attribute;
using openacl::graph::DType;
using openacl::graph::Graph;
using openacl::graph::Node;
using openacl::graph::TensorData;
using openacl::graph::Value;
namespace code = openacl::code;

pb::ModelProto make_model(int ir = 8, int opset = 13) {
  pb::ModelProto m;
  m.set_ir_version(ir);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.set_producer_name("openacl-test");
  m.mutable_graph()->set_name("g");
  return m;
}

// dims: "3" -> dim_value, "?" -> neither, anything else -> dim_param.
void set_type(pb::ValueInfoProto* vi, int elem, const std::vector<std::string>& dims) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (d == "?") continue;
    if (!d.empty() && (isdigit(static_cast<unsigned char>(d[0])) || d[0] == '-')) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}

pb::ValueInfoProto* add_input(pb::GraphProto* g, const std::string& name, int elem,
                              const std::vector<std::string>& dims) {
  auto* vi = g->add_input();
  vi->set_name(name);
  set_type(vi, elem, dims);
  return vi;
}

pb::ValueInfoProto* add_output(pb::GraphProto* g, const std::string& name, int elem = 1,
                               const std::vector<std::string>& dims = {}) {
  auto* vi = g->add_output();
  vi->set_name(name);
  set_type(vi, elem, dims);
  return vi;
}

pb::TensorProto* add_init(pb::GraphProto* g, const std::string& name, int dtype, const std::vector<int64_t>& dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(dtype);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

pb::NodeProto* add_node(pb::GraphProto* g, const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : ins) n->add_input(i);
  for (const auto& o : outs) n->add_output(o);
  return n;
}

pb::AttributeProto* add_attr(pb::NodeProto* n, const std::string& name, pb::AttributeProto::AttributeType type) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

Status import(const pb::ModelProto& m, std::unique_ptr<Graph>* g, const std::string& base_dir = "") {
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  ox::ImportOptions opts;
  opts.base_dir = base_dir;
  return ox::import_model(bytes.data(), bytes.size(), opts, g);
}

Status import(const pb::ModelProto& m, const std::string& base_dir = "") {
  std::unique_ptr<Graph> g;
  return import(m, &g, base_dir);
}

#define EXPECT_FAILS_WITH(st, want_code, substr)                                             \
  do {                                                                                       \
    const Status _s = (st);                                                                  \
    EXPECT_EQ(_s.code(), (want_code)) << _s.message();                                       \
    EXPECT_NE(_s.message().find(substr), std::string::npos) << "message: " << _s.message(); \
  } while (0)

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "openacl_onnx_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data()) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string write(const std::string& rel, const std::string& bytes) const {
    const fs::path p = fs::path(path_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return p.string();
  }

 private:
  std::string path_;
};

const Node* find_node(const Graph& g, const std::string& op) {
  for (const auto& n : g.nodes())
    if (n->op_type == op) return n.get();
  return nullptr;
}

// ---------------------------------------------------------------- basics

pb::ModelProto conv_relu_model() {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"N", "3", "8", "8"});
  std::vector<float> w(4 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.5f;
  add_init(g, "W", 1, {4, 3, 3, 3})->set_raw_data(bytes_of(w));
  auto* b = add_init(g, "B", 1, {4});
  for (float v : {1.f, 2.f, 3.f, 4.f}) b->add_float_data(v);
  auto* conv = add_node(g, "Conv", {"X", "W", "B"}, {"C"}, "conv1");
  auto* ks = add_attr(conv, "kernel_shape", pb::AttributeProto::INTS);
  ks->add_ints(3);
  ks->add_ints(3);
  auto* pads = add_attr(conv, "pads", pb::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  add_attr(conv, "group", pb::AttributeProto::INT)->set_i(1);
  add_node(g, "Relu", {"C"}, {"Y"}, "relu1");
  auto* vi = g->add_value_info();
  vi->set_name("C");
  set_type(vi, 1, {"N", "4", "8", "8"});
  add_output(g, "Y", 1, {"N", "4", "?", "?"});
  return m;
}

TEST(OnnxImport, ConvRelu) {
  std::unique_ptr<Graph> g;
  Status st = import(conv_relu_model(), &g);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(g->name, "g");
  ASSERT_EQ(g->inputs().size(), 1u);
  const Value* x = g->inputs()[0];
  EXPECT_EQ(x->name, "X");
  EXPECT_TRUE(x->is_graph_input);
  EXPECT_EQ(x->type.str(), "float32[N,3,8,8]");
  ASSERT_EQ(g->nodes().size(), 2u);
  const Node* conv = find_node(*g, "Conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->name, "conv1");
  EXPECT_EQ(conv->opset, 13);
  EXPECT_EQ(conv->domain, "");
  ASSERT_EQ(conv->inputs.size(), 3u);
  EXPECT_EQ(conv->inputs[0], x);
  const Value* w = conv->inputs[1];
  ASSERT_TRUE(w->constant);
  EXPECT_EQ(w->type.str(), "float32[4,3,3,3]");
  EXPECT_FALSE(w->is_graph_input);
  EXPECT_EQ(w->constant->bytes, 108 * sizeof(float));
  EXPECT_FLOAT_EQ(w->constant->as<float>()[107], 53.5f);
  const Value* b = conv->inputs[2];
  ASSERT_TRUE(b->constant);
  EXPECT_FLOAT_EQ(b->constant->as<float>()[3], 4.f);
  EXPECT_EQ(*conv->attrs.get_ints("kernel_shape"), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(conv->attrs.get_int("group", 0), 1);
  EXPECT_EQ(conv->outputs[0]->type.str(), "float32[N,4,8,8]");  // from value_info
  ASSERT_EQ(g->outputs().size(), 1u);
  const Value* y = g->outputs()[0];
  EXPECT_TRUE(y->is_graph_output);
  EXPECT_EQ(y->type.str(), "float32[N,4,?,?]");
  ASSERT_TRUE(y->type.shape);
  EXPECT_EQ((*y->type.shape)[0].symbol, "N");
  EXPECT_FALSE((*y->type.shape)[0].known());
  EXPECT_EQ((*y->type.shape)[1].value, 4);
  EXPECT_FALSE((*y->type.shape)[2].known());
  EXPECT_TRUE((*y->type.shape)[2].symbol.empty());
  EXPECT_EQ(y->producer, find_node(*g, "Relu"));
  EXPECT_EQ(g->opsets().at(""), 13);
}

TEST(OnnxImport, ImportFileUsesItsFolder) {
  TempDir dir;
  std::string bytes;
  ASSERT_TRUE(conv_relu_model().SerializeToString(&bytes));
  const std::string path = dir.write("m.onnx", bytes);
  std::unique_ptr<Graph> g;
  Status st = ox::import_file(path, &g);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(g->nodes().size(), 2u);
  EXPECT_FAILS_WITH(ox::import_file(dir.path() + "/nope.onnx", &g), code::kReadModelFailure, "nope.onnx");
  EXPECT_FAILS_WITH(ox::import_file(dir.path(), &g), code::kReadModelFailure, "not a regular file");
}

TEST(OnnxImport, InitializerListedAsInputIsAConstant) {
  pb::ModelProto m = conv_relu_model();
  m.set_ir_version(3);
  add_input(m.mutable_graph(), "W", 1, {"4", "3", "3", "3"});
  add_input(m.mutable_graph(), "B", 1, {"4"});
  std::unique_ptr<Graph> g;
  Status st = import(m, &g);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(g->inputs().size(), 1u);
  EXPECT_EQ(g->inputs()[0]->name, "X");
  EXPECT_TRUE(g->find_value("W")->constant);
  EXPECT_FALSE(g->find_value("W")->is_graph_input);
}

TEST(OnnxImport, OptionalInputsAndOutputsAreNull) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  add_node(g, "Clip", {"X", "", "hi"}, {"Y"});
  add_init(g, "hi", 1, {})->add_float_data(6.f);
  add_node(g, "Dropout", {"Y"}, {"Z", ""});
  add_output(g, "Z");
  std::unique_ptr<Graph> gr;
  Status st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();
  const Node* clip = find_node(*gr, "Clip");
  ASSERT_EQ(clip->inputs.size(), 3u);
  EXPECT_EQ(clip->inputs[1], nullptr);
  EXPECT_NE(clip->inputs[2], nullptr);
  const Node* drop = find_node(*gr, "Dropout");
  ASSERT_EQ(drop->outputs.size(), 2u);
  EXPECT_EQ(drop->outputs[1], nullptr);
}

TEST(OnnxImport, NodesOutOfOrderAreAccepted) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  add_node(g, "Relu", {"A"}, {"Y"});
  add_node(g, "Neg", {"X"}, {"A"});
  add_output(g, "Y");
  std::unique_ptr<Graph> gr;
  Status st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();
  std::vector<Node*> order;
  ASSERT_TRUE(gr->topological_order(&order).ok());
  EXPECT_EQ(order[0]->op_type, "Neg");
}

// ---------------------------------------------------------------- storage forms

template <class T>
std::vector<T> values_of(const TensorData& t) {
  std::vector<T> v(t.bytes / sizeof(T));
  std::memcpy(v.data(), t.data, t.bytes);
  return v;
}

TEST(OnnxImport, InitializerStorageForms) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_init(g, "f_raw", 1, {2})->set_raw_data(bytes_of(std::vector<float>{1.5f, -2.f}));
  auto* f = add_init(g, "f_typed", 1, {2});
  f->add_float_data(3.f);
  f->add_float_data(4.f);
  auto* i32 = add_init(g, "i32", 6, {2});
  i32->add_int32_data(-7);
  i32->add_int32_data(70000);
  auto* i8 = add_init(g, "i8", 3, {3});
  for (int v : {-128, -1, 127}) i8->add_int32_data(v);
  auto* u8 = add_init(g, "u8", 2, {2});
  for (int v : {0, 255}) u8->add_int32_data(v);
  auto* bo = add_init(g, "bool", 9, {3});
  for (int v : {1, 0, 1}) bo->add_int32_data(v);
  auto* i16 = add_init(g, "i16", 5, {2});
  for (int v : {-300, 300}) i16->add_int32_data(v);
  auto* u16 = add_init(g, "u16", 4, {1});
  u16->add_int32_data(65535);
  auto* h = add_init(g, "f16", 10, {2});
  h->add_int32_data(0x3C00);  // 1.0
  h->add_int32_data(0xC000);  // -2.0
  auto* bf = add_init(g, "bf16", 16, {1});
  bf->add_int32_data(0x3F80);  // 1.0
  auto* i64 = add_init(g, "i64", 7, {2});
  i64->add_int64_data(-5);
  i64->add_int64_data(int64_t{1} << 40);
  auto* d = add_init(g, "f64", 11, {1});
  d->add_double_data(0.25);
  auto* u32 = add_init(g, "u32", 12, {1});
  u32->add_uint64_data(4000000000u);
  auto* u64 = add_init(g, "u64", 13, {1});
  u64->add_uint64_data(UINT64_MAX);
  auto* c64 = add_init(g, "c64", 14, {1});
  c64->add_float_data(1.f);
  c64->add_float_data(-1.f);
  add_init(g, "empty", 1, {0, 3});
  add_init(g, "i64_raw", 7, {1})->set_raw_data(bytes_of(std::vector<int64_t>{42}));
  add_output(g, "f_raw");
  std::unique_ptr<Graph> gr;
  Status st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();
  auto c = [&](const char* n) -> const TensorData& {
    const Value* v = gr->find_value(n);
    EXPECT_TRUE(v && v->constant) << n;
    return *v->constant;
  };
  EXPECT_EQ(values_of<float>(c("f_raw")), (std::vector<float>{1.5f, -2.f}));
  EXPECT_EQ(values_of<float>(c("f_typed")), (std::vector<float>{3.f, 4.f}));
  EXPECT_EQ(values_of<int32_t>(c("i32")), (std::vector<int32_t>{-7, 70000}));
  EXPECT_EQ(values_of<int8_t>(c("i8")), (std::vector<int8_t>{-128, -1, 127}));
  EXPECT_EQ(values_of<uint8_t>(c("u8")), (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(values_of<uint8_t>(c("bool")), (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(values_of<int16_t>(c("i16")), (std::vector<int16_t>{-300, 300}));
  EXPECT_EQ(values_of<uint16_t>(c("u16")), (std::vector<uint16_t>{65535}));
  EXPECT_EQ(values_of<uint16_t>(c("f16")), (std::vector<uint16_t>{0x3C00, 0xC000}));
  EXPECT_EQ(c("f16").dtype, DType::kFloat16);
  EXPECT_EQ(values_of<uint16_t>(c("bf16")), (std::vector<uint16_t>{0x3F80}));
  EXPECT_EQ(values_of<int64_t>(c("i64")), (std::vector<int64_t>{-5, int64_t{1} << 40}));
  EXPECT_EQ(values_of<double>(c("f64")), (std::vector<double>{0.25}));
  EXPECT_EQ(values_of<uint32_t>(c("u32")), (std::vector<uint32_t>{4000000000u}));
  EXPECT_EQ(values_of<uint64_t>(c("u64")), (std::vector<uint64_t>{UINT64_MAX}));
  EXPECT_EQ(values_of<float>(c("c64")), (std::vector<float>{1.f, -1.f}));
  EXPECT_EQ(c("empty").bytes, 0u);
  EXPECT_EQ(c("empty").dims, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(values_of<int64_t>(c("i64_raw")), (std::vector<int64_t>{42}));
  EXPECT_EQ(gr->find_value("i8")->type.str(), "int8[3]");
  EXPECT_TRUE(gr->inputs().empty());
}

// Sub-byte types come packed (low bits first) and are held one per byte,
// signed ones sign-extended (graph/dtype.h).
TEST(OnnxImport, SubByteInitializersAreUnpacked) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  // int4 [3] = {7, -8, -1}: bytes 0x87, 0x0F (odd count: the last high nibble is padding)
  add_init(g, "i4_raw", 22, {3})->set_raw_data(std::string("\x87\x0F", 2));
  auto* u4 = add_init(g, "u4_int32", 21, {2});  // uint4 {15, 1}: one packed byte per entry
  u4->add_int32_data(0x1F);
  add_init(g, "i2_raw", 26, {5})->set_raw_data(std::string("\xE4\x03", 2));  // int2 {0, 1, -2, -1, -1}
  add_init(g, "u2_raw", 25, {4})->set_raw_data(std::string("\xE4", 1));      // uint2 {0, 1, 2, 3}
  add_init(g, "f4_raw", 23, {2})->set_raw_data(std::string("\xF7", 1));      // float4e2m1 codes {7, 15}
  add_init(g, "i4_short", 22, {5})->set_raw_data(std::string("\x11", 1));    // 5 nibbles need 3 bytes
  add_output(g, "i4_raw");
  std::unique_ptr<Graph> gr;
  Status st = import(m, &gr);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("i4_short"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("need 3"), std::string::npos) << st.message();
  g->mutable_initializer()->RemoveLast();
  st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();
  auto c = [&](const char* n) -> const TensorData& {
    const Value* v = gr->find_value(n);
    EXPECT_TRUE(v && v->constant) << n;
    return *v->constant;
  };
  EXPECT_EQ(values_of<int8_t>(c("i4_raw")), (std::vector<int8_t>{7, -8, -1}));
  EXPECT_EQ(c("i4_raw").dtype, DType::kInt4);
  EXPECT_EQ(c("i4_raw").bytes, 3u);
  EXPECT_EQ(values_of<uint8_t>(c("u4_int32")), (std::vector<uint8_t>{15, 1}));
  EXPECT_EQ(values_of<int8_t>(c("i2_raw")), (std::vector<int8_t>{0, 1, -2, -1, -1}));
  EXPECT_EQ(values_of<uint8_t>(c("u2_raw")), (std::vector<uint8_t>{0, 1, 2, 3}));
  EXPECT_EQ(values_of<uint8_t>(c("f4_raw")), (std::vector<uint8_t>{7, 15}));
  EXPECT_EQ(gr->find_value("i4_raw")->type.str(), "int4[3]");
}

TEST(OnnxImport, StringInitializerFailsOnlyWhenUsed) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  add_init(g, "labels", 8, {1})->add_string_data("cat");
  add_node(g, "Relu", {"X"}, {"Y"});
  add_output(g, "Y");
  EXPECT_TRUE(import(m).ok());
  add_node(g, "Identity", {"labels"}, {"L"}, "id");
  EXPECT_FAILS_WITH(import(m), code::kUnsupportedDataType, "string");
}

// ---------------------------------------------------------------- external data

pb::TensorProto* add_external(pb::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                              const std::string& location, const std::string& offset, const std::string& length) {
  auto* t = add_init(g, name, 1, dims);
  t->set_data_location(pb::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    if (v.empty()) return;
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", location);
  kv("offset", offset);
  kv("length", length);
  return t;
}

pb::ModelProto external_model(const std::string& location, const std::string& offset = "16",
                              const std::string& length = "16", std::vector<int64_t> dims = {4}) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"4"});
  add_external(g, "W", dims, location, offset, length);
  add_node(g, "Add", {"X", "W"}, {"Y"});
  add_output(g, "Y");
  return m;
}

TEST(OnnxImport, ExternalData) {
  TempDir dir;
  std::string blob(16, 'x');
  blob += bytes_of(std::vector<float>{1.f, 2.f, 3.f, 4.f});
  dir.write("weights.bin", blob);
  dir.write("sub/w.bin", bytes_of(std::vector<float>{5.f, 6.f, 7.f, 8.f}));

  std::unique_ptr<Graph> g;
  Status st = import(external_model("weights.bin"), &g, dir.path());
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(values_of<float>(*g->find_value("W")->constant), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));

  st = import(external_model("sub/w.bin", "", ""), &g, dir.path());  // no offset/length: the whole file
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(values_of<float>(*g->find_value("W")->constant), (std::vector<float>{5.f, 6.f, 7.f, 8.f}));

  // Through import_file: the folder is the model's.
  std::string bytes;
  ASSERT_TRUE(external_model("./weights.bin").SerializeToString(&bytes));
  st = ox::import_file(dir.write("model.onnx", bytes), &g);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_FLOAT_EQ(g->find_value("W")->constant->as<float>()[3], 4.f);
}

TEST(OnnxImport, ExternalDataHostile) {
  TempDir dir;
  TempDir outside;
  dir.write("weights.bin", std::string(32, 'x'));
  const std::string secret = outside.write("secret.bin", std::string(16, 's'));
  ASSERT_EQ(::symlink(secret.c_str(), (dir.path() + "/link.bin").c_str()), 0);
  ASSERT_EQ(::symlink(outside.path().c_str(), (dir.path() + "/linkdir").c_str()), 0);
  const std::string& base = dir.path();

  EXPECT_FAILS_WITH(import(external_model("../secret.bin"), base), code::kParseModel, "leaves the model's folder");
  EXPECT_FAILS_WITH(import(external_model("sub/../../secret.bin"), base), code::kParseModel, "leaves");
  EXPECT_FAILS_WITH(import(external_model(secret, "0"), base), code::kParseModel, "absolute");
  EXPECT_FAILS_WITH(import(external_model("link.bin", "0"), base), code::kParseModel, "outside the model's folder");
  EXPECT_FAILS_WITH(import(external_model("linkdir/secret.bin", "0"), base), code::kParseModel, "outside");
  EXPECT_FAILS_WITH(import(external_model(".", "0"), base), code::kParseModel, "outside");
  EXPECT_FAILS_WITH(import(external_model("weights.bin", "24"), base), code::kParseModel, "exceeds");
  EXPECT_FAILS_WITH(import(external_model("weights.bin", "40"), base), code::kParseModel, "past the end");
  EXPECT_FAILS_WITH(import(external_model("weights.bin", "0", "18446744073709551615"), base), code::kParseModel,
                    "exceeds");
  EXPECT_FAILS_WITH(import(external_model("weights.bin", "-1"), base), code::kParseModel, "non-negative integer");
  EXPECT_FAILS_WITH(import(external_model("weights.bin", "0", "12"), base), code::kParseModel, "need 16");
  EXPECT_FAILS_WITH(import(external_model("weights.bin", "0", "", {1 << 20}), base), code::kParseModel, "need");
  EXPECT_FAILS_WITH(import(external_model("missing.bin"), base), code::kReadModelFailure, "missing.bin");
  EXPECT_FAILS_WITH(import(external_model("weights.bin"), ""), code::kParseModel, "base_dir");
  EXPECT_FAILS_WITH(import(external_model(""), base), code::kParseModel, "no 'location'");
  ::mkdir((base + "/adir").c_str(), 0700);
  EXPECT_FAILS_WITH(import(external_model("adir", "0", "0", {0}), base), code::kReadModelFailure, "regular file");
}

// ---------------------------------------------------------------- Constant nodes

TEST(OnnxImport, ConstantNodesBecomeValues) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"2", "3"});
  auto* c1 = add_node(g, "Constant", {}, {"shape"}, "c_shape");
  auto* t = add_attr(c1, "value", pb::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(7);
  t->add_dims(2);
  t->add_int64_data(3);
  t->add_int64_data(2);
  add_attr(add_node(g, "Constant", {}, {"f"}), "value_float", pb::AttributeProto::FLOAT)->set_f(0.5f);
  auto* fs_ = add_attr(add_node(g, "Constant", {}, {"fs"}), "value_floats", pb::AttributeProto::FLOATS);
  fs_->add_floats(1.f);
  fs_->add_floats(2.f);
  add_attr(add_node(g, "Constant", {}, {"i"}), "value_int", pb::AttributeProto::INT)->set_i(-3);
  auto* is = add_attr(add_node(g, "Constant", {}, {"is"}), "value_ints", pb::AttributeProto::INTS);
  is->add_ints(7);
  add_attr(add_node(g, "Constant", {}, {"s"}), "value_string", pb::AttributeProto::STRING)->set_s("unused");
  add_node(g, "Reshape", {"X", "shape"}, {"R"});
  add_node(g, "Mul", {"R", "f"}, {"Y"});
  add_output(g, "Y");
  std::unique_ptr<Graph> gr;
  Status st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(gr->nodes().size(), 2u);  // Constants are values, not nodes
  const Node* reshape = find_node(*gr, "Reshape");
  ASSERT_TRUE(reshape->inputs[1]->constant);
  EXPECT_EQ(reshape->inputs[1]->producer, nullptr);
  EXPECT_EQ(*reshape->inputs[1]->constant->to_int64(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(reshape->inputs[1]->type.str(), "int64[2]");
  const Value* f = gr->find_value("f");
  EXPECT_EQ(f->type.str(), "float32[]");
  EXPECT_FLOAT_EQ(f->constant->as<float>()[0], 0.5f);
  EXPECT_EQ(values_of<float>(*gr->find_value("fs")->constant), (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(values_of<int64_t>(*gr->find_value("i")->constant), (std::vector<int64_t>{-3}));
  EXPECT_EQ(gr->find_value("i")->type.str(), "int64[]");
  EXPECT_EQ(gr->find_value("is")->type.str(), "int64[1]");

  // Using the string constant is refused with a message naming it.
  add_node(g, "Identity", {"s"}, {"S"});
  EXPECT_FAILS_WITH(import(m), code::kUnsupportedDataType, "string constants");
}

TEST(OnnxImport, MalformedConstant) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_node(g, "Constant", {}, {"c"}, "bad");
  add_output(g, "c");
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "Constant 'bad'");
}

// ---------------------------------------------------------------- opsets

TEST(OnnxImport, OpsetMapping) {
  pb::ModelProto m = make_model(8, 11);
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  add_node(g, "Relu", {"X"}, {"A"})->set_domain("ai.onnx");
  add_node(g, "Gelu", {"A"}, {"B"})->set_domain("com.microsoft");
  add_node(g, "Neg", {"B"}, {"Y"});
  add_output(g, "Y");
  std::unique_ptr<Graph> gr;
  Status st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(gr->opsets(), (std::map<std::string, int>{{"", 11}, {"com.microsoft", 1}}));
  EXPECT_EQ(find_node(*gr, "Relu")->domain, "");
  EXPECT_EQ(find_node(*gr, "Relu")->opset, 11);
  EXPECT_EQ(find_node(*gr, "Neg")->opset, 11);
  EXPECT_EQ(find_node(*gr, "Gelu")->domain, "com.microsoft");
  EXPECT_EQ(find_node(*gr, "Gelu")->opset, 1);

  add_node(g, "Foo", {"Y"}, {"Z"}, "foo")->set_domain("org.unknown");
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "org.unknown");
}

TEST(OnnxImport, IrVersionsAndModelHeader) {
  for (int ir = 3; ir <= ox::kMaxIrVersion; ++ir) {
    auto m = conv_relu_model();
    m.set_ir_version(ir);
    EXPECT_TRUE(import(m).ok()) << "IR " << ir;
  }
  auto m = conv_relu_model();
  m.set_ir_version(2);
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "IR version 2");
  m.set_ir_version(99);
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "IR version 99");
  m = conv_relu_model();
  m.clear_opset_import();
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "opset_import");
  m = conv_relu_model();
  m.clear_graph();
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "no graph");
}

// ---------------------------------------------------------------- subgraphs

TEST(OnnxImport, SubgraphsWithOuterScope) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "cond", 9, {});
  add_input(g, "X", 1, {"2"});
  add_init(g, "K", 1, {2})->set_raw_data(bytes_of(std::vector<float>{1.f, 1.f}));
  auto* iff = add_node(g, "If", {"cond"}, {"Y"}, "if1");
  auto* then_g = add_attr(iff, "then_branch", pb::AttributeProto::GRAPH)->mutable_g();
  then_g->set_name("then");
  add_node(then_g, "Add", {"X", "K"}, {"t_out"});
  add_output(then_g, "t_out");
  auto* else_g = add_attr(iff, "else_branch", pb::AttributeProto::GRAPH)->mutable_g();
  else_g->set_name("else");
  // A nested If inside the else branch reads X from two levels up.
  auto* inner_if = add_node(else_g, "If", {"cond"}, {"e_out"}, "if2");
  auto* inner = add_attr(inner_if, "then_branch", pb::AttributeProto::GRAPH)->mutable_g();
  add_node(inner, "Neg", {"X"}, {"n_out"});
  add_output(inner, "n_out");
  auto* inner_else = add_attr(inner_if, "else_branch", pb::AttributeProto::GRAPH)->mutable_g();
  add_output(inner_else, "X");  // an outer value passed straight through
  add_output(else_g, "e_out");
  add_output(g, "Y");
  std::unique_ptr<Graph> gr;
  Status st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(gr->nodes().size(), 1u);
  const Node* n = gr->nodes()[0].get();
  const Attribute* tb = n->attrs.find("then_branch");
  ASSERT_TRUE(tb && tb->kind == Attribute::Kind::kGraph && tb->g);
  const Graph& tg = *tb->g;
  EXPECT_EQ(tg.name, "then");
  EXPECT_TRUE(tg.inputs().empty());
  ASSERT_EQ(tg.nodes().size(), 1u);
  EXPECT_EQ(tg.nodes()[0]->opset, 13);
  const Value* cx = tg.find_value("X");
  ASSERT_NE(cx, nullptr);  // captured from the outer graph
  EXPECT_NE(cx, gr->find_value("X"));
  EXPECT_FALSE(cx->is_graph_input);
  EXPECT_EQ(cx->producer, nullptr);
  EXPECT_EQ(cx->type.str(), "float32[2]");
  const Value* ck = tg.find_value("K");
  ASSERT_TRUE(ck && ck->constant);  // captured constants keep their data
  EXPECT_EQ(tg.outputs().size(), 1u);
  const Graph& eg = *n->attrs.find("else_branch")->g;
  ASSERT_NE(eg.find_value("X"), nullptr);  // captured on the way down to the nested If
  const Graph& ig = *eg.nodes()[0]->attrs.find("then_branch")->g;
  EXPECT_NE(ig.find_value("X"), nullptr);
  const Graph& ie = *eg.nodes()[0]->attrs.find("else_branch")->g;
  ASSERT_EQ(ie.outputs().size(), 1u);
  EXPECT_EQ(ie.outputs()[0]->name, "X");
}

TEST(OnnxImport, LoopBodyInputsAndErrorsInside) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "trip", 7, {});
  add_input(g, "x0", 1, {"2"});
  auto* loop = add_node(g, "Loop", {"trip", "", "x0"}, {"x_final"}, "loop");
  auto* body = add_attr(loop, "body", pb::AttributeProto::GRAPH)->mutable_g();
  add_input(body, "i", 7, {});
  add_input(body, "c", 9, {});
  add_input(body, "x", 1, {"2"});
  add_node(body, "Identity", {"c"}, {"c_out"});
  add_node(body, "Relu", {"x"}, {"x_out"});
  add_output(body, "c_out", 9);
  add_output(body, "x_out");
  add_output(g, "x_final");
  std::unique_ptr<Graph> gr;
  Status st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();
  const Graph& b = *gr->nodes()[0]->attrs.find("body")->g;
  EXPECT_EQ(b.inputs().size(), 3u);
  EXPECT_EQ(gr->nodes()[0]->inputs[1], nullptr);

  add_node(body, "Relu", {"nowhere"}, {"z"});
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "subgraph 'body' of Loop 'loop'");
}

// ---------------------------------------------------------------- hostile input

TEST(OnnxImport, GarbageAndEmptyBytes) {
  std::unique_ptr<Graph> g;
  const char junk[] = "\xff\xff\xff\xff this is not a protobuf";
  EXPECT_EQ(ox::import_model(junk, sizeof junk, {}, &g).code(), code::kParseModel);
  EXPECT_EQ(ox::import_model("", 0, {}, &g).code(), code::kParseModel);
  EXPECT_EQ(ox::import_model(nullptr, 10, {}, &g).code(), code::kInvalidParam);
  EXPECT_EQ(g, nullptr);
}

TEST(OnnxImport, TruncatedAndCorruptedNeverCrash) {
  pb::ModelProto m = conv_relu_model();
  add_attr(m.mutable_graph()->mutable_node(0), "t", pb::AttributeProto::TENSOR)->mutable_t()->set_data_type(1);
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  int failures = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::unique_ptr<Graph> g;
    Status st = ox::import_model(bytes.data(), n, {}, &g);
    if (!st.ok()) {
      ++failures;
      EXPECT_FALSE(st.message().empty());
      EXPECT_EQ(g, nullptr);
    }
  }
  EXPECT_GT(failures, 0);
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char flip : {0x01, 0x80, 0xff}) {
      std::string c = bytes;
      c[i] = static_cast<char>(c[i] ^ flip);
      std::unique_ptr<Graph> g;
      (void)ox::import_model(c.data(), c.size(), {}, &g);  // any Status; no crash, no sanitizer report
    }
  }
}

TEST(OnnxImport, TensorSizeMismatch) {
  auto with_init = [](auto fill) {
    pb::ModelProto m = make_model();
    auto* g = m.mutable_graph();
    fill(g);
    add_output(g, "W");
    return m;
  };
  EXPECT_FAILS_WITH(import(with_init([](auto* g) { add_init(g, "W", 1, {2, 3})->set_raw_data(std::string(20, 0)); })),
                    code::kParseModel, "initializer 'W': raw_data has 20 bytes but dims [2,3] of float32 need 24");
  EXPECT_FAILS_WITH(import(with_init([](auto* g) { add_init(g, "W", 1, {3})->add_float_data(1.f); })),
                    code::kParseModel, "float_data has 1 entries");
  EXPECT_FAILS_WITH(import(with_init([](auto* g) { add_init(g, "W", 1, {2}); })), code::kParseModel,
                    "need 2");  // no data at all
  EXPECT_FAILS_WITH(import(with_init([](auto* g) { add_init(g, "W", 1, {1})->add_int64_data(1); })),
                    code::kParseModel, "not int64_data");
  EXPECT_FAILS_WITH(import(with_init([](auto* g) { add_init(g, "W", 1, {-2})->set_raw_data(std::string()); })),
                    code::kParseModel, "negative");
  EXPECT_FAILS_WITH(import(with_init([](auto* g) {
                      add_init(g, "W", 1, {int64_t{1} << 40, int64_t{1} << 40})->set_raw_data("x");
                    })),
                    code::kParseModel, "overflow");
  EXPECT_FAILS_WITH(import(with_init([](auto* g) {
                      add_init(g, "W", 1, {int64_t{1} << 31, int64_t{1} << 31})->set_raw_data("x");
                    })),
                    code::kParseModel, "overflow");  // fits int64 elements, not bytes
  EXPECT_FAILS_WITH(import(with_init([](auto* g) { add_init(g, "W", 1, {int64_t{1} << 40})->set_raw_data("x"); })),
                    code::kParseModel, "need");  // huge but representable: refused before allocating
  EXPECT_FAILS_WITH(import(with_init([](auto* g) { add_init(g, "W", 99, {1})->set_raw_data("x"); })),
                    code::kParseModel, "data_type 99");
}

TEST(OnnxImport, BadValueInfoDims) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"-3"});
  add_node(g, "Relu", {"X"}, {"Y"});
  add_output(g, "Y");
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "graph input 'X': dim 0 is negative");
}

TEST(OnnxImport, MissingInputsAreAllListed) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  add_node(g, "Add", {"X", "ghost1"}, {"A"}, "add");
  add_node(g, "Mul", {"A", "ghost2"}, {"B"}, "mul");
  add_output(g, "B");
  add_output(g, "ghost3");
  Status st = import(m);
  EXPECT_EQ(st.code(), code::kParseModel);
  EXPECT_NE(st.message().find("3 reference(s)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("Add 'add' input 1 'ghost1'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("Mul 'mul' input 1 'ghost2'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("graph output 'ghost3'"), std::string::npos) << st.message();
}

TEST(OnnxImport, DuplicateNames) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  add_node(g, "Relu", {"X"}, {"Y"}, "r1");
  add_node(g, "Neg", {"X"}, {"Y"}, "n1");
  add_output(g, "Y");
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "'Y' is produced twice: by Relu 'r1' and by Neg 'n1'");

  m = make_model();
  g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  add_node(g, "Relu", {"X"}, {"X"}, "r1");
  add_output(g, "X");
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "by graph input and by Relu 'r1'");

  m = make_model();
  g = m.mutable_graph();
  add_init(g, "W", 1, {})->add_float_data(1.f);
  add_init(g, "W", 1, {})->add_float_data(2.f);
  add_output(g, "W");
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "initializer 'W' appears twice");

  m = make_model();
  g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  add_input(g, "X", 1, {"2"});
  add_output(g, "X");
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "listed twice");

  m = make_model();
  g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  auto* n = add_node(g, "LeakyRelu", {"X"}, {"Y"}, "lr");
  add_attr(n, "alpha", pb::AttributeProto::FLOAT)->set_f(0.1f);
  add_attr(n, "alpha", pb::AttributeProto::FLOAT)->set_f(0.2f);
  add_output(g, "Y");
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "attribute 'alpha' twice");
}

TEST(OnnxImport, CycleIsReported) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  add_node(g, "Add", {"X", "C"}, {"B"}, "a");
  add_node(g, "Relu", {"B"}, {"C"}, "b");
  add_output(g, "C");
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "cycle");
}

TEST(OnnxImport, AttributeKinds) {
  pb::ModelProto m = make_model();
  auto* g = m.mutable_graph();
  add_input(g, "X", 1, {"2"});
  auto* n = add_node(g, "Custom", {"X"}, {"Y"}, "c");
  add_attr(n, "s", pb::AttributeProto::STRING)->set_s("NOTSET");
  auto* ss = add_attr(n, "ss", pb::AttributeProto::STRINGS);
  ss->add_strings("a");
  ss->add_strings("b");
  auto* fl = add_attr(n, "fl", pb::AttributeProto::FLOATS);
  fl->add_floats(0.5f);
  auto* t = add_attr(n, "t", pb::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(1);
  t->add_float_data(2.5f);
  auto* ts = add_attr(n, "ts", pb::AttributeProto::TENSORS);
  ts->add_tensors()->set_data_type(7);
  ts->mutable_tensors(0)->add_int64_data(9);
  auto* untyped = n->add_attribute();  // pre-IR-2 writers leave `type` unset
  untyped->set_name("legacy");
  untyped->set_i(5);
  add_output(g, "Y");
  std::unique_ptr<Graph> gr;
  Status st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();
  const auto& a = gr->nodes()[0]->attrs;
  EXPECT_EQ(a.get_string("s", ""), "NOTSET");
  EXPECT_EQ(a.find("ss")->strings, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(*a.get_floats("fl"), (std::vector<float>{0.5f}));
  ASSERT_EQ(a.find("t")->kind, Attribute::Kind::kTensor);
  EXPECT_FLOAT_EQ(a.find("t")->t->as<float>()[0], 2.5f);
  EXPECT_EQ(a.find("t")->t->dims.size(), 0u);
  ASSERT_EQ(a.find("ts")->tensors.size(), 1u);
  EXPECT_EQ(a.find("ts")->tensors[0]->as<int64_t>()[0], 9);
  EXPECT_EQ(a.get_int("legacy", 0), 5);

  auto* labels = add_attr(n, "keys", pb::AttributeProto::TENSOR)->mutable_t();
  labels->set_data_type(8);
  labels->add_dims(1);
  labels->add_string_data("k");
  st = import(m, &gr);
  ASSERT_TRUE(st.ok()) << st.message();  // refused later by the supported-op check, with every other node
  const Attribute* keys = gr->nodes()[0]->attrs.find("keys");
  ASSERT_NE(keys, nullptr);
  EXPECT_EQ(keys->kind, Attribute::Kind::kUndefined);
  EXPECT_NE(keys->s.find("string tensors are not supported"), std::string::npos) << keys->s;

  t->add_float_data(1.f);  // now 2 values for a scalar
  EXPECT_FAILS_WITH(import(m), code::kParseModel, "Custom 'c' attribute 't'");
}

// ---------------------------------------------------------------- read_tensor_proto

TEST(OnnxImport, ReadTensorProto) {
  pb::TensorProto t;
  t.set_name("input_0");
  t.set_data_type(1);
  t.add_dims(1);
  t.add_dims(2);
  t.set_raw_data(bytes_of(std::vector<float>{3.f, -1.f}));
  std::string bytes;
  ASSERT_TRUE(t.SerializeToString(&bytes));
  std::shared_ptr<TensorData> td;
  std::string name;
  Status st = ox::read_tensor_proto(bytes.data(), bytes.size(), &td, &name);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(name, "input_0");
  EXPECT_EQ(td->dims, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(values_of<float>(*td), (std::vector<float>{3.f, -1.f}));

  EXPECT_EQ(ox::read_tensor_proto(bytes.data(), bytes.size() - 3, &td, nullptr).code(), code::kParseModel);
  t.set_data_location(pb::TensorProto::EXTERNAL);
  auto* kv = t.add_external_data();
  kv->set_key("location");
  kv->set_value("x.bin");
  ASSERT_TRUE(t.SerializeToString(&bytes));
  EXPECT_FAILS_WITH(ox::read_tensor_proto(bytes.data(), bytes.size(), &td, nullptr), code::kParseModel, "base");
}

// ---------------------------------------------------------------- models written by the real onnx package

// Runs a Python snippet with `out` as argv[1]; false when python3/onnx is absent.
bool run_python(const std::string& script, const std::string& out) {
  TempDir tmp;
  const std::string path = tmp.write("gen.py", script);
  const std::string cmd = "python3 " + path + " " + out + " >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

TEST(OnnxImport, ModelsWrittenByPythonOnnx) {
  if (std::system("python3 -c 'import onnx, numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 with onnx and numpy not available";
  TempDir dir;
  const char* script = R"PY(
import sys, os, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto as T
out = sys.argv[1]
x = helper.make_tensor_value_info("X", T.FLOAT, ["batch", 4])
y = helper.make_tensor_value_info("Y", T.FLOAT, ["batch", 4])
w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4), "W")
b = numpy_helper.from_array(np.array([1, 2, 3, 4], dtype=np.float16), "B")
then_g = helper.make_graph([helper.make_node("Relu", ["M"], ["t"])], "then", [],
                           [helper.make_tensor_value_info("t", T.FLOAT, None)])
else_g = helper.make_graph([helper.make_node("Neg", ["M"], ["e"])], "else", [],
                           [helper.make_tensor_value_info("e", T.FLOAT, None)])
nodes = [
    helper.make_node("MatMul", ["X", "W"], ["M"], name="mm"),
    helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array(True))),
    helper.make_node("If", ["c"], ["Y"], then_branch=then_g, else_branch=else_g, name="if"),
    helper.make_node("Cast", ["B"], ["B32"], to=T.FLOAT),
]
g = helper.make_graph(nodes, "py", [x], [y, helper.make_tensor_value_info("B32", T.FLOAT, [4])], [w, b])
m = helper.make_model(g)
onnx.checker.check_model(m)
onnx.save_model(m, os.path.join(out, "inline.onnx"))
onnx.save_model(m, os.path.join(out, "ext.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                location="weights.data", size_threshold=0)
t = numpy_helper.from_array(np.array([[0.5, -1.5]], dtype=np.float32), "input_0")
open(os.path.join(out, "input_0.pb"), "wb").write(t.SerializeToString())
)PY";
  ASSERT_TRUE(run_python(script, dir.path())) << "model generation failed";
  for (const char* file : {"inline.onnx", "ext.onnx"}) {
    std::unique_ptr<Graph> g;
    Status st = ox::import_file(dir.path() + "/" + file, &g);
    ASSERT_TRUE(st.ok()) << file << ": " << st.message();
    ASSERT_EQ(g->inputs().size(), 1u);
    EXPECT_EQ(g->inputs()[0]->type.str(), "float32[batch,4]");
    EXPECT_EQ(g->nodes().size(), 3u) << file;  // the Constant became a value
    const Value* w = g->find_value("W");
    ASSERT_TRUE(w && w->constant) << file;
    EXPECT_FLOAT_EQ(w->constant->as<float>()[15], 15.f) << file;
    const Value* b = g->find_value("B");
    ASSERT_TRUE(b && b->constant);
    EXPECT_EQ(b->constant->dtype, DType::kFloat16);
    EXPECT_EQ(b->constant->as<uint16_t>()[0], 0x3C00) << file;  // 1.0 in fp16
    const Node* iff = find_node(*g, "If");
    ASSERT_NE(iff, nullptr);
    EXPECT_TRUE(iff->inputs[0]->constant);
    EXPECT_EQ(iff->attrs.find("then_branch")->g->nodes()[0]->op_type, "Relu");
    EXPECT_GE(iff->opset, 7);
  }
  std::ifstream in(dir.path() + "/input_0.pb", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::shared_ptr<TensorData> td;
  std::string name;
  Status st = ox::read_tensor_proto(bytes.data(), bytes.size(), &td, &name);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(name, "input_0");
  EXPECT_EQ(values_of<float>(*td), (std::vector<float>{0.5f, -1.5f}));
}

// ---------------------------------------------------------------- fuzz seed corpus

// OPENACL_ONNX_FUZZ_SEEDS=<dir> writes seeds for fuzz_onnx_import there (the
// first byte picks the entry point: 0 = model, 1 = TensorProto).
TEST(OnnxImport, WriteFuzzSeeds) {
  const char* dir = std::getenv("OPENACL_ONNX_FUZZ_SEEDS");
  if (!dir || !*dir) GTEST_SKIP() << "set OPENACL_ONNX_FUZZ_SEEDS=<dir> to write the fuzzer's seed corpus";
  fs::create_directories(dir);
  auto write = [&](const std::string& name, char kind, const google::protobuf::MessageLite& msg) {
    std::string bytes(1, kind);
    ASSERT_TRUE(msg.AppendToString(&bytes));
    std::ofstream(fs::path(dir) / name, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  write("conv_relu", 0, conv_relu_model());
  write("external", 0, external_model("weights.bin"));
  pb::ModelProto sub = make_model();
  auto* g = sub.mutable_graph();
  add_input(g, "c", 9, {});
  auto* iff = add_node(g, "If", {"c"}, {"Y"}, "if");
  auto* tg = add_attr(iff, "then_branch", pb::AttributeProto::GRAPH)->mutable_g();
  add_node(tg, "Constant", {}, {"k"})->add_attribute()->set_name("value_ints");
  add_output(tg, "k", 7);
  add_output(g, "Y", 7);
  write("if", 0, sub);
  pb::TensorProto t;
  t.set_data_type(10);
  t.add_dims(2);
  t.add_int32_data(0x3C00);
  t.add_int32_data(0x4000);
  write("tensor_fp16", 1, t);
}

// ---------------------------------------------------------------- ONNX backend node tests

// The PyPI onnx package ships node tests (model.onnx + test_data_set_0/*.pb);
// import a few when it is installed with its test data (some wheels strip
// it). OPENACL_ONNX_NODE_TESTS=<dir> points at another copy of that folder.
std::string onnx_node_test_dir() {
  if (const char* env = std::getenv("OPENACL_ONNX_NODE_TESTS"); env && *env) return env;
  FILE* p = ::popen("python3 -c \"import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "
                    "'backend/test/data/node'))\" 2>/dev/null", "r");
  if (!p) return {};
  char buf[4096] = {};
  const bool got = std::fgets(buf, sizeof buf, p) != nullptr;
  ::pclose(p);
  if (!got) return {};
  std::string s(buf);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(OnnxImport, BackendNodeTests) {
  const std::string root = onnx_node_test_dir();
  if (root.empty() || !fs::is_directory(root)) GTEST_SKIP() << "python onnx backend test data not found";
  int imported = 0;
  for (const char* name : {"test_relu", "test_conv_with_strides_padding", "test_if", "test_loop11", "test_add_bcast",
                           "test_constant", "test_scan9_sum"}) {
    const fs::path dir = fs::path(root) / name;
    if (!fs::exists(dir / "model.onnx")) continue;
    std::unique_ptr<Graph> g;
    Status st = ox::import_file((dir / "model.onnx").string(), &g);
    ASSERT_TRUE(st.ok()) << name << ": " << st.message();
    size_t inputs = 0;
    for (const auto& e : fs::directory_iterator(dir / "test_data_set_0")) {
      const std::string f = e.path().filename().string();
      if (f.rfind("input_", 0) != 0) continue;
      const std::string bytes = read_all(e.path());
      std::shared_ptr<TensorData> td;
      Status rs = ox::read_tensor_proto(bytes.data(), bytes.size(), &td, nullptr);
      EXPECT_TRUE(rs.ok()) << name << "/" << f << ": " << rs.message();
      ++inputs;
    }
    EXPECT_EQ(inputs, g->inputs().size()) << name;
    ++imported;
  }
  // Every shipped model imports or is refused with a clean Status (strings,
  // sparse tensors): never a crash. Refusals other than unsupported types are
  // importer bugs.
  int total = 0, ok = 0, tensors = 0, tensors_ok = 0;
  std::vector<std::string> refused;
  for (const auto& e : fs::directory_iterator(root)) {
    const fs::path model = e.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    ++total;
    std::unique_ptr<Graph> g;
    Status st = ox::import_file(model.string(), &g);
    if (st.ok()) ++ok;
    else refused.push_back(e.path().filename().string() + ": " + st.message());
    if (!st.ok()) {
      EXPECT_EQ(st.code(), code::kUnsupportedDataType) << st.message();
    }
    const fs::path data = e.path() / "test_data_set_0";
    if (!fs::is_directory(data)) continue;
    for (const auto& f : fs::directory_iterator(data)) {
      if (f.path().filename().string().rfind("input_", 0) != 0) continue;
      const std::string bytes = read_all(f.path());
      std::shared_ptr<TensorData> td;
      ++tensors;
      if (ox::read_tensor_proto(bytes.data(), bytes.size(), &td, nullptr).ok()) ++tensors_ok;
    }
  }
  std::printf("[ info ] %d of %d node-test models imported; %d of %d input tensors read\n", ok, total, tensors_ok,
              tensors);
  for (const auto& r : refused) std::printf("[ info ]   refused %s\n", r.c_str());
  if (imported == 0) GTEST_SKIP() << "none of the selected node tests present in " << root;
}

}  // namespace
