/*
 * Devices and contexts: set/reset reference counting, the shared default context,
 * explicit contexts and their use from other threads, device synchronisation,
 * peer access, TS device. Contract: docs/runtime.md "Devices and contexts";
 * spec/pyacl-api.md §2.1, §2.2.
 */
#include <thread>
#include <vector>

#include "raw_enums.h"
#include "test_util.h"

namespace {

using acltest::AclTest;
using acltest::BogusPointer;
using acltest::Counter;
using acltest::DeviceTest;
using acltest::Gate;

class DeviceCtxTest : public AclTest {};

int32_t CurrentDevice() {
    int32_t dev = -1;
    if (aclrtGetDevice(&dev) != ACL_SUCCESS) return -1;
    return dev;
}

// ---------------------------------------------------------------- device count / ids

TEST_F(DeviceCtxTest, DeviceCountNullOut) {
    EXPECT_EQ(aclrtGetDeviceCount(nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST_F(DeviceCtxTest, DeviceCountAtLeastTwoByDefault) {
    uint32_t n = 0;
    ASSERT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    EXPECT_GE(n, 2u);
}

TEST_F(DeviceCtxTest, SetDeviceMakesItCurrent) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(CurrentDevice(), 0);
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(CurrentDevice(), 1);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(CurrentDevice(), 0);
}

TEST_F(DeviceCtxTest, SetDeviceBadIdIsInvalidDeviceId) {
    uint32_t n = 0;
    ASSERT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
    for (int32_t id : {-1, -100, static_cast<int32_t>(n), static_cast<int32_t>(n) + 1, 64, INT32_MAX, INT32_MIN}) {
        EXPECT_EQ(aclrtSetDevice(id), ACL_ERROR_RT_INVALID_DEVICEID) << "id " << id;
    }
    // A failed set leaves no current device behind.
    int32_t dev = -1;
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
}

TEST_F(DeviceCtxTest, GetDeviceWithoutSetIsContextNull) {
    int32_t dev = -1;
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
}

TEST_F(DeviceCtxTest, GetDeviceNullOut) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetDevice(nullptr), ACL_ERROR_INVALID_PARAM);
}

// ---------------------------------------------------------------- reset refcounting

TEST_F(DeviceCtxTest, TwoSetsNeedTwoResets) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    // Still alive: current device and memory work.
    EXPECT_EQ(CurrentDevice(), 0);
    void *p = nullptr;
    EXPECT_EQ(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    // At zero the default context is gone.
    int32_t dev = -1;
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    aclrtContext ctx = nullptr;
    EXPECT_EQ(aclrtGetCurrentContext(&ctx), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_CONTEXT_NULL);
    // A third reset finds the count at zero.
    EXPECT_EQ(aclrtResetDevice(0), ACL_ERROR_RT_INVALID_DEVICEID);
}

TEST_F(DeviceCtxTest, ResetNeverSetDeviceIsInvalidDeviceId) {
    EXPECT_EQ(aclrtResetDevice(1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_FALSE(acltest::RecentErrMsg().empty());
}

TEST_F(DeviceCtxTest, ResetBadIdIsInvalidDeviceId) {
    EXPECT_EQ(aclrtResetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtResetDevice(64), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtResetDeviceForce(-1), ACL_ERROR_RT_INVALID_DEVICEID);
}

TEST_F(DeviceCtxTest, ResetOneDeviceLeavesTheOtherAlone) {
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    aclrtStream s1 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s1), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    // Device 1's default context and stream are untouched.
    EXPECT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s1), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s1), ACL_SUCCESS);
}

