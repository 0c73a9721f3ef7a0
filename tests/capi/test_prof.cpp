/*
 * Profiling through the C entry points (acl_prof.h): the op-info subscription
 * (records decoded by our readers and by an independent decoder written here
 * from the documented layout, strings readable once, validation, ordering
 * errors, a pipe nobody reads, a reader that goes away) and the collection to
 * files (CSV columns and rows parsed back, the Chrome trace checked against
 * the trace-event format and against the CSV, ordering errors, acl.json).
 * Contract: include/acl/acl_prof.h; docs/profiling.md; spec §5; compat-notes §3.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "raw_enums.h"
#include "test_mdl_util.h"
#include "test_util.h"

namespace {

using acltest::Contains;
using acltest::ListFiles;
using acltest::RecentErrMsg;
using acltest::ScopedEnv;
using acltest::TempDir;
using acltest::TempFile;

/* ------------------------------------------------------------------ helpers */

std::string ReadAll(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream b;
    b << in.rdbuf();
    return b.str();
}

/* RFC 4180 CSV, as the summaries are written. */
std::vector<std::vector<std::string>> ParseCsv(const std::string &text) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false, any = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            row.push_back(field);
            field.clear();
        } else if (c == '\n') {
            row.push_back(field);
            rows.push_back(row);
            row.clear();
            field.clear();
            any = false;
            continue;
        } else {
            field += c;
        }
        any = true;
    }
    if (any) {
        row.push_back(field);
        rows.push_back(row);
    }
    return rows;
}

/* A CSV as maps keyed by the header's column names. */
struct Table {
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
};
Table LoadTable(const std::string &path) {
    Table t;
    auto rows = ParseCsv(ReadAll(path));
    if (rows.empty()) {
        ADD_FAILURE() << path << " is empty";
        return t;
    }
    t.header = rows[0];
    for (size_t i = 1; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].size(), t.header.size()) << path << " row " << i;
        std::map<std::string, std::string> m;
        for (size_t j = 0; j < rows[i].size() && j < t.header.size(); ++j) m[t.header[j]] = rows[i][j];
        t.rows.push_back(m);
    }
    return t;
}

/* ---- an independent decoder of the 80-byte record (spec §5.4) ---- */

