#include "kernels/cpu/blocked_layout.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#if OPENACL_HAVE_DNNL
#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace openacl::kernels::cpu {

namespace {
std::atomic<int64_t> g_block_override{-1};
std::atomic<int> g_mixed_override{-1};

#if defined(__x86_64__)
// Seconds for `iters` rounds of 12 independent FMA chains on 16 floats
// (zmm) or 8 (ymm): enough chains to fill two pipelined FMA units, so the
// time is the units' throughput, not their latency.
#define OPENACL_FMA_PROBE(NAME, TARGET, VEC, SET1, FMA, STORE, LANES)                       \
  __attribute__((target(TARGET))) double NAME(int iters) {                                  \
    const VEC m = SET1(0.999f), c = SET1(0.001f);                                            \
    /* Twelve different starting values: from equal ones the compiler proves */               \
    /* the chains equal and computes one (one FMA per step: every machine */                 \
    /* would look full-width). */                                                            \
    VEC a0 = SET1(1.0f), a1 = SET1(1.01f), a2 = SET1(1.02f), a3 = SET1(1.03f), a4 = SET1(1.04f),     \
        a5 = SET1(1.05f), a6 = SET1(1.06f), a7 = SET1(1.07f), a8 = SET1(1.08f), a9 = SET1(1.09f),    \
        a10 = SET1(1.1f), a11 = SET1(1.11f);                                                 \
    const auto t0 = std::chrono::steady_clock::now();                                        \
    for (int i = 0; i < iters; ++i) {                                                        \
      a0 = FMA(a0, m, c), a1 = FMA(a1, m, c), a2 = FMA(a2, m, c), a3 = FMA(a3, m, c);         \
      a4 = FMA(a4, m, c), a5 = FMA(a5, m, c), a6 = FMA(a6, m, c), a7 = FMA(a7, m, c);         \
      a8 = FMA(a8, m, c), a9 = FMA(a9, m, c), a10 = FMA(a10, m, c), a11 = FMA(a11, m, c);     \
    }                                                                                        \
    const auto t1 = std::chrono::steady_clock::now();                                        \
    alignas(64) float out[LANES];                                                            \
    STORE(out, FMA(a0, a1, FMA(a2, a3, FMA(a4, a5, FMA(a6, a7, FMA(a8, a9, FMA(a10, a11, c))))))); \
    volatile float sink = out[0];                                                            \
    (void)sink;                                                                              \
    return std::chrono::duration<double>(t1 - t0).count();                                   \
  }
OPENACL_FMA_PROBE(fma_seconds_16, "avx512f", __m512, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_store_ps, 16)
OPENACL_FMA_PROBE(fma_seconds_8, "avx2,fma", __m256, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_store_ps, 8)
#undef OPENACL_FMA_PROBE

// Whether a 16-float FMA issues at the rate of an 8-float one. Measured, not
// looked up by model: Intel's cores and AMD's Zen 5 run AVX-512 on full-width
// units, Zen 4 (and Zen 5's mobile parts) split it into two 256-bit halves,
// and some Xeons have one 512-bit FMA unit where they have two 256-bit ones.
// About 0.06 ms, once; the best of several tries, so a preempted one does not
// decide it.
bool measure_full_width() {
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("fma")) return false;
  fma_seconds_16(20000);  // wakes the upper lanes (Intel powers them on demand)
  double t16 = 1e9, t8 = 1e9;
  for (int i = 0; i < 7; ++i) {
    t16 = std::min(t16, fma_seconds_16(2000));
    t8 = std::min(t8, fma_seconds_8(2000));
  }
  return t16 < 1.4 * t8;
}
#else
bool measure_full_width() { return false; }
#endif
}  // namespace

void set_channel_block_for_testing(int64_t block) { g_block_override.store(block, std::memory_order_relaxed); }
void set_mixed_blocks_for_testing(int mixed) { g_mixed_override.store(mixed, std::memory_order_relaxed); }

bool full_width_avx512() {
  static const bool yes = measure_full_width();
  return yes;
}

bool eight_lane_loops() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx2 && channel_block() == 8;
#else
  return false;
#endif
}

bool mixed_blocks() {
  if (const int o = g_mixed_override.load(std::memory_order_relaxed); o >= 0) return o != 0;
  return channel_block() == 16;
}

