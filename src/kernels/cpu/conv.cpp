// Conv: oneDNN convolution for float32 (primitive built once at compile time
// when the shapes are known, weights reordered once into the primitive's
// preferred layout when they are constant; built lazily per input shape
// otherwise), the reference loops for float64 and for cases oneDNN declines.
// float16/bfloat16 are widened to float and take the float32 path.
// Layouts: see conv_dnnl.h.
#include <memory>
#include <string>
#include <unordered_map>

#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/dnnl_common.h"

namespace openacl::kernels::cpu {
namespace {

#if OPENACL_HAVE_DNNL
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
    finish_conv_entry<dnnl::convolution_forward>(e.get(), xd, yd, const_w, [&](const memory::desc& src, const memory::desc& dst) {
      const auto desc = has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                                   dnnl::algorithm::convolution_direct, src, wei_any,
                                                                   e->bias, dst, strides, dil, pl, pr)
                                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                                   dnnl::algorithm::convolution_direct, src, wei_any,
                                                                   dst, strides, dil, pl, pr);
      return dnnl::convolution_forward::primitive_desc(desc, dnnl_util::base_attr(), dnnl_util::engine());
    });
  } catch (const dnnl::error&) {
    e->ok = false;
  }
  return e;
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
    if (xt.dtype == DType::kFloat32 && xt.shape && graph::fully_known(*xt.shape) && dnnl_util::const_f32(wc)) {
      std::vector<int64_t> xd;
      for (const auto& d : *xt.shape) xd.push_back(d.value);
      WindowGeom g;
      if (conv_geom(attrs_, xd, wc->dims, &g).empty()) {
        cache_.put_static(xd, wc->dims, init.has_input(2),
                          build_conv(g, xd, wc->dims, init.has_input(2), dnnl_util::const_f32(wc)));
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
      run_conv_entry(*e, xp, wp, bp, yp);
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
