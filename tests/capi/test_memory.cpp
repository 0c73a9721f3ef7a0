/*
 * Memory in default mode: allocation rules (rounding, padding, alignment, capacity),
 * get_mem_info accounting, the registry's checks on free, every copy flavour and its
 * validation, memset, cache maintenance. Strict mode lives in test_memory_strict.cpp.
 * Contract: docs/runtime.md "Memory"; spec/pyacl-api.md §2.5.
 */
#include <cctype>
#include <cstring>
#include <string>
#include <numeric>
#include <vector>

#include "raw_enums.h"
#include "test_util.h"

namespace {

using acltest::Aligned64;
using acltest::BogusPointer;
using acltest::Contains;
using acltest::DeviceTest;
using acltest::Gate;
using acltest::MallocFootprint;
using acltest::RecentErrMsg;
using acltest::RoundUp32;
using acltest::ScopedEnv;

class MemoryTest : public DeviceTest {
 protected:
    static size_t FreeBytes() {
        size_t f = 0, t = 0;
        EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_SUCCESS);
        return f;
    }
    static std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
        std::vector<uint8_t> v(n);
        for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 31 + (i >> 8));
        return v;
    }
    static std::vector<uint8_t> ReadBack(const void *dev, size_t n) {
        std::vector<uint8_t> v(n, 0xCD);
        EXPECT_EQ(aclrtMemcpy(v.data(), n, dev, n, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
        return v;
    }
};

/* Small capacity, set through the environment before init (read at init). */
class SmallDeviceTest : public ::testing::Test {
 protected:
    static constexpr size_t kCapacity = 1 << 20;
    void SetUp() override {
        ScopedEnv mem("OPENACL_DEVICE_MEMORY", "1048576");
        ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        mem.Restore();
        ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    }
    void TearDown() override { aclFinalize(); }
};

// ---------------------------------------------------------------- malloc

TEST_F(MemoryTest, MallocIs64ByteAlignedForEverySizeAndPolicy) {
    const aclrtMemMallocPolicy policies[] = {
        ACL_MEM_MALLOC_HUGE_FIRST,     ACL_MEM_MALLOC_HUGE_ONLY,     ACL_MEM_MALLOC_NORMAL_ONLY,
        ACL_MEM_MALLOC_HUGE_FIRST_P2P, ACL_MEM_MALLOC_HUGE_ONLY_P2P, ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
        ACL_MEM_MALLOC_HUGE1G_ONLY,    ACL_MEM_MALLOC_HUGE1G_ONLY_P2P,
        static_cast<aclrtMemMallocPolicy>(ACL_MEM_MALLOC_HUGE_FIRST | ACL_MEM_TYPE_LOW_BAND_WIDTH),
        static_cast<aclrtMemMallocPolicy>(ACL_MEM_MALLOC_NORMAL_ONLY | ACL_MEM_TYPE_HIGH_BAND_WIDTH),
        static_cast<aclrtMemMallocPolicy>(ACL_MEM_MALLOC_HUGE_ONLY | ACL_MEM_ACCESS_USER_SPACE_READONLY),
    };
    for (auto policy : policies) {
        for (size_t size : {size_t{1}, size_t{31}, size_t{32}, size_t{33}, size_t{64}, size_t{100}, size_t{4097},
                            size_t{1} << 20}) {
            void *p = nullptr;
            ASSERT_EQ(aclrtMalloc(&p, size, policy), ACL_SUCCESS) << "policy " << policy << " size " << size;
            EXPECT_NE(p, nullptr);
            EXPECT_TRUE(Aligned64(p)) << p;
            EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
        }
    }
}

TEST_F(MemoryTest, AllocationsDoNotOverlap) {
    std::vector<void *> ptrs;
    std::vector<size_t> sizes = {1, 100, 4096, 33, 64, 1000};
    for (size_t i = 0; i < sizes.size(); ++i) {
        void *p = nullptr;
        ASSERT_EQ(aclrtMalloc(&p, sizes[i], ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        ASSERT_EQ(aclrtMemset(p, sizes[i], static_cast<int32_t>(i + 1), sizes[i]), ACL_SUCCESS);
        ptrs.push_back(p);
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
        EXPECT_EQ(ReadBack(ptrs[i], sizes[i]), std::vector<uint8_t>(sizes[i], static_cast<uint8_t>(i + 1)));
        EXPECT_EQ(aclrtFree(ptrs[i]), ACL_SUCCESS);
    }
}

TEST_F(MemoryTest, MallocBadArguments) {
    void *p = reinterpret_cast<void *>(0x1);
    EXPECT_EQ(aclrtMalloc(nullptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocAlign32(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocCached(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocAlign32(nullptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocCached(nullptr, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM);
}

TEST_F(MemoryTest, MallocAcceptsAnyPolicyValue) {
    // CANN picks a page size for unknown policies instead of failing (spec §2.5).
    for (uint32_t policy : {8u, 9u, 0x200u, 0x2000u, 0x200000u, 0xFFFFFFFFu, 0x80000000u}) {
        void *p = nullptr;
        ASSERT_EQ(raw_aclrtMalloc(&p, 64, static_cast<int>(policy)), ACL_SUCCESS) << "policy 0x" << std::hex << policy;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
        EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
        ASSERT_EQ(raw_aclrtMallocAlign32(&p, 64, static_cast<int>(policy)), ACL_SUCCESS);
        EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    }
}

TEST_F(MemoryTest, MallocBeyondCapacityIsMemoryAllocation) {
    size_t free_bytes = 0, total = 0;
    ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total), ACL_SUCCESS);
    void *p = nullptr;
    EXPECT_EQ(aclrtMalloc(&p, total + 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    // The message gives the requested, free and total bytes.
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "aclrtMalloc")) << msg;
    EXPECT_TRUE(Contains(msg, std::to_string(total + 1))) << msg;
    EXPECT_TRUE(Contains(msg, std::to_string(total))) << msg;
    EXPECT_EQ(aclrtMalloc(&p, SIZE_MAX, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT_EQ(aclrtMalloc(&p, SIZE_MAX - 31, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT_EQ(aclrtMalloc(&p, SIZE_MAX - 63, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT_EQ(aclrtMallocAlign32(&p, SIZE_MAX, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT_EQ(aclrtMallocCached(&p, total + 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT_EQ(FreeBytes(), free_bytes);
}

TEST_F(MemoryTest, MallocNeedsACurrentContext) {
    aclError r1 = 0, r2 = 0, r3 = 0, r4 = 0;
    std::thread t([&] {
        void *p = nullptr;
        size_t f = 0, tot = 0;
        r1 = aclrtMalloc(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST);
        r2 = aclrtMallocAlign32(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST);
        r3 = aclrtMallocCached(&p, 64, ACL_MEM_MALLOC_HUGE_FIRST);
        r4 = aclrtGetMemInfo(ACL_HBM_MEM, &f, &tot);
    });
    t.join();
    EXPECT_EQ(r1, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(r2, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(r3, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(r4, ACL_ERROR_RT_CONTEXT_NULL);
}

// ---------------------------------------------------------------- get_mem_info accounting

TEST_F(MemoryTest, MemInfoBadArguments) {
    size_t f = 0, t = 0;
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, nullptr, &t), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &f, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(raw_aclrtGetMemInfo(99, &f, &t), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(raw_aclrtGetMemInfo(-1, &f, &t), ACL_ERROR_INVALID_PARAM);
}

TEST_F(MemoryTest, MemInfoTotalIsStableAndFreeNeverExceedsIt) {
    for (int attr = ACL_DDR_MEM; attr <= ACL_MEM_P2P_HUGE1G; ++attr) {
        size_t f = 0, t = 0;
        EXPECT_EQ(aclrtGetMemInfo(static_cast<aclrtMemAttr>(attr), &f, &t), ACL_SUCCESS) << "attr " << attr;
        EXPECT_LE(f, t) << "attr " << attr;
    }
}

TEST_F(MemoryTest, MallocChargesRoundedSizePlusPadding) {
    const size_t base = FreeBytes();
    for (size_t size : {size_t{1}, size_t{31}, size_t{32}, size_t{33}, size_t{64}, size_t{100}, size_t{4096},
                        size_t{4097}, size_t{123457}}) {
        void *p = nullptr;
        ASSERT_EQ(aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        EXPECT_EQ(base - FreeBytes(), RoundUp32(size) + 32) << "size " << size;
        ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
        EXPECT_EQ(FreeBytes(), base) << "size " << size;
    }
}

TEST_F(MemoryTest, MallocCachedChargesLikeMalloc) {
    const size_t base = FreeBytes();
    void *p = nullptr;
    ASSERT_EQ(aclrtMallocCached(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_TRUE(Aligned64(p));
    EXPECT_EQ(base - FreeBytes(), 160u);
    ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
    EXPECT_EQ(FreeBytes(), base);
}

TEST_F(MemoryTest, MallocAlign32ChargesRoundedSizeOnly) {
    const size_t base = FreeBytes();
    for (size_t size : {size_t{1}, size_t{32}, size_t{33}, size_t{100}, size_t{4096}}) {
        void *p = nullptr;
        ASSERT_EQ(aclrtMallocAlign32(&p, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        EXPECT_TRUE(Aligned64(p));
        EXPECT_EQ(base - FreeBytes(), RoundUp32(size)) << "size " << size;
        ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
    }
    EXPECT_EQ(FreeBytes(), base);
}

TEST_F(MemoryTest, LiveAllocationsAddUp) {
    const size_t base = FreeBytes();
    std::vector<void *> ptrs;
    size_t charged = 0;
    for (size_t size = 1; size < 3000; size += 97) {
        void *p = nullptr;
        ASSERT_EQ(aclrtMalloc(&p, size, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
        ptrs.push_back(p);
        charged += MallocFootprint(size);
    }
    EXPECT_EQ(base - FreeBytes(), charged);
    for (void *p : ptrs) ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
    EXPECT_EQ(FreeBytes(), base);
}

TEST_F(MemoryTest, MemInfoIsPerDevice) {
    ASSERT_GE(device_count_, 2u);
    const size_t base0 = FreeBytes();
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    const size_t base1 = FreeBytes();
    void *p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(base1 - FreeBytes(), MallocFootprint(1000));
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS);
    EXPECT_EQ(FreeBytes(), base0);
    // Freeing a device-1 pointer while device 0 is current works and credits device 1.
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(FreeBytes(), base1);
}

TEST_F(MemoryTest, HostMemoryIsNotChargedToTheDevice) {
    const size_t base = FreeBytes();
    void *h = nullptr;
    ASSERT_EQ(aclrtMallocHost(&h, 10000), ACL_SUCCESS);
    EXPECT_EQ(FreeBytes(), base);
    EXPECT_EQ(aclrtFreeHost(h), ACL_SUCCESS);
}

TEST_F(SmallDeviceTest, CapacityIsHonouredExactly) {
    size_t f = 0, t = 0;
    ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_SUCCESS);
    ASSERT_EQ(t, kCapacity);
    ASSERT_EQ(f, kCapacity);
    void *p = nullptr;
    // 1 MiB + 32 bytes of padding is over; 1 MiB - 32 (+32 padding) fits exactly.
    EXPECT_EQ(aclrtMalloc(&p, kCapacity, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    ASSERT_EQ(aclrtMalloc(&p, kCapacity - 32, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_SUCCESS);
    EXPECT_EQ(f, 0u);
    void *q = nullptr;
    EXPECT_EQ(aclrtMalloc(&q, 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT_EQ(aclrtMallocAlign32(&q, 1, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_RT_MEMORY_ALLOCATION);
    ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
    // Without padding the whole capacity fits.
    ASSERT_EQ(aclrtMallocAlign32(&p, kCapacity, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_SUCCESS);
    EXPECT_EQ(f, 0u);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    ASSERT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_SUCCESS);
    EXPECT_EQ(f, kCapacity);
}

TEST_F(SmallDeviceTest, ManySmallAllocationsRunOutAtTheRightCount) {
    // Each malloc(100) costs 160 bytes: floor(1 MiB / 160) = 6553 fit.
    std::vector<void *> ptrs;
    aclError r = ACL_SUCCESS;
    while (ptrs.size() < 10000) {
        void *p = nullptr;
        r = aclrtMalloc(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST);
        if (r != ACL_SUCCESS) break;
        ptrs.push_back(p);
    }
    EXPECT_EQ(r, ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT_EQ(ptrs.size(), kCapacity / 160);
    // Allocation fails only when get_mem_info agrees that 160 bytes are not free.
    size_t f = 0, t = 0;
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_SUCCESS);
    EXPECT_LT(f, 160u);
    EXPECT_EQ(f, kCapacity - ptrs.size() * 160);
    for (void *p : ptrs) ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
    void *p = nullptr;
    EXPECT_EQ(aclrtMalloc(&p, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
}

TEST_F(SmallDeviceTest, OtherDeviceHasItsOwnCapacity) {
    void *p0 = nullptr, *p1 = nullptr;
    ASSERT_EQ(aclrtMallocAlign32(&p0, kCapacity, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    EXPECT_EQ(aclrtMallocAlign32(&p1, kCapacity, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p1), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p0), ACL_SUCCESS);
}

// ---------------------------------------------------------------- free / free_host

TEST_F(MemoryTest, FreeMessagesSayWhichKindOfBadPointer) {
    void *p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtFree(BogusPointer()), ACL_ERROR_INVALID_PARAM);
    const std::string unknown = RecentErrMsg();
    ASSERT_EQ(aclrtFree(static_cast<char *>(p) + 64), ACL_ERROR_INVALID_PARAM);
    const std::string interior = RecentErrMsg();
    ASSERT_EQ(aclrtFree(p), ACL_SUCCESS);
    ASSERT_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);
    const std::string freed = RecentErrMsg();
    for (const std::string *m : {&unknown, &interior, &freed}) EXPECT_TRUE(Contains(*m, "aclrtFree")) << *m;
    // Three different diagnoses, not one generic text with a different address.
    auto strip_hex = [](std::string m) {
        std::string out;
        for (size_t i = 0; i < m.size(); ++i) {
            if (m.compare(i, 2, "0x") == 0) {
                i += 2;
                while (i < m.size() && std::isxdigit(static_cast<unsigned char>(m[i]))) ++i;
                --i;
                continue;
            }
            out += m[i];
        }
        return out;
    };
    EXPECT_NE(strip_hex(unknown), strip_hex(interior));
    EXPECT_NE(strip_hex(unknown), strip_hex(freed));
    EXPECT_NE(strip_hex(interior), strip_hex(freed));
}

TEST_F(MemoryTest, FreeUnknownInteriorAndFreedPointers) {
    EXPECT_EQ(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(BogusPointer()), ACL_ERROR_INVALID_PARAM);
    int on_stack = 0;
    EXPECT_EQ(aclrtFree(&on_stack), ACL_ERROR_INVALID_PARAM);
    void *p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    const size_t live = FreeBytes();
    EXPECT_EQ(aclrtFree(static_cast<char *>(p) + 64), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(static_cast<char *>(p) + 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_FALSE(RecentErrMsg().empty());
    EXPECT_EQ(FreeBytes(), live);  // the failed frees changed nothing
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p), ACL_ERROR_INVALID_PARAM);
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "aclrtFree")) << msg;
}

TEST_F(MemoryTest, MallocHostIsAlignedAndUsable) {
    for (size_t size : {size_t{1}, size_t{63}, size_t{64}, size_t{100}, size_t{1} << 16}) {
        void *h = nullptr;
        ASSERT_EQ(aclrtMallocHost(&h, size), ACL_SUCCESS);
        ASSERT_NE(h, nullptr);
        EXPECT_TRUE(Aligned64(h));
        std::memset(h, 0xA5, size);
        EXPECT_EQ(static_cast<uint8_t *>(h)[size - 1], 0xA5);
        EXPECT_EQ(aclrtFreeHost(h), ACL_SUCCESS);
    }
}

TEST_F(MemoryTest, MallocHostBadArguments) {
    void *h = nullptr;
    EXPECT_EQ(aclrtMallocHost(nullptr, 64), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocHost(&h, 0), ACL_ERROR_INVALID_PARAM);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    // An impossible size fails cleanly (sanitizer allocators abort on it instead).
    EXPECT_NE(aclrtMallocHost(&h, SIZE_MAX - 63), ACL_SUCCESS);
#endif
}

TEST_F(MemoryTest, FreeAndFreeHostRefuseEachOthersMemory) {
    void *h = nullptr, *d = nullptr;
    ASSERT_EQ(aclrtMallocHost(&h, 128), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&d, 128, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(h), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFreeHost(d), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

TEST_F(MemoryTest, FreeHostUnknownAndFreedPointers) {
    EXPECT_EQ(aclrtFreeHost(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFreeHost(BogusPointer()), ACL_ERROR_INVALID_PARAM);
    void *h = nullptr;
    ASSERT_EQ(aclrtMallocHost(&h, 128), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(static_cast<char *>(h) + 64), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(h), ACL_ERROR_INVALID_PARAM);
}

// ---------------------------------------------------------------- memcpy

TEST_F(MemoryTest, MemcpyEveryDirection) {
    constexpr size_t kN = 3000;
    auto in = Pattern(kN, 7);
    void *a = nullptr, *b = nullptr;
    ASSERT_EQ(aclrtMalloc(&a, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&b, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(a, kN, in.data(), kN, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(b, kN, a, kN, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    std::vector<uint8_t> out(kN, 0);
    ASSERT_EQ(aclrtMemcpy(out.data(), kN, b, kN, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(out, in);
    std::vector<uint8_t> hh(kN, 0);
    ASSERT_EQ(aclrtMemcpy(hh.data(), kN, out.data(), kN, ACL_MEMCPY_HOST_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(hh, in);
    EXPECT_EQ(aclrtFree(a), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(b), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemcpyDefaultInfersEveryDirection) {
    constexpr size_t kN = 1024;
    auto in = Pattern(kN, 99);
    void *a = nullptr, *b = nullptr, *h = nullptr;
    ASSERT_EQ(aclrtMalloc(&a, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&b, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMallocHost(&h, kN), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(a, kN, in.data(), kN, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);  // unknown host -> dev
    ASSERT_EQ(aclrtMemcpy(b, kN, a, kN, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);          // dev -> dev
    ASSERT_EQ(aclrtMemcpy(h, kN, b, kN, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);          // dev -> registered host
    std::vector<uint8_t> out(kN, 0);
    ASSERT_EQ(aclrtMemcpy(out.data(), kN, h, kN, ACL_MEMCPY_DEFAULT), ACL_SUCCESS);  // host -> host
    EXPECT_EQ(out, in);
    EXPECT_EQ(aclrtFree(a), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(b), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(h), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemcpyOtherValidKinds) {
    constexpr size_t kN = 512;
    auto in = Pattern(kN, 3);
    void *a = nullptr, *b = nullptr;
    ASSERT_EQ(aclrtMalloc(&a, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&b, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(a, kN, in.data(), kN, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(b, kN, a, kN, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(b, kN), in);
    EXPECT_EQ(aclrtMemset(b, kN, 0, kN), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(b, kN, a, kN, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(b, kN), in);
    EXPECT_EQ(aclrtFree(a), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(b), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemcpyAcrossDevices) {
    ASSERT_GE(device_count_, 2u);
    constexpr size_t kN = 4096;
    auto in = Pattern(kN, 42);
    void *d0 = nullptr, *d1 = nullptr;
    ASSERT_EQ(aclrtMalloc(&d0, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&d1, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(d0, kN, in.data(), kN, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy(d1, kN, d0, kN, ACL_MEMCPY_DEVICE_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(d1, kN), in);
    EXPECT_EQ(aclrtFree(d1), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(d0), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemcpyPartialAndOffsets) {
    constexpr size_t kN = 256;
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(d, kN, 0x11, kN), ACL_SUCCESS);
    std::vector<uint8_t> src(40, 0x77);
    ASSERT_EQ(aclrtMemcpy(static_cast<char *>(d) + 100, kN - 100, src.data(), src.size(), ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_SUCCESS);
    auto out = ReadBack(d, kN);
    for (size_t i = 0; i < kN; ++i) EXPECT_EQ(out[i], (i >= 100 && i < 140) ? 0x77 : 0x11) << "byte " << i;
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemcpyCountZeroSucceedsBeforeAnyCheck) {
    char buf[16];
    EXPECT_EQ(aclrtMemcpy(nullptr, 0, nullptr, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(buf, 0, nullptr, 0, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(raw_aclrtMemcpy(buf, sizeof buf, buf, 0, 99), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpyAsync(nullptr, 0, nullptr, 0, ACL_MEMCPY_HOST_TO_DEVICE, nullptr), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemset(nullptr, 0, 1, 0), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemsetAsync(nullptr, 0, 1, 0, nullptr), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemcpyNullPointersAreInvalidParam) {
    char buf[16] = {0};
    EXPECT_EQ(aclrtMemcpy(nullptr, 16, buf, 16, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(buf, 16, nullptr, 16, ACL_MEMCPY_HOST_TO_HOST), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpyAsync(nullptr, 16, buf, 16, ACL_MEMCPY_HOST_TO_HOST, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpyAsync(buf, 16, nullptr, 16, ACL_MEMCPY_HOST_TO_HOST, nullptr), ACL_ERROR_INVALID_PARAM);
}

TEST_F(MemoryTest, MemcpyCountBeyondDestMaxIsRtParamInvalid) {
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(d, 4096, 0, 4096), ACL_SUCCESS);
    std::vector<uint8_t> src(4096, 9);
    EXPECT_EQ(aclrtMemcpy(d, 1024, src.data(), 4096, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    // The message names the call and the bad values (docs/runtime.md's example).
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "aclrtMemcpy")) << msg;
    EXPECT_TRUE(Contains(msg, "4096")) << msg;
    EXPECT_TRUE(Contains(msg, "1024")) << msg;
    EXPECT_EQ(aclrtMemcpy(d, 1024, src.data(), 1025, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpyAsync(d, 1024, src.data(), 1025, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
              ACL_ERROR_RT_PARAM_INVALID);
    // Nothing was written.
    EXPECT_EQ(ReadBack(d, 4096), std::vector<uint8_t>(4096, 0));
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemcpyBadKindIsInvalidParam) {
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    char src[64] = {0};
    for (int kind : {8, 9, 100, -1, INT32_MIN}) {
        EXPECT_EQ(raw_aclrtMemcpy(d, 64, src, 64, kind), ACL_ERROR_INVALID_PARAM)
            << "kind " << kind;
        EXPECT_EQ(raw_aclrtMemcpyAsync(d, 64, src, 64, kind, nullptr),
                  ACL_ERROR_INVALID_PARAM)
            << "kind " << kind;
        EXPECT_EQ(raw_aclrtMemcpy2d(d, 8, src, 8, 8, 8, kind), ACL_ERROR_INVALID_PARAM)
            << "kind " << kind;
    }
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

TEST_F(MemoryTest, CopyPastTheEndOfAnAllocationIsRefused) {
    // malloc(100) owns 128 + 32 bytes; a copy may not run past them.
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 100, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    std::vector<uint8_t> src(1024, 1), dst(1024, 0);
    EXPECT_EQ(aclrtMemcpy(d, 1024, src.data(), 161, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(d, 1024, src.data(), 1024, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(static_cast<char *>(d) + 96, 1024, src.data(), 65, ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(dst.data(), 1024, d, 161, ACL_MEMCPY_DEVICE_TO_HOST), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpyAsync(d, 1024, src.data(), 161, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
              ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemset(d, 1024, 0, 161), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemsetAsync(d, 1024, 0, 161, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    // Overflowing sizes are refused, not wrapped.
    EXPECT_EQ(aclrtMemcpy(d, SIZE_MAX, src.data(), SIZE_MAX, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemcpy(static_cast<char *>(d) + 64, SIZE_MAX, src.data(), SIZE_MAX - 32, ACL_MEMCPY_HOST_TO_DEVICE),
              ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemset(d, SIZE_MAX, 0, SIZE_MAX), ACL_ERROR_RT_PARAM_INVALID);
    // Default mode: padding is part of the block, so up to 160 bytes is accepted.
    EXPECT_EQ(aclrtMemcpy(d, 1024, src.data(), 160, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy(dst.data(), 1024, d, 160, ACL_MEMCPY_DEVICE_TO_HOST), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemcpyOnABogusStreamIsInvalidParam) {
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    char src[64] = {0};
    EXPECT_EQ(aclrtMemcpyAsync(d, 64, src, 64, ACL_MEMCPY_HOST_TO_DEVICE, BogusPointer()), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemsetAsync(d, 64, 0, 64, BogusPointer()), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy2dAsync(d, 8, src, 8, 8, 8, ACL_MEMCPY_HOST_TO_DEVICE, BogusPointer()),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

// ---------------------------------------------------------------- async copies

TEST_F(MemoryTest, AsyncCopiesRunInStreamOrder) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    constexpr size_t kN = 2048;
    constexpr int kRounds = 16;
    void *d = nullptr, *d2 = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMalloc(&d2, kN, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    std::vector<std::vector<uint8_t>> snapshots(kRounds, std::vector<uint8_t>(kN, 0));
    std::vector<std::vector<uint8_t>> inputs;
    // Hold the stream so that everything below is queued before anything runs.
    Gate gate;
    ASSERT_TRUE(gate.Launch(s));
    for (int r = 0; r < kRounds; ++r) inputs.push_back(Pattern(kN, static_cast<uint8_t>(r * 17)));
    for (int r = 0; r < kRounds; ++r) {
        if (r % 2 == 0) {
            ASSERT_EQ(aclrtMemcpyAsync(d, kN, inputs[r].data(), kN, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_SUCCESS);
        } else {
            ASSERT_EQ(aclrtMemsetAsync(d, kN, r, kN, s), ACL_SUCCESS);
        }
        ASSERT_EQ(aclrtMemcpyAsync(d2, kN, d, kN, ACL_MEMCPY_DEVICE_TO_DEVICE, s), ACL_SUCCESS);
        ASSERT_EQ(aclrtMemcpyAsync(snapshots[r].data(), kN, d2, kN, ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_SUCCESS);
    }
    // Nothing ran yet.
    for (int r = 0; r < kRounds; ++r) EXPECT_EQ(snapshots[r], std::vector<uint8_t>(kN, 0));
    gate.Open();
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    for (int r = 0; r < kRounds; ++r) {
        if (r % 2 == 0) {
            EXPECT_EQ(snapshots[r], inputs[r]) << "round " << r;
        } else {
            EXPECT_EQ(snapshots[r], std::vector<uint8_t>(kN, static_cast<uint8_t>(r))) << "round " << r;
        }
    }
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(d2), ACL_SUCCESS);
}

TEST_F(MemoryTest, SyncMemcpyIsDoneWhenItReturns) {
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 1 << 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    auto in = Pattern(1 << 16, 5);
    ASSERT_EQ(aclrtMemcpy(d, 1 << 16, in.data(), 1 << 16, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    in.assign(in.size(), 0);  // the source may be reused at once
    auto out = ReadBack(d, 1 << 16);
    EXPECT_EQ(out, Pattern(1 << 16, 5));
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

// ---------------------------------------------------------------- memcpy2d

TEST_F(MemoryTest, Memcpy2dCopiesRowsWithPitches) {
    constexpr size_t kSpitch = 10, kDpitch = 16, kWidth = 8, kHeight = 5;
    std::vector<uint8_t> src(kSpitch * kHeight);
    std::iota(src.begin(), src.end(), 1);
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, kDpitch * kHeight, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(d, kDpitch * kHeight, 0xFF, kDpitch * kHeight), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy2d(d, kDpitch, src.data(), kSpitch, kWidth, kHeight, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    auto out = ReadBack(d, kDpitch * kHeight);
    for (size_t r = 0; r < kHeight; ++r) {
        for (size_t c = 0; c < kDpitch; ++c) {
            uint8_t want = c < kWidth ? src[r * kSpitch + c] : 0xFF;
            EXPECT_EQ(out[r * kDpitch + c], want) << "row " << r << " col " << c;
        }
    }
    // And back to a tightly packed host buffer.
    std::vector<uint8_t> packed(kWidth * kHeight, 0);
    ASSERT_EQ(aclrtMemcpy2d(packed.data(), kWidth, d, kDpitch, kWidth, kHeight, ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_SUCCESS);
    for (size_t r = 0; r < kHeight; ++r) {
        for (size_t c = 0; c < kWidth; ++c) EXPECT_EQ(packed[r * kWidth + c], src[r * kSpitch + c]);
    }
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

TEST_F(MemoryTest, Memcpy2dAsyncRunsInOrder) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    std::vector<uint8_t> src(4 * 32, 0);
    std::iota(src.begin(), src.end(), 0);
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 4 * 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    std::vector<uint8_t> out(4 * 64, 0xAA);
    ASSERT_EQ(aclrtMemsetAsync(d, 4 * 64, 0, 4 * 64, s), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpy2dAsync(d, 64, src.data(), 32, 32, 4, ACL_MEMCPY_HOST_TO_DEVICE, s), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(out.data(), out.size(), d, out.size(), ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    for (size_t r = 0; r < 4; ++r) {
        for (size_t c = 0; c < 64; ++c) EXPECT_EQ(out[r * 64 + c], c < 32 ? src[r * 32 + c] : 0);
    }
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

TEST_F(MemoryTest, Memcpy2dValidation) {
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);  // 64 + 32 bytes owned
    std::vector<uint8_t> src(4096, 3);
    // width beyond a pitch
    EXPECT_EQ(aclrtMemcpy2d(d, 8, src.data(), 16, 9, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy2d(d, 16, src.data(), 8, 9, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy2dAsync(d, 8, src.data(), 16, 9, 2, ACL_MEMCPY_HOST_TO_DEVICE, nullptr),
              ACL_ERROR_INVALID_PARAM);
    // NULL pointers
    EXPECT_EQ(aclrtMemcpy2d(nullptr, 8, src.data(), 8, 8, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy2d(d, 8, nullptr, 8, 8, 2, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_INVALID_PARAM);
    // zero width or height: nothing copied, success
    ASSERT_EQ(aclrtMemset(d, 64, 0x44, 64), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy2d(d, 8, src.data(), 8, 8, 0, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemcpy2d(d, 8, src.data(), 8, 0, 4, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(d, 64), std::vector<uint8_t>(64, 0x44));
    // rows running past the allocation (3 rows of pitch 64 = 192 > 96)
    EXPECT_EQ(aclrtMemcpy2d(d, 64, src.data(), 64, 64, 3, ACL_MEMCPY_HOST_TO_DEVICE), ACL_ERROR_RT_PARAM_INVALID);
    // pitch * height overflowing size_t
    EXPECT_NE(aclrtMemcpy2d(d, 64, src.data(), 64, 64, SIZE_MAX / 32, ACL_MEMCPY_HOST_TO_DEVICE), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(d, 64), std::vector<uint8_t>(64, 0x44));
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

// ---------------------------------------------------------------- memset

TEST_F(MemoryTest, MemsetFillsValueAnd0xFF) {
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 300, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(d, 300, 0x1AB, 300), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(d, 300), std::vector<uint8_t>(300, 0xAB));
    ASSERT_EQ(aclrtMemset(d, 300, -1, 100), ACL_SUCCESS);
    auto out = ReadBack(d, 300);
    for (size_t i = 0; i < 300; ++i) EXPECT_EQ(out[i], i < 100 ? 0xFF : 0xAB) << i;
    ASSERT_EQ(aclrtMemset(d, 300, 0x7FFFFF00, 300), ACL_SUCCESS);
    EXPECT_EQ(ReadBack(d, 300), std::vector<uint8_t>(300, 0x00));
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemsetValidation) {
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemset(d, 256, 0x12, 256), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemset(d, 100, 0, 101), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemsetAsync(d, 100, 0, 101, nullptr), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemset(nullptr, 100, 0, 10), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemsetAsync(nullptr, 100, 0, 10, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(ReadBack(d, 256), std::vector<uint8_t>(256, 0x12));
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

TEST_F(MemoryTest, MemsetAsyncOnAStream) {
    aclrtStream s = nullptr;
    ASSERT_EQ(aclrtCreateStream(&s), ACL_SUCCESS);
    void *d = nullptr;
    ASSERT_EQ(aclrtMalloc(&d, 128, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    std::vector<uint8_t> a(128, 0), b(128, 0);
    ASSERT_EQ(aclrtMemsetAsync(d, 128, 0x21, 128, s), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(a.data(), 128, d, 128, ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemsetAsync(d, 128, 0x122, 64, s), ACL_SUCCESS);
    ASSERT_EQ(aclrtMemcpyAsync(b.data(), 128, d, 128, ACL_MEMCPY_DEVICE_TO_HOST, s), ACL_SUCCESS);
    ASSERT_EQ(aclrtSynchronizeStream(s), ACL_SUCCESS);
    EXPECT_EQ(a, std::vector<uint8_t>(128, 0x21));
    for (size_t i = 0; i < 128; ++i) EXPECT_EQ(b[i], i < 64 ? 0x22 : 0x21) << i;
    EXPECT_EQ(aclrtDestroyStream(s), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
}

// ---------------------------------------------------------------- flush / invalidate

TEST_F(MemoryTest, FlushAndInvalidateValidateTheRange) {
    void *d = nullptr;
    ASSERT_EQ(aclrtMallocCached(&d, 1000, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemFlush(d, 1000), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemInvalidate(d, 1000), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemFlush(static_cast<char *>(d) + 500, 500), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemInvalidate(static_cast<char *>(d) + 64, 64), ACL_SUCCESS);
    // outside any allocation, or running past the end of one
    EXPECT_NE(aclrtMemFlush(d, 1 << 20), ACL_SUCCESS);
    EXPECT_NE(aclrtMemInvalidate(d, 1 << 20), ACL_SUCCESS);
    EXPECT_NE(aclrtMemFlush(BogusPointer(), 8), ACL_SUCCESS);
    EXPECT_NE(aclrtMemInvalidate(BogusPointer(), 8), ACL_SUCCESS);
    EXPECT_EQ(aclrtMemFlush(nullptr, 8), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemInvalidate(nullptr, 8), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(d), ACL_SUCCESS);
    EXPECT_NE(aclrtMemFlush(d, 8), ACL_SUCCESS);
}

}  // namespace
