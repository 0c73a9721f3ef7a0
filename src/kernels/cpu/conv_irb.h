// A MobileNet inverted residual block in one pass (graph::fuse_inverted_
// residual): an optional expanding 1x1 convolution, a depthwise 3x3, and the
// projecting 1x1 (with the block's residual add), run over bands of a few
// output rows so that the expanded tensor and the depthwise output stay in
// the L2 cache, where apart each went to memory (or the shared L3) and came
// back. Built from our own loops (conv_1x1.h, conv_dw.h), channel-blocked
// activations: with AVX-512, X in 8- or 16-blocks (16 without the
// expansion), Y and the two inner tensors (in per-thread band buffers) in
// 16-blocks; with AVX2, all in 8-blocks.
//
// The work: the rows of one image are shared among the compute threads in
// contiguous runs (one per thread); each walks its run band by band. Per
// band: the expansion of the input rows the band's depthwise windows read
// (the rows the previous band already expanded are moved up, not redone),
// the depthwise over every channel block, then the projection of the band's
// pixels straight into Y. Only where two threads meet are a band's window
// rows expanded twice (two rows at stride 1, one at stride 2). Where a
// thread would get fewer than 7 rows (7x7 images at batch 1 on two
// threads), the three parts run apart instead, each over the whole tensor
// and spread over the threads, through per-thread buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/cpu/conv_1x1.h"
#include "kernels/cpu/conv_dw.h"

namespace openacl::kernels::cpu {

// This thread's buffer number `slot` (0 or 1) of the fused convolutions,
// grown to at least `bytes` (then it stays; page-aligned); null when memory
// runs out. The band buffers of InvertedResidual::run take slot 0 (and 1
// where the parts run apart); the tensor between a chained node's halves
// (conv_fused.cpp) slot 0 for a 1x1 + depthwise, slot 1 for a block, whose
// head may be a chained 1x1 + depthwise. Never two users of one slot at once.
float* fused_conv_buffer(int slot, size_t bytes);

class InvertedResidual {
 public:
  // expand (may be null: the depthwise reads X, in its blocks), dw and
  // project for N images. Null when they do not chain: expand's outputs
  // must be dw's channels over its input rows and columns, project's inputs
  // dw's channels in dw's blocks over its output pixels, and expand's
  // outputs in those blocks too.
  static std::shared_ptr<const InvertedResidual> make(std::shared_ptr<const Conv1x1> expand,
                                                      std::shared_ptr<const ConvDepthwise> dw,
                                                      std::shared_ptr<const Conv1x1> project, int64_t N);

  // y = project(dw(expand(x))) (+ residual, Y's layout, may be y or null).
  // False when a thread's band buffers (a few hundred KiB) could not be had.
  bool run(const float* x, float* y, const float* residual) const;

 private:
  InvertedResidual() = default;
  // Output rows [oa, ob) of one image; e and d: this thread's band buffers.
  void run_rows(const float* x, float* y, const float* r, int64_t oa, int64_t ob, float* e, float* d) const;

  std::shared_ptr<const Conv1x1> expand_, project_;
  std::shared_ptr<const ConvDepthwise> dw_;
  int64_t N_ = 0, H_ = 0, W_ = 0, OH_ = 0, OW_ = 0, L_ = 16, Cmb_ = 0;
  int64_t ximg_ = 0, yimg_ = 0;  // floats per image of X and Y
  int64_t rows_ = 1;             // output rows per band
  int64_t e_rows_ = 0;           // input rows a band's windows read, at most
};

}  // namespace openacl::kernels::cpu
