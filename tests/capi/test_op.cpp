/*
 * The single-operator API (acl_op.h, acl_op_compiler.h): attributes, execute /
 * execute V2 on streams, handles, cast, shape inference, the op cache, compile
 * options and the custom-kernel entry points. Contract: include/acl/acl_op.h;
 * spec/pyacl-api.md §4.4, §8 (100020-100026, 148048, 200001).
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl_op_compiler.h"
#include "test_util.h"

namespace {

using acltest::AclTest;
using acltest::BogusPointer;
using acltest::Contains;
using acltest::DeviceTest;
using acltest::Gate;
using acltest::RecentErrMsg;
using acltest::TempFile;

/* A desc destroyed at scope exit. */
class Desc {
 public:
    Desc(aclDataType t, std::vector<int64_t> dims, aclFormat f = ACL_FORMAT_ND)
        : d_(aclCreateTensorDesc(t, static_cast<int>(dims.size()), dims.data(), f)) {
        EXPECT_NE(d_, nullptr) << RecentErrMsg();
    }
    ~Desc() { aclDestroyTensorDesc(d_); }
    Desc(const Desc &) = delete;
    Desc &operator=(const Desc &) = delete;
    aclTensorDesc *get() const { return d_; }

 private:
    aclTensorDesc *d_;
};

