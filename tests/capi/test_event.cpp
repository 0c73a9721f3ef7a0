/*
 * Events: create/destroy, record/reset, the three query flavours, synchronisation
 * with timeout, elapsed time, stream_wait_event across streams and devices, and the
 * op-wait timeout. Contract: docs/runtime.md "Events"; spec/pyacl-api.md §2.4.
 */
#include <cstring>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using acltest::BogusPointer;
using acltest::Counter;
using acltest::DeviceTest;
using acltest::Gate;

class EventTest : public DeviceTest {
 protected:
    void SetUp() override {
        DeviceTest::SetUp();
        if (HasFatalFailure()) return;
        ASSERT_EQ(aclrtCreateStream(&s1_), ACL_SUCCESS);
        ASSERT_EQ(aclrtCreateStream(&s2_), ACL_SUCCESS);
        ASSERT_EQ(aclrtCreateEvent(&ev_), ACL_SUCCESS);
    }
    aclrtStream s1_ = nullptr;
    aclrtStream s2_ = nullptr;
    aclrtEvent ev_ = nullptr;

    static aclrtEventRecordedStatus Recorded(aclrtEvent e) {
        // Callers check both values at different moments, so an unwritten output shows.
        aclrtEventRecordedStatus st = ACL_EVENT_RECORDED_STATUS_COMPLETE;
        EXPECT_EQ(aclrtQueryEventStatus(e, &st), ACL_SUCCESS);
        return st;
    }
    static aclrtEventStatus Legacy(aclrtEvent e) {
        aclrtEventStatus st = ACL_EVENT_STATUS_RESERVED;
        EXPECT_EQ(aclrtQueryEvent(e, &st), ACL_SUCCESS);
        return st;
    }
    static aclrtEventWaitStatus WaitStatus(aclrtEvent e) {
        aclrtEventWaitStatus st = ACL_EVENT_WAIT_STATUS_RESERVED;
        EXPECT_EQ(aclrtQueryEventWaitStatus(e, &st), ACL_SUCCESS);
        return st;
    }
};

TEST_F(EventTest, CreateVariantsAndDestroy) {
    aclrtEvent a = nullptr, b = nullptr, c = nullptr, d = nullptr;
    EXPECT_EQ(aclrtCreateEvent(&a), ACL_SUCCESS);
    EXPECT_EQ(aclrtCreateEventWithFlag(&b, ACL_EVENT_SYNC), ACL_SUCCESS);
    EXPECT_EQ(aclrtCreateEventWithFlag(&c, ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC), ACL_SUCCESS);
    EXPECT_EQ(aclrtCreateEventExWithFlag(&d, ACL_EVENT_SYNC), ACL_SUCCESS);
    for (aclrtEvent e : {a, b, c, d}) {
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(aclrtRecordEvent(e, s1_), ACL_SUCCESS);
        EXPECT_EQ(aclrtSynchronizeEvent(e), ACL_SUCCESS);
        EXPECT_EQ(Recorded(e), ACL_EVENT_RECORDED_STATUS_COMPLETE);
        EXPECT_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
    }
}

