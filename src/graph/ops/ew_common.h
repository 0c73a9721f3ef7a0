// Helpers shared by the elementwise / reduction / normalisation op files
// (ew_*.cpp). Small inline functions over ShapeContext; none keeps state.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/op_schema.h"

namespace openacl::graph::ew {

// The node's opset; 0 (not given, e.g. aclopInferShape on a bare node) means
// "the newest rules".
inline int opset_of(const ShapeContext& ctx) { return ctx.opset() > 0 ? ctx.opset() : INT_MAX; }

// Fails when inputs a and b both have a known dtype and the two differ
// (ONNX type constraint "T" shared by both).
inline Status check_same_dtype(const ShapeContext& ctx, size_t a, size_t b) {
  if (!ctx.has_input(a) || !ctx.has_input(b)) return Status::Ok();
  const DType ta = ctx.input(a).dtype, tb = ctx.input(b).dtype;
  if (ta != DType::kUndefined && tb != DType::kUndefined && ta != tb)
    return ctx.fail("input %zu is %s but input %zu is %s; they must have the same element type", a, dtype_name(ta), b,
                    dtype_name(tb));
  return Status::Ok();
}

// Fails when input i has a known dtype that is not `want`.
inline Status check_dtype(const ShapeContext& ctx, size_t i, DType want, const char* what) {
  if (!ctx.has_input(i)) return Status::Ok();
  const DType t = ctx.input(i).dtype;
  if (t != DType::kUndefined && t != want)
    return ctx.fail("%s (input %zu) must be %s, got %s", what, i, dtype_name(want), dtype_name(t));
  return Status::Ok();
}

// Numpy broadcasting over inputs [first, end) (omitted inputs skipped). An
// input of unknown rank makes the result's rank unknown. Definite mismatches fail.
inline Status broadcast_inputs(ShapeContext& ctx, size_t first, size_t end, std::optional<Shape>* out) {
  Shape acc;
  bool rank_known = true;
  for (size_t i = first; i < end && i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const TensorType& t = ctx.input(i);
    if (!t.has_rank()) {
      rank_known = false;
      continue;
    }
    Shape next;
    Status st = broadcast_shapes(acc, *t.shape, &next);
    if (!st.ok()) return ctx.fail("%s", st.message().c_str());
    acc = std::move(next);
  }
  if (rank_known) *out = std::move(acc);
  else out->reset();
  return Status::Ok();
}

// Output i gets input j's dtype and shape.
inline void copy_input(ShapeContext& ctx, size_t out, size_t in) {
  if (out < ctx.num_outputs()) ctx.output(out) = ctx.input(in);
}

inline Status same_as_input0(ShapeContext& ctx) {
  copy_input(ctx, 0, 0);
  return Status::Ok();
}

// Integer contents of constant input i (nullopt when not constant / not integer).
inline std::optional<std::vector<int64_t>> const_ints(const ShapeContext& ctx, size_t i) {
  const TensorData* c = ctx.constant(i);
  if (!c) return std::nullopt;
  return c->to_int64();
}

// Normalises `axis` against `rank`, failing with a message naming `what`.
inline Status axis_in_range(const ShapeContext& ctx, const char* what, int64_t axis, int64_t rank, int64_t* out) {
  if (!normalize_axis(axis, rank, out))
    return ctx.fail("%s %lld is out of range for rank %lld (valid: [%lld, %lld])", what, static_cast<long long>(axis),
                    static_cast<long long>(rank), static_cast<long long>(-rank), static_cast<long long>(rank - 1));
  return Status::Ok();
}

}  // namespace openacl::graph::ew
