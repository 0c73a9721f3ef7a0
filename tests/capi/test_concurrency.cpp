/*
 * Many threads at once: streams on both devices, async copies, events recorded on one
 * device and waited on by another thread's stream on the other device, host functions,
 * launch_callback served by subscribed report threads, per-thread error messages,
 * allocation and handle churn, concurrent init. Contents and counts are checked
 * exactly. Label "concurrency": the ThreadSanitizer build runs this suite.
 * Contract: docs/runtime.md (all sections); acl_rt.h "Thread-safety".
 */
#include <barrier>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using acltest::AclTest;
using acltest::Contains;
using acltest::RecentErrMsg;
using acltest::ReportThread;

constexpr int kThreads = 8;
constexpr int kIters = 32;
constexpr size_t kN = 4096;

/* Soft checks for worker threads: record a failure and keep going, so that every
 * thread still reaches every barrier. */
#define WCHECK(ok, expr)                                                          \
    do {                                                                          \
        if (!(expr)) {                                                            \
            ADD_FAILURE() << "thread check failed: " #expr;                       \
            ok = false;                                                           \
        }                                                                         \
    } while (0)
#define WCALL(ok, call) WCHECK(ok, (call) == ACL_SUCCESS)

struct CountingCallback {
    std::atomic<int> *counter;
    static void Fn(void *p) { static_cast<CountingCallback *>(p)->counter->fetch_add(1); }
};

class ConcurrencyTest : public AclTest {
 protected:
    static size_t FreeOn(int32_t dev) {
        size_t f = 0, t = 0;
        EXPECT_EQ(aclrtSetDevice(dev), ACL_SUCCESS);
        EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_SUCCESS);
        EXPECT_EQ(aclrtResetDevice(dev), ACL_SUCCESS);
        return f;
    }
};

std::vector<uint8_t> Pattern(int t, int i) {
    std::vector<uint8_t> v(kN);
    for (size_t k = 0; k < kN; ++k) v[k] = static_cast<uint8_t>(t * 37 + i * 11 + k * 3 + (k >> 7));
    return v;
}

