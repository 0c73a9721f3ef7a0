// PackCache (kernels/pack_cache.h) on its own: what it answers, records and
// refuses, in each mode. The end-to-end use (atc records, a load uses) is in
// tests/model/test_loaded_model.cpp.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/pack_cache.h"

namespace openacl::kernels {
namespace {

TEST(PackCache, FindsOnlyTheSameSourceRecipeAndSize) {
  std::vector<char> weights(1024);
  auto blob = std::make_shared<std::vector<float>>(16, 2.f);
  auto owned = std::make_unique<PackCache>(PackCache::Mode::kUse, weights.data(), weights.size());
  PackCache& cache = *owned;
  cache.add({128, "reorder A", blob->data(), 64, blob});
  cache.add({128, "reorder A", weights.data(), 64, nullptr});  // a repeat: the first stays
  cache.add({256, "reorder B", nullptr, 0, nullptr});          // no bytes: ignored

  auto got = cache.find(weights.data() + 128, "reorder A", 64);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got.get(), blob->data());
  // Every other question misses.
  EXPECT_EQ(cache.find(weights.data() + 128, "reorder B", 64), nullptr);  // recipe
  EXPECT_EQ(cache.find(weights.data() + 128, "reorder A", 60), nullptr);  // size
  EXPECT_EQ(cache.find(weights.data() + 129, "reorder A", 64), nullptr);  // source
  EXPECT_EQ(cache.find(weights.data() + 256, "reorder B", 0), nullptr);   // the ignored entry
  EXPECT_EQ(cache.find(weights.data() + 128, "", 64), nullptr);
  EXPECT_EQ(cache.find(nullptr, "reorder A", 64), nullptr);
  const float outside = 0;  // not in the weights
  EXPECT_EQ(cache.find(&outside, "reorder A", 64), nullptr);
  EXPECT_EQ(cache.find(weights.data() + weights.size(), "reorder A", 64), nullptr);
  // A kUse cache records nothing.
  cache.record(weights.data(), "reorder C", blob->data(), 64, blob);
  EXPECT_TRUE(cache.recorded().empty());

  // The answer keeps the blob's bytes alive on its own; asking twice is one blob used.
  EXPECT_NE(cache.find(weights.data() + 128, "reorder A", 64), nullptr);
  EXPECT_EQ(cache.used(), 1u);
  std::weak_ptr<std::vector<float>> alive = blob;
  blob.reset();
  owned.reset();  // the cache is gone too
  EXPECT_FALSE(alive.expired());
  EXPECT_EQ(static_cast<const float*>(got.get())[15], 2.f);
  got.reset();
  EXPECT_TRUE(alive.expired());
}

TEST(PackCache, RecordsOncePerSourceAndRecipeInOrder) {
  std::vector<char> weights(1024);
  std::vector<float> a(4, 1.f), b(8, 3.f);
  PackCache cache(PackCache::Mode::kRecord, weights.data(), weights.size());
  cache.record(weights.data() + 512, "winograd v1", b.data(), 32, nullptr);
  cache.record(weights.data() + 64, "reorder", a.data(), 16, nullptr);
  cache.record(weights.data() + 64, "reorder", b.data(), 32, nullptr);  // another gear: the first stays
  // Not recorded: outside the weights, no recipe, no bytes.
  cache.record(a.data(), "reorder", a.data(), 16, nullptr);
  cache.record(weights.data(), "", a.data(), 16, nullptr);
  cache.record(weights.data(), "reorder", nullptr, 0, nullptr);
  cache.add({0, "reorder", a.data(), 16, nullptr});  // adding is for kUse
  // A kRecord cache answers nothing.
  EXPECT_EQ(cache.find(weights.data() + 64, "reorder", 16), nullptr);

  const std::vector<PackedBlob> r = cache.recorded();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].source_offset, 64u);
  EXPECT_EQ(r[0].recipe, "reorder");
  EXPECT_EQ(r[0].data, a.data());
  EXPECT_EQ(r[0].bytes, 16u);
  EXPECT_EQ(r[1].source_offset, 512u);
  EXPECT_EQ(r[1].recipe, "winograd v1");
}

TEST(PackCache, NoWeightsHoldNoSources) {
  PackCache cache(PackCache::Mode::kRecord, nullptr, 4096);
  int x = 0;
  cache.record(&x, "reorder", &x, 4, nullptr);
  EXPECT_TRUE(cache.recorded().empty());
}

}  // namespace
}  // namespace openacl::kernels
