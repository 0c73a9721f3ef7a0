// The Conv kernels of fused nodes: see conv_fused.h.
#include "kernels/cpu/conv_fused.h"

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "graph/passes.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/conv_1x1.h"
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/conv_dw.h"
#include "kernels/cpu/conv_irb.h"
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/fused_activation.h"

namespace openacl::kernels::cpu {
namespace {

graph::Attribute ints_attr(std::vector<int64_t> v) {
  graph::Attribute r;
  r.kind = graph::Attribute::Kind::kInts;
  r.ints = std::move(v);
  return r;
}

graph::Attribute scalar_attr(graph::Attribute::Kind k, int64_t i, float f) {
  graph::Attribute r;
  r.kind = k;
  r.i = i;
  r.f = f;
  return r;
}

// The attributes of a fused node's depthwise half as a plain Conv's: 3x3,
// padding 1, the dw stride and activation, one group per channel.
void add_depthwise_attrs(const graph::AttributeMap& a, int64_t channels, graph::AttributeMap* out) {
  const int64_t s = a.get_int(graph::kFusedDwStrideAttr, 1);
  out->set("strides", ints_attr({s, s}));
  out->set("pads", ints_attr({1, 1, 1, 1}));
  out->set("kernel_shape", ints_attr({3, 3}));
  out->set("group", scalar_attr(graph::Attribute::Kind::kInt, channels, 0.f));
  if (a.has(graph::kFusedDwActivationAttr)) {
    out->set(graph::kFusedActivationAttr, *a.find(graph::kFusedDwActivationAttr));
    const auto kf = graph::Attribute::Kind::kFloat;
    out->set(graph::kFusedAlphaAttr, scalar_attr(kf, 0, a.get_float(graph::kFusedDwAlphaAttr, 0.f)));
    out->set(graph::kFusedBetaAttr, scalar_attr(kf, 0, a.get_float(graph::kFusedDwBetaAttr, 0.f)));
  }
}

// The dims of a type whose shape is fully known; empty otherwise.
std::vector<int64_t> known_dims(const graph::TensorType& t) {
  std::vector<int64_t> d;
  if (t.shape && graph::fully_known(*t.shape))
    for (const auto& x : *t.shape) d.push_back(x.value);
  return d;
}

// The tensor between the halves of a chained form: this thread's, over its
// fused_conv_buffer(slot) (conv_irb.h: 0 for a 1x1 + depthwise, 1 for a
// block), so that a steady run allocates nothing (the dims keep their
// capacity). attrs: the first half's (its output block).
Status middle_tensor(KernelContext& ctx, int slot, const graph::AttributeMap& attrs, DType dt,
                     std::span<const int64_t> dims, Tensor** out) {
  thread_local Tensor mids[2];
  Tensor* mid = &mids[slot];
  mid->dtype = dt;
  mid->dims.assign(dims.begin(), dims.end());
  const size_t bytes = blocked_bytes(dt, mid->dims, blocked_block(attrs, true, 0, dt, mid->dims), mid->bytes());
  mid->data = fused_conv_buffer(slot, bytes);
  if (!mid->data) return ctx.fail("out of memory for the %zu-byte tensor between the fused convolutions", bytes);
  *out = mid;
  return Status::Ok();
}

// A 1x1 Conv with the depthwise 3x3 Conv after it (graph::fuse_conv_depthwise):
// inputs X, W, B, -, Wd, Bd. With oneDNN's direct fused kernel (depthwise
// post-op: the 1x1's output rows go through a small ring buffer into the
// depthwise), one primitive; otherwise the two convolutions chained through
// a per-thread buffer, each run by a ConvKernel of its own (oneDNN declines
// the fusion or would only chain them itself, an activation without a
// post-op, weights that are not constant, no oneDNN).
class ConvDwKernel final : public Kernel {
 public:
  explicit ConvDwKernel(const KernelInit& init) {
    const graph::AttributeMap& a = init.attrs();
    stride_ = a.get_int(graph::kFusedDwStrideAttr, 1);
    // The two halves as plain Conv nodes: the 1x1 keeps the node's attributes
    // (its activation, X's layout); the depthwise takes the dw ones. The
    // tensor between them is blocked when the output is.
    const graph::Node& n = init.node();
    first_.name = n.name + "/1x1";
    second_.name = n.name + "/depthwise";
    first_.op_type = second_.op_type = "Conv";
    first_.opset = second_.opset = n.opset;
    for (const auto& [k, v] : a.all())
      if (k.rfind("__openacl_dw", 0) != 0 && k != kBlockedOutputsAttr && k != kBlockedPadOutputsAttr)
        first_.attrs.set(k, v);
    const bool y_marked = init.num_outputs() > 0 && blocked_block(a, true, 0, init.output(0)) != 0;
    if (a.has(kBlockedMaxAttr)) second_.attrs.set(kBlockedMaxAttr, *a.find(kBlockedMaxAttr));
    if (y_marked) {
      // The middle tensor only meets these two: padded blocks are fine.
      first_.attrs.set(kBlockedOutputsAttr, ints_attr({0}));
      first_.attrs.set(kBlockedPadOutputsAttr, ints_attr({0}));
      second_.attrs.set(kBlockedInputsAttr, ints_attr({0}));
      second_.attrs.set(kBlockedPadInputsAttr, ints_attr({0}));
      second_.attrs.set(kBlockedOutputsAttr, ints_attr({0}));
      if (a.has(kBlockedPadOutputsAttr)) second_.attrs.set(kBlockedPadOutputsAttr, *a.find(kBlockedPadOutputsAttr));
    }
    // The middle tensor's type: the 1x1's output.
    const graph::TensorType& xt = init.input(0);
    const graph::TensorType& wt = init.input(1);
    mid_type_.dtype = xt.dtype;
    if (xt.shape && wt.shape && xt.shape->size() == 4 && wt.shape->size() == 4)
      mid_type_.shape = graph::Shape{(*xt.shape)[0], (*wt.shape)[0], (*xt.shape)[2], (*xt.shape)[3]};
    const graph::TensorType none;
    const graph::TensorType& yt = init.num_outputs() > 0 ? init.output(0) : none;
    auto in = [&](size_t i) { return init.has_input(i) ? &init.input(i) : nullptr; };
    const bool c_known = mid_type_.shape && (*mid_type_.shape)[1].known();
    add_depthwise_attrs(a, c_known ? (*mid_type_.shape)[1].value : 0, &second_.attrs);
    KernelInit i1(first_, {in(0), in(1), in(2)}, {init.constant(0), init.constant(1), init.constant(2)}, {&mid_type_});
    KernelInit i2(second_, {&mid_type_, in(4), in(5)}, {nullptr, init.constant(4), init.constant(5)}, {&yt});
    i1.set_packs(init.packs());
    i2.set_packs(init.packs());
#if OPENACL_HAVE_DNNL
    fused_ = build_fused(init);
#endif
    if (!fused_) {
      halves_[0] = make_plain_conv(i1);
      halves_[1] = make_plain_conv(i2);
      // The middle's dims for X of the compiled shape, worked out once.
      WindowGeom g;
      const graph::TensorData* wc = init.constant(1);
      x_dims_ = known_dims(xt);
      if (!x_dims_.empty() && wc && conv_geom(first_.attrs, x_dims_, wc->dims, &g).empty())
        mid_dims_ = geom_out_dims(g);
      else
        x_dims_.clear();
    }
  }

