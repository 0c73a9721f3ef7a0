// QuantizeLinear / DequantizeLinear for the integer quantised types (uint8,
// int8, uint16, int16, int32), per tensor, per axis (opset 13) and blocked
// (opset 21 `block_size`).
//
//   quantize:   y = saturate(round_half_even(x / scale) + zero_point)
//   dequantize: y = (x - zero_point) * scale
//
// Scale and zero point share one layout. X is viewed as [outer, D, inner]
// around `axis`; the scale is a single value (per tensor), a [D] vector (per
// axis) or [outer, ceil(D / block), inner] (blocked). They are widened once
// per run (scales to double, zero points to int64), so the element loop is
// one template per (X, Y) pair.
//
// Arithmetic: the quotient x / scale is formed in double and rounded to the
// division precision (opset 23 `precision`, else the wider of X's and the
// scale's types, double for int32 X) before rounding to an integer: double
// rounding through double is exact for float32/16-bit quotients, so this
// equals dividing in that precision. Dequantize multiplies exactly in double
// and rounds once to the output type (equal to the float32 product the spec
// describes for 8/16-bit inputs; int32 inputs keep more precision).
//
// float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz; float8.h): the same formulas with
// the integer rounding replaced by rounding to the float8 type, saturating to
// its largest finite value unless `saturate` = 0. The zero point, usually 0
// for float8, is added (quantize) or subtracted (dequantize) as a float.
//
// int4/uint4/int2/uint2 (held one per byte, subbyte.h) saturate to their own
// ranges. float4e2m1 goes the float8 way, always saturating (it has no inf):
// rounded to nearest even among its 16 values, at most +-6.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/float8.h"
#include "kernels/cpu/subbyte.h"

namespace openacl::kernels::cpu {
namespace {

bool is_int_quant_type(DType t) {
  return t == DType::kUInt8 || t == DType::kInt8 || t == DType::kUInt16 || t == DType::kInt16 || t == DType::kInt32 ||
         subbyte::is_int(t);
}

bool is_f8_quant_type(DType t) { return f8::is_float8(t) && t != DType::kFloat8E8M0; }
// The small float types: float8 and float4e2m1, quantised by rounding to the
// type rather than to an integer.
bool is_small_float_type(DType t) { return is_f8_quant_type(t) || t == DType::kFloat4E2M1; }
float small_float_value(DType t, uint8_t code) {
  return t == DType::kFloat4E2M1 ? subbyte::fp4_decode(code) : f8::to_float(t, code);
}

// The scale/zero-point layout of one node, checked against X.
struct QuantLayout {
  int64_t outer = 1, d = 1, inner = 1;  // X as [outer, D, inner]
  int64_t block = 0;                    // >0: blocked, scale dim at axis is ceil(D / block)
  bool per_tensor = true;
  int64_t scale_count = 1;
};

Status make_layout(const KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zp, QuantLayout* l) {
  const int64_t rank = x.rank();
  const int64_t block = ctx.attrs().get_int("block_size", 0);
  if (block < 0) return ctx.fail("block_size must be >= 0, got %lld", (long long)block);
  l->scale_count = scale.elements();
  if (zp && zp->elements() != l->scale_count)
    return ctx.fail("zero point has %lld elements but scale has %lld", (long long)zp->elements(),
                    (long long)l->scale_count);
  if (l->scale_count == 1 && scale.rank() <= 1) {
    l->per_tensor = true;
    l->outer = 1;
    l->d = 1;
    l->inner = x.elements();
    return Status::Ok();
  }
  l->per_tensor = false;
  int64_t axis = ctx.attrs().get_int("axis", 1);
  if (axis < -rank || axis >= rank) return ctx.fail("axis %lld out of range for rank %lld", (long long)axis, (long long)rank);
  if (axis < 0) axis += rank;
  l->outer = 1;
  l->inner = 1;
  for (int64_t i = 0; i < axis; ++i) l->outer *= x.dims[i];
  for (int64_t i = axis + 1; i < rank; ++i) l->inner *= x.dims[i];
  l->d = x.dims[axis];
  if (zp && zp->dims != scale.dims && !(block == 0 && zp->rank() <= 1 && scale.rank() <= 1))
    return ctx.fail("zero point shape differs from the scale's");
  if (block == 0) {
    if (scale.rank() != 1 || scale.dims[0] != l->d)
      return ctx.fail("per-axis scale must be 1-D of length %lld (X's dim at axis %lld)", (long long)l->d,
                      (long long)axis);
    l->block = 0;
    return Status::Ok();
  }
  if (scale.rank() != rank) return ctx.fail("blocked scale must have X's rank %lld", (long long)rank);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t want = i == axis ? (x.dims[i] + block - 1) / block : x.dims[i];
    if (scale.dims[i] != want)
      return ctx.fail("blocked scale dim %lld is %lld, expected %lld (block_size %lld)", (long long)i,
                      (long long)scale.dims[i], (long long)want, (long long)block);
  }
  l->block = block;
  return Status::Ok();
}

constexpr int64_t kGrain = 8192;

// Calls f(x_begin, scale_index, scale_step, n) over runs covering X, in
// parallel; within a run the scale index advances by scale_step (0 or 1).
template <class F>
void for_each_quant_run(const QuantLayout& l, int64_t total, F&& f) {
  parallel_for(total, kGrain, [&](int64_t begin, int64_t end) {
    int64_t pos = begin;
    while (pos < end) {
      const int64_t row = pos / l.inner, col = pos % l.inner;
      const int64_t n = std::min(l.inner - col, end - pos);
      if (l.per_tensor) {
        f(pos, int64_t{0}, int64_t{0}, n);
      } else if (l.block == 0) {
        f(pos, row % l.d, int64_t{0}, n);
      } else {
        const int64_t o = row / l.d, a = row % l.d, ds = (l.d + l.block - 1) / l.block;
        f(pos, (o * ds + a / l.block) * l.inner + col, int64_t{1}, n);
      }
      pos += n;
    }
  });
}
template <class T>
std::vector<double> widen_scales(const Tensor& s) {
  std::vector<double> v(static_cast<size_t>(s.elements()));
  const T* p = s.as<T>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(load(p[i]));
  return v;
}
template <class T>
std::vector<int64_t> widen_zero_points(const Tensor* z, int64_t count) {
  std::vector<int64_t> v(static_cast<size_t>(count), 0);
  if (!z) return v;
  const T* p = z->as<T>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]);
  return v;
}

