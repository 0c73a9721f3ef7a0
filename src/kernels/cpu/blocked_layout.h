// Blocked activation layouts between CPU kernels (oneDNN's nCw8c / nChw8c /
// nCdhw8c, or ...16c): the contract between the compile-time pass that marks
// which tensors may stay blocked (model/layout.h) and the kernels that read
// or write them (Conv, MaxPool, AveragePool, GlobalAveragePool, the linear
// upsampling Resize of resize.h; element-wise kernels are layout-agnostic for
// same-shape operands and need nothing).
//
// The pass only marks; the block size is decided here, when a kernel is
// created (an .om may be loaded on a machine with another ISA): 8 floats on
// AVX2 and below, 16 on AVX-512. A marked tensor is blocked only when its
// channel count is a multiple of the block, or where the pass allows padded
// blocks (kBlockedPadInputsAttr) and blocks are mixed. The producer, every
// consumer and the observers (the dump) all call blocked_block() on the same
// value, so they always agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/attribute.h"
#include "graph/tensor.h"

namespace openacl::kernels::cpu {

// Node attributes (ints: indices of inputs / outputs whose tensor the pass
// allows to be blocked). Serialised with the graph, so they travel in the .om.
inline constexpr const char* kBlockedInputsAttr = "__openacl_blocked_inputs";
inline constexpr const char* kBlockedOutputsAttr = "__openacl_blocked_outputs";
// Node attribute (int): the largest block its marked tensors may take where
// blocks are not mixed (see mixed_blocks()). The layout pass sets 8 on every
// node of a connected blocked region holding a channel count that is a
// multiple of 8 but not of 16 (24, 40, 72...): there, on an AVX-512 machine
// that splits 16-float operations in two halves (Zen 4), 8-blocks everywhere
// beat 16-blocks with those tensors plain or reordered at each boundary
// (MobileNetV2 7.8 -> 7.35 ms).
inline constexpr const char* kBlockedMaxAttr = "__openacl_blocked_max";

// Node attributes (ints: indices, a subset of the marked ones above): the
// tensor there may be stored in channel blocks padded up to the block (C not
// a multiple of it), because its writer and every reader handle that (Conv:
// input 0, the fused residual input 3, output 0; GlobalAveragePool: input 0;
// the channel-scale Mul: its tensor input and output; the linear upsampling
// Resize: input 0 and output 0). What the padding
// channels hold is left to the writer: the readers ignore them (a Conv's
// weights are padded with zeros). Used where blocks are mixed: there a 24-, 40- or 72-channel tensor
// between two convolutions takes padded 16-blocks instead of 8-blocks, so
// neither convolution reorders it nor runs oneDNN's 8-block kernels
// (MobileNetV2's 24-channel tensors at 56x56: four reorders per run).
inline constexpr const char* kBlockedPadInputsAttr = "__openacl_blocked_pad_inputs";
inline constexpr const char* kBlockedPadOutputsAttr = "__openacl_blocked_pad_outputs";

// Channel block of this machine's oneDNN kernels (8 or 16); 0 without oneDNN.
int64_t channel_block();
// Tests only: makes channel_block() return `block` (8 or 16; -1 restores the
// machine's), so one machine checks the layouts another ISA would choose.
// Affects kernels created afterwards; not for use while models compile.
void set_channel_block_for_testing(int64_t block);

// Whether this machine runs a 16-float FMA at the rate of an 8-float one
// (AVX-512 on full-width units: Intel, AMD Zen 5), measured once by a short
// probe (about 0.1 ms); false without AVX-512 and where it is split into two
// 256-bit halves (AMD Zen 4). Winograd's channel threshold depends on it
// (conv_winograd.cpp), and the pointwise loops' form of a half block
// (conv_1x1.h).
bool full_width_avx512();
// Whether our convolution loops' 8-lane (AVX2) forms run (conv_1x1.h,
// conv_dw.h): on a CPU with AVX2 and FMA whose block is 8 (AVX2 machines,
// or a test that forces 8). Where blocks are 16, an 8-blocked tensor is one
// whose channels are not a multiple of 16, and oneDNN's kernels keep it.
bool eight_lane_loops();
// Whether blocks are mixed: with a block of 16 (AVX-512), a marked tensor
// whose C is a multiple of 8 but not of 16 takes 8-blocks and every other one
// 16, whatever kBlockedMaxAttr says. The 16-block kernels run faster than the
// 8-block ones, so capping a whole region at 8 for its 24- or 40-channel
// tensors costs more than the convolutions at the 8/16 boundaries: on a Zen 5
// (full-width units) MobileNetV2 7.6 -> 5.2 ms and LR-ASPP 12.8 -> 9.3 ms at
// one thread; on a Zen 4 (16-float ops split in two halves), where the cap
// was first measured to win, MobileNetV2's nodes now sum to 7.85 ms mixed
// against 8.4 ms capped (2026-12-02, `openacl-run --times`, four
// alternating rounds). The cap (and so kBlockedMaxAttr) only applies where
// tests turn mixing off.
bool mixed_blocks();
// Tests only: forces mixed_blocks() on (1) or off (0); -1 restores the
// machine's answer. Same rules as set_channel_block_for_testing.
void set_mixed_blocks_for_testing(int mixed);

// THE predicate: the block (elements of C per block) of input (`output`
// false) or output `index` of a node with attributes `attrs`, for a tensor of
// dtype `dt` and dims `dims`; 0 = plain row-major. Blocked only when marked,
// float32, rank 3..5 and C % block == 0, where block is channel_block()
// capped by the node's kBlockedMaxAttr, or, where blocks are mixed, 16 or 8
// by C alone, and 16 (padded) for a C that is a multiple of 8 only where
// kBlockedPad*Attr allows it.
int64_t blocked_block(const graph::AttributeMap& attrs, bool output, size_t index, graph::DType dt,
                      const std::vector<int64_t>& dims);
// Same, for a compile-time type (0 unless its shape is fully known).
int64_t blocked_block(const graph::AttributeMap& attrs, bool output, size_t index, const graph::TensorType& t);

// Elements a tensor of logical `dims` takes stored in `block` (0: plain): C
// rounded up to a multiple of the block.
int64_t blocked_elements(const std::vector<int64_t>& dims, int64_t block);
// Bytes of that storage for a float32 tensor, plain_bytes for any other or
// for plain storage (the planner's and the executor's size of a value).
size_t blocked_bytes(graph::DType dt, const std::vector<int64_t>& dims, int64_t block, size_t plain_bytes);

// Converts between plain N C sp.. and blocked N ceil(C/b) sp.. b (dims are
// the logical plain dims; plain_to_blocked writes zeros into the padding
// channels). Plain loops, for the rare paths (reference fallbacks,
// observers); src and dst must not overlap.
void blocked_to_plain(const float* src, float* dst, const std::vector<int64_t>& dims, int64_t block);
void plain_to_blocked(const float* src, float* dst, const std::vector<int64_t>& dims, int64_t block);

}  // namespace openacl::kernels::cpu
