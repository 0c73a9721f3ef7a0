// A float32 GEMM for a constant B packed once (a MatMul's weights), with
// AVX2 + FMA: C[M,N] = A[M,K] x B[K,N] + bias, + residual, then an activation.
//
// Why it exists: on AVX2 machines oneDNN 2.6's sgemm ran BERT's GEMMs (M =
// 128 tokens, K and N 768..3072) at 62-66% of the FMA peak where
// onnxruntime's MLAS runs them at about 78%; oneDNN packs B on every call,
// this packs it once at load. On AVX-512 machines oneDNN's kernels are the
// faster ones and this is not used (prefer()).
//
// Packed layout (packed_floats() floats): for each block of kKc rows of B
// (K in steps of kKc, the last one shorter), the 16-column panels of that
// block one after another, each panel kb x 16 floats, row after row. N must be
// a multiple of 16.
//
// Blocking: a panel (16 KiB at kKc = 256) stays in L1 while every row of an
// A block (kMc rows x kKc, 192 KiB) streams past it from L2; the C block
// (kMc x kNc) stays in L2 across the K blocks. The micro-kernel holds 6 x 16
// of C in 12 registers; while a panel's tiles run they prefetch the next
// panel into L2 (B comes from memory: BERT's four GEMMs ran 4-6% faster on
// a Zen 2 with it).
#pragma once

#include <cstddef>
#include <cstdint>

namespace openacl::kernels::cpu {
struct Activation;
}

namespace openacl::kernels::cpu::sgemm_packed {

inline constexpr int64_t kKc = 256;  // rows of B per block
inline constexpr int64_t kNc = 128;  // columns of C per task
inline constexpr int64_t kMc = 192;  // rows of C per task
inline constexpr int64_t kNr = 16;   // columns of a panel
// Up to this many rows of A it beat oneDNN's sgemm (BERT's shapes at M = 128:
// 1.1-1.25x); at M = 1024 oneDNN's was 1.3x faster, so larger GEMMs stay there.
inline constexpr int64_t kMaxRows = 256;

// Whether this CPU can run it (AVX2 and FMA).
bool supported();
// True where this GEMM is the one to use: supported(), no AVX-512F.
bool prefer();

// Whether an M x K x N GEMM is one for it (N a multiple of kNr, M at most
// kMaxRows, all > 0).
bool fits(int64_t M, int64_t K, int64_t N);

size_t packed_floats(int64_t K, int64_t N);

// Packs B (element (k, n) at b[k * stride_k + n * stride_n]) into `out`.
void pack(const float* b, int64_t K, int64_t N, int64_t stride_k, int64_t stride_n, float* out);

// The recipe under which atc stores a packed B (PackCache).
const char* recipe();

// C = act(A x B + bias + res); A row-major with `lda`, C and res with N.
// bias (N values) and res may be nullptr; res may be C itself; act nullptr or
// empty for none. Gelu (erf form) is computed on 8 lanes here, to within
// 2e-7 of 0.5 x (1 + erf(x / sqrt 2)) relative to max(1, |x|) (up to 1%
// relative where x < -3 and Gelu is below 4e-3 in size); the others by
// Activation::apply_range. Runs on the compute threads (parallel_for).
// Returns false, touching nothing, where !supported() or !fits(M, K, N).
bool run(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed_b, const float* bias,
         const float* res, float* c, const Activation* act);

}  // namespace openacl::kernels::cpu::sgemm_packed
