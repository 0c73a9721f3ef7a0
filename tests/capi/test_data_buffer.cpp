/*
 * aclDataBuffer: create/update/destroy and the getters, with the library initialised
 * and without (data buffers work before aclInit). Contract: docs/runtime.md
 * "Data buffers"; spec/pyacl-api.md §3.1.
 */
#include <thread>
#include <vector>

#include "test_util.h"

namespace {

using acltest::BogusPointer;
using acltest::Contains;
using acltest::RecentErrMsg;

/* Runs every test twice: without aclInit, and with it. */
class DataBufferTest : public ::testing::TestWithParam<bool> {
 protected:
    void SetUp() override {
        if (GetParam()) {
            ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
        }
    }
    void TearDown() override {
        if (GetParam()) {
            aclFinalize();
        }
    }
};

TEST_P(DataBufferTest, CreateAndRead) {
    std::vector<uint8_t> mem(1000);
    aclDataBuffer *b = aclCreateDataBuffer(mem.data(), mem.size());
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(aclGetDataBufferAddr(b), mem.data());
    EXPECT_EQ(aclGetDataBufferSizeV2(b), 1000u);
    EXPECT_EQ(aclGetDataBufferSize(b), 1000u);
    EXPECT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
}

TEST_P(DataBufferTest, NullZeroIsALegalPlaceholder) {
    aclDataBuffer *b = aclCreateDataBuffer(nullptr, 0);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(aclGetDataBufferAddr(b), nullptr);
    EXPECT_EQ(aclGetDataBufferSizeV2(b), 0u);
    EXPECT_EQ(aclGetDataBufferSize(b), 0u);
    EXPECT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
}

TEST_P(DataBufferTest, NullWithSizeIsRefusedWithAMessage) {
    (void)RecentErrMsg();
    EXPECT_EQ(aclCreateDataBuffer(nullptr, 16), nullptr);
    std::string msg = RecentErrMsg();
    EXPECT_TRUE(Contains(msg, "aclCreateDataBuffer")) << msg;
}

TEST_P(DataBufferTest, NonNullWithZeroSize) {
    int x = 0;
    aclDataBuffer *b = aclCreateDataBuffer(&x, 0);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(aclGetDataBufferAddr(b), &x);
    EXPECT_EQ(aclGetDataBufferSizeV2(b), 0u);
    EXPECT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
}

TEST_P(DataBufferTest, LargeSizeKeepsAllBitsInV2) {
    int x = 0;
    const size_t big = (size_t{1} << 33) + 5;  // never dereferenced: the record does not own memory
    aclDataBuffer *b = aclCreateDataBuffer(&x, big);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(aclGetDataBufferSizeV2(b), big);
    EXPECT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
}

TEST_P(DataBufferTest, UpdateRepoints) {
    std::vector<uint8_t> a(10), c(20);
    aclDataBuffer *b = aclCreateDataBuffer(a.data(), a.size());
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(aclUpdateDataBuffer(b, c.data(), c.size()), ACL_SUCCESS);
    EXPECT_EQ(aclGetDataBufferAddr(b), c.data());
    EXPECT_EQ(aclGetDataBufferSizeV2(b), 20u);
    EXPECT_EQ(aclUpdateDataBuffer(b, nullptr, 0), ACL_SUCCESS);
    EXPECT_EQ(aclGetDataBufferAddr(b), nullptr);
    EXPECT_EQ(aclGetDataBufferSizeV2(b), 0u);
    EXPECT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
}

TEST_P(DataBufferTest, UpdateBadArguments) {
    int x = 0;
    EXPECT_EQ(aclUpdateDataBuffer(nullptr, &x, sizeof x), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclUpdateDataBuffer(static_cast<aclDataBuffer *>(BogusPointer()), &x, sizeof x),
              ACL_ERROR_INVALID_PARAM);
    aclDataBuffer *b = aclCreateDataBuffer(&x, sizeof x);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
    EXPECT_EQ(aclUpdateDataBuffer(b, &x, sizeof x), ACL_ERROR_INVALID_PARAM);
}

TEST_P(DataBufferTest, DestroyTwiceNullAndBogus) {
    int x = 0;
    aclDataBuffer *b = aclCreateDataBuffer(&x, sizeof x);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
    EXPECT_EQ(aclDestroyDataBuffer(b), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclDestroyDataBuffer(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclDestroyDataBuffer(static_cast<const aclDataBuffer *>(BogusPointer())), ACL_ERROR_INVALID_PARAM);
}

TEST_P(DataBufferTest, GettersOnNullUnknownAndDestroyed) {
    EXPECT_EQ(aclGetDataBufferAddr(nullptr), nullptr);
    EXPECT_EQ(aclGetDataBufferSizeV2(nullptr), 0u);
    EXPECT_EQ(aclGetDataBufferSize(nullptr), 0u);
    auto *bogus = static_cast<const aclDataBuffer *>(BogusPointer());
    EXPECT_EQ(aclGetDataBufferAddr(bogus), nullptr);
    EXPECT_EQ(aclGetDataBufferSizeV2(bogus), 0u);
    EXPECT_EQ(aclGetDataBufferSize(bogus), 0u);
    int x = 0;
    aclDataBuffer *b = aclCreateDataBuffer(&x, sizeof x);
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(aclDestroyDataBuffer(b), ACL_SUCCESS);
    EXPECT_EQ(aclGetDataBufferAddr(b), nullptr);
    EXPECT_EQ(aclGetDataBufferSizeV2(b), 0u);
}

TEST_P(DataBufferTest, ManyBuffersAreIndependent) {
    std::vector<uint8_t> mem(4096);
    std::vector<aclDataBuffer *> bufs;
    for (size_t i = 0; i < 256; ++i) {
        aclDataBuffer *b = aclCreateDataBuffer(mem.data() + i, i + 1);
        ASSERT_NE(b, nullptr);
        bufs.push_back(b);
    }
    for (size_t i = 0; i < bufs.size(); i += 2) ASSERT_EQ(aclDestroyDataBuffer(bufs[i]), ACL_SUCCESS);
    for (size_t i = 1; i < bufs.size(); i += 2) {
        EXPECT_EQ(aclGetDataBufferAddr(bufs[i]), mem.data() + i);
        EXPECT_EQ(aclGetDataBufferSizeV2(bufs[i]), i + 1);
        EXPECT_EQ(aclDestroyDataBuffer(bufs[i]), ACL_SUCCESS);
    }
}

TEST_P(DataBufferTest, BuffersFromManyThreads) {
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&failures, t] {
            std::vector<uint8_t> mem(64);
            for (int i = 0; i < 500; ++i) {
                aclDataBuffer *b = aclCreateDataBuffer(mem.data(), static_cast<size_t>(t * 1000 + i));
                if (b == nullptr || aclGetDataBufferSizeV2(b) != static_cast<size_t>(t * 1000 + i) ||
                    aclDestroyDataBuffer(b) != ACL_SUCCESS) {
                    failures.fetch_add(1);
                }
            }
        });
    }
    for (auto &th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(InitState, DataBufferTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) {
                             return info.param ? std::string("Initialised") : std::string("BeforeInit");
                         });

}  // namespace
