// ConvTranspose: oneDNN deconvolution for float32 (built at compile time for
// known shapes with the weights prepacked when constant, lazily per shape
// otherwise); the reference scatter loops (conv_ref.cpp) for float64, for
// cases oneDNN declines (e.g. output_shape larger than the natural size, which
// makes its right padding negative) and without oneDNN. float16/bfloat16 are
// widened to float. output_shape / auto_pad / output_padding are resolved by
// conv_transpose_geom (ONNX's total_padding equations).
#include <memory>

#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

#if OPENACL_HAVE_DNNL
std::shared_ptr<const ConvEntry> build_deconv(const WindowGeom& g, const std::vector<int64_t>& xd, bool has_bias,
                                              const float* const_w) {
  auto e = std::make_shared<ConvEntry>();
  if (g.N == 0 || g.C == 0 || g.M == 0 || g.out_size() == 0) return e;
  try {
    using dnnl::memory;
    memory::dims strides, dil, pl, pr, kdims;
    int64_t ksz = 1;
    for (int i = kMaxSpatial - g.nsp; i < kMaxSpatial; ++i) {
      const int64_t eff = (g.k[i] - 1) * g.d[i] + 1;
      strides.push_back(g.s[i]);
      dil.push_back(g.d[i] - 1);
      pl.push_back(g.pb[i]);
      pr.push_back((g.in[i] - 1) * g.s[i] + eff - g.pb[i] - g.out[i]);  // output_padding folded in
      kdims.push_back(g.k[i]);
      ksz *= g.k[i];
    }
    // ONNX W is [C, M/G, k..] = per group (Cg, Mg); oneDNN wants (G,) Mg, Cg, k..:
    // the same memory described with swapped strides.
    const int64_t Cg = g.C / g.G, Mg = g.M / g.G;
    memory::dims wdims, wstrides;
    if (g.G > 1) wdims.push_back(g.G), wstrides.push_back(Cg * Mg * ksz);
    wdims.push_back(Mg), wstrides.push_back(ksz);
    wdims.push_back(Cg), wstrides.push_back(Mg * ksz);
    const std::vector<int64_t> kst = strides_of(std::vector<int64_t>(kdims.begin(), kdims.end()));
    for (size_t i = 0; i < kdims.size(); ++i) wdims.push_back(kdims[i]), wstrides.push_back(kst[i]);
    const std::vector<int64_t> yd = geom_out_dims(g);
    e->src = dnnl_util::plain_f32(xd);
    e->dst = dnnl_util::plain_f32(yd);
    e->wei_user = memory::desc(wdims, memory::data_type::f32, wstrides);
    const memory::desc wei_any(wdims, memory::data_type::f32, memory::format_tag::any);
    if (has_bias) e->bias = dnnl_util::plain_f32({g.M});
    finish_conv_entry<dnnl::deconvolution_forward>(e.get(), xd, yd, const_w, [&](const memory::desc& src,
                                                                                 const memory::desc& dst) {
      const auto desc =
          has_bias ? dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                       dnnl::algorithm::deconvolution_direct, src, wei_any, e->bias,
                                                       dst, strides, dil, pl, pr)
                   : dnnl::deconvolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                       dnnl::algorithm::deconvolution_direct, src, wei_any, dst,
                                                       strides, dil, pl, pr);
      return dnnl::deconvolution_forward::primitive_desc(desc, dnnl_util::base_attr(), dnnl_util::engine());
    });
  } catch (const dnnl::error&) {
    e->ok = false;
  }
  return e;
}
#endif

class ConvTransposeKernel final : public Kernel {
 public:
  explicit ConvTransposeKernel(const KernelInit& init) : attrs_(init.attrs()) {
    w_const_ = init.constant(1) != nullptr;
#if OPENACL_HAVE_DNNL
    const graph::TensorType& xt = init.input(0);
    const graph::TensorData* wc = init.constant(1);
    if (xt.dtype == DType::kFloat32 && xt.shape && graph::fully_known(*xt.shape) && dnnl_util::const_f32(wc)) {
      std::vector<int64_t> xd;
      for (const auto& d : *xt.shape) xd.push_back(d.value);
      WindowGeom g;
      if (conv_transpose_geom(attrs_, xd, wc->dims, &g).empty())
        cache_.put_static(xd, wc->dims, init.has_input(2),
                          build_deconv(g, xd, init.has_input(2), dnnl_util::const_f32(wc)));
    }
#endif
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const bool has_b = ctx.has_input(2) && ctx.input(2).data;
    WindowGeom g;
    const std::string err = conv_transpose_geom(attrs_, x.dims, w.dims, &g);
    if (!err.empty()) return ctx.fail("%s", err.c_str());
    if (has_b && ctx.input(2).elements() != g.M)
      return ctx.fail("bias has %lld values, expected %lld", static_cast<long long>(ctx.input(2).elements()),
                      static_cast<long long>(g.M));
    if (w.dtype != x.dtype || (has_b && ctx.input(2).dtype != x.dtype)) return ctx.fail("X, W and B types differ");
    Tensor* y = &ctx.output(0);
    const std::vector<int64_t> od = geom_out_dims(g);
    if (!y->data || y->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
    if (y->elements() == 0) return Status::Ok();
    switch (x.dtype) {
      case DType::kFloat32:
        run_f32(g, x, w, x.as<float>(), w.as<float>(), has_b ? ctx.input(2).as<float>() : nullptr, y->as<float>());
        return Status::Ok();
      case DType::kFloat64:
        conv_transpose_ref<double>(g, x.as<double>(), w.as<double>(), has_b ? ctx.input(2).as<double>() : nullptr,
                                   y->as<double>());
        return Status::Ok();
      case DType::kFloat16:
      case DType::kBFloat16: {
        const std::vector<float> xf = load_as<float>(x), wf = load_as<float>(w);
        const std::vector<float> bf = has_b ? load_as<float>(ctx.input(2)) : std::vector<float>();
        std::vector<float> yf(static_cast<size_t>(y->elements()));
        run_f32(g, x, w, xf.data(), wf.data(), has_b ? bf.data() : nullptr, yf.data());
        store_from(yf, *y);
        return Status::Ok();
      }
      default:
        return ctx.fail("unsupported type");
    }
  }

 private:
  void run_f32(const WindowGeom& g, const Tensor& x, const Tensor& w, const float* xp, const float* wp,
               const float* bp, float* yp) const {
#if OPENACL_HAVE_DNNL
    const std::shared_ptr<const ConvEntry> e = cache_.get(
        x.dims, w.dims, bp != nullptr, [&] { return build_deconv(g, x.dims, bp != nullptr, w_const_ ? wp : nullptr); });
    if (e && e->ok) {
      run_conv_entry(*e, xp, wp, bp, yp);
      return;
    }
#endif
    (void)x, (void)w;
    conv_transpose_ref<float>(g, xp, wp, bp, yp);
  }

  graph::AttributeMap attrs_;
  bool w_const_ = false;
#if OPENACL_HAVE_DNNL
  dnnl_util::ShapeCache<ConvEntry> cache_;
#endif
};

Status make_conv_transpose(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  *out = std::make_unique<ConvTransposeKernel>(init);
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(ConvTranspose, "cpu").types(float_types()).create(make_conv_transpose);

}  // namespace
}  // namespace openacl::kernels::cpu
