/*
 * The model dump with blocked activations: the layout pass keeps the tensors
 * between convolutions and poolings in oneDNN's channel-blocked layout, and
 * the dump must still write them as the plain N C H W the model describes.
 * An .om (conv 3->16 relu, conv 16->16, MaxPool 2x2, GlobalAveragePool) is
 * dumped in "all" mode; every intermediate (inputs and outputs) is compared
 * with plain loops computing the same network.
 * Contract: docs/graph-engine.md "Layouts"; include/acl/acl_mdl.h (dump).
 */
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_mdl_util.h"
#include "test_util.h"

namespace {

using acltest::ListFiles;
using acltest::RecentErrMsg;
using acltest::TempDir;
using acltest::TempFile;

constexpr int64_t kC = 16, kH = 10, kW = 10;

std::vector<float> Pattern(size_t n, float scale, float phase) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
    return v;
}

/* conv 3x3, pad 1, stride 1, NCHW, batch 1. */
std::vector<float> Conv(const std::vector<float> &x, int64_t cin, const std::vector<float> &w,
                        const std::vector<float> &b, int64_t cout, bool relu) {
    std::vector<float> y(static_cast<size_t>(cout * kH * kW));
    for (int64_t m = 0; m < cout; ++m)
        for (int64_t i = 0; i < kH; ++i)
            for (int64_t j = 0; j < kW; ++j) {
                double acc = b[static_cast<size_t>(m)];
                for (int64_t c = 0; c < cin; ++c)
                    for (int64_t ki = 0; ki < 3; ++ki)
                        for (int64_t kj = 0; kj < 3; ++kj) {
                            const int64_t ii = i + ki - 1, jj = j + kj - 1;
                            if (ii < 0 || ii >= kH || jj < 0 || jj >= kW) continue;
                            acc += static_cast<double>(w[static_cast<size_t>(((m * cin + c) * 3 + ki) * 3 + kj)]) *
                                   x[static_cast<size_t>((c * kH + ii) * kW + jj)];
                        }
                y[static_cast<size_t>((m * kH + i) * kW + j)] = relu && acc < 0 ? 0.f : static_cast<float>(acc);
            }
    return y;
}

struct Net {
    std::vector<float> x = Pattern(3 * kH * kW, 1.f, 0.f);
    std::vector<float> w1 = Pattern(kC * 3 * 9, 0.3f, 1.f), b1 = Pattern(kC, 0.1f, 2.f);
    std::vector<float> w2 = Pattern(kC * kC * 9, 0.1f, 3.f), b2 = Pattern(kC, 0.1f, 4.f);
    std::vector<float> c1, c2, pool, gap;
    Net() {
        c1 = Conv(x, 3, w1, b1, kC, true);
        c2 = Conv(c1, kC, w2, b2, kC, false);
        for (int64_t c = 0; c < kC; ++c)
            for (int64_t i = 0; i < kH / 2; ++i)
                for (int64_t j = 0; j < kW / 2; ++j) {
                    float m = -INFINITY;
                    for (int64_t a = 0; a < 2; ++a)
                        for (int64_t b = 0; b < 2; ++b)
                            m = std::max(m, c2[static_cast<size_t>((c * kH + 2 * i + a) * kW + 2 * j + b)]);
                    pool.push_back(m);
                }
        for (int64_t c = 0; c < kC; ++c) {
            double s = 0;
            for (int64_t i = 0; i < kH * kW / 4; ++i) s += pool[static_cast<size_t>(c * kH * kW / 4 + i)];
            gap.push_back(static_cast<float>(s / (kH * kW / 4)));
        }
    }
};

openacl::graph::Attribute Ints(std::vector<int64_t> v) {
    openacl::graph::Attribute a;
    a.kind = openacl::graph::Attribute::Kind::kInts;
    a.ints = std::move(v);
    return a;
}

