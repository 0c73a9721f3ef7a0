// A depthwise convolution (one group per channel, one output per channel)
// over channel blocks (nChw16c in and out with AVX-512, nChw8c with AVX2
// where oneDNN's kernels take 8-blocks), with our own loops instead of a
// oneDNN primitive: 3x3 or 5x5 windows, stride 1 or 2 (or
// dilation 2 at stride 1), any padding, with the bias, a fused residual
// (which may be Y itself) and the fused activation applied before Y is
// stored. The padding channels of a block are written as zeros (X's may hold
// anything: their results are masked).
//
// Why not oneDNN's jit_dw: code generation took about 0.16 ms of a load for
// each such layer (MobileNetV2 and LR-ASPP have 14 each outside the fused
// pointwise + depthwise pairs), and these loops run about as fast (a
// depthwise layer reads and writes far more than it computes; numbers in
// docs/graph-engine.md, "Pointwise and depthwise convolutions without
// oneDNN").
//
// The work: W packed once into [C/L][K*K][L] (L lanes: the block; zeros
// past C; from an .om's PACKED section when atc packed it). Per output row
// of a channel block, the columns whose window lies inside the input go in
// tiles of eight (16 lanes) or three to six (8 lanes: AVX2's 16 registers
// hold the tile's sums and a window row's input vectors): per
// window row, the input vectors the tile needs are loaded once into
// registers and every tap of that row is applied from them; without
// dilation two output rows share a tile where their windows lie inside the
// input's rows (twice the independent sums; at stride 2 each FMA reads its
// input vector from L1). The border
// columns take the same tiles with the vectors past the input's edge set to
// zero instead of loaded; border rows clip the window.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/pack_cache.h"

namespace openacl::kernels::cpu {

class ConvDepthwise {
 public:
  // Whether these loops take a convolution of geometry g with X in blocks of
  // xb and Y in blocks of yb: 2-D, groups == C == M, a square 3x3 or 5x5
  // window, stride 1 with dilation 1 or 2, or stride 2 with dilation 1,
  // xb == yb == 16 on a CPU with AVX-512F, or xb == yb == 8 on one with AVX2
  // and FMA whose blocks are 8 (channel_block(), blocked_layout.h).
  // OPENACL_CONV_DW=0 in the environment turns them off (for comparisons
  // with oneDNN).
  static bool applies(const WindowGeom& g, int64_t xb, int64_t yb);

  // w: [C, 1, K, K] float32 (constant), b: [C] or nullptr. nullptr when
  // applies() says no or memory runs out. packs: see Conv1x1::make.
  static std::shared_ptr<const ConvDepthwise> make(const WindowGeom& g, const float* w, const float* b, int64_t xb,
                                                   int64_t yb, const Activation& act, PackCache* packs = nullptr);

  // y = act(conv(x) + b (+ residual)); residual (Y's layout) may be y or null.
  void run(const float* x, float* y, const float* residual) const;

  // Output rows [oh0, oh1) of channel block cb of one image, on the calling
  // thread: x holds that block's input rows from row0 on (W * lanes floats
  // each; the rows the windows read must be there), y and r (may be null)
  // point at output row oh0, the rest after it. run() goes through here; a
  // fused block (conv_irb.h) calls it on a band of rows in a buffer of its
  // own.
  void run_rows(const float* x, int64_t row0, float* y, const float* r, int64_t cb, int64_t oh0, int64_t oh1) const;

  // A tile of a row of the 8-lane form: columns [ow, ow + n); edge: some of
  // its windows reach past the input's columns.
  struct Tile8 {
    int32_t ow, n;
    bool edge;
  };

  int64_t channels() const { return C_; }
  int64_t lanes() const { return L_; }  // the block: 16 or 8
  int64_t in_height() const { return H_; }
  int64_t in_width() const { return W_; }
  int64_t out_height() const { return OH_; }
  int64_t out_width() const { return OW_; }
  // The input rows output row oh reads: [first, last], clipped to the input.
  int64_t first_in_row(int64_t oh) const { return std::max<int64_t>(0, oh * S_ - pt_); }
  int64_t last_in_row(int64_t oh) const { return std::min<int64_t>(H_ - 1, oh * S_ - pt_ + (K_ - 1) * D_); }

 private:
  ConvDepthwise() = default;

  int64_t N_ = 0, C_ = 0, L_ = 16, Cb_ = 0, H_ = 0, W_ = 0, OH_ = 0, OW_ = 0;
  int K_ = 0, S_ = 1, D_ = 1;
  int64_t pt_ = 0, pl_ = 0;
  int64_t ow_lo_ = 0, ow_hi_ = 0;  // the columns whose whole window row lies inside X
  int variant_ = 0;                // which tile loops (K, S, D)
  std::shared_ptr<const void> w_;  // packed weights, [Cb][K*K][L]
  std::vector<float> bias_;        // [Cb * L], zeros past C and without a bias
  Activation act_;
  int kind_ = 0;  // act512::Kind of act_
  int64_t grain_ = 1;
  std::vector<Tile8> plan8_, plan8x2_;  // 8 lanes: the tiles of every row, and of a pair of rows
};

}  // namespace openacl::kernels::cpu
