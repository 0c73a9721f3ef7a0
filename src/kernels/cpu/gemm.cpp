// Gemm: Y = alpha * A' * B' + beta * C (A' = A^T when transA, same for B; C
// optional, broadcast to [M, N]). float32 runs a oneDNN matmul (transposes
// as strides, alpha as the output scale, beta * C prefilled into Y and added
// by a sum post-op; B prepacked once when constant); other types the
// reference loops. One float32 row of A against a B stored [N, K] (transB,
// a classifier head at batch 1) runs a dot product per output instead, B
// streamed once (MobileNetV2's 1280 -> 1000: 0.29 ms on oneDNN's matmul in
// the model, 0.19 ms this way, Zen 5), and a constant such B packed once
// for streaming (GemvPacked, matmul_common.h: 0.39 -> 0.27 ms in the model,
// Zen 4).
#include <algorithm>
#include <string>

#include "base/page_alloc.h"

#include "kernels/cpu/matmul_common.h"
#include "kernels/cpu/simd8.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace openacl::kernels::cpu {
namespace {

struct GemmShape {
  int64_t M = 0, N = 0, K = 0;
  bool ta = false, tb = false;
};

std::string gemm_shape(const graph::AttributeMap& attrs, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                       GemmShape* s) {
  if (a.size() != 2 || b.size() != 2) return "A and B must be 2-D";
  s->ta = attrs.get_int("transA", 0) != 0;
  s->tb = attrs.get_int("transB", 0) != 0;
  s->M = s->ta ? a[1] : a[0];
  s->K = s->ta ? a[0] : a[1];
  s->N = s->tb ? b[0] : b[1];
  if ((s->tb ? b[1] : b[0]) != s->K) return "inner dimensions differ";
  return "";
}

// y[m, n] = beta * C[m, n] (broadcast), or 0 without C.
template <class T>
void fill_beta_c(const GemmShape& s, const Tensor* c, float beta, T* y) {
  using Acc = ComputeType<T>;
  if (!c) {
    std::fill(y, y + s.M * s.N, store<T>(Acc(0)));
    return;
  }
  // C's strides along m and n: rank 0..2, right-aligned onto [M, N], 0 where broadcast.
  const size_t r = c->dims.size();
  const int64_t cn = r >= 1 ? c->dims[r - 1] : 1;
  const int64_t sm = r == 2 && c->dims[0] != 1 ? cn : 0, sn = cn != 1 ? 1 : 0;
  const T* cp = c->as<T>();
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t n = 0; n < s.N; ++n) y[m * s.N + n] = store<T>(static_cast<Acc>(beta * load(cp[m * sm + n * sn])));
}

template <class T>
void gemm_ref(const GemmShape& s, const T* A, const T* B, const Tensor* c, float alpha, float beta, T* Y) {
  using Acc = std::conditional_t<std::is_integral_v<T>, T, ComputeType<T>>;
  fill_beta_c<T>(s, c, beta, Y);
  const int64_t am = s.ta ? 1 : s.K, ak = s.ta ? s.M : 1, bk = s.tb ? 1 : s.N, bn = s.tb ? s.K : 1;
  parallel_for(s.M, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, s.N * s.K)), [&](int64_t begin, int64_t end) {
    std::vector<Acc> row(static_cast<size_t>(s.N)), prod(static_cast<size_t>(s.N));
    for (int64_t m = begin; m < end; ++m) {
      gemm_rows_ref<T, T, Acc, Acc>(0, 1, s.N, s.K, A + m * am, am, ak, B, bk, bn, prod.data(), row.data());
      T* y = Y + m * s.N;
      for (int64_t n = 0; n < s.N; ++n)
        y[n] = store<T>(static_cast<Acc>(alpha * prod[n] + static_cast<Acc>(load(y[n]))));
    }
  });
}

// The batch-1 classifier form: one row of A (contiguous whatever transA),
// B stored [N, K].
bool is_gemv_bt(const GemmShape& s) { return s.M == 1 && s.tb && s.K >= 8; }

