/*
 * Streams: create/destroy (normal, force, stale handles), in-order execution,
 * synchronisation with and without timeout, query, host functions.
 * Contract: docs/runtime.md "Streams", "Host callbacks" (aclrtLaunchHostFunc);
 * spec/pyacl-api.md §2.3.
 */
#include <mutex>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using acltest::BogusPointer;
using acltest::Counter;
using acltest::DeviceTest;
using acltest::Gate;

class StreamTest : public DeviceTest {};

struct OrderLog {
    std::mutex mu;
    std::vector<int> seen;
};
struct OrderItem {
    OrderLog *log;
    int index;
    static void Fn(void *p) {
        auto *it = static_cast<OrderItem *>(p);
        std::lock_guard<std::mutex> lock(it->log->mu);
        it->log->seen.push_back(it->index);
    }
};

TEST_F(StreamTest, CreateAndDestroy) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_NE(s, nullptr);
    aclrtStream s2 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
    EXPECT_NE(s2, s);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
}

TEST_F(StreamTest, CreateNullOut) {
    EXPECT_EQ(aclrtCreateStream(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtCreateStreamWithConfig(nullptr, 0, 0), ACL_ERROR_INVALID_PARAM);
}

TEST_F(StreamTest, CreateWithConfigClampsPriorityAndAcceptsFlags) {
    const uint32_t all_flags = ACL_STREAM_FAST_LAUNCH | ACL_STREAM_FAST_SYNC | ACL_STREAM_PERSISTENT |
                               ACL_STREAM_HUGE | ACL_STREAM_CPU_SCHEDULE | ACL_STREAM_DEVICE_USE_ONLY;
    struct {
        uint32_t priority, flag;
    } cases[] = {{0, 0}, {7, 0}, {3, ACL_STREAM_FAST_LAUNCH}, {8, ACL_STREAM_FAST_SYNC}, {1000, all_flags},
                 {UINT32_MAX, ACL_STREAM_HUGE}};
    for (auto c : cases) {
        aclrtStream s = nullptr;
        ASSERT_EQ(aclrtCreateStreamWithConfig(&s, c.priority, c.flag), ACL_SUCCESS)
            << "priority " << c.priority << " flag " << c.flag;
        Counter ran;
        EXPECT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &ran), ACL_SUCCESS);
        EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
        EXPECT_EQ(ran.n.load(), 1);
        EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    }
}

TEST_F(StreamTest, DestroyDefaultStreamIsRefused) {
    EXPECT_EQ(aclrtDestroyStream(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStreamForce(nullptr), ACL_ERROR_INVALID_PARAM);
    // The default stream still works.
    Counter ran;
    EXPECT_EQ(aclrtLaunchHostFunc(nullptr, Counter::Fn, &ran), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_EQ(ran.n.load(), 1);
}

TEST_F(StreamTest, DestroyedHandleIsInvalidParamEverywhere) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    aclrtStreamStatus st;
    aclrtEvent ev = nullptr;
    ASSERT_EQ(aclrtCreateEvent(&ev), ACL_SUCCESS);
    Counter c;
    char host[64] = {0};
    void *dev = nullptr;
    ASSERT_EQ(aclrtMalloc(&dev, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStreamForce(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 100), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtStreamQuery(s, &st), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtStreamWaitEvent(s, ev), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtRecordEvent(ev, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtResetEvent(ev, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &c), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpyAsync(dev, 64, host, 64, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemsetAsync(dev, 64, 1, 64, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy2dAsync(dev, 8, host, 8, 8, 8, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_BLOCK, s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSubscribeReport(static_cast<uint64_t>(pthread_self()), s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(c.n.load(), 0);
    EXPECT_EQ(aclrtFree(dev), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyEvent(ev), ACL_SUCCESS);
}

TEST_F(StreamTest, BogusHandleIsInvalidParam) {
    void *s = BogusPointer();
    aclrtStreamStatus st;
    Counter c;
    EXPECT_EQ(aclrtDestroyStream(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStreamForce(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 100), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtStreamQuery(s, &st), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &c), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(c.n.load(), 0);
}

TEST_F(StreamTest, DestroyWaitsForQueuedWork) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    Gate gate(80);  // never opened: holds the stream 80 ms
    Counter after;
    ASSERT_TRUE(gate.Launch(s));
    ASSERT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &after), ACL_SUCCESS);
    ASSERT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_TRUE(gate.finished.IsSet());
    EXPECT_EQ(after.n.load(), 1);
}

TEST_F(StreamTest, DestroyForceDropsTasksNotStarted) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    Gate gate(150);  // never opened: the running task ends by itself after 150 ms
    Counter dropped;
    ASSERT_TRUE(gate.Launch(s));
    for (int i = 0; i < 5; ++i) ASSERT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &dropped), ACL_SUCCESS);
    ASSERT_TRUE(gate.entered.WaitFor(5000));
    ASSERT_EQ(aclrtDestroyStreamForce(s), ACL_SUCCESS);
    // It waited for the running task and dropped the rest.
    EXPECT_TRUE(gate.finished.IsSet());
    EXPECT_EQ(dropped.n.load(), 0);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_ERROR_INVALID_PARAM);
}

TEST_F(StreamTest, TasksRunInOrderOffTheCallingThread) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    OrderLog log;
    std::vector<OrderItem> items(200);
    Counter where;
    for (int i = 0; i < 200; ++i) {
        items[i] = {&log, i};
        ASSERT_EQ(aclrtLaunchHostFunc(s, OrderItem::Fn, &items[i]), ACL_SUCCESS);
    }
    ASSERT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &where), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    ASSERT_EQ(log.seen.size(), 200u);
    for (int i = 0; i < 200; ++i) EXPECT_EQ(log.seen[i], i);
    EXPECT_EQ(where.n.load(), 1);
    EXPECT_TRUE(where.off_caller_thread.load());
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST_F(StreamTest, SynchronizeWaitsForEverythingQueued) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    Gate gate(50);
    Counter after;
    ASSERT_TRUE(gate.Launch(s));
    ASSERT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &after), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_TRUE(gate.finished.IsSet());
    EXPECT_EQ(after.n.load(), 1);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST_F(StreamTest, SynchronizeWithTimeoutExpires) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    Gate gate;
    Counter after;
    ASSERT_TRUE(gate.Launch(s));
    ASSERT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &after), ACL_SUCCESS);
    ASSERT_TRUE(gate.entered.WaitFor(5000));
    auto t0 = acltest::Clock::now();
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(acltest::Clock::now() - t0).count();
    EXPECT_GE(waited, 40);
    EXPECT_EQ(after.n.load(), 0);
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, -1), ACL_SUCCESS);
    EXPECT_EQ(after.n.load(), 1);
    EXPECT_FALSE(gate.released_by_timeout.load());
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 1000), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST_F(StreamTest, SynchronizeDefaultStreamWithTimeoutExpires) {
    Gate gate;
    ASSERT_TRUE(gate.Launch(nullptr));
    ASSERT_TRUE(gate.entered.WaitFor(5000));
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(nullptr, 20), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
}

