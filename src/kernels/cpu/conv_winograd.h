// Winograd F(4x4, 3x3) convolution for float32: 3x3, stride 1, dilation 1,
// one group, 2-D. Each 4x4 output tile costs 36 multiplies per (input,
// output) channel pair instead of 144, so the 3x3 layers of a ResNet do a
// quarter of the multiply work; the transforms (additions) are vectorised
// across 8 channels, and the 36 tile-wise products are one batched oneDNN
// matmul (V [36, tiles, C] x U [36, C, M]) with U transformed once at compile
// time.
//
// Numerics: the F(4x4, 3x3) transforms (interpolation points 0, ±1, ±2)
// round differently from a direct convolution; errors stay around 1e-6
// relative to the output's magnitude (tests/kernels/test_conv_winograd.cpp
// measures them against the reference loops).
//
// Layouts: X and Y may be plain NCHW or channel-blocked nChw8c / nChw16c
// (src_block / dst_block 8 or 16, 0 = plain), so a Winograd layer can sit in a
// chain of blocked convolutions.
#pragma once

#if OPENACL_HAVE_DNNL

#include <memory>
#include <vector>

#include "kernels/cpu/conv_1x1.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/fused_activation.h"

namespace openacl::kernels::cpu {

class WinogradConv {
 public:
  // Whether F(4x4, 3x3) applies to g and pays off (enough tiles and channels
  // for the batched products to run well). OPENACL_CONV_WINOGRAD=0 in the
  // environment turns it off (for comparisons).
  static bool applies(const WindowGeom& g);

  // w: [M, C, 3, 3] float32 (constant), b: [M] or nullptr; src_block /
  // dst_block 0, 8 or 16 (a blocked side needs its channels a multiple of it).
  // Returns nullptr for anything else (no w, a geometry F(4x4, 3x3) does not
  // compute, a bad block) and when neither our loops nor oneDNN's batched
  // matmul take the products.
  // packs: where the transformed weights may already be (an .om's), or are
  // recorded (atc); may be null. products: where the 36 tile-wise products
  // run on Conv1x1's AVX-512 loops (products()) instead of one batched oneDNN
  // matmul; the other two settings are for tests.
  enum class Products { kWhereFaster, kWhereverTheyRun, kNever };
  static std::shared_ptr<const WinogradConv> make(const WindowGeom& g, const float* w, const float* b,
                                                  int src_block = 0, int dst_block = 0, PackCache* packs = nullptr,
                                                  Products products = Products::kWhereFaster);

  bool products() const { return !products_.empty(); }

  // y = act(conv(x) + b (+ residual, which may alias y)). x, y, residual in
  // the layouts given to make(); act may be null. Uses this thread's
  // dnnl_util::scratch buffer.
  void run(const float* x, float* y, const float* residual, const Activation* act = nullptr) const;

 private:
  WinogradConv() = default;
  // The 36 products on Conv1x1's loops (false where they do not run here), or
  // as one batched oneDNN matmul (false where oneDNN declines it).
  bool make_products(const float* w, PackCache* packs, Products when);
  bool make_matmul(const float* w, PackCache* packs);
  void set_buffers();  // p_bytes_, v_bytes_, m_bytes_
  void pad_input(const float* x, float* p) const;  // plain X into padded 8-blocks
  void transform_input(const float* x, float* p, float* v) const;
  void transform_output(const float* m, float* y, const float* residual, const Activation* act) const;

  int64_t N_ = 0, C_ = 0, M_ = 0, H_ = 0, W_ = 0, OH_ = 0, OW_ = 0, pt_ = 0, pl_ = 0;
  int64_t th_ = 0, tw_ = 0, T_ = 0;  // tile rows, tile columns, tiles in all (N * th * tw)
  int64_t Cp_ = 0, Mp_ = 0;          // channels rounded up to 8
  int64_t Hp_ = 0, Wp_ = 0;          // padded input plane: th*4+2, tw*4+2
  // V [36][Cp / vb][T][vb] and M [36][Mq / mb][T][mb]: vb = Cp, mb = Mq = Mp
  // for the matmul; vb 8 or 16, mb 16, Mq = M rounded up to 16 for products_.
  int64_t vb_ = 0, mb_ = 0, Mq_ = 0;
  std::vector<std::shared_ptr<const Conv1x1>> products_;  // U_k x V_k per k, where they run
  int src_block_ = 0, dst_block_ = 0;
  std::vector<float> bias_;  // [Mp], zeros when there is none
  dnnl::matmul prim_;
  dnnl::memory::desc v_md_, u_md_, m_md_, scratch_md_;
  dnnl_util::Packed u_;  // transformed weights, in the matmul's layout
  size_t p_bytes_ = 0, v_bytes_ = 0, m_bytes_ = 0, s_bytes_ = 0;
  dnnl_util::ArgSets args_;  // the matmul's execute arguments, reused
};

}  // namespace openacl::kernels::cpu

#endif  // OPENACL_HAVE_DNNL
