/*
 * Shared helpers for the C API suites: fixtures that leave the library finalised,
 * scoped environment variables and temp files, flags with bounded waits, a host
 * function that holds a stream until released, and a report thread for callbacks.
 *
 * Everything here goes through the public C API only (acl/acl.h).
 */
#ifndef OPENACL_TESTS_CAPI_TEST_UTIL_H_
#define OPENACL_TESTS_CAPI_TEST_UTIL_H_

#include <dirent.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"

namespace acltest {

using Clock = std::chrono::steady_clock;

/* The recent error message as a string; NULL reads as "". */
inline std::string RecentErrMsg() {
    const char *m = aclGetRecentErrMsg();
    return m == nullptr ? std::string() : std::string(m);
}

inline bool Contains(const std::string &haystack, const std::string &needle) {
    return haystack.find(needle) != std::string::npos;
}

inline size_t RoundUp32(size_t n) { return (n + 31) / 32 * 32; }
/* What aclrtMalloc charges against the device: rounded to 32 plus 32 bytes of padding. */
inline size_t MallocFootprint(size_t n) { return RoundUp32(n) + 32; }

inline bool Aligned64(const void *p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

/* A pointer that no registry knows (inside a static object of ours). */
inline void *BogusPointer() {
    static uint64_t storage[16];
    return &storage[3];
}

/* Sets (or, with value == nullptr, unsets) an environment variable for a scope. */
class ScopedEnv {
 public:
    ScopedEnv(const char *name, const char *value) : name_(name) {
        if (const char *old = std::getenv(name)) old_ = std::string(old);
        if (value != nullptr) {
            setenv(name, value, 1);
        } else {
            unsetenv(name);
        }
    }
    ~ScopedEnv() { Restore(); }
    void Restore() {
        if (restored_) return;
        restored_ = true;
        if (old_) {
            setenv(name_.c_str(), old_->c_str(), 1);
        } else {
            unsetenv(name_.c_str());
        }
    }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

 private:
    std::string name_;
    std::optional<std::string> old_;
    bool restored_ = false;
};

/* Removes a file, or a folder with everything in it. */
inline void RemoveTree(const std::string &path) {
    DIR *d = opendir(path.c_str());
    if (d != nullptr) {
        while (dirent *e = readdir(d)) {
            std::string n = e->d_name;
            if (n == "." || n == "..") continue;
            RemoveTree(path + "/" + n);
        }
        closedir(d);
        rmdir(path.c_str());
    } else {
        unlink(path.c_str());
    }
}

/* A fresh folder, removed with its content at scope exit. */
class TempDir {
 public:
    TempDir() {
        const char *dir = std::getenv("TMPDIR");
        std::string tmpl = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/openacl_test_XXXXXX";
        if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
        EXPECT_FALSE(path_.empty());
    }
    ~TempDir() {
        if (!path_.empty()) RemoveTree(path_);
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    const std::string &path() const { return path_; }

 private:
    std::string path_;
};

/* Every regular file under root, as paths relative to root, sorted. */
inline void ListFilesInto(const std::string &root, const std::string &rel, std::vector<std::string> *out) {
    DIR *d = opendir((root + rel).c_str());
    if (d == nullptr) return;
    while (dirent *e = readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        std::string child = rel + "/" + n;
        struct stat st {};
        if (stat((root + child).c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            ListFilesInto(root, child, out);
        } else {
            out->push_back(child.substr(1));
        }
    }
    closedir(d);
}
inline std::vector<std::string> ListFiles(const std::string &root) {
    std::vector<std::string> out;
    ListFilesInto(root, "", &out);
    std::sort(out.begin(), out.end());
    return out;
}

/* A file with the given content, removed at scope exit. */
class TempFile {
 public:
    explicit TempFile(const std::string &content, const char *suffix = ".json") {
        const char *dir = std::getenv("TMPDIR");
        std::string tmpl = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/openacl_test_XXXXXX" + suffix;
        int fd = mkstemps(tmpl.data(), static_cast<int>(std::string(suffix).size()));
        if (fd < 0) {
            ADD_FAILURE() << "mkstemps failed for " << tmpl;
            return;
        }
        size_t done = 0;
        while (done < content.size()) {
            ssize_t w = write(fd, content.data() + done, content.size() - done);
            if (w <= 0) break;
            done += static_cast<size_t>(w);
        }
        close(fd);
        path_ = tmpl;
    }
    ~TempFile() {
        if (!path_.empty()) unlink(path_.c_str());
    }
    const char *path() const { return path_.c_str(); }
    TempFile(const TempFile &) = delete;
    TempFile &operator=(const TempFile &) = delete;

 private:
    std::string path_;
};

/* A one-shot flag with bounded waits. */
class Flag {
 public:
    void Set() {
        // Notify under the lock: a waiter may destroy the Flag as soon as it sees set_.
        std::lock_guard<std::mutex> lock(mu_);
        set_ = true;
        cv_.notify_all();
    }
    bool IsSet() {
        std::lock_guard<std::mutex> lock(mu_);
        return set_;
    }
    /* true when set within ms milliseconds. */
    bool WaitFor(int ms) {
        std::unique_lock<std::mutex> lock(mu_);
        return cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return set_; });
    }

 private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool set_ = false;
};

/* A host function (aclrtLaunchHostFunc) that holds its stream until Open() or until
 * max_hold_ms passes, whichever comes first. entered/finished say where it is. */
struct Gate {
    explicit Gate(int max_hold = 5000) : max_hold_ms(max_hold) {}
    /* A test that ends early (failed assertion, or a runtime that let a stream run
     * ahead) must not leave a launched gate pointing at a dead stack frame. */
    ~Gate() {
        Open();
        if (launched) finished.WaitFor(max_hold_ms + 5000);
    }
    Gate(const Gate &) = delete;
    Gate &operator=(const Gate &) = delete;
    int max_hold_ms;
    bool launched = false;
    Flag entered;
    Flag opened;
    Flag finished;
    std::atomic<bool> released_by_timeout{false};

    void Open() { opened.Set(); }
    static void Fn(void *p) {
        auto *g = static_cast<Gate *>(p);
        g->entered.Set();
        if (!g->opened.WaitFor(g->max_hold_ms)) g->released_by_timeout = true;
        g->finished.Set();
    }
    /* Queues the gate on stream; true on success. */
    bool Launch(aclrtStream stream) {
        launched = aclrtLaunchHostFunc(stream, &Gate::Fn, this) == ACL_SUCCESS;
        return launched;
    }
};

/* Counts its invocations; remembers the thread of the last one. */
struct Counter {
    std::atomic<int> n{0};
    std::atomic<bool> off_caller_thread{true};
    std::thread::id caller = std::this_thread::get_id();
    static void Fn(void *p) {
        auto *c = static_cast<Counter *>(p);
        if (std::this_thread::get_id() == c->caller) c->off_caller_thread = false;
        c->n.fetch_add(1);
    }
    /* Waits (bounded) until at least want invocations happened. */
    bool WaitFor(int want, int ms = 5000) {
        auto deadline = Clock::now() + std::chrono::milliseconds(ms);
        while (n.load() < want) {
            if (Clock::now() > deadline) return false;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        return true;
    }
};

/* A std::thread that serves callbacks: loops aclrtProcessReport(10) until stopped. */
class ReportThread {
 public:
    ReportThread() : th_([this] { Loop(); }) {}
    ~ReportThread() { Stop(); }
    /* The pthread id to pass to aclrtSubscribeReport. */
    uint64_t id() { return static_cast<uint64_t>(th_.native_handle()); }
    std::thread::id thread_id() const { return th_.get_id(); }
    void Stop() {
        stop_ = true;
        if (th_.joinable()) th_.join();
    }
    int processed() const { return processed_.load(); }
    int unexpected_errors() const { return unexpected_.load(); }
    int last_unexpected() const { return last_unexpected_.load(); }

 private:
    void Loop() {
        while (!stop_.load()) {
            aclError r = aclrtProcessReport(10);
            if (r == ACL_SUCCESS) {
                processed_.fetch_add(1);
            } else if (r != ACL_ERROR_RT_REPORT_TIMEOUT) {
                unexpected_.fetch_add(1);
                last_unexpected_ = r;
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        }
    }
    std::atomic<bool> stop_{false};
    std::atomic<int> processed_{0};
    std::atomic<int> unexpected_{0};
    std::atomic<int> last_unexpected_{0};
    std::thread th_;  // last: starts after the counters exist
};

/* Library initialised with defaults for each test; finalised afterwards (whatever the
 * test did: aclFinalize on an already finalised library just returns 100037). */
class AclTest : public ::testing::Test {
 protected:
    void SetUp() override {
        aclError r = aclInit(nullptr);
        if (r == ACL_ERROR_REPEAT_INITIALIZE) {
            ADD_FAILURE() << "a previous test left the library initialised";
            aclFinalize();
            r = aclInit(nullptr);
        }
        ASSERT_EQ(r, ACL_SUCCESS);
    }
    void TearDown() override { aclFinalize(); }
};

/* AclTest plus device 0 set on the test thread; device_count_ holds the device count. */
class DeviceTest : public AclTest {
 protected:
    void SetUp() override {
        AclTest::SetUp();
        if (HasFatalFailure()) return;
        ASSERT_EQ(aclrtGetDeviceCount(&device_count_), ACL_SUCCESS);
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    }
    uint32_t device_count_ = 0;
};

/* In a death-test child GoogleTest forwards no events, so failures would go unseen:
 * print the current test's failed parts to stderr (the parent shows the child's
 * stderr) and return the exit code. */
inline int ReportChildFailures() {
    const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
    if (info == nullptr) return 2;
    const ::testing::TestResult *result = info->result();
    int failed = 0;
    for (int i = 0; i < result->total_part_count(); ++i) {
        const ::testing::TestPartResult &part = result->GetTestPartResult(i);
        if (!part.failed()) continue;
        ++failed;
        std::fprintf(stderr, "%s:%d: %s\n", part.file_name() ? part.file_name() : "?", part.line_number(),
                     part.message());
    }
    std::fflush(stderr);
    return failed == 0 ? 0 : 1;
}

/* Runs body in a fresh process (GoogleTest's death-test machinery in "threadsafe"
 * style: the binary re-executes just this test), so acl.json content, environment
 * and the "first successful init" state cannot leak into other tests. Failures in
 * the child are printed by the child (see the parent's "Actual msg") and make it
 * exit non-zero. */
template <class Body>
void RunIsolated(Body body) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            body();
            aclFinalize();
            std::fflush(stdout);
            std::exit(ReportChildFailures());
        },
        ::testing::ExitedWithCode(0), "");
}

}  // namespace acltest

#endif  // OPENACL_TESTS_CAPI_TEST_UTIL_H_