TEST_F(DeviceCtxTest, ResetToZeroDestroysDefaultContextStreamsButNotMemory) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    void *p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 128, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    size_t free_before = 0, total = 0;
    ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_before, &total), ACL_SUCCESS);
    ASSERT_EQ(aclrtResetDevice(0), ACL_SUCCESS);

    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
    // The user's allocation survives the reset and still counts.
    size_t free_after = 0;
    ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_after, &total), ACL_SUCCESS);
    EXPECT_EQ(free_after, free_before);
    std::vector<uint8_t> data(128, 0x5A), back(128, 0);
    EXPECT_EQ(aclrtMemcpy(p, 128, data.data(), 128, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(back.data(), 128, p, 128, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(back, data);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
}

TEST(DeviceLogTest, ResetToZeroReportsLiveAllocationsInTheLog) {
    acltest::RunIsolated([] {
        acltest::ScopedEnv log("OPENACL_LOG", "warning");
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        void *p = nullptr;
        ASSERT_EQ(aclrtMalloc(&p, 54321, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        char addr[32];
        std::snprintf(addr, sizeof addr, "%p", p);
        ::testing::internal::CaptureStderr();
        EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
        std::fflush(stderr);
        std::string err = ::testing::internal::GetCapturedStderr();
        EXPECT_TRUE(acltest::Contains(err, "54321")) << err;
        EXPECT_TRUE(acltest::Contains(err, addr)) << "address " << addr << " in: " << err;
        // Reported, not freed.
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST_F(DeviceCtxTest, ResetWaitsForPendingWork) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    Gate gate(100);  // never opened: the stream goes on after 100 ms
    Counter after;
    ASSERT_TRUE(gate.Launch(s));
    ASSERT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &after), ACL_SUCCESS);
    ASSERT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_TRUE(gate.finished.IsSet());
    EXPECT_EQ(after.n.load(), 1);
}

TEST_F(DeviceCtxTest, ResetForceIgnoresTheCount) {
    for (int i = 0; i < 3; ++i) ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDeviceForce(0), ACL_SUCCESS);
    int32_t dev = -1;
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(aclrtResetDevice(0), ACL_ERROR_RT_INVALID_DEVICEID);
    // The device can be set again afterwards.
    EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(CurrentDevice(), 0);
}

TEST_F(DeviceCtxTest, ThreadsShareTheDefaultContext) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext main_ctx = nullptr;
    ASSERT_EQ(aclrtGetCurrentContext(&main_ctx), ACL_SUCCESS);
    ASSERT_NE(main_ctx, nullptr);
    aclrtContext thread_ctx = nullptr;
    std::thread t([&] {
        EXPECT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        EXPECT_EQ(aclrtGetCurrentContext(&thread_ctx), ACL_SUCCESS);
    });
    t.join();
    EXPECT_EQ(thread_ctx, main_ctx);
    // Two references now (main + thread): one reset leaves the context alive.
    EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(CurrentDevice(), 0);
    std::thread t2([] { EXPECT_EQ(aclrtResetDevice(0), ACL_SUCCESS); });
    t2.join();
    // Count reached zero in another thread: this thread has no current context any more.
    int32_t dev = -1;
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
}

TEST_F(DeviceCtxTest, NewThreadHasNoCurrentContext) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclError get_dev = 0, get_ctx = 0, create_stream = 0, malloc_ret = 0, sync_dev = 0;
    std::thread t([&] {
        int32_t dev = -1;
        aclrtContext ctx = nullptr;
        aclrtStream s = nullptr;
        void *p = nullptr;
        get_dev = aclrtGetDevice(&dev);
        get_ctx = aclrtGetCurrentContext(&ctx);
        create_stream = aclrtCreateStream(&s);
        malloc_ret = aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST);
        sync_dev = aclrtSynchronizeDevice();
    });
    t.join();
    EXPECT_EQ(get_dev, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(get_ctx, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(create_stream, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(malloc_ret, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(sync_dev, ACL_ERROR_RT_CONTEXT_NULL);
}

// ---------------------------------------------------------------- explicit contexts

TEST_F(DeviceCtxTest, CreateContextMakesItCurrent) {
    aclrtContext c0 = nullptr, c1 = nullptr, cur = nullptr;
    ASSERT_EQ(aclrtCreateContext(&c0, 0), ACL_SUCCESS);
    ASSERT_NE(c0, nullptr);
    EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    EXPECT_EQ(cur, c0);
    EXPECT_EQ(CurrentDevice(), 0);
    ASSERT_EQ(aclrtCreateContext(&c1, 1), ACL_SUCCESS);
    EXPECT_NE(c1, c0);
    EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    EXPECT_EQ(cur, c1);
    EXPECT_EQ(CurrentDevice(), 1);
    EXPECT_EQ(aclrtSetCurrentContext(c0), ACL_SUCCESS);
    EXPECT_EQ(CurrentDevice(), 0);
    EXPECT_EQ(aclrtDestroyContext(c1), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(c0), ACL_SUCCESS);
}

TEST_F(DeviceCtxTest, CreateContextBadArguments) {
    aclrtContext c = nullptr;
    EXPECT_EQ(aclrtCreateContext(nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtCreateContext(&c, -1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtCreateContext(&c, 64), ACL_ERROR_RT_INVALID_DEVICEID);
}

TEST_F(DeviceCtxTest, GetCurrentContextNullOut) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetCurrentContext(nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST_F(DeviceCtxTest, DestroyContextBadHandles) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyContext(BogusPointer()), ACL_ERROR_INVALID_PARAM);
    aclrtContext c = nullptr;
    ASSERT_EQ(aclrtCreateContext(&c, 1), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(c), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(c), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSetCurrentContext(c), ACL_ERROR_INVALID_PARAM);
}

TEST_F(DeviceCtxTest, DefaultContextCannotBeDestroyed) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext def = nullptr;
    ASSERT_EQ(aclrtGetCurrentContext(&def), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(def), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(CurrentDevice(), 0);
    aclrtStream s = nullptr;
    EXPECT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST_F(DeviceCtxTest, SetCurrentContextBadHandles) {
    EXPECT_EQ(aclrtSetCurrentContext(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSetCurrentContext(BogusPointer()), ACL_ERROR_INVALID_PARAM);
}

TEST_F(DeviceCtxTest, DestroyingTheCurrentContextLeavesNoneCurrent) {
    aclrtContext c = nullptr;
    ASSERT_EQ(aclrtCreateContext(&c, 0), ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyContext(c), ACL_SUCCESS);
    aclrtContext cur = nullptr;
    EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);
    int32_t dev = -1;
    EXPECT_EQ(aclrtGetDevice(&dev), ACL_ERROR_RT_CONTEXT_NULL);
}

TEST_F(DeviceCtxTest, DestroyContextDestroysItsStreams) {
    aclrtContext c = nullptr;
    ASSERT_EQ(aclrtCreateContext(&c, 1), ACL_SUCCESS);
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    Counter ran;
    ASSERT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &ran), ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyContext(c), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
}

TEST_F(DeviceCtxTest, StreamsBelongToTheContextCurrentAtCreation) {
    aclrtContext c1 = nullptr;
    ASSERT_EQ(aclrtCreateContext(&c1, 1), ACL_SUCCESS);
    aclrtStream s1 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s1), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);  // default context of device 0 now current
    void *p1 = nullptr;
    ASSERT_EQ(aclrtMalloc(&p1, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    // Destroying c1 takes s1 with it even though device 0 is current.
    ASSERT_EQ(aclrtDestroyContext(c1), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(CurrentDevice(), 0);
    EXPECT_EQ(aclrtFree(p1), ACL_SUCCESS);
}

TEST_F(DeviceCtxTest, ExplicitContextUsedFromAnotherThread) {
    aclrtContext ctx = nullptr;
    ASSERT_EQ(aclrtCreateContext(&ctx, 1), ACL_SUCCESS);
    aclError before = 0, set = 0, dev_ret = 0, cur_ret = 0;
    int32_t dev = -1;
    aclrtContext cur = nullptr;
    std::vector<uint8_t> in(1000), out(1000, 0);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + 3);
    size_t in_thread_free = 0, total = 0;
    std::thread t([&] {
        int32_t d = -1;
        before = aclrtGetDevice(&d);
        set = aclrtSetCurrentContext(ctx);
        dev_ret = aclrtGetDevice(&dev);
        cur_ret = aclrtGetCurrentContext(&cur);
        aclrtStream s = nullptr;
        void *p = nullptr;
        ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
        ASSERT_EQ(aclrtMalloc(&p, in.size(), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &in_thread_free, &total), ACL_SUCCESS);
        EXPECT_EQ(aclrtMemcpyAsync(p, in.size(), in.data(), in.size(), ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_SUCCESS);
        EXPECT_EQ(aclrtMemcpyAsync(out.data(), out.size(), p, in.size(), ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_SUCCESS);
        EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
        EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
        EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    });
    t.join();
    EXPECT_EQ(before, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(set, ACL_SUCCESS);
    EXPECT_EQ(dev_ret, ACL_SUCCESS);
    EXPECT_EQ(dev, 1);
    EXPECT_EQ(cur_ret, ACL_SUCCESS);
    EXPECT_EQ(cur, ctx);
    EXPECT_EQ(out, in);
    EXPECT_EQ(in_thread_free + acltest::MallocFootprint(in.size()), total);
    EXPECT_EQ(aclrtDestroyContext(ctx), ACL_SUCCESS);
}

TEST_F(DeviceCtxTest, ContextsOfOneDeviceShareItsMemory) {
    aclrtContext a = nullptr, b = nullptr;
    ASSERT_EQ(aclrtCreateContext(&a, 0), ACL_SUCCESS);
    void *p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    size_t free_a = 0, total = 0;
    ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_a, &total), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateContext(&b, 0), ACL_SUCCESS);
    size_t free_b = 0;
    ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total), ACL_SUCCESS);
    EXPECT_EQ(free_a, free_b);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(b), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(a), ACL_SUCCESS);
}

// ---------------------------------------------------------------- synchronize device

TEST_F(DeviceCtxTest, SynchronizeDeviceWaitsForEveryStream) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream a = nullptr, b = nullptr;
    ASSERT_EQ(aclrtCreateStream(&a), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&b), ACL_SUCCESS);
    Gate ga(60), gb(80);  // never opened: each holds its stream for a while
    Counter ca, cb, cdef;
    ASSERT_TRUE(ga.Launch(a));
    ASSERT_TRUE(gb.Launch(b));
    ASSERT_EQ(aclrtLaunchHostFunc(a, Counter::Fn, &ca), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(b, Counter::Fn, &cb), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(nullptr, Counter::Fn, &cdef), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
    EXPECT_EQ(ca.n.load(), 1);
    EXPECT_EQ(cb.n.load(), 1);
    EXPECT_EQ(cdef.n.load(), 1);
}

TEST_F(DeviceCtxTest, SynchronizeDeviceWithTimeout) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    Gate gate;
    ASSERT_TRUE(gate.Launch(s));
    ASSERT_TRUE(gate.entered.WaitFor(5000));
    EXPECT_EQ(aclrtSynchronizeDeviceWithTimeout(30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeDeviceWithTimeout(-1), ACL_SUCCESS);
    EXPECT_FALSE(gate.released_by_timeout.load());
    EXPECT_EQ(aclrtSynchronizeDeviceWithTimeout(1000), ACL_SUCCESS);
}

TEST_F(DeviceCtxTest, SynchronizeDeviceCoversOnlyTheCurrentDevice) {
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    aclrtStream s1 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s1), ACL_SUCCESS);
    Gate gate;
    ASSERT_TRUE(gate.Launch(s1));
    ASSERT_TRUE(gate.entered.WaitFor(5000));
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    // Device 1 is held, device 0 is idle.
    EXPECT_EQ(aclrtSynchronizeDeviceWithTimeout(2000), ACL_SUCCESS);
    EXPECT_FALSE(gate.finished.IsSet());
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStream(s1), ACL_SUCCESS);
}