TEST_F(EventTest, CreateNullOut) {
    EXPECT_EQ(aclrtCreateEvent(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtCreateEventWithFlag(nullptr, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtCreateEventExWithFlag(nullptr, ACL_EVENT_SYNC), ACL_ERROR_INVALID_PARAM);
}

TEST_F(EventTest, DestroyedAndBogusHandlesAreInvalidParam) {
    aclrtEvent e = nullptr;
    ASSERT_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
    float ms = 0;
    aclrtEventStatus st;
    aclrtEventRecordedStatus rst;
    aclrtEventWaitStatus wst;
    for (aclrtEvent bad : {e, BogusPointer()}) {
        EXPECT_EQ(aclrtDestroyEvent(bad), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtRecordEvent(bad, s1_), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtResetEvent(bad, s1_), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtQueryEvent(bad, &st), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtQueryEventStatus(bad, &rst), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtQueryEventWaitStatus(bad, &wst), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtSynchronizeEvent(bad), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtSynchronizeEventWithTimeout(bad, 10), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtEventElapsedTime(&ms, bad, ev_), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtEventElapsedTime(&ms, ev_, bad), ACL_ERROR_INVALID_PARAM);
        EXPECT_EQ(aclrtStreamWaitEvent(s1_, bad), ACL_ERROR_INVALID_PARAM);
    }
}

TEST_F(EventTest, NullHandlesAndOutputs) {
    float ms = 0;
    aclrtEventStatus st;
    aclrtEventRecordedStatus rst;
    aclrtEventWaitStatus wst;
    EXPECT_EQ(aclrtDestroyEvent(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtRecordEvent(nullptr, s1_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtResetEvent(nullptr, s1_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtQueryEvent(nullptr, &st), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtQueryEventStatus(nullptr, &rst), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtQueryEventWaitStatus(nullptr, &wst), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSynchronizeEvent(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtStreamWaitEvent(s1_, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtQueryEvent(ev_, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtQueryEventStatus(ev_, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtQueryEventWaitStatus(ev_, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtEventElapsedTime(nullptr, ev_, ev_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtEventElapsedTime(&ms, nullptr, ev_), ACL_ERROR_INVALID_PARAM);
}

TEST_F(EventTest, NeverRecordedIsNotReadyInEveryFlavour) {
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT_EQ(Legacy(ev_), ACL_EVENT_STATUS_NOT_READY);
    EXPECT_EQ(WaitStatus(ev_), ACL_EVENT_WAIT_STATUS_NOT_READY);
}

TEST_F(EventTest, PendingThenCompleteInEveryFlavour) {
    Gate gate;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT_EQ(Legacy(ev_), ACL_EVENT_STATUS_NOT_READY);
    EXPECT_EQ(WaitStatus(ev_), ACL_EVENT_WAIT_STATUS_NOT_READY);
    gate.Open();
    ASSERT_EQ(aclrtSynchronizeEvent(ev_), ACL_SUCCESS);
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    EXPECT_EQ(Legacy(ev_), ACL_EVENT_STATUS_COMPLETE);
    EXPECT_EQ(WaitStatus(ev_), ACL_EVENT_WAIT_STATUS_COMPLETE);
}

TEST_F(EventTest, RecordOnDefaultStream) {
    ASSERT_EQ(aclrtRecordEvent(ev_, nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeEvent(ev_), ACL_SUCCESS);
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_COMPLETE);
}

TEST_F(EventTest, SynchronizeWaitsForTheRecord) {
    Gate gate(60);  // never opened
    Counter before;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtLaunchHostFunc(s1_, Counter::Fn, &before), ACL_SUCCESS);
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeEvent(ev_), ACL_SUCCESS);
    EXPECT_TRUE(gate.finished.IsSet());
    EXPECT_EQ(before.n.load(), 1);
}

TEST_F(EventTest, SynchronizeNeverRecordedReturnsAtOnce) {
    auto t0 = acltest::Clock::now();
    EXPECT_EQ(aclrtSynchronizeEvent(ev_), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeEventWithTimeout(ev_, 5000), ACL_SUCCESS);
    EXPECT_LT(acltest::Clock::now() - t0, std::chrono::seconds(2));
}

TEST_F(EventTest, SynchronizeWithTimeoutExpires) {
    Gate gate;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_TRUE(gate.entered.WaitFor(5000));
    auto t0 = acltest::Clock::now();
    EXPECT_EQ(aclrtSynchronizeEventWithTimeout(ev_, 40), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
    EXPECT_GE(acltest::Clock::now() - t0, std::chrono::milliseconds(30));
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeEventWithTimeout(ev_, -1), ACL_SUCCESS);
    EXPECT_FALSE(gate.released_by_timeout.load());
    EXPECT_EQ(aclrtSynchronizeEventWithTimeout(ev_, 100), ACL_SUCCESS);
}

TEST_F(EventTest, ReRecordingMovesToTheNewestRecord) {
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeEvent(ev_), ACL_SUCCESS);
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    Gate gate;
    ASSERT_TRUE(gate.Launch(s2_));
    ASSERT_EQ(aclrtRecordEvent(ev_, s2_), ACL_SUCCESS);
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT_EQ(aclrtSynchronizeEventWithTimeout(ev_, 20), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT);
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeEvent(ev_), ACL_SUCCESS);
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_COMPLETE);
}

TEST_F(EventTest, ResetReturnsToNotRecorded) {
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeEvent(ev_), ACL_SUCCESS);
    ASSERT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    ASSERT_EQ(aclrtResetEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s1_), ACL_SUCCESS);
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_NOT_READY);
    EXPECT_EQ(Legacy(ev_), ACL_EVENT_STATUS_NOT_READY);
    // Reset is in stream order: behind a held gate it has not happened yet.
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeEvent(ev_), ACL_SUCCESS);
    Gate gate;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtResetEvent(ev_, s1_), ACL_SUCCESS);
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_COMPLETE);
    gate.Open();
    ASSERT_EQ(aclrtSynchronizeStream(s1_), ACL_SUCCESS);
    EXPECT_EQ(Recorded(ev_), ACL_EVENT_RECORDED_STATUS_NOT_READY);
}

