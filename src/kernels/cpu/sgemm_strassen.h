// A float32 GEMM for a constant B (a MatMul's weights) with one level of
// Strassen's algorithm, on CPUs with AVX-512F:
// C[M,N] = act(A[M,K] x B[K,N] + bias + res) as seven products of half the
// size in every dimension instead of eight, 12.5% fewer multiply-adds.
//
// Why: BERT's GEMMs already run at about 90% of the FMA peak on oneDNN's
// kernels and on ours alike (105 GFLOP/s of 116 on one Zen 4 thread, the
// 128 x 768 x 3072 product hot), so running the same FLOPs faster cannot
// reach much further; fewer FLOPs can (as Winograd does for ResNet-50's 3x3
// convolutions). The price is memory: B is kept as the seven combinations
// its products need, 7/4 of its size.
//
// The algorithm (A, B and C split in halves of rows and columns: A11 is A's
// first M/2 rows and first K/2 columns, B21 is B's last K/2 rows and first
// N/2 columns):
//   P1 = (A11 + A22)(B11 + B22)   P5 = (A11 + A12) B22
//   P2 = (A21 + A22) B11          P6 = (A21 - A11)(B11 + B12)
//   P3 = A11 (B12 - B22)          P7 = (A12 - A22)(B21 + B22)
//   P4 = A22 (B21 - B11)
//   C11 = P1 + P4 - P5 + P7       C12 = P3 + P5
//   C21 = P2 + P4                 C22 = P1 - P2 + P3 + P6
// B's seven combinations are made once, at load (or by atc). A's five sums
// are made per run into the scratch of the threads that read them (5/4 of
// a quarter of A: small against the products). Each product goes tile by
// tile (up to 7 rows x 64 columns of sums in registers, one pass over K/2,
// as the pointwise convolution's loops) and adds its tile into the one or
// two quadrants of C it belongs to: the first product to reach a quadrant
// writes bias + residual + its sums, the last adds its own, applies the
// activation and writes C. C is computed in blocks of rows x 64 columns,
// all seven products per block (where a row block's seven A operands are
// large, each product over all of a thread's blocks of columns in turn,
// each call's first tile prefetching its own B); the quadrant tiles'
// running sums stay in a compact per-thread buffer (L1/L2) between
// them, and C is written once. Where one row block's operands exceed 1.5
// MB but a thread's share of K/2 would not, the threads split K/2 instead
// of the columns, and their partial products are summed after.
//
// Packed layout (packed_floats() floats): the seven combinations one after
// another, each in groups of up to four 16-column panels (the N/32 panels
// split into ceil(N/128) groups of balanced sizes), a group of nb panels
// [K/2][nb][16]: a tile's step reads one run of nb x 64 bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace openacl::kernels::cpu {
struct Activation;
}

namespace openacl::kernels::cpu::sgemm_strassen {

// Whether this CPU runs it: AVX-512F, and OPENACL_STRASSEN not 0 in the
// environment (OPENACL_STRASSEN=0 sends these GEMMs back to oneDNN, for
// comparisons, and to keep B at its own size).
bool supported();

// Whether it can run an M x K x N GEMM: M and K even, N a multiple of 32.
bool fits(int64_t M, int64_t K, int64_t N);

// Whether it should: fits(), at least kMinRows rows (the products' tiles
// and A's sums amortised), K at least kMinDepth (each product's tiles run
// K / 2 steps; one Zen 5 thread, B from memory, this GEMM's time over the
// plain form's: 2048 x 128 x 1024 1.11, 1024 x 256 x 1024 1.04, 1024 x 512
// x 512 0.95), B at least kMinWeights elements, and at least kMinWork
// multiply-adds. B's memory grows by 3/4 while the time saved grows with the
// rows too: the memory goes to the large GEMMs. BERT-base at batch 1 (128
// rows): its 768 x 3072 feed-forward pair (3.0e8 multiply-adds) and its QKV
// (2.3e8; the model 2-4% faster on one or two threads for 61 MB more) but
// not its output projection (7.5e7: under 1% for 20 MB more); at batch 8 all
// four. Its peak memory stays the least of the three runtimes'.
inline constexpr int64_t kMinRows = 64;
inline constexpr int64_t kMinDepth = 512;
inline constexpr int64_t kMinWeights = int64_t{1} << 18;
inline constexpr int64_t kMinWork = int64_t{1} << 27;
bool pays(int64_t M, int64_t K, int64_t N);

size_t packed_floats(int64_t K, int64_t N);

// Packs B (element (k, n) at b[k * stride_k + n * stride_n]) into `out`
// (packed_floats(K, N) floats; 64-byte aligned runs faster), over the compute threads.
void pack(const float* b, int64_t K, int64_t N, int64_t stride_k, int64_t stride_n, float* out);

// The recipe under which atc stores a packed B (PackCache); callers append KxN.
const char* recipe();

// C = act(A x B + bias + res); A row-major with `lda`, C and res with N
// floats per row. bias (N values) and res may be nullptr; res may be C
// itself (not A); act nullptr or empty for none (Gelu by gelu512.h, the
// others by act512 or Activation::apply_range). Runs on the compute
// threads. Returns false, touching nothing, where !supported() or !fits().
bool run(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed, const float* bias,
         const float* res, float* c, const Activation* act);

// The same tiles without Strassen's algorithm: one product, A read in
// place, B packed whole in the same groups of up to four 16-column panels,
// [K][nb][16] each (plain_floats() floats), C written once. For constant
// weights where Strassen's algorithm does not pay or would cost memory
// (BERT's QKV and output projections): in the model oneDNN's GEMM ran them
// 6-9% slower (B comes from memory; these tiles prefetch the next group's
// panels), and alone, B in cache, the two are even (92-94% of the peak,
// Zen 5; 93-96% on an Intel Xeon at N >= 256).
//
// Whether this CPU runs it: AVX-512F, and OPENACL_GEMM512 not 0 in the
// environment (0 sends these GEMMs back to oneDNN, for comparisons).
bool plain_supported();
// Whether it should run an M x K x N GEMM: plain_supported(), N a multiple
// of 16, at least kMinPlainRows rows and K at least 16 (B in cache, one
// thread: 8 or 16 x 768 x 768 oneDNN's as fast or a little faster, 0.041
// against 0.042 ms; 32 rows 0.145 ms here against 0.154).
inline constexpr int64_t kMinPlainRows = 32;
bool plain_pays(int64_t M, int64_t K, int64_t N);
size_t plain_floats(int64_t K, int64_t N);
// Packs B as pack() does, into plain_floats(K, N) floats.
void pack_plain(const float* b, int64_t K, int64_t N, int64_t stride_k, int64_t stride_n, float* out);
const char* plain_recipe();
// run() for the plain form: the same arguments and contract; false,
// touching nothing, where !plain_supported() or N % 16 != 0.
bool run_plain(int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* packed, const float* bias,
               const float* res, float* c, const Activation* act);

}  // namespace openacl::kernels::cpu::sgemm_strassen