TEST_F(ConcurrencyTest, ThreadsStreamsEventsCallbacksAcrossDevices) {
    uint32_t ndev = 0;
    ASSERT_EQ(aclrtGetDeviceCount(&ndev), ACL_SUCCESS);
    ASSERT_GE(ndev, 2u);
    const size_t free0 = FreeOn(0), free1 = FreeOn(1);

    ReportThread report[2];
    std::atomic<int> host_funcs{0}, cb_block{0}, cb_noblock{0};
    CountingCallback hf{&host_funcs}, blk{&cb_block};
    std::barrier<> barrier(kThreads);
    std::vector<aclrtEvent> published_event(kThreads, nullptr);
    std::vector<void *> published_buf(kThreads, nullptr);
    std::atomic<int> verified_iters{0}, verified_neighbours{0}, verified_messages{0};

    auto worker = [&](int t) {
        bool ok = true;
        // This thread's own NO_BLOCK count, so that it unsubscribes only after they ran.
        std::atomic<int> mine{0};
        CountingCallback my_nblk{&mine};
        // Even threads use the devices' default contexts, odd threads explicit ones.
        aclrtContext ctx[2] = {nullptr, nullptr};
        for (int d = 0; d < 2; ++d) {
            if (t % 2 == 0) {
                WCALL(ok, aclrtSetDevice(d));
                WCALL(ok, aclrtGetCurrentContext(&ctx[d]));
            } else {
                WCALL(ok, aclrtCreateContext(&ctx[d], d));
            }
        }
        aclrtStream a0 = nullptr, a1 = nullptr;
        aclrtEvent e0 = nullptr, e1 = nullptr, pub = nullptr;
        void *A0 = nullptr, *A1 = nullptr, *B1 = nullptr;
        WCALL(ok, aclrtSetCurrentContext(ctx[0]));
        WCALL(ok, aclrtCreateStream(&a0));
        WCALL(ok, aclrtCreateEvent(&e0));
        WCALL(ok, aclrtMalloc(&A0, kN, ACL_MEM_MALLOC_HUGE_FIRST));
        WCALL(ok, aclrtSetCurrentContext(ctx[1]));
        WCALL(ok, aclrtCreateStream(&a1));
        WCALL(ok, aclrtCreateEvent(&e1));
        WCALL(ok, aclrtCreateEvent(&pub));
        WCALL(ok, aclrtMalloc(&A1, kN, ACL_MEM_MALLOC_HUGE_FIRST));
        WCALL(ok, aclrtMalloc(&B1, kN, ACL_MEM_MALLOC_HUGE_FIRST));
        WCALL(ok, aclrtSubscribeReport(report[0].id(), a0));
        WCALL(ok, aclrtSubscribeReport(report[1].id(), a1));

        // Phase 1: a pipeline across both devices, kIters times.
        std::vector<uint8_t> out(kN), out2(kN);
        for (int i = 0; ok && i < kIters; ++i) {
            std::vector<uint8_t> in = Pattern(t, i);
            std::fill(out.begin(), out.end(), 0);
            std::fill(out2.begin(), out2.end(), 0);
            const int fill = (t * 16 + i) & 0xFF;
            WCALL(ok, aclrtMemcpyAsync(A0, kN, in.data(), kN, ACL_MEMCPY_HOST_TO_DEVICE, a0));
            WCALL(ok, aclrtRecordEvent(e0, a0));
            WCALL(ok, aclrtLaunchCallback(CountingCallback::Fn, &my_nblk, ACL_CALLBACK_NO_BLOCK, a0));
            WCALL(ok, aclrtLaunchHostFunc(a0, CountingCallback::Fn, &hf));
            WCALL(ok, aclrtStreamWaitEvent(a1, e0));
            WCALL(ok, aclrtMemcpyAsync(A1, kN, A0, kN, ACL_MEMCPY_DEVICE_TO_DEVICE, a1));
            WCALL(ok, aclrtMemsetAsync(B1, kN, 0x100 + fill, kN, a1));
            WCALL(ok, aclrtLaunchCallback(CountingCallback::Fn, &blk, ACL_CALLBACK_BLOCK, a1));
            WCALL(ok, aclrtMemcpyAsync(out.data(), kN, A1, kN, ACL_MEMCPY_DEVICE_TO_HOST, a1));
            WCALL(ok, aclrtMemcpyAsync(out2.data(), kN, B1, kN, ACL_MEMCPY_DEFAULT, a1));
            WCALL(ok, aclrtRecordEvent(e1, a1));
            WCALL(ok, aclrtSynchronizeEvent(e1));
            WCHECK(ok, out == in);
            WCHECK(ok, out2 == std::vector<uint8_t>(kN, static_cast<uint8_t>(fill)));
            if (ok) verified_iters.fetch_add(1);

            // Per-thread error messages do not cross threads.
            if (i % 4 == t % 4) {
                char small[8];
                WCHECK(ok, aclrtMemcpy(small, sizeof small, in.data(), 64, ACL_MEMCPY_HOST_TO_HOST) ==
                               ACL_ERROR_RT_PARAM_INVALID);
                std::this_thread::yield();
                std::string msg = RecentErrMsg();
                WCHECK(ok, Contains(msg, "aclrtMemcpy"));
                WCHECK(ok, !Contains(msg, "aclrtFree"));
                WCHECK(ok, aclrtFree(acltest::BogusPointer()) == ACL_ERROR_INVALID_PARAM);
                std::this_thread::yield();
                msg = RecentErrMsg();
                WCHECK(ok, Contains(msg, "aclrtFree"));
                WCHECK(ok, RecentErrMsg().empty());
                if (ok) verified_messages.fetch_add(1);
            }
        }

        // Phase 2: each thread publishes a device-1 buffer and an event; its neighbour
        // waits on that event from a device-0 stream and reads the buffer.
        if (ok) {
            WCALL(ok, aclrtMemsetAsync(B1, kN, 0x40 + t, kN, a1));
            WCALL(ok, aclrtRecordEvent(pub, a1));
            published_event[t] = pub;
            published_buf[t] = B1;
        }
        barrier.arrive_and_wait();
        const int n = (t + 1) % kThreads;
        if (ok && published_event[n] != nullptr) {
            std::vector<uint8_t> got(kN, 0);
            WCALL(ok, aclrtSetCurrentContext(ctx[0]));
            WCALL(ok, aclrtStreamWaitEvent(a0, published_event[n]));
            WCALL(ok, aclrtMemcpyAsync(got.data(), kN, published_buf[n], kN, ACL_MEMCPY_DEVICE_TO_HOST, a0));
            WCALL(ok, aclrtLaunchCallback(CountingCallback::Fn, &blk, ACL_CALLBACK_BLOCK, a0));
            WCALL(ok, aclrtSynchronizeStream(a0));
            WCHECK(ok, got == std::vector<uint8_t>(kN, static_cast<uint8_t>(0x40 + n)));
            if (ok) verified_neighbours.fetch_add(1);
        }
        barrier.arrive_and_wait();  // nobody frees a buffer its neighbour still reads

        // Teardown, in this thread's own contexts.
        WCALL(ok, aclrtSetCurrentContext(ctx[0]));
        WCALL(ok, aclrtSynchronizeStream(a0));
        auto deadline = acltest::Clock::now() + std::chrono::seconds(10);
        while (mine.load() < kIters && acltest::Clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        WCHECK(ok, mine.load() == kIters);
        cb_noblock.fetch_add(mine.load());
        WCALL(ok, aclrtUnSubscribeReport(report[0].id(), a0));
        WCALL(ok, aclrtDestroyStream(a0));
        WCALL(ok, aclrtDestroyEvent(e0));
        WCALL(ok, aclrtFree(A0));
        WCALL(ok, aclrtSetCurrentContext(ctx[1]));
        WCALL(ok, aclrtSynchronizeStream(a1));
        WCALL(ok, aclrtUnSubscribeReport(report[1].id(), a1));
        WCALL(ok, aclrtDestroyStream(a1));
        WCALL(ok, aclrtDestroyEvent(e1));
        WCALL(ok, aclrtDestroyEvent(pub));
        WCALL(ok, aclrtFree(A1));
        WCALL(ok, aclrtFree(B1));
        for (int d = 0; d < 2; ++d) {
            if (t % 2 == 0) {
                WCALL(ok, aclrtResetDevice(d));
            } else {
                WCALL(ok, aclrtDestroyContext(ctx[d]));
            }
        }
    };

    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
    for (auto &th : threads) th.join();

    report[0].Stop();
    report[1].Stop();

    EXPECT_EQ(verified_iters.load(), kThreads * kIters);
    EXPECT_EQ(verified_neighbours.load(), kThreads);
    EXPECT_EQ(verified_messages.load(), kThreads * kIters / 4);
    EXPECT_EQ(host_funcs.load(), kThreads * kIters);
    EXPECT_EQ(cb_noblock.load(), kThreads * kIters);
    EXPECT_EQ(cb_block.load(), kThreads * kIters + kThreads);
    EXPECT_EQ(report[0].unexpected_errors(), 0) << report[0].last_unexpected();
    EXPECT_EQ(report[1].unexpected_errors(), 0) << report[1].last_unexpected();
    // Every allocation was returned.
    EXPECT_EQ(FreeOn(0), free0);
    EXPECT_EQ(FreeOn(1), free1);
}

TEST_F(ConcurrencyTest, AllocationAndHandleChurn) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);  // main holds a reference on both devices
    const size_t free0 = FreeOn(0), free1 = FreeOn(1);
    std::atomic<int> done_allocs{0};
    std::atomic<int> bad{0};

    auto worker = [&](int t) {
        bool ok = true;
        std::mt19937 rng(static_cast<uint32_t>(t) * 7919u + 1u);
        const int32_t dev = t % 2;
        WCALL(ok, aclrtSetDevice(dev));
        std::vector<uint8_t> in, out;
        for (int i = 0; ok && i < 60; ++i) {
            const size_t size = 1 + rng() % 5000;
            void *p = nullptr;
            WCALL(ok, aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST));
            if (!ok) break;
            WCHECK(ok, reinterpret_cast<uintptr_t>(p) % 64 == 0);
            in.assign(size, static_cast<uint8_t>(t * 31 + i));
            out.assign(size, 0);
            WCALL(ok, aclrtMemcpy(p, size, in.data(), size, ACL_MEMCPY_HOST_TO_DEVICE));
            WCALL(ok, aclrtMemcpy(out.data(), size, p, size, ACL_MEMCPY_DEVICE_TO_HOST));
            WCHECK(ok, out == in);
            WCALL(ok, aclrtFree(p));
            // No second free here: another thread may already own the same address.
            if (ok) done_allocs.fetch_add(1);
            if (i % 6 == 0) {
                aclrtStream s = nullptr;
                aclrtEvent e = nullptr;
                WCALL(ok, aclrtCreateStream(&s));
                WCALL(ok, aclrtCreateEvent(&e));
                WCALL(ok, aclrtRecordEvent(e, s));
                WCALL(ok, aclrtSynchronizeEvent(e));
                WCALL(ok, aclrtDestroyEvent(e));
                WCALL(ok, aclrtDestroyStream(s));
            }
            if (i % 10 == 0) {
                // Extra references on the other device come and go.
                WCALL(ok, aclrtSetDevice(1 - dev));
                WCALL(ok, aclrtResetDevice(1 - dev));
                WCALL(ok, aclrtSetDevice(dev));
                WCALL(ok, aclrtResetDevice(dev));
                int32_t cur = -1;
                // The thread's current context was last set by aclrtSetDevice(dev).
                WCALL(ok, aclrtGetDevice(&cur));
                WCHECK(ok, cur == dev);
            }
        }
        WCALL(ok, aclrtResetDevice(dev));
        if (!ok) bad.fetch_add(1);
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
    for (auto &th : threads) th.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(done_allocs.load(), kThreads * 60);
    EXPECT_EQ(FreeOn(0), free0);
    EXPECT_EQ(FreeOn(1), free1);
    int32_t cur = -1;
    EXPECT_EQ(aclrtGetDevice(&cur), ACL_SUCCESS);
}