  Status run(KernelContext& ctx) const override {
    if (!ctx.has_input(4)) return ctx.fail("the fused depthwise weights (input 4) are missing (internal error)");
#if OPENACL_HAVE_DNNL
    if (fused_) {
      const Tensor& x = ctx.input(0);
      Tensor& y = ctx.output(0);
      if (x.dtype != DType::kFloat32 || x.dims != fused_->xd || !y.data || y.dims != fused_->yd)
        return ctx.fail("input or output of a shape other than the compiled one (internal error)");
      run_fused(*fused_, x.data, ctx.has_input(2) ? ctx.input(2).data : nullptr,
                ctx.has_input(5) ? ctx.input(5).data : nullptr, y.data);
      return Status::Ok();
    }
#endif
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> run_dims;  // the middle's dims when X is not of the compiled shape
    if (x.dims != x_dims_ || x_dims_.empty()) {
      WindowGeom g;
      const std::string err = conv_geom(first_.attrs, x.dims, ctx.input(1).dims, &g);
      if (!err.empty()) return ctx.fail("%s", err.c_str());
      run_dims = geom_out_dims(g);
    }
    Tensor* mid = nullptr;
    OPENACL_RETURN_IF_ERROR(
        middle_tensor(ctx, 0, first_.attrs, x.dtype, run_dims.empty() ? mid_dims_ : run_dims, &mid));
    auto in = [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
    const Tensor* const i1[] = {in(0), in(1), in(2)};
    Tensor* const o1[] = {mid};
    KernelContext c1(first_, i1, o1);
    OPENACL_RETURN_IF_ERROR(halves_[0]->run(c1));
    const Tensor* const i2[] = {mid, in(4), in(5)};
    Tensor* const o2[] = {&ctx.output(0)};
    KernelContext c2(second_, i2, o2);
    return halves_[1]->run(c2);
  }

 private:
#if OPENACL_HAVE_DNNL
  struct Fused {
    dnnl::primitive prim;
    std::vector<int64_t> xd, yd;
    dnnl::memory::desc src, dst, bias, dw_bias, scratch_md;
    // X in 8-blocks beside a 16-block output (mixed_blocks): read through
    // src_int, X in 16-blocks with its channels padded.
    bool reorder_src = false;
    dnnl::memory::desc src_int;
    dnnl_util::Reorder src_reorder;
    dnnl_util::Packed w, dw_w;
    std::vector<float> zero_bias;  // the bias of either half when the model has none
    size_t scratch_bytes = 0;
    dnnl_util::ArgSets args;  // the execute arguments, reused
  };

  // The one-primitive form, or null (see the class comment).
  std::unique_ptr<Fused> build_fused(const KernelInit& init) const {
    using dnnl::memory;
    const graph::TensorData* wc = init.constant(1);
    const graph::TensorData* dwc = init.constant(4);
    const graph::TensorData* bc = init.has_input(2) ? init.constant(2) : nullptr;
    const graph::TensorData* dbc = init.has_input(5) ? init.constant(5) : nullptr;
    const graph::TensorType& xt = init.input(0);
    if (xt.dtype != DType::kFloat32 || !xt.shape || !graph::fully_known(*xt.shape) || !dnnl_util::const_f32(wc) ||
        !dnnl_util::const_f32(dwc) || (init.has_input(2) && !dnnl_util::const_f32(bc)) ||
        (init.has_input(5) && !dnnl_util::const_f32(dbc)) || init.num_outputs() != 1)
      return nullptr;
    const Activation act = Activation::of(first_.attrs), act2 = Activation::of(second_.attrs);
    auto f = std::make_unique<Fused>();
    for (const auto& d : *xt.shape) f->xd.push_back(d.value);
    WindowGeom g;
    if (!conv_geom(first_.attrs, f->xd, wc->dims, &g).empty() || g.G != 1 || g.nsp != 2) return nullptr;
    const std::vector<int64_t> md = geom_out_dims(g);
    f->yd = {md[0], md[1], (md[2] - 1) / stride_ + 1, (md[3] - 1) / stride_ + 1};
    if (dwc->dims != std::vector<int64_t>{md[1], 1, 3, 3}) return nullptr;
    const int64_t xb = blocked_block(init.attrs(), false, 0, DType::kFloat32, f->xd);
    const int64_t yb = blocked_block(init.attrs(), true, 0, DType::kFloat32, f->yd);
    try {
      f->src = dnnl_util::f32_desc(f->xd, xb);
      f->dst = dnnl_util::f32_desc(f->yd, yb);
      const memory::desc mid = dnnl_util::f32_desc(md, yb);
      const memory::desc wei_any(dnnl_util::to_dims(wc->dims), memory::data_type::f32, memory::format_tag::any);
      // Always with a bias (zeros when the model has none): oneDNN 2.6's
      // fused kernel crashed without one.
      f->bias = dnnl_util::plain_f32({g.M});
      dnnl::post_ops ops;
      if (!act.op.empty() && !act.add_post_op(&ops)) return nullptr;
      ops.append_dw(memory::data_type::f32, memory::data_type::f32, memory::data_type::f32, 3, stride_, 1, 0, {});
      if (!act2.op.empty() && !act2.add_post_op(&ops)) return nullptr;
      dnnl::primitive_attr attr = dnnl_util::base_attr();
      attr.set_post_ops(ops);
      auto make_pd = [&](const memory::desc& src) {
        const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                                   dnnl::algorithm::convolution_direct, src, wei_any, f->bias, mid,
                                                   {1, 1}, {0, 0}, {0, 0});
        return dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_util::engine());
      };
      // "ref_fused_convolution" only chains the two primitives: no gain.
      auto direct = [&](const dnnl::convolution_forward::primitive_desc& p, const memory::desc& src) {
        return !is_slow_impl(p) && p.src_desc() == src && p.dst_desc() == f->dst;
      };
      dnnl::convolution_forward::primitive_desc pd = make_pd(f->src);
      if (!direct(pd, f->src) && xb && yb && xb != yb) {
        const memory::desc src_int = dnnl_util::f32_desc(f->xd, yb);
        pd = make_pd(src_int);
        if (!direct(pd, src_int)) return nullptr;
        f->reorder_src = true;
        f->src_int = src_int;
        f->src_reorder.init(f->src, src_int);
      } else if (!direct(pd, f->src)) {
        return nullptr;
      }
      PackCache* packs = init.packs();
      f->w = dnnl_util::pack(dnnl_util::plain_f32(wc->dims), dnnl_util::const_f32(wc), pd.weights_desc(), packs);
      const int dw_w_arg = DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS;
      f->dw_w = dnnl_util::pack(dnnl_util::plain_f32({md[1], 1, 1, 3, 3}), dnnl_util::const_f32(dwc),
                                pd.query_md(dnnl::query::exec_arg_md, dw_w_arg), packs);
      f->dw_bias = pd.query_md(dnnl::query::exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS);
      if (f->dw_bias != dnnl_util::plain_f32({md[1]})) return nullptr;
      if (!bc || !dbc) f->zero_bias.assign(static_cast<size_t>(md[1]), 0.f);
      f->scratch_md = pd.scratchpad_desc();
      f->scratch_bytes = f->scratch_md.get_size();
      f->prim = dnnl::convolution_forward(pd);
      f->args.add(DNNL_ARG_SRC, f->reorder_src ? f->src_int : f->src);
      f->args.add(DNNL_ARG_DST, f->dst);
      f->args.add(DNNL_ARG_BIAS, f->bias);
      f->args.add(DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS, f->dw_bias);
      f->args.add_fixed(DNNL_ARG_WEIGHTS, f->w.mem);
      f->args.add_fixed(DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS, f->dw_w.mem);
      if (f->scratch_bytes) f->args.add(DNNL_ARG_SCRATCHPAD, f->scratch_md);
    } catch (const dnnl::error&) {
      return nullptr;
    }
    return f;
  }

