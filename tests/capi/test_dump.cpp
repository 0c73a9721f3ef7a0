/*
 * The model dump (aclmdlInitDump / aclmdlSetDump / aclmdlFinalizeDump and
 * acl.json's `dump` section) through the C entry points: call order and error
 * codes, the output tree, layer filters, input/output/all modes, stats, .npy
 * files parsed back and compared with the model's reference, models not
 * listed, write errors and concurrent executions.
 * Contract: include/acl/acl_mdl.h; docs/models.md "Dump"; spec §1.1, §3.8;
 * compat-notes §4.
 */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_mdl_util.h"
#include "test_util.h"

namespace {

using acltest::Contains;
using acltest::ListFiles;
using acltest::RecentErrMsg;
using acltest::TempDir;
using acltest::TempFile;

/* ---- files ---- */

std::vector<std::string> Split(const std::string &s, char sep) {
    std::vector<std::string> parts;
    std::string cur;
    for (char c : s) {
        if (c == sep) {
            parts.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    parts.push_back(cur);
    return parts;
}

std::string ReadAll(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream b;
    b << in.rdbuf();
    return b.str();
}

/* A parsed .npy file (version 1.0, as the dump writes). */
struct Npy {
    std::string descr;
    std::vector<int64_t> shape;
    std::vector<float> data;  // descr '<f4' only
    bool ok = false;
};
Npy LoadNpy(const std::string &path) {
    Npy n;
    std::string b = ReadAll(path);
    if (b.size() < 10 || b.compare(0, 6, "\x93NUMPY") != 0 || b[6] != 1 || b[7] != 0) {
        ADD_FAILURE() << path << ": not a .npy v1.0 file";
        return n;
    }
    size_t hlen = static_cast<unsigned char>(b[8]) | (static_cast<size_t>(static_cast<unsigned char>(b[9])) << 8);
    EXPECT_EQ((10 + hlen) % 64, 0u) << path << ": header not padded to 64 bytes";
    std::string h = b.substr(10, hlen);
    EXPECT_EQ(h.back(), '\n');
    size_t d = h.find("'descr': '");
    size_t s = h.find("'shape': (");
    if (d == std::string::npos || s == std::string::npos || !Contains(h, "'fortran_order': False")) {
        ADD_FAILURE() << path << ": bad header " << h;
        return n;
    }
    d += 10;
    n.descr = h.substr(d, h.find('\'', d) - d);
    s += 10;
    std::string dims = h.substr(s, h.find(')', s) - s);
    for (const std::string &p : Split(dims, ',')) {
        std::string t = p;
        t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
        if (!t.empty()) n.shape.push_back(std::stoll(t));
    }
    if (n.descr == "<f4") {
        size_t count = 1;
        for (int64_t x : n.shape) count *= static_cast<size_t>(x);
        EXPECT_EQ(b.size() - 10 - hlen, count * sizeof(float)) << path;
        n.data.resize(count);
        if (b.size() - 10 - hlen >= count * sizeof(float)) std::memcpy(n.data.data(), b.data() + 10 + hlen, count * 4);
    }
    n.ok = true;
    return n;
}

/* ---- the model (tests/capi/test_mdl_util.h: y = Relu(x + W) * b, z = x - b) ---- */

const float kX[6] = {1, -2, 3, 0.5f, -0.25f, 4};
const float kB[3] = {2, -1, 0.5f};

struct Io {
    void *x = nullptr, *b = nullptr, *y = nullptr, *z = nullptr;
    aclmdlDataset *in = nullptr, *out = nullptr;
    std::vector<aclDataBuffer *> bufs;
    Io() {
        EXPECT_EQ(aclrtMalloc(&x, sizeof kX, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        EXPECT_EQ(aclrtMalloc(&b, sizeof kB, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        EXPECT_EQ(aclrtMalloc(&y, 24, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        EXPECT_EQ(aclrtMalloc(&z, 24, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        EXPECT_EQ(aclrtMemcpy(x, sizeof kX, kX, sizeof kX, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
        EXPECT_EQ(aclrtMemcpy(b, sizeof kB, kB, sizeof kB, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
        in = aclmdlCreateDataset();
        out = aclmdlCreateDataset();
        Add(in, x, sizeof kX);
        Add(in, b, sizeof kB);
        Add(out, y, 24);
        Add(out, z, 24);
    }
    ~Io() {
        aclmdlDestroyDataset(in);
        aclmdlDestroyDataset(out);
        for (aclDataBuffer *d : bufs) aclDestroyDataBuffer(d);
        for (void *p : {x, b, y, z}) aclrtFree(p);
    }
    Io(const Io &) = delete;
    Io &operator=(const Io &) = delete;
    void Add(aclmdlDataset *ds, void *p, size_t n) {
        bufs.push_back(aclCreateDataBuffer(p, n));
        EXPECT_EQ(aclmdlAddDatasetBuffer(ds, bufs.back()), ACL_SUCCESS);
    }
};

/* Reference intermediates: t = x + W, r = Relu(t), y = r * b, z = x - b. */
struct Ref {
    float t[6], r[6], y[6], z[6];
    Ref() {
        for (int i = 0; i < 6; ++i) {
            t[i] = kX[i] + mdltest::WeightW()[static_cast<size_t>(i)];
            r[i] = t[i] > 0 ? t[i] : 0;
            y[i] = r[i] * kB[i % 3];
            z[i] = kX[i] - kB[i % 3];
        }
    }
};

void ExpectData(const Npy &n, const float *want, size_t count, const std::string &what) {
    ASSERT_TRUE(n.ok) << what;
    EXPECT_EQ(n.descr, "<f4") << what;
    ASSERT_EQ(n.data.size(), count) << what;
    for (size_t i = 0; i < count; ++i) EXPECT_FLOAT_EQ(n.data[i], want[i]) << what << "[" << i << "]";
}

std::string DumpJson(const std::string &path, const std::string &extra, const std::string &list) {
    return "{\"dump\": {\"dump_path\": \"" + path + "\", \"dump_list\": " + list + extra + "}}";
}

/* The files of one model execution: "{op_type}.{op_name}" + suffix -> full path. */
struct Execution {
    std::map<std::string, std::string> files;
};

/* Splits a dump file path "{time}/{dev}/{model}/{id}/{index}/{file}" and checks each part. */
std::map<std::string, Execution> Executions(const std::string &root, const std::string &model, uint32_t id,
                                            int device = 0) {
    std::map<std::string, Execution> out;
    for (const std::string &rel : ListFiles(root)) {
        std::vector<std::string> parts = Split(rel, '/');
        EXPECT_EQ(parts.size(), 6u) << rel;
        if (parts.size() != 6) continue;
        EXPECT_EQ(parts[0].size(), 14u) << "time folder " << parts[0];
        EXPECT_TRUE(std::all_of(parts[0].begin(), parts[0].end(), ::isdigit)) << parts[0];
        EXPECT_EQ(parts[1], std::to_string(device));
        EXPECT_EQ(parts[2], model);
        EXPECT_EQ(parts[3], std::to_string(id));
        // {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}.{role}.{i}.npy or .stats.csv
        std::vector<std::string> f = Split(parts[5], '.');
        EXPECT_GE(f.size(), 7u) << parts[5];
        if (f.size() < 7) continue;
        EXPECT_TRUE(std::all_of(f[2].begin(), f[2].end(), ::isdigit)) << "task id " << parts[5];
        EXPECT_EQ(f[3], "0") << "stream id " << parts[5];
        EXPECT_GE(f[4].size(), 10u) << "timestamp " << parts[5];
        std::string key = f[0] + "." + f[1];
        for (size_t i = 5; i < f.size(); ++i) key += "." + f[i];
        out[parts[4]].files[key] = root + "/" + rel;
    }
    return out;
}

class DumpTest : public acltest::DeviceTest {
 protected:
    void SetUp() override {
        DeviceTest::SetUp();
        if (HasFatalFailure()) return;
        onnx_ = mdltest::AddReluOnnx();
    }
    void TearDown() override {
        aclmdlFinalizeDump();  // whatever state the test left
        DeviceTest::TearDown();
    }
    uint32_t Load() {
        uint32_t id = 0;
        EXPECT_EQ(aclmdlLoadFromMem(onnx_.data(), onnx_.size(), &id), ACL_SUCCESS) << RecentErrMsg();
        return id;
    }
    void Execute(uint32_t id, const Io &io) {
        ASSERT_EQ(aclmdlExecute(id, io.in, io.out), ACL_SUCCESS) << RecentErrMsg();
    }
    /* InitDump + SetDump(file with `json`). */
    void StartDump(const std::string &json) {
        ASSERT_EQ(aclmdlInitDump(), ACL_SUCCESS) << RecentErrMsg();
        TempFile cfg(json);
        ASSERT_EQ(aclmdlSetDump(cfg.path()), ACL_SUCCESS) << RecentErrMsg() << "\n" << json;
    }
    std::string onnx_;
};

/* ------------------------------------------------------------------ call order and errors */

TEST(DumpNoInit, NeedsAclInit) {
    EXPECT_EQ(aclmdlInitDump(), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclmdlSetDump("/nonexistent"), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclmdlFinalizeDump(), ACL_ERROR_UNINITIALIZE);
}

TEST_F(DumpTest, CallOrderErrors) {
    TempDir dir;
    TempFile cfg(DumpJson(dir.path(), "", "[{\"model_name\": \"addrelu\"}]"));
    EXPECT_EQ(aclmdlSetDump(cfg.path()), ACL_ERROR_DUMP_NOT_RUN);
    EXPECT_TRUE(Contains(RecentErrMsg(), "aclmdlInitDump")) << RecentErrMsg();
    EXPECT_EQ(aclmdlFinalizeDump(), ACL_ERROR_DUMP_NOT_RUN);
    ASSERT_EQ(aclmdlInitDump(), ACL_SUCCESS);
    EXPECT_EQ(aclmdlInitDump(), ACL_ERROR_DUMP_ALREADY_RUN);
    EXPECT_EQ(aclmdlSetDump(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlSetDump(""), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclmdlSetDump("/nonexistent/openacl/dump.json"), ACL_ERROR_INVALID_FILE);
    TempFile malformed("{ not json");
    EXPECT_EQ(aclmdlSetDump(malformed.path()), ACL_ERROR_PARSE_FILE);
    TempFile no_section("{\"profiler\": {}}");
    EXPECT_EQ(aclmdlSetDump(no_section.path()), ACL_ERROR_INVALID_DUMP_CONFIG);
    EXPECT_TRUE(Contains(RecentErrMsg(), "\"dump\"")) << RecentErrMsg();
    EXPECT_EQ(aclmdlSetDump(cfg.path()), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclmdlSetDump(cfg.path()), ACL_SUCCESS) << "SetDump may be called again";
    EXPECT_EQ(aclmdlFinalizeDump(), ACL_SUCCESS);
    EXPECT_EQ(aclmdlFinalizeDump(), ACL_ERROR_DUMP_NOT_RUN);
    EXPECT_EQ(aclmdlSetDump(cfg.path()), ACL_ERROR_DUMP_NOT_RUN);
    ASSERT_EQ(aclmdlInitDump(), ACL_SUCCESS) << "a new cycle after FinalizeDump";
    EXPECT_EQ(aclmdlFinalizeDump(), ACL_SUCCESS);
}

TEST_F(DumpTest, BadValuesNameTheKeyAndTheAllowedValues) {
    TempDir dir;
    const std::string list = "[{\"model_name\": \"addrelu\"}]";
    struct Case {
        std::string json, key, allowed;
    };
    const Case cases[] = {
        {DumpJson(dir.path(), ", \"dump_mode\": \"outputs\"", list), "dump_mode", "\"input\""},
        {DumpJson(dir.path(), ", \"dump_mode\": 1", list), "dump_mode", "\"all\""},
        {DumpJson(dir.path(), ", \"dump_data\": \"statistics\"", list), "dump_data", "\"stats\""},
        {DumpJson(dir.path(), ", \"dump_op_switch\": \"yes\"", list), "dump_op_switch", "\"on\""},
        {DumpJson(dir.path(), ", \"dump_level\": \"layer\"", list), "dump_level", "\"kernel\""},
        {DumpJson(dir.path(), ", \"dump_scene\": \"crash\"", list), "dump_scene", "\"watcher\""},
        {DumpJson(dir.path(), "", "{\"model_name\": \"addrelu\"}"), "dump_list", "model_name"},
        {DumpJson(dir.path(), "", "[{\"model_name\": 3}]"), "model_name", ""},
        {DumpJson(dir.path(), "", "[{\"model_name\": \"addrelu\", \"layer\": \"Relu\"}]"), "layer", ""},
        {DumpJson(dir.path(), "", "[{\"layer\": [\"Relu\"]}]"), "model_name", ""},
        {DumpJson(dir.path() + "/missing", "", list), "dump_path", "missing"},
        {"{\"dump\": {\"dump_list\": " + list + "}}", "dump_path", ""},
        {"{\"dump\": {\"dump_path\": 5, \"dump_list\": " + list + "}}", "dump_path", ""},
        {"{\"dump\": []}", "dump", ""},
    };
    ASSERT_EQ(aclmdlInitDump(), ACL_SUCCESS);
    for (const Case &c : cases) {
        TempFile cfg(c.json);
        EXPECT_EQ(aclmdlSetDump(cfg.path()), ACL_ERROR_INVALID_DUMP_CONFIG) << c.json;
        std::string msg = RecentErrMsg();
        EXPECT_TRUE(Contains(msg, c.key)) << msg;
        EXPECT_TRUE(Contains(msg, c.allowed)) << msg;
    }
    // A dump_path that is a file, not a folder.
    TempFile not_dir("x");
    TempFile cfg(DumpJson(not_dir.path(), "", list));
    EXPECT_EQ(aclmdlSetDump(cfg.path()), ACL_ERROR_INVALID_DUMP_CONFIG);
    // Unknown keys and the scenes OpenACL does not run are accepted.
    TempFile lenient(DumpJson(dir.path(), ", \"dump_debug\": \"off\", \"future_key\": 1, \"dump_scene\": \"watcher\"",
                              "[{\"model_name\": \"addrelu\", \"watcher_nodes\": [\"a\"]}]"));
    EXPECT_EQ(aclmdlSetDump(lenient.path()), ACL_SUCCESS) << RecentErrMsg();
    // Only scenes, no model: accepted, nothing to dump, no dump_path needed.
    TempFile scene_only("{\"dump\": {\"dump_scene\": \"lite_exception\"}}");
    EXPECT_EQ(aclmdlSetDump(scene_only.path()), ACL_SUCCESS) << RecentErrMsg();
}

/* ------------------------------------------------------------------ what is written */

TEST_F(DumpTest, EveryOpOutputOfEveryExecution) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), "", "[{\"model_name\": \"addrelu\"}]"));
    uint32_t id = Load();
    Io io;
    Execute(id, io);
    Execute(id, io);
    auto runs = Executions(dir.path(), "addrelu", id);
    ASSERT_EQ(runs.size(), 2u);
    ASSERT_TRUE(runs.count("0") && runs.count("1"));
    Ref ref;
    for (const auto &[index, run] : runs) {
        // Which ops exist depends on the optimiser (Add+Relu may fuse); Mul's and Sub's outputs are the model's.
        ASSERT_TRUE(run.files.count("Mul.Mul_y.output.0.npy")) << index;
        ASSERT_TRUE(run.files.count("Sub.Sub_z.output.0.npy")) << index;
        ExpectData(LoadNpy(run.files.at("Mul.Mul_y.output.0.npy")), ref.y, 6, "y");
        ExpectData(LoadNpy(run.files.at("Sub.Sub_z.output.0.npy")), ref.z, 6, "z");
        Npy y = LoadNpy(run.files.at("Mul.Mul_y.output.0.npy"));
        EXPECT_EQ(y.shape, (std::vector<int64_t>{2, 3}));
        for (const auto &[key, path] : run.files) EXPECT_FALSE(Contains(key, ".input.")) << "output mode: " << key;
        if (run.files.count("Relu.Relu_r.output.0.npy"))
            ExpectData(LoadNpy(run.files.at("Relu.Relu_r.output.0.npy")), ref.r, 6, "r");
    }
}

TEST_F(DumpTest, LayerFilterAndInputMode) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), ", \"dump_mode\": \"input\"",
                       "[{\"model_name\": \"addrelu\", \"layer\": [\"Sub_z\", \"Mul_y\"]}]"));
    uint32_t id = Load();
    Io io;
    Execute(id, io);
    auto runs = Executions(dir.path(), "addrelu", id);
    ASSERT_EQ(runs.size(), 1u);
    const auto &files = runs.begin()->second.files;
    std::vector<std::string> keys;
    for (const auto &kv : files) keys.push_back(kv.first);
    EXPECT_EQ(keys, (std::vector<std::string>{"Mul.Mul_y.input.0.npy", "Mul.Mul_y.input.1.npy",
                                              "Sub.Sub_z.input.0.npy", "Sub.Sub_z.input.1.npy"}));
    Ref ref;
    ExpectData(LoadNpy(files.at("Sub.Sub_z.input.0.npy")), kX, 6, "Sub input x");
    ExpectData(LoadNpy(files.at("Sub.Sub_z.input.1.npy")), kB, 3, "Sub input b");
    ExpectData(LoadNpy(files.at("Mul.Mul_y.input.0.npy")), ref.r, 6, "Mul input r");
    EXPECT_EQ(LoadNpy(files.at("Sub.Sub_z.input.1.npy")).shape, (std::vector<int64_t>{3}));
}

TEST_F(DumpTest, AllModeWritesInputsAndOutputsWithOneStamp) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), ", \"dump_mode\": \"all\"",
                       "[{\"model_name\": \"addrelu\", \"layer\": [\"Sub_z\"]}]"));
    uint32_t id = Load();
    Io io;
    Execute(id, io);
    std::vector<std::string> all = ListFiles(dir.path());
    ASSERT_EQ(all.size(), 3u);
    // The three files share {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}.
    std::string prefix = all[0].substr(0, all[0].find(".input."));
    for (const std::string &f : all) EXPECT_EQ(f.compare(0, prefix.size(), prefix), 0) << f;
    auto files = Executions(dir.path(), "addrelu", id).begin()->second.files;
    Ref ref;
    ExpectData(LoadNpy(files.at("Sub.Sub_z.input.0.npy")), kX, 6, "x");
    ExpectData(LoadNpy(files.at("Sub.Sub_z.input.1.npy")), kB, 3, "b");
    ExpectData(LoadNpy(files.at("Sub.Sub_z.output.0.npy")), ref.z, 6, "z");
}

TEST_F(DumpTest, StatsWritesOneTextFilePerOp) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), ", \"dump_mode\": \"all\", \"dump_data\": \"stats\"",
                       "[{\"model_name\": \"addrelu\", \"layer\": [\"Sub_z\"]}]"));
    uint32_t id = Load();
    Io io;
    Execute(id, io);
    auto files = Executions(dir.path(), "addrelu", id).begin()->second.files;
    ASSERT_EQ(files.size(), 1u);
    ASSERT_TRUE(files.count("Sub.Sub_z.stats.csv"));
    std::vector<std::string> lines = Split(ReadAll(files.at("Sub.Sub_z.stats.csv")), '\n');
    ASSERT_EQ(lines.size(), 5u);  // header, 2 inputs, 1 output, "" after the last newline
    EXPECT_EQ(lines[0], "tensor,dtype,shape,count,min,max,mean,nan_count");
    EXPECT_EQ(lines[1], "input.0,float32,2x3,6,-2,4,1.04166667,0");
    EXPECT_EQ(lines[2], "input.1,float32,3,3,-1,2,0.5,0");
    Ref ref;
    float lo = ref.z[0], hi = ref.z[0], sum = 0;
    for (float v : ref.z) lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
    std::vector<std::string> f = Split(lines[3], ',');
    ASSERT_EQ(f.size(), 8u) << lines[3];
    EXPECT_EQ(f[0], "output.0");
    EXPECT_FLOAT_EQ(std::stof(f[4]), lo);
    EXPECT_FLOAT_EQ(std::stof(f[5]), hi);
    EXPECT_NEAR(std::stod(f[6]), sum / 6, 1e-6);
    EXPECT_EQ(f[7], "0");
}

