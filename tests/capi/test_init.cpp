/*
 * aclInit / aclFinalize / aclFinalizeReference, acl.json handling, the environment
 * read at init, the "not initialised" rule for every runtime entry point, and
 * aclGetRecentErrMsg. Contract: docs/runtime.md "Init and acl.json", "Errors and
 * messages"; spec/pyacl-api.md §1, §1.1.
 */
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using acltest::Contains;
using acltest::RecentErrMsg;
using acltest::RunIsolated;
using acltest::ScopedEnv;
using acltest::TempFile;

/* Leaves the library finalised whatever state a test left it in. */
class InitTest : public ::testing::Test {
 protected:
    void TearDown() override {
        while (aclFinalize() == ACL_SUCCESS) {
        }
    }
    /* true when the library answers like an initialised one. */
    static bool Initialised() {
        uint32_t n = 0;
        return aclrtGetDeviceCount(&n) == ACL_SUCCESS;
    }
};

std::string NestedObjects(int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i) s += (i + 1 < depth) ? "{\"k\":" : "{\"k\":1";
    for (int i = 0; i < depth; ++i) s += "}";
    return s;
}

std::string NestedArraysInObject(int arrays) {
    std::string s = "{\"k\":";
    for (int i = 0; i < arrays; ++i) s += "[";
    s += "1";
    for (int i = 0; i < arrays; ++i) s += "]";
    return s + "}";
}

// ---------------------------------------------------------------- init / finalize

TEST_F(InitTest, InitNullThenFinalize) {
    EXPECT_EQ(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_TRUE(Initialised());
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_FALSE(Initialised());
}

TEST_F(InitTest, InitEmptyPathMeansDefaults) {
    EXPECT_EQ(aclInit(""), ACL_SUCCESS);
    EXPECT_TRUE(Initialised());
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST_F(InitTest, FinalizeWithoutInitIsRepeatFinalize) {
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
}

TEST_F(InitTest, FinalizeTwiceIsRepeatFinalize) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
}

TEST_F(InitTest, FinalizeReferenceWithoutInitIsRepeatFinalize) {
    uint64_t n = 77;
    EXPECT_EQ(aclFinalizeReference(&n), ACL_ERROR_REPEAT_FINALIZE);
}

TEST_F(InitTest, InitAfterFinalizeWorksAgain) {
    for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS) << "round " << i;
        EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        ASSERT_EQ(aclFinalize(), ACL_SUCCESS) << "round " << i;
    }
}

TEST_F(InitTest, RepeatInitReturns100002AndCountsReferences) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
    EXPECT_EQ(aclInit(""), ACL_ERROR_REPEAT_INITIALIZE);

    uint64_t n = 99;
    EXPECT_EQ(aclFinalizeReference(&n), ACL_SUCCESS);
    EXPECT_EQ(n, 2u);
    EXPECT_TRUE(Initialised());
    EXPECT_EQ(aclFinalizeReference(&n), ACL_SUCCESS);
    EXPECT_EQ(n, 1u);
    EXPECT_TRUE(Initialised());
    EXPECT_EQ(aclFinalizeReference(&n), ACL_SUCCESS);
    EXPECT_EQ(n, 0u);
    EXPECT_FALSE(Initialised());
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    EXPECT_EQ(aclFinalizeReference(&n), ACL_ERROR_REPEAT_FINALIZE);
}

TEST_F(InitTest, FinalizeDropsEveryReference) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
    EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_FALSE(Initialised());
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
}

TEST_F(InitTest, RepeatInitDoesNotLookAtTheFile) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    // Neither a missing nor a malformed file is read while initialised: 100002, and it counts.
    EXPECT_EQ(aclInit("/nonexistent/openacl/acl.json"), ACL_ERROR_REPEAT_INITIALIZE);
    TempFile bad("{ this is not json");
    EXPECT_EQ(aclInit(bad.path()), ACL_ERROR_REPEAT_INITIALIZE);
    uint64_t n = 0;
    EXPECT_EQ(aclFinalizeReference(&n), ACL_SUCCESS);
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

// ---------------------------------------------------------------- acl.json errors