  static void run_fused(const Fused& f, const void* x, const void* b, const void* dw_b, void* y) {
    using namespace dnnl_util;
    // One per-thread buffer: the scratchpad, then X in 16-blocks.
    const size_t s_bytes = align64(f.scratch_bytes);
    char* buf = static_cast<char*>(scratch(s_bytes + (f.reorder_src ? f.src_int.get_size() : 0)));
    if (f.reorder_src) {
      f.src_reorder.run(x, buf + s_bytes);
      x = buf + s_bytes;
    }
    ArgSets::Lease a = f.args.take();
    a.bind(DNNL_ARG_SRC, x);
    a.bind(DNNL_ARG_DST, y);
    a.bind(DNNL_ARG_BIAS, b ? b : f.zero_bias.data());
    a.bind(DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS, dw_b ? dw_b : f.zero_bias.data());
    if (f.scratch_bytes) a.bind(DNNL_ARG_SCRATCHPAD, buf);
    a.execute(f.prim);
    stream().wait();
  }

  std::unique_ptr<Fused> fused_;
#else
  std::nullptr_t fused_ = nullptr;
#endif
  int64_t stride_ = 1;
  graph::Node first_, second_;  // the halves, for the chained form (and names in its errors)
  graph::TensorType mid_type_;
  std::unique_ptr<Kernel> halves_[2];
  std::vector<int64_t> x_dims_, mid_dims_;  // the chained form's compiled shapes (empty: not known)
};

// Whether the node marks its input `index` with attribute `name` (kBlocked*InputsAttr).
bool marks(const graph::AttributeMap& a, const char* name, int64_t index) {
  const std::optional<std::vector<int64_t>> v = a.get_ints(name);
  return v && std::find(v->begin(), v->end(), index) != v->end();
}

// A Conv that absorbed the projecting 1x1 Conv after it and that one's
// residual add (graph::fuse_inverted_residual): a whole inverted residual
// block. Inputs X, W, B, R, Wd, Bd, Wp, Bp where the node is a 1x1 that
// absorbed its depthwise too (it has the dw attributes), X, Wd, Bd, R, -,
// -, Wp, Bp where it is the depthwise itself (R and the biases may be
// omitted). In one pass over bands of rows (conv_irb.h) for float32 in
// channel blocks with constant weights where our loops run; otherwise the
// head (the node without its projection: a 1x1 + depthwise or a depthwise,
// a kernel of its own) and then the projection, chained through a
// per-thread buffer.
class ConvBlockKernel final : public Kernel {
 public:
  explicit ConvBlockKernel(const KernelInit& init) {
    const graph::AttributeMap& a = init.attrs();
    const graph::Node& n = init.node();
    expand_ = a.has(graph::kFusedDwStrideAttr);
    sum_ = a.get_int(graph::kFusedSumAttr, 0) != 0;
    head_.name = n.name;
    proj_.name = n.name + "/project";
    head_.op_type = proj_.op_type = "Conv";
    head_.opset = proj_.opset = n.opset;
    // The head keeps the node's attributes but the projection's, the
    // residual's and Y's marks; the tensor between is blocked when Y is
    // (it only meets these two: padded blocks are fine).
    for (const auto& [k, v] : a.all()) {
      if (k == graph::kFusedProjectAttr || k == graph::kFusedSumAttr || k == kBlockedOutputsAttr ||
          k == kBlockedPadOutputsAttr)
        continue;
      if (k == kBlockedInputsAttr || k == kBlockedPadInputsAttr) {
        if (marks(a, k.c_str(), 0)) head_.attrs.set(k, ints_attr({0}));
        continue;
      }
      head_.attrs.set(k, v);
    }
    if (a.has(kBlockedMaxAttr)) proj_.attrs.set(kBlockedMaxAttr, *a.find(kBlockedMaxAttr));
    if (sum_) proj_.attrs.set(graph::kFusedSumAttr, scalar_attr(graph::Attribute::Kind::kInt, 1, 0.f));
    if (init.num_outputs() > 0 && blocked_block(a, true, 0, init.output(0)) != 0) {
      head_.attrs.set(kBlockedOutputsAttr, ints_attr({0}));
      head_.attrs.set(kBlockedPadOutputsAttr, ints_attr({0}));
      std::vector<int64_t> ins = {0}, pads = {0};
      if (marks(a, kBlockedInputsAttr, 3)) ins.push_back(3);
      if (marks(a, kBlockedPadInputsAttr, 3)) pads.push_back(3);
      proj_.attrs.set(kBlockedInputsAttr, ints_attr(ins));
      proj_.attrs.set(kBlockedPadInputsAttr, ints_attr(pads));
      proj_.attrs.set(kBlockedOutputsAttr, ints_attr({0}));
      if (a.has(kBlockedPadOutputsAttr)) proj_.attrs.set(kBlockedPadOutputsAttr, *a.find(kBlockedPadOutputsAttr));
    }
    // The tensor between: the depthwise's output, Y's size with the depthwise's channels.
    const graph::TensorType none;
    const graph::TensorType& yt = init.num_outputs() > 0 ? init.output(0) : none;
    const graph::TensorType& wdt = init.input(dw_weights());
    mid_type_.dtype = init.input(0).dtype;
    if (yt.shape && yt.shape->size() == 4 && wdt.shape && wdt.shape->size() == 4)
      mid_type_.shape = graph::Shape{(*yt.shape)[0], (*wdt.shape)[0], (*yt.shape)[2], (*yt.shape)[3]};
    auto in = [&](size_t i) { return init.has_input(i) ? &init.input(i) : nullptr; };
    std::vector<const graph::TensorType*> head_in = {in(0), in(1), in(2)};
    std::vector<const graph::TensorData*> head_c = {init.constant(0), init.constant(1), init.constant(2)};
    if (expand_) {
      head_in.insert(head_in.end(), {nullptr, in(4), in(5)});
      head_c.insert(head_c.end(), {nullptr, init.constant(4), init.constant(5)});
    }
    KernelInit ih(head_, head_in, head_c, {&mid_type_});
    KernelInit ip(proj_, {&mid_type_, in(6), in(7), in(3)}, {nullptr, init.constant(6), init.constant(7), nullptr},
                  {&yt});
    ih.set_packs(init.packs());
    ip.set_packs(init.packs());
    build_block(init);
    if (!block_) {
      head_kernel_ = make_any_conv(ih);
      proj_kernel_ = make_plain_conv(ip);
    }
  }

