// Conv: oneDNN convolution for float32 (primitive built once at compile time
// when the shapes are known, weights reordered once into the primitive's
// preferred layout when they are constant; built lazily per input shape
// otherwise), the reference loops for float64 and for cases oneDNN declines.
// float16/bfloat16 are widened to float and take the float32 path.
//
// Layouts: X and Y are plain N C D.. H W; only the weights are blocked. To
// chain blocked activations across layers later, Entry would carry the
// src/dst descs the primitive wants and run() would accept them.
#include <memory>
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
  dnnl::memory::desc src, wei_user, wei, bias, dst;
  bool reorder_w = false;  // the primitive wants another weight layout
  dnnl::memory packed_w;    // weights already in that layout (constant W)
  dnnl::memory::desc scratch_md;
  size_t scratch_bytes = 0;
};

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
    e->src = dnnl_util::plain_f32(xd);
    e->dst = dnnl_util::plain_f32(geom_out_dims(g));
    e->wei_user = dnnl_util::plain_f32(wdims);
    const memory::desc wei_any(dnnl_util::to_dims(wdims), memory::data_type::f32, memory::format_tag::any);
    if (has_bias) e->bias = dnnl_util::plain_f32({g.M});
    const auto desc = has_bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                                 dnnl::algorithm::convolution_direct, e->src, wei_any,
                                                                 e->bias, e->dst, strides, dil, pl, pr)
                               : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                                 dnnl::algorithm::convolution_direct, e->src, wei_any,
                                                                 e->dst, strides, dil, pl, pr);
    const dnnl::convolution_forward::primitive_desc pd(desc, dnnl_util::base_attr(), dnnl_util::engine());
    e->wei = pd.weights_desc();
    e->reorder_w = e->wei != e->wei_user;
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
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, wrap(e.src, x)},
                                             {DNNL_ARG_WEIGHTS, wm},
                                             {DNNL_ARG_DST, wrap(e.dst, y)}};
  if (b) args.emplace(DNNL_ARG_BIAS, wrap(e.bias, b));
  if (e.scratch_bytes)
    args.emplace(DNNL_ARG_SCRATCHPAD, wrap(e.scratch_md, scratch(e.scratch_bytes)));
  e.prim.execute(stream(), args);
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
        static_key_ = key(xd, wc->dims);
        static_ = build_conv(g, xd, wc->dims, init.has_input(2), static_cast<const float*>(wc->data));
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
  static std::vector<int64_t> key(const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
    std::vector<int64_t> k = x;
    k.push_back(-1);
    k.insert(k.end(), w.begin(), w.end());
    return k;
  }

  void run_f32(const WindowGeom& g, const Tensor& x, const Tensor& w, const float* xp, const float* wp, const float* bp,
               float* yp) const {
#if OPENACL_HAVE_DNNL
    const std::vector<int64_t> k = key(x.dims, w.dims);
    std::shared_ptr<const ConvEntry> e;
    // Constant weights may be prepacked from any run's copy (a float16
    // model's widened copy holds the same values every run).
    if (static_ && k == static_key_) e = static_;
    else e = cache_.get(k, [&] { return build_conv(g, x.dims, w.dims, bp != nullptr, w_const_ ? wp : nullptr); });
    if (e && e->ok && (bp != nullptr) == !e->bias.is_zero()) {
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
  std::vector<int64_t> static_key_;
  std::shared_ptr<const ConvEntry> static_;
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