/* Bitwise CRC-32C register update, reflected polynomial 0x82F63B78. */
uint32_t Crc32cRegister(const unsigned char *p, size_t n, uint32_t crc) {
    for (size_t i = 0; i < n; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return crc;
}

struct Decoded {
    uint32_t signature, model_id, flag, thread_id;
    uint64_t op_index, duration, start, end, execution_time, cube_fops, vector_fops;
    uint32_t dev_id, pad;
    bool signature_ok;
};
template <class T>
T Field(const unsigned char *rec, size_t offset) {
    T v;
    std::memcpy(&v, rec + offset, sizeof v);
    return v;
}
Decoded Decode(const unsigned char *rec) {
    Decoded d{};
    d.signature = Field<uint32_t>(rec, 0);
    d.model_id = Field<uint32_t>(rec, 4);
    d.flag = Field<uint32_t>(rec, 8);
    d.thread_id = Field<uint32_t>(rec, 12);
    d.op_index = Field<uint64_t>(rec, 16);
    d.duration = Field<uint64_t>(rec, 24);
    d.start = Field<uint64_t>(rec, 32);
    d.end = Field<uint64_t>(rec, 40);
    d.execution_time = Field<uint64_t>(rec, 48);
    d.cube_fops = Field<uint64_t>(rec, 56);
    d.vector_fops = Field<uint64_t>(rec, 64);
    d.dev_id = Field<uint32_t>(rec, 72);
    d.pad = Field<uint32_t>(rec, 76);
    // Start 0xFFFFFFFF, bytes [4, 80), no final XOR.
    d.signature_ok = d.signature == Crc32cRegister(rec + 4, 76, 0xFFFFFFFFu);
    return d;
}

/* ---- the model (tests/capi/test_mdl_util.h: y = Relu(x + W) * b, z = x - b: 4 nodes) ---- */

const float kX[6] = {1, -2, 3, 0.5f, -0.25f, 4};
const float kB[3] = {2, -1, 0.5f};
const std::set<std::string> kOpTypes = {"Add", "Relu", "Mul", "Sub"};
constexpr size_t kNodes = 4;

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

/* Reads a pipe until EOF on its own thread. */
class PipeReader {
 public:
    explicit PipeReader(int fd) : fd_(fd), thread_([this] { Run(); }) {}
    ~PipeReader() { Join(); }
    void Join() {
        if (thread_.joinable()) thread_.join();
    }
    const std::string &data() const { return data_; }
    size_t reads() const { return reads_; }
    bool whole_records() const { return whole_; }

 private:
    void Run() {
        char buf[80 * 10];
        for (;;) {
            ssize_t n = read(fd_, buf, sizeof buf);
            if (n <= 0) break;
            ++reads_;
            if (n % 80 != 0) whole_ = false;
            data_.append(buf, static_cast<size_t>(n));
        }
    }
    int fd_;
    std::string data_;
    size_t reads_ = 0;
    bool whole_ = true;
    std::thread thread_;
};

class ProfTest : public acltest::DeviceTest {
 protected:
    void SetUp() override {
        DeviceTest::SetUp();
        if (HasFatalFailure()) return;
        onnx_ = mdltest::AddReluOnnx();
    }
    uint32_t Load() {
        uint32_t id = 0;
        EXPECT_EQ(aclmdlLoadFromMem(onnx_.data(), onnx_.size(), &id), ACL_SUCCESS) << RecentErrMsg();
        return id;
    }
    void Execute(uint32_t id, const Io &io) { ASSERT_EQ(aclmdlExecute(id, io.in, io.out), ACL_SUCCESS) << RecentErrMsg(); }
    std::string onnx_;
};

/* A pipe whose ends are closed at scope exit unless handed over. */
struct Pipe {
    int r = -1, w = -1;
    Pipe() { EXPECT_EQ(pipe(&r), 0); }
    ~Pipe() {
        if (r >= 0) close(r);
        if (w >= 0) close(w);
    }
    Pipe(const Pipe &) = delete;
    Pipe &operator=(const Pipe &) = delete;
    int TakeWrite() {  // the library closes it after unsubscribe
        int f = w;
        w = -1;
        return f;
    }
};

/* ------------------------------------------------------------------ subscription */

TEST(ProfConstants, RecordSizeAndEnumValues) {
    size_t size = 0;
    EXPECT_EQ(aclprofGetOpDescSize(&size), ACL_SUCCESS);
    EXPECT_EQ(size, 80u);
    EXPECT_EQ(aclprofGetOpDescSize(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(ACL_PROF_ACL_API, 0x1ull);
    EXPECT_EQ(ACL_PROF_TASK_TIME, 0x2ull);
    EXPECT_EQ(ACL_PROF_TASK_TIME_L0, 0x800ull);
    EXPECT_EQ(ACL_PROF_AICORE_SHAPE, 0x800000000ull);
    EXPECT_EQ(ACL_PROF_MAX_OP_NAME_LEN, 257);
    EXPECT_EQ(ACL_PROF_MAX_OP_TYPE_LEN, 65);
    EXPECT_EQ(ACL_AICORE_NONE, 0xFF);
    EXPECT_EQ(ACL_SUBSCRIBE_NONE, 0xFF);
    EXPECT_EQ(ACL_PROF_PATH, 16);
    EXPECT_EQ(ACL_PROF_ARGS_MAX, 17);
}

TEST_F(ProfTest, SubscriptionRecordsDecodeBothWays) {
    const uint32_t id = Load();
    Io io;
    Pipe p;
    int wfd = p.w;
    aclprofSubscribeConfig *cfg = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &wfd);
    ASSERT_NE(cfg, nullptr) << RecentErrMsg();
    ASSERT_EQ(aclprofModelSubscribe(id, cfg), ACL_SUCCESS) << RecentErrMsg();
    p.TakeWrite();
    PipeReader reader(p.r);
    constexpr int kRuns = 3;
    for (int i = 0; i < kRuns; ++i) Execute(id, io);
    ASSERT_EQ(aclprofModelUnSubscribe(id), ACL_SUCCESS) << RecentErrMsg();
    reader.Join();  // EOF: the library closed the write end
    EXPECT_TRUE(reader.whole_records()) << "a read returned a partial record";
    EXPECT_EQ(fcntl(wfd, F_GETFD), -1) << "the write end is still open after unsubscribe";
    EXPECT_EQ(aclprofDestroySubscribeConfig(cfg), ACL_SUCCESS);

    const std::string &data = reader.data();
    ASSERT_EQ(data.size(), kNodes * kRuns * 80) << "one 80-byte record per executed node";
    uint32_t num = 0;
    ASSERT_EQ(aclprofGetOpNum(data.data(), data.size(), &num), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(num, kNodes * kRuns);

    std::map<std::string, int> types;
    std::set<uint64_t> indexes;
    uint64_t prev_start = 0;
    for (uint32_t i = 0; i < num; ++i) {
        const auto *rec = reinterpret_cast<const unsigned char *>(data.data()) + i * 80;
        Decoded d = Decode(rec);
        EXPECT_TRUE(d.signature_ok) << "record " << i;
        EXPECT_EQ(d.model_id, id);
        EXPECT_EQ(d.flag, 0u);
        EXPECT_EQ(d.dev_id, 0u);
        EXPECT_EQ(d.pad, 0u);
        EXPECT_EQ(d.cube_fops, 0u);
        EXPECT_EQ(d.vector_fops, 0u);
        EXPECT_GE(d.op_index, 1u);
        EXPECT_TRUE(indexes.insert(d.op_index).second) << "op_index repeats";
        EXPECT_LE(d.start, d.end);
        EXPECT_EQ(d.duration, d.end - d.start);
        EXPECT_GE(d.start, prev_start) << "records in execution order";
        prev_start = d.start;
        EXPECT_NE(d.thread_id, 0u);
        // Our readers agree with the independent decoder.
        EXPECT_EQ(aclprofGetModelId(data.data(), data.size(), i), id);
        EXPECT_EQ(aclprofGetOpStart(data.data(), data.size(), i), d.start);
        EXPECT_EQ(aclprofGetOpEnd(data.data(), data.size(), i), d.end);
        EXPECT_EQ(aclprofGetOpDuration(data.data(), data.size(), i), d.duration);
        EXPECT_EQ(aclprofGetOpFlag(data.data(), data.size(), i), ACL_SUBSCRIBE_OP);
        const char *tid = aclprofGetOpAttriValue(data.data(), data.size(), i, ACL_SUBSCRIBE_ATTRI_THREADID);
        ASSERT_NE(tid, nullptr);
        EXPECT_EQ(std::string(tid), std::to_string(d.thread_id));
        size_t tlen = 0, nlen = 0;
        ASSERT_EQ(aclprofGetOpTypeLen(data.data(), data.size(), i, &tlen), ACL_SUCCESS) << RecentErrMsg();
        ASSERT_EQ(aclprofGetOpNameLen(data.data(), data.size(), i, &nlen), ACL_SUCCESS) << RecentErrMsg();
        char type[ACL_PROF_MAX_OP_TYPE_LEN] = {}, name[ACL_PROF_MAX_OP_NAME_LEN] = {};
        ASSERT_EQ(aclprofGetOpType(data.data(), data.size(), i, type, sizeof type), ACL_SUCCESS) << RecentErrMsg();
        ASSERT_EQ(aclprofGetOpName(data.data(), data.size(), i, name, sizeof name), ACL_SUCCESS) << RecentErrMsg();
        EXPECT_EQ(strlen(type) + 1, tlen);
        EXPECT_EQ(strlen(name) + 1, nlen);
        EXPECT_TRUE(kOpTypes.count(type)) << type;
        // The model's node names (test_mdl_util.h names nodes "<op>_<output>").
        EXPECT_EQ(std::string(name).rfind(std::string(type) + "_", 0), 0u) << name;
        ++types[type];
        // Each string can be read once.
        EXPECT_EQ(aclprofGetOpType(data.data(), data.size(), i, type, sizeof type), ACL_ERROR_INVALID_PARAM);
        EXPECT_TRUE(Contains(RecentErrMsg(), "read already")) << RecentErrMsg();
        EXPECT_EQ(aclprofGetOpNameLen(data.data(), data.size(), i, &nlen), ACL_ERROR_INVALID_PARAM);
    }
    for (const std::string &t : kOpTypes) EXPECT_EQ(types[t], kRuns) << t;
}

TEST_F(ProfTest, StringBufferLengthRules) {
    const uint32_t id = Load();
    Io io;
    Pipe p;
    int wfd = p.w;
    aclprofSubscribeConfig *cfg = aclprofCreateSubscribeConfig(0, ACL_AICORE_ARITHMETIC_UTILIZATION, &wfd);
    ASSERT_NE(cfg, nullptr) << RecentErrMsg();
    ASSERT_EQ(aclprofModelSubscribe(id, cfg), ACL_SUCCESS) << RecentErrMsg();
    p.TakeWrite();
    PipeReader reader(p.r);
    Execute(id, io);
    ASSERT_EQ(aclprofModelUnSubscribe(id), ACL_SUCCESS);
    reader.Join();
    aclprofDestroySubscribeConfig(cfg);
    const std::string &d = reader.data();
    ASSERT_EQ(d.size(), kNodes * 80);
    // timeInfoSwitch 0: no times.
    EXPECT_EQ(aclprofGetOpStart(d.data(), d.size(), 0), 0u);
    EXPECT_EQ(aclprofGetOpEnd(d.data(), d.size(), 0), 0u);
    for (uint32_t i = 0; i < kNodes; ++i) {
        size_t len = 0;
        ASSERT_EQ(aclprofGetOpNameLen(d.data(), d.size(), i, &len), ACL_SUCCESS);
        const size_t slen = len - 1;
        std::vector<char> buf(len + 8, 'X');
        // Shorter than the string: refused, not consumed.
        EXPECT_EQ(aclprofGetOpName(d.data(), d.size(), i, buf.data(), slen - 1), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclprofGetOpName(d.data(), d.size(), i, buf.data(), 0), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclprofGetOpName(d.data(), d.size(), i, nullptr, len), ACL_ERROR_INVALID_PARAM);
        // Exactly strlen: truncated by one character, and consumed.
        ASSERT_EQ(aclprofGetOpName(d.data(), d.size(), i, buf.data(), slen), ACL_SUCCESS) << RecentErrMsg();
        EXPECT_EQ(strlen(buf.data()), slen - 1);
        EXPECT_EQ(buf[slen], 'X') << "wrote past the given length";
        EXPECT_EQ(aclprofGetOpName(d.data(), d.size(), i, buf.data(), len), ACL_ERROR_INVALID_PARAM);
        // The type is independent of the name.
        char type[ACL_PROF_MAX_OP_TYPE_LEN];
        ASSERT_EQ(aclprofGetOpType(d.data(), d.size(), i, type, sizeof type), ACL_SUCCESS);
        EXPECT_TRUE(kOpTypes.count(type)) << type;
    }
}

TEST(ProfReaders, ValidateBuffers) {
    // Valid records made by hand with the documented signature.
    unsigned char recs[160] = {};
    for (int r = 0; r < 2; ++r) {
        unsigned char *rec = recs + r * 80;
        uint32_t model = 7;
        uint64_t start = 100, end = 150, dur = 50;
        std::memcpy(rec + 4, &model, 4);
        std::memcpy(rec + 24, &dur, 8);
        std::memcpy(rec + 32, &start, 8);
        std::memcpy(rec + 40, &end, 8);
        uint32_t sig = Crc32cRegister(rec + 4, 76, 0xFFFFFFFFu);
        std::memcpy(rec, &sig, 4);
    }
    uint32_t num = 0;
    EXPECT_EQ(aclprofGetOpNum(recs, 160, &num), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(num, 2u);
    EXPECT_EQ(aclprofGetModelId(recs, 160, 1), 7u);
    EXPECT_EQ(aclprofGetOpDuration(recs, 160, 1), 50u);
    // Strings of records not produced in this process are not there.
    size_t len = 0;
    EXPECT_EQ(aclprofGetOpTypeLen(recs, 160, 0, &len), ACL_ERROR_INVALID_PARAM);
    // Lengths that are not whole records.
    EXPECT_EQ(aclprofGetOpNum(recs, 159, &num), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "aclprofGetOpNum")) << RecentErrMsg();
    EXPECT_EQ(aclprofGetOpNum(recs, 0, &num), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofGetOpNum(nullptr, 80, &num), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofGetOpNum(recs, 80, nullptr), ACL_ERROR_INVALID_PARAM);
    // Index out of range.
    EXPECT_EQ(aclprofGetOpStart(recs, 160, 2), 0u);
    EXPECT_EQ(aclprofGetModelId(recs, 160, 2), static_cast<size_t>(ACL_ERROR_INVALID_PARAM));
    EXPECT_EQ(aclprofGetOpFlag(recs, 160, 2), ACL_SUBSCRIBE_NONE);
    EXPECT_EQ(aclprofGetOpAttriValue(recs, 160, 2, ACL_SUBSCRIBE_ATTRI_THREADID), nullptr);
    EXPECT_EQ(aclprofGetOpAttriValue(recs, 160, 0, ACL_SUBSCRIBE_ATTRI_NONE), nullptr);
    // One bad signature anywhere fails every reader, even for another index.
    recs[80 + 30] ^= 1;
    EXPECT_EQ(aclprofGetOpNum(recs, 160, &num), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "signature")) << RecentErrMsg();
    EXPECT_EQ(aclprofGetModelId(recs, 160, 0), static_cast<size_t>(ACL_ERROR_INVALID_PARAM));
    EXPECT_EQ(aclprofGetOpEnd(recs, 160, 0), 0u);
    EXPECT_EQ(aclprofGetOpNum(recs, 80, &num), ACL_SUCCESS);  // the first record alone is fine
}

TEST_F(ProfTest, SubscribeConfigValidation) {
    Pipe p;
    int bad = -1;
    EXPECT_EQ(aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, nullptr), nullptr);
    EXPECT_EQ(aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &bad), nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "fd -1")) << RecentErrMsg();
    EXPECT_EQ(aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p.r), nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "read-only")) << RecentErrMsg();
    EXPECT_EQ(aclprofCreateSubscribeConfig(2, ACL_AICORE_NONE, &p.w), nullptr);
    EXPECT_EQ(aclprofCreateSubscribeConfig(1, static_cast<aclprofAicoreMetrics>(9), &p.w), nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "aicoreMetrics 9")) << RecentErrMsg();
    EXPECT_EQ(aclprofDestroySubscribeConfig(nullptr), ACL_ERROR_INVALID_PARAM);
    aclprofSubscribeConfig *cfg = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p.w);
    ASSERT_NE(cfg, nullptr);
    EXPECT_EQ(aclprofDestroySubscribeConfig(cfg), ACL_SUCCESS);
    EXPECT_EQ(aclprofDestroySubscribeConfig(cfg), ACL_ERROR_INVALID_PARAM);  // destroyed twice
}