  Status run(KernelContext& ctx) const override {
    if (!ctx.has_input(dw_weights()) || !ctx.has_input(6))
      return ctx.fail("the fused depthwise or projection weights (input %zu or 6) are missing (internal error)",
                      dw_weights());
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (block_) {
      if (x.dtype != DType::kFloat32 || x.dims != xd_ || !y.data || y.dims != yd_)
        return ctx.fail("input or output of a shape other than the compiled one (internal error)");
      const float* r = sum_ && ctx.has_input(3) ? static_cast<const float*>(ctx.input(3).data) : nullptr;
      if (!block_->run(static_cast<const float*>(x.data), static_cast<float*>(y.data), r))
        return ctx.fail("out of memory for the fused block's band buffers");
      return Status::Ok();
    }
    const Tensor& wd = ctx.input(dw_weights());
    if (y.dims.size() != 4 || wd.dims.empty()) return ctx.fail("a fused block needs a 4-D output (internal error)");
    Tensor* mid = nullptr;
    const int64_t md[] = {y.dims[0], wd.dims[0], y.dims[2], y.dims[3]};
    OPENACL_RETURN_IF_ERROR(middle_tensor(ctx, 1, head_.attrs, x.dtype, md, &mid));
    auto in = [&](size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
    const Tensor* const head_in[] = {in(0), in(1), in(2), nullptr, in(4), in(5)};
    Tensor* const head_out[] = {mid};
    KernelContext c1(head_, std::span(head_in, expand_ ? 6 : 3), head_out);
    OPENACL_RETURN_IF_ERROR(head_kernel_->run(c1));
    const Tensor* const proj_in[] = {mid, in(6), in(7), in(3)};
    Tensor* const proj_out[] = {&y};
    KernelContext c2(proj_, proj_in, proj_out);
    return proj_kernel_->run(c2);
  }

 private:
  size_t dw_weights() const { return expand_ ? 4 : 1; }

  // The one-pass form, where the shapes are known, the weights constant and
  // our loops take every part.
  void build_block(const KernelInit& init) {
#if OPENACL_HAVE_DNNL
    const graph::TensorType& xt = init.input(0);
    if (xt.dtype != DType::kFloat32 || init.num_outputs() != 1) return;
    xd_ = known_dims(xt);
    yd_ = known_dims(init.output(0));
    if (xd_.size() != 4 || yd_.size() != 4) return;
    const graph::AttributeMap& a = init.attrs();
    const int64_t xb = blocked_block(a, false, 0, xt), yb = blocked_block(a, true, 0, init.output(0));
    // The inner tensors take Y's block (the loops' lanes: 16 on AVX-512, 8 on AVX2).
    if ((yb != 16 && yb != 8) || (sum_ && (!init.has_input(3) || blocked_block(a, false, 3, init.input(3)) != yb)))
      return;
    auto weights = [&](size_t i) { return init.has_input(i) ? dnnl_util::const_f32(init.constant(i)) : nullptr; };
    auto bias_ok = [&](size_t i) { return !init.has_input(i) || weights(i); };
    const size_t wd = dw_weights();
    if (!weights(wd) || !bias_ok(wd + 1) || !weights(6) || !bias_ok(7) || (expand_ && (!weights(1) || !bias_ok(2))))
      return;
    PackCache* packs = init.packs();
    std::shared_ptr<const Conv1x1> expand;
    std::shared_ptr<const ConvDepthwise> dw;
    WindowGeom g, gd, gp;
    if (expand_) {
      if (!conv_geom(a, xd_, init.constant(1)->dims, &g).empty()) return;
      expand = Conv1x1::make(g, weights(1), weights(2), xb, yb, Activation::of(a), packs);
      const std::vector<int64_t> md = geom_out_dims(g);
      graph::AttributeMap da;
      add_depthwise_attrs(a, md[1], &da);
      if (!expand || !conv_geom(da, md, init.constant(4)->dims, &gd).empty()) return;
      dw = ConvDepthwise::make(gd, weights(4), weights(5), yb, yb, Activation::of(da), packs);
    } else {
      if (!conv_geom(a, xd_, init.constant(1)->dims, &gd).empty()) return;
      dw = ConvDepthwise::make(gd, weights(1), weights(2), xb, yb, Activation::of(a), packs);
    }
    if (!dw || !conv_geom(graph::AttributeMap{}, geom_out_dims(gd), init.constant(6)->dims, &gp).empty() ||
        geom_out_dims(gp) != yd_)
      return;
    block_ = InvertedResidual::make(std::move(expand), std::move(dw),
                                    Conv1x1::make(gp, weights(6), weights(7), yb, yb, Activation{}, packs), xd_[0]);
#else
    (void)init;
#endif
  }

  bool expand_ = false, sum_ = false;
  graph::Node head_, proj_;  // the halves, for the chained form (and names in its errors)
  graph::TensorType mid_type_;
  std::shared_ptr<const InvertedResidual> block_;
  std::vector<int64_t> xd_, yd_;  // the shapes block_ was built for
  std::unique_ptr<Kernel> head_kernel_, proj_kernel_;
};

}  // namespace

std::unique_ptr<Kernel> make_conv_depthwise(const KernelInit& init) { return std::make_unique<ConvDwKernel>(init); }

std::unique_ptr<Kernel> make_conv_block(const KernelInit& init) { return std::make_unique<ConvBlockKernel>(init); }

}  // namespace openacl::kernels::cpu