std::string NetOm(const Net &net) {
    using namespace openacl;
    auto g = std::make_shared<graph::Graph>();
    g->name = "blocked";
    g->opsets()[""] = 17;
    auto f32 = [](std::vector<int64_t> d) {
        return graph::TensorType{graph::DType::kFloat32, graph::Shape(d.begin(), d.end())};
    };
    auto constant = [&](const std::string &name, std::vector<int64_t> d, const std::vector<float> &v) {
        graph::Value *c = g->add_value(name, f32(d));
        c->constant = graph::TensorData::copy_of(graph::DType::kFloat32, d, v.data(), v.size() * sizeof(float));
        return c;
    };
    graph::Value *x = g->add_value("x", f32({1, 3, kH, kW}));
    x->is_graph_input = true;
    g->inputs().push_back(x);
    graph::Value *c1 = g->add_value("c1"), *r1 = g->add_value("r1"), *c2 = g->add_value("c2"),
                 *p = g->add_value("p"), *y = g->add_value("y");
    graph::Node *n1 = g->add_node("conv1", "Conv", {x, constant("w1", {kC, 3, 3, 3}, net.w1),
                                                    constant("b1", {kC}, net.b1)}, {c1}, "", 17);
    g->add_node("relu1", "Relu", {c1}, {r1}, "", 17);
    graph::Node *n2 = g->add_node("conv2", "Conv", {r1, constant("w2", {kC, kC, 3, 3}, net.w2),
                                                    constant("b2", {kC}, net.b2)}, {c2}, "", 17);
    for (graph::Node *n : {n1, n2}) n->attrs.set("pads", Ints({1, 1, 1, 1}));
    graph::Node *mp = g->add_node("pool", "MaxPool", {c2}, {p}, "", 17);
    mp->attrs.set("kernel_shape", Ints({2, 2}));
    mp->attrs.set("strides", Ints({2, 2}));
    g->add_node("gap", "GlobalAveragePool", {p}, {y}, "", 17);
    y->is_graph_output = true;
    g->outputs().push_back(y);
    model::OmModel om;
    om.graph = g;
    om.meta.producer = "OpenACL test";
    std::string bytes;
    openacl::Status st = model::write_om(om, &bytes);
    EXPECT_TRUE(st.ok()) << st.message();
    return bytes;
}

/* The float data of a .npy v1.0 file written by the dump (and its shape). */
std::vector<float> LoadNpy(const std::string &path, std::vector<int64_t> *shape) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string b = ss.str();
    if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0) {
        ADD_FAILURE() << path << ": not a .npy file";
        return {};
    }
    const size_t hlen = static_cast<unsigned char>(b[8]) | (static_cast<size_t>(static_cast<unsigned char>(b[9])) << 8);
    const std::string h = b.substr(10, hlen);
    EXPECT_NE(h.find("'descr': '<f4'"), std::string::npos) << h;
    size_t s = h.find("'shape': (") + 10;
    std::stringstream dims(h.substr(s, h.find(')', s) - s));
    std::string part;
    while (std::getline(dims, part, ','))
        if (part.find_first_not_of(' ') != std::string::npos) shape->push_back(std::stoll(part));
    std::vector<float> v((b.size() - 10 - hlen) / sizeof(float));
    std::memcpy(v.data(), b.data() + 10 + hlen, v.size() * sizeof(float));
    return v;
}

class DumpLayoutTest : public acltest::DeviceTest {
 protected:
    void TearDown() override {
        aclmdlFinalizeDump();
        DeviceTest::TearDown();
    }
};