TEST_F(ProfTest, SubscriptionOrderingErrors) {
    Pipe p;
    aclprofSubscribeConfig *cfg = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p.w);
    ASSERT_NE(cfg, nullptr);
    // Before load: no such model.
    EXPECT_EQ(aclprofModelSubscribe(12345, cfg), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_TRUE(Contains(RecentErrMsg(), "12345")) << RecentErrMsg();
    EXPECT_EQ(aclprofModelUnSubscribe(12345), ACL_ERROR_INVALID_MODEL_ID);
    const uint32_t id = Load();
    EXPECT_EQ(aclprofModelUnSubscribe(id), ACL_ERROR_INVALID_MODEL_ID);
    EXPECT_TRUE(Contains(RecentErrMsg(), "not subscribed")) << RecentErrMsg();
    EXPECT_EQ(aclprofModelSubscribe(id, nullptr), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclprofModelSubscribe(id, cfg), ACL_SUCCESS) << RecentErrMsg();
    const int wfd = p.TakeWrite();
    EXPECT_EQ(aclprofModelSubscribe(id, cfg), ACL_ERROR_PROF_REPEAT_SUBSCRIBE);
    // Mixing with the collection API.
    TempDir dir;
    EXPECT_EQ(aclprofInit(dir.path().c_str(), dir.path().size()), ACL_ERROR_PROF_API_CONFLICT);
    EXPECT_TRUE(Contains(RecentErrMsg(), "subscribed")) << RecentErrMsg();
    // A second model on the same pipe shares it; the pipe closes at the last unsubscribe.
    const uint32_t id2 = Load();
    ASSERT_EQ(aclprofModelSubscribe(id2, cfg), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclprofModelUnSubscribe(id), ACL_SUCCESS);
    EXPECT_NE(fcntl(wfd, F_GETFD), -1) << "closed while another model still writes to it";
    Io io;
    Execute(id2, io);
    EXPECT_EQ(aclprofModelUnSubscribe(id2), ACL_SUCCESS);
    std::string got;
    char buf[800];
    ssize_t n;
    while ((n = read(p.r, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
    EXPECT_EQ(n, 0) << "EOF after the last unsubscribe";
    EXPECT_EQ(got.size(), kNodes * 80);
    EXPECT_EQ(aclprofModelUnSubscribe(id2), ACL_ERROR_INVALID_MODEL_ID);  // twice
    // The config's fd is closed now: subscribing with it again is refused.
    EXPECT_EQ(aclprofModelSubscribe(id2, cfg), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "no longer open")) << RecentErrMsg();
    EXPECT_EQ(aclprofDestroySubscribeConfig(cfg), ACL_SUCCESS);
    // The other way round: after aclprofInit, subscribing conflicts.
    Pipe p2;
    aclprofSubscribeConfig *cfg2 = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p2.w);
    ASSERT_EQ(aclprofInit(dir.path().c_str(), dir.path().size()), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclprofModelSubscribe(id2, cfg2), ACL_ERROR_PROF_API_CONFLICT);
    EXPECT_TRUE(Contains(RecentErrMsg(), "aclprofFinalize")) << RecentErrMsg();
    EXPECT_EQ(aclprofFinalize(), ACL_SUCCESS);
    EXPECT_EQ(aclprofModelSubscribe(id2, cfg2), ACL_SUCCESS) << RecentErrMsg();
    p2.TakeWrite();
    EXPECT_EQ(aclprofModelUnSubscribe(id2), ACL_SUCCESS);
    EXPECT_EQ(aclprofDestroySubscribeConfig(cfg2), ACL_SUCCESS);
}

TEST(ProfNoInit, SubscribeNeedsAclInit) {
    EXPECT_EQ(aclprofModelSubscribe(1, nullptr), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclprofModelUnSubscribe(1), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclprofInit("/tmp", 4), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclprofFinalize(), ACL_ERROR_UNINITIALIZE);
}

/* A pipe nobody reads: executions never block; records beyond the queue are
 * dropped, counted and reported; unsubscribe returns within the flush timeout
 * and still closes the pipe. */
TEST(ProfBackpressure, PipeNeverReadDoesNotBlock) {
    // A queue larger than the pipe (2000 records > 64 KiB): the writer fills
    // the pipe and then waits for a reader that never comes.
    ScopedEnv queue("OPENACL_PROF_SUBSCRIBE_QUEUE", "2000");
    ScopedEnv timeout("OPENACL_PROF_FLUSH_TIMEOUT_MS", "300");
    ScopedEnv log("OPENACL_LOG", "warning");
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    {
        const std::string onnx = mdltest::AddReluOnnx();
        uint32_t id = 0;
        ASSERT_EQ(aclmdlLoadFromMem(onnx.data(), onnx.size(), &id), ACL_SUCCESS) << RecentErrMsg();
        Io io;
        Pipe p;
        aclprofSubscribeConfig *cfg = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p.w);
        ASSERT_NE(cfg, nullptr);
        ASSERT_EQ(aclprofModelSubscribe(id, cfg), ACL_SUCCESS);
        p.TakeWrite();
        // 4 nodes x 2000 runs = 8000 records = 640000 bytes: ten times what a
        // pipe holds (64 KiB), four times the queue.
        constexpr int kRuns = 2000;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kRuns; ++i) ASSERT_EQ(aclmdlExecute(id, io.in, io.out), ACL_SUCCESS);
        const double exec_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        EXPECT_LT(exec_s, 30.0);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the writer blocks on the full pipe
        testing::internal::CaptureStderr();
        const auto t1 = std::chrono::steady_clock::now();
        ASSERT_EQ(aclprofModelUnSubscribe(id), ACL_SUCCESS);
        const double unsub_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
        const std::string err = testing::internal::GetCapturedStderr();
        EXPECT_LT(unsub_s, 5.0) << "unsubscribe waits at most the flush timeout";
        EXPECT_GE(unsub_s, 0.25) << "unsubscribe gives the reader the flush timeout (300 ms)";
        std::fprintf(stderr, "executions %.3f s, unsubscribe %.3f s; %s", exec_s, unsub_s, err.c_str());
        // The records that made it are whole and valid; EOF follows them.
        std::string got;
        char buf[4096];
        ssize_t n;
        while ((n = read(p.r, buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(n));
        EXPECT_EQ(n, 0);
        ASSERT_EQ(got.size() % 80, 0u);
        const size_t written = got.size() / 80;
        EXPECT_GT(written, 0u);
        EXPECT_LE(written, 65536u / 80) << "no more than the pipe holds";
        uint32_t num = 0;
        EXPECT_EQ(aclprofGetOpNum(got.data(), got.size(), &num), ACL_SUCCESS);
        // "... N record(s) dropped ... W written" and N + W = all.
        const size_t at = err.find(" record(s) dropped");
        ASSERT_NE(at, std::string::npos) << err;
        size_t b = at;
        while (b > 0 && isdigit(static_cast<unsigned char>(err[b - 1]))) --b;
        const unsigned long long dropped = std::stoull(err.substr(b, at - b));
        EXPECT_EQ(dropped + written, static_cast<unsigned long long>(kRuns) * kNodes) << err;
        EXPECT_TRUE(Contains(err, std::to_string(written) + " written")) << err;
        aclprofDestroySubscribeConfig(cfg);
        EXPECT_EQ(aclmdlUnload(id), ACL_SUCCESS);
    }
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

/* The reader closes its end mid-way: no SIGPIPE, execution goes on. */
TEST_F(ProfTest, ReaderGoneDoesNotKillTheProcess) {
    const uint32_t id = Load();
    Io io;
    Pipe p;
    aclprofSubscribeConfig *cfg = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p.w);
    ASSERT_EQ(aclprofModelSubscribe(id, cfg), ACL_SUCCESS);
    p.TakeWrite();
    close(p.r);
    p.r = -1;
    for (int i = 0; i < 50; ++i) Execute(id, io);
    EXPECT_EQ(aclprofModelUnSubscribe(id), ACL_SUCCESS);
    EXPECT_EQ(aclprofDestroySubscribeConfig(cfg), ACL_SUCCESS);
}

/* aclFinalize ends subscriptions: the reader sees EOF. */
TEST(ProfFinalize, FinalizeClosesSubscriptions) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    const std::string onnx = mdltest::AddReluOnnx();
    uint32_t id = 0;
    ASSERT_EQ(aclmdlLoadFromMem(onnx.data(), onnx.size(), &id), ACL_SUCCESS);
    Pipe p;
    aclprofSubscribeConfig *cfg = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p.w);
    ASSERT_EQ(aclprofModelSubscribe(id, cfg), ACL_SUCCESS);
    p.TakeWrite();
    {
        Io io;
        ASSERT_EQ(aclmdlExecute(id, io.in, io.out), ACL_SUCCESS);
    }
    PipeReader reader(p.r);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    reader.Join();
    EXPECT_EQ(reader.data().size(), kNodes * 80);
    aclprofDestroySubscribeConfig(cfg);
}

