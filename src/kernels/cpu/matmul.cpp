// MatMul (numpy semantics: 1-D operands promoted, batch dims broadcast) and
// the shared oneDNN matmul builder (matmul_common.h). float32 goes to oneDNN
// (built at compile time for known shapes, B prepacked when constant; lazily
// per shape otherwise); other types use the reference GEMM.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "kernels/cpu/conv_ref.h"  // load_as / store_from
#include "kernels/cpu/matmul_common.h"
#include "kernels/cpu/sgemm_packed.h"
#include "kernels/cpu/sgemm_strassen.h"
#include "base/page_alloc.h"

namespace openacl::kernels::cpu {

#if OPENACL_HAVE_DNNL
std::shared_ptr<const MatmulEntry> build_matmul(const MatmulSpec& s, const float* const_b, bool with_post_ops) {
  auto e = std::make_shared<MatmulEntry>();
  for (int64_t d : s.c_dims)
    if (d == 0) return e;
  for (int64_t d : s.a_dims)
    if (d == 0) return e;
  const bool wants_post_ops = s.sum || !s.act.op.empty();
  try {
    using dnnl::memory;
    e->a = memory::desc(dnnl_util::to_dims(s.a_dims), memory::data_type::f32, dnnl_util::to_dims(s.a_strides));
    e->b_user = memory::desc(dnnl_util::to_dims(s.b_dims), memory::data_type::f32, dnnl_util::to_dims(s.b_strides));
    e->c = dnnl_util::plain_f32(s.c_dims);
    // Let oneDNN pick B's layout only when B can be packed once. Its brgemm
    // matmul (AVX-512) packs B into blocks; its sgemm (AVX2) keeps float32 B
    // plain, which is pathological when B's rows are a multiple of 4 KiB
    // apart and M is small: every row falls into the same cache sets while
    // the sgemm copies B panels. BERT's 768x3072 at M=128 runs at 43 GFLOP/s
    // plain (64-byte aligned) against 80-85 with B stored transposed; from
    // M=512 up both are the same. Such a constant B, where oneDNN keeps it
    // plain, is stored transposed ("ba": K contiguous) once, at build. (On
    // brgemm, "ba" ran the same GEMM 5-10% slower than oneDNN's blocks.)
    memory::desc b_req = e->b_user;
    bool aliasing_rows = false;
    if (const_b) {
      aliasing_rows = s.b_dims.size() == 2 && s.b_strides.size() == 2 && s.b_strides[1] == 1 && s.b_dims[0] > 1 &&
                      (s.b_strides[0] * sizeof(float)) % 4096 == 0;
      b_req = memory::desc(dnnl_util::to_dims(s.b_dims), memory::data_type::f32, memory::format_tag::any);
      // B already stored transposed (Gemm's transB, the classifier of every
      // torchvision CNN): used where it lies, as above.
      const bool transposed = s.b_dims.size() == 2 && s.b_strides.size() == 2 && s.b_strides[0] == 1 &&
                              s.b_strides[1] == s.b_dims[0];
      if (transposed) b_req = e->b_user, aliasing_rows = false;
    }
    dnnl::primitive_attr attr = dnnl_util::base_attr();
    if (s.alpha != 1.f) attr.set_output_scales(0, {s.alpha});
    dnnl::post_ops po;
    if (s.accumulate) po.append_sum(1.f);
    if (with_post_ops && wants_post_ops) {
      if (s.sum) po.append_sum(1.f);
      e->fused = s.act.op.empty() || s.act.add_post_op(&po);
      if (!e->fused) return build_matmul(s, const_b, false);
    }
    if (po.len() > 0) attr.set_post_ops(po);
    if (s.bias) {
      std::vector<int64_t> bd(s.c_dims.size(), 1);
      bd.back() = s.c_dims.back();
      e->bias = dnnl_util::plain_f32(bd);
    }
    auto make_pd = [&](const memory::desc& b) {
      const auto desc = s.bias ? dnnl::matmul::desc(e->a, b, e->bias, e->c) : dnnl::matmul::desc(e->a, b, e->c);
      return dnnl::matmul::primitive_desc(desc, attr, dnnl_util::engine());
    };
    dnnl::matmul::primitive_desc pd = make_pd(b_req);
    if (aliasing_rows && pd.weights_desc() == dnnl_util::plain_f32(s.b_dims))
      pd = make_pd(memory::desc(dnnl_util::to_dims(s.b_dims), memory::data_type::f32, memory::format_tag::ba));
    e->b = pd.weights_desc();
    e->reorder_b = e->b != e->b_user;
    e->scratch_md = pd.scratchpad_desc();
    e->scratch_bytes = e->scratch_md.get_size();
    e->prim = dnnl::matmul(pd);
    if (const_b && e->reorder_b) e->packed_b = dnnl_util::pack(e->b_user, const_b, e->b, s.packs);
    e->args.add(DNNL_ARG_SRC, e->a);
    e->args.add(DNNL_ARG_DST, e->c);
    if (e->packed_b) e->args.add_fixed(DNNL_ARG_WEIGHTS, e->packed_b.mem);
    else if (!e->reorder_b) e->args.add(DNNL_ARG_WEIGHTS, e->b);
    if (s.bias) e->args.add(DNNL_ARG_BIAS, e->bias);
    if (e->scratch_bytes) e->args.add(DNNL_ARG_SCRATCHPAD, e->scratch_md);
    e->ok = true;
  } catch (const dnnl::error&) {
    e->ok = false;
    if (with_post_ops && wants_post_ops) return build_matmul(s, const_b, false);
  }
  return e;
}

void run_matmul(const MatmulEntry& e, const float* a, const float* b, float* c, const float* bias) {
  using namespace dnnl_util;
  if (e.reorder_b && !e.packed_b) {  // B not constant, in another layout: reordered per run
    std::unordered_map<int, dnnl::memory> args{
        {DNNL_ARG_SRC, wrap(e.a, a)}, {DNNL_ARG_WEIGHTS, reorder_to(e.b_user, b, e.b)}, {DNNL_ARG_DST, wrap(e.c, c)}};
    if (bias) args.emplace(DNNL_ARG_BIAS, wrap(e.bias, bias));
    if (e.scratch_bytes) args.emplace(DNNL_ARG_SCRATCHPAD, wrap(e.scratch_md, scratch(e.scratch_bytes)));
    e.prim.execute(stream(), args);
  } else {
    ArgSets::Lease l = e.args.take();
    l.bind(DNNL_ARG_SRC, a);
    l.bind(DNNL_ARG_DST, c);
    if (!e.reorder_b) l.bind(DNNL_ARG_WEIGHTS, b);
    if (bias) l.bind(DNNL_ARG_BIAS, bias);
    if (e.scratch_bytes) l.bind(DNNL_ARG_SCRATCHPAD, scratch(e.scratch_bytes));
    l.execute(e.prim);
  }
  stream().wait();
}
#endif

std::string matmul_shape(const std::vector<int64_t>& ad, const std::vector<int64_t>& bd, MatmulShape* s) {
  if (ad.empty() || bd.empty()) return "MatMul operands must not be scalars";
  std::vector<int64_t> a = ad, b = bd;
  if (ad.size() == 1) a.insert(a.begin(), 1);
  if (bd.size() == 1) b.push_back(1);
  const size_t R = std::max(a.size(), b.size());
  a.insert(a.begin(), R - a.size(), 1);
  b.insert(b.begin(), R - b.size(), 1);
  s->M = a[R - 2], s->K = a[R - 1], s->N = b[R - 1];
  if (b[R - 2] != s->K) return "inner dimensions differ";
  s->batch.clear();
  s->b_is_2d = true;
  for (size_t i = 0; i + 2 < R; ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return "batch dimensions do not broadcast";
    s->batch.push_back(a[i] == 1 ? b[i] : a[i]);
    s->b_is_2d = s->b_is_2d && b[i] == 1;
  }
  s->out = s->batch;
  if (ad.size() != 1) s->out.push_back(s->M);
  if (bd.size() != 1) s->out.push_back(s->N);
  s->a = std::move(a);
  s->b = std::move(b);
  return "";
}

namespace {

template <class T>
void matmul_ref(const MatmulShape& s, const T* A, const T* B, T* C) {
  using Acc = std::conditional_t<std::is_same_v<T, int32_t>, int64_t,
                                 std::conditional_t<std::is_same_v<T, uint32_t>, uint64_t, ComputeType<T>>>;
  batched_matmul_ref<T, T, Acc, T>(s, A, B, C);
}

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(const KernelInit& init)
      : bias_(init.attrs().get_int(graph::kFusedBiasAttr, 0) != 0 && init.has_input(2)),
        sum_(init.attrs().get_int(graph::kFusedSumAttr, 0) != 0 && init.has_input(3)),
        act_(Activation::of(init.attrs())) {
    b_const_ = init.constant(1) != nullptr;
#if OPENACL_HAVE_DNNL
    const graph::TensorType& at = init.input(0);
    const graph::TensorType& bt = init.input(1);
    if (at.dtype == DType::kFloat32 && at.shape && graph::fully_known(*at.shape) && bt.shape &&
        graph::fully_known(*bt.shape)) {
      std::vector<int64_t> ad, bd;
      for (const auto& d : *at.shape) ad.push_back(d.value);
      for (const auto& d : *bt.shape) bd.push_back(d.value);
      MatmulShape s;
      if (matmul_shape(ad, bd, &s).empty()) {
        static_shape_ = s;
        static_a_ = ad;
        static_b_ = bd;
        const graph::TensorData* bc = init.constant(1);
        if (!build_packed(s, ad, dnnl_util::const_f32(bc), init.packs()))
          cache_.put_static(ad, bd, 0, build(s, dnnl_util::const_f32(bc), bias_, sum_, act_, init.packs()));
      }
    }
#endif
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype != b.dtype) return ctx.fail("A and B types differ");
    // The shapes compiled for: the shape worked out then (no vectors per run).
    MatmulShape dynamic_shape;
    const bool compiled = !static_a_.empty() && a.dims == static_a_ && b.dims == static_b_;
    if (!compiled) {
      const std::string err = matmul_shape(a.dims, b.dims, &dynamic_shape);
      if (!err.empty()) return ctx.fail("%s (A %s, B %s)", err.c_str(), a.type().str().c_str(), b.type().str().c_str());
    }
    const MatmulShape& s = compiled ? static_shape_ : dynamic_shape;
    Tensor* y = &ctx.output(0);
    if (!y->data || y->dims != s.out) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, s.out, &y));
    if (y->elements() == 0) return Status::Ok();
    if (packed_b_ && a.dtype == DType::kFloat32 && a.dims == packed_a_dims_) return run_packed(ctx, s, a, y);
    if (bias_ || sum_ || !act_.op.empty()) return run_fused(ctx, s, a, b, y);
