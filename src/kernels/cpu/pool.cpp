// Pooling: MaxPool (+ Indices, storage_order), AveragePool
// (count_include_pad), LpPool, all with dilations / ceil_mode / auto_pad, and
// the Global variants. Direct loops parallel over (N, C) planes: pooling is
// memory-bound, the windows are small, and each plane is one contiguous read.
// TODO(perf): oneDNN pooling for float32 once blocked layouts flow between layers.
#include <cmath>
#include <limits>

#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

enum class PoolKind { kMax, kAvg, kLp };

struct PoolParams {
  PoolKind kind = PoolKind::kMax;
  bool count_include_pad = false;
  int64_t p = 2;
  bool col_major = false;  // MaxPool storage_order = 1
};

template <class T>
void pool_ref(const WindowGeom& g, const PoolParams& pp, const T* x, T* y, int64_t* indices) {
  using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t isz = g.in_size(), osz = g.out_size();
  parallel_for(g.N * g.C, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, osz * g.k_size())), [&](int64_t b, int64_t e) {
    for (int64_t nc = b; nc < e; ++nc) {
      const T* xp = x + nc * isz;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            const int64_t st[3] = {o0 * g.s[0] - g.pb[0], o1 * g.s[1] - g.pb[1], o2 * g.s[2] - g.pb[2]};
            Acc acc = pp.kind == PoolKind::kMax ? -std::numeric_limits<Acc>::infinity() : Acc(0);
            int64_t best = -1, counted = 0, padded = 0;
            for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
              const int64_t i0 = st[0] + k0 * g.d[0];
              if (i0 >= g.in[0] + g.pe[0]) break;
              const bool in0 = i0 >= 0 && i0 < g.in[0];
              for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                const int64_t i1 = st[1] + k1 * g.d[1];
                if (i1 >= g.in[1] + g.pe[1]) break;
                const bool in1 = in0 && i1 >= 0 && i1 < g.in[1];
                for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                  const int64_t i2 = st[2] + k2 * g.d[2];
                  if (i2 >= g.in[2] + g.pe[2]) break;
                  ++padded;
                  if (!in1 || i2 < 0 || i2 >= g.in[2]) continue;
                  const int64_t off = (i0 * g.in[1] + i1) * g.in[2] + i2;
                  const Acc v = static_cast<Acc>(load(xp[off]));
                  ++counted;
                  if (pp.kind == PoolKind::kMax) {
                    if (v > acc || best < 0) {
                      acc = v;
                      best = pp.col_major ? i0 + i1 * g.in[0] + i2 * g.in[0] * g.in[1] : off;
                    }
                  } else if (pp.kind == PoolKind::kAvg) {
                    acc += v;
                  } else {
                    acc += static_cast<Acc>(std::pow(std::fabs(v), static_cast<Acc>(pp.p)));
                  }
                }
              }
            }
            const int64_t oi = (o0 * g.out[1] + o1) * g.out[2] + o2;
            if (pp.kind == PoolKind::kAvg) {
              const int64_t n = pp.count_include_pad ? padded : counted;
              acc = n > 0 ? acc / static_cast<Acc>(n) : Acc(0);
            } else if (pp.kind == PoolKind::kLp) {
              acc = static_cast<Acc>(std::pow(acc, Acc(1) / static_cast<Acc>(pp.p)));
            }
            y[nc * osz + oi] = store<T>(acc);
            if (indices) indices[nc * osz + oi] = best < 0 ? -1 : nc * isz + best;
          }
    }
  });
}

