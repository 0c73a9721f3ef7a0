// oneDNN convolution-like primitives (Conv, ConvTranspose) for float32: the
// built entry for one shape and how it runs.
//
// Layouts: X and Y are plain N C D.. H W at the kernel boundary, or oneDNN's
// channel-blocked layout where the layout pass marked them (blocked_layout.h;
// e->src / e->dst say which). The weights take the primitive's layout
// (reordered once when constant). When the boundary layouts would make oneDNN
// fall back to im2col + GEMM (or its reference code) and other layouts get a
// direct jit kernel, X and Y are reordered around the primitive (src_int /
// dst_int): correct for any boundary layout, and free when they agree.
#pragma once

#if OPENACL_HAVE_DNNL

#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/dnnl_common.h"

namespace openacl::kernels::cpu {

struct ConvEntry {
  bool ok = false;  // false: oneDNN declined; use the reference
  bool fused = false;  // the primitive applies the fused post-ops (residual sum, activation)
  bool sum = false;    // a sum post-op: the primitive adds what dst holds before it runs
  dnnl::primitive prim;
  dnnl::memory::desc src, wei_user, wei, bias, dst;  // src/dst: plain (the tensors we get)
  bool reorder_w = false;  // the primitive wants another weight layout
  dnnl_util::Packed packed_w;  // weights already in that layout (constant W)
  // X / Y go through src_int / dst_int (only the side whose layout differs:
  // a blocked X may already be what the primitive reads).
  bool reorder_src = false, reorder_dst = false;
  dnnl::memory::desc src_int, dst_int;
  dnnl_util::Reorder src_reorder, dst_reorder;
  dnnl_util::Reorder dst_in_reorder;  // blocked + sum: what dst holds, into dst_int first
  dnnl::memory::desc scratch_md;
  size_t scratch_bytes = 0;
  bool has_bias = false;
  dnnl_util::ArgSets args;  // the primitive's execute arguments, reused
};

// Whether a convolution should run on channels-last copies of its blocked
// X and Y: a 2-D, one-group convolution with a window larger than 1x1, both
// sides in 16-blocks (AVX-512). There oneDNN 2.6's brgemm convolution
// (channels-last only) ran ResNet-50's 3x3 layers 1.3-1.45x faster than its
// direct kernel for 16-blocks (weights and activations out of cache: 512
// channels at 7x7 2.0 -> 1.5 ms, 128 at 56x56 stride 2 1.75 -> 1.30 ms, one
// thread, Zen 5), reorders included; on a Zen 4 the 512-channel 7x7 layers
// 2.6 -> 2.25 ms. 1x1 convolutions ran alike in both.
inline bool prefers_channels_last(int64_t groups, int64_t kernel_elems, int64_t xb, int64_t yb) {
  return groups == 1 && kernel_elems > 1 && xb == 16 && yb == 16;
}

inline bool is_slow_impl(const dnnl::primitive_desc& pd) {
  const std::string name = pd.impl_info_str();
  return name.find("gemm") != std::string::npos || name.find("ref") != std::string::npos;
}

// Fills e (src, dst, wei_user, bias already set) from make_pd(src_desc,
// dst_desc) -> primitive_desc, trying blocked activations when plain ones
// get a slow implementation. With channels_last, a 2-D X and Y go through
// channels-last copies when oneDNN has its brgemm kernel for them (see
// prefers_channels_last). Throws dnnl::error when oneDNN declines.
template <class Prim, class MakePd>
void finish_conv_entry(ConvEntry* e, const std::vector<int64_t>& xd, const std::vector<int64_t>& yd,
                       const float* const_w, MakePd&& make_pd, PackCache* packs = nullptr,
                       bool channels_last = false) {
  using dnnl::memory;
  auto pd = make_pd(e->src, e->dst);
  if (channels_last && xd.size() == 4 && std::string(pd.impl_info_str()).find("brg") == std::string::npos) {
    try {
      const auto nhwc = [](const std::vector<int64_t>& d) {
        return memory::desc(dnnl_util::to_dims(d), memory::data_type::f32, memory::format_tag::nhwc);
      };
      auto cpd = make_pd(nhwc(xd), nhwc(yd));
      if (std::string(cpd.impl_info_str()).find("brg") != std::string::npos) {
        pd = cpd;
        e->reorder_src = e->reorder_dst = true;
      }
    } catch (const dnnl::error&) {
    }
  }
  if (!e->reorder_src && is_slow_impl(pd)) {
    // Where one side is already blocked (8-blocks beside 16-blocks, see
    // blocked_layout.h: mixed_blocks), both sides in this machine's block
    // first, padded when C is not a multiple of it: oneDNN's direct kernels
    // take padded channels, and the reorders to and from them are cheap.
    // Otherwise oneDNN's choice (`any`: channels-last for its brgemm kernels).
    const auto any = [](const std::vector<int64_t>& d) {
      return memory::desc(dnnl_util::to_dims(d), memory::data_type::f32, memory::format_tag::any);
    };
    std::vector<std::pair<memory::desc, memory::desc>> tries;
    const bool blocked_side = e->src.data.format_desc.blocking.inner_nblks > 0 ||
                              e->dst.data.format_desc.blocking.inner_nblks > 0;
    if (const int64_t cb = channel_block(); blocked_side && cb > 0)
      tries.emplace_back(dnnl_util::f32_desc(xd, cb), dnnl_util::f32_desc(yd, cb));
    tries.emplace_back(any(xd), any(yd));
    for (const auto& [s, d] : tries) {
      try {
        auto bpd = make_pd(s, d);
        if (is_slow_impl(bpd)) continue;
        pd = bpd;
        e->reorder_src = pd.src_desc() != e->src;
        e->reorder_dst = pd.dst_desc() != e->dst;
        break;
      } catch (const dnnl::error&) {
      }
    }
  }
  e->wei = pd.weights_desc();
  e->reorder_w = e->wei != e->wei_user;
  if (e->reorder_src) {
    e->src_int = pd.src_desc();
    e->src_reorder.init(e->src, e->src_int);
  }
  if (e->reorder_dst) {
    e->dst_int = pd.dst_desc();
    e->dst_reorder.init(e->dst_int, e->dst);
    if (e->sum) e->dst_in_reorder.init(e->dst, e->dst_int);
  }
  e->scratch_md = pd.scratchpad_desc();
  e->scratch_bytes = e->scratch_md.get_size();
  e->prim = Prim(pd);
  if (const_w && e->reorder_w) e->packed_w = dnnl_util::pack(e->wei_user, const_w, e->wei, packs);
  e->has_bias = e->bias != dnnl::memory::desc();
  e->args.add(DNNL_ARG_SRC, e->reorder_src ? e->src_int : e->src);
  e->args.add(DNNL_ARG_DST, e->reorder_dst ? e->dst_int : e->dst);
  if (e->packed_w) e->args.add_fixed(DNNL_ARG_WEIGHTS, e->packed_w.mem);
  else if (!e->reorder_w) e->args.add(DNNL_ARG_WEIGHTS, e->wei);
  if (e->has_bias) e->args.add(DNNL_ARG_BIAS, e->bias);
  if (e->scratch_bytes) e->args.add(DNNL_ARG_SCRATCHPAD, e->scratch_md);
  e->ok = true;
}

// b must be given exactly when the entry was built with a bias.
inline void run_conv_entry(const ConvEntry& e, const float* x, const float* w, const float* b, float* y) {
  using namespace dnnl_util;
  // One per-thread buffer holds the scratchpad and the blocked activations.
  const size_t s_bytes = align64(e.scratch_bytes);
  const size_t x_bytes = e.reorder_src ? align64(e.src_int.get_size()) : 0;
  const size_t y_bytes = e.reorder_dst ? align64(e.dst_int.get_size()) : 0;
  char* buf = static_cast<char*>(scratch(s_bytes + x_bytes + y_bytes));
  const void* xi = x;
  void* yo = y;
  if (e.reorder_src) {
    xi = buf + s_bytes;
    e.src_reorder.run(x, buf + s_bytes);
  }
  if (e.reorder_dst) {
    yo = buf + s_bytes + x_bytes;
    if (e.sum && e.fused) e.dst_in_reorder.run(y, yo);  // the sum post-op adds what dst holds: the residual
  }
  if (e.reorder_w && !e.packed_w) {  // weights not constant: reordered per run
    std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, wrap(e.reorder_src ? e.src_int : e.src, xi)},
                                               {DNNL_ARG_WEIGHTS, reorder_to(e.wei_user, w, e.wei)},
                                               {DNNL_ARG_DST, wrap(e.reorder_dst ? e.dst_int : e.dst, yo)}};
    if (e.has_bias) args.emplace(DNNL_ARG_BIAS, wrap(e.bias, b));
    if (e.scratch_bytes) args.emplace(DNNL_ARG_SCRATCHPAD, wrap(e.scratch_md, buf));
    e.prim.execute(stream(), args);
  } else {
    ArgSets::Lease a = e.args.take();
    a.bind(DNNL_ARG_SRC, xi);
    a.bind(DNNL_ARG_DST, yo);
    if (!e.reorder_w) a.bind(DNNL_ARG_WEIGHTS, w);
    if (e.has_bias) a.bind(DNNL_ARG_BIAS, b);
    if (e.scratch_bytes) a.bind(DNNL_ARG_SCRATCHPAD, buf);
    a.execute(e.prim);
  }
  if (e.reorder_dst) e.dst_reorder.run(yo, y);
  stream().wait();
}

}  // namespace openacl::kernels::cpu

#endif  // OPENACL_HAVE_DNNL
