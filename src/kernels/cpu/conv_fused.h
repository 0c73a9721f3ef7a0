// The Conv kernels of fused nodes, beside the plain one (conv.cpp): a 1x1
// Conv that absorbed the depthwise after it (graph::fuse_conv_depthwise),
// and a Conv that absorbed the projecting 1x1 after it, a whole inverted
// residual block (graph::fuse_inverted_residual). Each falls back to the
// plain kernels of its parts, chained through a per-thread buffer, where
// its one-pass form does not apply.
#pragma once

#include <memory>

#include "kernels/kernel.h"

namespace openacl::kernels::cpu {

// conv.cpp: the kernel for any Conv node, fused or not; the plain kernel.
std::unique_ptr<Kernel> make_any_conv(const KernelInit& init);
std::unique_ptr<Kernel> make_plain_conv(const KernelInit& init);

// conv_fused.cpp.
std::unique_ptr<Kernel> make_conv_depthwise(const KernelInit& init);  // has graph::kFusedDwStrideAttr
std::unique_ptr<Kernel> make_conv_block(const KernelInit& init);      // has graph::kFusedProjectAttr

}  // namespace openacl::kernels::cpu