Status scales_of(const KernelContext& ctx, const Tensor& s, std::vector<double>* out) {
  const bool ok = dispatch<kFloats>(s.dtype, [&](auto tag) { *out = widen_scales<typename decltype(tag)::type>(s); });
  if (!ok) return ctx.fail("scale type %s is not supported", graph::dtype_name(s.dtype));
  return Status::Ok();
}
Status zero_points_of(const KernelContext& ctx, const Tensor* z, DType want, int64_t count, std::vector<int64_t>* out) {
  if (z && z->dtype != want)
    return ctx.fail("zero point is %s, expected %s", graph::dtype_name(z->dtype), graph::dtype_name(want));
  const bool ok = dispatch<kInts>(subbyte::storage(want),
                                  [&](auto tag) { *out = widen_zero_points<typename decltype(tag)::type>(z, count); });
  if (!ok) return ctx.fail("zero point type %s is not supported", graph::dtype_name(want));
  return Status::Ok();
}

// float8 / float4e2m1 zero points as doubles (all zero when absent).
Status small_float_zero_points_of(const KernelContext& ctx, const Tensor* z, DType want, int64_t count, std::vector<double>* out) {
  out->assign(static_cast<size_t>(count), 0.0);
  if (!z) return Status::Ok();
  if (z->dtype != want)
    return ctx.fail("zero point is %s, expected %s", graph::dtype_name(z->dtype), graph::dtype_name(want));
  const uint8_t* p = z->as<const uint8_t>();
  for (size_t i = 0; i < out->size(); ++i) (*out)[i] = small_float_value(want, p[i]);
  return Status::Ok();
}

// ---- QuantizeLinear ----

enum class Precision { kFloat64, kFloat32, kFloat16, kBFloat16 };

int float_rank(DType t) {
  switch (t) {
    case DType::kFloat16: return 1;
    case DType::kBFloat16: return 1;
    case DType::kFloat32: return 2;
    case DType::kFloat64: return 3;
    default: return 4;  // integers: divide in double
  }
}
Precision precision_of(DType t) {
  switch (t) {
    case DType::kFloat32: return Precision::kFloat32;
    case DType::kFloat16: return Precision::kFloat16;
    case DType::kBFloat16: return Precision::kBFloat16;
    default: return Precision::kFloat64;
  }
}

template <Precision P>
inline double round_to(double v) {
  if constexpr (P == Precision::kFloat32) return static_cast<float>(v);
  else if constexpr (P == Precision::kFloat16) return openacl::half_to_float(openacl::float_to_half(static_cast<float>(v)));
  else if constexpr (P == Precision::kBFloat16) return openacl::bf16_to_float(openacl::float_to_bf16(static_cast<float>(v)));
  else return v;
}