TEST_F(EventTest, ResetBadStream) {
    EXPECT_EQ(aclrtResetEvent(ev_, BogusPointer()), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtRecordEvent(ev_, BogusPointer()), ACL_ERROR_INVALID_PARAM);
}

// ---------------------------------------------------------------- elapsed time

TEST_F(EventTest, ElapsedTimeBetweenTwoRecords) {
    aclrtEvent start = nullptr, end = nullptr;
    ASSERT_EQ(aclrtCreateEventWithFlag(&start, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateEventWithFlag(&end, ACL_EVENT_TIME_LINE), ACL_SUCCESS);
    Gate gate(30);  // never opened: at least 30 ms between the records
    ASSERT_EQ(aclrtRecordEvent(start, s1_), ACL_SUCCESS);
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtRecordEvent(end, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeEvent(end), ACL_SUCCESS);
    float ms = -1;
    ASSERT_EQ(aclrtEventElapsedTime(&ms, start, end), ACL_SUCCESS);
    EXPECT_GE(ms, 25.0f);
    EXPECT_LT(ms, 10000.0f);
    // The same event twice: zero.
    ASSERT_EQ(aclrtEventElapsedTime(&ms, start, start), ACL_SUCCESS);
    EXPECT_EQ(ms, 0.0f);
    EXPECT_EQ(aclrtDestroyEvent(start), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyEvent(end), ACL_SUCCESS);
}

TEST_F(EventTest, ElapsedTimeWithPlainEvents) {
    aclrtEvent end = nullptr;
    ASSERT_EQ(aclrtCreateEvent(&end), ACL_SUCCESS);
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtRecordEvent(end, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s1_), ACL_SUCCESS);
    float ms = -1;
    ASSERT_EQ(aclrtEventElapsedTime(&ms, ev_, end), ACL_SUCCESS);
    EXPECT_GE(ms, 0.0f);
    EXPECT_EQ(aclrtDestroyEvent(end), ACL_SUCCESS);
}

