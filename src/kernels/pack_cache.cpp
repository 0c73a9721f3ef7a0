#include "kernels/pack_cache.h"

namespace openacl::kernels {

bool PackCache::offset_of(const void* source, uint64_t* off) const {
  const auto p = reinterpret_cast<uintptr_t>(source);
  if (!source || p < base_ || p - base_ >= size_) return false;
  *off = p - base_;
  return true;
}

void PackCache::add(PackedBlob blob) {
  if (mode_ != Mode::kUse || !blob.data) return;
  auto key = std::make_pair(blob.source_offset, blob.recipe);
  blobs_.emplace(std::move(key), std::move(blob));
}

std::shared_ptr<const void> PackCache::find(const void* source, const std::string& recipe, size_t bytes) const {
  uint64_t off = 0;
  if (mode_ != Mode::kUse || recipe.empty() || !offset_of(source, &off)) return nullptr;
  auto it = blobs_.find(std::make_pair(off, recipe));
  if (it == blobs_.end() || it->second.bytes != bytes) return nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    used_.insert(&it->second);
  }
  return std::shared_ptr<const void>(it->second.keep, it->second.data);
}

void PackCache::record(const void* source, const std::string& recipe, const void* data, size_t bytes,
                       std::shared_ptr<const void> keep) {
  uint64_t off = 0;
  if (mode_ != Mode::kRecord || recipe.empty() || !data || !offset_of(source, &off)) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto key = std::make_pair(off, recipe);
  if (blobs_.count(key)) return;  // another gear packed the same: the bytes are the same
  blobs_.emplace(std::move(key), PackedBlob{off, recipe, data, bytes, std::move(keep)});
}

size_t PackCache::used() const {
  std::lock_guard<std::mutex> lock(mu_);
  return used_.size();
}

std::vector<PackedBlob> PackCache::recorded() const {
  if (mode_ != Mode::kRecord) return {};  // blobs_ holds what was added
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<PackedBlob> out;
  out.reserve(blobs_.size());
  for (const auto& [key, blob] : blobs_) out.push_back(blob);
  return out;
}

}  // namespace openacl::kernels
