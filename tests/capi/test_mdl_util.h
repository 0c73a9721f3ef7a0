/*
 * Test models for the model API suite, made in the test itself:
 *  - ONNX bytes written with a tiny protobuf encoder (the importer's generated
 *    classes live, hidden, inside libascendcl; a second copy of them in this
 *    process would register the same .proto twice with the shared protobuf
 *    runtime and abort);
 *  - OpenACL .om bytes from a graph built with the graph IR and written by
 *    model::write_om (for gear models, which only atc/.om can carry).
 */
#ifndef OPENACL_TESTS_CAPI_TEST_MDL_UTIL_H_
#define OPENACL_TESTS_CAPI_TEST_MDL_UTIL_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "model/om_format.h"

namespace mdltest {

/* ---- a minimal protobuf writer (wire format: varints and length-delimited fields) ---- */
class Pb {
 public:
    Pb &u64(int field, uint64_t v) {
        tag(field, 0);
        varint(v);
        return *this;
    }
    Pb &bytes(int field, const std::string &b) {
        tag(field, 2);
        varint(b.size());
        s_ += b;
        return *this;
    }
    Pb &msg(int field, const Pb &m) { return bytes(field, m.s_); }
    const std::string &str() const { return s_; }

 private:
    void tag(int field, int wire) { varint((static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire)); }
    void varint(uint64_t v) {
        while (v >= 0x80) {
            s_.push_back(static_cast<char>((v & 0x7F) | 0x80));
            v >>= 7;
        }
        s_.push_back(static_cast<char>(v));
    }
    std::string s_;
};

constexpr int kOnnxFloat = 1;  // TensorProto.DataType FLOAT

/* ValueInfoProto for a float tensor; dims < 0 become a dim_param "N". */
inline Pb OnnxValueInfo(const std::string &name, const std::vector<int64_t> &dims) {
    Pb shape;
    for (int64_t d : dims) {
        Pb dim;
        if (d >= 0) {
            dim.u64(1, static_cast<uint64_t>(d));
        } else {
            dim.bytes(2, "N");
        }
        shape.msg(1, dim);
    }
    Pb tensor_type;
    tensor_type.u64(1, kOnnxFloat).msg(2, shape);
    Pb type;
    type.msg(1, tensor_type);
    Pb vi;
    vi.bytes(1, name).msg(2, type);
    return vi;
}

inline Pb OnnxNode(const std::string &op, const std::vector<std::string> &in, const std::vector<std::string> &out) {
    Pb n;
    for (const auto &i : in) n.bytes(1, i);
    for (const auto &o : out) n.bytes(2, o);
    n.bytes(3, op + "_" + out[0]).bytes(4, op);
    return n;
}

inline Pb OnnxInitializer(const std::string &name, const std::vector<int64_t> &dims, const std::vector<float> &v) {
    Pb t;
    for (int64_t d : dims) t.u64(1, static_cast<uint64_t>(d));
    t.u64(2, kOnnxFloat).bytes(8, name);
    t.bytes(9, std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float)));
    return t;
}

inline std::string OnnxModel(const Pb &graph) {
    Pb opset;
    opset.bytes(1, "").u64(2, 13);
    Pb m;
    m.u64(1, 8).bytes(2, "openacl-test").msg(7, graph).msg(8, opset);
    return m.str();
}

/* The suite's ONNX model: inputs x float[2,3], b float[3]; weight W float[2,3];
 *   y = Relu(x + W) * b      z = x - b                                            */
inline const std::vector<float> &WeightW() {
    static const std::vector<float> w{0.5f, -1.0f, 2.0f, -3.0f, 0.25f, 1.0f};
    return w;
}
inline std::string AddReluOnnx() {
    Pb g;
    g.msg(1, OnnxNode("Add", {"x", "W"}, {"t"}));
    g.msg(1, OnnxNode("Relu", {"t"}, {"r"}));
    g.msg(1, OnnxNode("Mul", {"r", "b"}, {"y"}));
    g.msg(1, OnnxNode("Sub", {"x", "b"}, {"z"}));
    g.bytes(2, "addrelu");
    g.msg(5, OnnxInitializer("W", {2, 3}, WeightW()));
    g.msg(11, OnnxValueInfo("x", {2, 3}));
    g.msg(11, OnnxValueInfo("b", {3}));
    g.msg(12, OnnxValueInfo("y", {2, 3}));
    g.msg(12, OnnxValueInfo("z", {2, 3}));
    return OnnxModel(g);
}
inline void AddReluReference(const float *x, const float *b, float *y, float *z) {
    for (int i = 0; i < 6; ++i) {
        float t = x[i] + WeightW()[static_cast<size_t>(i)];
        y[i] = (t > 0 ? t : 0) * b[i % 3];
        z[i] = x[i] - b[i % 3];
    }
}

