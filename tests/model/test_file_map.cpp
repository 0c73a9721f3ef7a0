// base/file_map.h: mappings registered with a descriptor, found by address,
// read with pread, forgotten when released.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "base/file_map.h"

namespace openacl {
namespace {

class FileMap : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/openacl_file_map.bin";
    bytes_.resize(kRegisterFrom + 100);
    for (size_t i = 0; i < bytes_.size(); ++i) bytes_[i] = static_cast<char>(i * 7 + i / 251);
    FILE* f = std::fopen(path_.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes_.data(), 1, bytes_.size(), f), bytes_.size());
    ASSERT_EQ(std::fclose(f), 0);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string path_;
  std::string bytes_;
};

TEST_F(FileMap, FindsReadsAndForgets) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::shared_ptr<const void> map = map_file_readonly(fd, bytes_.size());
  ASSERT_NE(map, nullptr);
  ::close(fd);  // the mapping keeps a descriptor of its own
  const char* base = static_cast<const char*>(map.get());
  ASSERT_EQ(std::string(base, bytes_.size()), bytes_);

  const FileSpan whole = file_span(base, bytes_.size());
  EXPECT_GE(whole.fd, 0);
  EXPECT_EQ(whole.offset, 0u);
  const FileSpan inner = file_span(base + 5000, 3000);
  ASSERT_GE(inner.fd, 0);
  EXPECT_EQ(inner.offset, 5000u);
  std::vector<char> got(2500);
  ASSERT_TRUE(read_span(inner, 300, got.data(), got.size()));
  EXPECT_EQ(std::string(got.data(), got.size()), bytes_.substr(5300, 2500));

  // Past the end, before the start, elsewhere, nothing: not found.
  EXPECT_LT(file_span(base + 100, bytes_.size()).fd, 0);
  EXPECT_LT(file_span(base - 1, 2).fd, 0);
  EXPECT_LT(file_span(bytes_.data(), 16).fd, 0);
  EXPECT_LT(file_span(nullptr, 0).fd, 0);
  // Reading past the file's end fails (the caller reads the mapping instead).
  EXPECT_FALSE(read_span(inner, bytes_.size(), got.data(), got.size()));
  EXPECT_FALSE(read_span(FileSpan{}, 0, got.data(), 1));
  // Twice mapped: each mapping finds its own range.
  {
    const int again = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(again, 0);
    std::shared_ptr<const void> second = map_file_readonly(again, bytes_.size());
    ::close(again);
    ASSERT_NE(second, nullptr);
    const FileSpan other = file_span(static_cast<const char*>(second.get()) + 64, 64);
    ASSERT_GE(other.fd, 0);
    EXPECT_NE(other.fd, whole.fd);
    EXPECT_EQ(other.offset, 64u);
  }

  const void* at = map.get();
  map.reset();
  EXPECT_LT(file_span(at, 1).fd, 0);
}

TEST_F(FileMap, SmallFilesAreMappedButNotRegistered) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::shared_ptr<const void> map = map_file_readonly(fd, kRegisterFrom - 1);
  ::close(fd);
  ASSERT_NE(map, nullptr);
  EXPECT_EQ(std::string(static_cast<const char*>(map.get()), 4096), bytes_.substr(0, 4096));
  EXPECT_LT(file_span(map.get(), 1).fd, 0);
}

TEST_F(FileMap, FailsOnEmptyOrBadDescriptor) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(map_file_readonly(fd, 0), nullptr);
  ::close(fd);
  EXPECT_EQ(map_file_readonly(-1, 4096), nullptr);
}

}  // namespace
}  // namespace openacl