TEST_F(DumpTest, ModelsNotListedWriteNothing) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), "", "[{\"model_name\": \"some_other_model\"}]"));
    uint32_t id = Load();
    Io io;
    Execute(id, io);
    EXPECT_TRUE(ListFiles(dir.path()).empty());
    DIR *d = opendir(dir.path().c_str());
    int entries = 0;
    while (dirent *e = readdir(d)) entries += std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..");
    closedir(d);
    EXPECT_EQ(entries, 0) << "not even the time folder";
}

TEST_F(DumpTest, LayersTheModelLacksWriteNothing) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), ", \"dump_mode\": \"all\"",
                       "[{\"model_name\": \"addrelu\", \"layer\": [\"NoSuchOp\", \"Sub\"]}]"));
    uint32_t id = Load();
    Io io;
    Execute(id, io);  // logs one warning naming 'NoSuchOp' and 'Sub' (op types are not op names)
    Execute(id, io);
    EXPECT_TRUE(ListFiles(dir.path()).empty());
}

TEST_F(DumpTest, FinalizeDumpStopsIt) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), "", "[{\"model_name\": \"addrelu\", \"layer\": [\"Sub_z\"]}]"));
    uint32_t id = Load();
    Io io;
    Execute(id, io);
    size_t before = ListFiles(dir.path()).size();
    EXPECT_EQ(before, 1u);
    ASSERT_EQ(aclmdlFinalizeDump(), ACL_SUCCESS);
    Execute(id, io);
    EXPECT_EQ(ListFiles(dir.path()).size(), before);
}

