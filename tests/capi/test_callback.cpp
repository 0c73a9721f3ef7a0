/*
 * Host callbacks: aclrtSubscribeReport / aclrtUnSubscribeReport / aclrtLaunchCallback /
 * aclrtProcessReport, BLOCK vs NO_BLOCK ordering, and their error codes.
 * Contract: docs/runtime.md "Host callbacks"; spec/pyacl-api.md §2.6.
 */
#include <mutex>
#include <thread>
#include <vector>

#include "raw_enums.h"
#include "test_util.h"

namespace {

using acltest::BogusPointer;
using acltest::Counter;
using acltest::DeviceTest;
using acltest::Flag;
using acltest::Gate;
using acltest::ReportThread;

uint64_t SelfId() { return static_cast<uint64_t>(pthread_self()); }

class CallbackTest : public DeviceTest {
 protected:
    void SetUp() override {
        DeviceTest::SetUp();
        if (HasFatalFailure()) return;
        ASSERT_EQ(aclrtCreateStream(&s_), ACL_SUCCESS);
    }
    aclrtStream s_ = nullptr;
};

/* Records which thread ran it, and in what order. */
struct CallLog {
    std::mutex mu;
    std::vector<int> order;
    std::vector<std::thread::id> threads;
};
struct Call {
    CallLog *log;
    int index;
    static void Fn(void *p) {
        auto *c = static_cast<Call *>(p);
        std::lock_guard<std::mutex> lock(c->log->mu);
        c->log->order.push_back(c->index);
        c->log->threads.push_back(std::this_thread::get_id());
    }
};

/* A callback that blocks until released (bounded), like Gate for host funcs. */
struct HeldCallback {
    HeldCallback() = default;
    HeldCallback(const HeldCallback &) = delete;
    ~HeldCallback() {  // never leave a running callback pointing at a dead frame
        release.Set();
        if (entered.IsSet()) done.WaitFor(10000);
    }
    Flag entered, release, done;
    static void Fn(void *p) {
        auto *h = static_cast<HeldCallback *>(p);
        h->entered.Set();
        h->release.WaitFor(5000);
        h->done.Set();
    }
};

/* A host func that remembers whether the held callback had finished when it ran. */
struct Observer {
    HeldCallback *cb;
    std::atomic<int> ran{0};
    std::atomic<bool> saw_done{false};
    static void Fn(void *p) {
        auto *o = static_cast<Observer *>(p);
        o->saw_done = o->cb->done.IsSet();
        o->ran = 1;
    }
};

bool WaitUntil(const std::atomic<int> &v, int want, int ms) {
    auto deadline = acltest::Clock::now() + std::chrono::milliseconds(ms);
    while (v.load() < want) {
        if (acltest::Clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
}

// ---------------------------------------------------------------- basics

TEST_F(CallbackTest, CallbacksRunInTheSubscribedThread) {
    ReportThread rt;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    CallLog log;
    std::vector<Call> calls(20);
    for (int i = 0; i < 20; ++i) {
        calls[i] = {&log, i};
        ASSERT_EQ(aclrtLaunchCallback(Call::Fn, &calls[i], ACL_CALLBACK_BLOCK, s_), ACL_SUCCESS);
    }
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    // BLOCK: every callback has returned when the stream is through.
    {
        std::lock_guard<std::mutex> lock(log.mu);
        ASSERT_EQ(log.order.size(), 20u);
        for (int i = 0; i < 20; ++i) EXPECT_EQ(log.order[i], i);
        for (auto id : log.threads) EXPECT_EQ(id, rt.thread_id());
    }
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    rt.Stop();
    EXPECT_EQ(rt.unexpected_errors(), 0) << rt.last_unexpected();
}

TEST_F(CallbackTest, NoBlockCallbacksAllRunExactlyOnce) {
    ReportThread rt;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    Counter c;
    for (int i = 0; i < 50; ++i) ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_NO_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    ASSERT_TRUE(c.WaitFor(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // no extra invocations
    EXPECT_EQ(c.n.load(), 50);
    EXPECT_TRUE(c.off_caller_thread.load());
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    rt.Stop();
    EXPECT_EQ(rt.unexpected_errors(), 0) << rt.last_unexpected();
}

TEST_F(CallbackTest, CallbacksOnTheDefaultStream) {
    ReportThread rt;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), nullptr), ACL_SUCCESS);
    Counter c;
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_BLOCK, nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_EQ(c.n.load(), 1);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), nullptr), ACL_SUCCESS);
}

TEST_F(CallbackTest, OneThreadServesManyStreams) {
    ReportThread rt;
    aclrtStream s2 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s2), ACL_SUCCESS);
    Counter a, b;
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &a, ACL_CALLBACK_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &b, ACL_CALLBACK_BLOCK, s2), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s2), ACL_SUCCESS);
    EXPECT_EQ(a.n.load(), 1);
    EXPECT_EQ(b.n.load(), 1);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s2), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
}

