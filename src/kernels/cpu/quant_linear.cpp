// Integer and quantized linear ops, reference implementations:
//   MatMulInteger(A, B, a_zp, b_zp) -> int32, ConvInteger(X, W, x_zp, w_zp) -> int32,
//   QLinearMatMul / QLinearConv: the integer product of the zero-point-shifted
//   operands, requantized with a_scale * b_scale / y_scale (round half to
//   even, saturate) plus y_zp.
// Operands are widened to int32 with the zero point subtracted first, so
// padding (conceptually the zero point) becomes 0 and the int32 loops of the
// plain kernels apply.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/matmul_common.h"

namespace openacl::kernels::cpu {
namespace {

bool is_8bit(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// Values of a zero-point / scale tensor as doubles (absent: {def}).
std::vector<double> param(const KernelContext& ctx, size_t i, double def) {
  if (!ctx.has_input(i) || !ctx.input(i).data) return {def};
  return load_as<double>(ctx.input(i));
}

// x - zp[(index / inner) % zp.size()] widened to int32: zp is per-tensor
// (one value) or per-slice along one axis (`inner` = elements per slice).
std::vector<int32_t> widen(const Tensor& t, const std::vector<double>& zp, int64_t inner) {
  std::vector<int32_t> out(static_cast<size_t>(t.elements()));
  const int64_t nz = static_cast<int64_t>(zp.size());
  dispatch<kInts>(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.as<T>();
    for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i)
      out[i] = static_cast<int32_t>(p[i]) - static_cast<int32_t>(zp[nz == 1 ? 0 : (i / inner) % nz]);
  });
  return out;
}

// Zero point of A per row (M values, or one per batch row) or of B per column.
Status matmul_int(KernelContext& ctx, size_t ia, size_t ib, const std::vector<double>& azp,
                  const std::vector<double>& bzp, MatmulShape* s, std::vector<int32_t>* acc) {
  const Tensor& a = ctx.input(ia);
  const Tensor& b = ctx.input(ib);
  if (!is_8bit(a.dtype) || !is_8bit(b.dtype)) return ctx.fail("A and B must be int8 or uint8");
  const std::string err = matmul_shape(a.dims, b.dims, s);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  const int64_t na = static_cast<int64_t>(azp.size()), nb = static_cast<int64_t>(bzp.size());
  if (na != 1 && na % std::max<int64_t>(1, s->M) != 0) return ctx.fail("a_zero_point has %lld values", static_cast<long long>(na));
  if (nb != 1 && nb % std::max<int64_t>(1, s->N) != 0) return ctx.fail("b_zero_point has %lld values", static_cast<long long>(nb));
  // A's zero point varies by row (index / K); B's by column, so widen B with
  // per-element indexing modulo N (inner = 1 over a [.., K, N] layout).
  const std::vector<int32_t> aw = widen(a, azp, std::max<int64_t>(1, s->K));
  std::vector<int32_t> bw(static_cast<size_t>(b.elements()));
  dispatch<kInts>(b.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = b.as<T>();
    for (int64_t i = 0; i < static_cast<int64_t>(bw.size()); ++i) {
      const int64_t col = i % std::max<int64_t>(1, s->N), mat = i / std::max<int64_t>(1, s->N * s->K);
      const double z = nb == 1 ? bzp[0] : bzp[(mat * s->N + col) % nb];
      bw[i] = static_cast<int32_t>(p[i]) - static_cast<int32_t>(z);
    }
  });
  acc->assign(static_cast<size_t>(s->batches() * s->M * s->N), 0);
  batched_matmul_ref<int32_t, int32_t, int32_t, int32_t>(*s, aw.data(), bw.data(), acc->data());
  return Status::Ok();
}

// Stores round(v * scale) + zp saturated to the output's 8-bit type.
void requantize(const std::vector<int32_t>& acc, const std::vector<double>& scale, int64_t inner,
                const std::vector<double>& yzp, Tensor& y) {
  const int64_t ns = static_cast<int64_t>(scale.size());
  dispatch<kInts>(y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = y.as<T>();
    const float lo = static_cast<float>(std::numeric_limits<T>::min()), hi = static_cast<float>(std::numeric_limits<T>::max());
    for (int64_t i = 0; i < static_cast<int64_t>(acc.size()); ++i) {
      const float sc = static_cast<float>(scale[ns == 1 ? 0 : (i / inner) % ns]);
      float v = std::nearbyint(static_cast<float>(acc[i]) * sc) + static_cast<float>(yzp[0]);
      p[i] = static_cast<T>(std::min(hi, std::max(lo, v)));
    }
  });
}

Status matmul_integer(KernelContext& ctx) {
  MatmulShape s;
  std::vector<int32_t> acc;
  OPENACL_RETURN_IF_ERROR(matmul_int(ctx, 0, 1, param(ctx, 2, 0), param(ctx, 3, 0), &s, &acc));
  Tensor* y = &ctx.output(0);
  if (!y->data || y->dims != s.out) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, s.out, &y));
  std::copy(acc.begin(), acc.end(), y->as<int32_t>());
  return Status::Ok();
}