TEST_F(DumpTest, AsyncExecutionsAreDumped) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), "", "[{\"model_name\": \"addrelu\", \"layer\": [\"Sub_z\"]}]"));
    uint32_t id = Load();
    Io io;
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    ASSERT_EQ(aclmdlExecuteAsync(id, io.in, io.out, s), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlExecuteAsync(id, io.in, io.out, s), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    auto runs = Executions(dir.path(), "addrelu", id);
    ASSERT_EQ(runs.size(), 2u);
    Ref ref;
    ExpectData(LoadNpy(runs["1"].files.at("Sub.Sub_z.output.0.npy")), ref.z, 6, "z");
}

TEST_F(DumpTest, WriteErrorsNeverFailTheExecution) {
    TempDir dir;
    std::string gone = dir.path() + "/gone";
    ASSERT_EQ(mkdir(gone.c_str(), 0755), 0);
    StartDump(DumpJson(gone, "", "[{\"model_name\": \"addrelu\"}]"));
    uint32_t id = Load();
    // Replace the dump folder with a file: every write fails.
    ASSERT_EQ(rmdir(gone.c_str()), 0);
    { std::ofstream(gone) << "in the way"; }
    Io io;
    Execute(id, io);
    Execute(id, io);
    float z[6];
    ASSERT_EQ(aclrtMemcpy(z, sizeof z, io.z, sizeof z, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    Ref ref;
    for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(z[i], ref.z[i]);
}

TEST_F(DumpTest, ConcurrentExecutionsGetDistinctIndexes) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), ", \"dump_mode\": \"all\"", "[{\"model_name\": \"addrelu\"}]"));
    uint32_t id = Load();
    constexpr int kThreads = 4, kRuns = 5;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
            Io io;
            for (int i = 0; i < kRuns; ++i) EXPECT_EQ(aclmdlExecute(id, io.in, io.out), ACL_SUCCESS);
        });
    }
    for (auto &th : threads) th.join();
    auto runs = Executions(dir.path(), "addrelu", id);
    ASSERT_EQ(runs.size(), static_cast<size_t>(kThreads * kRuns));
    Ref ref;
    size_t files = runs.begin()->second.files.size();
    for (int i = 0; i < kThreads * kRuns; ++i) {
        auto it = runs.find(std::to_string(i));
        ASSERT_NE(it, runs.end()) << "index " << i;
        EXPECT_EQ(it->second.files.size(), files) << "index " << i;
        ExpectData(LoadNpy(it->second.files.at("Sub.Sub_z.output.0.npy")), ref.z, 6, "z");
    }
}