#if OPENACL_HAVE_DNNL
    if (a.dtype == DType::kFloat32) {
      auto e = cache_.get(a.dims, b.dims, 0, [&] { return build(s, b_const_ ? b.as<float>() : nullptr); });
      if (e && e->ok) {
        run_matmul(*e, a.as<float>(), b.as<float>(), y->as<float>());
        return Status::Ok();
      }
    } else if (a.dtype == DType::kFloat16 || a.dtype == DType::kBFloat16) {
      // Widened to float32 (copies): the float32 primitive beats the scalar loops.
      // A constant B may be prepacked from the widened copy (same values every run).
      const std::vector<float> af = load_as<float>(a), bf = load_as<float>(b);
      auto e = cache_.get(a.dims, b.dims, 0, [&] { return build(s, b_const_ ? bf.data() : nullptr); });
      if (e && e->ok) {
        std::vector<float> yf(static_cast<size_t>(y->elements()));
        run_matmul(*e, af.data(), bf.data(), yf.data());
        store_from(yf, *y);
        return Status::Ok();
      }
    }
#endif
    bool ok = dispatch<kNumeric>(a.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      matmul_ref<T>(s, a.as<T>(), b.as<T>(), y->as<T>());
    });
    return ok ? Status::Ok() : ctx.fail("unsupported type");
  }

 private:
#if OPENACL_HAVE_DNNL
  static std::shared_ptr<const MatmulEntry> build(const MatmulShape& s, const float* const_b, bool bias = false,
                                                  bool sum = false, const Activation& act = {},
                                                  PackCache* packs = nullptr) {
    MatmulSpec spec;
    spec.packs = packs;
    spec.bias = bias;
    spec.sum = sum;
    spec.act = act;
    if (s.b_is_2d) {  // fold A's batch into M: one large GEMM against a shared B
      int64_t rows = s.M;
      for (int64_t d : s.batch) rows *= d;
      spec.a_dims = {rows, s.K};
      spec.b_dims = {s.K, s.N};
      spec.c_dims = {rows, s.N};
    } else {
      spec.a_dims = s.a;
      spec.b_dims = s.b;
      spec.c_dims = s.batch;
      spec.c_dims.push_back(s.M);
      spec.c_dims.push_back(s.N);
    }
    spec.a_strides = strides_of(spec.a_dims);
    spec.b_strides = strides_of(spec.b_dims);
    return build_matmul(spec, const_b);
  }
  dnnl_util::ShapeCache<MatmulEntry> cache_;
#endif

  // A constant 2-D B packed once for a GEMM of our own (from atc's blob when
  // the .om has one): on AVX-512, the Strassen GEMM where it pays, else its
  // plain form (sgemm_strassen.h); on an AVX2 machine without AVX-512,
  // sgemm_packed. False when none applies (oneDNN's matmul is built instead).
  bool build_packed(const MatmulShape& s, const std::vector<int64_t>& a_dims, const float* b, PackCache* packs) {
    int64_t rows = s.M;
    for (int64_t d : s.batch) rows *= d;
    if (!b || !s.b_is_2d) return false;
    size_t bytes = 0;
    std::string recipe;
    if (sgemm_strassen::supported() && sgemm_strassen::pays(rows, s.K, s.N)) {
      form_ = Form::kStrassen;
      bytes = sgemm_strassen::packed_floats(s.K, s.N) * sizeof(float);
      recipe = sgemm_strassen::recipe();
    } else if (sgemm_strassen::plain_pays(rows, s.K, s.N)) {
      form_ = Form::kPlain512;
      bytes = sgemm_strassen::plain_floats(s.K, s.N) * sizeof(float);
      recipe = sgemm_strassen::plain_recipe();
    } else {
      static const char* const kActs[] = {"", "Relu", "LeakyRelu", "Clip", "Gelu"};  // cheap per block
      if (!sgemm_packed::prefer() || !sgemm_packed::fits(rows, s.K, s.N) ||
          std::find(std::begin(kActs), std::end(kActs), act_.op) == std::end(kActs))
        return false;
      form_ = Form::kPacked;
      bytes = sgemm_packed::packed_floats(s.K, s.N) * sizeof(float);
      recipe = sgemm_packed::recipe();
    }
    recipe += " " + std::to_string(s.K) + "x" + std::to_string(s.N);
    std::shared_ptr<const void> blob = packs ? packs->find(b, recipe, bytes) : nullptr;
    if (!blob) {
      PageBuffer buf = alloc_pages(bytes);
      if (!buf) {
        form_ = Form::kNone;
        return false;
      }
      float* out = static_cast<float*>(buf.get());
      if (form_ == Form::kStrassen)
        sgemm_strassen::pack(b, s.K, s.N, s.N, 1, out);
      else if (form_ == Form::kPlain512)
        sgemm_strassen::pack_plain(b, s.K, s.N, s.N, 1, out);
      else
        sgemm_packed::pack(b, s.K, s.N, s.N, 1, out);
      std::shared_ptr<const void> keep(buf.release(), PageFree());
      if (packs) packs->record(b, recipe, keep.get(), bytes, keep);
      blob = std::move(keep);
    }
    packed_b_ = std::move(blob);
    packed_a_dims_ = a_dims;
    return true;
  }

  // The fused bias (input 2) and residual (input 3), checked; nullptr when absent.
  Status epilogue_inputs(KernelContext& ctx, const MatmulShape& s, const Tensor& y, const float** bias,
                         const float** res) const {
    if (bias_) {
      const Tensor& t = ctx.input(2);
      if (t.dtype != DType::kFloat32 || t.elements() != s.N)
        return ctx.fail("the fused bias must be %lld float32 values", static_cast<long long>(s.N));
      *bias = t.as<float>();
    }
    if (sum_) {
      const Tensor& t = ctx.input(3);
      if (t.dtype != DType::kFloat32 || t.dims != y.dims) return ctx.fail("the fused residual must match the output");
      *res = t.as<float>();
    }
    return Status::Ok();
  }

  Status run_packed(KernelContext& ctx, const MatmulShape& s, const Tensor& a, Tensor* y) const {
    const float* bias = nullptr;
    const float* res = nullptr;
    OPENACL_RETURN_IF_ERROR(epilogue_inputs(ctx, s, *y, &bias, &res));
    const int64_t rows = y->elements() / s.N;
    const float* pb = static_cast<const float*>(packed_b_.get());
    const float* ap = a.as<float>();
    float* yp = y->as<float>();
    const bool ran =
        form_ == Form::kStrassen   ? sgemm_strassen::run(rows, s.N, s.K, ap, s.K, pb, bias, res, yp, &act_)
        : form_ == Form::kPlain512 ? sgemm_strassen::run_plain(rows, s.N, s.K, ap, s.K, pb, bias, res, yp, &act_)
                                   : sgemm_packed::run(rows, s.N, s.K, ap, s.K, pb, bias, res, yp, &act_);
    if (!ran)
      return ctx.fail("packed GEMM of %lld x %lld x %lld not runnable here (internal error)",
                      static_cast<long long>(rows), static_cast<long long>(s.K), static_cast<long long>(s.N));
    return Status::Ok();
  }
  std::shared_ptr<const void> packed_b_;
  // Whose packed_b_ is: sgemm_strassen's (Strassen's algorithm or its plain
  // form) or sgemm_packed's.
  enum class Form { kNone, kStrassen, kPlain512, kPacked } form_ = Form::kNone;
  std::vector<int64_t> packed_a_dims_;

  // y = act(a x b + bias + residual) for a MatMul with a fused epilogue
  // (float32 only: the pass fuses nothing else). The residual may be y's own
  // memory (the planner put the output over it).
  Status run_fused(KernelContext& ctx, const MatmulShape& s, const Tensor& a, const Tensor& b, Tensor* y) const {
    if (a.dtype != DType::kFloat32) return ctx.fail("a fused MatMul epilogue needs float32 (internal error)");
    const float* bias = nullptr;
    const float* res = nullptr;
    OPENACL_RETURN_IF_ERROR(epilogue_inputs(ctx, s, *y, &bias, &res));
    float* yp = y->as<float>();
    const int64_t n = y->elements(), rows = n / std::max<int64_t>(1, s.N);
#if OPENACL_HAVE_DNNL
    auto e = cache_.get(a.dims, b.dims, 0,
                        [&] { return build(s, b_const_ ? b.as<float>() : nullptr, bias_, sum_, act_); });
    if (e && e->ok) {
      if (e->fused || (!res && act_.op.empty())) {
        // The sum post-op adds what the output holds: the residual.
        if (res && res != yp) parallel_for(n, 1 << 15, [&](int64_t lo, int64_t hi) {
            std::memcpy(yp + lo, res + lo, static_cast<size_t>(hi - lo) * sizeof(float));
          });
        run_matmul(*e, a.as<float>(), b.as<float>(), yp, bias);
        return Status::Ok();
      }
      if (!res) {
        run_matmul(*e, a.as<float>(), b.as<float>(), yp, bias);
        act_.apply(yp, n);
        return Status::Ok();
      }
      std::vector<float> c(static_cast<size_t>(n));
      run_matmul(*e, a.as<float>(), b.as<float>(), c.data(), bias);
      matmul_epilogue(c.data(), nullptr, res, yp, rows, s.N, act_);
      return Status::Ok();
    }
#endif
    std::vector<float> c(static_cast<size_t>(n));
    matmul_ref<float>(s, a.as<float>(), b.as<float>(), c.data());
    matmul_epilogue(c.data(), bias, res, yp, rows, s.N, act_);
    return Status::Ok();
  }

  bool bias_ = false, sum_ = false;
  Activation act_;
  bool b_const_ = false;
  // Float32 A and B of shapes known at compile time: those dims and their
  // MatmulShape (static_a_ empty otherwise).
  std::vector<int64_t> static_a_, static_b_;
  MatmulShape static_shape_;
};

Status make_matmul(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  *out = std::make_unique<MatMulKernel>(init);
  return Status::Ok();
}

// Output 0 may take over input 3's memory (a fused residual, when it dies here).
OPENACL_REGISTER_KERNEL(MatMul, "cpu")
    .types({DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt32, DType::kInt64,
            DType::kUInt32, DType::kUInt64})
    .in_place(3, 0)
    .create(make_matmul);

}  // namespace
}  // namespace openacl::kernels::cpu