TEST_F(ConcurrencyTest, ManyProducersOneReportThread) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext ctx = nullptr;
    ASSERT_EQ(aclrtGetCurrentContext(&ctx), ACL_SUCCESS);
    ReportThread report;
    std::atomic<int> count{0};
    constexpr int kPer = 40;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            bool ok = true;
            std::atomic<int> mine{0};
            CountingCallback cb{&mine};
            WCALL(ok, aclrtSetCurrentContext(ctx));
            aclrtStream s = nullptr;
            WCALL(ok, aclrtCreateStream(&s));
            WCALL(ok, aclrtSubscribeReport(report.id(), s));
            for (int i = 0; ok && i < kPer; ++i) {
                auto block = (i + t) % 2 ? ACL_CALLBACK_BLOCK : ACL_CALLBACK_NO_BLOCK;
                WCALL(ok, aclrtLaunchCallback(CountingCallback::Fn, &cb, block, s));
            }
            WCALL(ok, aclrtSynchronizeStream(s));
            // NO_BLOCK callbacks may still be queued: unsubscribe only after they ran.
            auto deadline = acltest::Clock::now() + std::chrono::seconds(10);
            while (mine.load() < kPer && acltest::Clock::now() < deadline) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            WCHECK(ok, mine.load() == kPer);
            count.fetch_add(mine.load());
            WCALL(ok, aclrtUnSubscribeReport(report.id(), s));
            WCALL(ok, aclrtDestroyStream(s));
        });
    }
    for (auto &th : threads) th.join();
    report.Stop();
    EXPECT_EQ(count.load(), kThreads * kPer);
    EXPECT_EQ(report.unexpected_errors(), 0) << report.last_unexpected();
}