TEST_F(CallbackTest, CallbackStreamsOnTwoDevices) {
    ASSERT_GE(device_count_, 2u);
    ReportThread rt0, rt1;
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    aclrtStream t1 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&t1), ACL_SUCCESS);
    ASSERT_EQ(aclrtSubscribeReport(rt0.id(), s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSubscribeReport(rt1.id(), t1), ACL_SUCCESS);
    CallLog log;
    Call c0{&log, 0}, c1{&log, 1};
    ASSERT_EQ(aclrtLaunchCallback(Call::Fn, &c0, ACL_CALLBACK_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchCallback(Call::Fn, &c1, ACL_CALLBACK_BLOCK, t1), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(t1), ACL_SUCCESS);
    {
        std::lock_guard<std::mutex> lock(log.mu);
        ASSERT_EQ(log.order.size(), 2u);
        for (size_t i = 0; i < 2; ++i) {
            EXPECT_EQ(log.threads[i], log.order[i] == 0 ? rt0.thread_id() : rt1.thread_id());
        }
    }
    EXPECT_EQ(aclrtUnSubscribeReport(rt0.id(), s_), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnSubscribeReport(rt1.id(), t1), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(t1), ACL_SUCCESS);
}

TEST_F(CallbackTest, CallbackReceivesItsUserData) {
    ReportThread rt;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    struct Box {
        std::atomic<uint64_t> seen{0};
        static void Fn(void *p) { static_cast<Box *>(p)->seen = reinterpret_cast<uint64_t>(p); }
    } box;
    ASSERT_EQ(aclrtLaunchCallback(Box::Fn, &box, ACL_CALLBACK_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    EXPECT_EQ(box.seen.load(), reinterpret_cast<uint64_t>(&box));
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
}

// ---------------------------------------------------------------- BLOCK vs NO_BLOCK

TEST_F(CallbackTest, BlockHoldsTheStreamUntilTheCallbackReturns) {
    ReportThread rt;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    HeldCallback cb;
    Observer obs{&cb};
    ASSERT_EQ(aclrtLaunchCallback(HeldCallback::Fn, &cb, ACL_CALLBACK_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(s_, Observer::Fn, &obs), ACL_SUCCESS);
    ASSERT_TRUE(cb.entered.WaitFor(5000));
    // While the callback is held the later task cannot run.
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s_, 50), ACL_ERROR_RT_STREAM_SYNC_TIMEOUT);
    EXPECT_EQ(obs.ran.load(), 0);
    cb.release.Set();
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    EXPECT_EQ(obs.ran.load(), 1);
    EXPECT_TRUE(obs.saw_done.load());
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
}

TEST_F(CallbackTest, NoBlockLetsTheStreamGoOn) {
    ReportThread rt;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    HeldCallback cb;
    Observer obs{&cb};
    ASSERT_EQ(aclrtLaunchCallback(HeldCallback::Fn, &cb, ACL_CALLBACK_NO_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchHostFunc(s_, Observer::Fn, &obs), ACL_SUCCESS);
    // The later task runs while the callback is still held.
    EXPECT_TRUE(WaitUntil(obs.ran, 1, 5000));
    EXPECT_FALSE(obs.saw_done.load());
    EXPECT_EQ(aclrtSynchronizeStreamWithTimeout(s_, 5000), ACL_SUCCESS);
    EXPECT_FALSE(cb.done.IsSet());
    cb.release.Set();
    EXPECT_TRUE(cb.done.WaitFor(5000));
    EXPECT_TRUE(cb.entered.IsSet());
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
}

TEST_F(CallbackTest, CallbackRunsOnlyWhenTheStreamReachesIt) {
    ReportThread rt;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    Gate gate;
    Counter c;
    ASSERT_TRUE(gate.Launch(s_));
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_NO_BLOCK, s_), ACL_SUCCESS);
    ASSERT_TRUE(gate.entered.WaitFor(5000));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_EQ(c.n.load(), 0);
    gate.Open();
    EXPECT_TRUE(c.WaitFor(1));
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
}

// ---------------------------------------------------------------- process_report

TEST_F(CallbackTest, ProcessReportInTheCallingThread) {
    ASSERT_EQ(aclrtSubscribeReport(SelfId(), s_), ACL_SUCCESS);
    Counter c;
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_NO_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_NO_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    // Both were handed over; nothing runs until this thread processes them.
    EXPECT_EQ(c.n.load(), 0);
    int rounds = 0;
    while (c.n.load() < 2 && rounds < 100) {
        aclError r = aclrtProcessReport(100);
        ASSERT_TRUE(r == ACL_SUCCESS || r == ACL_ERROR_RT_REPORT_TIMEOUT) << r;
        ++rounds;
    }
    EXPECT_EQ(c.n.load(), 2);
    EXPECT_FALSE(c.off_caller_thread.load());  // ran right here
    EXPECT_EQ(aclrtProcessReport(10), ACL_ERROR_RT_REPORT_TIMEOUT);
    EXPECT_EQ(aclrtUnSubscribeReport(SelfId(), s_), ACL_SUCCESS);
}

TEST_F(CallbackTest, ProcessReportTimesOut) {
    ASSERT_EQ(aclrtSubscribeReport(SelfId(), s_), ACL_SUCCESS);
    auto t0 = acltest::Clock::now();
    EXPECT_EQ(aclrtProcessReport(30), ACL_ERROR_RT_REPORT_TIMEOUT);
    EXPECT_GE(acltest::Clock::now() - t0, std::chrono::milliseconds(25));
    std::string msg = acltest::RecentErrMsg();
    EXPECT_FALSE(msg.empty());
    EXPECT_EQ(aclrtUnSubscribeReport(SelfId(), s_), ACL_SUCCESS);
}

TEST_F(CallbackTest, ProcessReportBadTimeout) {
    ASSERT_EQ(aclrtSubscribeReport(SelfId(), s_), ACL_SUCCESS);
    EXPECT_EQ(aclrtProcessReport(0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtProcessReport(-2), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtProcessReport(INT32_MIN), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtUnSubscribeReport(SelfId(), s_), ACL_SUCCESS);
}

TEST_F(CallbackTest, ProcessReportForeverReturnsWhenACallbackArrives) {
    ASSERT_EQ(aclrtSubscribeReport(SelfId(), s_), ACL_SUCCESS);
    Counter c;
    Gate gate(30);  // never opened: the callback reaches us after ~30 ms
    ASSERT_TRUE(gate.Launch(s_));
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_NO_BLOCK, s_), ACL_SUCCESS);
    EXPECT_EQ(aclrtProcessReport(-1), ACL_SUCCESS);
    EXPECT_EQ(c.n.load(), 1);
    EXPECT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnSubscribeReport(SelfId(), s_), ACL_SUCCESS);
}

