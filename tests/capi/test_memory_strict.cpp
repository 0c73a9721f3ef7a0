/*
 * Strict memory mode (OPENACL_STRICT=1, read at aclInit, or acl.json openacl.strict):
 * wrong memcpy kind, copies into the padding, use after free and host pointers passed
 * as device memory are refused; the same wrong kind succeeds in default mode.
 * Contract: docs/runtime.md "Memory" (default and strict mode paragraphs).
 */
#include <cctype>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using acltest::Contains;
using acltest::RecentErrMsg;
using acltest::RunIsolated;
using acltest::ScopedEnv;
using acltest::TempFile;

std::string Lower(std::string s) {
    for (char &c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

class StrictTest : public ::testing::Test {
 protected:
    void SetUp() override {
        setenv("OPENACL_STRICT", "1", 1);
        aclError r = aclInit(nullptr);
        unsetenv("OPENACL_STRICT");
        ASSERT_EQ(r, ACL_SUCCESS);
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        ASSERT_EQ(aclrtMalloc(&dev_, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        ASSERT_EQ(aclrtMalloc(&dev2_, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        ASSERT_EQ(aclrtMallocHost(&pinned_, 256), ACL_SUCCESS);
    }
    void TearDown() override { aclFinalize(); }

    std::vector<uint8_t> ReadBack(const void *dev, size_t n) {
        std::vector<uint8_t> v(n, 0xCD);
        EXPECT_EQ(aclrtMemcpy(v.data(), n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
        return v;
    }

    void *dev_ = nullptr;     // requested 100 bytes (owns 128 + 32)
    void *dev2_ = nullptr;    // requested 100 bytes
    void *pinned_ = nullptr;  // registered host memory
    std::vector<uint8_t> host_ = std::vector<uint8_t>(256, 0x5A);
};

class DefaultModeTest : public StrictTest {
 protected:
    void SetUp() override {
        ScopedEnv strict("OPENACL_STRICT", nullptr);
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        ASSERT_EQ(aclrtMalloc(&dev_, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        ASSERT_EQ(aclrtMalloc(&dev2_, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        ASSERT_EQ(aclrtMallocHost(&pinned_, 256), ACL_SUCCESS);
    }
};

// ---------------------------------------------------------------- strict: kinds

TEST_F(StrictTest, CorrectKindsSucceed) {
    EXPECT_EQ(aclrtMemcpy(dev_, 100, host_.data(), 100, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(dev2_, 100, dev_, 100, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(pinned_, 256, dev2_, 100, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(host_.data(), 256, pinned_, 100, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(dev_, 100, pinned_, 100, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemset(dev_, 100, 7, 100), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(dev_, 100), std::vector<uint8_t>(100, 7));
}

TEST_F(StrictTest, WrongKindIsRefused) {
    struct Case {
        void *dst;
        const void *src;
        aclrtMemcpyKind kind;
        const char *what;
    } cases[] = {
        {host_.data(), dev_, ACL_MEMCPY_HOST_TO_DEVICE, "H2D into host memory"},
        {pinned_, host_.data(), ACL_MEMCPY_HOST_TO_DEVICE, "H2D into registered host memory"},
        {dev_, dev2_, ACL_MEMCPY_HOST_TO_DEVICE, "H2D from device memory"},
        {host_.data(), host_.data() + 128, ACL_MEMCPY_DEVICE_TO_HOST, "D2H from host memory"},
        {dev_, dev2_, ACL_MEMCPY_DEVICE_TO_HOST, "D2H into device memory"},
        {dev_, host_.data(), ACL_MEMCPY_DEVICE_TO_DEVICE, "D2D from host memory"},
        {host_.data(), dev_, ACL_MEMCPY_DEVICE_TO_DEVICE, "D2D into host memory"},
        {dev_, host_.data(), ACL_MEMCPY_HOST_TO_HOST, "H2H into device memory"},
        {host_.data(), dev_, ACL_MEMCPY_HOST_TO_HOST, "H2H from device memory"},
    };
    ASSERT_EQ(aclrtMemset(dev_, 100, 0x11, 100), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(dev2_, 100, 0x22, 100), ACL_SUCCESS);
    for (const Case &c : cases) {
        EXPECT_EQ(aclrtMemcpy(c.dst, 100, c.src, 64, c.kind), ACL_ERROR_RT_PARAM_INVALID) << c.what;
        // The message names the call and the real kinds of the buffers.
        std::string msg = Lower(RecentErrMsg());
        EXPECT_TRUE(Contains(msg, "aclrtmemcpy")) << c.what << ": " << msg;
        EXPECT_TRUE(Contains(msg, "host")) << c.what << ": " << msg;
        EXPECT_TRUE(Contains(msg, "device")) << c.what << ": " << msg;
        EXPECT_EQ(aclrtMemcpyAsync(c.dst, 100, c.src, 64, c.kind, nullptr), ACL_ERROR_RT_PARAM_INVALID) << c.what;
    }
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    // Nothing was copied.
    EXPECT_EQ(ReadBack(dev_, 100), std::vector<uint8_t>(100, 0x11));
    EXPECT_EQ(ReadBack(dev2_, 100), std::vector<uint8_t>(100, 0x22));
    EXPECT_EQ(host_, std::vector<uint8_t>(256, 0x5A));
}

TEST_F(StrictTest, WrongKindIn2dCopyIsRefused) {
    EXPECT_EQ(aclrtMemcpy2d(host_.data(), 16, dev_, 16, 16, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy2dAsync(host_.data(), 16, dev_, 16, 16, 4, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
              ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy2d(dev_, 16, host_.data(), 16, 16, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
}

// ---------------------------------------------------------------- strict: padding

TEST_F(StrictTest, CopyIntoThePaddingIsRefused) {
    EXPECT_EQ(aclrtMemcpy(dev_, 200, host_.data(), 100, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(dev_, 200, host_.data(), 101, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(dev_, 200, host_.data(), 128, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(static_cast<char *>(dev_) + 96, 200, host_.data(), 4, ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(static_cast<char *>(dev_) + 96, 200, host_.data(), 5, ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_ERROR_RT_PARAM_INVALID);
    // Reading from the padding is refused too.
    std::vector<uint8_t> out(256);
    EXPECT_EQ(aclrtMemcpy(out.data(), 256, dev_, 101, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(dev2_, 200, dev_, 101, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpyAsync(dev_, 200, host_.data(), 101, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
              ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemset(dev_, 200, 0, 101), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemsetAsync(dev_, 200, 0, 101, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy2d(dev_, 60, host_.data(), 60, 50, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy2d(dev_, 50, host_.data(), 50, 50, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
}

TEST_F(StrictTest, Align32AllocationsAreCheckedAgainstTheRequestedSize) {
    void *p = nullptr;
    ASSERT_EQ(aclrtMallocAlign32(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(p, 128, host_.data(), 100, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(p, 128, host_.data(), 101, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
}

// ---------------------------------------------------------------- strict: use after free

TEST_F(StrictTest, UseAfterFreeIsRefused) {
    void *p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
    std::vector<uint8_t> out(256);
    EXPECT_EQ(aclrtMemcpy(p, 256, host_.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    // The message names the call and says the block was freed.
    std::string msg = Lower(RecentErrMsg());
    EXPECT_TRUE(Contains(msg, "aclrtmemcpy")) << msg;
    EXPECT_TRUE(Contains(msg, "free")) << msg;
    EXPECT_EQ(aclrtMemcpy(out.data(), 256, p, 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(static_cast<char *>(p) + 32, 200, host_.data(), 8, ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(p, 256, host_.data(), 64, ACL_MEMCPY_DEFAULT), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(dev_, 100, p, 64, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpyAsync(p, 256, host_.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
              ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemset(p, 256, 0, 64), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemsetAsync(p, 256, 0, 64, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    // A second free is still just an unknown pointer.
    EXPECT_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);
}

// ---------------------------------------------------------------- strict: host as device

TEST_F(StrictTest, HostPointerWhereDeviceMemoryIsRequired) {
    EXPECT_EQ(aclrtMemset(host_.data(), 256, 0, 64), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemset(pinned_, 256, 0, 64), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemsetAsync(pinned_, 256, 0, 64, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(pinned_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(host_.data()), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_EQ(host_, std::vector<uint8_t>(256, 0x5A));
}

TEST_F(StrictTest, StrictIsReadAtInitAndEndsWithFinalize) {
    // The environment variable was removed right after init: still strict.
    EXPECT_EQ(aclrtMemcpy(host_.data(), 256, dev_, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(d, 100, 0x33, 100), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(host_.data(), 256, d, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(host_[0], 0x33);
}

/* No init in SetUp: in the isolated child the acl.json init must be the first one. */
class StrictJsonTest : public ::testing::Test {};

TEST_F(StrictJsonTest, StrictFromAclJson) {
    RunIsolated([] {
        ScopedEnv strict("OPENACL_STRICT", nullptr);
        TempFile f(R"({"openacl": {"strict": "1"}})");
        ASSERT_EQ(aclInit(f.path()), ACL_SUCCESS);
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        void *d = nullptr;
        ASSERT_EQ(aclrtMalloc(&d, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        std::vector<uint8_t> h(256, 1);
        EXPECT_EQ(aclrtMemcpy(h.data(), 256, d, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
        EXPECT_EQ(aclrtMemcpy(d, 256, h.data(), 101, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
        EXPECT_EQ(aclrtMemcpy(d, 256, h.data(), 100, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST_F(StrictJsonTest, AclJsonStrictZeroOverridesEnvironment) {
    RunIsolated([] {
        ScopedEnv strict("OPENACL_STRICT", "1");
        TempFile f(R"({"openacl": {"strict": "0"}})");
        ASSERT_EQ(aclInit(f.path()), ACL_SUCCESS);
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        void *d = nullptr;
        ASSERT_EQ(aclrtMalloc(&d, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        std::vector<uint8_t> h(256, 1);
        EXPECT_EQ(aclrtMemcpy(d, 256, h.data(), 101, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

// ---------------------------------------------------------------- default mode

TEST_F(DefaultModeTest, WrongKindIsPerformed) {
    ASSERT_EQ(aclrtMemset(dev_, 100, 0x66, 100), ACL_SUCCESS);
    // H2D whose destination is host memory and source device memory: done anyway.
    EXPECT_EQ(aclrtMemcpy(host_.data(), 256, dev_, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    for (size_t i = 0; i < 256; ++i) EXPECT_EQ(host_[i], i < 64 ? 0x66 : 0x5A) << i;
    // D2H from host into device memory.
    std::vector<uint8_t> src(100, 0x77);
    EXPECT_EQ(aclrtMemcpy(dev2_, 100, src.data(), 100, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(dev2_, 100), src);
    // H2H between device buffers, async too.
    EXPECT_EQ(aclrtMemcpyAsync(dev_, 100, dev2_, 100, ACL_MEMCPY_HOST_TO_HOST, nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(nullptr), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(dev_, 100), src);
    // The same mistake again (logged once) still works.
    EXPECT_EQ(aclrtMemcpy(host_.data(), 256, dev_, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(host_[0], 0x77);
}

size_t CountOccurrences(const std::string &text, const std::string &what) {
    size_t n = 0;
    for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
    return n;
}

TEST_F(StrictJsonTest, DefaultModeWarnsOncePerCallAndKind) {
    RunIsolated([] {
        ScopedEnv strict("OPENACL_STRICT", nullptr);
        ScopedEnv log("OPENACL_LOG", "warning");
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
        void *d = nullptr;
        ASSERT_EQ(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        std::vector<uint8_t> h(64, 0);
        ::testing::internal::CaptureStderr();
        for (int i = 0; i < 3; ++i) {
            EXPECT_EQ(aclrtMemcpy(h.data(), 64, d, 64, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
        }
        std::fflush(stderr);
        std::string once = ::testing::internal::GetCapturedStderr();
        ::testing::internal::CaptureStderr();
        for (int i = 0; i < 3; ++i) {
            EXPECT_EQ(aclrtMemcpy(d, 64, h.data(), 64, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
        }
        std::fflush(stderr);
        std::string other_kind = ::testing::internal::GetCapturedStderr();
        EXPECT_EQ(CountOccurrences(once, "aclrtMemcpy"), 1u) << once;
        EXPECT_EQ(CountOccurrences(other_kind, "aclrtMemcpy"), 1u) << other_kind;
        EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
    });
}

TEST_F(DefaultModeTest, PaddingIsUsableButNotBeyond) {
    EXPECT_EQ(aclrtMemcpy(dev_, 200, host_.data(), 101, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(dev_, 200, host_.data(), 160, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(dev_, 200, host_.data(), 161, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
}

TEST_F(DefaultModeTest, FreeOfHostPointerIsRefusedInEveryMode) {
    EXPECT_EQ(aclrtFree(pinned_), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(host_.data()), ACL_ERROR_INVALID_PARAM);
}

}  // namespace
