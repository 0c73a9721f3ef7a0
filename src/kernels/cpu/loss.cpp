// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.
//
// The input is viewed as [N, C, D] (D = product of the trailing dims) and the
// target as [N, D]. Each (n, d) contributes -w[t] * logp[n, t, d] where t is its
// target class, logp is the input itself (NLL) or its log-softmax over C (SCE),
// and w the optional class weights (1 without). A target equal to ignore_index
// contributes nothing and has weight 0, so "mean" divides by the sum of the
// weights actually used (the count of non-ignored samples without weights).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

// d positions per SCE work item: the per-position max / log-sum-exp live in
// stack arrays of this size and the class loop runs over them contiguously.
constexpr int64_t kBlock = 64;

struct LossParams {
  int64_t n = 0, c = 0, d = 0;
  bool has_ignore = false;
  int64_t ignore = 0;
  int reduction = 2;  // 0 none, 1 sum, 2 mean
};

template <class T, class I>
Status loss_typed(KernelContext& ctx, const LossParams& p, bool softmax) {
  using A = ComputeType<T>;
  const T* x = ctx.input(0).as<T>();
  const I* tg = ctx.input(1).as<I>();
  const T* w = ctx.has_input(2) ? ctx.input(2).as<T>() : nullptr;
  const int64_t N = p.n, C = p.c, D = p.d, total = N * D;
  // Targets are checked up front so the parallel loops cannot fail.
  for (int64_t i = 0; i < total; ++i) {
    const int64_t t = static_cast<int64_t>(tg[i]);
    if (p.has_ignore && t == p.ignore) continue;
    if (t < 0 || t >= C)
      return ctx.fail("target %lld at position %lld is outside [0, %lld)", static_cast<long long>(t),
                      static_cast<long long>(i), static_cast<long long>(C));
  }
  T* logp = softmax && ctx.has_output(1) ? ctx.output(1).as<T>() : nullptr;
  T* y = ctx.output(0).as<T>();
  const bool none = p.reduction == 0;
  // Reductions accumulate per-position loss and weight in double so the order
  // of the (parallel) chunks does not matter for the result.
  std::vector<double> lbuf(none ? 0 : static_cast<size_t>(total)), wbuf(none ? 0 : static_cast<size_t>(total));

  auto emit = [&](int64_t i, A lp) {
    const int64_t t = static_cast<int64_t>(tg[i]);
    A loss = 0, wt = 0;
    if (!(p.has_ignore && t == p.ignore)) {
      wt = w ? load(w[t]) : A(1);
      loss = -lp * wt;
    }
    if (none) {
      y[i] = store<T>(loss);
    } else {
      lbuf[i] = static_cast<double>(loss);
      wbuf[i] = static_cast<double>(wt);
    }
  };
  // The log-prob at the target class, or 0 for an ignored position (never read).
  auto at_target = [&](int64_t n, int64_t d) -> const T* {
    const int64_t t = static_cast<int64_t>(tg[n * D + d]);
    if (p.has_ignore && t == p.ignore) return nullptr;
    return x + (n * C + t) * D + d;
  };

  if (!softmax) {
    parallel_for(total, 4096, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T* src = at_target(i / D, i % D);
        emit(i, src ? load(*src) : A(0));
      }
    });
  } else if (D == 1) {
    // [N, C]: each row's classes are contiguous, so reduce along them directly.
    parallel_for(N, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, C)), [&](int64_t b, int64_t e) {
      for (int64_t n = b; n < e; ++n) {
        const T* xn = x + n * C;
        A mx = load(xn[0]);
#pragma omp simd reduction(max : mx)
        for (int64_t c = 1; c < C; ++c) mx = std::max(mx, load(xn[c]));
        A sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t c = 0; c < C; ++c) sum += std::exp(load(xn[c]) - mx);
        const A lse = mx + std::log(sum);
        if (logp) {
          T* ln = logp + n * C;
#pragma omp simd
          for (int64_t c = 0; c < C; ++c) ln[c] = store<T>(load(xn[c]) - lse);
        }
        const T* src = at_target(n, 0);
        emit(n, src ? load(*src) - lse : A(0));
      }
    });
  } else {
    const int64_t blocks = (D + kBlock - 1) / kBlock;
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, C * std::min(D, kBlock)));
    parallel_for(N * blocks, grain, [&](int64_t b, int64_t e) {
      A mx[kBlock], lse[kBlock];
      for (int64_t item = b; item < e; ++item) {
        const int64_t n = item / blocks, d0 = (item % blocks) * kBlock, len = std::min(kBlock, D - d0);
        const T* xn = x + n * C * D + d0;
        for (int64_t j = 0; j < len; ++j) mx[j] = load(xn[j]);
        for (int64_t c = 1; c < C; ++c)
          for (int64_t j = 0; j < len; ++j) mx[j] = std::max(mx[j], load(xn[c * D + j]));
        for (int64_t j = 0; j < len; ++j) lse[j] = 0;
        for (int64_t c = 0; c < C; ++c)
          for (int64_t j = 0; j < len; ++j) lse[j] += std::exp(load(xn[c * D + j]) - mx[j]);
        for (int64_t j = 0; j < len; ++j) lse[j] = mx[j] + std::log(lse[j]);
        if (logp) {
          T* ln = logp + n * C * D + d0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t j = 0; j < len; ++j) ln[c * D + j] = store<T>(load(xn[c * D + j]) - lse[j]);
        }
        for (int64_t j = 0; j < len; ++j) {
          const T* src = at_target(n, d0 + j);
          emit(n * D + d0 + j, src ? load(*src) - lse[j] : A(0));
        }
      }
    });
  }
  if (!none) {
    double sum = 0, wsum = 0;
    for (int64_t i = 0; i < total; ++i) {
      sum += lbuf[i];
      wsum += wbuf[i];
    }
    // mean over zero used weight is 0/0 = NaN, as in the ONNX reference.
    y[0] = store<T>(p.reduction == 1 ? sum : sum / wsum);
  }
  return Status::Ok();
}