constexpr double kBound = 1099511627776.0;          // 2^40: beyond every quantised range
constexpr double kRoundMagic = 6755399441055744.0;  // 1.5 * 2^52

// Saturates to [lo, hi]: Y's limits, or a sub-byte type's held in Y.
template <Precision P, class X, class Y>
void quantize_run(const X* x, const double* s, int64_t ss, const int64_t* z, Y* y, int64_t n, int64_t lo, int64_t hi) {
  for (int64_t i = 0; i < n; ++i) {
    double q = round_to<P>(static_cast<double>(load(x[i])) / s[i * ss]);
    // Bounded first (this order sends NaN to -kBound, so NaN saturates low as
    // the reference's rint-and-cast does); then adding and subtracting
    // 1.5 * 2^52 rounds half to even without a libm call per element, and the
    // saturation is integer min/max (no data-dependent branches).
    q = std::min(std::max(-kBound, q), kBound);
    const int64_t v = static_cast<int64_t>((q + kRoundMagic) - kRoundMagic) + z[i * ss];
    y[i] = static_cast<Y>(std::min(std::max(v, lo), hi));
  }
}

template <Precision P, class X, class Y>
void quantize_typed(const QuantLayout& l, const Tensor& x, const std::vector<double>& s, const std::vector<int64_t>& z,
                    Tensor& y) {
  const X* xp = x.as<X>();
  Y* yp = y.as<Y>();
  const bool sub = subbyte::is_int(y.dtype);
  const int64_t lo = sub ? subbyte::lowest(y.dtype) : std::numeric_limits<Y>::lowest();
  const int64_t hi = sub ? subbyte::highest(y.dtype) : std::numeric_limits<Y>::max();
  for_each_quant_run(l, x.elements(), [&](int64_t pos, int64_t si, int64_t ss, int64_t n) {
    quantize_run<P>(xp + pos, s.data() + si, ss, z.data() + si, yp + pos, n, lo, hi);
  });
}

// float8 / float4e2m1 output: the quotient is rounded to the division
// precision as for integers, the (float) zero point added, and the sum rounded
// once to the small type by `encode` (through round-to-odd float when the
// precision is double).
template <Precision P, class X, class Encode>
void quantize_small_float_typed(const QuantLayout& l, const Tensor& x, const std::vector<double>& s,
                                const std::vector<double>& z, Tensor& y, Encode encode) {
  const X* xp = x.as<X>();
  uint8_t* yp = y.as<uint8_t>();
  for_each_quant_run(l, x.elements(), [&](int64_t pos, int64_t si, int64_t ss, int64_t n) {
    const X* xr = xp + pos;
    const double* sr = s.data() + si;
    const double* zr = z.data() + si;
    uint8_t* yr = yp + pos;
    for (int64_t i = 0; i < n; ++i)
      yr[i] = encode(f8::narrow_to_float(round_to<P>(static_cast<double>(load(xr[i])) / sr[i * ss]) + zr[i * ss]));
  });
}

template <Precision P, class X>
bool quantize_small_float(const QuantLayout& l, const Tensor& x, const std::vector<double>& s,
                          const std::vector<double>& z, bool saturate, Tensor& y) {
  if (y.dtype == DType::kFloat4E2M1) {
    quantize_small_float_typed<P, X>(l, x, s, z, y, [](float v) { return subbyte::fp4_encode(v); });
    return true;
  }
  return f8::dispatch_format(y.dtype, [&](auto fmt) {
    constexpr f8::Format F = decltype(fmt)::value;
    if constexpr (F != f8::Format::kE8M0)
      quantize_small_float_typed<P, X>(l, x, s, z, y, [saturate](float v) { return f8::encode<F>(v, saturate); });
  });
}

