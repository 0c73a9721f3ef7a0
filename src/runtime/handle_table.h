// A set of live objects addressed by the raw pointer handed out as the C handle.
// Lookups of destroyed or bogus handles fail cleanly instead of dereferencing them.
#pragma once

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace openacl::rt {

template <class T>
class HandleTable {
 public:
  void* add(std::shared_ptr<T> obj) {
    void* h = obj.get();
    std::unique_lock lock(mutex_);
    map_[h] = std::move(obj);
    return h;
  }
  std::shared_ptr<T> get(const void* h) const {
    std::shared_lock lock(mutex_);
    auto it = map_.find(h);
    return it == map_.end() ? nullptr : it->second;
  }
  std::shared_ptr<T> remove(const void* h) {
    std::unique_lock lock(mutex_);
    auto it = map_.find(h);
    if (it == map_.end()) return nullptr;
    auto obj = std::move(it->second);
    map_.erase(it);
    return obj;
  }
  std::vector<std::shared_ptr<T>> snapshot() const {
    std::shared_lock lock(mutex_);
    std::vector<std::shared_ptr<T>> out;
    out.reserve(map_.size());
    for (auto& [h, obj] : map_) out.push_back(obj);
    return out;
  }
  std::vector<std::shared_ptr<T>> take_all() {
    std::unique_lock lock(mutex_);
    std::vector<std::shared_ptr<T>> out;
    for (auto& [h, obj] : map_) out.push_back(std::move(obj));
    map_.clear();
    return out;
  }
  size_t size() const {
    std::shared_lock lock(mutex_);
    return map_.size();
  }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<const void*, std::shared_ptr<T>> map_;
};

}  // namespace openacl::rt
