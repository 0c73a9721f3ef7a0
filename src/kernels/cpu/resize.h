// The Resize / Upsample CPU kernels' part of the blocked-layout contract
// (blocked_layout.h, model/layout.h).
#pragma once

#include "graph/graph.h"

namespace openacl::kernels::cpu {

// Whether node n (Resize or Upsample) runs on the CPU as a float32 linear
// upsampling of its last two axes (constant scales or sizes, every shape
// known, rank 4 or 5 so that the channel axis is not resized). Such a kernel
// reads input 0 and writes output 0 channel-blocked when both are marked,
// with one block: the layout pass gives them one layout.
bool resize_runs_blocked(const graph::Node& n);

}  // namespace openacl::kernels::cpu