TEST_F(DumpLayoutTest, BlockedIntermediatesAreWrittenPlain) {
    Net net;
    const std::string om = NetOm(net);
    ASSERT_FALSE(om.empty());
    TempDir dir;
    ASSERT_EQ(aclmdlInitDump(), ACL_SUCCESS) << RecentErrMsg();
    TempFile cfg("{\"dump\": {\"dump_path\": \"" + dir.path() +
                 "\", \"dump_mode\": \"all\", \"dump_list\": [{\"model_name\": \"blocked\"}]}}");
    ASSERT_EQ(aclmdlSetDump(cfg.path()), ACL_SUCCESS) << RecentErrMsg();
    uint32_t id = 0;
    ASSERT_EQ(aclmdlLoadFromMem(om.data(), om.size(), &id), ACL_SUCCESS) << RecentErrMsg();

    void *x = nullptr, *y = nullptr;
    ASSERT_EQ(aclrtMalloc(&x, net.x.size() * 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&y, kC * 4, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(x, net.x.size() * 4, net.x.data(), net.x.size() * 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    aclmdlDataset *in = aclmdlCreateDataset(), *out = aclmdlCreateDataset();
    aclDataBuffer *xb = aclCreateDataBuffer(x, net.x.size() * 4), *yb = aclCreateDataBuffer(y, kC * 4);
    ASSERT_EQ(aclmdlAddDatasetBuffer(in, xb), ACL_SUCCESS);
    ASSERT_EQ(aclmdlAddDatasetBuffer(out, yb), ACL_SUCCESS);
    ASSERT_EQ(aclmdlExecute(id, in, out), ACL_SUCCESS) << RecentErrMsg();
    std::vector<float> got(kC);
    ASSERT_EQ(aclrtMemcpy(got.data(), kC * 4, y, kC * 4, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    for (int64_t c = 0; c < kC; ++c) EXPECT_NEAR(got[c], net.gap[c], 1e-4f) << "y[" << c << "]";

    // "{op_type}.{op_name}.{role}.{i}" -> file, from ".../{op_type}.{op_name}.{task}.{stream}.{ts}.{role}.{i}.npy".
    std::map<std::string, std::string> files;
    for (const std::string &rel : ListFiles(dir.path())) {
        const std::string name = rel.substr(rel.rfind('/') + 1);
        std::vector<std::string> f;
        std::stringstream ss(name);
        for (std::string part; std::getline(ss, part, '.');) f.push_back(part);
        if (f.size() != 8 || f[7] != "npy") continue;
        files[f[0] + "." + f[1] + "." + f[5] + "." + f[6]] = dir.path() + "/" + rel;
    }
    struct Want {
        const char *key;
        const std::vector<float> *data;
        std::vector<int64_t> shape;
    };
    // conv1 (with the Relu fused) writes c1 blocked; conv2 reads it and writes
    // c2 blocked; the MaxPool reads and writes blocked; the GAP reads blocked.
    const Want wants[] = {
        {"Conv.conv1.input.0", &net.x, {1, 3, kH, kW}},       {"Conv.conv1.output.0", &net.c1, {1, kC, kH, kW}},
        {"Conv.conv2.input.0", &net.c1, {1, kC, kH, kW}},     {"Conv.conv2.output.0", &net.c2, {1, kC, kH, kW}},
        {"MaxPool.pool.input.0", &net.c2, {1, kC, kH, kW}},   {"MaxPool.pool.output.0", &net.pool, {1, kC, kH / 2, kW / 2}},
        {"GlobalAveragePool.gap.input.0", &net.pool, {1, kC, kH / 2, kW / 2}},
        {"GlobalAveragePool.gap.output.0", &net.gap, {1, kC, 1, 1}},
    };
    for (const Want &w : wants) {
        ASSERT_TRUE(files.count(w.key)) << w.key << " not dumped";
        std::vector<int64_t> shape;
        const std::vector<float> v = LoadNpy(files.at(w.key), &shape);
        EXPECT_EQ(shape, w.shape) << w.key;
        ASSERT_EQ(v.size(), w.data->size()) << w.key;
        for (size_t i = 0; i < v.size(); ++i)
            ASSERT_NEAR(v[i], (*w.data)[i], 1e-4f + 1e-4f * std::fabs((*w.data)[i])) << w.key << " at " << i;
    }
    aclDestroyDataBuffer(xb);
    aclDestroyDataBuffer(yb);
    aclmdlDestroyDataset(in);
    aclmdlDestroyDataset(out);
    aclrtFree(x);
    aclrtFree(y);
    EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
}

}  // namespace
