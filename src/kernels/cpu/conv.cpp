// Conv: oneDNN convolution for float32 (primitive built once at compile time
// when the shapes are known, weights reordered once into the primitive's
// preferred layout when they are constant; built lazily per input shape
// otherwise), the reference loops for float64 and for cases oneDNN declines.
// float16/bfloat16 are widened to float and take the float32 path.
//
// Layouts: X and Y are plain N C D.. H W at the kernel boundary. The weights
// take the primitive's layout; activations are reordered to a blocked layout
// around the convolution only when that turns an im2col+GEMM implementation
// into a direct one. To chain blocked activations across layers later, the
// entry already carries src_int/dst_int: run() would skip the reorders when
// the neighbouring kernels agree on them.
#include <memory>
#include <string>
#include <unordered_map>

#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/dnnl_common.h"

namespace openacl::kernels::cpu {
namespace {

#if OPENACL_HAVE_DNNL
// One built primitive for one (X dims, W dims) pair.
struct ConvEntry {
  bool ok = false;  // false: oneDNN declined; use the reference
  dnnl::convolution_forward prim;
  dnnl::memory::desc src, wei_user, wei, bias, dst;  // src/dst: plain (the tensors we get)
  bool reorder_w = false;  // the primitive wants another weight layout
  dnnl::memory packed_w;    // weights already in that layout (constant W)
  // Blocked activations: when the direct (jit) kernels need blocked src/dst
  // and plain NCHW would fall back to im2col + GEMM, X is reordered into
  // src_int and the result out of dst_int around the convolution.
  bool blocked = false;
  dnnl::memory::desc src_int, dst_int;
  dnnl::reorder src_reorder, dst_reorder;
  dnnl::memory::desc scratch_md;
  size_t scratch_bytes = 0;
};

bool is_gemm_impl(const dnnl::primitive_desc& pd) {
  return std::string(pd.impl_info_str()).find("gemm") != std::string::npos;
}

size_t align64(size_t n) { return (n + 63) / 64 * 64; }

std::shared_ptr<const ConvEntry> build_conv(const WindowGeom& g, const std::vector<int64_t>& xd,
                                            const std::vector<int64_t>& wd, bool has_bias, const float* const_w) {
  auto e = std::make_shared<ConvEntry>();
  if (g.N == 0 || g.C == 0 || g.M == 0 || g.out_size() == 0) return e;
  try {
    using dnnl::memory;
    const int first = kMaxSpatial - g.nsp;
    memory::dims strides, dil, pl, pr;
    for (int i = first; i < kMaxSpatial; ++i) {
      strides.push_back(g.s[i]);
      dil.push_back(g.d[i] - 1);
      pl.push_back(g.pb[i]);
      pr.push_back(g.pe[i]);
    }
    std::vector<int64_t> wdims = wd;
    if (g.G > 1) {
      wdims[0] = g.M / g.G;
      wdims.insert(wdims.begin(), g.G);
    }
    const std::vector<int64_t> yd = geom_out_dims(g);
    e->src = dnnl_util::plain_f32(xd);
    e->dst = dnnl_util::plain_f32(yd);
    e->wei_user = dnnl_util::plain_f32(wdims);
    const memory::desc wei_any(dnnl_util::to_dims(wdims), memory::data_type::f32, memory::format_tag::any);
    if (has_bias) e->bias = dnnl_util::plain_f32({g.M});
    auto make_pd = [&](const memory::desc& src, const memory::desc& dst) {
      const auto desc = has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                                   dnnl::algorithm::convolution_direct, src, wei_any,
                                                                   e->bias, dst, strides, dil, pl, pr)
                                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                                   dnnl::algorithm::convolution_direct, src, wei_any,
                                                                   dst, strides, dil, pl, pr);
      return dnnl::convolution_forward::primitive_desc(desc, dnnl_util::base_attr(), dnnl_util::engine());
    };
    dnnl::convolution_forward::primitive_desc pd = make_pd(e->src, e->dst);
    if (is_gemm_impl(pd)) {
      const memory::desc any_x(dnnl_util::to_dims(xd), memory::data_type::f32, memory::format_tag::any);
      const memory::desc any_y(dnnl_util::to_dims(yd), memory::data_type::f32, memory::format_tag::any);
      try {
        dnnl::convolution_forward::primitive_desc bpd = make_pd(any_x, any_y);
        if (!is_gemm_impl(bpd)) {
          pd = bpd;
          e->blocked = true;
        }
      } catch (const dnnl::error&) {
      }
    }
    e->wei = pd.weights_desc();
    e->reorder_w = e->wei != e->wei_user;
    if (e->blocked) {
      e->src_int = pd.src_desc();
      e->dst_int = pd.dst_desc();
      e->src_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(dnnl_util::engine(), e->src, dnnl_util::engine(), e->src_int));
      e->dst_reorder = dnnl::reorder(dnnl::reorder::primitive_desc(dnnl_util::engine(), e->dst_int, dnnl_util::engine(), e->dst));
    }
    e->scratch_md = pd.scratchpad_desc();
    e->scratch_bytes = e->scratch_md.get_size();
    e->prim = dnnl::convolution_forward(pd);
    if (const_w && e->reorder_w) e->packed_w = dnnl_util::reorder_to(e->wei_user, const_w, e->wei);
    e->ok = true;
  } catch (const dnnl::error&) {
    e->ok = false;
  }
  return e;
}