Status run_loss(KernelContext& ctx, bool softmax) {
  const Tensor& x = ctx.input(0);
  const Tensor& t = ctx.input(1);
  if (x.rank() < 2)
    return ctx.fail("input must have rank >= 2 (N x C x ...), got rank %lld", static_cast<long long>(x.rank()));
  LossParams p;
  p.n = x.dims[0];
  p.c = x.dims[1];
  p.d = 1;
  for (int64_t i = 2; i < x.rank(); ++i) p.d *= x.dims[i];
  bool shape_ok = t.rank() == x.rank() - 1 && t.dims[0] == p.n;
  for (int64_t i = 1; shape_ok && i < t.rank(); ++i) shape_ok = t.dims[i] == x.dims[i + 1];
  if (!shape_ok) return ctx.fail("target shape does not match input shape without the class dim");
  if (ctx.has_input(2)) {
    const Tensor& w = ctx.input(2);
    if (w.dtype != x.dtype) return ctx.fail("weight must have the input's type");
    if (w.rank() != 1 || w.dims[0] != p.c)
      return ctx.fail("weight must be 1-D with %lld elements", static_cast<long long>(p.c));
  }
  if (const graph::Attribute* a = ctx.attrs().find("ignore_index"); a && a->kind == graph::Attribute::Kind::kInt) {
    p.has_ignore = true;
    p.ignore = a->i;
  }
  const std::string red = ctx.attrs().get_string("reduction", "mean");
  if (red == "none")
    p.reduction = 0;
  else if (red == "sum")
    p.reduction = 1;
  else if (red == "mean")
    p.reduction = 2;
  else
    return ctx.fail("reduction '%s' is not one of none, sum, mean", red.c_str());

  Status st = Status::Ok();
  bool typed = false;
  dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    typed = true;
    if (t.dtype == DType::kInt64)
      st = loss_typed<T, int64_t>(ctx, p, softmax);
    else if (t.dtype == DType::kInt32)
      st = loss_typed<T, int32_t>(ctx, p, softmax);
    else
      st = ctx.fail("target must be int32 or int64, got %s", graph::dtype_name(t.dtype));
  });
  if (!typed) return ctx.fail("unsupported input type %s", graph::dtype_name(x.dtype));
  return st;
}

Status nll_loss(KernelContext& ctx) { return run_loss(ctx, false); }
Status sce_loss(KernelContext& ctx) { return run_loss(ctx, true); }

OPENACL_REGISTER_KERNEL(NegativeLogLikelihoodLoss, "cpu").types(float_types()).run(nll_loss);
OPENACL_REGISTER_KERNEL(SoftmaxCrossEntropyLoss, "cpu").types(float_types()).run(sce_loss);

}  // namespace
}  // namespace openacl::kernels::cpu