Status qlinear_matmul(KernelContext& ctx) {
  MatmulShape s;
  std::vector<int32_t> acc;
  OPENACL_RETURN_IF_ERROR(matmul_int(ctx, 0, 3, param(ctx, 2, 0), param(ctx, 5, 0), &s, &acc));
  const std::vector<double> as = param(ctx, 1, 1), bs = param(ctx, 4, 1), ys = param(ctx, 6, 1), yzp = param(ctx, 7, 0);
  if (as.size() != 1 || ys.size() != 1 || yzp.size() != 1) return ctx.fail("a_scale, y_scale and y_zero_point must be scalars");
  if (bs.size() != 1 && static_cast<int64_t>(bs.size()) != s.N) return ctx.fail("b_scale must be a scalar or have N values");
  std::vector<double> scale(bs.size());
  for (size_t i = 0; i < bs.size(); ++i) scale[i] = static_cast<float>(as[0]) * static_cast<float>(bs[i]) / static_cast<float>(ys[0]);
  Tensor* y = &ctx.output(0);
  if (!y->data || y->dims != s.out) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, s.out, &y));
  if (!is_8bit(y->dtype)) return ctx.fail("y must be int8 or uint8");
  requantize(acc, scale, 1, yzp, *y);  // per-column scale: element i uses scale[i % N]
  return Status::Ok();
}

// Shared by ConvInteger and QLinearConv: int32 conv of zero-shifted operands.
Status conv_int(KernelContext& ctx, size_t ix, size_t iw, const std::vector<double>& xzp, const std::vector<double>& wzp,
                WindowGeom* g, std::vector<int32_t>* acc, const int32_t* bias) {
  const Tensor& x = ctx.input(ix);
  const Tensor& w = ctx.input(iw);
  if (!is_8bit(x.dtype) || !is_8bit(w.dtype)) return ctx.fail("X and W must be int8 or uint8");
  const std::string err = conv_geom(ctx.attrs(), x.dims, w.dims, g);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  if (xzp.size() != 1) return ctx.fail("x_zero_point must be a scalar");
  if (wzp.size() != 1 && static_cast<int64_t>(wzp.size()) != g->M) return ctx.fail("w_zero_point must be a scalar or have M values");
  const std::vector<int32_t> xw = widen(x, xzp, 1);
  const std::vector<int32_t> ww = widen(w, wzp, g->M ? w.elements() / g->M : 1);
  acc->assign(static_cast<size_t>(g->N * g->M * g->out_size()), 0);
  conv_ref<int32_t>(*g, xw.data(), ww.data(), bias, acc->data());
  return Status::Ok();
}

Status conv_integer(KernelContext& ctx) {
  WindowGeom g;
  std::vector<int32_t> acc;
  OPENACL_RETURN_IF_ERROR(conv_int(ctx, 0, 1, param(ctx, 2, 0), param(ctx, 3, 0), &g, &acc, nullptr));
  Tensor* y = &ctx.output(0);
  const std::vector<int64_t> od = geom_out_dims(g);
  if (!y->data || y->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
  std::copy(acc.begin(), acc.end(), y->as<int32_t>());
  return Status::Ok();
}

Status qlinear_conv(KernelContext& ctx) {
  const Tensor* b = ctx.has_input(8) && ctx.input(8).data ? &ctx.input(8) : nullptr;
  if (b && b->dtype != DType::kInt32) return ctx.fail("B must be int32");
  WindowGeom g;
  std::vector<int32_t> acc;
  OPENACL_RETURN_IF_ERROR(conv_int(ctx, 0, 3, param(ctx, 2, 0), param(ctx, 5, 0), &g, &acc, b ? b->as<int32_t>() : nullptr));
  if (b && b->elements() != g.M) return ctx.fail("B must have M values");
  const std::vector<double> xs = param(ctx, 1, 1), ws = param(ctx, 4, 1), ys = param(ctx, 6, 1), yzp = param(ctx, 7, 0);
  if (xs.size() != 1 || ys.size() != 1 || yzp.size() != 1) return ctx.fail("x_scale, y_scale and y_zero_point must be scalars");
  if (ws.size() != 1 && static_cast<int64_t>(ws.size()) != g.M) return ctx.fail("w_scale must be a scalar or have M values");
  std::vector<double> scale(ws.size());
  for (size_t i = 0; i < ws.size(); ++i) scale[i] = static_cast<float>(xs[0]) * static_cast<float>(ws[i]) / static_cast<float>(ys[0]);
  Tensor* y = &ctx.output(0);
  const std::vector<int64_t> od = geom_out_dims(g);
  if (!y->data || y->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
  if (!is_8bit(y->dtype)) return ctx.fail("y must be int8 or uint8");
  requantize(acc, scale, std::max<int64_t>(1, g.out_size()), yzp, *y);
  return Status::Ok();
}

const std::vector<DType> k8bit{DType::kInt8, DType::kUInt8};

OPENACL_REGISTER_KERNEL(MatMulInteger, "cpu").types(k8bit).run(matmul_integer);
OPENACL_REGISTER_KERNEL(QLinearMatMul, "cpu").types(k8bit).run(qlinear_matmul);
OPENACL_REGISTER_KERNEL(ConvInteger, "cpu").types(k8bit).run(conv_integer);
OPENACL_REGISTER_KERNEL(QLinearConv, "cpu").types(k8bit).run(qlinear_conv);

}  // namespace
}  // namespace openacl::kernels::cpu