class GemmKernel final : public Kernel {
 public:
  explicit GemmKernel(const KernelInit& init)
      : attrs_(init.attrs()), alpha_(init.attrs().get_float("alpha", 1.f)), beta_(init.attrs().get_float("beta", 1.f)) {
    b_const_ = init.constant(1) != nullptr;
    // Shapes known at compile time: the batch-1 classifier form with a
    // constant B packed for streaming, any other float32 form's primitive
    // built now.
    const graph::TensorType& at = init.input(0);
    const graph::TensorType& bt = init.input(1);
    if (at.dtype != DType::kFloat32 || !at.shape || !graph::fully_known(*at.shape) || !bt.shape ||
        !graph::fully_known(*bt.shape))
      return;
    std::vector<int64_t> ad, bd;
    for (const auto& d : *at.shape) ad.push_back(d.value);
    for (const auto& d : *bt.shape) bd.push_back(d.value);
    GemmShape s;
    if (!gemm_shape(attrs_, ad, bd, &s).empty()) return;
    const graph::TensorData* bc = init.constant(1);
    if (is_gemv_bt(s)) {
      gemv_ = GemvPacked::make(const_f32(bc), s.N, s.K, init.packs());
      return;
    }
#if OPENACL_HAVE_DNNL
    const bool acc = init.has_input(2) && beta_ != 0.f;
    cache_.put_static(ad, bd, acc, build(s, acc, dnnl_util::const_f32(bc), init.packs()));
#endif
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const Tensor* c = ctx.has_input(2) && ctx.input(2).data ? &ctx.input(2) : nullptr;
    if (a.dtype != b.dtype || (c && c->dtype != a.dtype)) return ctx.fail("A, B and C types differ");
    GemmShape s;
    const std::string err = gemm_shape(attrs_, a.dims, b.dims, &s);
    if (!err.empty()) return ctx.fail("%s (A %s, B %s)", err.c_str(), a.type().str().c_str(), b.type().str().c_str());
    if (c) {
      if (c->dims.size() > 2) return ctx.fail("C must have rank <= 2");
      const int64_t out[2] = {s.M, s.N};
      for (size_t i = 0; i < c->dims.size(); ++i) {
        const int64_t cd = c->dims[c->dims.size() - 1 - i];
        if (cd != 1 && cd != out[1 - i]) return ctx.fail("C %s does not broadcast to [%lld, %lld]",
                                                         c->type().str().c_str(), static_cast<long long>(s.M),
                                                         static_cast<long long>(s.N));
      }
    }
    Tensor* y = &ctx.output(0);
    if (!y->data || y->dims.size() != 2 || y->dims[0] != s.M || y->dims[1] != s.N)
      OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, {s.M, s.N}, &y));
    if (y->elements() == 0) return Status::Ok();
    if (a.dtype == DType::kFloat32 && is_gemv_bt(s)) {
      const bool acc = c && beta_ != 0.f;
      float* yp = y->as<float>();
      if (acc) fill_beta_c<float>(s, c, beta_, yp);
      const float *ap = a.as<float>(), *bp = b.as<float>();
      if (gemv_ && gemv_->n() == s.N && gemv_->k() == s.K) {
        gemv_->run(ap, alpha_, acc, yp);
        return Status::Ok();
      }
      parallel_for(s.N, std::max<int64_t>(16, 65536 / s.K),
                   [&](int64_t n0, int64_t n1) { gemv_bt_rows(ap, bp, s.K, n0, n1, alpha_, acc, yp); });
      return Status::Ok();
    }
#if OPENACL_HAVE_DNNL
    if (a.dtype == DType::kFloat32 && s.K > 0) {
      const bool acc = c && beta_ != 0.f;
      auto e = cache_.get(a.dims, b.dims, acc, [&] { return build(s, acc, b_const_ ? b.as<float>() : nullptr); });
      if (e && e->ok) {
        if (acc) fill_beta_c<float>(s, c, beta_, y->as<float>());
        run_matmul(*e, a.as<float>(), b.as<float>(), y->as<float>());
        return Status::Ok();
      }
    }
