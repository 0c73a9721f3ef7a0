// Weights packed ahead of time: what atc stores in an .om's PACKED section
// (om_format.h) and a load hands to the kernels, so a kernel whose packed
// layout matches uses those bytes where they lie (the mapped file) instead
// of packing again onto fresh pages at load.
//
// A blob is keyed by its source, the byte offset of the constant it was made
// from within the model's weights, and a recipe: the transform and the
// layout, spelled by the kernel (dnnl_util::pack_recipe: oneDNN's version and
// both memory descriptors; the Winograd transform's name, version and
// descriptor). A kernel asks with the recipe it would use on this machine. A
// CPU with another ISA (so another blocking) or another oneDNN asks for
// another recipe, misses, and packs as before, so an .om stays portable.
//
// One object serves both sides:
//   kUse     entries added from an .om; find() answers kernels (read-only
//            once built, so any number of threads may ask at once);
//   kRecord  atc: record() notes every pack a kernel made (thread-safe);
//            recorded() gives them, one per (source, recipe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace openacl::kernels {

struct PackedBlob {
  uint64_t source_offset = 0;  // of the source constant, within the weights
  std::string recipe;          // bytes, not necessarily text
  const void* data = nullptr;
  size_t bytes = 0;
  std::shared_ptr<const void> keep;  // keeps `data` alive
};

class PackCache {
 public:
  enum class Mode { kUse, kRecord };

  // weights / weight_bytes: where the model's constants lie; a source outside
  // them is never found or recorded (a constant made at load, say).
  PackCache(Mode mode, const void* weights, size_t weight_bytes)
      : mode_(mode), base_(reinterpret_cast<uintptr_t>(weights)), size_(weights ? weight_bytes : 0) {}

  // kUse: an entry read from an .om (blob.keep holds its bytes). A second
  // entry for the same (source, recipe) is ignored.
  void add(PackedBlob blob);

  // kUse: the blob packed from `source` by `recipe`, when it is exactly
  // `bytes` long; the returned pointer shares ownership of the blob's bytes.
  // nullptr when there is none (and always in kRecord mode).
  std::shared_ptr<const void> find(const void* source, const std::string& recipe, size_t bytes) const;

  // kRecord: `source` packed by `recipe` gave `bytes` bytes at `data`, kept
  // alive by `keep`. Ignored in kUse mode or for a source outside the weights.
  void record(const void* source, const std::string& recipe, const void* data, size_t bytes,
              std::shared_ptr<const void> keep);

  // kRecord: what was recorded, ordered by (source, recipe); empty in kUse mode.
  std::vector<PackedBlob> recorded() const;

  // How many distinct blobs find() has given (kernels of several gears may
  // share one): the loader's log and tests.
  size_t used() const;

 private:
  bool offset_of(const void* source, uint64_t* off) const;

  const Mode mode_;
  const uintptr_t base_;
  const size_t size_;
  mutable std::mutex mu_;  // kRecord's blobs_, kUse's used_
  std::map<std::pair<uint64_t, std::string>, PackedBlob> blobs_;
  mutable std::set<const PackedBlob*> used_;
};

}  // namespace openacl::kernels
