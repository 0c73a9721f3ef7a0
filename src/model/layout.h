// The layout pass: which activations may stay in oneDNN's channel-blocked
// layout (nChw8c / nChw16c ...) from the kernel that writes them to every
// kernel that reads them, so that chains of convolutions and poolings skip
// the reorders to and from plain NCHW around each primitive.
//
// The pass only marks node attributes (kernels/cpu/blocked_layout.h:
// kBlockedInputsAttr / kBlockedOutputsAttr, serialised with the graph, so
// they travel in the .om); whether a marked tensor is really blocked, and
// with which block, is decided when the kernels are created
// (kernels::cpu::blocked_block: float32, C a multiple of this machine's
// block), by producer, consumers and observers alike. The pass also caps the
// block at 8 (kBlockedMaxAttr) on every node of a connected region of marked
// values whose channel counts include a multiple of 8 that is not one of 16,
// so that region runs in 8-blocks even on AVX-512 (where AVX-512 runs on
// full-width units, blocks are mixed instead and the cap is ignored:
// kernels::cpu::mixed_blocks).
//
// A value is marked when it is float32 with a fully known rank-3..5 shape,
// neither a graph input/output nor a constant, and its producer and ALL its
// consumers handle blocked tensors in that position:
//  - Conv: input 0 (any layout independently of the output), output 0 and
//    the fused residual input 3 (kFusedSumAttr), which shares the output's
//    layout;
//  - MaxPool (no Indices output, storage_order 0) and AveragePool: input 0,
//    output 0;
//  - GlobalAveragePool: input 0 (its [N, C, 1..] output stays plain);
//  - element-wise ops (Relu, Clip, Add, ... see layout.cpp), which are
//    layout-agnostic when every tensor operand has the output's shape: their
//    tensor operands and output share one layout;
//  - Mul of a tensor by a per-channel scale of the same rank ([N or 1, C, 1,
//    ...], a squeeze-excite gate): the tensor and the output share a layout,
//    the scale stays plain (the Mul kernel broadcasts it over the blocks);
//  - Resize / Upsample where the CPU kernel is the float32 linear upsampling
//    of the last two axes (kernels/cpu/resize.h): input 0 and output 0,
//    which share a layout.
// Values that must share a layout form a group; a group is marked whole or
// not at all. A marked group whose values are written and read only by Conv,
// GlobalAveragePool, the channel-scale Mul and that Resize, with a channel
// count that is a multiple of 8 but not of 16, may also take padded
// 16-blocks where blocks are mixed (kBlockedPadInputsAttr /
// kBlockedPadOutputsAttr on the nodes).
#pragma once

#include <cstddef>

#include "base/status.h"
#include "graph/graph.h"

namespace openacl::model {

// Removes the marks of an earlier run (a graph read back from an .om is
// compiled again), then, when `enabled`, marks. *marked: values marked.
Status mark_blocked_layouts(graph::Graph& g, bool enabled, size_t* marked);

}  // namespace openacl::model
