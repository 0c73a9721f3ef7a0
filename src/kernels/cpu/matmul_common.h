// Matrix-product building blocks shared by MatMul, Gemm, MatMulInteger and
// QLinearMatMul: a reference GEMM over strided operands and (with oneDNN) a
// float32 matmul primitive with optional alpha scaling and accumulation.
#pragma once

#include <cstdint>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/fused_activation.h"
#include "kernels/pack_cache.h"

namespace openacl::kernels::cpu {

// C[m, n] = sum_k A[m*am + k*ak] * B[k*bk + n*bn], C dense row-major (ldc = N),
// computed in Acc and stored as TC. Rows in [m0, m1). `row` is N Accs of scratch.
template <class TA, class TB, class Acc, class TC>
void gemm_rows_ref(int64_t m0, int64_t m1, int64_t N, int64_t K, const TA* A, int64_t am, int64_t ak, const TB* B,
                   int64_t bk, int64_t bn, TC* C, Acc* row) {
  for (int64_t m = m0; m < m1; ++m) {
    for (int64_t n = 0; n < N; ++n) row[n] = Acc(0);
    for (int64_t k = 0; k < K; ++k) {
      const Acc a = static_cast<Acc>(load(A[m * am + k * ak]));
      const TB* b = B + k * bk;
      if (bn == 1) {
#pragma omp simd
        for (int64_t n = 0; n < N; ++n) row[n] += a * static_cast<Acc>(load(b[n]));
      } else {
        for (int64_t n = 0; n < N; ++n) row[n] += a * static_cast<Acc>(load(b[n * bn]));
      }
    }
    TC* c = C + m * N;
    for (int64_t n = 0; n < N; ++n) c[n] = store<TC>(row[n]);
  }
}

// MatMul operand dims (numpy rules) promoted to a common rank R >= 2.
struct MatmulShape {
  std::vector<int64_t> a, b, batch;  // a, b: rank R; batch: broadcast batch dims
  std::vector<int64_t> out;          // ONNX output dims (1-D operands squeezed)
  int64_t M = 0, K = 0, N = 0;
  bool b_is_2d = false;  // every batch dim of B is 1
  int64_t batches() const {
    int64_t n = 1;
    for (int64_t d : batch) n *= d;
    return n;
  }
};
// "" or what is wrong.
std::string matmul_shape(const std::vector<int64_t>& ad, const std::vector<int64_t>& bd, MatmulShape* s);

// Batched C = A x B over a MatmulShape (C dense [batch.., M, N]).
template <class TA, class TB, class Acc, class TC>
void batched_matmul_ref(const MatmulShape& s, const TA* A, const TB* B, TC* C) {
  const size_t R = s.a.size();
  const std::vector<int64_t> as = strides_of(s.a), bs = strides_of(s.b);
  const int64_t M = s.M, N = s.N, K = s.K;
  parallel_for(s.batches() * M, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, N * K)), [&](int64_t begin, int64_t end) {
    std::vector<Acc> row(static_cast<size_t>(N));
    for (int64_t r = begin; r < end;) {
      const int64_t bi = r / M, m0 = r % M, m1 = std::min<int64_t>(M, m0 + (end - r));
      int64_t ao = 0, bo = 0, rem = bi;
      for (size_t i = R - 2; i-- > 0;) {
        const int64_t idx = rem % s.batch[i];
        rem /= s.batch[i];
        ao += (s.a[i] == 1 ? 0 : idx) * as[i];
        bo += (s.b[i] == 1 ? 0 : idx) * bs[i];
      }
      gemm_rows_ref<TA, TB, Acc, TC>(m0, m1, N, K, A + ao, K, 1, B + bo, N, 1, C + bi * M * N, row.data());
      r += m1 - m0;
    }
  });
}

#if OPENACL_HAVE_DNNL
// A float32 matmul: dims of equal rank >= 2 ([batch.., M, K] x [batch.., K, N]
// -> [batch.., M, N], batch dims broadcast where 1), any strides for A and B.
struct MatmulSpec {
  std::vector<int64_t> a_dims, a_strides, b_dims, b_strides, c_dims;
  float alpha = 1.f;
  bool accumulate = false;  // C += result (C holds beta * C_in beforehand)
  // A fused epilogue (graph::fuse_matmul_epilogue): a bias of c_dims.back()
  // values (always in the primitive), then a residual sum and/or an
  // activation as post-ops when oneDNN takes them (MatmulEntry::fused).
  bool bias = false;
  bool sum = false;
  Activation act;
  // Where a constant B's packed copy may already be (an .om's) or is
  // recorded (atc); null at execution time.
  PackCache* packs = nullptr;
};

