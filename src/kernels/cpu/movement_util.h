// Shared helpers for the data-movement kernels (reshape, transpose, slice,
// gather, scatter, pad, tile/expand, ...). These ops move whole elements and
// never look at their values, so they work on element *sizes*, not types:
// one instantiation per size (1, 2, 4, 8, 16 bytes) covers every dtype.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {

struct Bytes16 {
  uint64_t lo, hi;
};

// Calls f(TypeTag<U>{}) with U an unsigned type of `size` bytes; false for
// other sizes (packed 4-bit types, strings).
template <class F>
bool dispatch_size(size_t size, F&& f) {
  switch (size) {
    case 1: f(TypeTag<uint8_t>{}); return true;
    case 2: f(TypeTag<uint16_t>{}); return true;
    case 4: f(TypeTag<uint32_t>{}); return true;
    case 8: f(TypeTag<uint64_t>{}); return true;
    case 16: f(TypeTag<Bytes16>{}); return true;
    default: return false;
  }
}

// Every dtype a byte-moving kernel handles: whole-byte element types.
std::vector<DType> movable_types();

inline size_t elem_size(const Tensor& t) { return graph::dtype_bytes(t.dtype); }

// Integer values of an index/shape-like input (int32 or int64; other integer
// types too). False when the dtype is not an integer type.
bool read_ints(const Tensor& t, std::vector<int64_t>* out);

// One integer element of an int32/int64 index tensor.
inline int64_t index_at(const Tensor& t, int64_t i) {
  return t.dtype == DType::kInt32 ? static_cast<int64_t>(t.as<const int32_t>()[i]) : t.as<const int64_t>()[i];
}
inline bool is_index_type(DType t) { return t == DType::kInt32 || t == DType::kInt64; }

// Normalises axis into [0, rank); false when out of range.
inline bool norm_axis(int64_t* axis, int64_t rank) {
  if (*axis < -rank || *axis >= rank) return false;
  if (*axis < 0) *axis += rank;
  return true;
}

// Copies into `out` where out[o0, ..., on] = in[maps[0][o0], ..., maps[n][on]],
// or `fill` (one element of bytes) where any map entry is -1. maps[a] has
// out.dims[a] entries, each -1 or in [0, in.dims[a]). Covers Slice, Pad,
// Expand, Tile and CenterCropPad.
void map_copy(const Tensor& in, Tensor& out, const std::vector<std::vector<int64_t>>& maps, const void* fill);

// out = transpose(in viewed with `dims`, perm), elements of `esize` bytes.
void transpose_bytes(const void* in, void* out, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm,
                     size_t esize);

// Dims after checking an output that may arrive unallocated (data-dependent
// shape): allocates it with `dims`, or checks the inferred dims agree.
Status ensure_output(KernelContext& ctx, size_t i, const std::vector<int64_t>& dims, Tensor** out);

}  // namespace openacl::kernels::cpu