/* ------------------------------------------------------------------ collection to files */

/* The single PROF_* folder under root. */
std::string ProfFolder(const std::string &root) {
    std::vector<std::string> found;
    DIR *d = opendir(root.c_str());
    if (d != nullptr) {
        while (dirent *e = readdir(d))
            if (std::string(e->d_name).rfind("PROF_", 0) == 0) found.push_back(root + "/" + e->d_name);
        closedir(d);
    }
    EXPECT_EQ(found.size(), 1u) << root;
    return found.empty() ? "" : found[0];
}

std::string FindFile(const std::string &root, const std::string &prefix) {
    for (const std::string &f : ListFiles(root)) {
        const std::string base = f.substr(f.rfind('/') + 1);
        if (base.rfind(prefix, 0) == 0) return root + "/" + f;
    }
    ADD_FAILURE() << "no " << prefix << "* under " << root;
    return "";
}

const std::vector<std::string> kOpSummaryColumns = {
    "Model Name", "Model ID", "Task ID", "Stream ID", "Infer ID", "Op Name", "OP Type", "Task Type",
    "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Dim", "Input Shapes",
    "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types", "Output Formats"};

/* Trace viewers need the complete events of one row (pid, tid) nested or
 * disjoint. */
void ExpectRowsNest(const nlohmann::json &events) {
    std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> rows;
    for (const auto &e : events)
        if (e["ph"] == "X")
            rows[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].push_back(
                {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()});
    for (auto &[row, slices] : rows) {
        std::sort(slices.begin(), slices.end(), [](auto &a, auto &b) {
            return a.first < b.first || (a.first == b.first && a.second > b.second);
        });
        std::vector<double> open;  // ends of the enclosing slices
        for (const auto &[begin, end] : slices) {
            while (!open.empty() && open.back() <= begin + 1e-3) open.pop_back();
            if (!open.empty()) {
                EXPECT_LE(end, open.back() + 1e-3)
                    << "row " << row.first << "/" << row.second << ": slice [" << begin << ", " << end
                    << "] overlaps its neighbour ending at " << open.back();
            }
            open.push_back(end);
        }
    }
}

