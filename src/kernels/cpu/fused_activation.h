// The activation a Conv or MatMul applies after itself when a pass fused it
// (graph/passes.h): as a oneDNN eltwise post-op, or with these loops.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include "graph/attribute.h"
#include "graph/passes.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/dnnl_common.h"

namespace openacl::kernels::cpu {

// An activation fused into the node before it (graph::fuse_conv_activation,
// graph::fuse_matmul_epilogue), read from the node's attributes.
struct Activation {
  std::string op;  // "" = none
  float alpha = 0, beta = 0;

  static Activation of(const graph::AttributeMap& a) {
    return Activation{a.get_string(graph::kFusedActivationAttr, ""), a.get_float(graph::kFusedAlphaAttr, 0.f),
                      a.get_float(graph::kFusedBetaAttr, 0.f)};
  }
  // Applied after the convolution (reference path, or oneDNN without the post-op).
  void apply(float* y, int64_t n) const {
    if (op.empty()) return;
    parallel_for(n, 1 << 14, [&](int64_t lo, int64_t hi) { apply_range(y, lo, hi); });
  }
  // y[lo, hi) on the calling thread (for kernels that apply it per block).
  void apply_range(float* y, int64_t lo, int64_t hi) const {
    const float a = alpha, b = beta;
    {
      if (op == "Relu") {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) y[i] = y[i] > 0 ? y[i] : 0;
      } else if (op == "LeakyRelu") {
        for (int64_t i = lo; i < hi; ++i) y[i] = y[i] >= 0 ? y[i] : a * y[i];
      } else if (op == "Clip") {
        for (int64_t i = lo; i < hi; ++i) y[i] = std::isnan(y[i]) ? y[i] : std::min(std::max(y[i], a), b);
      } else if (op == "Sigmoid") {
        for (int64_t i = lo; i < hi; ++i) y[i] = 1.f / (1.f + std::exp(-y[i]));
      } else if (op == "Tanh") {
        for (int64_t i = lo; i < hi; ++i) y[i] = std::tanh(y[i]);
      } else if (op == "HardSigmoid") {
        for (int64_t i = lo; i < hi; ++i) y[i] = std::max(0.f, std::min(1.f, a * y[i] + b));
      } else if (op == "HardSwish") {
        for (int64_t i = lo; i < hi; ++i) y[i] = y[i] * std::max(0.f, std::min(1.f, y[i] / 6.f + 0.5f));
      } else if (op == "Gelu") {
        for (int64_t i = lo; i < hi; ++i) y[i] = 0.5f * y[i] * (1.f + std::erf(y[i] * 0.70710678118654752f));
      }
    }
  }
#if OPENACL_HAVE_DNNL
  // Appends the oneDNN eltwise post-op; false when there is no equivalent.
  bool add_post_op(dnnl::post_ops* ops) const {
    dnnl::algorithm alg;
    float a = 0, b = 0;
    if (op == "Relu") alg = dnnl::algorithm::eltwise_relu;
    else if (op == "LeakyRelu") { alg = dnnl::algorithm::eltwise_relu; a = alpha; }
    else if (op == "Clip") { alg = dnnl::algorithm::eltwise_clip_v2; a = alpha; b = beta; }
    else if (op == "Sigmoid") alg = dnnl::algorithm::eltwise_logistic;
    else if (op == "Tanh") alg = dnnl::algorithm::eltwise_tanh;
    else if (op == "HardSwish") alg = dnnl::algorithm::eltwise_hardswish;
    else if (op == "Gelu") alg = dnnl::algorithm::eltwise_gelu_erf;
    else return false;
    ops->append_eltwise(1.f, alg, a, b);
    return true;
  }
#endif
};

}  // namespace openacl::kernels::cpu