struct MatmulEntry {
  bool ok = false;
  dnnl::matmul prim;
  dnnl::memory::desc a, b_user, b, c, scratch_md;
  bool reorder_b = false;
  dnnl_util::Packed packed_b;  // B in the primitive's layout (constant B)
  size_t scratch_bytes = 0;
  dnnl::memory::desc bias;  // set when MatmulSpec::bias
  bool fused = false;       // MatmulSpec's sum / act are post-ops of the primitive
  dnnl_util::ArgSets args;  // the primitive's execute arguments, reused
};

// Builds the primitive; const_b (optional) is B's data to prepack now.
// with_post_ops false: the epilogue's sum / activation are left out (the
// caller applies them); tried when oneDNN declines them.
std::shared_ptr<const MatmulEntry> build_matmul(const MatmulSpec& spec, const float* const_b,
                                               bool with_post_ops = true);
// bias: MatmulSpec::bias's values (nullptr without; given exactly when the
// entry was built with MatmulSpec::bias).
void run_matmul(const MatmulEntry& e, const float* a, const float* b, float* c, const float* bias = nullptr);
#endif

// y[n] = alpha * dot(a, B[n, 0..K)) for n in [n0, n1), plus y[n] when acc
// (a matrix-vector product with B stored [N, K]; gemm.cpp). Used by Gemm's
// batch-1 classifier form and by convolutions over a 1x1 plane (conv.cpp).
void gemv_bt_rows(const float* a, const float* B, int64_t K, int64_t n0, int64_t n1, float alpha, bool acc,
                  float* y);

// W [rows, cols] float32 as [ceil(rows/lanes)][cols][lanes] (zeros past
// rows): from `packs` when atc packed it by `recipe` (which names the layout
// and its version), else packed now over the compute threads (each row read
// once, into one lane) and recorded there. Null when memory runs out or
// lanes < 1. The weights of GemvPacked (16 lanes) and of the pointwise
// convolutions (conv_1x1.h: 16 lanes on AVX-512, 8 on AVX2).
std::shared_ptr<const void> pack_rows(const float* w, int64_t rows, int64_t cols, int64_t lanes,
                                      const std::string& recipe, PackCache* packs);
inline std::shared_ptr<const void> pack_rows16(const float* w, int64_t rows, int64_t cols, const std::string& recipe,
                                               PackCache* packs) {
  return pack_rows(w, rows, cols, 16, recipe, packs);
}

// The same product with a constant B packed once into [ceil(N/16)][K][16]
// (zeros past N; from an .om's PACKED section when atc packed it), on
// AVX-512: each pair of 16-output blocks reads one contiguous run of B per
// block, 16 outputs per vector, no horizontal sums. B comes from memory
// (the rest of the model evicted it) and the hardware prefetcher follows
// two long streams better than gemv_bt_rows' four rows at a time:
// MobileNetV2's 1280 -> 1000 classifier 0.31-0.35 -> 0.20-0.24 ms in a
// micro-benchmark that evicts 24 MB between runs (Zen 4).
class GemvPacked {
 public:
  // B [N, K] float32; nullptr without AVX-512F or memory. packs: see
  // Conv1x1::make.
  static std::shared_ptr<const GemvPacked> make(const float* B, int64_t N, int64_t K, PackCache* packs = nullptr);

  int64_t n() const { return N_; }
  int64_t k() const { return K_; }
  // y[n] = alpha * dot(a, B[n, 0..K)) (+ y[n] when acc) for n in [0, N), over the compute threads.
  void run(const float* a, float alpha, bool acc, float* y) const;

 private:
  GemvPacked() = default;
  int64_t N_ = 0, K_ = 0;
  std::shared_ptr<const void> w_;  // [ceil(N/16)][K][16]
};

// y = act(c + bias[column] + r) over rows x n values; c may be y, r may be y
// (not both), bias / r nullptr when absent.
inline void matmul_epilogue(const float* c, const float* bias, const float* r, float* y, int64_t rows, int64_t n,
                            const Activation& act) {
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const float* ci = c + i * n;
      const float* ri = r ? r + i * n : nullptr;
      float* yi = y + i * n;
      for (int64_t j = 0; j < n; ++j) yi[j] = ci[j] + (bias ? bias[j] : 0.f) + (ri ? ri[j] : 0.f);
    }
  });
  act.apply(y, rows * n);
}
#if OPENACL_HAVE_DNNL
#endif

}  // namespace openacl::kernels::cpu