Status quantize(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor* zp = ctx.has_input(2) && ctx.input(2).data ? &ctx.input(2) : nullptr;
  Tensor& y = ctx.output(0);
  const bool to_small_float = is_small_float_type(y.dtype);
  if (!is_int_quant_type(y.dtype) && !to_small_float)
    return ctx.fail("quantising to %s is not implemented", graph::dtype_name(y.dtype));
  QuantLayout l;
  OPENACL_RETURN_IF_ERROR(make_layout(ctx, x, scale, zp, &l));
  std::vector<double> s;
  std::vector<int64_t> z;
  std::vector<double> zf;
  OPENACL_RETURN_IF_ERROR(scales_of(ctx, scale, &s));
  if (to_small_float) OPENACL_RETURN_IF_ERROR(small_float_zero_points_of(ctx, zp, y.dtype, l.scale_count, &zf));
  else OPENACL_RETURN_IF_ERROR(zero_points_of(ctx, zp, y.dtype, l.scale_count, &z));
  DType p = float_rank(x.dtype) >= float_rank(scale.dtype) ? x.dtype : scale.dtype;
  if (x.dtype != scale.dtype && float_rank(x.dtype) == float_rank(scale.dtype)) p = DType::kFloat32;  // f16 vs bf16
  if (ctx.opset() >= 23) {
    const int64_t want = ctx.attrs().get_int("precision", 0);
    if (want != 0) {
      p = static_cast<DType>(want);
      if (!graph::dtype_is_float(p)) return ctx.fail("precision must be a float type, got %s", graph::dtype_name(p));
    }
  }
  bool typed_y = false;
  if (to_small_float) {
    const bool saturate = ctx.attrs().get_int("saturate", 1) != 0;
    const bool typed_x = dispatch<kFloats | kInts>(x.dtype, [&](auto tx) {
      using X = typename decltype(tx)::type;
      if constexpr (is_float_v<X> || std::is_same_v<X, int32_t>) {
        switch (precision_of(p)) {
          case Precision::kFloat32: typed_y = quantize_small_float<Precision::kFloat32, X>(l, x, s, zf, saturate, y); break;
          case Precision::kFloat16: typed_y = quantize_small_float<Precision::kFloat16, X>(l, x, s, zf, saturate, y); break;
          case Precision::kBFloat16: typed_y = quantize_small_float<Precision::kBFloat16, X>(l, x, s, zf, saturate, y); break;
          case Precision::kFloat64: typed_y = quantize_small_float<Precision::kFloat64, X>(l, x, s, zf, saturate, y); break;
        }
      }
    });
    if (!typed_x || !typed_y)
      return ctx.fail("quantising %s to %s is not supported", graph::dtype_name(x.dtype), graph::dtype_name(y.dtype));
    return Status::Ok();
  }
  const bool typed_x = dispatch<kFloats | kInts>(x.dtype, [&](auto tx) {
    using X = typename decltype(tx)::type;
    if constexpr (is_float_v<X> || std::is_same_v<X, int32_t>) {
      typed_y = dispatch<kInts>(subbyte::storage(y.dtype), [&](auto ty) {
        using Y = typename decltype(ty)::type;
        if constexpr (sizeof(Y) <= 4) {
          switch (precision_of(p)) {
            case Precision::kFloat32: quantize_typed<Precision::kFloat32, X, Y>(l, x, s, z, y); break;
            case Precision::kFloat16: quantize_typed<Precision::kFloat16, X, Y>(l, x, s, z, y); break;
            case Precision::kBFloat16: quantize_typed<Precision::kBFloat16, X, Y>(l, x, s, z, y); break;
            case Precision::kFloat64: quantize_typed<Precision::kFloat64, X, Y>(l, x, s, z, y); break;
          }
        }
      });
    }
  });
  if (!typed_x || !typed_y)
    return ctx.fail("quantising %s to %s is not supported", graph::dtype_name(x.dtype), graph::dtype_name(y.dtype));
  return Status::Ok();
}

std::string quantize_supports(const KernelInit& init) {
  const DType t = init.output(0).dtype;
  if (t == DType::kUndefined || is_int_quant_type(t) || is_small_float_type(t)) return "";
  return std::string("quantising to ") + graph::dtype_name(t) +
         " is not implemented (uint8/int8/uint16/int16/int32, int4/uint4/int2/uint2, float4e2m1 and the float8 types"
         " other than float8e8m0 only)";
}

// ---- DequantizeLinear ----

template <class X, class Y>
void dequantize_typed(const QuantLayout& l, const Tensor& x, const std::vector<double>& s,
                      const std::vector<int64_t>& z, Tensor& y) {
  const X* xp = x.as<X>();
  Y* yp = y.as<Y>();
  for_each_quant_run(l, x.elements(), [&](int64_t pos, int64_t si, int64_t ss, int64_t n) {
    const X* xr = xp + pos;
    const double* sr = s.data() + si;
    const int64_t* zr = z.data() + si;
    Y* yr = yp + pos;
    if (ss == 0) {
      const double sv = *sr;
      const int64_t zv = *zr;
      for (int64_t i = 0; i < n; ++i) yr[i] = store<Y>(static_cast<double>(static_cast<int64_t>(xr[i]) - zv) * sv);
    } else {
      for (int64_t i = 0; i < n; ++i) yr[i] = store<Y>(static_cast<double>(static_cast<int64_t>(xr[i]) - zr[i]) * sr[i]);
    }
  });
}