#endif
    const bool ok = dispatch<kNumeric>(a.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      gemm_ref<T>(s, a.as<T>(), b.as<T>(), beta_ != 0.f ? c : nullptr, alpha_, beta_, y->as<T>());
    });
    return ok ? Status::Ok() : ctx.fail("unsupported type");
  }

 private:
#if OPENACL_HAVE_DNNL
  std::shared_ptr<const MatmulEntry> build(const GemmShape& s, bool acc, const float* const_b,
                                           PackCache* packs = nullptr) const {
    MatmulSpec spec;
    spec.packs = packs;
    spec.a_dims = {s.M, s.K};
    spec.a_strides = s.ta ? std::vector<int64_t>{1, s.M} : std::vector<int64_t>{s.K, 1};
    spec.b_dims = {s.K, s.N};
    spec.b_strides = s.tb ? std::vector<int64_t>{1, s.K} : std::vector<int64_t>{s.N, 1};
    spec.c_dims = {s.M, s.N};
    spec.alpha = alpha_;
    spec.accumulate = acc;
    return build_matmul(spec, const_b);
  }
  dnnl_util::ShapeCache<MatmulEntry> cache_;
#endif
  graph::AttributeMap attrs_;
  float alpha_, beta_;
  bool b_const_ = false;
  std::shared_ptr<const GemvPacked> gemv_;  // the batch-1 classifier form's constant B, packed
};

Status make_gemm(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  *out = std::make_unique<GemmKernel>(init);
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Gemm, "cpu")
    .types({DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt32, DType::kInt64,
            DType::kUInt32, DType::kUInt64})
    .create(make_gemm);

// The end of a four-row group (rows b0, b0 + K, ...; t their vector sums so
// far): the columns from k on, then y[0..4) = alpha * t (+ y).
inline void finish_quad(const float* a, const float* b0, int64_t K, int64_t k, float alpha, bool acc, float* t,
                        float* y) {
  for (; k < K; ++k)
    for (int i = 0; i < 4; ++i) t[i] += a[k] * b0[i * K + k];
  for (int i = 0; i < 4; ++i) y[i] = alpha * t[i] + (acc ? y[i] : 0.f);
}

#if defined(__x86_64__) && defined(__GNUC__)
// gemv_bt_rows' four-row groups with 16 floats per step, where the CPU has
// AVX-512F; returns the first row it left. Rows n..n+3 lie one after another,
// and with short rows each step also prefetches the next group's bytes at
// the rate it reads these. A squeeze-excite gate's or a classifier's weights come from memory
// (the rest of the model evicted them): there a 960 x 240 product took 93
// us with eight floats per step, no prefetch, 65 us like this; 240 x 960
// 56 -> 40 us (Zen 4, weights cycled through 59 MB).
__attribute__((target("avx512f"))) int64_t gemv_bt_quads16(const float* a, const float* B, int64_t K, int64_t n0,
                                                            int64_t n1, float alpha, bool acc, float* y) {
  const float* end = B + n1 * K;
  // Rows of up to 1024 floats: with longer ones the next group is too far
  // ahead (ResNet-50's 2048-float rows ran 10-25% slower with it).
  const bool prefetch = K <= 1024;
  int64_t n = n0;
  for (; n + 4 <= n1; n += 4) {
    const float* b0 = B + n * K;
    const float *b1 = b0 + K, *b2 = b1 + K, *b3 = b2 + K, *next = b0 + 4 * K;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t k = 0;
    for (; k + 16 <= K; k += 16) {
      const float* p = next + 4 * k;  // the four lines this step reads, one group on
      if (prefetch && p + 64 <= end)
        for (int l = 0; l < 4; ++l) _mm_prefetch(reinterpret_cast<const char*>(p + 16 * l), _MM_HINT_T0);
      const __m512 x = _mm512_loadu_ps(a + k);
      s0 = _mm512_fmadd_ps(x, _mm512_loadu_ps(b0 + k), s0);
      s1 = _mm512_fmadd_ps(x, _mm512_loadu_ps(b1 + k), s1);
      s2 = _mm512_fmadd_ps(x, _mm512_loadu_ps(b2 + k), s2);
      s3 = _mm512_fmadd_ps(x, _mm512_loadu_ps(b3 + k), s3);
    }
    alignas(64) float lanes[4][16];
    _mm512_store_ps(lanes[0], s0);
    _mm512_store_ps(lanes[1], s1);
    _mm512_store_ps(lanes[2], s2);
    _mm512_store_ps(lanes[3], s3);
    float t[4] = {};
    for (int i = 0; i < 4; ++i)
      for (int l = 0; l < 16; ++l) t[i] += lanes[i][l];
    finish_quad(a, b0, K, k, alpha, acc, t, y + n);
  }
  return n;
}
#endif

}  // namespace

