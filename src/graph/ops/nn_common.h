// Small helpers shared by the tensor/NN op shape functions (nn_*.cpp): dim
// arithmetic that keeps unknowns unknown, constant-input readers, and output
// setters. Header-only and internal to src/graph/ops.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "base/fp16.h"
#include "graph/op_schema.h"

namespace openacl::graph::nn {

inline Shape unknown_dims(int64_t rank) { return Shape(static_cast<size_t>(rank < 0 ? 0 : rank)); }

// Ranks taken from a 1-D input's length (Reshape's shape, ...) beyond this are
// not believed: the output's rank is left unknown rather than allocated.
constexpr int64_t kMaxDerivedRank = 1024;

// `rank` unknown dims, or unknown rank when rank is unknown (< 0) or absurd.
inline std::optional<Shape> dims_of_rank(int64_t rank) {
  if (rank < 0 || rank > kMaxDerivedRank) return std::nullopt;
  return unknown_dims(rank);
}

// Dims of a rank-`r` input, or all unknown when its rank is unknown (or other).
inline Shape dims_or_unknown(const TensorType& t, int64_t r) {
  return t.has_rank() && t.rank() == r ? *t.shape : unknown_dims(r);
}

// a / k when a is known and divisible by k; unknown otherwise.
inline Dim dim_div(const Dim& a, int64_t k) {
  if (k <= 0 || !a.known() || a.value % k != 0) return Dim();
  return Dim(a.value / k);
}

// Sets output i (when the node has it) to dtype / shape; nullopt shape = unknown rank.
inline void set_out(ShapeContext& ctx, size_t i, DType dt, std::optional<Shape> shape) {
  if (i >= ctx.num_outputs()) return;
  ctx.output(i).dtype = dt;
  ctx.output(i).shape = std::move(shape);
}

// Product of dims: known if all are known; a single non-1 unknown dim
// multiplied by known 1s stays itself (keeps a symbol); otherwise unknown.
inline Dim dim_product(const Shape& s, size_t begin, size_t end) {
  int64_t n = 1;
  const Dim* only_unknown = nullptr;
  int unknowns = 0;
  for (size_t i = begin; i < end && i < s.size(); ++i) {
    if (s[i].known()) {
      if (s[i].value != 0 && n > INT64_MAX / s[i].value) return Dim();
      n *= s[i].value;
    } else {
      ++unknowns;
      only_unknown = &s[i];
    }
  }
  if (unknowns == 0) return Dim(n);
  if (n == 0) return Dim(0);
  if (unknowns == 1 && n == 1) return *only_unknown;
  return Dim();
}

// Overflow-checked arithmetic: false when the result does not fit in int64
// (hostile models carry huge dims; shape functions must stay UB-free).
inline bool mul_ok(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }
inline bool add_ok(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }

// a * k; unknown on overflow (callers that can fail check with mul_ok first).
inline Dim dim_mul(const Dim& a, int64_t k) {
  if (k == 1) return a;
  if (k == 0) return Dim(0);
  int64_t v;
  return a.known() && mul_ok(a.value, k, &v) ? Dim(v) : Dim();
}

inline Dim dim_add(const Dim& a, int64_t k) {
  if (k == 0) return a;
  int64_t v;
  return a.known() && add_ok(a.value, k, &v) ? Dim(v) : Dim();
}

// Merges two views of the same dim: a known value wins over an unknown one.
// False when both are known and differ.
inline bool merge_dim(const Dim& a, const Dim& b, Dim* out) {
  if (a.known() && b.known()) {
    if (a.value != b.value) return false;
    *out = a;
  } else if (a.known()) {
    *out = a;
  } else if (b.known()) {
    *out = b;
  } else {
    *out = (!a.symbol.empty()) ? a : b;
  }
  return true;
}

// ceil(a / b) for b > 0, without overflow.
inline int64_t ceil_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b > 0) ? q + 1 : q;
}

// Integer data of a constant input; nullopt when absent or not constant.
inline std::optional<std::vector<int64_t>> const_ints(const ShapeContext& ctx, size_t i) {
  const TensorData* t = ctx.has_input(i) ? ctx.constant(i) : nullptr;
  if (!t) return std::nullopt;
  return t->to_int64();
}