/* Device memory plus its data buffer. */
class Dev {
 public:
    explicit Dev(size_t bytes) : bytes_(bytes) {
        EXPECT_EQ(aclrtMalloc(&p_, std::max<size_t>(bytes, 1), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        b_ = aclCreateDataBuffer(p_, bytes);
    }
    template <class T>
    explicit Dev(const std::vector<T> &host) : Dev(host.size() * sizeof(T)) {
        Write(host);
    }
    ~Dev() {
        aclDestroyDataBuffer(b_);
        aclrtFree(p_);
    }
    Dev(const Dev &) = delete;
    Dev &operator=(const Dev &) = delete;
    template <class T>
    void Write(const std::vector<T> &host) {
        ASSERT_EQ(aclrtMemcpy(p_, bytes_, host.data(), host.size() * sizeof(T), ACL_MEMCPY_HOST_TO_DEVICE),
                  ACL_SUCCESS);
    }
    template <class T>
    std::vector<T> Read(size_t n) const {
        std::vector<T> v(n);
        EXPECT_EQ(aclrtMemcpy(v.data(), n * sizeof(T), p_, n * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
        return v;
    }
    aclDataBuffer *buf() const { return b_; }
    void *ptr() const { return p_; }

 private:
    size_t bytes_;
    void *p_ = nullptr;
    aclDataBuffer *b_ = nullptr;
};

/* An attr destroyed at scope exit. */
class Attr {
 public:
    Attr() : a_(aclopCreateAttr()) { EXPECT_NE(a_, nullptr); }
    ~Attr() { aclopDestroyAttr(a_); }
    Attr(const Attr &) = delete;
    Attr &operator=(const Attr &) = delete;
    aclopAttr *get() const { return a_; }

 private:
    aclopAttr *a_;
};

std::vector<int64_t> Dims(const aclTensorDesc *d) {
    std::vector<int64_t> v;
    const size_t n = aclGetTensorDescNumDims(d);
    for (size_t i = 0; i < n && n != ACL_UNKNOWN_RANK; ++i) {
        int64_t x = 0;
        EXPECT_EQ(aclGetTensorDescDimV2(d, i, &x), ACL_SUCCESS);
        v.push_back(x);
    }
    return v;
}

/* Runs Add(a, b) -> out on stream with aclopExecuteV2; returns the code. */
aclError Add(const Desc &da, const Dev &a, const Desc &db, const Dev &b, const Desc &dc, const Dev &c,
             aclrtStream stream, aclopAttr *attr = nullptr) {
    aclTensorDesc *in_d[] = {da.get(), db.get()};
    aclDataBuffer *in_b[] = {a.buf(), b.buf()};
    aclTensorDesc *out_d[] = {dc.get()};
    aclDataBuffer *out_b[] = {c.buf()};
    return aclopExecuteV2("Add", 2, in_d, in_b, 1, out_d, out_b, attr, stream);
}

bool Registered(const char *type) {
    // infer_shape answers 100024 for types the catalogue lacks, whatever the descs.
    Desc x(ACL_FLOAT, {4});
    Desc y(ACL_FLOAT, {4});
    aclTensorDesc *in[] = {x.get()};
    aclTensorDesc *out[] = {y.get()};
    return aclopInferShape(type, 1, in, nullptr, 1, out, nullptr) != ACL_ERROR_OP_NOT_FOUND;
}

/* ---- attributes ---- */

TEST(OpAttr, EverySetter) {
    Attr a;
    EXPECT_EQ(aclopSetAttrBool(a.get(), "b", 1), ACL_SUCCESS);
    EXPECT_EQ(aclopSetAttrInt(a.get(), "i", -5), ACL_SUCCESS);
    EXPECT_EQ(aclopSetAttrFloat(a.get(), "f", 0.5f), ACL_SUCCESS);
    EXPECT_EQ(aclopSetAttrString(a.get(), "s", "SAME"), ACL_SUCCESS);
    EXPECT_EQ(aclopSetAttrDataType(a.get(), "t", ACL_FLOAT16), ACL_SUCCESS);
    const aclDataType types[] = {ACL_FLOAT, ACL_INT32};
    EXPECT_EQ(aclopSetAttrListDataType(a.get(), "lt", 2, types), ACL_SUCCESS);
    const uint8_t bools[] = {1, 0, 1};
    EXPECT_EQ(aclopSetAttrListBool(a.get(), "lb", 3, bools), ACL_SUCCESS);
    const int64_t ints[] = {1, 2, 3};
    EXPECT_EQ(aclopSetAttrListInt(a.get(), "li", 3, ints), ACL_SUCCESS);
    const float floats[] = {1.5f};
    EXPECT_EQ(aclopSetAttrListFloat(a.get(), "lf", 1, floats), ACL_SUCCESS);
    const char *strs[] = {"a", "bc"};
    EXPECT_EQ(aclopSetAttrListString(a.get(), "ls", 2, strs), ACL_SUCCESS);
    const int64_t l0[] = {1, 2}, l1[] = {3};
    const int64_t *lists[] = {l0, l1};
    const int counts[] = {2, 1};  // inner lengths may differ
    EXPECT_EQ(aclopSetAttrListListInt(a.get(), "ll", 2, counts, lists), ACL_SUCCESS);
    EXPECT_EQ(aclopSetAttrListInt(a.get(), "empty", 0, nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclopSetAttrInt(a.get(), "i", 7), ACL_SUCCESS);  // replaced
}

TEST(OpAttr, BadArgumentsAreRefused) {
    Attr a;
    EXPECT_EQ(aclopSetAttrInt(nullptr, "i", 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "attr is NULL")) << RecentErrMsg();
    EXPECT_EQ(aclopSetAttrInt(static_cast<aclopAttr *>(BogusPointer()), "i", 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "unknown or already destroyed")) << RecentErrMsg();
    EXPECT_EQ(aclopSetAttrInt(a.get(), nullptr, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopSetAttrString(a.get(), "s", nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopSetAttrListInt(a.get(), "li", -1, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopSetAttrListInt(a.get(), "li", 2, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopSetAttrDataType(a.get(), "t", static_cast<aclDataType>(999)), ACL_ERROR_INVALID_PARAM);
    const char *strs[] = {"a", nullptr};
    EXPECT_EQ(aclopSetAttrListString(a.get(), "ls", 2, strs), ACL_ERROR_INVALID_PARAM);
    const int counts[] = {-1};
    const int64_t *lists[] = {nullptr};
    EXPECT_EQ(aclopSetAttrListListInt(a.get(), "ll", 1, counts, lists), ACL_ERROR_INVALID_PARAM);

    aclopAttr *gone = aclopCreateAttr();
    aclopDestroyAttr(gone);
    EXPECT_EQ(aclopSetAttrBool(gone, "b", 1), ACL_ERROR_INVALID_PARAM);
    aclopDestroyAttr(nullptr);  // like free(NULL)
}

/* ---- before aclInit ---- */

TEST(OpNoInit, CallsNeedInit) {
    ASSERT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    float x = 0;
    const int64_t dims[] = {1};
    aclTensorDesc *d = aclCreateTensorDesc(ACL_FLOAT, 1, dims, ACL_FORMAT_ND);
    aclDataBuffer *b = aclCreateDataBuffer(&x, sizeof x);
    aclTensorDesc *in_d[] = {d, d};
    aclDataBuffer *in_b[] = {b, b};
    aclTensorDesc *out_d[] = {d};
    aclDataBuffer *out_b[] = {b};
    EXPECT_EQ(aclopExecuteV2("Add", 2, in_d, in_b, 1, out_d, out_b, nullptr, nullptr), ACL_ERROR_UNINITIALIZE);
    aclopHandle *h = nullptr;
    EXPECT_EQ(aclopCreateHandle("Add", 2, in_d, 1, out_d, nullptr, &h), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(h, nullptr);
    EXPECT_EQ(aclopInferShape("Add", 2, in_d, in_b, 1, out_d, nullptr), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclopCast(d, b, d, b, 0, nullptr), ACL_ERROR_UNINITIALIZE);
    aclDestroyDataBuffer(b);
    aclDestroyTensorDesc(d);
}

/* ---- execution ---- */

class Op : public DeviceTest {
 protected:
    void SetUp() override {
        DeviceTest::SetUp();
        if (HasFatalFailure()) return;
        ASSERT_EQ(aclrtCreateStream(&stream_), ACL_SUCCESS);
    }
    void TearDown() override {
        if (stream_) aclrtDestroyStream(stream_);
        DeviceTest::TearDown();
    }
    aclrtStream stream_ = nullptr;
};

TEST_F(Op, AddOnAStream) {
    Desc d(ACL_FLOAT, {2, 3});
    Dev a(std::vector<float>{1, 2, 3, 4, 5, 6}), b(std::vector<float>{10, 20, 30, 40, 50, 60}), c(6 * sizeof(float));
    ASSERT_EQ(Add(d, a, d, b, d, c, stream_), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(c.Read<float>(6), (std::vector<float>{11, 22, 33, 44, 55, 66}));
    EXPECT_EQ(Dims(d.get()), (std::vector<int64_t>{2, 3}));  // static output desc unchanged

    // aclopExecute (deprecated form) and the default stream.
    const aclTensorDesc *in_d[] = {d.get(), d.get()};
    const aclDataBuffer *in_b[] = {a.buf(), a.buf()};
    const aclTensorDesc *out_d[] = {d.get()};
    aclDataBuffer *out_b[] = {c.buf()};
    ASSERT_EQ(aclopExecute("Add", 2, in_d, in_b, 1, out_d, out_b, nullptr, nullptr), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
    EXPECT_EQ(c.Read<float>(6), (std::vector<float>{2, 4, 6, 8, 10, 12}));
}

TEST_F(Op, BroadcastAndInferShape) {
    Desc da(ACL_FLOAT, {2, 3}), db(ACL_FLOAT, {3});
    Desc probe(ACL_DT_UNDEFINED, {}, ACL_FORMAT_ND);
    aclTensorDesc *in[] = {da.get(), db.get()};
    aclTensorDesc *out[] = {probe.get()};
    ASSERT_EQ(aclopInferShape("Add", 2, in, nullptr, 1, out, nullptr), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(aclGetTensorDescType(probe.get()), ACL_FLOAT);
    EXPECT_EQ(Dims(probe.get()), (std::vector<int64_t>{2, 3}));

    Desc dc(ACL_FLOAT, {2, 3});
    Dev a(std::vector<float>{1, 2, 3, 4, 5, 6}), b(std::vector<float>{100, 200, 300}), c(6 * sizeof(float));
    ASSERT_EQ(Add(da, a, db, b, dc, c, stream_), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(c.Read<float>(6), (std::vector<float>{101, 202, 303, 104, 205, 306}));
}

TEST_F(Op, UnknownTypeSuggestsNames) {
    Desc d(ACL_FLOAT, {4});
    Dev a(16);
    aclTensorDesc *in_d[] = {d.get(), d.get()};
    aclDataBuffer *in_b[] = {a.buf(), a.buf()};
    aclTensorDesc *out_d[] = {d.get()};
    aclDataBuffer *out_b[] = {a.buf()};
    EXPECT_EQ(aclopExecuteV2("Addd", 2, in_d, in_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_OP_NOT_FOUND);
    const std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "'Addd'")) << msg;
    EXPECT_TRUE(Contains(msg, "did you mean Add")) << msg;
    EXPECT_EQ(aclopInferShape("Castt", 1, in_d, nullptr, 1, out_d, nullptr), ACL_ERROR_OP_NOT_FOUND);
    EXPECT_TRUE(Contains(RecentErrMsg(), "did you mean Cast")) << RecentErrMsg();
}

TEST_F(Op, BadCallsAreRefused) {
    Desc d(ACL_FLOAT, {4});
    Dev a(16);
    aclTensorDesc *in_d[] = {d.get(), d.get()};
    aclDataBuffer *in_b[] = {a.buf(), a.buf()};
    aclTensorDesc *out_d[] = {d.get()};
    aclDataBuffer *out_b[] = {a.buf()};
    EXPECT_EQ(aclopExecuteV2(nullptr, 2, in_d, in_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopExecuteV2("Add", -1, in_d, in_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopExecuteV2("Add", 2, nullptr, in_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_INVALID_PARAM);
    // Wrong input count.
    EXPECT_EQ(aclopExecuteV2("Add", 1, in_d, in_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_OP_INPUT_NOT_MATCH)
        << RecentErrMsg();
    EXPECT_TRUE(Contains(RecentErrMsg(), "Add")) << RecentErrMsg();
    // NULL and bogus descs, NULL buffer.
    aclTensorDesc *null_d[] = {d.get(), nullptr};
    EXPECT_EQ(aclopExecuteV2("Add", 2, null_d, in_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "input 1")) << RecentErrMsg();
    aclTensorDesc *bogus_d[] = {d.get(), static_cast<aclTensorDesc *>(BogusPointer())};
    EXPECT_EQ(aclopExecuteV2("Add", 2, bogus_d, in_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_INVALID_PARAM);
    aclDataBuffer *null_b[] = {a.buf(), nullptr};
    EXPECT_EQ(aclopExecuteV2("Add", 2, in_d, null_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_INVALID_PARAM);
    // Bogus attr and stream.
    EXPECT_EQ(aclopExecuteV2("Add", 2, in_d, in_b, 1, out_d, out_b, static_cast<aclopAttr *>(BogusPointer()),
                             stream_),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_NE(aclopExecuteV2("Add", 2, in_d, in_b, 1, out_d, out_b, nullptr, BogusPointer()), ACL_SUCCESS);
    // An input desc without the real shape.
    Desc unknown(ACL_FLOAT, {-1});
    aclTensorDesc *unk_d[] = {d.get(), unknown.get()};
    EXPECT_EQ(aclopExecuteV2("Add", 2, unk_d, in_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_OP_INPUT_NOT_MATCH);
    EXPECT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);  // nothing failed was queued
}

TEST_F(Op, DtypeMismatchIsRefused) {
    Desc df(ACL_FLOAT, {4}), di(ACL_INT32, {4});
    Dev a(16), b(16), c(16);
    const aclError r = Add(df, a, di, b, df, c, stream_);
    EXPECT_TRUE(r == ACL_ERROR_OP_INPUT_NOT_MATCH || r == ACL_ERROR_UNSUPPORTED_DATA_TYPE) << r << " " << RecentErrMsg();
    EXPECT_TRUE(Contains(RecentErrMsg(), "Add")) << RecentErrMsg();
}

TEST_F(Op, OutputBufferTooSmallWritesNothing) {
    Desc d(ACL_FLOAT, {4});
    Dev a(std::vector<float>{1, 2, 3, 4});
    Dev small(std::vector<float>{-7, -7, -7});  // 12 bytes for a 16-byte output
    aclTensorDesc *in_d[] = {d.get(), d.get()};
    aclDataBuffer *in_b[] = {a.buf(), a.buf()};
    aclTensorDesc *out_d[] = {d.get()};
    aclDataBuffer *out_b[] = {small.buf()};
    EXPECT_EQ(aclopExecuteV2("Add", 2, in_d, in_b, 1, out_d, out_b, nullptr, stream_), ACL_ERROR_OP_OUTPUT_NOT_MATCH);
    const std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "16 bytes")) << msg;
    EXPECT_TRUE(Contains(msg, "12 bytes")) << msg;
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    EXPECT_EQ(small.Read<float>(3), (std::vector<float>{-7, -7, -7}));
    // An input buffer too small: 100021.
    aclDataBuffer *small_in[] = {a.buf(), small.buf()};
    Dev c(16);
    aclDataBuffer *out_ok[] = {c.buf()};
    EXPECT_EQ(aclopExecuteV2("Add", 2, in_d, small_in, 1, out_d, out_ok, nullptr, stream_),
              ACL_ERROR_OP_INPUT_NOT_MATCH);
    // A buffer claiming more than its allocation: the memory registry refuses it.
    aclDataBuffer *liar = aclCreateDataBuffer(small.ptr(), 4096);
    aclDataBuffer *out_liar[] = {liar};
    EXPECT_EQ(aclopExecuteV2("Add", 2, in_d, in_b, 1, out_d, out_liar, nullptr, stream_), ACL_ERROR_INVALID_PARAM);
    EXPECT_TRUE(Contains(RecentErrMsg(), "output 0 of Add")) << RecentErrMsg();
    aclDestroyDataBuffer(liar);
}

TEST_F(Op, AsyncOrderingOnAStream) {
    Desc d(ACL_FLOAT, {4});
    Dev a(std::vector<float>{1, 2, 3, 4}), b(std::vector<float>{0, 0, 0, 0}), c(std::vector<float>{0, 0, 0, 0});
    Gate gate;
    ASSERT_TRUE(gate.Launch(stream_));
    ASSERT_TRUE(gate.entered.WaitFor(5000));
    ASSERT_EQ(Add(d, a, d, a, d, b, stream_), ACL_SUCCESS) << RecentErrMsg();  // b = 2a
    ASSERT_EQ(Add(d, b, d, a, d, c, stream_), ACL_SUCCESS) << RecentErrMsg();  // c = b + a = 3a
    // Queued behind the gate: nothing ran yet.
    EXPECT_EQ(c.Read<float>(4), (std::vector<float>{0, 0, 0, 0}));
    gate.Open();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(c.Read<float>(4), (std::vector<float>{3, 6, 9, 12}));
}

TEST_F(Op, DescsAndAttrMayGoOnceQueued) {
    Dev a(std::vector<float>{1, 2}), c(8);
    Gate gate;
    ASSERT_TRUE(gate.Launch(stream_));
    {
        Desc d(ACL_FLOAT, {2});
        Attr attr;
        ASSERT_EQ(Add(d, a, d, a, d, c, stream_, attr.get()), ACL_SUCCESS) << RecentErrMsg();
    }  // descs and attr destroyed before the op runs
    gate.Open();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(c.Read<float>(2), (std::vector<float>{2, 4}));
}

TEST_F(Op, Handles) {
    Desc d(ACL_FLOAT, {3});
    Dev a(std::vector<float>{1, 2, 3}), c(12);
    aclopHandle *h = nullptr;
    {
        Desc d2(ACL_FLOAT, {3});
        const aclTensorDesc *in_d[] = {d.get(), d2.get()};
        const aclTensorDesc *out_d[] = {d.get()};
        ASSERT_EQ(aclopCreateHandle("Add", 2, in_d, 1, out_d, nullptr, &h), ACL_SUCCESS) << RecentErrMsg();
        ASSERT_NE(h, nullptr);
    }  // the handle does not need its descs
    const aclDataBuffer *in_b[] = {a.buf(), a.buf()};
    aclDataBuffer *out_b[] = {c.buf()};
    ASSERT_EQ(aclopExecWithHandle(h, 2, in_b, 1, out_b, stream_), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    EXPECT_EQ(c.Read<float>(3), (std::vector<float>{2, 4, 6}));
    EXPECT_EQ(aclopExecWithHandle(h, 1, in_b, 1, out_b, stream_), ACL_ERROR_OP_INPUT_NOT_MATCH);
    EXPECT_EQ(aclopExecWithHandle(h, 2, in_b, 0, out_b, stream_), ACL_ERROR_OP_OUTPUT_NOT_MATCH);
    EXPECT_EQ(aclopExecWithHandle(nullptr, 2, in_b, 1, out_b, stream_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopExecWithHandle(static_cast<aclopHandle *>(BogusPointer()), 2, in_b, 1, out_b, stream_),
              ACL_ERROR_INVALID_PARAM);
    aclopDestroyHandle(h);
    EXPECT_EQ(aclopExecWithHandle(h, 2, in_b, 1, out_b, stream_), ACL_ERROR_INVALID_PARAM);
    aclopDestroyHandle(nullptr);
    EXPECT_EQ(aclopCreateHandle("Add", 0, nullptr, 0, nullptr, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    // A handle runs without descs: its inputs need their real shapes.
    Desc unknown(ACL_FLOAT, {-1});
    const aclTensorDesc *dyn_d[] = {unknown.get(), unknown.get()};
    const aclTensorDesc *dyn_out[] = {unknown.get()};
    aclopHandle *dyn = nullptr;
    EXPECT_EQ(aclopCreateHandle("Add", 2, dyn_d, 1, dyn_out, nullptr, &dyn), ACL_ERROR_OP_INPUT_NOT_MATCH);
    EXPECT_EQ(dyn, nullptr);
}

TEST_F(Op, HandleRefusedAfterItsDeviceWasReset) {
    Desc d(ACL_FLOAT, {2});
    const aclTensorDesc *in_d[] = {d.get(), d.get()};
    const aclTensorDesc *out_d[] = {d.get()};
    aclopHandle *h = nullptr;
    ASSERT_EQ(aclopCreateHandle("Add", 2, in_d, 1, out_d, nullptr, &h), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtDestroyStream(stream_), ACL_SUCCESS);
    stream_ = nullptr;
    ASSERT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    Dev a(std::vector<float>{1, 2}), c(8);
    const aclDataBuffer *in_b[] = {a.buf(), a.buf()};
    aclDataBuffer *out_b[] = {c.buf()};
    EXPECT_EQ(aclopExecWithHandle(h, 2, in_b, 1, out_b, nullptr), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_TRUE(Contains(RecentErrMsg(), "create it again")) << RecentErrMsg();
    aclopDestroyHandle(h);
    // The cached op compiled under the old context is recompiled, not reused.
    Desc dd(ACL_FLOAT, {2});
    aclTensorDesc *in2[] = {dd.get(), dd.get()};
    aclDataBuffer *inb2[] = {a.buf(), a.buf()};
    aclTensorDesc *out2[] = {dd.get()};
    ASSERT_EQ(aclopExecuteV2("Add", 2, in2, inb2, 1, out2, out_b, nullptr, nullptr), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(c.Read<float>(2), (std::vector<float>{2, 4}));
}

TEST_F(Op, CastAndItsHandle) {
    Desc src(ACL_FLOAT, {3}), dst(ACL_FLOAT16, {3});
    Dev a(std::vector<float>{1.5f, -2.0f, 1024.0f}), c(6);
    ASSERT_EQ(aclopCast(src.get(), a.buf(), dst.get(), c.buf(), 0, stream_), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << RecentErrMsg();
    std::vector<aclFloat16> h = c.Read<aclFloat16>(3);
    EXPECT_EQ(aclFloat16ToFloat(h[0]), 1.5f);
    EXPECT_EQ(aclFloat16ToFloat(h[1]), -2.0f);
    EXPECT_EQ(aclFloat16ToFloat(h[2]), 1024.0f);

    aclopHandle *handle = nullptr;
    ASSERT_EQ(aclopCreateHandleForCast(src.get(), dst.get(), 0, &handle), ACL_SUCCESS) << RecentErrMsg();
    Dev c2(6);
    const aclDataBuffer *in_b[] = {a.buf()};
    aclDataBuffer *out_b[] = {c2.buf()};
    ASSERT_EQ(aclopExecWithHandle(handle, 1, in_b, 1, out_b, stream_), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    EXPECT_EQ(aclFloat16ToFloat(c2.Read<aclFloat16>(3)[2]), 1024.0f);
    aclopDestroyHandle(handle);

    EXPECT_EQ(aclopCast(nullptr, a.buf(), dst.get(), c.buf(), 0, stream_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopCast(src.get(), a.buf(), dst.get(), nullptr, 0, stream_), ACL_ERROR_INVALID_PARAM);
    Dev tiny(2);
    EXPECT_EQ(aclopCast(src.get(), a.buf(), dst.get(), tiny.buf(), 0, stream_), ACL_ERROR_OP_OUTPUT_NOT_MATCH);
}

TEST_F(Op, WrongAttrKindIsRefused) {
    Desc src(ACL_FLOAT, {2}), dst(ACL_FLOAT16, {2});
    Dev a(8), c(4);
    Attr attr;
    ASSERT_EQ(aclopSetAttrString(attr.get(), "dst_type", "float16"), ACL_SUCCESS);
    aclTensorDesc *in_d[] = {src.get()};
    aclDataBuffer *in_b[] = {a.buf()};
    aclTensorDesc *out_d[] = {dst.get()};
    aclDataBuffer *out_b[] = {c.buf()};
    EXPECT_EQ(aclopExecuteV2("Cast", 1, in_d, in_b, 1, out_d, out_b, attr.get(), stream_),
              ACL_ERROR_OP_ATTR_NOT_MATCH);
    EXPECT_TRUE(Contains(RecentErrMsg(), "dst_type")) << RecentErrMsg();
}

TEST_F(Op, SmallCacheStillCorrect) {
    ASSERT_EQ(aclopSetMaxOpQueueNum(0), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclopSetMaxOpQueueNum(1), ACL_SUCCESS);
    Desc d2(ACL_FLOAT, {2}), d3(ACL_FLOAT, {3});
    Dev a(std::vector<float>{1, 2, 3}), c(12);
    for (int i = 0; i < 3; ++i) {  // alternating shapes evict each other
        ASSERT_EQ(Add(d2, a, d2, a, d2, c, stream_), ACL_SUCCESS) << RecentErrMsg();
        ASSERT_EQ(Add(d3, a, d3, a, d3, c, stream_), ACL_SUCCESS) << RecentErrMsg();
    }
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(c.Read<float>(3), (std::vector<float>{2, 4, 6}));
    ASSERT_EQ(aclopSetMaxOpQueueNum(20000), ACL_SUCCESS);
}

TEST_F(Op, DataDependentOutputShape) {
    if (!Registered("NonZero")) GTEST_SKIP() << "NonZero is not in the op catalogue (another helper adds it)";
    // NonZero (Ascend, transpose false): y[count, rank] int64 coordinates of the non-zero elements.
    Desc dx(ACL_FLOAT, {2, 3});
    Desc probe(ACL_INT64, {}, ACL_FORMAT_ND);
    aclTensorDesc *in[] = {dx.get()};
    aclTensorDesc *out[] = {probe.get()};
    ASSERT_EQ(aclopInferShape("NonZero", 1, in, nullptr, 1, out, nullptr), ACL_SUCCESS) << RecentErrMsg();
    std::vector<int64_t> dims = Dims(probe.get());
    ASSERT_EQ(dims.size(), 2u);
    std::vector<int64_t> upper = dims;
    for (size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] >= 0) continue;
        int64_t range[2] = {0, 0};
        ASSERT_EQ(aclGetTensorDescDimRange(probe.get(), k, 2, range), ACL_SUCCESS) << RecentErrMsg();
        ASSERT_GE(range[1], 0);
        upper[k] = range[1];
    }
    EXPECT_EQ(upper[0] * upper[1], 2 * 6);
    Dev x(std::vector<float>{0, 1, 0, 2, 0, 3});
    Dev y(static_cast<size_t>(upper[0] * upper[1]) * sizeof(int64_t));
    Desc dy(ACL_INT64, dims);
    aclDataBuffer *in_b[] = {x.buf()};
    aclTensorDesc *out_d[] = {dy.get()};
    aclDataBuffer *out_b[] = {y.buf()};
    ASSERT_EQ(aclopExecuteV2("NonZero", 1, in, in_b, 1, out_d, out_b, nullptr, stream_), ACL_SUCCESS)
        << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(Dims(dy.get()), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(y.Read<int64_t>(6), (std::vector<int64_t>{0, 1, 1, 0, 1, 2}));
}

TEST_F(Op, ThreadsShareCompiledOps) {
    // Several threads, each with its own stream, run the same op (one cache
    // entry) and ops of their own shapes at once.
    aclrtContext ctx = nullptr;
    ASSERT_EQ(aclrtGetCurrentContext(&ctx), ACL_SUCCESS);
    constexpr int kThreads = 4, kRuns = 20;
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            if (aclrtSetCurrentContext(ctx) != ACL_SUCCESS) {
                ++failures;
                return;
            }
            aclrtStream s = nullptr;
            if (aclrtCreateStream(&s) != ACL_SUCCESS) {
                ++failures;
                return;
            }
            const int64_t n = 8 + (t % 2);  // two threads per shape
            std::vector<float> x(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(t * 100 + i);
            {
                Desc d(ACL_FLOAT, {n});
                Dev a(x), c(static_cast<size_t>(n) * sizeof(float));
                for (int r = 0; r < kRuns; ++r)
                    if (Add(d, a, d, a, d, c, s) != ACL_SUCCESS) ++failures;
                if (aclrtSynchronizeStream(s) != ACL_SUCCESS) ++failures;
                std::vector<float> y = c.Read<float>(static_cast<size_t>(n));
                for (int64_t i = 0; i < n; ++i)
                    if (y[static_cast<size_t>(i)] != 2 * x[static_cast<size_t>(i)]) ++failures;
            }
            aclrtDestroyStream(s);
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(failures.load(), 0) << RecentErrMsg();
}

TEST_F(Op, SameOpOnTwoDevices) {
    ASSERT_GE(device_count_, 2u);
    Desc d(ACL_FLOAT, {3});
    Dev a0(std::vector<float>{1, 2, 3}), c0(12);
    ASSERT_EQ(Add(d, a0, d, a0, d, c0, stream_), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    {
        aclrtStream s1 = nullptr;
        ASSERT_EQ(aclrtCreateStream(&s1), ACL_SUCCESS);
        Dev a1(std::vector<float>{4, 5, 6}), c1(12);
        ASSERT_EQ(Add(d, a1, d, a1, d, c1, s1), ACL_SUCCESS) << RecentErrMsg();  // its own entry on device 1
        ASSERT_EQ(aclrtSynchronizeStream(s1), ACL_SUCCESS) << RecentErrMsg();
        EXPECT_EQ(c1.Read<float>(3), (std::vector<float>{8, 10, 12}));
        aclrtDestroyStream(s1);
    }
    ASSERT_EQ(aclrtResetDevice(1), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    // Device 0's entry is untouched by device 1's reset.
    ASSERT_EQ(Add(d, c0, d, a0, d, c0, stream_), ACL_SUCCESS) << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS) << RecentErrMsg();
    EXPECT_EQ(c0.Read<float>(3), (std::vector<float>{3, 6, 9}));
}

TEST_F(Op, CompileAndCompileAndExecute) {
    Desc d(ACL_FLOAT, {2});
    const aclTensorDesc *in_d[] = {d.get(), d.get()};
    const aclTensorDesc *out_d[] = {d.get()};
    EXPECT_EQ(aclopCompile("Add", 2, in_d, 1, out_d, nullptr, ACL_ENGINE_SYS, ACL_COMPILE_SYS, nullptr), ACL_SUCCESS)
        << RecentErrMsg();
    EXPECT_EQ(aclopCompile("Add", 2, in_d, 1, out_d, nullptr, static_cast<aclopEngineType>(9), ACL_COMPILE_SYS,
                           nullptr),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopCompile("Add", 2, in_d, 1, out_d, nullptr, ACL_ENGINE_SYS, static_cast<aclopCompileType>(5),
                           nullptr),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopCompile("Nope", 2, in_d, 1, out_d, nullptr, ACL_ENGINE_SYS, ACL_COMPILE_SYS, nullptr),
              ACL_ERROR_OP_NOT_FOUND);
    EXPECT_EQ(aclopUpdateParams("Add", 2, in_d, 1, out_d, nullptr), ACL_SUCCESS) << RecentErrMsg();

    Dev a(std::vector<float>{1, 2}), c(8);
    const aclDataBuffer *in_b[] = {a.buf(), a.buf()};
    aclDataBuffer *out_b[] = {c.buf()};
    ASSERT_EQ(aclopCompileAndExecute("Add", 2, in_d, in_b, 1, out_d, out_b, nullptr, ACL_ENGINE_SYS, ACL_COMPILE_SYS,
                                     nullptr, stream_),
              ACL_SUCCESS)
        << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    EXPECT_EQ(c.Read<float>(2), (std::vector<float>{2, 4}));
    aclTensorDesc *in_v[] = {d.get(), d.get()};
    aclDataBuffer *inb_v[] = {c.buf(), a.buf()};
    aclTensorDesc *out_v[] = {d.get()};
    ASSERT_EQ(aclopCompileAndExecuteV2("Add", 2, in_v, inb_v, 1, out_v, out_b, nullptr, ACL_ENGINE_AICORE,
                                       ACL_COMPILE_UNREGISTERED, nullptr, stream_),
              ACL_SUCCESS)
        << RecentErrMsg();
    ASSERT_EQ(aclrtSynchronizeStream(stream_), ACL_SUCCESS);
    EXPECT_EQ(c.Read<float>(2), (std::vector<float>{3, 6}));
    EXPECT_EQ(aclopSetCompileFlag(ACL_OP_COMPILE_FUZZ), ACL_SUCCESS);
    EXPECT_EQ(aclopSetCompileFlag(ACL_OP_COMPILE_DEFAULT), ACL_SUCCESS);
    EXPECT_EQ(aclopSetCompileFlag(static_cast<aclOpCompileFlag>(7)), ACL_ERROR_INVALID_PARAM);
}

TEST(OpCompileOpt, StoredAndReported) {
    EXPECT_EQ(aclSetCompileopt(ACL_PRECISION_MODE, "allow_fp32_to_fp16"), ACL_SUCCESS);
    EXPECT_EQ(aclGetCompileoptSize(ACL_PRECISION_MODE), std::strlen("allow_fp32_to_fp16") + 1);
    char buf[64] = {};
    EXPECT_EQ(aclGetCompileopt(ACL_PRECISION_MODE, buf, sizeof buf), ACL_SUCCESS);
    EXPECT_STREQ(buf, "allow_fp32_to_fp16");
    char tiny[4] = {};
    EXPECT_EQ(aclGetCompileopt(ACL_PRECISION_MODE, tiny, sizeof tiny), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclSetCompileopt(static_cast<aclCompileOpt>(99), "x"), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclSetCompileopt(ACL_AICORE_NUM, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclGetCompileoptSize(ACL_OP_DEBUG_OPTION), 0u);
    EXPECT_EQ(aclGetCompileopt(ACL_OP_DEBUG_OPTION, buf, sizeof buf), ACL_ERROR_INVALID_PARAM);
}

TEST(OpCustomKernel, NotSupportedWithAMessage) {
    static char bin[16];
    EXPECT_EQ(aclopCreateKernel("MyOp", "k0", "my_kernel", bin, sizeof bin, ACL_ENGINE_AICORE, nullptr),
              ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_TRUE(Contains(RecentErrMsg(), "NPU")) << RecentErrMsg();
    EXPECT_EQ(aclopCreateKernel(nullptr, "k0", "my_kernel", bin, sizeof bin, ACL_ENGINE_AICORE, nullptr),
              ACL_ERROR_INVALID_PARAM);
    auto fn = [](int, const aclTensorDesc *const[], int, const aclTensorDesc *const[], const aclopAttr *,
                 aclopKernelDesc *) -> aclError { return ACL_SUCCESS; };
    EXPECT_EQ(aclopRegisterCompileFunc("MyOp", fn), ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_EQ(aclopRegisterCompileFunc("MyOp", nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopUnregisterCompileFunc("MyOp"), ACL_ERROR_API_NOT_SUPPORT);
    auto *kd = static_cast<aclopKernelDesc *>(BogusPointer());
    EXPECT_EQ(aclopSetKernelArgs(kd, "k0", 1, bin, sizeof bin), ACL_ERROR_API_NOT_SUPPORT);
    size_t sizes[] = {64};
    EXPECT_EQ(aclopSetKernelWorkspaceSizes(kd, 1, sizes), ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_EQ(aclopSetKernelWorkspaceSizes(kd, 1, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopStartDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS, "/tmp"), ACL_ERROR_API_NOT_SUPPORT);
    EXPECT_EQ(aclopStartDumpArgs(2, "/tmp"), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopStopDumpArgs(ACL_OP_DUMP_OP_AICORE_ARGS), ACL_ERROR_API_NOT_SUPPORT);
}

TEST_F(Op, ModelDirAndLoad) {
    char dir[] = "/tmp/openacl_opdir_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    EXPECT_EQ(aclopSetModelDir(dir), ACL_SUCCESS) << RecentErrMsg();  // empty: nothing to load
    rmdir(dir);
    EXPECT_EQ(aclopSetModelDir("/nonexistent/op_models"), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclopSetModelDir(nullptr), ACL_ERROR_INVALID_PARAM);
    static const char bytes[8] = {1};
    EXPECT_EQ(aclopLoad(bytes, sizeof bytes), ACL_ERROR_OP_LOAD_FAILED);
    EXPECT_EQ(aclopLoad(nullptr, 8), ACL_ERROR_INVALID_PARAM);
}

TEST(OpConfig, MaxOpQueueNumFromAclJson) {
    {
        TempFile json(R"({"max_opqueue_num": "0"})");
        ASSERT_EQ(aclInit(json.path()), ACL_SUCCESS) << RecentErrMsg();
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        Desc d(ACL_FLOAT, {2});
        Dev a(8);
        EXPECT_EQ(Add(d, a, d, a, d, a, nullptr), ACL_ERROR_INVALID_MAX_OPQUEUE_NUM_CONFIG);
        EXPECT_TRUE(Contains(RecentErrMsg(), "max_opqueue_num")) << RecentErrMsg();
    }
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    {
        TempFile json(R"({"max_opqueue_num": 2})");
        ASSERT_EQ(aclInit(json.path()), ACL_SUCCESS) << RecentErrMsg();
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        Desc d(ACL_FLOAT, {2});
        Dev a(std::vector<float>{1, 2}), c(8);
        EXPECT_EQ(Add(d, a, d, a, d, c, nullptr), ACL_SUCCESS) << RecentErrMsg();
        EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
        EXPECT_EQ(c.Read<float>(2), (std::vector<float>{2, 4}));
    }
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
}

}  // namespace