Status pool(KernelContext& ctx, PoolKind kind) {
  const Tensor& x = ctx.input(0);
  WindowGeom g;
  const std::string err = pool_geom(ctx.attrs(), x.dims, &g);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  PoolParams pp;
  pp.kind = kind;
  pp.count_include_pad = ctx.attrs().get_int("count_include_pad", 0) != 0;
  pp.p = ctx.attrs().get_int("p", 2);
  pp.col_major = ctx.attrs().get_int("storage_order", 0) != 0;
  if (kind == PoolKind::kLp && pp.p < 1) return ctx.fail("p must be >= 1");
  const std::vector<int64_t> od = geom_out_dims(g);
  Tensor* y = &ctx.output(0);
  if (!y->data || y->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
  Tensor* ind = nullptr;
  if (kind == PoolKind::kMax && ctx.has_output(1)) {
    ind = &ctx.output(1);
    if (!ind->data || ind->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(1, od, &ind));
  }
  if (y->elements() == 0) return Status::Ok();
  int64_t* ip = ind ? ind->as<int64_t>() : nullptr;
  const bool ok = dispatch<kNumeric>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    pool_ref<T>(g, pp, x.as<T>(), y->as<T>(), ip);
  });
  return ok ? Status::Ok() : ctx.fail("unsupported type");
}

template <PoolKind K>
Status global_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.fail("input must have rank >= 2");
  std::vector<int64_t> od = x.dims;
  int64_t sp = 1;
  for (size_t i = 2; i < od.size(); ++i) sp *= od[i], od[i] = 1;
  Tensor* y = &ctx.output(0);
  if (!y->data || y->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
  const int64_t p = ctx.attrs().get_int("p", 2);
  if (K == PoolKind::kMax && sp == 0 && y->elements() > 0) return ctx.fail("GlobalMaxPool of an empty window");
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* xp = x.as<T>();
    T* yp = y->as<T>();
    parallel_for(y->elements(), std::max<int64_t>(1, 16384 / std::max<int64_t>(1, sp)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const T* v = xp + i * sp;
        Acc acc = K == PoolKind::kMax ? -std::numeric_limits<Acc>::infinity() : Acc(0);
        for (int64_t j = 0; j < sp; ++j) {
          const Acc a = static_cast<Acc>(load(v[j]));
          if constexpr (K == PoolKind::kMax) acc = a > acc ? a : acc;
          else if constexpr (K == PoolKind::kAvg) acc += a;
          else acc += static_cast<Acc>(std::pow(std::fabs(a), static_cast<Acc>(p)));
        }
        if constexpr (K == PoolKind::kAvg) acc = sp ? acc / static_cast<Acc>(sp) : Acc(0);
        if constexpr (K == PoolKind::kLp) acc = static_cast<Acc>(std::pow(acc, Acc(1) / static_cast<Acc>(p)));
        yp[i] = store<T>(acc);
      }
    });
  });
  return ok ? Status::Ok() : ctx.fail("unsupported type");
}

Status max_pool(KernelContext& ctx) { return pool(ctx, PoolKind::kMax); }
Status avg_pool(KernelContext& ctx) { return pool(ctx, PoolKind::kAvg); }
Status lp_pool(KernelContext& ctx) { return pool(ctx, PoolKind::kLp); }

std::vector<DType> max_pool_types() {
  std::vector<DType> t = float_types();
  t.push_back(DType::kInt8);
  t.push_back(DType::kUInt8);
  return t;
}

OPENACL_REGISTER_KERNEL(MaxPool, "cpu").types(max_pool_types()).run(max_pool);
OPENACL_REGISTER_KERNEL(AveragePool, "cpu").types(float_types()).run(avg_pool);
OPENACL_REGISTER_KERNEL(LpPool, "cpu").types(float_types()).run(lp_pool);
OPENACL_REGISTER_KERNEL(GlobalAveragePool, "cpu").types(float_types()).run(global_pool<PoolKind::kAvg>);
OPENACL_REGISTER_KERNEL(GlobalMaxPool, "cpu").types(float_types()).run(global_pool<PoolKind::kMax>);
OPENACL_REGISTER_KERNEL(GlobalLpPool, "cpu").types(float_types()).run(global_pool<PoolKind::kLp>);

}  // namespace
}  // namespace openacl::kernels::cpu