void run_conv(const ConvEntry& e, const float* x, const float* w, const float* b, float* y) {
  using namespace dnnl_util;
  dnnl::memory wm;
  if (!e.reorder_w) wm = wrap(e.wei, w);
  else if (e.packed_w) wm = e.packed_w;
  else wm = reorder_to(e.wei_user, w, e.wei);  // weights not constant: reorder per run
  // One per-thread buffer holds the scratchpad and the blocked activations.
  const size_t s_bytes = align64(e.scratch_bytes);
  const size_t x_bytes = e.blocked ? align64(e.src_int.get_size()) : 0;
  const size_t y_bytes = e.blocked ? align64(e.dst_int.get_size()) : 0;
  char* buf = static_cast<char*>(scratch(s_bytes + x_bytes + y_bytes));
  dnnl::memory xm = wrap(e.src, x), ym = wrap(e.dst, y);
  dnnl::memory xi = xm, yo = ym;
  if (e.blocked) {
    xi = wrap(e.src_int, buf + s_bytes);
    yo = wrap(e.dst_int, buf + s_bytes + x_bytes);
    e.src_reorder.execute(stream(), xm, xi);
  }
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, xi}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_DST, yo}};
  if (b) args.emplace(DNNL_ARG_BIAS, wrap(e.bias, b));
  if (e.scratch_bytes) args.emplace(DNNL_ARG_SCRATCHPAD, wrap(e.scratch_md, buf));
  e.prim.execute(stream(), args);
  if (e.blocked) e.dst_reorder.execute(stream(), yo, ym);
  stream().wait();
}
#endif

class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const KernelInit& init) : attrs_(init.attrs()) {
    w_const_ = init.constant(1) != nullptr;
#if OPENACL_HAVE_DNNL
    // Shapes known at compile time: build now, so run() only binds memory.
    const graph::TensorType& xt = init.input(0);
    const graph::TensorData* wc = init.constant(1);
    if (xt.dtype == DType::kFloat32 && xt.shape && graph::fully_known(*xt.shape) && wc) {
      std::vector<int64_t> xd;
      for (const auto& d : *xt.shape) xd.push_back(d.value);
      WindowGeom g;
      if (conv_geom(attrs_, xd, wc->dims, &g).empty()) {
        cache_.put_static(xd, wc->dims, init.has_input(2),
                          build_conv(g, xd, wc->dims, init.has_input(2), static_cast<const float*>(wc->data)));
      }
    }
#endif
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const bool has_b = ctx.has_input(2) && ctx.input(2).data;
    WindowGeom g;
    const std::string err = conv_geom(attrs_, x.dims, w.dims, &g);
    if (!err.empty()) return ctx.fail("%s", err.c_str());
    if (has_b && ctx.input(2).elements() != g.M) return ctx.fail("bias has %lld values, expected %lld",
                                                                  static_cast<long long>(ctx.input(2).elements()),
                                                                  static_cast<long long>(g.M));
    if (w.dtype != x.dtype || (has_b && ctx.input(2).dtype != x.dtype)) return ctx.fail("X, W and B types differ");
    Tensor* y = &ctx.output(0);
    const std::vector<int64_t> od = geom_out_dims(g);
    if (!y->data || y->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
    if (y->elements() == 0) return Status::Ok();
    const float* bf = has_b ? ctx.input(2).as<float>() : nullptr;
    switch (x.dtype) {
      case DType::kFloat32:
        run_f32(g, x, w, x.as<float>(), w.as<float>(), bf, y->as<float>());
        return Status::Ok();
      case DType::kFloat64:
        conv_ref<double>(g, x.as<double>(), w.as<double>(), has_b ? ctx.input(2).as<double>() : nullptr,
                         y->as<double>());
        return Status::Ok();
      case DType::kFloat16:
      case DType::kBFloat16: {
        const std::vector<float> xf = load_as<float>(x), wf = load_as<float>(w);
        std::vector<float> bv = has_b ? load_as<float>(ctx.input(2)) : std::vector<float>();
        std::vector<float> yf(static_cast<size_t>(y->elements()));
        run_f32(g, x, w, xf.data(), wf.data(), has_b ? bv.data() : nullptr, yf.data());
        store_from(yf, *y);
        return Status::Ok();
      }
      default:
        return ctx.fail("unsupported type");
    }
  }

 private:
  void run_f32(const WindowGeom& g, const Tensor& x, const Tensor& w, const float* xp, const float* wp, const float* bp,
               float* yp) const {
#if OPENACL_HAVE_DNNL
    // Constant weights may be prepacked from any run's copy (a float16
    // model's widened copy holds the same values every run).
    const std::shared_ptr<const ConvEntry> e = cache_.get(
        x.dims, w.dims, bp != nullptr, [&] { return build_conv(g, x.dims, w.dims, bp != nullptr, w_const_ ? wp : nullptr); });
    if (e && e->ok) {
      run_conv(*e, xp, wp, bp, yp);
      return;
    }
#endif
    (void)x, (void)w;
    conv_ref<float>(g, xp, wp, bp, yp);
  }

  graph::AttributeMap attrs_;
  bool w_const_ = false;
#if OPENACL_HAVE_DNNL
  dnnl_util::ShapeCache<ConvEntry> cache_;
#endif
};

Status make_conv(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  *out = std::make_unique<ConvKernel>(init);
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Conv, "cpu").types(float_types()).create(make_conv);

}  // namespace
}  // namespace openacl::kernels::cpu