TEST_F(StreamTest, SynchronizeWithBadTimeoutIsInvalidParam) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, -2), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s, INT32_MIN), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST_F(StreamTest, QueryReportsPendingWork) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    EXPECT_EQ(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    EXPECT_EQ(st, ACL_STREAM_STATUS_COMPLETE);
    Gate gate;
    ASSERT_TRUE(gate.Launch(s));
    EXPECT_EQ(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    EXPECT_EQ(st, ACL_STREAM_STATUS_NOT_READY);
    gate.Open();
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtStreamQuery(s, &st), ACL_SUCCESS);
    EXPECT_EQ(st, ACL_STREAM_STATUS_COMPLETE);
    EXPECT_EQ(aclrtStreamQuery(s, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST_F(StreamTest, QueryDefaultStream) {
    aclrtStreamStatus st = ACL_STREAM_STATUS_RESERVED;
    EXPECT_EQ(aclrtStreamQuery(nullptr, &st), ACL_SUCCESS);
    EXPECT_EQ(st, ACL_STREAM_STATUS_COMPLETE);
}

TEST_F(StreamTest, StreamsRunIndependently) {
    aclrtStream a = nullptr, b = nullptr;
    ASSERT_EQ(aclrtCreateStream(&a), ACL_SUCCESS);
    ASSERT_EQ(aclrtCreateStream(&b), ACL_SUCCESS);
    Gate gate;
    Counter on_b;
    ASSERT_TRUE(gate.Launch(a));
    ASSERT_EQ(aclrtLaunchHostFunc(b, Counter::Fn, &on_b), ACL_SUCCESS);
    // b is not held up by a.
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(b, 5000), ACL_SUCCESS);
    EXPECT_EQ(on_b.n.load(), 1);
    EXPECT_FALSE(gate.finished.IsSet());
    gate.Open();
    EXPECT_EQ(aclrtSynchronizeStream(a), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(a), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(b), ACL_SUCCESS);
}

TEST_F(StreamTest, StreamOfAnotherDeviceStillWorksAfterSwitching) {
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    aclrtStream s1 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s1), ACL_SUCCESS);
    void *p1 = nullptr;
    ASSERT_EQ(aclrtMalloc(&p1, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    std::vector<uint8_t> out(256, 0);
    EXPECT_EQ(aclrtMemsetAsync(p1, 256, 0x3C, 256, s1), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpyAsync(out.data(), 256, p1, 256, ACL_MEMCPY_DEVICE_TO_HOST, s1), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s1), ACL_SUCCESS);
    EXPECT_EQ(out, std::vector<uint8_t>(256, 0x3C));
    EXPECT_EQ(aclrtDestroyStream(s1), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p1), ACL_SUCCESS);
}

TEST_F(StreamTest, LaunchHostFuncBadArguments) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    EXPECT_EQ(aclrtLaunchHostFunc(s, nullptr, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

TEST_F(StreamTest, HostFuncReceivesItsArgument) {
    struct Box {
        std::atomic<int> v{0};
        static void Fn(void *p) { static_cast<Box *>(p)->v = 1234; }
    } box;
    ASSERT_EQ(aclrtLaunchHostFunc(nullptr, Box::Fn, &box), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_EQ(box.v.load(), 1234);
}

TEST_F(StreamTest, ManyStreamsCreatedAndDestroyed) {
    std::vector<aclrtStream> streams(64, nullptr);
    Counter ran;
    for (auto &s : streams) {
        ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
        ASSERT_EQ(aclrtLaunchHostFunc(s, Counter::Fn, &ran), ACL_SUCCESS);
    }
    for (auto s : streams) EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(ran.n.load(), 64);
}

}  // namespace