// float8 / float4e2m1 input: decoded exactly, then the same double
// arithmetic as integers.
template <class Y, class Decode>
void dequantize_small_float_typed(const QuantLayout& l, const Tensor& x, const std::vector<double>& s,
                                  const std::vector<double>& z, Tensor& y, Decode decode) {
  const uint8_t* xp = x.as<const uint8_t>();
  Y* yp = y.as<Y>();
  for_each_quant_run(l, x.elements(), [&](int64_t pos, int64_t si, int64_t ss, int64_t n) {
    const uint8_t* xr = xp + pos;
    const double* sr = s.data() + si;
    const double* zr = z.data() + si;
    Y* yr = yp + pos;
    for (int64_t i = 0; i < n; ++i)
      yr[i] = store<Y>((static_cast<double>(decode(xr[i])) - zr[i * ss]) * sr[i * ss]);
  });
}

Status dequantize(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  const Tensor* zp = ctx.has_input(2) && ctx.input(2).data ? &ctx.input(2) : nullptr;
  Tensor& y = ctx.output(0);
  const bool from_small_float = is_small_float_type(x.dtype);
  if (!is_int_quant_type(x.dtype) && !from_small_float)
    return ctx.fail("dequantising %s is not implemented", graph::dtype_name(x.dtype));
  QuantLayout l;
  OPENACL_RETURN_IF_ERROR(make_layout(ctx, x, scale, zp, &l));
  std::vector<double> s;
  std::vector<int64_t> z;
  OPENACL_RETURN_IF_ERROR(scales_of(ctx, scale, &s));
  if (from_small_float) {
    std::vector<double> zf;
    OPENACL_RETURN_IF_ERROR(small_float_zero_points_of(ctx, zp, x.dtype, l.scale_count, &zf));
    bool typed_y = false;
    if (x.dtype == DType::kFloat4E2M1) {
      typed_y = dispatch<kFloats>(y.dtype, [&](auto ty) {
        dequantize_small_float_typed<typename decltype(ty)::type>(l, x, s, zf, y, subbyte::fp4_decode);
      });
    } else {
      f8::dispatch_format(x.dtype, [&](auto fmt) {
        constexpr f8::Format F = decltype(fmt)::value;
        typed_y = dispatch<kFloats>(y.dtype, [&](auto ty) {
          dequantize_small_float_typed<typename decltype(ty)::type>(l, x, s, zf, y, f8::decode<F>);
        });
      });
    }
    if (!typed_y)
      return ctx.fail("dequantising %s to %s is not supported", graph::dtype_name(x.dtype), graph::dtype_name(y.dtype));
    return Status::Ok();
  }
  OPENACL_RETURN_IF_ERROR(zero_points_of(ctx, zp, x.dtype, l.scale_count, &z));
  bool typed_y = false;
  dispatch<kInts>(subbyte::storage(x.dtype), [&](auto tx) {
    using X = typename decltype(tx)::type;
    if constexpr (sizeof(X) <= 4) {
      typed_y = dispatch<kFloats>(y.dtype, [&](auto ty) { dequantize_typed<X, typename decltype(ty)::type>(l, x, s, z, y); });
    }
  });
  if (!typed_y)
    return ctx.fail("dequantising %s to %s is not supported", graph::dtype_name(x.dtype), graph::dtype_name(y.dtype));
  return Status::Ok();
}

std::string dequantize_supports(const KernelInit& init) {
  const DType t = init.input(0).dtype;
  if (t == DType::kUndefined || is_int_quant_type(t) || is_small_float_type(t)) return "";
  return std::string("dequantising ") + graph::dtype_name(t) +
         " is not implemented (uint8/int8/uint16/int16/int32, int4/uint4/int2/uint2, float4e2m1 and the float8 types"
         " other than float8e8m0 only)";
}

OPENACL_REGISTER_KERNEL(QuantizeLinear, "cpu")
    .types({DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64, DType::kInt32})
    .supports(quantize_supports)
    .run(quantize);
OPENACL_REGISTER_KERNEL(DequantizeLinear, "cpu").supports(dequantize_supports).run(dequantize);

}  // namespace
}  // namespace openacl::kernels::cpu