TEST_F(EventTest, ElapsedTimeNeedsTwoCompletedRecords) {
    aclrtEvent end = nullptr;
    ASSERT_EQ(aclrtCreateEvent(&end), ACL_SUCCESS);
    float ms = 0;
    // Neither recorded.
    EXPECT_EQ(aclrtEventElapsedTime(&ms, ev_, end), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
    // Start recorded, end never.
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeEvent(ev_), ACL_SUCCESS);
    EXPECT_EQ(aclrtEventElapsedTime(&ms, ev_, end), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
    EXPECT_EQ(aclrtEventElapsedTime(&ms, end, ev_), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
    // End recorded but not complete yet.
    Gate gate;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtRecordEvent(end, s1_), ACL_SUCCESS);
    EXPECT_EQ(aclrtEventElapsedTime(&ms, ev_, end), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
    gate.Open();
    ASSERT_EQ(aclrtSynchronizeEvent(end), ACL_SUCCESS);
    EXPECT_EQ(aclrtEventElapsedTime(&ms, ev_, end), ACL_SUCCESS);
    EXPECT_GE(ms, 0.0f);
    // After a reset the start has no timestamp again.
    ASSERT_EQ(aclrtResetEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s1_), ACL_SUCCESS);
    EXPECT_EQ(aclrtEventElapsedTime(&ms, ev_, end), ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID);
    EXPECT_EQ(aclrtDestroyEvent(end), ACL_SUCCESS);
}

// ---------------------------------------------------------------- stream_wait_event

TEST_F(EventTest, WaitEventOrdersAcrossStreams) {
    constexpr size_t kN = 4096;
    void *dev = nullptr;
    ASSERT_EQ(aclrtMalloc(&dev, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(dev, kN, 0, kN), ACL_SUCCESS);
    std::vector<uint8_t> in(kN), out(kN, 0xEE);
    for (size_t i = 0; i < kN; ++i) in[i] = static_cast<uint8_t>(i * 13 + 1);

    // s1: held, then writes dev, then records. s2: waits, then reads dev.
    Gate gate;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtMemcpyAsync(dev, kN, in.data(), kN, ACL_MEMCPY_HOST_TO_DEVICE, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtStreamWaitEvent(s2_, ev_), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(out.data(), kN, dev, kN, ACL_MEMCPY_DEVICE_TO_HOST, s2_), ACL_SUCCESS);
    // s2 is held by the wait.
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s2_, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    gate.Open();
    ASSERT_EQ(aclrtSynchronizeStream(s2_), ACL_SUCCESS);
    EXPECT_EQ(out, in);
    EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);
}

TEST_F(EventTest, WaitEventOrdersAcrossDevices) {
    ASSERT_GE(device_count_, 2u);
    constexpr size_t kN = 2048;
    void *d0 = nullptr, *d1 = nullptr;
    ASSERT_EQ(aclrtMalloc(&d0, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);  // device 0
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    aclrtStream t1 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&t1), ACL_SUCCESS);  // device 1
    ASSERT_EQ(aclrtMalloc(&d1, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(d1, kN, 0, kN), ACL_SUCCESS);

    std::vector<uint8_t> in(kN), out(kN, 0xEE);
    for (size_t i = 0; i < kN; ++i) in[i] = static_cast<uint8_t>(255 - i % 251);
    // Device 0's stream s1: held, writes d0, records ev_ (an event of device 0).
    Gate gate;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtMemcpyAsync(d0, kN, in.data(), kN, ACL_MEMCPY_HOST_TO_DEVICE, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    // Device 1's stream: waits on it, copies d0 -> d1 -> host.
    ASSERT_EQ(aclrtStreamWaitEvent(t1, ev_), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(d1, kN, d0, kN, ACL_MEMCPY_DEVICE_TO_DEVICE, t1), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(out.data(), kN, d1, kN, ACL_MEMCPY_DEVICE_TO_HOST, t1), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(t1, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    gate.Open();
    ASSERT_EQ(aclrtSynchronizeStream(t1), ACL_SUCCESS);
    EXPECT_EQ(out, in);
    EXPECT_EQ(aclrtDestroyStream(t1), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(d1), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(d0), ACL_SUCCESS);
}

TEST_F(EventTest, WaitEventAcrossContexts) {
    aclrtContext def = nullptr, other = nullptr;
    ASSERT_EQ(aclrtGetCurrentContext(&def), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateContext(&other, 0), ACL_SUCCESS);
    aclrtStream so = nullptr;
    ASSERT_EQ(aclrtCreateStream(&so), ACL_SUCCESS);
    Gate gate;
    Counter after;
    ASSERT_TRUE(gate.Launch(s1_));  // s1_ belongs to the default context
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtStreamWaitEvent(so, ev_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(so, Counter::Fn, &after), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(so, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    EXPECT_EQ(after.n.load(), 0);
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStream(so), ACL_SUCCESS);
    EXPECT_EQ(after.n.load(), 1);
    EXPECT_EQ(aclrtDestroyStream(so), ACL_SUCCESS);
    EXPECT_EQ(aclrtSetCurrentContext(def), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyContext(other), ACL_SUCCESS);
}

TEST_F(EventTest, WaitOnNeverRecordedEventDoesNotWait) {
    Counter after;
    ASSERT_EQ(aclrtStreamWaitEvent(s2_, ev_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(s2_, Counter::Fn, &after), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s2_, 5000), ACL_SUCCESS);
    EXPECT_EQ(after.n.load(), 1);
}

TEST_F(EventTest, WaitUsesTheRecordLatestAtCallTime) {
    Gate gate;
    Counter after;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);  // pending behind the gate
    ASSERT_EQ(aclrtStreamWaitEvent(s2_, ev_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(s2_, Counter::Fn, &after), ACL_SUCCESS);
    // A newer record that completes at once must not release the earlier wait.
    aclrtStream s3 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s3), ACL_SUCCESS);
    ASSERT_EQ(aclrtRecordEvent(ev_, s3), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s3), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s2_, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    EXPECT_EQ(after.n.load(), 0);
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStream(s2_), ACL_SUCCESS);
    EXPECT_EQ(after.n.load(), 1);
    EXPECT_EQ(aclrtDestroyStream(s3), ACL_SUCCESS);
}

TEST_F(EventTest, WaitOnDefaultStream) {
    Gate gate;
    Counter after;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtStreamWaitEvent(nullptr, ev_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(nullptr, Counter::Fn, &after), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(nullptr, 30), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_EQ(after.n.load(), 1);
}

TEST_F(EventTest, WaitLongerThanOpWaitTimeoutFailsTheStream) {
    ASSERT_EQ(aclrtSetOpWaitTimeout(1), ACL_SUCCESS);
    Gate gate;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtStreamWaitEvent(s2_, ev_), ACL_SUCCESS);
    auto t0 = acltest::Clock::now();
    EXPECT_EQ(aclrtSynchronizeStream(s2_), ACL_ERROR_RT_WAIT_TIMEOUT);
    auto waited = acltest::Clock::now() - t0;
    EXPECT_GE(waited, std::chrono::milliseconds(900));
    EXPECT_LT(waited, std::chrono::seconds(4));
    std::string msg = acltest::RecentErrMsg();
    EXPECT_FALSE(msg.empty());
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStream(s1_), ACL_SUCCESS);
    // The failure is reported once: the next synchronisation is clean.
    EXPECT_EQ(aclrtSynchronizeStream(s2_), ACL_SUCCESS);
    EXPECT_EQ(aclrtSetOpWaitTimeout(0), ACL_SUCCESS);
}

TEST_F(EventTest, OpWaitTimeoutZeroWaitsForever) {
    ASSERT_EQ(aclrtSetOpWaitTimeout(0), ACL_SUCCESS);
    Gate gate(1200);  // never opened: released after 1.2 s
    Counter after;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtStreamWaitEvent(s2_, ev_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(s2_, Counter::Fn, &after), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s2_), ACL_SUCCESS);
    EXPECT_EQ(after.n.load(), 1);
    EXPECT_TRUE(gate.released_by_timeout.load());
}

TEST_F(EventTest, DestroyEventWhileAStreamWaitsOnIt) {
    Gate gate;
    Counter after;
    ASSERT_TRUE(gate.Launch(s1_));
    ASSERT_EQ(aclrtRecordEvent(ev_, s1_), ACL_SUCCESS);
    ASSERT_EQ(aclrtStreamWaitEvent(s2_, ev_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(s2_, Counter::Fn, &after), ACL_SUCCESS);
    // Destroying the handle must not crash or release the wait early.
    EXPECT_EQ(aclrtDestroyEvent(ev_), ACL_SUCCESS);
    ev_ = nullptr;
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStream(s2_), ACL_SUCCESS);
    EXPECT_EQ(after.n.load(), 1);
}

}  // namespace