// Numeric data of a constant input as doubles (float and integer types).
inline std::optional<std::vector<double>> const_doubles(const ShapeContext& ctx, size_t i) {
  const TensorData* t = ctx.has_input(i) ? ctx.constant(i) : nullptr;
  if (!t) return std::nullopt;
  const int64_t n = t->elements();
  if (n < 0) return std::nullopt;
  std::vector<double> out(static_cast<size_t>(n));
  auto fits = [&](size_t bytes) { return static_cast<uint64_t>(n) <= t->bytes / bytes; };
  switch (t->dtype) {
    case DType::kFloat32:
      if (!fits(4)) return std::nullopt;
      for (int64_t k = 0; k < n; ++k) out[k] = t->as<float>()[k];
      return out;
    case DType::kFloat64:
      if (!fits(8)) return std::nullopt;
      for (int64_t k = 0; k < n; ++k) out[k] = t->as<double>()[k];
      return out;
    case DType::kFloat16:
      if (!fits(2)) return std::nullopt;
      for (int64_t k = 0; k < n; ++k) out[k] = half_to_float(t->as<uint16_t>()[k]);
      return out;
    case DType::kBFloat16:
      if (!fits(2)) return std::nullopt;
      for (int64_t k = 0; k < n; ++k) out[k] = bf16_to_float(t->as<uint16_t>()[k]);
      return out;
    default: {
      auto ints = t->to_int64();
      if (!ints) return std::nullopt;
      for (int64_t k = 0; k < n; ++k) out[k] = static_cast<double>((*ints)[k]);
      return out;
    }
  }
}

// Length of a 1-D input when its shape says so (constant or not); -1 if unknown.
inline int64_t known_length_1d(const ShapeContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return -1;
  if (const TensorData* t = ctx.constant(i)) return t->elements();
  const TensorType& tt = ctx.input(i);
  if (tt.has_rank() && tt.rank() == 1 && (*tt.shape)[0].known()) return (*tt.shape)[0].value;
  if (tt.has_rank() && tt.rank() == 0) return 1;
  return -1;
}

// An input counts as present only when given and not a known-empty tensor
// (ONNX exporters pass "" or an empty tensor for "not given").
inline bool input_present(const ShapeContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return false;
  return known_length_1d(ctx, i) != 0;
}

// Attribute `name` as ints, or `def` when absent.
inline std::vector<int64_t> ints_or(const ShapeContext& ctx, const char* name, std::vector<int64_t> def) {
  auto v = ctx.attrs().get_ints(name);
  return v ? *v : def;
}

// Index / shape inputs must be int32 or int64 when their dtype is known.
inline Status require_index_dtype(const ShapeContext& ctx, size_t i, const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  const DType dt = ctx.input(i).dtype;
  if (dt == DType::kUndefined || dt == DType::kInt64 || dt == DType::kInt32) return Status::Ok();
  return ctx.fail("%s (input %zu) must be int32 or int64, not %s", what, i, dtype_name(dt));
}

inline std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

inline long long ll(int64_t v) { return static_cast<long long>(v); }


// Output size of one spatial axis of a sliding window (Conv, pooling): kernel
// k, stride s, dilation d, pads pb/pe, ONNX auto_pad and ceil_mode semantics.
// An unknown input size gives an unknown output unless the window provably
// keeps the size (stride 1 and "same" padding), in which case the dim (and its
// symbol) is kept.
inline Status window_out(const ShapeContext& ctx, const Dim& in, int64_t k, int64_t s, int64_t d, int64_t pb,
                         int64_t pe, const std::string& auto_pad, bool ceil_mode, size_t axis, Dim* out) {
  if (k < 1) return ctx.fail("kernel size %lld on spatial axis %zu must be >= 1", ll(k), axis);
  if (s < 1) return ctx.fail("stride %lld on spatial axis %zu must be >= 1", ll(s), axis);
  if (d < 1) return ctx.fail("dilation %lld on spatial axis %zu must be >= 1", ll(d), axis);
  if (pb < 0 || pe < 0) return ctx.fail("pads (%lld, %lld) on spatial axis %zu must be >= 0", ll(pb), ll(pe), axis);
  int64_t eff;
  if (!mul_ok(k - 1, d, &eff) || !add_ok(eff, 1, &eff))
    return ctx.fail("kernel %lld with dilation %lld on spatial axis %zu overflows", ll(k), ll(d), axis);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (in.known()) *out = Dim(ceil_div(in.value, s));
    else *out = s == 1 ? in : Dim();
    return Status::Ok();
  }
  if (auto_pad == "VALID") pb = pe = 0;
  else if (auto_pad != "NOTSET" && !auto_pad.empty())
    return ctx.fail("auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad.c_str());
  if (!in.known()) {
    *out = (s == 1 && pb == eff - 1 - pe) ? in : Dim();
    return Status::Ok();
  }
  int64_t span;
  if (!add_ok(in.value, pb, &span) || !add_ok(span, pe, &span))
    return ctx.fail("pads (%lld, %lld) on spatial axis %zu overflow", ll(pb), ll(pe), axis);
  span -= eff;
  if (span < 0)
    return ctx.fail("spatial axis %zu: input size %lld with pads (%lld, %lld) is smaller than the %s window %lld",
                    axis, ll(in.value), ll(pb), ll(pe), d > 1 ? "dilated" : "kernel", ll(eff));
  int64_t o = (ceil_mode ? ceil_div(span, s) : span / s) + 1;
  // The last window must start inside the input or the leading padding.
  if (ceil_mode && static_cast<__int128>(o - 1) * s >= static_cast<__int128>(in.value) + pb) --o;
  *out = Dim(o);
  return Status::Ok();
}

}  // namespace openacl::graph::nn