// Four rows of B at a time (four independent sums), eight floats per step
// (sixteen with AVX-512F).
OPENACL_AVX2_CLONES void gemv_bt_rows(const float* a, const float* B, int64_t K, int64_t n0, int64_t n1, float alpha,
                                      bool acc, float* y) {
  int64_t n = n0;
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool wide = __builtin_cpu_supports("avx512f");
  if (wide) n = gemv_bt_quads16(a, B, K, n0, n1, alpha, acc, y);
#endif
  for (; n + 4 <= n1; n += 4) {
    const float* b0 = B + n * K;
    const float *b1 = b0 + K, *b2 = b1 + K, *b3 = b2 + K;
    v8f s0 = {}, s1 = {}, s2 = {}, s3 = {};
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
      const v8f x = ld8(a + k);
      s0 += x * ld8(b0 + k);
      s1 += x * ld8(b1 + k);
      s2 += x * ld8(b2 + k);
      s3 += x * ld8(b3 + k);
    }
    float t[4] = {hsum8(s0), hsum8(s1), hsum8(s2), hsum8(s3)};
    finish_quad(a, b0, K, k, alpha, acc, t, y + n);
  }
  for (; n < n1; ++n) {
    const float* b = B + n * K;
    v8f s0 = {};
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) s0 += ld8(a + k) * ld8(b + k);
    float t = hsum8(s0);
    for (; k < K; ++k) t += a[k] * b[k];
    y[n] = alpha * t + (acc ? y[n] : 0.f);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// y[nb * 16 ..] = alpha * s (+ y), the lanes past N left alone.
__attribute__((target("avx512f"))) inline void store_block(float* y, int64_t N, int64_t nb, __m512 s, float alpha,
                                                           bool acc) {
  const int64_t real = std::min<int64_t>(16, N - nb * 16);
  const __mmask16 m = static_cast<__mmask16>((1u << real) - 1);
  float* yb = y + nb * 16;
  s = _mm512_mul_ps(s, _mm512_set1_ps(alpha));
  if (acc) s = _mm512_add_ps(s, _mm512_maskz_loadu_ps(m, yb));
  _mm512_mask_storeu_ps(yb, m, s);
}

