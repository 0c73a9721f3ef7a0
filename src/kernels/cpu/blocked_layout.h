// Blocked activation layouts between CPU kernels (oneDNN's nCw8c / nChw8c /
// nCdhw8c, or ...16c): the contract between the compile-time pass that marks
// which tensors may stay blocked (model/layout.h) and the kernels that read
// or write them (Conv, MaxPool, AveragePool, GlobalAveragePool; element-wise
// kernels are layout-agnostic for same-shape operands and need nothing).
//
// The pass only marks; the block size is decided here, when a kernel is
// created (an .om may be loaded on a machine with another ISA): 8 floats on
// AVX2 and below, 16 on AVX-512. A marked tensor is blocked only when its
// channel count is a multiple of the block. The producer, every consumer and
// the observers (the dump) all call blocked_block() on the same value, so
// they always agree.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/attribute.h"
#include "graph/tensor.h"

namespace openacl::kernels::cpu {

// Node attributes (ints: indices of inputs / outputs whose tensor the pass
// allows to be blocked). Serialised with the graph, so they travel in the .om.
inline constexpr const char* kBlockedInputsAttr = "__openacl_blocked_inputs";
inline constexpr const char* kBlockedOutputsAttr = "__openacl_blocked_outputs";
// Node attribute (int): the largest block its marked tensors may take. The
// layout pass sets 8 on every node of a connected blocked region holding a
// channel count that is a multiple of 8 but not of 16 (24, 40, 72...):
// there, on AVX-512, 8-blocks everywhere beat 16-blocks with those tensors
// plain or reordered at each boundary (MobileNetV2 7.8 -> 7.35 ms).
inline constexpr const char* kBlockedMaxAttr = "__openacl_blocked_max";

// Channel block of this machine's oneDNN kernels (8 or 16); 0 without oneDNN.
int64_t channel_block();
// Tests only: makes channel_block() return `block` (8 or 16; -1 restores the
// machine's), so one machine checks the layouts another ISA would choose.
// Affects kernels created afterwards; not for use while models compile.
void set_channel_block_for_testing(int64_t block);

// THE predicate: the block (elements of C per block) of input (`output`
// false) or output `index` of a node with attributes `attrs`, for a tensor of
// dtype `dt` and dims `dims`; 0 = plain row-major. Blocked only when marked,
// float32, rank 3..5 and C % block == 0, where block is channel_block()
// capped by the node's kBlockedMaxAttr.
int64_t blocked_block(const graph::AttributeMap& attrs, bool output, size_t index, graph::DType dt,
                      const std::vector<int64_t>& dims);
// Same, for a compile-time type (0 unless its shape is fully known).
int64_t blocked_block(const graph::AttributeMap& attrs, bool output, size_t index, const graph::TensorType& t);

// Converts between plain N C sp.. and blocked N C/b sp.. b (dims are the
// logical plain dims, C % block == 0). Plain loops, for the rare paths
// (reference fallbacks, observers); src and dst must not overlap.
void blocked_to_plain(const float* src, float* dst, const std::vector<int64_t>& dims, int64_t block);
void plain_to_blocked(const float* src, float* dst, const std::vector<int64_t>& dims, int64_t block);

}  // namespace openacl::kernels::cpu