// ---------------------------------------------------------------- errors

TEST_F(CallbackTest, LaunchWithoutSubscribeIsNoCbReg) {
    Counter c;
    EXPECT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_BLOCK, s_), ACL_ERROR_RT_STREAM_NO_CB_REG);
    EXPECT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_NO_BLOCK, nullptr), ACL_ERROR_RT_STREAM_NO_CB_REG);
    std::string msg = acltest::RecentErrMsg();
    EXPECT_TRUE(acltest::Contains(msg, "aclrtLaunchCallback")) << msg;
    EXPECT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    EXPECT_EQ(c.n.load(), 0);
}

TEST_F(CallbackTest, SubscribeTwiceIsStreamSubscribe) {
    ReportThread rt, other;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    EXPECT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    // A stream has one thread.
    EXPECT_EQ(aclrtSubscribeReport(other.id(), s_), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    // The first subscription still serves the stream.
    Counter c;
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    EXPECT_EQ(c.n.load(), 1);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
}

TEST_F(CallbackTest, UnsubscribeErrors) {
    ReportThread rt, other;
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnSubscribeReport(other.id(), s_), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_ERROR_RT_STREAM_SUBSCRIBE);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), BogusPointer()), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSubscribeReport(rt.id(), BogusPointer()), ACL_ERROR_INVALID_PARAM);
}

TEST_F(CallbackTest, LaunchAfterUnsubscribeIsNoCbReg) {
    ReportThread rt;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    Counter c;
    EXPECT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_BLOCK, s_), ACL_ERROR_RT_STREAM_NO_CB_REG);
    // And the stream can be subscribed again, by another thread too.
    ReportThread rt2;
    ASSERT_EQ(aclrtSubscribeReport(rt2.id(), s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    EXPECT_EQ(c.n.load(), 1);
    EXPECT_EQ(aclrtUnSubscribeReport(rt2.id(), s_), ACL_SUCCESS);
}

TEST_F(CallbackTest, LaunchBadArguments) {
    ReportThread rt;
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    Counter c;
    EXPECT_EQ(aclrtLaunchCallback(nullptr, &c, ACL_CALLBACK_BLOCK, s_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(raw_aclrtLaunchCallback(Counter::Fn, &c, 2, s_),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(raw_aclrtLaunchCallback(Counter::Fn, &c, -1, s_),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_BLOCK, BogusPointer()), ACL_ERROR_INVALID_PARAM);
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    EXPECT_EQ(c.n.load(), 0);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
}

TEST_F(CallbackTest, DestroyingASubscribedStream) {
    ReportThread rt;
    aclrtStream s2 = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s2), ACL_SUCCESS);
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s2), ACL_SUCCESS);
    Counter c;
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_BLOCK, s2), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s2), ACL_SUCCESS);
    EXPECT_EQ(c.n.load(), 1);
    // The report thread keeps serving other streams.
    ASSERT_EQ(aclrtSubscribeReport(rt.id(), s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtLaunchCallback(Counter::Fn, &c, ACL_CALLBACK_BLOCK, s_), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s_), ACL_SUCCESS);
    EXPECT_EQ(c.n.load(), 2);
    EXPECT_EQ(aclrtUnSubscribeReport(rt.id(), s_), ACL_SUCCESS);
}

}  // namespace
