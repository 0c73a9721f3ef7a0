// A double-precision GEMM with the fused epilogue, for the tests of our own
// GEMMs (test_sgemm_packed.cpp, test_sgemm_strassen.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace openacl::testing {

// act(a x b + bias + res), a row-major [M, K], b given as b[k * sk + n * sn];
// act one of "", Relu, Clip (to [-0.5, 0.5]), HardSwish, Tanh, Gelu.
inline std::vector<double> gemm_reference(int64_t M, int64_t K, int64_t N, const std::vector<float>& a,
                                          const std::vector<float>& b, int64_t sk, int64_t sn, const float* bias,
                                          const float* res, const std::string& act) {
  std::vector<double> c(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = bias ? bias[n] : 0.0;
      if (res) s += res[m * N + n];
      for (int64_t k = 0; k < K; ++k) s += double(a[m * K + k]) * b[k * sk + n * sn];
      if (act == "Relu") s = s > 0 ? s : 0;
      if (act == "Clip") s = std::min(std::max(s, -0.5), 0.5);
      if (act == "HardSwish") s = s * std::max(0.0, std::min(1.0, s / 6 + 0.5));
      if (act == "Tanh") s = std::tanh(s);
      if (act == "Gelu") s = 0.5 * s * (1 + std::erf(s / std::sqrt(2.0)));
      c[m * N + n] = s;
    }
  return c;
}

// B [K, N] (row-major) packed by `pack` (a GEMM's pack(b, K, N, stride_k,
// stride_n, out)) into `floats` floats: from b itself, or when `transposed`
// from a copy stored [N, K] (element (k, n) at n * K + k), so that both
// strides the packer takes are exercised.
template <class Pack>
std::vector<float> packed_b(const std::vector<float>& b, int64_t K, int64_t N, size_t floats, bool transposed,
                            Pack pack) {
  std::vector<float> out(floats);
  if (!transposed) {
    pack(b.data(), K, N, N, 1, out.data());
    return out;
  }
  std::vector<float> bt(b.size());
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) bt[static_cast<size_t>(n * K + k)] = b[static_cast<size_t>(k * N + n)];
  pack(bt.data(), K, N, 1, K, out.data());
  return out;
}

inline std::string gemm_case_name(int64_t M, int64_t K, int64_t N, bool transposed) {
  return std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N) + (transposed ? " (B transposed)" : "");
}

}  // namespace openacl::testing