/* Checks a msprof_*.json against the trace-event format; returns its events. */
nlohmann::json CheckTrace(const std::string &path) {
    nlohmann::json doc = nlohmann::json::parse(ReadAll(path), nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << path << " is not JSON";
    if (doc.is_discarded()) return nlohmann::json::array();
    EXPECT_TRUE(doc.is_object());
    EXPECT_TRUE(doc.contains("traceEvents") && doc["traceEvents"].is_array());
    EXPECT_EQ(doc["otherData"]["schema"], "openacl-prof-1");
    for (const auto &e : doc["traceEvents"]) {
        EXPECT_TRUE(e.contains("ph") && e["ph"].is_string()) << e;
        EXPECT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e;
        EXPECT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e;
        EXPECT_TRUE(e.contains("name") && e["name"].is_string()) << e;
        const std::string ph = e["ph"];
        EXPECT_TRUE(ph == "X" || ph == "M" || ph == "i" || ph == "b" || ph == "e") << e;
        if (ph == "X") {
            EXPECT_TRUE(e["ts"].is_number()) << e;
            EXPECT_TRUE(e["dur"].is_number() && e["dur"].get<double>() >= 0) << e;
        } else if (ph == "i") {
            EXPECT_TRUE(e["ts"].is_number()) << e;
            EXPECT_EQ(e["s"], "t") << e;
        } else if (ph == "b" || ph == "e") {
            EXPECT_TRUE(e["ts"].is_number() && e["id"].is_number_integer() && e.contains("cat")) << e;
        } else {
            const std::string n = e["name"];
            EXPECT_TRUE(n == "process_name" || n == "thread_name" || n == "process_sort_index") << e;
            EXPECT_TRUE(e["args"].is_object()) << e;
        }
    }
    ExpectRowsNest(doc["traceEvents"]);
    return doc["traceEvents"];
}

TEST_F(ProfTest, CollectionWritesCsvAndTrace) {
    TempDir dir;
    const uint32_t id = Load();
    Io io;
    ASSERT_EQ(aclprofInit(dir.path().c_str(), dir.path().size()), ACL_SUCCESS) << RecentErrMsg();
    uint32_t devices[] = {0};
    aclprofConfig *cfg = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, nullptr,
                                             ACL_PROF_ACL_API | ACL_PROF_TASK_TIME);
    ASSERT_NE(cfg, nullptr) << RecentErrMsg();
    ASSERT_EQ(aclprofStart(cfg), ACL_SUCCESS) << RecentErrMsg();
    constexpr int kRuns = 3;
    for (int i = 0; i < kRuns; ++i) Execute(id, io);
    aclrtStream stream = nullptr;
    ASSERT_EQ(aclrtCreateStream(&stream), ACL_SUCCESS);
    ASSERT_EQ(aclmdlExecuteAsync(id, io.in, io.out, stream), ACL_SUCCESS);
    float host[6];
    ASSERT_EQ(aclrtMemcpyAsync(host, sizeof host, io.y, 24, ACL_MEMCPY_DEVICE_TO_HOST, stream), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(stream), ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyStream(stream), ACL_SUCCESS);
    ASSERT_EQ(aclprofStop(cfg), ACL_SUCCESS) << RecentErrMsg();
    // After stop nothing more is recorded.
    Execute(id, io);
    ASSERT_EQ(aclprofDestroyConfig(cfg), ACL_SUCCESS);
    ASSERT_EQ(aclprofFinalize(), ACL_SUCCESS);

    const std::string prof = ProfFolder(dir.path());
    ASSERT_FALSE(prof.empty());
    const std::vector<std::string> files = ListFiles(prof);
    ASSERT_EQ(files.size(), 4u) << ::testing::PrintToString(files);
    EXPECT_EQ(files[0], "device_0/summary/op_statistic_0_1.csv");
    EXPECT_EQ(files[1], "device_0/summary/op_summary_0_1.csv");
    EXPECT_EQ(files[2], "host/summary/api_statistic_1.csv");
    EXPECT_EQ(files[3].rfind("timeline/msprof_", 0), 0u) << files[3];

    // op_summary: CANN's columns, one row per executed node (4 syncs + 1 async).
    Table ops = LoadTable(prof + "/" + files[1]);
    ASSERT_GE(ops.header.size(), kOpSummaryColumns.size());
    for (size_t i = 0; i < kOpSummaryColumns.size(); ++i) EXPECT_EQ(ops.header[i], kOpSummaryColumns[i]);
    ASSERT_EQ(ops.rows.size(), kNodes * (kRuns + 1));
    std::map<std::string, int> per_type;
    std::set<std::string> streams;
    for (const auto &r : ops.rows) {
        EXPECT_EQ(r.at("Model Name"), "addrelu");
        EXPECT_EQ(r.at("Model ID"), std::to_string(id));
        EXPECT_TRUE(kOpTypes.count(r.at("OP Type"))) << r.at("OP Type");
        ++per_type[r.at("OP Type")];
        EXPECT_EQ(r.at("Op Name").rfind(r.at("OP Type") + "_", 0), 0u);
        EXPECT_GE(std::stod(r.at("Task Duration(us)")), 0.0);
        EXPECT_EQ(r.at("Input Data Types").substr(0, 5), "FLOAT");
        EXPECT_EQ(r.at("Output Shapes"), "2,3");
        EXPECT_EQ(r.at("Output Formats"), "ND");
        EXPECT_EQ(r.at("aicore_time(us)"), "N/A");
        streams.insert(r.at("Stream ID"));
    }
    EXPECT_EQ(streams, (std::set<std::string>{"0", "1"})) << "default stream and one created stream";
    for (const std::string &t : kOpTypes) EXPECT_EQ(per_type[t], kRuns + 1) << t;
    // Add's inputs: x [2,3] and the weight [2,3].
    for (const auto &r : ops.rows) {
        if (r.at("OP Type") == "Add") {
            EXPECT_EQ(r.at("Input Shapes"), "2,3;2,3");
        }
    }
    std::set<std::string> infer_ids;
    for (const auto &r : ops.rows) infer_ids.insert(r.at("Infer ID"));
    EXPECT_EQ(infer_ids.size(), static_cast<size_t>(kRuns + 1));

    // op_statistic: per type, counts and a ratio summing to 100.
    Table stat = LoadTable(prof + "/" + files[0]);
    EXPECT_EQ(stat.header, (std::vector<std::string>{"OP Type", "Core Type", "Count", "Total Time(us)",
                                                     "Min Time(us)", "Avg Time(us)", "Max Time(us)", "Ratio(%)"}));
    ASSERT_EQ(stat.rows.size(), kOpTypes.size());
    double ratio = 0;
    for (const auto &r : stat.rows) {
        EXPECT_EQ(r.at("Count"), std::to_string(kRuns + 1));
        EXPECT_LE(std::stod(r.at("Min Time(us)")), std::stod(r.at("Avg Time(us)")) + 1e-3);
        EXPECT_LE(std::stod(r.at("Avg Time(us)")), std::stod(r.at("Max Time(us)")) + 1e-3);
        ratio += std::stod(r.at("Ratio(%)"));
    }
    EXPECT_NEAR(ratio, 100.0, 0.05);

    // api_statistic: the calls made while collecting.
    Table api = LoadTable(prof + "/" + files[2]);
    std::map<std::string, std::map<std::string, std::string>> by_api;
    for (const auto &r : api.rows) by_api[r.at("API Name")] = r;
    ASSERT_TRUE(by_api.count("aclmdlExecute"));
    EXPECT_EQ(by_api["aclmdlExecute"]["Count"], std::to_string(kRuns));
    EXPECT_EQ(by_api["aclmdlExecuteAsync"]["Count"], "1");
    EXPECT_EQ(by_api["aclrtMemcpyAsync"]["Count"], "1");
    EXPECT_EQ(by_api["aclrtCreateStream"]["Count"], "1");
    EXPECT_FALSE(by_api.count("aclprofStart")) << "collection starts after the call's trace point";
    for (const char *col : {"Time(us)", "Count", "Avg(us)", "Min(us)", "Max(us)", "Variance"})
        EXPECT_TRUE(std::find(api.header.begin(), api.header.end(), col) != api.header.end()) << col;

    // The timeline: valid, an API row, one row per stream, and op slices that
    // match the CSV rows (same start and duration).
    nlohmann::json events = CheckTrace(prof + "/" + files[3]);
    std::map<std::string, std::pair<double, double>> slices;  // "<infer>/<task>" -> ts, dur
    int api_slices = 0, model_slices = 0, copy_slices = 0;
    std::set<std::string> device_rows;
    for (const auto &e : events) {
        if (e["ph"] != "X") continue;
        const std::string cat = e["cat"];
        if (cat == "AscendCL") ++api_slices;
        if (cat == "model") ++model_slices;
        if (cat == "memcpy") {
            ++copy_slices;
            EXPECT_EQ(e["args"]["Bytes"], 24);
            EXPECT_EQ(e["args"]["Kind"], "MEMCPY_DEVICE_TO_HOST");
        }
        if (cat == "op") {
            slices[std::to_string(e["args"]["Infer ID"].get<uint64_t>()) + "/" +
                   std::to_string(e["args"]["Task ID"].get<uint32_t>())] = {e["ts"], e["dur"]};
        }
    }
    EXPECT_GT(api_slices, kRuns);
    EXPECT_EQ(model_slices, kRuns + 1);
    EXPECT_EQ(copy_slices, 1);
    for (const auto &e : events)
        if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"].get<int64_t>() >= 1000000)
            device_rows.insert(e["args"]["name"].get<std::string>().substr(0, 20));
    EXPECT_EQ(device_rows, (std::set<std::string>{"Stream 0 (default), ", "Stream 1"}));
    ASSERT_EQ(slices.size(), ops.rows.size());
    for (const auto &r : ops.rows) {
        auto it = slices.find(r.at("Infer ID") + "/" + r.at("Task ID"));
        ASSERT_NE(it, slices.end());
        EXPECT_NEAR(it->second.first, std::stod(r.at("Task Start Time(us)")), 0.002);
        EXPECT_NEAR(it->second.second, std::stod(r.at("Task Duration(us)")), 0.002);
    }
}