/* A model whose input name is longer than aclmdlIODims.name holds. */
inline std::string LongNameOnnx(const std::string &long_name) {
    Pb g;
    g.msg(1, OnnxNode("Relu", {long_name}, {"out"}));
    g.bytes(2, "longname");
    g.msg(11, OnnxValueInfo(long_name, {4}));
    g.msg(12, OnnxValueInfo("out", {4}));
    return OnnxModel(g);
}

/* ---- .om models ---- */

/* y = x + C over x float[batch, 4] (batch -1 for a gear model), C = {1, 2, 3, 4}. */
inline std::string AddConstOm(int64_t batch, const std::vector<int64_t> &batch_gears, std::string *err = nullptr) {
    using namespace openacl;
    auto g = std::make_shared<graph::Graph>();
    g->name = "addconst";
    g->opsets()[""] = 13;
    graph::Shape xs{batch >= 0 ? graph::Dim(batch) : graph::Dim(), graph::Dim(4)};
    graph::Value *x = g->add_value("x", graph::TensorType{graph::DType::kFloat32, xs});
    x->is_graph_input = true;
    g->inputs().push_back(x);
    static const float c[4] = {1, 2, 3, 4};
    graph::Value *cv = g->add_value("C", graph::TensorType{graph::DType::kFloat32, graph::Shape{graph::Dim(4)}});
    cv->constant = graph::TensorData::copy_of(graph::DType::kFloat32, {4}, c, sizeof c);
    graph::Value *y = g->add_value("y", graph::TensorType{graph::DType::kFloat32, xs});
    g->add_node("add", "Add", {x, cv}, {y}, "", 13);
    y->is_graph_output = true;
    g->outputs().push_back(y);

    model::OmModel om;
    om.graph = g;
    om.meta.producer = "OpenACL test";
    om.meta.source = "addconst";
    if (!batch_gears.empty()) {
        om.meta.gears.kind = model::GearKind::kBatch;
        om.meta.gears.positions.push_back(model::GearPosition{"x", 0});
        for (int64_t b : batch_gears) om.meta.gears.gears.push_back({b});
    }
    std::string bytes;
    Status st = model::write_om(om, &bytes);
    if (!st.ok()) {
        if (err != nullptr) *err = st.message();
        return std::string();
    }
    return bytes;
}

/* y = x + 10 over x float[dims] (-1 for gear dims), with the given gears. */
inline std::string AddTenOm(const std::vector<int64_t> &dims, const openacl::model::GearSpec &gears,
                            std::string *err = nullptr) {
    using namespace openacl;
    auto g = std::make_shared<graph::Graph>();
    g->name = "addten";
    g->opsets()[""] = 13;
    graph::Shape xs;
    for (int64_t d : dims) xs.push_back(d >= 0 ? graph::Dim(d) : graph::Dim());
    graph::Value *x = g->add_value("x", graph::TensorType{graph::DType::kFloat32, xs});
    x->is_graph_input = true;
    g->inputs().push_back(x);
    static const float ten[1] = {10};
    graph::Value *cv = g->add_value("ten", graph::TensorType{graph::DType::kFloat32, graph::Shape{graph::Dim(1)}});
    cv->constant = graph::TensorData::copy_of(graph::DType::kFloat32, {1}, ten, sizeof ten);
    graph::Value *y = g->add_value("y", graph::TensorType{graph::DType::kFloat32, xs});
    g->add_node("add", "Add", {x, cv}, {y}, "", 13);
    y->is_graph_output = true;
    g->outputs().push_back(y);
    model::OmModel om;
    om.graph = g;
    om.meta.producer = "OpenACL test";
    om.meta.gears = gears;
    std::string bytes;
    Status st = model::write_om(om, &bytes);
    if (!st.ok()) {
        if (err != nullptr) *err = st.message();
        return std::string();
    }
    return bytes;
}

}  // namespace mdltest

#endif  // OPENACL_TESTS_CAPI_TEST_MDL_UTIL_H_
