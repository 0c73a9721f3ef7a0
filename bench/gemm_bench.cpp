// One float32 GEMM with a constant B, C[M,N] = A[M,K] x B[K,N] + bias, on the
// kernels a MatMul with constant weights can take on this CPU: the Strassen
// GEMM, its plain form (sgemm_strassen.h) and oneDNN's sgemm. The numbers in
// docs/benchmarks.md and graph-engine.md that say "alone" come from it.
//
//   gemm_bench M K N [--form strassen|plain|onednn] [--iters N] [--cold]
//
// --cold writes 512 MiB before every run, so that B comes from memory as in
// a model whose weights do not fit the caches (BERT-base's 340 MB); without
// it B stays in cache between runs. Threads: OMP_NUM_THREADS. Prints one
// JSON line: the form, the shape, the median and best ms, and GFLOP/s of the
// median counting 2 x M x K x N (Strassen's products as the eight they
// replace).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/page_alloc.h"
#include "kernels/cpu/sgemm_strassen.h"
#ifdef OPENACL_HAVE_DNNL
#include <dnnl.h>
#endif

namespace ss = openacl::kernels::cpu::sgemm_strassen;

namespace {

// n floats from alloc_pages: 64-byte aligned, as the runtime's arena
// places tensors. A large std::vector<float> starts 16 bytes past a page,
// and then every 64-byte store into C's rows splits across two cache lines
// (1024 x 768 x 3072, one thread: the Strassen GEMM about 15% slower so:
// 32.4-33.4 ms against 27.5-28.4).
struct Floats {
  explicit Floats(size_t n) : buf(openacl::alloc_pages(n * sizeof(float))), n(n) {
    if (!buf) {
      std::fprintf(stderr, "gemm_bench: cannot allocate %zu floats\n", n);
      std::exit(1);
    }
  }
  float* data() const { return static_cast<float*>(buf.get()); }
  float* begin() const { return data(); }
  float* end() const { return data() + n; }
  openacl::PageBuffer buf;
  size_t n;
};

int usage() {
  std::fprintf(stderr, "usage: gemm_bench M K N [--form strassen|plain|onednn] [--iters N] [--cold]\n");
  return 2;
}

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return usage();
  const int64_t M = std::atoll(argv[1]), K = std::atoll(argv[2]), N = std::atoll(argv[3]);
  std::string form = "strassen";
  int iters = 20;
  bool cold = false;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--form" && i + 1 < argc)
      form = argv[++i];
    else if (a == "--iters" && i + 1 < argc)
      iters = std::atoi(argv[++i]);
    else if (a == "--cold")
      cold = true;
    else
      return usage();
  }
  if (M < 1 || K < 1 || N < 1 || iters < 1) return usage();
  const bool strassen = form == "strassen", plain = form == "plain";
  if (strassen && !(ss::supported() && ss::fits(M, K, N))) {
    std::fprintf(stderr, "gemm_bench: the Strassen GEMM cannot run %ldx%ldx%ld here (AVX-512F; M, K even; N %% 32)\n",
                 static_cast<long>(M), static_cast<long>(K), static_cast<long>(N));
    return 1;
  }
  if (plain && !(ss::plain_supported() && N % 16 == 0)) {
    std::fprintf(stderr, "gemm_bench: the plain form needs AVX-512F and N a multiple of 16\n");
    return 1;
  }
#ifndef OPENACL_HAVE_DNNL
  if (form == "onednn") {
    std::fprintf(stderr, "gemm_bench: built without oneDNN\n");
    return 1;
  }
#endif
  if (!strassen && !plain && form != "onednn") return usage();

  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Floats a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N)), c(static_cast<size_t>(M * N));
  Floats bias(static_cast<size_t>(N));
  for (float& x : a) x = dist(gen);
  for (float& x : b) x = dist(gen);
  for (float& x : bias) x = dist(gen);
  Floats packed(strassen ? ss::packed_floats(K, N) : plain ? ss::plain_floats(K, N) : 0);
  if (strassen)
    ss::pack(b.data(), K, N, N, 1, packed.data());
  else if (plain)
    ss::pack_plain(b.data(), K, N, N, 1, packed.data());
  std::vector<char> junk(cold ? size_t{512} << 20 : 0);
  std::vector<double> ms;
  for (int it = -2; it < iters; ++it) {  // two warm-up runs
    if (cold) std::memset(junk.data(), it & 0xff, junk.size());
    const double t0 = seconds();
    if (strassen)
      ss::run(M, N, K, a.data(), K, packed.data(), bias.data(), nullptr, c.data(), nullptr);
    else if (plain)
      ss::run_plain(M, N, K, a.data(), K, packed.data(), bias.data(), nullptr, c.data(), nullptr);
#ifdef OPENACL_HAVE_DNNL
    else
      dnnl_sgemm('N', 'N', M, N, K, 1.f, a.data(), K, b.data(), N, 0.f, c.data(), N);
#endif
    const double t1 = seconds();
    if (it >= 0) ms.push_back((t1 - t0) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  std::printf(
      "{\"form\": \"%s\", \"M\": %ld, \"K\": %ld, \"N\": %ld, \"cold\": %s, \"median_ms\": %.4f, \"best_ms\": %.4f, "
      "\"gflops\": %.1f}\n",
      form.c_str(), static_cast<long>(M), static_cast<long>(K), static_cast<long>(N), cold ? "true" : "false", median,
      ms.front(), 2.0 * static_cast<double>(M) * static_cast<double>(K) * static_cast<double>(N) / median * 1e-6);
  return 0;
}