/* Executions from several threads: every node of every execution is recorded
 * once, in the subscription and in the files, and each thread's
 * default-stream work gets its own timeline row. */
TEST_F(ProfTest, ConcurrentExecutions) {
    const uint32_t id = Load();
    constexpr int kThreads = 4, kRuns = 25;
    auto run_all = [&] {
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&] {
                aclrtContext ctx = nullptr;
                ASSERT_EQ(aclrtCreateContext(&ctx, 0), ACL_SUCCESS);
                {
                    Io io;
                    for (int i = 0; i < kRuns; ++i) ASSERT_EQ(aclmdlExecute(id, io.in, io.out), ACL_SUCCESS);
                }
                EXPECT_EQ(aclrtDestroyContext(ctx), ACL_SUCCESS);
            });
        for (auto &t : threads) t.join();
    };
    // Subscription.
    Pipe p;
    aclprofSubscribeConfig *cfg = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p.w);
    ASSERT_EQ(aclprofModelSubscribe(id, cfg), ACL_SUCCESS);
    p.TakeWrite();
    PipeReader reader(p.r);
    run_all();
    ASSERT_EQ(aclprofModelUnSubscribe(id), ACL_SUCCESS);
    reader.Join();
    aclprofDestroySubscribeConfig(cfg);
    ASSERT_EQ(reader.data().size(), kNodes * kThreads * kRuns * 80);
    std::set<uint32_t> threads;
    for (size_t i = 0; i < reader.data().size(); i += 80) {
        Decoded d = Decode(reinterpret_cast<const unsigned char *>(reader.data().data()) + i);
        EXPECT_TRUE(d.signature_ok);
        threads.insert(d.thread_id);
    }
    EXPECT_EQ(threads.size(), static_cast<size_t>(kThreads));
    // Collection.
    TempDir dir;
    ASSERT_EQ(aclprofInit(dir.path().c_str(), dir.path().size()), ACL_SUCCESS);
    uint32_t devices[] = {0};
    aclprofConfig *pc = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_ACL_API | ACL_PROF_TASK_TIME);
    ASSERT_EQ(aclprofStart(pc), ACL_SUCCESS);
    run_all();
    ASSERT_EQ(aclprofStop(pc), ACL_SUCCESS);
    aclprofDestroyConfig(pc);
    ASSERT_EQ(aclprofFinalize(), ACL_SUCCESS);
    const std::string prof = ProfFolder(dir.path());
    Table ops = LoadTable(FindFile(prof, "op_summary_"));
    EXPECT_EQ(ops.rows.size(), kNodes * kThreads * kRuns);
    std::set<std::string> infer;
    for (const auto &r : ops.rows) infer.insert(r.at("Infer ID"));
    EXPECT_EQ(infer.size(), static_cast<size_t>(kThreads * kRuns));
    nlohmann::json events = CheckTrace(FindFile(prof, "msprof_"));  // rows nest
    int rows = 0;
    for (const auto &e : events)
        if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"].get<int64_t>() >= 1000000) ++rows;
    EXPECT_EQ(rows, kThreads);
}