int64_t channel_block() {
#if OPENACL_HAVE_DNNL
  if (const int64_t o = g_block_override.load(std::memory_order_relaxed); o >= 0) return o;
  // oneDNN's direct kernels use one vector register of floats per block.
  static const int64_t block = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & avx512) == avx512 ? int64_t{16} : int64_t{8};
  }();
  return block;
#else
  return 0;  // nothing reads blocked layouts without oneDNN
#endif
}

namespace {

// Whether the ints attribute `name` lists `index`. Kernels call
// blocked_block on every run (GlobalAveragePool), so this neither copies the
// list nor builds the key (the names are longer than a short string holds).
bool lists(const graph::AttributeMap& attrs, const std::string& name, size_t index) {
  const graph::Attribute* a = attrs.find(name);
  return a && a->kind == graph::Attribute::Kind::kInts &&
         std::find(a->ints.begin(), a->ints.end(), static_cast<int64_t>(index)) != a->ints.end();
}

}  // namespace

int64_t blocked_block(const graph::AttributeMap& attrs, bool output, size_t index, graph::DType dt,
                      const std::vector<int64_t>& dims) {
  static const std::string kIn = kBlockedInputsAttr, kOut = kBlockedOutputsAttr, kPadIn = kBlockedPadInputsAttr,
                           kPadOut = kBlockedPadOutputsAttr, kMax = kBlockedMaxAttr;
  if (!lists(attrs, output ? kOut : kIn, index)) return 0;
  int64_t b = channel_block();
  if (b == 0 || dt != graph::DType::kFloat32 || dims.size() < 3 || dims.size() > 5 || dims[1] <= 0) return 0;
  if (b == 16 && mixed_blocks()) {
    if (dims[1] % 16 == 0) return 16;
    if (dims[1] % 8 != 0) return 0;
    return lists(attrs, output ? kPadOut : kPadIn, index) ? 16 : 8;
  }
  if (const int64_t cap = attrs.get_int(kMax, 0); cap > 0) b = std::min(b, cap);
  return dims[1] % b == 0 ? b : 0;
}

int64_t blocked_block(const graph::AttributeMap& attrs, bool output, size_t index, const graph::TensorType& t) {
  if (!t.shape || !graph::fully_known(*t.shape)) return 0;
  std::vector<int64_t> dims;
  for (const graph::Dim& d : *t.shape) dims.push_back(d.value);
  return blocked_block(attrs, output, index, t.dtype, dims);
}

int64_t blocked_elements(const std::vector<int64_t>& dims, int64_t block) {
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) n *= i == 1 && block > 0 ? (dims[1] + block - 1) / block * block : dims[i];
  return n;
}

size_t blocked_bytes(graph::DType dt, const std::vector<int64_t>& dims, int64_t block, size_t plain_bytes) {
  if (block <= 0 || dt != graph::DType::kFloat32 || dims.size() < 2 || dims[1] % block == 0) return plain_bytes;
  return static_cast<size_t>(blocked_elements(dims, block)) * sizeof(float);
}

namespace {

// Calls f(plain offset, blocked offset) for every element.
template <class F>
void for_each_blocked(const std::vector<int64_t>& dims, int64_t b, F&& f) {
  const int64_t N = dims[0], C = dims[1], Cb = (C + b - 1) / b;
  int64_t S = 1;
  for (size_t i = 2; i < dims.size(); ++i) S *= dims[i];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) f((n * C + c) * S + s, ((n * Cb + c / b) * S + s) * b + c % b);
}

}  // namespace

void blocked_to_plain(const float* src, float* dst, const std::vector<int64_t>& dims, int64_t block) {
  for_each_blocked(dims, block, [&](int64_t p, int64_t q) { dst[p] = src[q]; });
}

void plain_to_blocked(const float* src, float* dst, const std::vector<int64_t>& dims, int64_t block) {
  if (dims[1] % block != 0) std::fill(dst, dst + blocked_elements(dims, block), 0.f);  // the padding channels
  for_each_blocked(dims, block, [&](int64_t p, int64_t q) { dst[q] = src[p]; });
}

}  // namespace openacl::kernels::cpu