TEST_F(ConcurrencyTest, RacingFreesOfOnePointer) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    const size_t base = FreeOn(0);
    for (int round = 0; round < 40; ++round) {
        void *p = nullptr;
        ASSERT_EQ(aclrtMalloc(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        std::atomic<int> ok{0}, invalid{0}, other{0};
        std::barrier<> start(kThreads);
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&] {
                start.arrive_and_wait();
                aclError r = aclrtFree(p);
                (r == ACL_SUCCESS ? ok : r == ACL_ERROR_INVALID_PARAM ? invalid : other).fetch_add(1);
            });
        }
        for (auto &th : threads) th.join();
        ASSERT_EQ(ok.load(), 1) << "round " << round;
        ASSERT_EQ(invalid.load(), kThreads - 1) << "round " << round;
        ASSERT_EQ(other.load(), 0) << "round " << round;
    }
    EXPECT_EQ(FreeOn(0), base);
}

TEST_F(ConcurrencyTest, RacingSubscribesOfOneStream) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    std::vector<std::unique_ptr<ReportThread>> reporters;
    for (int t = 0; t < kThreads; ++t) reporters.push_back(std::make_unique<ReportThread>());
    std::atomic<int> ok{0}, repeat{0}, other{0};
    std::atomic<int> winner{-1};
    std::barrier<> start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            aclError r = aclrtSubscribeReport(reporters[t]->id(), s);
            if (r == ACL_SUCCESS) {
                ok.fetch_add(1);
                winner = t;
            } else if (r == ACL_ERROR_RT_STREAM_SUBSCRIBE) {
                repeat.fetch_add(1);
            } else {
                other.fetch_add(1);
            }
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(ok.load(), 1);
    EXPECT_EQ(repeat.load(), kThreads - 1);
    EXPECT_EQ(other.load(), 0);
    ASSERT_GE(winner.load(), 0);
    // The winner really serves the stream.
    std::atomic<int> count{0};
    CountingCallback cb{&count};
    EXPECT_EQ(aclrtLaunchCallback(CountingCallback::Fn, &cb, ACL_CALLBACK_BLOCK, s), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_EQ(count.load(), 1);
    auto deadline = acltest::Clock::now() + std::chrono::seconds(5);
    while (reporters[winner]->processed() < 1 && acltest::Clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(reporters[winner]->processed(), 1);
    EXPECT_EQ(aclrtUnSubscribeReport(reporters[winner]->id(), s), ACL_SUCCESS);
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
}

/* Destroying a handle while another thread uses it is the caller's race, never a
 * crash: the user sees success until the destroy and 100000 afterwards. */
TEST_F(ConcurrencyTest, UsingAStreamWhileAnotherThreadDestroysIt) {
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    aclrtContext ctx = nullptr;
    ASSERT_EQ(aclrtGetCurrentContext(&ctx), ACL_SUCCESS);
    for (int round = 0; round < 10; ++round) {
        aclrtStream s = nullptr;
        aclrtEvent e = nullptr;
        ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
        ASSERT_EQ(aclrtCreateEvent(&e), ACL_SUCCESS);
        std::atomic<int> enqueued{0}, ran{0};
        CountingCallback cb{&ran};
        std::atomic<bool> bad_code{false}, success_after_invalid{false};
        std::thread user([&] {
            EXPECT_EQ(aclrtSetCurrentContext(ctx), ACL_SUCCESS);
            bool seen_invalid = false;
            for (int i = 0; i < 100000; ++i) {
                aclError r1 = aclrtLaunchHostFunc(s, CountingCallback::Fn, &cb);
                aclError r2 = aclrtRecordEvent(e, s);
                aclrtStreamStatus st;
                aclError r3 = aclrtStreamQuery(s, &st);
                for (aclError r : {r1, r2, r3}) {
                    if (r == ACL_ERROR_INVALID_PARAM) {
                        seen_invalid = true;
                    } else if (r == ACL_SUCCESS) {
                        if (seen_invalid) success_after_invalid = true;
                    } else {
                        bad_code = true;
                    }
                }
                if (r1 == ACL_SUCCESS) enqueued.fetch_add(1);
                if (seen_invalid && i > 0 && r1 == ACL_ERROR_INVALID_PARAM && r2 == ACL_ERROR_INVALID_PARAM) break;
            }
        });
        while (enqueued.load() < 20) std::this_thread::yield();
        EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
        user.join();
        EXPECT_FALSE(bad_code.load()) << "round " << round;
        EXPECT_FALSE(success_after_invalid.load()) << "round " << round;
        EXPECT_LE(ran.load(), enqueued.load());
        EXPECT_GE(ran.load(), 20);
        EXPECT_EQ(aclrtDestroyEvent(e), ACL_SUCCESS);
    }
}

class ConcurrentInitTest : public ::testing::Test {
 protected:
    void TearDown() override {
        while (aclFinalize() == ACL_SUCCESS) {
        }
    }
};

TEST_F(ConcurrentInitTest, OneInitWinsAndEveryOtherCounts) {
    std::atomic<int> success{0}, repeat{0}, other{0};
    std::barrier<> start(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            start.arrive_and_wait();
            aclError r = aclInit(nullptr);
            if (r == ACL_SUCCESS) {
                success.fetch_add(1);
            } else if (r == ACL_ERROR_REPEAT_INITIALIZE) {
                repeat.fetch_add(1);
            } else {
                other.fetch_add(1);
            }
            uint32_t n = 0;
            EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(success.load(), 1);
    EXPECT_EQ(repeat.load(), kThreads - 1);
    EXPECT_EQ(other.load(), 0);
    uint64_t left = 0;
    EXPECT_EQ(aclFinalizeReference(&left), ACL_SUCCESS);
    EXPECT_EQ(left, static_cast<uint64_t>(kThreads - 1));
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
}

}  // namespace