TEST_F(DumpTest, TwoModelsTwoFolders) {
    TempDir dir;
    StartDump(DumpJson(dir.path(), "", "[{\"model_name\": \"addrelu\", \"layer\": [\"Sub_z\"]}]"));
    uint32_t a = Load(), b = Load();
    Io io;
    Execute(a, io);
    Execute(b, io);
    std::vector<std::string> all = ListFiles(dir.path());
    ASSERT_EQ(all.size(), 2u);
    EXPECT_TRUE(Contains(all[0] + all[1], "/addrelu/" + std::to_string(a) + "/0/"));
    EXPECT_TRUE(Contains(all[0] + all[1], "/addrelu/" + std::to_string(b) + "/0/"));
}

TEST_F(DumpTest, OmGearModelDumpsTheSelectedGearsShapes) {
    std::string err;
    std::string om = mdltest::AddConstOm(-1, {1, 2, 4}, &err);
    ASSERT_FALSE(om.empty()) << err;
    TempDir dir;
    StartDump(DumpJson(dir.path(), ", \"dump_mode\": \"all\"", "[{\"model_name\": \"addconst\"}]"));
    uint32_t id = 0;
    ASSERT_EQ(aclmdlLoadFromMem(om.data(), om.size(), &id), ACL_SUCCESS) << RecentErrMsg();
    aclmdlDesc *desc = aclmdlCreateDesc();
    ASSERT_EQ(aclmdlGetDesc(desc, id), ACL_SUCCESS);
    const size_t shape_bytes = aclmdlGetInputSizeByIndex(desc, 1);
    aclmdlDestroyDesc(desc);
    void *x = nullptr, *shape = nullptr, *y = nullptr;
    ASSERT_EQ(aclrtMalloc(&x, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&shape, shape_bytes, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&y, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    const float xs[8] = {1, 2, 3, 4, 10, 20, 30, 40};
    ASSERT_EQ(aclrtMemcpy(x, 64, xs, sizeof xs, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    aclmdlDataset *in = aclmdlCreateDataset(), *out = aclmdlCreateDataset();
    aclDataBuffer *bx = aclCreateDataBuffer(x, sizeof xs), *bs = aclCreateDataBuffer(shape, shape_bytes),
                  *by = aclCreateDataBuffer(y, 64);
    ASSERT_EQ(aclmdlAddDatasetBuffer(in, bx), ACL_SUCCESS);
    ASSERT_EQ(aclmdlAddDatasetBuffer(in, bs), ACL_SUCCESS);
    ASSERT_EQ(aclmdlAddDatasetBuffer(out, by), ACL_SUCCESS);
    ASSERT_EQ(aclmdlSetDynamicBatchSize(id, in, 1, 2), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclmdlExecute(id, in, out), ACL_SUCCESS) << RecentErrMsg();
    auto runs = Executions(dir.path(), "addconst", id);
    ASSERT_EQ(runs.size(), 1u);
    const auto &files = runs["0"].files;
    ASSERT_EQ(files.size(), 3u);
    Npy in0 = LoadNpy(files.at("Add.add.input.0.npy"));
    EXPECT_EQ(in0.shape, (std::vector<int64_t>{2, 4}));
    ExpectData(in0, xs, 8, "x");
    float want[8];
    for (int i = 0; i < 8; ++i) want[i] = xs[i] + static_cast<float>(i % 4 + 1);
    Npy out0 = LoadNpy(files.at("Add.add.output.0.npy"));
    EXPECT_EQ(out0.shape, (std::vector<int64_t>{2, 4}));
    ExpectData(out0, want, 8, "y");
    const float c[4] = {1, 2, 3, 4};
    ExpectData(LoadNpy(files.at("Add.add.input.1.npy")), c, 4, "the constant");
    aclmdlDestroyDataset(in);
    aclmdlDestroyDataset(out);
    for (aclDataBuffer *b : {bx, bs, by}) aclDestroyDataBuffer(b);
    for (void *p : {x, shape, y}) aclrtFree(p);
}

/* ------------------------------------------------------------------ acl.json */

TEST(DumpAclJson, DumpSectionAtInit) {
    acltest::RunIsolated([] {
        TempDir dir;
        TempFile acl_json(DumpJson(dir.path(), ", \"dump_mode\": \"output\"",
                                   "[{\"model_name\": \"addrelu\", \"layer\": [\"Sub_z\"]}]"));
        ASSERT_EQ(aclInit(acl_json.path()), ACL_SUCCESS) << RecentErrMsg();
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        EXPECT_EQ(aclmdlInitDump(), ACL_ERROR_DUMP_ALREADY_RUN);
        EXPECT_TRUE(Contains(RecentErrMsg(), "acl.json")) << RecentErrMsg();
        EXPECT_EQ(aclmdlFinalizeDump(), ACL_ERROR_DUMP_NOT_RUN);
        std::string onnx = mdltest::AddReluOnnx();
        uint32_t id = 0;
        ASSERT_EQ(aclmdlLoadFromMem(onnx.data(), onnx.size(), &id), ACL_SUCCESS);
        {
            Io io;
            ASSERT_EQ(aclmdlExecute(id, io.in, io.out), ACL_SUCCESS);
        }
        auto runs = Executions(dir.path(), "addrelu", id);
        ASSERT_EQ(runs.size(), 1u);
        Ref ref;
        ExpectData(LoadNpy(runs["0"].files.at("Sub.Sub_z.output.0.npy")), ref.z, 6, "z");
        EXPECT_EQ(runs["0"].files.size(), 1u);
        // aclFinalize ends it; a later aclInit without the section has no dump.
        ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST(DumpAclJson, BadDumpSectionFailsInit) {
    acltest::RunIsolated([] {
        TempDir dir;
        TempFile acl_json(DumpJson(dir.path(), ", \"dump_data\": \"everything\"", "[{\"model_name\": \"m\"}]"));
        EXPECT_EQ(aclInit(acl_json.path()), ACL_ERROR_INVALID_DUMP_CONFIG);
        const char *msg = aclGetRecentErrMsg();
        std::string m = msg != nullptr ? msg : "";
        EXPECT_TRUE(Contains(m, "dump_data") && Contains(m, "\"stats\"")) << m;
        uint32_t n = 0;
        EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_ERROR_UNINITIALIZE) << "a failed aclInit leaves nothing initialised";
    });
}

TEST(DumpAclJson, MissingDumpPathFailsInit) {
    acltest::RunIsolated([] {
        TempFile acl_json("{\"dump\": {\"dump_list\": [{\"model_name\": \"m\"}]}}");
        EXPECT_EQ(aclInit(acl_json.path()), ACL_ERROR_INVALID_DUMP_CONFIG);
    });
}

TEST(DumpAclJson, SceneOnlySectionLeavesTheApiFree) {
    acltest::RunIsolated([] {
        TempFile acl_json("{\"dump\": {\"dump_scene\": \"lite_exception\"}}");
        ASSERT_EQ(aclInit(acl_json.path()), ACL_SUCCESS) << RecentErrMsg();
        EXPECT_EQ(aclmdlInitDump(), ACL_SUCCESS) << RecentErrMsg();
        EXPECT_EQ(aclmdlFinalizeDump(), ACL_SUCCESS);
    });
}

}  // namespace