// y[n] for the blocks [b0, b1) of a GemvPacked's B: two blocks at a time,
// two columns per step (four independent sums).
__attribute__((target("avx512f"))) void gemv_packed_blocks(const float* a, const float* W, int64_t K, int64_t N,
                                                           int64_t b0, int64_t b1, float alpha, bool acc, float* y) {
  int64_t nb = b0;
  for (; nb + 2 <= b1; nb += 2) {
    const float* w = W + nb * K * 16;
    const float* v = w + K * 16;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t k = 0;
    for (; k + 2 <= K; k += 2) {
      const __m512 x0 = _mm512_set1_ps(a[k]), x1 = _mm512_set1_ps(a[k + 1]);
      s0 = _mm512_fmadd_ps(x0, _mm512_load_ps(w + 16 * k), s0);
      s1 = _mm512_fmadd_ps(x1, _mm512_load_ps(w + 16 * k + 16), s1);
      s2 = _mm512_fmadd_ps(x0, _mm512_load_ps(v + 16 * k), s2);
      s3 = _mm512_fmadd_ps(x1, _mm512_load_ps(v + 16 * k + 16), s3);
    }
    if (k < K) {
      const __m512 x0 = _mm512_set1_ps(a[k]);
      s0 = _mm512_fmadd_ps(x0, _mm512_load_ps(w + 16 * k), s0);
      s2 = _mm512_fmadd_ps(x0, _mm512_load_ps(v + 16 * k), s2);
    }
    store_block(y, N, nb, _mm512_add_ps(s0, s1), alpha, acc);
    store_block(y, N, nb + 1, _mm512_add_ps(s2, s3), alpha, acc);
  }
  if (nb < b1) {
    const float* w = W + nb * K * 16;
    __m512 s0 = _mm512_setzero_ps(), s1 = s0;
    int64_t k = 0;
    for (; k + 2 <= K; k += 2) {
      s0 = _mm512_fmadd_ps(_mm512_set1_ps(a[k]), _mm512_load_ps(w + 16 * k), s0);
      s1 = _mm512_fmadd_ps(_mm512_set1_ps(a[k + 1]), _mm512_load_ps(w + 16 * k + 16), s1);
    }
    if (k < K) s0 = _mm512_fmadd_ps(_mm512_set1_ps(a[k]), _mm512_load_ps(w + 16 * k), s0);
    store_block(y, N, nb, _mm512_add_ps(s0, s1), alpha, acc);
  }
}

}  // namespace
#endif

std::shared_ptr<const void> pack_rows(const float* w, int64_t rows, int64_t cols, int64_t lanes,
                                      const std::string& recipe, PackCache* packs) {
  if (lanes < 1) return nullptr;
  const int64_t blocks = (rows + lanes - 1) / lanes;
  const size_t bytes = static_cast<size_t>(blocks * cols * lanes) * sizeof(float);
  if (packs)
    if (std::shared_ptr<const void> found = packs->find(w, recipe, bytes)) return found;
  PageBuffer buf = alloc_pages(bytes);
  if (!buf) return nullptr;
  float* p = static_cast<float*>(buf.get());
  parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      for (int64_t l = 0; l < lanes; ++l) {
        const int64_t r = b * lanes + l;
        float* dst = p + b * cols * lanes + l;
        const float* src = r < rows ? w + r * cols : nullptr;
        for (int64_t c = 0; c < cols; ++c) dst[c * lanes] = src ? src[c] : 0.f;
      }
  });
  std::shared_ptr<const void> owned(buf.release(), PageFree());
  if (packs) packs->record(w, recipe, owned.get(), bytes, owned);
  return owned;
}

std::shared_ptr<const GemvPacked> GemvPacked::make(const float* B, int64_t N, int64_t K, PackCache* packs) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!B || !avx512 || N <= 0 || K <= 0) return nullptr;
  std::shared_ptr<GemvPacked> g(new GemvPacked());
  g->N_ = N, g->K_ = K;
  // Change "v1" when the layout changes.
  g->w_ = pack_rows16(B, N, K, "gemv [Nb][K][16] v1 N" + std::to_string(N) + " K" + std::to_string(K), packs);
  if (!g->w_) return nullptr;
  return g;
#else
  (void)B, (void)N, (void)K, (void)packs;
  return nullptr;
#endif
}

void GemvPacked::run(const float* a, float alpha, bool acc, float* y) const {
#if defined(__x86_64__) && defined(__GNUC__)
  const float* W = static_cast<const float*>(w_.get());
  // Pairs of blocks; chunks of at least ~64K multiply-adds.
  const int64_t pairs = (N_ + 31) / 32;
  parallel_for(pairs, std::max<int64_t>(1, 2048 / K_), [&](int64_t p0, int64_t p1) {
    gemv_packed_blocks(a, W, K_, N_, 2 * p0, std::min((N_ + 15) / 16, 2 * p1), alpha, acc, y);
  });
#else
  (void)a, (void)alpha, (void)acc, (void)y;
#endif
}

}  // namespace openacl::kernels::cpu