/* The dump and a collection watch the same executions (one fan-out observer). */
TEST_F(ProfTest, DumpAndCollectionTogether) {
    TempDir dump_dir, prof_dir;
    const uint32_t id = Load();
    ASSERT_EQ(aclmdlInitDump(), ACL_SUCCESS);
    TempFile dump_cfg("{\"dump\": {\"dump_path\": \"" + dump_dir.path() +
                      "\", \"dump_list\": [{\"model_name\": \"addrelu\"}]}}");
    ASSERT_EQ(aclmdlSetDump(dump_cfg.path()), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclprofInit(prof_dir.path().c_str(), prof_dir.path().size()), ACL_SUCCESS);
    uint32_t devices[] = {0};
    aclprofConfig *pc = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME);
    ASSERT_EQ(aclprofStart(pc), ACL_SUCCESS);
    {
        Io io;
        Execute(id, io);
    }
    ASSERT_EQ(aclprofStop(pc), ACL_SUCCESS);
    aclprofDestroyConfig(pc);
    ASSERT_EQ(aclprofFinalize(), ACL_SUCCESS);
    ASSERT_EQ(aclmdlFinalizeDump(), ACL_SUCCESS);
    size_t npy = 0;
    for (const std::string &f : ListFiles(dump_dir.path())) npy += f.size() > 4 && f.substr(f.size() - 4) == ".npy";
    EXPECT_EQ(npy, kNodes) << "one output tensor per node dumped";
    Table ops = LoadTable(FindFile(ProfFolder(prof_dir.path()), "op_summary_"));
    EXPECT_EQ(ops.rows.size(), kNodes);
}

/* msproftx: marks, push/pop and start/stop ranges on the timeline. */
TEST_F(ProfTest, MsprofTxAnnotations) {
    const uint32_t id = Load();
    void *stamp = aclprofCreateStamp();
    ASSERT_NE(stamp, nullptr);
    EXPECT_EQ(aclprofSetStampTraceMessage(stamp, "preprocess-and-more", 10), ACL_SUCCESS);  // "preprocess"
    EXPECT_EQ(aclprofSetStampTraceMessage(stamp, nullptr, 3), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofSetStampTraceMessage(stamp, "x", 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofSetStampTraceMessage(nullptr, "x", 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofMark(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofPop(), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "aclprofPush")) << RecentErrMsg();
    EXPECT_EQ(aclprofRangeStop(424242), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofRangeStart(stamp, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofMarkEx(nullptr, 3, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofMark(stamp), ACL_SUCCESS);  // outside a collection: nothing recorded
    TempDir dir;
    ASSERT_EQ(aclprofInit(dir.path().c_str(), dir.path().size()), ACL_SUCCESS);
    uint32_t devices[] = {0};
    aclprofConfig *pc = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, nullptr,
                                            ACL_PROF_MSPROFTX | ACL_PROF_TASK_TIME);
    ASSERT_EQ(aclprofStart(pc), ACL_SUCCESS);
    EXPECT_EQ(aclprofMark(stamp), ACL_SUCCESS);
    EXPECT_EQ(aclprofMarkEx("hello stream", 5, nullptr), ACL_SUCCESS);  // "hello"
    uint32_t range = 0;
    ASSERT_EQ(aclprofRangeStart(stamp, &range), ACL_SUCCESS);
    EXPECT_GE(range, 1u);
    ASSERT_EQ(aclprofPush(stamp), ACL_SUCCESS);
    {
        Io io;
        Execute(id, io);
    }
    ASSERT_EQ(aclprofPop(), ACL_SUCCESS);
    std::thread([&] { EXPECT_EQ(aclprofRangeStop(range), ACL_SUCCESS); }).join();  // another thread
    EXPECT_EQ(aclprofRangeStop(range), ACL_ERROR_INVALID_PARAM);  // stopped already
    ASSERT_EQ(aclprofStop(pc), ACL_SUCCESS);
    aclprofDestroyConfig(pc);
    ASSERT_EQ(aclprofFinalize(), ACL_SUCCESS);
    aclprofDestroyStamp(stamp);
    aclprofDestroyStamp(stamp);  // twice: ignored, with a message
    EXPECT_TRUE(Contains(RecentErrMsg(), "not a live stamp")) << RecentErrMsg();

    nlohmann::json events = CheckTrace(FindFile(ProfFolder(dir.path()), "msprof_"));
    std::vector<std::string> instants;
    double pushed_begin = -1, pushed_end = -1, op_begin = -1, op_end = -1;
    int begins = 0, ends = 0;
    for (const auto &e : events) {
        if (e["ph"] == "i") instants.push_back(e["name"]);
        if (e["ph"] == "X" && e["cat"] == "msproftx") {
            EXPECT_EQ(e["name"], "preprocess");
            pushed_begin = e["ts"];
            pushed_end = pushed_begin + e["dur"].get<double>();
        }
        if (e["ph"] == "X" && e["cat"] == "op" && op_begin < 0) {
            op_begin = e["ts"];
            op_end = op_begin + e["dur"].get<double>();
        }
        if ((e["ph"] == "b" || e["ph"] == "e") && e["id"] == range) {
            EXPECT_EQ(e["name"], "preprocess");
            begins += e["ph"] == "b";
            ends += e["ph"] == "e";
        }
    }
    EXPECT_EQ(instants, (std::vector<std::string>{"preprocess", "hello"}));
    EXPECT_EQ(begins, 1);
    EXPECT_EQ(ends, 1);
    ASSERT_GE(op_begin, 0);
    EXPECT_LE(pushed_begin, op_begin) << "the push/pop range encloses the execution it wraps";
    EXPECT_GE(pushed_end, op_end);
}

/* Step info: one "Step n" range per START/END pair while collecting. */
TEST_F(ProfTest, StepInfo) {
    aclprofStepInfo *step = aclprofCreateStepInfo();
    ASSERT_NE(step, nullptr);
    EXPECT_EQ(aclprofGetStepTimestamp(step, ACL_STEP_END, nullptr), ACL_ERROR_INVALID_PARAM);  // not started
    EXPECT_EQ(raw_aclprofGetStepTimestamp(step, 2, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofGetStepTimestamp(nullptr, ACL_STEP_START, nullptr), ACL_ERROR_INVALID_PARAM);
    TempDir dir;
    ASSERT_EQ(aclprofInit(dir.path().c_str(), dir.path().size()), ACL_SUCCESS);
    uint32_t devices[] = {0};
    aclprofConfig *pc = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME);
    ASSERT_EQ(aclprofStart(pc), ACL_SUCCESS);
    for (int i = 0; i < 2; ++i) {
        ASSERT_EQ(aclprofGetStepTimestamp(step, ACL_STEP_START, nullptr), ACL_SUCCESS);
        EXPECT_EQ(aclprofGetStepTimestamp(step, ACL_STEP_START, nullptr), ACL_ERROR_INVALID_PARAM);
        ASSERT_EQ(aclprofGetStepTimestamp(step, ACL_STEP_END, nullptr), ACL_SUCCESS);
    }
    ASSERT_EQ(aclprofStop(pc), ACL_SUCCESS);
    aclprofDestroyConfig(pc);
    ASSERT_EQ(aclprofFinalize(), ACL_SUCCESS);
    aclprofDestroyStepInfo(step);
    nlohmann::json events = CheckTrace(FindFile(ProfFolder(dir.path()), "msprof_"));
    std::map<std::string, int> steps;
    for (const auto &e : events)
        if (e["ph"] == "b") ++steps[e["name"].get<std::string>().substr(0, 5)];
    EXPECT_EQ(steps["Step "], 2);
}

TEST_F(ProfTest, CollectionOrderingErrors) {
    TempDir dir;
    uint32_t devices[] = {0};
    aclprofConfig *cfg = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME);
    ASSERT_NE(cfg, nullptr) << RecentErrMsg();
    EXPECT_EQ(aclprofStart(cfg), ACL_ERROR_PROF_NOT_RUN);
    EXPECT_TRUE(Contains(RecentErrMsg(), "aclprofInit")) << RecentErrMsg();
    EXPECT_EQ(aclprofStop(cfg), ACL_ERROR_PROF_NOT_RUN);
    EXPECT_EQ(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
    EXPECT_EQ(aclprofInit(nullptr, 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofInit(dir.path().c_str(), 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofInit(dir.path().c_str(), 4097), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclprofInit(dir.path().c_str(), dir.path().size()), ACL_SUCCESS);
    EXPECT_EQ(aclprofInit(dir.path().c_str(), dir.path().size()), ACL_ERROR_REPEAT_INITIALIZE);
    EXPECT_EQ(aclprofStop(cfg), ACL_ERROR_PROF_NOT_RUN);  // not started
    EXPECT_TRUE(Contains(RecentErrMsg(), "not being profiled")) << RecentErrMsg();
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "250MB", 5), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_STORAGE_LIMIT, "100MB", 5), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_LLC_MODE, "read", 4), ACL_SUCCESS);
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_LLC_MODE, "fast", 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_HOST_SYS, "cpu,mem", 7), ACL_SUCCESS);
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_HOST_SYS, "cpu,gpu", 7), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_SYS_IO_FREQ, "101", 3), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofSetConfig(static_cast<aclprofConfigType>(2), "1", 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofSetConfig(static_cast<aclprofConfigType>(17), "1", 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_SYS_IO_FREQ, nullptr, 3), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_SYS_IO_FREQ, "10", 0), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclprofStart(cfg), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclprofStart(cfg), ACL_ERROR_PROF_ALREADY_RUN);
    EXPECT_TRUE(Contains(RecentErrMsg(), "device 0")) << RecentErrMsg();
    EXPECT_EQ(aclprofSetConfig(ACL_PROF_SYS_IO_FREQ, "10", 2), ACL_ERROR_PROF_ALREADY_RUN);
    // Subscription conflicts while a collection is set up.
    const uint32_t id = Load();
    Pipe p;
    aclprofSubscribeConfig *sub = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p.w);
    EXPECT_EQ(aclprofModelSubscribe(id, sub), ACL_ERROR_PROF_API_CONFLICT);
    aclprofDestroySubscribeConfig(sub);
    ASSERT_EQ(aclprofStop(cfg), ACL_SUCCESS);
    EXPECT_EQ(aclprofStop(cfg), ACL_ERROR_PROF_NOT_RUN);
    // Finalize without stop writes what runs.
    ASSERT_EQ(aclprofStart(cfg), ACL_SUCCESS);
    EXPECT_EQ(aclprofFinalize(), ACL_SUCCESS);
    EXPECT_EQ(aclprofDestroyConfig(cfg), ACL_SUCCESS);
    EXPECT_EQ(aclprofDestroyConfig(cfg), ACL_ERROR_INVALID_PARAM);
    std::vector<std::string> folders;
    for (const std::string &f : ListFiles(dir.path()))
        if (f.find("op_summary_") != std::string::npos) folders.push_back(f);
    EXPECT_EQ(folders.size(), 2u) << "one PROF_* folder per stop (and the finalize)";
}