TEST_F(InitTest, MissingFileIsInvalidFile) {
    EXPECT_EQ(aclInit("/nonexistent/openacl/acl.json"), ACL_ERROR_INVALID_FILE);
    EXPECT_FALSE(Initialised());
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    // A failed init leaves the library usable for a later one.
    EXPECT_EQ(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST_F(InitTest, MissingFileMessageNamesAclInit) {
    ASSERT_EQ(aclInit("/nonexistent/openacl/acl.json"), ACL_ERROR_INVALID_FILE);
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "aclInit")) << msg;
}

TEST_F(InitTest, MalformedJsonIsParseFile) {
    const char *bodies[] = {"{", "{\"a\": }", "not json at all", "[1, 2", "{\"a\": 1,}", "{\"a\" 1}", "}"};
    for (const char *body : bodies) {
        TempFile f(body);
        EXPECT_EQ(aclInit(f.path()), ACL_ERROR_PARSE_FILE) << "content: " << body;
        EXPECT_FALSE(Initialised()) << "content: " << body;
    }
}

TEST_F(InitTest, ObjectsNestedElevenDeepAreRejected) {
    TempFile f(NestedObjects(11));
    EXPECT_EQ(aclInit(f.path()), ACL_ERROR_PARSE_FILE);
    EXPECT_FALSE(Initialised());
}

TEST_F(InitTest, ObjectsNestedFarTooDeepAreRejected) {
    TempFile f(NestedObjects(5000));
    EXPECT_EQ(aclInit(f.path()), ACL_ERROR_PARSE_FILE);
    EXPECT_FALSE(Initialised());
}

TEST_F(InitTest, ArraysNestedElevenDeepAreRejected) {
    TempFile f(NestedArraysInObject(11));
    EXPECT_EQ(aclInit(f.path()), ACL_ERROR_PARSE_FILE);
    EXPECT_FALSE(Initialised());
}

TEST_F(InitTest, ErrMsgModeOtherThan0Or1IsInvalidParam) {
    const char *bodies[] = {R"({"err_msg_mode": "2"})", R"({"err_msg_mode": ""})", R"({"err_msg_mode": "01x"})"};
    for (const char *body : bodies) {
        TempFile f(body);
        EXPECT_EQ(aclInit(f.path()), ACL_ERROR_INVALID_PARAM) << body;
        EXPECT_FALSE(Initialised()) << body;
    }
}

TEST_F(InitTest, DefaultDeviceMustNameAnExistingDevice) {
    const char *bodies[] = {R"({"defaultDevice": {"default_device": "5"}})",
                            R"({"defaultDevice": {"default_device": "-1"}})",
                            R"({"defaultDevice": {"default_device": "zero"}})"};
    ScopedEnv count("OPENACL_DEVICE_COUNT", nullptr);
    for (const char *body : bodies) {
        TempFile f(body);
        EXPECT_EQ(aclInit(f.path()), ACL_ERROR_INVALID_PARAM) << body;
        EXPECT_FALSE(Initialised()) << body;
    }
}

TEST_F(InitTest, EventModeOtherThan0Or1IsInvalidParam) {
    TempFile f(R"({"acl_graph": {"event_mode": "2"}})");
    EXPECT_EQ(aclInit(f.path()), ACL_ERROR_INVALID_PARAM);
    EXPECT_FALSE(Initialised());
}

// ------------------------------------- acl.json accepted (each in its own process)

