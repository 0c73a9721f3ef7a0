// A pointwise convolution (1x1 window, stride 1, no padding, one group) over
// channel-blocked activations, with our own loops instead of a oneDNN
// primitive: on AVX-512, X in 8- or 16-blocks (nChw8c / nChw16c, its padding
// channels never read) and Y in 16-blocks (its padding channels written as
// zeros); on AVX2 (where oneDNN's kernels take 8-blocks), X and Y in
// 8-blocks. The bias, a fused residual (which may be Y itself) and the fused
// activation are applied before Y is stored.
//
// Why not oneDNN's jit_1x1: the code generation of each of its primitives
// took 0.16-0.74 ms of a load (LR-ASPP has 24 such layers: 8 of its 11 ms
// of primitive creation), while these loops run about as fast (numbers in
// docs/graph-engine.md, "Pointwise and depthwise convolutions without
// oneDNN").
//
// The work: W is packed once into [ceil(M/L)][C][L] (L = Y's block; zeros
// past M; from an .om's PACKED section when atc packed it). Output blocks go
// in groups of up to four and pixels in tiles (4 blocks x 6 pixels, 3 x 8,
// 2 x 12 or 1 x 16: up to 24 accumulators of AVX-512's 32 registers; with 8
// lanes 3 x 4, 2 x 6 or 1 x 12 of AVX2's 16), each tile one pass over the
// input channels: per channel, one weight vector per block and one
// broadcast per pixel. Where M % 16 == 8 on AVX-512 the last block's sums
// take 8-lane registers (half the FMA cost where AVX-512 runs as two 256-bit
// halves: MobileNetV2's two 24-channel projections 0.705 -> 0.689 and 0.605
// -> 0.563 ms with their blocks, Zen 4); where AVX-512 runs on full-width
// units (Zen 5) two pixels' 8 lanes share a 16-lane register instead. Tiles run pixel range by pixel range (a range's X stays in the L2
// cache while every group reads it), spread over the compute threads.
// A group's tiles also prefetch the next group's weights into L2, a share
// per tile: where the pixels are few and the weights large (MobileNetV2's
// 7x7 layers, 0.6-1.6 MB each) a group's first tile otherwise waited on
// memory (one thread: its 320 -> 1280 layer 0.64 -> 0.53 ms with 8 lanes
// on a Zen 2, 0.182 -> 0.163 with 16 on a Zen 5).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/pack_cache.h"

namespace openacl::kernels::cpu {

class Conv1x1 {
 public:
  // Whether these loops take a convolution of geometry g with X in blocks of
  // xb and Y in blocks of yb (0: plain): a 1x1 window, stride 1, no padding,
  // one group, more than one pixel; xb 8 or 16 and yb 16 on a CPU with
  // AVX-512F, or xb and yb 8 on one with AVX2 and FMA whose blocks are 8
  // (channel_block(), blocked_layout.h). OPENACL_CONV_1X1=0 in the
  // environment turns them off (for comparisons with oneDNN).
  static bool applies(const WindowGeom& g, int64_t xb, int64_t yb);

  // w: [M, C, 1...] float32 (constant), b: [M] or nullptr. nullptr when
  // applies() says no or memory runs out. packs: where the packed weights
  // may already be (an .om's), or are recorded (atc); may be null.
  static std::shared_ptr<const Conv1x1> make(const WindowGeom& g, const float* w, const float* b, int64_t xb,
                                             int64_t yb, const Activation& act, PackCache* packs = nullptr);

  // A matrix product on these loops, for run_span: Y [np x M] = X [np x C]
  // (rows are pixels; X in xb-blocks, Y in 16-blocks), no bias, no
  // activation, with the weights already packed as [ceil(M/16)][C][16]
  // (zeros past M). Winograd's tile-wise products (conv_winograd.h). nullptr
  // where applies() would say no (no AVX-512F, np < 2, xb not 8 or 16).
  static std::shared_ptr<const Conv1x1> make_product(int64_t C, int64_t M, int64_t np, int64_t xb,
                                                     std::shared_ptr<const void> packed);

  // y = act(conv(x) + b (+ residual)); residual (Y's layout) may be y or null.
  void run(const float* x, float* y, const float* residual) const;

  // The same over np pixels of one image, on the calling thread alone: x,
  // y and residual point at the first pixel in their first channel block,
  // xcs and ybs are the floats between channel blocks (X's and Y's planes
  // need not be whole images: a band of rows in a buffer of one's own). For
  // a fused block (conv_irb.h).
  void run_span(const float* x, int64_t xcs, float* y, int64_t ybs, const float* residual, int64_t np) const;

  // Tests only: the form of a last block with 8 real lanes (M % 16 == 8,
  // 16 lanes) in kernels made afterwards: 1 its sums in 8-lane registers, 2
  // two pixels' to a 16-lane register, 0 the machine's choice (2 where
  // full_width_avx512(), blocked_layout.h); any other value means 0.
  static void set_half_form_for_testing(int form);

  int64_t in_channels() const { return C_; }
  int64_t out_channels() const { return M_; }
  int64_t x_block() const { return xb_; }
  int64_t y_block() const { return L_; }
  int64_t pixels() const { return P_; }  // per image

 private:
  Conv1x1() = default;
  static std::shared_ptr<const Conv1x1> setup(int64_t N, int64_t C, int64_t M, int64_t P, int64_t xb, int64_t L,
                                              std::shared_ptr<const void> packed, const float* b,
                                              const Activation& act);
  // One tile: pixels [p0, p0 + np) of output blocks [ob0, ob0 + nb), and
  // `count` such tiles one after another (pixels [p0, p0 + count * np)) in
  // one call of the tile loop. The call also
  // prefetches pfn cache lines of the packed weights from float pf0 on (its
  // share of the next group's), pf_step of them per channel block.
  struct Tile {
    int32_t p0, np, ob0, nb, count, pfn, pf_step;
    int64_t pf0;
  };
  // Appends the tiles of pixels [q0, q1): every group of output blocks (up
  // to four, sizes balanced) over them in tiles of balanced sizes, in
  // entries of up to `run` tiles.
  void add_tiles(int64_t q0, int64_t q1, int64_t run, std::vector<Tile>* tiles) const;
  // Runs tile t; x, y and r (may be null) at the image's first pixel.
  void run_tile(const Tile& t, const float* x, int64_t xcs, float* y, int64_t ybs, const float* r) const;

  int64_t N_ = 0, C_ = 0, M_ = 0, P_ = 0, xb_ = 0, Mb_ = 0;
  int64_t L_ = 16;                 // lanes: Y's block (16 or 8)
  std::shared_ptr<const void> w_;  // packed weights, [Mb][C][L]
  std::vector<float> bias_;        // [Mb * L], zeros past M and without a bias
  Activation act_;
  int kind_ = 0;  // act512::Kind of act_
  int half_ = 0;  // M % 16 == 8 on AVX-512VL: the last block's form (tile_kernel's HM: 1 or 2)
  std::vector<Tile> tiles_;  // one image's, in run order
  int64_t range_ = 0;        // pixels per range (X within kRangeBytes)
  int64_t grain_ = 1;        // tiles per parallel chunk, at least
};

}  // namespace openacl::kernels::cpu