// ---------------------------------------------------------------- peers, TS device

TEST_F(DeviceCtxTest, DistinctDevicesCanAccessEachOther) {
    int32_t can = -1;
    EXPECT_EQ(aclrtDeviceCanAccessPeer(&can, 0, 1), ACL_SUCCESS);
    EXPECT_EQ(can, 1);
    can = -1;
    EXPECT_EQ(aclrtDeviceCanAccessPeer(&can, 1, 0), ACL_SUCCESS);
    EXPECT_EQ(can, 1);
}

TEST_F(DeviceCtxTest, CanAccessPeerBadArguments) {
    int32_t can = 0;
    EXPECT_EQ(aclrtDeviceCanAccessPeer(nullptr, 0, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDeviceCanAccessPeer(&can, 0, 64), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtDeviceCanAccessPeer(&can, -1, 0), ACL_ERROR_RT_INVALID_DEVICEID);
}

TEST_F(DeviceCtxTest, EnableAndDisablePeerAccess) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtDeviceEnablePeerAccess(1, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtDeviceDisablePeerAccess(1), ACL_SUCCESS);
    EXPECT_EQ(aclrtDeviceEnablePeerAccess(64, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtDeviceEnablePeerAccess(-1, 0), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtDeviceDisablePeerAccess(64), ACL_ERROR_RT_INVALID_DEVICEID);
    // flags must be 0 (spec §2.1)
    EXPECT_NE(aclrtDeviceEnablePeerAccess(1, 1), ACL_SUCCESS);
}

TEST_F(DeviceCtxTest, PeerAccessNeedsACurrentContext) {
    EXPECT_EQ(aclrtDeviceEnablePeerAccess(1, 0), ACL_ERROR_RT_CONTEXT_NULL);
}

TEST_F(DeviceCtxTest, SetTsDevice) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtSetTsDevice(ACL_TS_ID_AICORE), ACL_SUCCESS);
    EXPECT_EQ(aclrtSetTsDevice(ACL_TS_ID_AIVECTOR), ACL_SUCCESS);
    EXPECT_EQ(raw_aclrtSetTsDevice(99), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(raw_aclrtSetTsDevice(-1), ACL_ERROR_INVALID_PARAM);
}

}  // namespace