TEST_F(InitTest, EmptyFileIsAccepted) {
    RunIsolated([] {
        TempFile f("");
        EXPECT_EQ(aclInit(f.path()), ACL_SUCCESS);
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST_F(InitTest, EmptyObjectIsAccepted) {
    RunIsolated([] {
        TempFile f("{}");
        EXPECT_EQ(aclInit(f.path()), ACL_SUCCESS);
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST_F(InitTest, ObjectsNestedTenDeepAreAccepted) {
    RunIsolated([] {
        TempFile f(NestedObjects(10));
        EXPECT_EQ(aclInit(f.path()), ACL_SUCCESS);
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST_F(InitTest, ValidKeysAndUnknownKeysAreAccepted) {
    RunIsolated([] {
        ScopedEnv count("OPENACL_DEVICE_COUNT", nullptr);
        TempFile f(R"({
            "err_msg_mode": "0",
            "defaultDevice": {"default_device": "1"},
            "acl_graph": {"event_mode": "1"},
            "dump": {"dump_path": "/tmp", "dump_list": []},
            "profiler": {"switch": "off"},
            "max_opqueue_num": "10000",
            "some_unknown_key": {"nested": [1, 2, {"x": null}]}
        })");
        EXPECT_EQ(aclInit(f.path()), ACL_SUCCESS);
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST_F(InitTest, OpenaclSectionSetsDeviceCountAndMemory) {
    RunIsolated([] {
        TempFile f(R"({"openacl": {"device_count": 3, "device_memory": "1048576"}})");
        ASSERT_EQ(aclInit(f.path()), ACL_SUCCESS);
        uint32_t n = 0;
        EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
        EXPECT_EQ(n, 3u);
        EXPECT_EQ(aclrtSetDevice(3), ACL_ERROR_RT_INVALID_DEVICEID);
        for (int32_t dev : {0, 2}) {
            ASSERT_EQ(aclrtSetDevice(dev), ACL_SUCCESS);
            size_t free_bytes = 0, total = 0;
            EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total), ACL_SUCCESS);
            EXPECT_EQ(total, 1048576u) << "device " << dev;
            EXPECT_EQ(free_bytes, 1048576u) << "device " << dev;
            // Capacity is honoured: 1 MiB plus the 32-byte padding does not fit.
            void *p = nullptr;
            EXPECT_EQ(aclrtMalloc(&p, 1048576, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
        }
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST_F(InitTest, OpenaclSectionOverridesEnvironment) {
    RunIsolated([] {
        ScopedEnv count("OPENACL_DEVICE_COUNT", "5");
        ScopedEnv soc("OPENACL_SOC_NAME", "Ascend910B1");
        TempFile f(R"({"openacl": {"device_count": 3, "soc_name": "Ascend310B4"}})");
        ASSERT_EQ(aclInit(f.path()), ACL_SUCCESS);
        uint32_t n = 0;
        EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
        EXPECT_EQ(n, 3u);
        const char *name = aclrtGetSocName();
        ASSERT_NE(name, nullptr);
        EXPECT_STREQ(name, "Ascend310B4");
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST_F(InitTest, ReinitAfterFinalizeAppliesTheNewFile) {
    // CANN refuses a second file whose content differs; OpenACL applies it
    // (docs/runtime.md), so one process can try several configurations.
    RunIsolated([] {
        TempFile a(R"({"openacl": {"device_count": 3}})");
        TempFile b(R"({"openacl": {"device_count": 4}})");
        uint32_t n = 0;
        ASSERT_EQ(aclInit(a.path()), ACL_SUCCESS);
        EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
        EXPECT_EQ(n, 3u);
        ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
        ASSERT_EQ(aclInit(b.path()), ACL_SUCCESS);
        EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
        EXPECT_EQ(n, 4u);
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

// ---------------------------------------------------------------- environment

TEST_F(InitTest, DefaultsAreTwoDevicesOf16G) {
    ScopedEnv count("OPENACL_DEVICE_COUNT", nullptr);
    ScopedEnv mem("OPENACL_DEVICE_MEMORY", nullptr);
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    uint32_t n = 0;
    EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    EXPECT_EQ(n, 2u);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    size_t free_bytes = 0, total = 0;
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total), ACL_SUCCESS);
    // docs/runtime.md says "16G" without fixing the unit base; accept 2^34 or 16e9.
    EXPECT_TRUE(total == (size_t{16} << 30) || total == size_t{16000000000}) << total;
    EXPECT_EQ(free_bytes, total);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST_F(InitTest, DeviceCountAndMemoryAreReadAtInitAndHoldUntilFinalize) {
    {
        ScopedEnv count("OPENACL_DEVICE_COUNT", "3");
        ScopedEnv mem("OPENACL_DEVICE_MEMORY", "4096");
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    }
    ScopedEnv count("OPENACL_DEVICE_COUNT", nullptr);
    ScopedEnv mem("OPENACL_DEVICE_MEMORY", nullptr);
    uint32_t n = 0;
    EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    EXPECT_EQ(n, 3u);
    ASSERT_EQ(aclrtSetDevice(2), ACL_SUCCESS);
    size_t free_bytes = 0, total = 0;
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total), ACL_SUCCESS);
    EXPECT_EQ(total, 4096u);
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);

    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(aclrtSetDevice(2), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST_F(InitTest, SocNameFromEnvironment) {
    {
        ScopedEnv soc("OPENACL_SOC_NAME", "Ascend910B1");
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        const char *name = aclrtGetSocName();
        ASSERT_NE(name, nullptr);
        EXPECT_STREQ(name, "Ascend910B1");
        ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    }
    ScopedEnv soc("OPENACL_SOC_NAME", nullptr);
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    const char *name = aclrtGetSocName();
    ASSERT_NE(name, nullptr);
    EXPECT_STREQ(name, "Ascend310P3");
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

// ---------------------------------------------------------------- not initialised

/* Every runtime entry point that needs aclInit, called with otherwise plausible
 * arguments; each must answer want. */
void ExpectAllRuntimeCallsReturn(aclError want) {
    SCOPED_TRACE(testing::Message() << "expected " << want);
    void *bogus = acltest::BogusPointer();
    char host_a[64] = {0};
    char host_b[64] = {0};
    int32_t i32 = 0;
    uint32_t u32 = 0;
    size_t s1 = 0, s2 = 0;
    float ms = 0;
    void *ptr = nullptr;
    aclrtContext ctx = nullptr;
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    aclrtStreamStatus stream_status;
    aclrtEventStatus ev_status;
    aclrtEventRecordedStatus rec_status;
    aclrtEventWaitStatus wait_status;

    EXPECT_EQ(aclrtSetDevice(0), want);
    EXPECT_EQ(aclrtResetDevice(0), want);
    EXPECT_EQ(aclrtResetDeviceForce(0), want);
    EXPECT_EQ(aclrtGetDevice(&i32), want);
    EXPECT_EQ(aclrtGetDeviceCount(&u32), want);
    EXPECT_EQ(aclrtSetTsDevice(ACL_TS_ID_AICORE), want);
    EXPECT_EQ(aclrtSynchronizeDevice(), want);
    EXPECT_EQ(aclrtSynchronizeDeviceWithTimeout(10), want);
    EXPECT_EQ(aclrtDeviceCanAccessPeer(&i32, 0, 1), want);
    EXPECT_EQ(aclrtDeviceEnablePeerAccess(1, 0), want);
    EXPECT_EQ(aclrtDeviceDisablePeerAccess(1), want);

    EXPECT_EQ(aclrtCreateContext(&ctx, 0), want);
    EXPECT_EQ(aclrtDestroyContext(bogus), want);
    EXPECT_EQ(aclrtSetCurrentContext(bogus), want);
    EXPECT_EQ(aclrtGetCurrentContext(&ctx), want);

    EXPECT_EQ(aclrtCreateStream(&stream), want);
    EXPECT_EQ(aclrtCreateStreamWithConfig(&stream, 0, 0), want);
    EXPECT_EQ(aclrtDestroyStream(bogus), want);
    EXPECT_EQ(aclrtDestroyStreamForce(bogus), want);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), want);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(nullptr, 10), want);
    EXPECT_EQ(aclrtStreamQuery(nullptr, &stream_status), want);
    EXPECT_EQ(aclrtStreamWaitEvent(nullptr, bogus), want);

    EXPECT_EQ(aclrtCreateEvent(&event), want);
    EXPECT_EQ(aclrtCreateEventWithFlag(&event, ACL_EVENT_SYNC), want);
    EXPECT_EQ(aclrtCreateEventExWithFlag(&event, ACL_EVENT_SYNC), want);
    EXPECT_EQ(aclrtDestroyEvent(bogus), want);
    EXPECT_EQ(aclrtRecordEvent(bogus, nullptr), want);
    EXPECT_EQ(aclrtResetEvent(bogus, nullptr), want);
    EXPECT_EQ(aclrtQueryEvent(bogus, &ev_status), want);
    EXPECT_EQ(aclrtQueryEventStatus(bogus, &rec_status), want);
    EXPECT_EQ(aclrtQueryEventWaitStatus(bogus, &wait_status), want);
    EXPECT_EQ(aclrtSynchronizeEvent(bogus), want);
    EXPECT_EQ(aclrtSynchronizeEventWithTimeout(bogus, 10), want);
    EXPECT_EQ(aclrtEventElapsedTime(&ms, bogus, bogus), want);
    EXPECT_EQ(aclrtSetOpWaitTimeout(0), want);

    EXPECT_EQ(aclrtMalloc(&ptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), want);
    EXPECT_EQ(aclrtMallocAlign32(&ptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), want);
    EXPECT_EQ(aclrtMallocCached(&ptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), want);
    EXPECT_EQ(aclrtMemFlush(bogus, 8), want);
    EXPECT_EQ(aclrtMemInvalidate(bogus, 8), want);
    EXPECT_EQ(aclrtFree(bogus), want);
    EXPECT_EQ(aclrtMallocHost(&ptr, 64), want);
    EXPECT_EQ(aclrtFreeHost(bogus), want);
    EXPECT_EQ(aclrtMemcpy(host_a, sizeof host_a, host_b, 16, ACL_MEMCPY_HOST_TO_HOST), want);
    EXPECT_EQ(aclrtMemcpyAsync(host_a, sizeof host_a, host_b, 16, ACL_MEMCPY_HOST_TO_HOST, nullptr), want);
    EXPECT_EQ(aclrtMemcpy2d(host_a, 8, host_b, 8, 8, 2, ACL_MEMCPY_HOST_TO_HOST), want);
    EXPECT_EQ(aclrtMemcpy2dAsync(host_a, 8, host_b, 8, 8, 2, ACL_MEMCPY_HOST_TO_HOST, nullptr), want);
    EXPECT_EQ(aclrtMemset(host_a, sizeof host_a, 1, 16), want);
    EXPECT_EQ(aclrtMemsetAsync(host_a, sizeof host_a, 1, 16, nullptr), want);
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &s1, &s2), want);

    EXPECT_EQ(aclrtSubscribeReport(static_cast<uint64_t>(pthread_self()), nullptr), want);
    EXPECT_EQ(aclrtUnSubscribeReport(static_cast<uint64_t>(pthread_self()), nullptr), want);
    EXPECT_EQ(aclrtLaunchCallback(acltest::Counter::Fn, bogus, ACL_CALLBACK_BLOCK, nullptr), want);
    EXPECT_EQ(aclrtProcessReport(10), want);
    EXPECT_EQ(aclrtLaunchHostFunc(nullptr, acltest::Counter::Fn, bogus), want);

    // The copies above must not have happened.
    for (char c : host_a) EXPECT_EQ(c, 0);
}

TEST_F(InitTest, RuntimeCallsBeforeInitReturnUninitialize) {
    ExpectAllRuntimeCallsReturn(ACL_ERROR_UNINITIALIZE);
}

TEST_F(InitTest, RuntimeCallsAfterFinalizeReturnUninitialize) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    ExpectAllRuntimeCallsReturn(ACL_ERROR_UNINITIALIZE);
}

TEST_F(InitTest, UninitializeMessageNamesTheCall) {
    void *p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_UNINITIALIZE);
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "aclrtMalloc")) << msg;
}

TEST_F(InitTest, ExemptCallsWorkBeforeInit) {
    aclrtRunMode mode = ACL_DEVICE;
    EXPECT_EQ(aclrtGetRunMode(&mode), ACL_SUCCESS);
    EXPECT_EQ(mode, ACL_HOST);
    const char *soc = aclrtGetSocName();
    ASSERT_NE(soc, nullptr);
    int32_t major = -1, minor = -1, patch = -1;
    EXPECT_EQ(aclrtGetVersion(&major, &minor, &patch), ACL_SUCCESS);
    EXPECT_EQ(major, ACL_MAJOR_VERSION);
    (void)aclGetRecentErrMsg();
    aclAppLog(ACL_INFO, __FUNCTION__, __FILE__, __LINE__, "before init %d", 1);
    EXPECT_EQ(aclFloatToFloat16(1.0f), 0x3C00);
    EXPECT_EQ(aclFloat16ToFloat(0x3C00), 1.0f);
    EXPECT_EQ(aclDataTypeSize(ACL_FLOAT), 4u);
    int x = 0;
    aclDataBuffer *buf = aclCreateDataBuffer(&x, sizeof x);
    ASSERT_NE(buf, nullptr);
    EXPECT_EQ(aclGetDataBufferAddr(buf), &x);
    EXPECT_EQ(aclGetDataBufferSizeV2(buf), sizeof x);
    EXPECT_EQ(aclUpdateDataBuffer(buf, nullptr, 0), ACL_SUCCESS);
    EXPECT_EQ(aclDestroyDataBuffer(buf), ACL_SUCCESS);
    EXPECT_FALSE(Initialised());
}

// ---------------------------------------------------------------- finalize tears down

TEST_F(InitTest, FinalizeWaitsForPendingWork) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    acltest::Gate gate(100);  // never opened: lets the stream go after 100 ms
    acltest::Counter after;
    ASSERT_TRUE(gate.Launch(s));
    ASSERT_EQ(aclrtLaunchHostFunc(s, acltest::Counter::Fn, &after), ACL_SUCCESS);
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_TRUE(gate.finished.IsSet());
    EXPECT_EQ(after.n.load(), 1);
}

TEST_F(InitTest, FinalizeDestroysHandlesAndContexts) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    aclrtEvent e = nullptr;
    void *p = nullptr;
    aclrtContext ctx = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateContext(&ctx, 1), ACL_SUCCESS);
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);

    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    // The calling thread's context went with the finalize.
    int32_t dev = -1;
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    aclrtContext cur = nullptr;
    EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(aclrtSetCurrentContext(ctx), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyEvent(e), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyContext(ctx), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST_F(InitTest, FinalizeReportsLiveAllocationsInTheLog) {
    RunIsolated([] {
        ScopedEnv log("OPENACL_LOG", "warning");
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
        void *p = nullptr;
        ASSERT_EQ(aclrtMalloc(&p, 12345, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        char addr[32];
        std::snprintf(addr, sizeof addr, "%p", p);
        ::testing::internal::CaptureStderr();
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
        std::fflush(stderr);
        std::string err = ::testing::internal::GetCapturedStderr();
        // device, size and address of the leaked block
        EXPECT_TRUE(Contains(err, "12345")) << err;
        EXPECT_TRUE(Contains(err, addr)) << "address " << addr << " in: " << err;
    });
}

TEST_F(InitTest, DeviceCountUpTo64) {
    ScopedEnv count("OPENACL_DEVICE_COUNT", "64");
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    uint32_t n = 0;
    EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    EXPECT_EQ(n, 64u);
    EXPECT_EQ(aclrtSetDevice(63), ACL_SUCCESS);
    EXPECT_EQ(aclrtSetDevice(64), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

// ---------------------------------------------------------------- aclGetRecentErrMsg

TEST_F(InitTest, RecentErrMsgNamesTheFailingCallAndReadingClearsIt) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    (void)RecentErrMsg();
    char dst[16] = {0};
    char src[64] = {0};
    ASSERT_EQ(aclrtMemcpy(dst, sizeof dst, src, sizeof src, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
    std::string msg = RecentErrMsg();
    EXPECT_FALSE(msg.empty());
    EXPECT_TRUE(Contains(msg, "aclrtMemcpy")) << msg;
    EXPECT_EQ(RecentErrMsg(), "");

    // Only the latest message is kept.
    void *p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclrtMemcpy(dst, sizeof dst, src, sizeof src, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
    msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "aclrtMemcpy")) << msg;
    EXPECT_EQ(RecentErrMsg(), "");
}

TEST_F(InitTest, RecentErrMsgIsPerThreadByDefault) {
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    (void)RecentErrMsg();
    acltest::Flag failed, main_read;
    std::string thread_msg;
    std::thread t([&] {
        EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        char dst[8], src[32] = {0};
        EXPECT_EQ(aclrtMemcpy(dst, sizeof dst, src, sizeof src, ACL_MEMCPY_HOST_TO_HOST),
                  ACL_ERROR_RT_PARAM_INVALID);
        failed.Set();
        main_read.WaitFor(5000);
        thread_msg = RecentErrMsg();
        EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    });
    ASSERT_TRUE(failed.WaitFor(5000));
    std::string main_msg = RecentErrMsg();
    EXPECT_FALSE(Contains(main_msg, "aclrtMemcpy")) << main_msg;
    main_read.Set();
    t.join();
    EXPECT_TRUE(Contains(thread_msg, "aclrtMemcpy")) << thread_msg;
}

TEST_F(InitTest, RecentErrMsgIsPerProcessWithErrMsgMode1) {
    RunIsolated([] {
        TempFile f(R"({"err_msg_mode": "1"})");
        ASSERT_EQ(aclInit(f.path()), ACL_SUCCESS);
        (void)RecentErrMsg();
        std::thread t([] {
            EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
            char dst[8], src[32] = {0};
            EXPECT_EQ(aclrtMemcpy(dst, sizeof dst, src, sizeof src, ACL_MEMCPY_HOST_TO_HOST),
                      ACL_ERROR_RT_PARAM_INVALID);
        });
        t.join();
        std::string msg = RecentErrMsg();
        EXPECT_TRUE(Contains(msg, "aclrtMemcpy")) << msg;
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

}  // namespace