TEST_F(ProfTest, CreateConfigValidation) {
    uint32_t good[] = {0};
    uint32_t bad[] = {99};
    uint32_t twice[] = {0, 0};
    EXPECT_EQ(aclprofCreateConfig(nullptr, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
    EXPECT_EQ(aclprofCreateConfig(good, 0, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
    EXPECT_EQ(aclprofCreateConfig(bad, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "99")) << RecentErrMsg();
    EXPECT_EQ(aclprofCreateConfig(twice, 2, ACL_AICORE_NONE, nullptr, ACL_PROF_TASK_TIME), nullptr);
    EXPECT_EQ(aclprofCreateConfig(good, 1, static_cast<aclprofAicoreMetrics>(42), nullptr, ACL_PROF_TASK_TIME),
              nullptr);
    EXPECT_EQ(aclprofCreateConfig(good, 1, ACL_AICORE_NONE, nullptr, 0x10000000000ull), nullptr);
    EXPECT_TRUE(Contains(RecentErrMsg(), "unknown bits")) << RecentErrMsg();
    EXPECT_EQ(aclprofDestroyConfig(nullptr), ACL_ERROR_INVALID_PARAM);
    aclprofConfig *cfg = aclprofCreateConfig(good, 1, ACL_AICORE_PIPE_UTILIZATION, nullptr,
                                             ACL_PROF_ACL_API | ACL_PROF_AICORE_SHAPE | ACL_PROF_API_STATS);
    ASSERT_NE(cfg, nullptr) << RecentErrMsg();
    EXPECT_EQ(aclprofDestroyConfig(cfg), ACL_SUCCESS);
}

/* acl.json's profiler section collects from aclInit to aclFinalize. */
TEST(ProfAclJson, ProfilerSectionWritesAtFinalize) {
    TempDir dir;
    TempFile json("{\"profiler\": {\"switch\": \"on\", \"output\": \"" + dir.path() + "/out\"}}");
    ASSERT_EQ(aclInit(json.path()), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    const std::string onnx = mdltest::AddReluOnnx();
    uint32_t id = 0;
    ASSERT_EQ(aclmdlLoadFromMem(onnx.data(), onnx.size(), &id), ACL_SUCCESS);
    {
        Io io;
        ASSERT_EQ(aclmdlExecute(id, io.in, io.out), ACL_SUCCESS);
        ASSERT_EQ(aclmdlExecute(id, io.in, io.out), ACL_SUCCESS);
    }
    EXPECT_EQ(aclprofInit(dir.path().c_str(), dir.path().size()), ACL_ERROR_PROF_ALREADY_RUN);
    EXPECT_EQ(aclprofFinalize(), ACL_ERROR_PROF_NOT_RUN);
    Pipe p;
    aclprofSubscribeConfig *sub = aclprofCreateSubscribeConfig(1, ACL_AICORE_NONE, &p.w);
    EXPECT_EQ(aclprofModelSubscribe(id, sub), ACL_ERROR_PROF_API_CONFLICT);
    EXPECT_TRUE(Contains(RecentErrMsg(), "acl.json")) << RecentErrMsg();
    aclprofDestroySubscribeConfig(sub);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    const std::string prof = ProfFolder(dir.path() + "/out");
    ASSERT_FALSE(prof.empty());
    Table ops = LoadTable(FindFile(prof, "op_summary_"));
    EXPECT_EQ(ops.rows.size(), 2 * kNodes);
    Table api = LoadTable(FindFile(prof, "api_statistic_"));
    bool saw_load = false;
    for (const auto &r : api.rows) saw_load = saw_load || r.at("API Name") == "aclmdlLoadFromMem";
    EXPECT_TRUE(saw_load);
    CheckTrace(FindFile(prof, "msprof_"));
}

TEST(ProfAclJson, UnwritableOutputFailsInit) {
    TempFile blocker("x", ".txt");
    TempFile json(std::string("{\"profiler\": {\"switch\": \"on\", \"output\": \"") + blocker.path() + "/sub\"}}");
    EXPECT_EQ(aclInit(json.path()), ACL_ERROR_INVALID_PROFILING_CONFIG);
    EXPECT_TRUE(Contains(RecentErrMsg(), "profiler.output")) << RecentErrMsg();
    // aclInit was undone: a plain one works.
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

}  // namespace
