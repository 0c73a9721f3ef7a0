// The shape / data-movement part of the Ascend op catalogue (Transpose,
// Reshape, Squeeze, Flatten, Slice, StridedSlice*, Concat*, Pack, Unpack,
// Split*, ReverseV2, Gather*, ScatterNd, Pad*, Tile, Fill, BroadcastTo, Expand,
// OneHot, Range, Shape, Size, Rank) and the ops whose output shape depends on
// the data (NonZero, Where, Unique, UniqueWithCounts, MaskedSelect: their
// bounds() give aclopInferShape a finite range), each built from the engine's
// ONNX ops.
//
// Ascend ops mirror TensorFlow's: shape-like operands (perm, axis, offsets,
// paddings, multiples, ...) are *inputs* of the "V1/V2" ops and *attributes*
// of the "D" variants. ONNX takes some of them only as attributes (Transpose's
// perm, Gather's axis, Concat's axis), so those inputs must be compile-time
// constants (aclSetTensorConst / acl.set_tensor_const); the message says so
// and names the "D" variant. Where ONNX takes the operand as an input (Reshape's
// shape, Tile's repeats, Pad's pads, Expand's shape, Slice's starts/ends) a
// runtime tensor works too, and the output dims are then -1 until execution.
//
// Checks happen here when the values are known (constants, attributes):
// out-of-range axes, wrong lengths, bad paddings give 100021 (input) or 100023
// (attribute) with the op, the value and the fix. Everything else (index
// values inside the data, runtime shapes) is checked by the kernels.
#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "op/catalog.h"

namespace openacl::op {
namespace {

using graph::Value;

// Element types the movement kernels take (kernels/cpu movable_types), limited
// to those aclDataType can name.
const std::vector<DType>& movable() {
  static const std::vector<DType> t = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                                       DType::kInt8,    DType::kInt16,   DType::kInt32,    DType::kInt64,
                                       DType::kUInt8,   DType::kUInt16,  DType::kUInt32,   DType::kUInt64,
                                       DType::kBool};
  return t;
}
// Numeric types (no bool): ScatterNd's add, Range, OneHot's values.
const std::vector<DType>& numeric() {
  static const std::vector<DType> t = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                                       DType::kInt8,    DType::kInt16,   DType::kInt32,    DType::kInt64,
                                       DType::kUInt8,   DType::kUInt16,  DType::kUInt32,   DType::kUInt64};
  return t;
}

graph::AttributeMap onnx_attrs(std::initializer_list<std::pair<const char*, graph::Attribute>> list) {
  graph::AttributeMap m;
  for (const auto& [k, v] : list) m.set(k, v);
  return m;
}

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}
std::string lists_str(const std::vector<std::vector<int64_t>>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + ints_str(v[i]);
  return s + "]";
}
long long ll(int64_t v) { return static_cast<long long>(v); }

// Rank of input i; -1 when unknown (or the input is omitted).
int64_t rank_of(const BuildContext& c, size_t i) {
  if (!c.input(i)) return -1;
  const TensorSpec& s = c.input_spec(i);
  return s.unknown_rank() ? -1 : static_cast<int64_t>(s.dims.size());
}
// Dim a of input i; -1 when unknown.
int64_t dim_of(const BuildContext& c, size_t i, int64_t a) {
  const TensorSpec& s = c.input_spec(i);
  if (s.unknown_rank() || a < 0 || a >= static_cast<int64_t>(s.dims.size())) return -1;
  return s.dims[a];
}
bool static_input(const BuildContext& c, size_t i) { return c.input(i) && c.input_spec(i).static_shape(); }

// Normalises axis into [0, r) (or [0, r] with `extra`); false when out of range.
bool norm_axis(int64_t* axis, int64_t r, bool extra = false) {
  const int64_t n = r + (extra ? 1 : 0);
  if (*axis < -n || *axis >= n) return false;
  if (*axis < 0) *axis += n;
  return true;
}

bool is_index(DType t) { return t == DType::kInt32 || t == DType::kInt64; }

// Integer values of a constant input i (aclSetTensorConst); nullopt when the
// input is not a constant.
std::optional<std::vector<int64_t>> const_ints(const BuildContext& c, size_t i) {
  const Value* v = c.input(i);
  if (!v || !v->constant) return std::nullopt;
  return v->constant->to_int64();
}

// The values of an integer input that must be a compile-time constant. `alt`
// names the attribute variant to suggest ("TransposeD" ...), or nullptr.
Status need_const(const BuildContext& c, size_t i, const char* what, const char* alt, std::vector<int64_t>* out) {
  if (!c.input(i)) return c.bad_input("the %s input (input %zu) is required", what, i);
  const DType dt = c.input_spec(i).dtype;
  if (!is_index(dt))
    return c.bad_input("%s (input %zu) must be int32 or int64, not %s", what, i, graph::dtype_name(dt));
  auto v = const_ints(c, i);
  if (!v) {
    return c.bad_input(
        "%s (input %zu) must be a compile-time constant here: give its value with aclSetTensorConst "
        "(acl.set_tensor_const)%s%s%s",
        what, i, alt ? ", or use " : "", alt ? alt : "", alt ? " with the attribute" : "");
  }
  *out = std::move(*v);
  return Status::Ok();
}

// Input i as an int64 value (ONNX shape-like inputs are int64).
Status int64_input(BuildContext& c, size_t i, const char* what, Value** out) {
  if (!c.input(i)) return c.bad_input("the %s input (input %zu) is required", what, i);
  const DType dt = c.input_spec(i).dtype;
  if (!is_index(dt))
    return c.bad_input("%s (input %zu) must be int32 or int64, not %s", what, i, graph::dtype_name(dt));
  if (dt == DType::kInt64) {
    *out = c.input(i);
  } else if (auto v = const_ints(c, i)) {
    // A constant stays a constant (not a Cast node), so shape inference without
    // folding (aclopInferShape) still sees its values.
    *out = c.input_spec(i).dims.empty() && v->size() == 1 ? c.const_i64_scalar((*v)[0]) : c.const_i64(*v);
  } else {
    *out = c.add1("Cast", {c.input(i)}, onnx_attrs({{"to", onnx_int(static_cast<int>(DType::kInt64))}}));
  }
  return Status::Ok();
}

Value* cast_to(BuildContext& c, Value* v, DType to) {
  return c.add1("Cast", {v}, onnx_attrs({{"to", onnx_int(static_cast<int64_t>(to))}}));
}

// A single-element input reshaped to a scalar (Ascend passes scalars as [] or [1]).
Status scalar_input(BuildContext& c, size_t i, const char* what, Value** out) {
  if (!c.input(i)) return c.bad_input("the %s input (input %zu) is required", what, i);
  const TensorSpec& s = c.input_spec(i);
  const int64_t n = s.elements();
  if (n >= 0 && n != 1) return c.bad_input("%s (input %zu) must hold one value; it is %s", what, i, s.str().c_str());
  if (s.dims.empty()) {
    *out = c.input(i);
  } else if (const Value* v = c.input(i); v->constant) {
    // The same bytes as a 0-d constant (no Reshape node for shape inference to see through).
    Value* k = c.graph().add_value("");
    k->constant = graph::TensorData::copy_of(s.dtype, {}, v->constant->data, v->constant->bytes);
    k->type.dtype = s.dtype;
    k->type.shape = graph::Shape{};
    *out = k;
  } else {
    *out = c.add1("Reshape", {c.input(i), c.const_i64({})});
  }
  return Status::Ok();
}

// Broadcast dims of two static shapes; false when they do not broadcast.
bool broadcast_dims(const std::vector<int64_t>& a, const std::vector<int64_t>& b, std::vector<int64_t>* out) {
  const size_t n = std::max(a.size(), b.size());
  out->assign(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

// Refuses an output whose byte size does not fit in int64. Ops whose inputs
// are all constants are evaluated while compiling, and a wrapped size there
// would be taken for a small one; a size that fits but is too large for memory
// gets the allocator's own error later.
Status check_size(const BuildContext& c, const std::vector<int64_t>& dims, DType dt) {
  __int128 n = std::max<size_t>(graph::dtype_bytes(dt), 1);
  for (int64_t d : dims) {
    if (d < 0) return Status::Ok();  // decided at execution
    n *= d;
    if (n > INT64_MAX)
      return c.bad_input("the output would be %s[%s], more bytes than can be addressed", graph::dtype_name(dt),
                         ints_str(dims).substr(1, ints_str(dims).size() - 2).c_str());
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- Transpose

Status build_transpose(BuildContext& c, std::vector<int64_t> perm, bool from_attr) {
  const int64_t r = rank_of(c, 0);
  auto bad = [&](const char* why) {
    return from_attr ? c.bad_attr("perm %s %s for x %s", ints_str(perm).c_str(), why, c.input_spec(0).str().c_str())
                     : c.bad_input("perm %s %s for x %s", ints_str(perm).c_str(), why, c.input_spec(0).str().c_str());
  };
  if (r >= 0) {
    if (static_cast<int64_t>(perm.size()) != r) return bad("must list every axis once (its length must be the rank)");
    std::vector<bool> seen(r, false);
    for (int64_t& p : perm) {
      if (!norm_axis(&p, r)) return bad("has an axis out of range");
      if (seen[p]) return bad("repeats an axis");
      seen[p] = true;
    }
  }
  c.set_output(0, c.add1("Transpose", {c.input(0)}, onnx_attrs({{"perm", onnx_ints(perm)}})));
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(Transpose)
    .summary("Permutes the dimensions of x by perm (a constant input)")
    .input("x").input("perm")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> perm;
      OPENACL_RETURN_IF_ERROR(need_const(c, 1, "perm", "TransposeD", &perm));
      return build_transpose(c, perm, false);
    });

OPENACL_REGISTER_ASCEND_OP(TransposeD)
    .summary("Permutes the dimensions of x by the perm attribute")
    .input("x")
    .output("y")
    .required_attr("perm", AttrValue::Kind::kListInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status { return build_transpose(c, c.get_ints("perm"), true); });

// ---------------------------------------------------------------- Reshape family

// Caffe-style Reshape: dims [start, end) of x are replaced by `shape`, whose 0
// entries copy the input dim at the same position and one -1 is inferred.
Status build_reshape(BuildContext& c) {
  const int64_t r = rank_of(c, 0);
  int64_t axis = c.get_int("axis"), num_axes = c.get_int("num_axes");
  const bool whole = axis == 0 && num_axes == -1;
  if (num_axes < -1) return c.bad_attr("num_axes %lld must be >= 0, or -1 for all axes from axis", ll(num_axes));
  auto shape = const_ints(c, 1);
  if (shape) {
    int infer = 0;
    for (int64_t d : *shape) {
      if (d < -1) return c.bad_input("shape %s has a negative dim other than -1", ints_str(*shape).c_str());
      infer += d == -1;
    }
    if (infer > 1) return c.bad_input("shape %s may infer (-1) at most one dim", ints_str(*shape).c_str());
  }
  if (r >= 0) {
    const int64_t start = axis >= 0 ? axis : r + axis + 1;
    if (start < 0 || start > r)
      return c.bad_attr("axis %lld is out of range for x %s", ll(axis), c.input_spec(0).str().c_str());
    const int64_t end = num_axes == -1 ? r : start + num_axes;
    if (end > r)
      return c.bad_attr("axis %lld + num_axes %lld run past the rank of x %s", ll(axis), ll(num_axes),
                        c.input_spec(0).str().c_str());
    if (shape && static_input(c, 0)) {
      // Everything known: the exact output shape, checked, and no ambiguity about 0.
      const std::vector<int64_t>& xd = c.input_spec(0).dims;
      std::vector<int64_t> out(xd.begin(), xd.begin() + start);
      int64_t known = 1, infer_at = -1;
      for (size_t i = 0; i < shape->size(); ++i) {
        int64_t d = (*shape)[i];
        if (d == 0) {
          const int64_t src = start + static_cast<int64_t>(i);
          if (src >= r)
            return c.bad_input("shape %s copies (0) dim %lld, past the rank of x %s", ints_str(*shape).c_str(),
                               ll(src), c.input_spec(0).str().c_str());
          d = xd[src];
        }
        if (d == -1) infer_at = static_cast<int64_t>(out.size());
        else known *= d;
        out.push_back(d);
      }
      out.insert(out.end(), xd.begin() + end, xd.end());
      for (int64_t a = 0; a < r; ++a)
        if (a < start || a >= end) known *= xd[a];
      const int64_t total = c.input_spec(0).elements();
      if (infer_at >= 0) {
        if (known == 0 || total % known != 0)
          return c.bad_input("shape %s cannot take the %lld elements of x %s", ints_str(*shape).c_str(), ll(total),
                             c.input_spec(0).str().c_str());
        out[infer_at] = total / known;
      } else if (known != total) {
        return c.bad_input("shape %s gives %lld elements; x %s has %lld", ints_str(*shape).c_str(), ll(known),
                           c.input_spec(0).str().c_str(), ll(total));
      }
      c.set_output(0, c.add1("Reshape", {c.input(0), c.const_i64(out)}, onnx_attrs({{"allowzero", onnx_int(1)}})));
      return Status::Ok();
    }
    if (!whole) {
      // Runtime dims: the full target is Shape(x)[:start] ++ shape ++ Shape(x)[end:].
      Value* s64 = nullptr;
      OPENACL_RETURN_IF_ERROR(int64_input(c, 1, "shape", &s64));
      Value* xs = c.add1("Shape", {c.input(0)});
      std::vector<Value*> parts;
      if (start > 0) parts.push_back(c.add1("Slice", {xs, c.const_i64({0}), c.const_i64({start})}));
      parts.push_back(s64);
      if (end < r) parts.push_back(c.add1("Slice", {xs, c.const_i64({end}), c.const_i64({INT64_MAX})}));
      Value* target = parts.size() == 1 ? parts[0] : c.add1("Concat", parts, onnx_attrs({{"axis", onnx_int(0)}}));
      c.set_output(0, c.add1("Reshape", {c.input(0), target}));
      return Status::Ok();
    }
  } else if (!whole) {
    return c.bad_input("x %s has an unknown rank; Reshape with axis/num_axes needs it", c.input_spec(0).str().c_str());
  }
  Value* s64 = nullptr;
  OPENACL_RETURN_IF_ERROR(int64_input(c, 1, "shape", &s64));
  c.set_output(0, c.add1("Reshape", {c.input(0), s64}));
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(Reshape)
    .summary("Reshapes x to shape (0 copies the input dim, -1 is inferred); axis/num_axes reshape a sub-range")
    .input("x").input("shape")
    .output("y")
    .attr_int("axis", 0).attr_int("num_axes", -1)
    .dtypes(movable())
    .build(build_reshape);

Status build_unsqueeze(BuildContext& c, std::vector<int64_t> axes, bool from_attr) {
  const int64_t r = rank_of(c, 0);
  if (axes.empty()) {
    c.set_output(0, c.add1("Identity", {c.input(0)}));
    return Status::Ok();
  }
  if (r >= 0) {
    const int64_t out_r = r + static_cast<int64_t>(axes.size());
    std::vector<bool> seen(out_r, false);
    for (int64_t& a : axes) {
      const int64_t orig = a;
      if (a < -out_r || a >= out_r || seen[a < 0 ? a + out_r : a]) {
        const std::string msg = "axis " + std::to_string(orig) + " is out of range [" + std::to_string(-out_r) + ", " +
                                std::to_string(out_r - 1) + "] or repeated for x " + c.input_spec(0).str();
        return from_attr ? c.bad_attr("%s", msg.c_str()) : c.bad_input("%s", msg.c_str());
      }
      if (a < 0) a += out_r;
      seen[a] = true;
    }
  }
  c.set_output(0, c.add1("Unsqueeze", {c.input(0), c.const_i64(axes)}));
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(ExpandDims)
    .summary("Inserts a dimension of size 1 at axis (a constant input, in [-rank-1, rank])")
    .input("x").input("axis")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> axis;
      OPENACL_RETURN_IF_ERROR(need_const(c, 1, "axis", "Unsqueeze", &axis));
      if (axis.size() != 1) return c.bad_input("axis must hold one value, not %s", ints_str(axis).c_str());
      return build_unsqueeze(c, axis, false);
    });

OPENACL_REGISTER_ASCEND_OP(Unsqueeze)
    .summary("Inserts dimensions of size 1 at the axes attribute (positions in the output)")
    .input("x")
    .output("y")
    .attr_ints("axes", {})
    .dtypes(movable())
    .build([](BuildContext& c) -> Status { return build_unsqueeze(c, c.get_ints("axes"), true); });

OPENACL_REGISTER_ASCEND_OP(Squeeze)
    .summary("Removes the listed dimensions of size 1 (axis empty: every dimension of size 1)")
    .input("x")
    .output("y")
    .attr_ints("axis", {})
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> axes = c.get_ints("axis");
      const int64_t r = rank_of(c, 0);
      if (axes.empty()) {
        if (r >= 0 && !c.input_spec(0).static_shape())
          return c.bad_input("x %s has unknown dims; Squeeze without axis needs them (the dims of size 1 decide the "
                             "output rank)",
                             c.input_spec(0).str().c_str());
        c.set_output(0, c.add1("Squeeze", {c.input(0)}));
        return Status::Ok();
      }
      if (r >= 0) {
        std::vector<bool> seen(r, false);
        for (int64_t& a : axes) {
          const int64_t orig = a;
          if (!norm_axis(&a, r))
            return c.bad_attr("axis %lld is out of range [%lld, %lld] for x %s", ll(orig), ll(-r), ll(r - 1),
                              c.input_spec(0).str().c_str());
          if (seen[a]) return c.bad_attr("axis %s repeats axis %lld", ints_str(c.get_ints("axis")).c_str(), ll(a));
          seen[a] = true;
          const int64_t d = dim_of(c, 0, a);
          if (d >= 0 && d != 1)
            return c.bad_attr("cannot squeeze axis %lld of x %s: its size is %lld, not 1", ll(orig),
                              c.input_spec(0).str().c_str(), ll(d));
        }
      }
      c.set_output(0, c.add1("Squeeze", {c.input(0), c.const_i64(axes)}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Flatten)
    .summary("Flattens x to 2-D: [prod(dims before axis), prod(dims from axis)]")
    .input("x")
    .output("y")
    .attr_int("axis", 1)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      int64_t axis = c.get_int("axis");
      const int64_t r = rank_of(c, 0);
      if (r >= 0 && (axis < -r || axis > r))
        return c.bad_attr("axis %lld is out of range [%lld, %lld] for x %s", ll(axis), ll(-r), ll(r),
                          c.input_spec(0).str().c_str());
      c.set_output(0, c.add1("Flatten", {c.input(0)}, onnx_attrs({{"axis", onnx_int(axis)}})));
      return Status::Ok();
    });

// FlattenV2 (torch.flatten): dims [axis, end_axis] become one.
OPENACL_REGISTER_ASCEND_OP(FlattenV2)
    .summary("Merges dims axis..end_axis of x into one (torch.flatten)")
    .input("x")
    .output("y")
    .attr_int("axis", 1).attr_int("end_axis", -1)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      if (!static_input(c, 0)) return c.bad_input("x %s needs known dims", c.input_spec(0).str().c_str());
      const std::vector<int64_t>& xd = c.input_spec(0).dims;
      const int64_t r = static_cast<int64_t>(xd.size());
      int64_t a = c.get_int("axis"), e = c.get_int("end_axis");
      const int64_t rr = std::max<int64_t>(r, 1);  // a scalar flattens as a 1-D tensor
      if (!norm_axis(&a, rr) || !norm_axis(&e, rr) || a > e)
        return c.bad_attr("axis %lld and end_axis %lld must name dims first..last of x %s", ll(c.get_int("axis")),
                          ll(c.get_int("end_axis")), c.input_spec(0).str().c_str());
      std::vector<int64_t> out;
      if (r == 0) {
        out = {1};
      } else {
        out.assign(xd.begin(), xd.begin() + a);
        int64_t m = 1;
        for (int64_t i = a; i <= e; ++i) m *= xd[i];
        out.push_back(m);
        out.insert(out.end(), xd.begin() + e + 1, xd.end());
      }
      c.set_output(0, c.add1("Reshape", {c.input(0), c.const_i64(out)}, onnx_attrs({{"allowzero", onnx_int(1)}})));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Identity)
    .summary("Copies x to y")
    .input("x")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("Identity", {c.input(0)}));
      return Status::Ok();
    });

// ---------------------------------------------------------------- Slice

// TF Slice: y = x[offsets[i] : offsets[i] + size[i]] per dim, size -1 = to the end.
Status build_slice(BuildContext& c, const std::vector<int64_t>& offsets, const std::vector<int64_t>& size, bool attr) {
  auto bad = [&](const std::string& m) { return attr ? c.bad_attr("%s", m.c_str()) : c.bad_input("%s", m.c_str()); };
  const int64_t r = rank_of(c, 0);
  const std::string xs = c.input_spec(0).str();
  if (offsets.size() != size.size())
    return bad("offsets " + ints_str(offsets) + " and size " + ints_str(size) + " must have the same length");
  if (r >= 0 && static_cast<int64_t>(offsets.size()) != r)
    return bad("offsets " + ints_str(offsets) + " and size " + ints_str(size) + " must have one entry per dim of x " +
               xs);
  std::vector<int64_t> starts, ends, axes;
  for (size_t i = 0; i < offsets.size(); ++i) {
    const int64_t b = offsets[i], s = size[i];
    const int64_t d = dim_of(c, 0, static_cast<int64_t>(i));
    if (b < 0) return bad("offsets[" + std::to_string(i) + "] = " + std::to_string(b) + " is negative");
    if (s < -1)
      return bad("size[" + std::to_string(i) + "] = " + std::to_string(s) + " must be >= 0, or -1 for the rest");
    if (d >= 0) {
      if (b > d || (s >= 0 && s > d - b))
        return bad("offsets[" + std::to_string(i) + "] = " + std::to_string(b) + " with size[" + std::to_string(i) +
                   "] = " + std::to_string(s) + " runs past dim " + std::to_string(i) + " (" + std::to_string(d) +
                   ") of x " + xs);
    }
    starts.push_back(b);
    ends.push_back(s == -1 ? INT64_MAX : b + s);
    axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.empty()) {
    c.set_output(0, c.add1("Identity", {c.input(0)}));
    return Status::Ok();
  }
  c.set_output(0, c.add1("Slice", {c.input(0), c.const_i64(starts), c.const_i64(ends), c.const_i64(axes)}));
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(Slice)
    .summary("Extracts x[offsets : offsets + size] (size -1: to the end of the dim)")
    .input("x").input("offsets").input("size")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      auto off = const_ints(c, 1), size = const_ints(c, 2);
      if (off && size) return build_slice(c, *off, *size, false);
      // Runtime offsets/size: ends = offsets + size, or the end of the dim for size -1.
      Value *o64 = nullptr, *s64 = nullptr;
      OPENACL_RETURN_IF_ERROR(int64_input(c, 1, "offsets", &o64));
      OPENACL_RETURN_IF_ERROR(int64_input(c, 2, "size", &s64));
      Value* to_end = c.add1("Equal", {s64, c.const_i64_scalar(-1)});
      Value* ends = c.add1("Where", {to_end, c.const_i64_scalar(INT64_MAX), c.add1("Add", {o64, s64})});
      c.set_output(0, c.add1("Slice", {c.input(0), o64, ends}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(SliceD)
    .summary("Extracts x[offsets : offsets + size] with offsets and size as attributes")
    .input("x")
    .output("y")
    .required_attr("offsets", AttrValue::Kind::kListInt)
    .required_attr("size", AttrValue::Kind::kListInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status { return build_slice(c, c.get_ints("offsets"), c.get_ints("size"), true); });

// ---------------------------------------------------------------- StridedSlice

struct StridedSpec {
  std::vector<int64_t> begin, end, strides;
  int64_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
};

// TensorFlow's StridedSlice: the sparse spec (with ellipsis and new axes) is
// expanded to one (begin, end, stride) per dim of x; the dense slice is an ONNX
// Slice, shrunk dims are squeezed and new axes unsqueezed after it.
Status build_strided_slice(BuildContext& c, const StridedSpec& s, bool attr) {
  auto bad = [&](const std::string& m) { return attr ? c.bad_attr("%s", m.c_str()) : c.bad_input("%s", m.c_str()); };
  const int64_t r = rank_of(c, 0);
  const std::string xs = c.input_spec(0).str();
  if (r < 0) return c.bad_input("x %s has an unknown rank; StridedSlice needs it", xs.c_str());
  const size_t n = s.begin.size();
  if (s.end.size() != n || s.strides.size() != n)
    return bad("begin " + ints_str(s.begin) + ", end " + ints_str(s.end) + " and strides " + ints_str(s.strides) +
               " must have the same length");
  if (n > 62) return bad("the slice spec has " + std::to_string(n) + " entries; at most 62 are supported");
  for (int64_t m : {s.begin_mask, s.end_mask, s.ellipsis_mask, s.new_axis_mask, s.shrink_axis_mask})
    if (m < 0) return c.bad_attr("masks must be non-negative bit fields; got %lld", ll(m));
  const uint64_t valid = (uint64_t{1} << n) - 1;
  const uint64_t ell = static_cast<uint64_t>(s.ellipsis_mask) & valid;
  if (std::popcount(ell) > 1) return c.bad_attr("ellipsis_mask %lld has more than one bit set", ll(s.ellipsis_mask));
  auto bit = [](int64_t mask, size_t i) { return ((static_cast<uint64_t>(mask) >> i) & 1) != 0; };

  // Sparse -> dense. `final_dims` lists, per output dim of the sparse walk, the
  // dense dim it comes from, kNew for an inserted axis or kShrink for a removed one.
  constexpr int64_t kNew = -1, kShrink = -2;
  struct Dense {
    int64_t begin, end, stride;
    bool begin_masked, end_masked, shrink;
  };
  std::vector<Dense> dense;
  std::vector<int64_t> final_dims;
  const bool implicit_ellipsis = ell == 0;
  const size_t sparse_n = n + (implicit_ellipsis ? 1 : 0);
  int64_t new_after_ellipsis = 0;
  {
    bool after = false;
    for (size_t i = 0; i < n; ++i) {
      if (bit(s.ellipsis_mask, i)) after = true;
      else if (after && bit(s.new_axis_mask, i)) ++new_after_ellipsis;
    }
  }
  for (size_t i = 0; i < sparse_n; ++i) {
    if (i == n || bit(s.ellipsis_mask, i)) {
      const int64_t next = std::min<int64_t>(r - static_cast<int64_t>(sparse_n - i) + 1 + new_after_ellipsis, r);
      while (static_cast<int64_t>(dense.size()) < next) {
        final_dims.push_back(static_cast<int64_t>(dense.size()));
        dense.push_back({0, 0, 1, true, true, false});
      }
    } else if (bit(s.new_axis_mask, i)) {
      final_dims.push_back(kNew);
    } else {
      if (static_cast<int64_t>(dense.size()) >= r)
        return bad("the slice spec (begin " + ints_str(s.begin) + ") indexes more dims than x " + xs + " has");
      const bool shrink = bit(s.shrink_axis_mask, i);
      final_dims.push_back(shrink ? kShrink : static_cast<int64_t>(dense.size()));
      dense.push_back({s.begin[i], s.end[i], s.strides[i], bit(s.begin_mask, i), bit(s.end_mask, i), shrink});
    }
  }
  if (static_cast<int64_t>(dense.size()) != r)
    return bad("the slice spec covers " + std::to_string(dense.size()) + " dims of x " + xs);

  std::vector<int64_t> starts, ends, axes, steps, squeeze;
  for (int64_t a = 0; a < r; ++a) {
    const Dense& e = dense[a];
    const int64_t d = dim_of(c, 0, a);
    if (e.stride == 0) return bad("strides " + ints_str(s.strides) + " contain 0");
    int64_t b, en, st = e.stride;
    if (e.shrink) {
      // An index, not a range: x[begin] with the dim removed.
      if (e.stride < 0)
        return bad("strides " + ints_str(s.strides) + ": only a positive stride is allowed on a shrunk (indexed) dim");
      squeeze.push_back(a);
      b = e.begin;
      st = 1;
      if (d >= 0) {
        const int64_t fwd = b < 0 ? b + d : b;
        if (fwd < 0 || fwd >= d)
          return bad("index " + std::to_string(b) + " (shrink_axis_mask) is out of range for dim " + std::to_string(a) +
                     " of size " + std::to_string(d) + " of x " + xs);
        b = fwd;
        en = fwd + 1;
      } else {
        en = b == -1 ? INT64_MAX : b + 1;
      }
    } else if (d >= 0) {
      // TF's canonical begin/end for a known dim, handed to ONNX in a form its
      // clamping reads the same way (an end before 0 as INT64_MIN).
      const int64_t lo = st > 0 ? 0 : -1, hi = st > 0 ? d : d - 1;
      auto canonical = [&](int64_t x, bool masked, bool is_end) {
        if (masked) return st > 0 ? (is_end ? hi : lo) : (is_end ? lo : hi);
        const int64_t fwd = x < 0 ? x + d : x;
        return std::clamp(fwd, lo, hi);
      };
      b = canonical(e.begin, e.begin_masked, false);
      const int64_t cend = canonical(e.end, e.end_masked, true);
      const int64_t len = cend - b;
      int64_t size = 0;
      if (len != 0 && ((len < 0) == (st < 0))) size = len / st + (len % st != 0 ? 1 : 0);
      if (size == 0) {
        b = 0;
        en = 0;
        st = 1;
      } else {
        en = b + (size - 1) * st + (st > 0 ? 1 : -1);
        if (en < 0) en = INT64_MIN;
      }
    } else {
      // Unknown dim: masks become ONNX's "from the start" / "to the end" values.
      b = e.begin_masked ? (st > 0 ? 0 : INT64_MAX) : e.begin;
      en = e.end_masked ? (st > 0 ? INT64_MAX : INT64_MIN) : e.end;
    }
    if (!(b == 0 && en == INT64_MAX && st == 1) && !(d >= 0 && b == 0 && en == d && st == 1)) {
      starts.push_back(b);
      ends.push_back(en);
      axes.push_back(a);
      steps.push_back(st);
    }
  }
  Value* y = c.input(0);
  if (!axes.empty())
    y = c.add1("Slice", {y, c.const_i64(starts), c.const_i64(ends), c.const_i64(axes), c.const_i64(steps)});
  if (!squeeze.empty()) y = c.add1("Squeeze", {y, c.const_i64(squeeze)});
  std::vector<int64_t> new_axes;
  int64_t pos = 0;
  for (int64_t f : final_dims) {
    if (f == kShrink) continue;
    if (f == kNew) new_axes.push_back(pos);
    ++pos;
  }
  if (!new_axes.empty()) y = c.add1("Unsqueeze", {y, c.const_i64(new_axes)});
  if (y == c.input(0)) y = c.add1("Identity", {y});
  c.set_output(0, y);
  return Status::Ok();
}

StridedSpec masks_of(const BuildContext& c) {
  StridedSpec s;
  s.begin_mask = c.get_int("begin_mask");
  s.end_mask = c.get_int("end_mask");
  s.ellipsis_mask = c.get_int("ellipsis_mask");
  s.new_axis_mask = c.get_int("new_axis_mask");
  s.shrink_axis_mask = c.get_int("shrink_axis_mask");
  return s;
}

OPENACL_REGISTER_ASCEND_OP(StridedSlice)
    .summary("TensorFlow strided slice x[begin:end:strides] with the five masks; begin/end/strides constant")
    .input("x").input("begin").input("end").input("strides")
    .output("y")
    .attr_int("begin_mask", 0).attr_int("end_mask", 0).attr_int("ellipsis_mask", 0)
    .attr_int("new_axis_mask", 0).attr_int("shrink_axis_mask", 0)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      StridedSpec s = masks_of(c);
      OPENACL_RETURN_IF_ERROR(need_const(c, 1, "begin", "StridedSliceD", &s.begin));
      OPENACL_RETURN_IF_ERROR(need_const(c, 2, "end", "StridedSliceD", &s.end));
      OPENACL_RETURN_IF_ERROR(need_const(c, 3, "strides", "StridedSliceD", &s.strides));
      return build_strided_slice(c, s, false);
    });

OPENACL_REGISTER_ASCEND_OP(StridedSliceD)
    .summary("TensorFlow strided slice with begin, end and strides as attributes")
    .input("x")
    .output("y")
    .required_attr("begin", AttrValue::Kind::kListInt)
    .required_attr("end", AttrValue::Kind::kListInt)
    .required_attr("strides", AttrValue::Kind::kListInt)
    .attr_int("begin_mask", 0).attr_int("end_mask", 0).attr_int("ellipsis_mask", 0)
    .attr_int("new_axis_mask", 0).attr_int("shrink_axis_mask", 0)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      StridedSpec s = masks_of(c);
      s.begin = c.get_ints("begin");
      s.end = c.get_ints("end");
      s.strides = c.get_ints("strides");
      return build_strided_slice(c, s, true);
    });

// StridedSliceV2: StridedSlice with optional axes (the dims begin/end/strides
// address; the rest are taken whole) and optional strides (1).
OPENACL_REGISTER_ASCEND_OP(StridedSliceV2)
    .summary("Strided slice with optional axes and strides inputs (constants); the masks as in StridedSlice")
    .input("x").input("begin").input("end").optional_input("axes").optional_input("strides")
    .output("y")
    .attr_int("begin_mask", 0).attr_int("end_mask", 0).attr_int("ellipsis_mask", 0)
    .attr_int("new_axis_mask", 0).attr_int("shrink_axis_mask", 0)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      StridedSpec s = masks_of(c);
      OPENACL_RETURN_IF_ERROR(need_const(c, 1, "begin", "StridedSliceD", &s.begin));
      OPENACL_RETURN_IF_ERROR(need_const(c, 2, "end", "StridedSliceD", &s.end));
      if (c.input(4)) OPENACL_RETURN_IF_ERROR(need_const(c, 4, "strides", "StridedSliceD", &s.strides));
      else s.strides.assign(s.begin.size(), 1);
      if (!c.input(3)) return build_strided_slice(c, s, false);
      std::vector<int64_t> axes;
      OPENACL_RETURN_IF_ERROR(need_const(c, 3, "axes", "StridedSliceD", &axes));
      const size_t n = s.begin.size();
      if (axes.size() != n || s.end.size() != n || s.strides.size() != n)
        return c.bad_input("begin %s, end %s, axes %s and strides %s must have the same length",
                           ints_str(s.begin).c_str(), ints_str(s.end).c_str(), ints_str(axes).c_str(),
                           ints_str(s.strides).c_str());
      if (s.ellipsis_mask != 0 || s.new_axis_mask != 0)
        return c.bad_attr("ellipsis_mask and new_axis_mask are not supported together with axes; "
                          "give begin/end/strides for every dim (StridedSlice) instead");
      const int64_t r = rank_of(c, 0);
      if (r < 0 || r > 62) return c.bad_input("x %s must have a known rank <= 62", c.input_spec(0).str().c_str());
      // Dense spec: dims not in axes are taken whole; mask bit i of entry i moves to its dim.
      StridedSpec d;
      d.begin.assign(r, 0);
      d.end.assign(r, 0);
      d.strides.assign(r, 1);
      d.begin_mask = d.end_mask = (int64_t{1} << r) - 1;
      std::vector<bool> seen(r, false);
      for (size_t i = 0; i < n; ++i) {
        int64_t a = axes[i];
        if (!norm_axis(&a, r) || seen[a])
          return c.bad_input("axes %s: axis %lld is out of range [%lld, %lld] or repeated for x %s",
                             ints_str(axes).c_str(), ll(axes[i]), ll(-r), ll(r - 1), c.input_spec(0).str().c_str());
        seen[a] = true;
        const int64_t bit = int64_t{1} << a;
        d.begin[a] = s.begin[i];
        d.end[a] = s.end[i];
        d.strides[a] = s.strides[i];
        if (!((s.begin_mask >> i) & 1)) d.begin_mask &= ~bit;
        if (!((s.end_mask >> i) & 1)) d.end_mask &= ~bit;
        if ((s.shrink_axis_mask >> i) & 1) d.shrink_axis_mask |= bit;
      }
      return build_strided_slice(c, d, false);
    });

// ---------------------------------------------------------------- Concat

Status build_concat(BuildContext& c, const std::vector<Value*>& xs, size_t first, int64_t axis, bool attr) {
  if (xs.empty()) return c.bad_input("x needs at least one tensor");
  if (c.attr_set_by_caller("N") && c.get_int("N") != static_cast<int64_t>(xs.size()))
    return c.bad_attr("N is %lld but %zu tensors were given for x", ll(c.get_int("N")), xs.size());
  const int64_t r = rank_of(c, first);
  const DType dt = c.input_spec(first).dtype;
  for (size_t i = 0; i < xs.size(); ++i) {
    const TensorSpec& s = c.input_spec(first + i);
    if (s.dtype != dt)
      return c.bad_input("x[%zu] is %s but x[0] is %s: every x must have one dtype", i, graph::dtype_name(s.dtype),
                         graph::dtype_name(dt));
  }
  if (r == 0)
    return c.bad_input("x[0] %s is a scalar; concatenation needs rank >= 1", c.input_spec(first).str().c_str());
  const int64_t orig = axis;
  if (r >= 0 && !norm_axis(&axis, r)) {
    const std::string m = "concat_dim " + std::to_string(orig) + " is out of range [" + std::to_string(-r) + ", " +
                          std::to_string(r - 1) + "] for x[0] " + c.input_spec(first).str();
    return attr ? c.bad_attr("%s", m.c_str()) : c.bad_input("%s", m.c_str());
  }
  c.set_output(0, xs.size() == 1 ? c.add1("Identity", {xs[0]})
                                 : c.add1("Concat", xs, onnx_attrs({{"axis", onnx_int(axis)}})));
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(ConcatD)
    .summary("Concatenates the x tensors along the concat_dim attribute")
    .dynamic_input("x")
    .output("y")
    .required_attr("concat_dim", AttrValue::Kind::kInt)
    .attr_int("N", 1)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      return build_concat(c, c.inputs_from(0), 0, c.get_int("concat_dim"), true);
    });

OPENACL_REGISTER_ASCEND_OP(ConcatV2D)
    .summary("Concatenates the x tensors along the concat_dim attribute")
    .dynamic_input("x")
    .output("y")
    .required_attr("concat_dim", AttrValue::Kind::kInt)
    .attr_int("N", 1)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      return build_concat(c, c.inputs_from(0), 0, c.get_int("concat_dim"), true);
    });

// ConcatV2's inputs are x[0..N-1] followed by concat_dim. The catalogue allows a
// dynamic input only in the last place, so x is declared dynamic and the last
// input given is read as concat_dim.
OPENACL_REGISTER_ASCEND_OP(ConcatV2)
    .summary("Concatenates the x tensors along concat_dim (the last input, a constant)")
    .dynamic_input("x")
    .output("y")
    .attr_int("N", 1)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      if (c.num_inputs() < 2)
        return c.bad_input("ConcatV2 takes x[0..N-1] and then concat_dim; %zu inputs given", c.num_inputs());
      std::vector<int64_t> dim;
      OPENACL_RETURN_IF_ERROR(need_const(c, c.num_inputs() - 1, "concat_dim", "ConcatV2D", &dim));
      if (dim.size() != 1) return c.bad_input("concat_dim must hold one value, not %s", ints_str(dim).c_str());
      std::vector<Value*> xs = c.inputs_from(0);
      xs.pop_back();
      return build_concat(c, xs, 0, dim[0], false);
    });

OPENACL_REGISTER_ASCEND_OP(Concat)
    .summary("Concatenates the x tensors along concat_dim (the first input, a constant)")
    .input("concat_dim").dynamic_input("x")
    .output("y")
    .attr_int("N", 1)
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> dim;
      OPENACL_RETURN_IF_ERROR(need_const(c, 0, "concat_dim", "ConcatD", &dim));
      if (dim.size() != 1) return c.bad_input("concat_dim must hold one value, not %s", ints_str(dim).c_str());
      if (c.num_inputs() < 2) return c.bad_input("x needs at least one tensor after concat_dim");
      return build_concat(c, c.inputs_from(1), 1, dim[0], false);
    });

// Pack (TF stack): every x gets a new dim at axis, then they are concatenated.
OPENACL_REGISTER_ASCEND_OP(Pack)
    .summary("Stacks the x tensors (one shape) along a new dim at axis")
    .dynamic_input("x")
    .output("y")
    .attr_int("axis", 0)
    .attr_int("N", 1)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      const std::vector<Value*> xs = c.inputs_from(0);
      if (c.attr_set_by_caller("N") && c.get_int("N") != static_cast<int64_t>(xs.size()))
        return c.bad_attr("N is %lld but %zu tensors were given for x", ll(c.get_int("N")), xs.size());
      const TensorSpec& x0 = c.input_spec(0);
      for (size_t i = 1; i < xs.size(); ++i) {
        const TensorSpec& s = c.input_spec(i);
        if (s.dtype != x0.dtype || s.dims != x0.dims)
          return c.bad_input("x[%zu] is %s but x[0] is %s: Pack needs one dtype and shape", i, s.str().c_str(),
                             x0.str().c_str());
      }
      int64_t axis = c.get_int("axis");
      const int64_t r = rank_of(c, 0);
      if (r >= 0 && !norm_axis(&axis, r, true))
        return c.bad_attr("axis %lld is out of range [%lld, %lld] for x[0] %s", ll(c.get_int("axis")), ll(-r - 1),
                          ll(r),
                          x0.str().c_str());
      std::vector<Value*> parts;
      for (Value* x : xs) parts.push_back(c.add1("Unsqueeze", {x, c.const_i64({axis})}));
      c.set_output(0, parts.size() == 1 ? parts[0] : c.add1("Concat", parts, onnx_attrs({{"axis", onnx_int(axis)}})));
      return Status::Ok();
    });

// Unpack (TF unstack): num tensors, x's dim `axis` removed.
OPENACL_REGISTER_ASCEND_OP(Unpack)
    .summary("Splits x along axis into num tensors with that dim removed")
    .input("x")
    .dynamic_output("y")
    .required_attr("num", AttrValue::Kind::kInt)
    .attr_int("axis", 0)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      const int64_t num = c.get_int("num"), r = rank_of(c, 0);
      int64_t axis = c.get_int("axis");
      if (r < 1) return c.bad_input("x %s must have a known rank >= 1", c.input_spec(0).str().c_str());
      if (!norm_axis(&axis, r))
        return c.bad_attr("axis %lld is out of range [%lld, %lld] for x %s", ll(c.get_int("axis")), ll(-r), ll(r - 1),
                          c.input_spec(0).str().c_str());
      const int64_t d = dim_of(c, 0, axis);
      if (d >= 0 && d != num)
        return c.bad_attr("num %lld must equal dim %lld of x %s (%lld)", ll(num), ll(axis),
                          c.input_spec(0).str().c_str(), ll(d));
      if (num < 1) return c.bad_attr("num %lld must be >= 1", ll(num));
      if (static_cast<int64_t>(c.num_outputs()) != num)
        return c.bad_output("num is %lld but %zu outputs were given for y", ll(num), c.num_outputs());
      std::vector<Value*> parts = {c.input(0)};
      if (num > 1)
        parts = c.add("Split", {c.input(0), c.const_i64(std::vector<int64_t>(num, 1))},
                      onnx_attrs({{"axis", onnx_int(axis)}}), num);
      for (int64_t i = 0; i < num; ++i) c.set_output(i, c.add1("Squeeze", {parts[i], c.const_i64({axis})}));
      return Status::Ok();
    });

// ---------------------------------------------------------------- Reverse

Status build_reverse(BuildContext& c, std::vector<int64_t> axes, bool attr) {
  const int64_t r = rank_of(c, 0);
  if (r < 0) return c.bad_input("x %s has an unknown rank", c.input_spec(0).str().c_str());
  std::vector<bool> seen(r, false);
  for (int64_t& a : axes) {
    const int64_t orig = a;
    if (!norm_axis(&a, r) || seen[a]) {
      const std::string m = "axis " + std::to_string(orig) + " is out of range [" + std::to_string(-r) + ", " +
                            std::to_string(r - 1) + "] or repeated for x " + c.input_spec(0).str();
      return attr ? c.bad_attr("%s", m.c_str()) : c.bad_input("%s", m.c_str());
    }
    seen[a] = true;
  }
  if (axes.empty()) {
    c.set_output(0, c.add1("Identity", {c.input(0)}));
    return Status::Ok();
  }
  const size_t n = axes.size();
  c.set_output(0, c.add1("Slice", {c.input(0), c.const_i64(std::vector<int64_t>(n, -1)),
                                   c.const_i64(std::vector<int64_t>(n, INT64_MIN)), c.const_i64(axes),
                                   c.const_i64(std::vector<int64_t>(n, -1))}));
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(ReverseV2)
    .summary("Reverses x along the dims listed in axis (a constant input)")
    .input("x").input("axis")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> axes;
      OPENACL_RETURN_IF_ERROR(need_const(c, 1, "axis", "ReverseV2D", &axes));
      return build_reverse(c, axes, false);
    });

OPENACL_REGISTER_ASCEND_OP(ReverseV2D)
    .summary("Reverses x along the dims listed in the axis attribute")
    .input("x")
    .output("y")
    .required_attr("axis", AttrValue::Kind::kListInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status { return build_reverse(c, c.get_ints("axis"), true); });

// ---------------------------------------------------------------- Split

// Splits input xi along `axis` into pieces of `sizes` (one -1 inferred), or
// num_split equal pieces when sizes is empty.
Status build_split(BuildContext& c, size_t xi, int64_t axis, int64_t num_split, std::vector<int64_t> sizes,
                   bool attr) {
  auto bad = [&](const std::string& m) { return attr ? c.bad_attr("%s", m.c_str()) : c.bad_input("%s", m.c_str()); };
  const int64_t r = rank_of(c, xi);
  const std::string xs = c.input_spec(xi).str();
  if (num_split < 1) return c.bad_attr("num_split %lld must be >= 1", ll(num_split));
  if (static_cast<int64_t>(c.num_outputs()) != num_split)
    return c.bad_output("num_split is %lld but %zu outputs were given for y", ll(num_split), c.num_outputs());
  const int64_t orig = axis;
  if (r >= 0 && !norm_axis(&axis, r))
    return bad("split_dim " + std::to_string(orig) + " is out of range [" + std::to_string(-r) + ", " +
               std::to_string(r - 1) + "] for x " + xs);
  if (r == 0) return c.bad_input("x %s is a scalar; there is nothing to split", xs.c_str());
  const int64_t d = r >= 0 ? dim_of(c, xi, axis) : -1;
  if (sizes.empty()) {
    if (d >= 0) {
      if (d % num_split != 0)
        return bad("dim " + std::to_string(axis) + " of x " + xs + " (" + std::to_string(d) +
                   ") does not divide into num_split " + std::to_string(num_split) + " equal parts");
      sizes.assign(num_split, d / num_split);
    }
  } else {
    if (static_cast<int64_t>(sizes.size()) != num_split)
      return bad("size_splits " + ints_str(sizes) + " must have num_split (" + std::to_string(num_split) + ") entries");
    int64_t known = 0, infer_at = -1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1 && infer_at < 0) infer_at = static_cast<int64_t>(i);
      else if (sizes[i] < 0) return bad("size_splits " + ints_str(sizes) + " may hold one -1 and otherwise sizes >= 0");
      else known += sizes[i];
    }
    if (d >= 0) {
      if (infer_at >= 0) {
        if (known > d)
          return bad("size_splits " + ints_str(sizes) + " exceed dim " + std::to_string(axis) + " of x " + xs);
        sizes[infer_at] = d - known;
      } else if (known != d) {
        return bad("size_splits " + ints_str(sizes) + " sum to " + std::to_string(known) + ", not dim " +
                   std::to_string(axis) + " (" + std::to_string(d) + ") of x " + xs);
      }
    } else if (infer_at >= 0) {
      return c.bad_input("x %s has an unknown split dim; size_splits with -1 needs it", xs.c_str());
    }
  }
  if (num_split == 1) {
    c.set_output(0, c.add1("Identity", {c.input(xi)}));
    return Status::Ok();
  }
  std::vector<Value*> ys;
  if (sizes.empty()) {
    if (r < 0) return c.bad_input("x %s has an unknown rank; Split needs it", xs.c_str());
    ys = c.add("Split", {c.input(xi)}, onnx_attrs({{"axis", onnx_int(axis)}, {"num_outputs", onnx_int(num_split)}}),
               num_split);
  } else {
    ys = c.add("Split", {c.input(xi), c.const_i64(sizes)}, onnx_attrs({{"axis", onnx_int(axis)}}), num_split);
  }
  for (size_t i = 0; i < ys.size(); ++i) c.set_output(i, ys[i]);
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(SplitD)
    .summary("Splits x along split_dim into num_split equal tensors")
    .input("x")
    .dynamic_output("y")
    .required_attr("split_dim", AttrValue::Kind::kInt)
    .required_attr("num_split", AttrValue::Kind::kInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      return build_split(c, 0, c.get_int("split_dim"), c.get_int("num_split"), {}, true);
    });

OPENACL_REGISTER_ASCEND_OP(Split)
    .summary("Splits x along split_dim (the first input, a constant) into num_split equal tensors")
    .input("split_dim").input("x")
    .dynamic_output("y")
    .required_attr("num_split", AttrValue::Kind::kInt)
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> dim;
      OPENACL_RETURN_IF_ERROR(need_const(c, 0, "split_dim", "SplitD", &dim));
      if (dim.size() != 1) return c.bad_input("split_dim must hold one value, not %s", ints_str(dim).c_str());
      return build_split(c, 1, dim[0], c.get_int("num_split"), {}, false);
    });

OPENACL_REGISTER_ASCEND_OP(SplitVD)
    .summary("Splits x along split_dim into pieces of size_splits (one -1 is inferred)")
    .input("x")
    .dynamic_output("y")
    .required_attr("size_splits", AttrValue::Kind::kListInt)
    .required_attr("split_dim", AttrValue::Kind::kInt)
    .required_attr("num_split", AttrValue::Kind::kInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> sizes = c.get_ints("size_splits");
      if (sizes.empty()) return c.bad_attr("size_splits must not be empty");
      return build_split(c, 0, c.get_int("split_dim"), c.get_int("num_split"), sizes, true);
    });

OPENACL_REGISTER_ASCEND_OP(SplitV)
    .summary("Splits x along split_dim into pieces of size_splits (both constant inputs; one -1 is inferred)")
    .input("x").input("size_splits").input("split_dim")
    .dynamic_output("y")
    .required_attr("num_split", AttrValue::Kind::kInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> sizes, dim;
      OPENACL_RETURN_IF_ERROR(need_const(c, 1, "size_splits", "SplitVD", &sizes));
      OPENACL_RETURN_IF_ERROR(need_const(c, 2, "split_dim", "SplitVD", &dim));
      if (dim.size() != 1) return c.bad_input("split_dim must hold one value, not %s", ints_str(dim).c_str());
      if (sizes.empty()) return c.bad_input("size_splits must not be empty");
      return build_split(c, 0, dim[0], c.get_int("num_split"), sizes, false);
    });

// ---------------------------------------------------------------- Gather

Status check_indices(const BuildContext& c, size_t i) {
  const DType dt = c.input_spec(i).dtype;
  if (!is_index(dt)) return c.bad_input("indices must be int32 or int64, not %s", graph::dtype_name(dt));
  return Status::Ok();
}

// TF GatherV2: y = x.shape[:axis] + indices.shape[batch_dims:] + x.shape[axis+1:].
// batch_dims > 0 becomes an ONNX GatherND over x with the axis moved next to the
// batch dims, then a transpose back.
Status build_gather(BuildContext& c, int64_t axis, int64_t batch_dims, bool attr) {
  OPENACL_RETURN_IF_ERROR(check_indices(c, 1));
  const int64_t r = rank_of(c, 0), q = rank_of(c, 1);
  const std::string xs = c.input_spec(0).str(), is = c.input_spec(1).str();
  const int64_t orig = axis;
  if (r >= 0 && !norm_axis(&axis, r)) {
    const std::string m = "axis " + std::to_string(orig) + " is out of range [" + std::to_string(-r) + ", " +
                          std::to_string(r - 1) + "] for x " + xs;
    return attr ? c.bad_attr("%s", m.c_str()) : c.bad_input("%s", m.c_str());
  }
  if (batch_dims == 0) {
    c.set_output(0, c.add1("Gather", {c.input(0), c.input(1)}, onnx_attrs({{"axis", onnx_int(axis)}})));
    return Status::Ok();
  }
  if (r < 0 || q < 0) return c.bad_input("batch_dims needs known ranks of x %s and indices %s", xs.c_str(), is.c_str());
  int64_t b = batch_dims;
  if (b < 0) b += q;
  if (b < 0 || b > q) return c.bad_attr("batch_dims %lld is out of range for indices %s", ll(batch_dims), is.c_str());
  if (b > axis) return c.bad_attr("batch_dims %lld must be <= axis %lld", ll(batch_dims), ll(axis));
  for (int64_t i = 0; i < b; ++i) {
    const int64_t dx = dim_of(c, 0, i), di = dim_of(c, 1, i);
    if (dx >= 0 && di >= 0 && dx != di)
      return c.bad_input("batch dim %lld differs: x %s, indices %s", ll(i), xs.c_str(), is.c_str());
  }
  Value* x = c.input(0);
  const int64_t m = axis - b;
  if (m > 0) {
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < b; ++i) perm.push_back(i);
    perm.push_back(axis);
    for (int64_t i = b; i < r; ++i)
      if (i != axis) perm.push_back(i);
    x = c.add1("Transpose", {x}, onnx_attrs({{"perm", onnx_ints(perm)}}));
  }
  Value* idx = c.add1("Unsqueeze", {c.input(1), c.const_i64({-1})});
  Value* y = c.add1("GatherND", {x, idx}, onnx_attrs({{"batch_dims", onnx_int(b)}}));
  if (m > 0) {
    // y is [B, I, M, R]; TF wants [B, M, I, R].
    const int64_t qi = q - b, out_r = b + qi + m + (r - axis - 1);
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < b; ++i) perm.push_back(i);
    for (int64_t i = 0; i < m; ++i) perm.push_back(b + qi + i);
    for (int64_t i = 0; i < qi; ++i) perm.push_back(b + i);
    for (int64_t i = b + qi + m; i < out_r; ++i) perm.push_back(i);
    y = c.add1("Transpose", {y}, onnx_attrs({{"perm", onnx_ints(perm)}}));
  }
  c.set_output(0, y);
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(GatherV2)
    .summary("Gathers slices of x along axis (a constant input) at indices; batch_dims as in TensorFlow")
    .input("x").input("indices").input("axis")
    .output("y")
    .attr_int("batch_dims", 0)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> axis;
      OPENACL_RETURN_IF_ERROR(need_const(c, 2, "axis", "GatherV2D", &axis));
      if (axis.size() != 1) return c.bad_input("axis must hold one value, not %s", ints_str(axis).c_str());
      return build_gather(c, axis[0], c.get_int("batch_dims"), false);
    });

OPENACL_REGISTER_ASCEND_OP(GatherV2D)
    .summary("Gathers slices of x along the axis attribute at indices")
    .input("x").input("indices")
    .output("y")
    .required_attr("axis", AttrValue::Kind::kInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status { return build_gather(c, c.get_int("axis"), 0, true); });

OPENACL_REGISTER_ASCEND_OP(Gather)
    .summary("Gathers slices of x along axis 0 at indices")
    .input("x").input("indices")
    .output("y")
    .attr_bool("validate_indices", true)
    .attr_int("batch_dims", 0)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status { return build_gather(c, 0, c.get_int("batch_dims"), true); });

OPENACL_REGISTER_ASCEND_OP(GatherNd)
    .summary("Gathers slices of x addressed by the last dim of indices (TensorFlow gather_nd)")
    .input("x").input("indices")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(check_indices(c, 1));
      const int64_t r = rank_of(c, 0), q = rank_of(c, 1);
      const int64_t k = q > 0 ? dim_of(c, 1, q - 1) : -1;
      if (q == 0) return c.bad_input("indices %s must have rank >= 1", c.input_spec(1).str().c_str());
      if (r >= 0 && k >= 0 && (k > r || k < 1))
        return c.bad_input("indices %s index %lld dims; x %s has %lld (and at least 1 is needed)",
                           c.input_spec(1).str().c_str(), ll(k), c.input_spec(0).str().c_str(), ll(r));
      c.set_output(0, c.add1("GatherND", {c.input(0), c.input(1)}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(GatherElements)
    .summary("y[i][j]... = x[..index[i][j]... along dim...] (torch.gather)")
    .input("x").input("index")
    .output("y")
    .attr_int("dim", 0)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(check_indices(c, 1));
      int64_t dim = c.get_int("dim");
      const int64_t r = rank_of(c, 0), q = rank_of(c, 1);
      if (r >= 0 && !norm_axis(&dim, r))
        return c.bad_attr("dim %lld is out of range [%lld, %lld] for x %s", ll(c.get_int("dim")), ll(-r), ll(r - 1),
                          c.input_spec(0).str().c_str());
      if (r >= 0 && q >= 0 && r != q)
        return c.bad_input("index %s must have the rank of x %s", c.input_spec(1).str().c_str(),
                           c.input_spec(0).str().c_str());
      c.set_output(0, c.add1("GatherElements", {c.input(0), c.input(1)}, onnx_attrs({{"axis", onnx_int(dim)}})));
      return Status::Ok();
    });

// ---------------------------------------------------------------- Scatter

OPENACL_REGISTER_ASCEND_OP(ScatterNd)
    .summary("Zeros of shape with updates added at indices (duplicates sum)")
    .input("indices").input("x").input("shape")
    .output("y")
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(check_indices(c, 0));
      const DType dt = c.input_spec(1).dtype;
      if (std::find(numeric().begin(), numeric().end(), dt) == numeric().end())
        return c.unsupported("x (updates) is %s; ScatterNd adds, so it takes numeric types", graph::dtype_name(dt));
      Value* shape = nullptr;
      OPENACL_RETURN_IF_ERROR(int64_input(c, 2, "shape", &shape));
      if (auto s = const_ints(c, 2)) {
        for (int64_t d : *s)
          if (d < 0) return c.bad_input("shape %s has a negative dim", ints_str(*s).c_str());
        OPENACL_RETURN_IF_ERROR(check_size(c, *s, dt));
      }
      Value* zeros = c.add1("Expand", {c.const_scalar(dt, 0), shape});
      c.set_output(0, c.add1("ScatterND", {zeros, c.input(0), c.input(1)},
                             onnx_attrs({{"reduction", onnx_string("add")}})));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(TensorScatterUpdate)
    .summary("A copy of x with the slices at indices replaced by updates")
    .input("x").input("indices").input("updates")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(check_indices(c, 1));
      if (c.input_spec(2).dtype != c.input_spec(0).dtype)
        return c.bad_input("updates are %s but x is %s", graph::dtype_name(c.input_spec(2).dtype),
                           graph::dtype_name(c.input_spec(0).dtype));
      c.set_output(0, c.add1("ScatterND", {c.input(0), c.input(1), c.input(2)}));
      return Status::Ok();
    });

// ---------------------------------------------------------------- Pad

// ONNX pads ([begins..., ends...]) from TF paddings ([[before, after], ...]).
Status pads_from_pairs(BuildContext& c, const std::vector<std::vector<int64_t>>& pairs, bool attr, bool allow_negative,
                       std::vector<int64_t>* pads) {
  auto bad = [&](const std::string& m) { return attr ? c.bad_attr("%s", m.c_str()) : c.bad_input("%s", m.c_str()); };
  const int64_t r = rank_of(c, 0);
  if (r >= 0 && static_cast<int64_t>(pairs.size()) != r)
    return bad("paddings " + lists_str(pairs) + " must have shape [" + std::to_string(r) +
               ", 2] ([before, after] per dim of x " +
               c.input_spec(0).str() + ")");
  pads->assign(2 * pairs.size(), 0);
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i].size() != 2)
      return bad("paddings " + lists_str(pairs) + ": entry " + std::to_string(i) + " must be [before, after]");
    for (int k = 0; k < 2; ++k)
      if (!allow_negative && pairs[i][k] < 0) return bad("paddings " + lists_str(pairs) + " must not be negative");
    (*pads)[i] = pairs[i][0];
    (*pads)[i + pairs.size()] = pairs[i][1];
  }
  return Status::Ok();
}

// `known`: the ONNX pads when constant, to check the output size first.
Status emit_pad(BuildContext& c, Value* pads, Value* value, const std::string& mode,
                const std::vector<int64_t>* known = nullptr) {
  const int64_t r = rank_of(c, 0);
  if (known && static_input(c, 0) && static_cast<int64_t>(known->size()) == 2 * r) {
    std::vector<int64_t> out(c.input_spec(0).dims);
    for (int64_t a = 0; a < r; ++a) {
      const __int128 v = static_cast<__int128>(out[a]) + (*known)[a] + (*known)[a + r];
      if (v < 0 || v > INT64_MAX)
        return c.bad_input("paddings %s make dim %lld of x %s %s", ints_str(*known).c_str(), ll(a),
                           c.input_spec(0).str().c_str(), v < 0 ? "negative" : "overflow");
      out[a] = static_cast<int64_t>(v);
    }
    OPENACL_RETURN_IF_ERROR(check_size(c, out, c.input_spec(0).dtype));
  }
  std::vector<Value*> in = {c.input(0), pads};
  if (value) in.push_back(value);
  c.set_output(0, c.add1("Pad", in, onnx_attrs({{"mode", onnx_string(mode)}})));
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(Pad)
    .summary("Pads x with zeros by paddings ([rank, 2]: [before, after] per dim)")
    .input("x").input("paddings")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      const TensorSpec& ps = c.input_spec(1);
      if (!c.input(1)) return c.bad_input("the paddings input is required");
      const int64_t r = rank_of(c, 0);
      if (!ps.unknown_rank() && (ps.dims.size() != 2 || (ps.dims[1] >= 0 && ps.dims[1] != 2) ||
                                 (r >= 0 && ps.dims[0] >= 0 && ps.dims[0] != r)))
        return c.bad_input("paddings %s must have shape [%lld, 2] for x %s", ps.str().c_str(), ll(r),
                           c.input_spec(0).str().c_str());
      if (auto v = const_ints(c, 1)) {
        std::vector<std::vector<int64_t>> pairs;
        for (size_t i = 0; i + 1 < v->size(); i += 2) pairs.push_back({(*v)[i], (*v)[i + 1]});
        std::vector<int64_t> pads;
        OPENACL_RETURN_IF_ERROR(pads_from_pairs(c, pairs, false, false, &pads));
        return emit_pad(c, c.const_i64(pads), nullptr, "constant", &pads);
      }
      // Runtime paddings: [[b0, a0], [b1, a1], ...] -> [b0, b1, ..., a0, a1, ...].
      Value* p = nullptr;
      OPENACL_RETURN_IF_ERROR(int64_input(c, 1, "paddings", &p));
      p = c.add1("Transpose", {p}, onnx_attrs({{"perm", onnx_ints({1, 0})}}));
      p = c.add1("Reshape", {p, c.const_i64({-1})});
      return emit_pad(c, p, nullptr, "constant");
    });

OPENACL_REGISTER_ASCEND_OP(PadD)
    .summary("Pads x with zeros by the paddings attribute ([[before, after], ...] per dim)")
    .input("x")
    .output("y")
    .required_attr("paddings", AttrValue::Kind::kListListInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> pads;
      OPENACL_RETURN_IF_ERROR(pads_from_pairs(c, c.get_lists("paddings"), true, false, &pads));
      return emit_pad(c, c.const_i64(pads), nullptr, "constant", &pads);
    });

OPENACL_REGISTER_ASCEND_OP(PadV3)
    .summary("Pads x by paddings (a constant; 2*rank values) with mode constant, reflect or edge")
    .input("x").input("paddings").optional_input("constant_values")
    .output("y")
    .attr_string("mode", "constant")
    .attr_bool("paddings_contiguous", true)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      std::string mode = c.get_string("mode");
      if (mode == "circular") mode = "wrap";
      if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
        return c.bad_attr("mode \"%s\" is not one of \"constant\", \"reflect\", \"edge\", \"circular\"",
                          c.get_string("mode").c_str());
      std::vector<int64_t> v;
      OPENACL_RETURN_IF_ERROR(need_const(c, 1, "paddings", nullptr, &v));
      const int64_t r = rank_of(c, 0);
      if (r >= 0 && static_cast<int64_t>(v.size()) != 2 * r)
        return c.bad_input("paddings %s must hold 2 * rank = %lld values for x %s", ints_str(v).c_str(), ll(2 * r),
                           c.input_spec(0).str().c_str());
      if (v.size() % 2 != 0) return c.bad_input("paddings %s must hold an even number of values", ints_str(v).c_str());
      const size_t n = v.size() / 2;
      std::vector<int64_t> pads(v.size());
      for (size_t i = 0; i < n; ++i) {
        // contiguous: [b0, a0, b1, a1, ...]; otherwise already [b0, b1, ..., a0, a1, ...].
        pads[i] = c.get_bool("paddings_contiguous") ? v[2 * i] : v[i];
        pads[i + n] = c.get_bool("paddings_contiguous") ? v[2 * i + 1] : v[i + n];
        const int64_t d = dim_of(c, 0, static_cast<int64_t>(i));
        if (mode == "reflect" && d >= 0 && (pads[i] >= d || pads[i + n] >= d))
          return c.bad_input("paddings %s: reflect padding of dim %zu (size %lld) must be less than the size",
                             ints_str(v).c_str(), i, ll(d));
        if (mode != "constant" && d == 0 && (pads[i] > 0 || pads[i + n] > 0))
          return c.bad_input("paddings %s: cannot %s-pad the empty dim %zu of x %s", ints_str(v).c_str(),
                             mode.c_str(), i,
                             c.input_spec(0).str().c_str());
      }
      Value* value = nullptr;
      if (c.input(2) && mode == "constant") {
        OPENACL_RETURN_IF_ERROR(scalar_input(c, 2, "constant_values", &value));
        if (c.input_spec(2).dtype != c.input_spec(0).dtype) value = cast_to(c, value, c.input_spec(0).dtype);
      }
      return emit_pad(c, c.const_i64(pads), value, mode, &pads);
    });

// ---------------------------------------------------------------- Fill, Tile, BroadcastTo

OPENACL_REGISTER_ASCEND_OP(Fill)
    .summary("A tensor of shape dims filled with value (a scalar)")
    .input("dims").input("value")
    .output("y")
    .build([](BuildContext& c) -> Status {
      Value* dims = nullptr;
      OPENACL_RETURN_IF_ERROR(int64_input(c, 0, "dims", &dims));
      if (auto d = const_ints(c, 0)) {
        for (int64_t v : *d)
          if (v < 0) return c.bad_input("dims %s has a negative dim", ints_str(*d).c_str());
        OPENACL_RETURN_IF_ERROR(check_size(c, *d, c.input_spec(1).dtype));
      }
      Value* value = nullptr;
      OPENACL_RETURN_IF_ERROR(scalar_input(c, 1, "value", &value));
      c.set_output(0, c.add1("Expand", {value, dims}));
      return Status::Ok();
    });

// TF BroadcastTo: y has exactly `shape`; x's dims (right-aligned) must be 1 or equal.
Status build_broadcast_to(BuildContext& c, Value* shape_value, const std::optional<std::vector<int64_t>>& shape,
                          bool attr) {
  auto bad = [&](const std::string& m) { return attr ? c.bad_attr("%s", m.c_str()) : c.bad_input("%s", m.c_str()); };
  if (shape) {
    const int64_t r = rank_of(c, 0), n = static_cast<int64_t>(shape->size());
    for (int64_t d : *shape)
      if (d < 0) return bad("shape " + ints_str(*shape) + " has a negative dim");
    OPENACL_RETURN_IF_ERROR(check_size(c, *shape, c.input_spec(0).dtype));
    if (r > n) return bad("x " + c.input_spec(0).str() + " has more dims than shape " + ints_str(*shape));
    for (int64_t i = 0; r >= 0 && i < r; ++i) {
      const int64_t d = dim_of(c, 0, i), t = (*shape)[n - r + i];
      if (d >= 0 && d != 1 && d != t)
        return bad("x " + c.input_spec(0).str() + " cannot be broadcast to shape " + ints_str(*shape) + " (dim " +
                   std::to_string(i) + " is " + std::to_string(d) + ", not 1 or " + std::to_string(t) + ")");
    }
  }
  c.set_output(0, c.add1("Expand", {c.input(0), shape_value}));
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(BroadcastTo)
    .summary("Broadcasts x to shape")
    .input("x").input("shape")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      Value* shape = nullptr;
      OPENACL_RETURN_IF_ERROR(int64_input(c, 1, "shape", &shape));
      return build_broadcast_to(c, shape, const_ints(c, 1), false);
    });

OPENACL_REGISTER_ASCEND_OP(BroadcastToD)
    .summary("Broadcasts x to the shape attribute")
    .input("x")
    .output("y")
    .required_attr("shape", AttrValue::Kind::kListInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      const std::vector<int64_t> shape = c.get_ints("shape");
      return build_broadcast_to(c, c.const_i64(shape), shape, true);
    });

// Ascend Expand: ONNX-style two-way broadcast of x and shape.
OPENACL_REGISTER_ASCEND_OP(Expand)
    .summary("Broadcasts x and shape together (numpy rules, either side may be 1)")
    .input("x").input("shape")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      Value* shape = nullptr;
      OPENACL_RETURN_IF_ERROR(int64_input(c, 1, "shape", &shape));
      std::vector<int64_t> out;
      if (auto v = const_ints(c, 1); v && static_input(c, 0) && broadcast_dims(c.input_spec(0).dims, *v, &out))
        OPENACL_RETURN_IF_ERROR(check_size(c, out, c.input_spec(0).dtype));
      c.set_output(0, c.add1("Expand", {c.input(0), shape}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(ExpandD)
    .summary("Broadcasts x and the shape attribute together (numpy rules)")
    .input("x")
    .output("y")
    .required_attr("shape", AttrValue::Kind::kListInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      for (int64_t d : c.get_ints("shape"))
        if (d < 0) return c.bad_attr("shape %s has a negative dim", ints_str(c.get_ints("shape")).c_str());
      std::vector<int64_t> out;
      if (static_input(c, 0) && broadcast_dims(c.input_spec(0).dims, c.get_ints("shape"), &out))
        OPENACL_RETURN_IF_ERROR(check_size(c, out, c.input_spec(0).dtype));
      c.set_output(0, c.add1("Expand", {c.input(0), c.const_i64(c.get_ints("shape"))}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(FillD)
    .summary("value broadcast to the dims attribute")
    .input("value")
    .output("y")
    .required_attr("dims", AttrValue::Kind::kListInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      const std::vector<int64_t> dims = c.get_ints("dims");
      return build_broadcast_to(c, c.const_i64(dims), dims, true);
    });

Status build_tile(BuildContext& c, Value* reps, const std::optional<std::vector<int64_t>>& m, bool attr) {
  auto bad = [&](const std::string& s) { return attr ? c.bad_attr("%s", s.c_str()) : c.bad_input("%s", s.c_str()); };
  const int64_t r = rank_of(c, 0);
  if (m) {
    if (r >= 0 && static_cast<int64_t>(m->size()) != r)
      return bad("multiples " + ints_str(*m) + " must have one entry per dim of x " + c.input_spec(0).str());
    for (int64_t v : *m)
      if (v < 0) return bad("multiples " + ints_str(*m) + " must not be negative");
    if (static_input(c, 0) && static_cast<int64_t>(m->size()) == r) {
      std::vector<int64_t> out = c.input_spec(0).dims;
      for (int64_t i = 0; i < r; ++i) {
        const __int128 v = static_cast<__int128>(out[i]) * (*m)[i];
        if (v > INT64_MAX) return bad("multiples " + ints_str(*m) + " overflow the dims of x " + c.input_spec(0).str());
        out[i] = static_cast<int64_t>(v);
      }
      OPENACL_RETURN_IF_ERROR(check_size(c, out, c.input_spec(0).dtype));
    }
  }
  c.set_output(0, c.add1("Tile", {c.input(0), reps}));
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(Tile)
    .summary("Repeats x multiples[i] times along each dim i")
    .input("x").input("multiples")
    .output("y")
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      Value* reps = nullptr;
      OPENACL_RETURN_IF_ERROR(int64_input(c, 1, "multiples", &reps));
      return build_tile(c, reps, const_ints(c, 1), false);
    });

OPENACL_REGISTER_ASCEND_OP(TileD)
    .summary("Repeats x multiples[i] times along each dim i (multiples attribute)")
    .input("x")
    .output("y")
    .required_attr("multiples", AttrValue::Kind::kListInt)
    .dtypes(movable())
    .build([](BuildContext& c) -> Status {
      const std::vector<int64_t> m = c.get_ints("multiples");
      return build_tile(c, c.const_i64(m), m, true);
    });

// ---------------------------------------------------------------- OneHot, Range, Shape, Size, Rank

OPENACL_REGISTER_ASCEND_OP(OneHot)
    .summary("One-hot encoding of x over depth (a constant); indices outside [0, depth) give all off_value")
    .input("x").input("depth").input("on_value").input("off_value")
    .output("y")
    .attr_int("axis", -1)
    .dtypes({DType::kUInt8, DType::kInt32, DType::kInt64})
    .build([](BuildContext& c) -> Status {
      std::vector<int64_t> depth;
      OPENACL_RETURN_IF_ERROR(need_const(c, 1, "depth", nullptr, &depth));
      // TensorFlow allows depth 0 (an empty one-hot dim); the engine's OneHot needs >= 1.
      if (depth.size() != 1 || depth[0] < 1)
        return c.bad_input("depth must be one value >= 1, not %s", ints_str(depth).c_str());
      const int64_t r = rank_of(c, 0);
      const int64_t axis = c.get_int("axis");
      if (static_input(c, 0)) {
        std::vector<int64_t> out = c.input_spec(0).dims;
        out.push_back(depth[0]);
        OPENACL_RETURN_IF_ERROR(check_size(c, out, c.input_spec(2).dtype));
      }
      if (r >= 0 && (axis < -1 || axis > r))
        return c.bad_attr("axis %lld must be -1 or in [0, %lld] for x %s", ll(axis), ll(r),
                          c.input_spec(0).str().c_str());
      const DType vt = c.input_spec(2).dtype;
      if (c.input_spec(3).dtype != vt)
        return c.bad_input("on_value is %s but off_value is %s: they must have one dtype", graph::dtype_name(vt),
                           graph::dtype_name(c.input_spec(3).dtype));
      Value *on = nullptr, *off = nullptr;
      OPENACL_RETURN_IF_ERROR(scalar_input(c, 2, "on_value", &on));
      OPENACL_RETURN_IF_ERROR(scalar_input(c, 3, "off_value", &off));
      Value* one = c.const_i64({1});
      Value* values = c.add1("Concat", {c.add1("Reshape", {off, one}), c.add1("Reshape", {on, one})},
                             onnx_attrs({{"axis", onnx_int(0)}}));
      // ONNX wraps negative indices (-1 -> depth - 1); TensorFlow turns them
      // into all-off rows, so they are moved out of range first.
      Value* x = c.input(0);
      if (c.input_spec(0).dtype != DType::kUInt8) {
        const DType xt = c.input_spec(0).dtype;
        Value* neg = c.add1("Less", {x, c.const_scalar(xt, 0)});
        x = c.add1("Where", {neg, c.const_scalar(xt, static_cast<double>(depth[0])), x});
      }
      c.set_output(0, c.add1("OneHot", {x, c.const_i64_scalar(depth[0]), values},
                             onnx_attrs({{"axis", onnx_int(axis)}})));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Range)
    .summary("The sequence start, start + delta, ... up to (excluding) limit")
    .input("start").input("limit").input("delta")
    .output("y")
    .dtypes({DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64})
    .build([](BuildContext& c) -> Status {
      const DType dt = c.input_spec(0).dtype;
      for (size_t i = 1; i < 3; ++i)
        if (c.input(i) && c.input_spec(i).dtype != dt)
          return c.bad_input("start is %s but %s is %s: start, limit and delta must have one dtype",
                             graph::dtype_name(dt), i == 1 ? "limit" : "delta",
                             graph::dtype_name(c.input_spec(i).dtype));
      Value *s = nullptr, *l = nullptr, *d = nullptr;
      OPENACL_RETURN_IF_ERROR(scalar_input(c, 0, "start", &s));
      OPENACL_RETURN_IF_ERROR(scalar_input(c, 1, "limit", &l));
      OPENACL_RETURN_IF_ERROR(scalar_input(c, 2, "delta", &d));
      if (c.input(2)->constant && c.input(2)->constant->elements() == 1) {
        bool zero = false;
        if (auto iv = c.input(2)->constant->to_int64()) zero = (*iv)[0] == 0 && !graph::dtype_is_float(dt);
        if (dt == DType::kFloat32) zero = c.input(2)->constant->as<float>()[0] == 0.0f;
        if (dt == DType::kFloat64) zero = c.input(2)->constant->as<double>()[0] == 0.0;
        if (zero) return c.bad_input("delta must not be 0");
      }
      if (c.input(0)->constant && c.input(1)->constant && c.input(2)->constant) {
        // The length, as the kernel computes it, to refuse sizes that overflow.
        double len = 0;
        if (graph::dtype_is_float(dt)) {
          auto at = [&](size_t i) {
            return dt == DType::kFloat32 ? double(c.input(i)->constant->as<float>()[0])
                                         : c.input(i)->constant->as<double>()[0];
          };
          len = std::ceil((at(1) - at(0)) / at(2));
        } else {
          const auto a = c.input(0)->constant->to_int64(), b = c.input(1)->constant->to_int64(),
                     d = c.input(2)->constant->to_int64();
          if (a && b && d) len = std::ceil((double(b->at(0)) - double(a->at(0))) / double(d->at(0)));
        }
        if (len > 9.0e18) return c.bad_input("the range has about %.3g elements, more than can be addressed", len);
        if (len > 0) OPENACL_RETURN_IF_ERROR(check_size(c, {static_cast<int64_t>(len)}, dt));
      }
      c.set_output(0, c.add1("Range", {s, l, d}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Shape)
    .summary("The dims of x as a 1-D tensor (dtype int32 or int64)")
    .input("x")
    .output("y")
    .attr("dtype", AttrValue::of_data_type(3))  // ACL_INT32
    .build([](BuildContext& c) -> Status {
      const DType dt = c.get_dtype("dtype");
      if (!is_index(dt)) return c.bad_attr("dtype must be int32 or int64, not %s", graph::dtype_name(dt));
      Value* y = c.add1("Shape", {c.input(0)});
      c.set_output(0, dt == DType::kInt64 ? y : cast_to(c, y, dt));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Size)
    .summary("The number of elements of x as a scalar (dtype int32 or int64)")
    .input("x")
    .output("y")
    .attr("dtype", AttrValue::of_data_type(3))
    .build([](BuildContext& c) -> Status {
      const DType dt = c.get_dtype("dtype");
      if (!is_index(dt)) return c.bad_attr("dtype must be int32 or int64, not %s", graph::dtype_name(dt));
      Value* y = c.add1("Size", {c.input(0)});
      c.set_output(0, dt == DType::kInt64 ? y : cast_to(c, y, dt));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Rank)
    .summary("The rank of x as an int32 scalar")
    .input("x")
    .output("y")
    .build([](BuildContext& c) -> Status {
      c.set_output(0, cast_to(c, c.add1("Size", {c.add1("Shape", {c.input(0)})}), DType::kInt32));
      return Status::Ok();
    });

// ---------------------------------------------------------------- data-dependent shapes

bool attr_bool(const OpAttrs& a, const char* name, bool def) {
  auto it = a.find(name);
  return it == a.end() ? def : it->second.i != 0;
}
DType attr_dtype(const OpAttrs& a, const char* name, DType def) {
  auto it = a.find(name);
  return it == a.end() ? def : graph::dtype_from_acl(static_cast<int>(it->second.i));
}

// Fills output o: dims with -1 where the data decides (range [lo, hi]) and
// known dims with a point range.
void bound(std::vector<TensorSpec>* outs, size_t o, DType dt, std::vector<int64_t> dims,
           std::vector<std::pair<int64_t, int64_t>> ranges) {
  if (o >= outs->size()) return;
  TensorSpec& s = (*outs)[o];
  s.dtype = dt;
  s.dims = std::move(dims);
  s.range = std::move(ranges);
}

// Upper bound of x's element count: from dims, else from dim ranges; -1 unbounded.
int64_t max_elements(const TensorSpec& x) {
  if (x.unknown_rank()) return -1;
  int64_t n = 1;
  for (size_t i = 0; i < x.dims.size(); ++i) {
    int64_t d = x.dims[i];
    if (d < 0) d = i < x.range.size() ? x.range[i].second : -1;
    if (d < 0) return -1;
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

Status build_nonzero(BuildContext& c, bool transpose, DType dt) {
  const int64_t r = rank_of(c, 0);
  if (r == 0) return c.bad_input("x %s is a scalar; NonZero needs rank >= 1", c.input_spec(0).str().c_str());
  if (!is_index(dt)) return c.bad_attr("dtype must be int32 or int64, not %s", graph::dtype_name(dt));
  Value* y = c.add1("NonZero", {c.input(0)});  // [rank, n]
  if (!transpose) y = c.add1("Transpose", {y}, onnx_attrs({{"perm", onnx_ints({1, 0})}}));
  if (dt != DType::kInt64) y = cast_to(c, y, dt);
  c.set_output(0, y);
  return Status::Ok();
}

Status nonzero_bounds(const std::vector<TensorSpec>& in, bool transpose, DType dt, std::vector<TensorSpec>* outs) {
  if (in.empty() || in[0].unknown_rank()) {
    bound(outs, 0, dt, {-1, -1}, {{0, -1}, {0, -1}});
    return Status::Ok();
  }
  const int64_t r = static_cast<int64_t>(in[0].dims.size()), n = max_elements(in[0]);
  if (transpose) bound(outs, 0, dt, {r, -1}, {{r, r}, {0, n}});
  else bound(outs, 0, dt, {-1, r}, {{0, n}, {r, r}});
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(NonZero)
    .summary("Coordinates of the non-zero elements of x: [n, rank], or [rank, n] with transpose (data-dependent n)")
    .input("x")
    .output("y")
    .attr_bool("transpose", false)
    .attr("dtype", AttrValue::of_data_type(9))  // ACL_INT64
    .dtypes(movable())
    .bounds([](const std::vector<TensorSpec>& in, const OpAttrs& a, std::vector<TensorSpec>* outs) {
      return nonzero_bounds(in, attr_bool(a, "transpose", false), attr_dtype(a, "dtype", DType::kInt64), outs);
    })
    .build([](BuildContext& c) -> Status { return build_nonzero(c, c.get_bool("transpose"), c.get_dtype("dtype")); });

OPENACL_REGISTER_ASCEND_OP(Where)
    .summary("Coordinates of the true / non-zero elements of x as int64 [n, rank] (TensorFlow where with one input)")
    .input("x")
    .output("y")
    .dtypes(movable())
    .bounds([](const std::vector<TensorSpec>& in, const OpAttrs&, std::vector<TensorSpec>* outs) {
      return nonzero_bounds(in, false, DType::kInt64, outs);
    })
    .build([](BuildContext& c) -> Status { return build_nonzero(c, false, DType::kInt64); });

// TF Unique: y = the distinct values of 1-D x in order of first occurrence
// (ONNX Unique sorted=0), idx[i] = position of x[i] in y, count = occurrences.
Status build_unique(BuildContext& c, bool counts) {
  const int64_t r = rank_of(c, 0);
  if (r != 1 && r >= 0) return c.bad_input("x %s must be 1-D", c.input_spec(0).str().c_str());
  DType it = c.get_dtype("out_idx");
  if (!is_index(it)) return c.bad_attr("out_idx must be int32 or int64, not %s", graph::dtype_name(it));
  auto u = c.add("Unique", {c.input(0)}, onnx_attrs({{"sorted", onnx_int(0)}}), 4);
  c.set_output(0, u[0]);
  c.set_output(1, it == DType::kInt64 ? u[2] : cast_to(c, u[2], it));
  if (counts) c.set_output(2, it == DType::kInt64 ? u[3] : cast_to(c, u[3], it));
  return Status::Ok();
}

Status unique_bounds(const std::vector<TensorSpec>& in, const OpAttrs& a, bool counts, std::vector<TensorSpec>* outs) {
  const DType it = attr_dtype(a, "out_idx", DType::kInt32);
  const DType xt = in.empty() ? DType::kUndefined : in[0].dtype;
  const int64_t n = in.empty() ? -1 : max_elements(in[0]);
  const int64_t lo = n == 0 ? 0 : (n > 0 && !in.empty() && in[0].static_shape() ? 1 : 0);
  bound(outs, 0, xt, {-1}, {{lo, n}});
  const int64_t xn = (!in.empty() && in[0].static_shape()) ? in[0].elements() : -1;
  if (xn >= 0) bound(outs, 1, it, {xn}, {{xn, xn}});
  else bound(outs, 1, it, {-1}, {{0, n}});
  if (counts) bound(outs, 2, it, {-1}, {{lo, n}});
  return Status::Ok();
}

OPENACL_REGISTER_ASCEND_OP(Unique)
    .summary("Distinct values of 1-D x in first-occurrence order (y, data-dependent length) and idx into y per element")
    .input("x")
    .output("y").output("idx")
    .attr("out_idx", AttrValue::of_data_type(3))  // ACL_INT32
    .dtypes(movable())
    .bounds([](const std::vector<TensorSpec>& in, const OpAttrs& a, std::vector<TensorSpec>* outs) {
      return unique_bounds(in, a, false, outs);
    })
    .build([](BuildContext& c) -> Status { return build_unique(c, false); });

OPENACL_REGISTER_ASCEND_OP(UniqueWithCounts)
    .summary("Unique with the number of occurrences of each distinct value (count)")
    .input("x")
    .output("y").output("idx").output("count")
    .attr("out_idx", AttrValue::of_data_type(3))
    .dtypes(movable())
    .bounds([](const std::vector<TensorSpec>& in, const OpAttrs& a, std::vector<TensorSpec>* outs) {
      return unique_bounds(in, a, true, outs);
    })
    .build([](BuildContext& c) -> Status { return build_unique(c, true); });

OPENACL_REGISTER_ASCEND_OP(MaskedSelect)
    .summary("The elements of x where mask is true (both broadcast), as a 1-D tensor of data-dependent length")
    .input("x").input("mask")
    .output("y")
    .dtypes(movable())
    .bounds([](const std::vector<TensorSpec>& in, const OpAttrs&, std::vector<TensorSpec>* outs) {
      std::vector<int64_t> b;
      int64_t n = -1;
      if (in.size() == 2 && in[0].static_shape() && in[1].static_shape() &&
          broadcast_dims(in[0].dims, in[1].dims, &b)) {
        n = 1;
        for (int64_t d : b) n *= d;
      }
      bound(outs, 0, in.empty() ? DType::kUndefined : in[0].dtype, {-1}, {{0, n}});
      return Status::Ok();
    })
    .build([](BuildContext& c) -> Status {
      if (!static_input(c, 0) || !static_input(c, 1))
        return c.bad_input("MaskedSelect needs static shapes for x %s and mask %s", c.input_spec(0).str().c_str(),
                           c.input_spec(1).str().c_str());
      if (c.input_spec(1).dtype != DType::kBool)
        return c.bad_input("mask must be bool, not %s", graph::dtype_name(c.input_spec(1).dtype));
      std::vector<int64_t> b;
      if (!broadcast_dims(c.input_spec(0).dims, c.input_spec(1).dims, &b))
        return c.bad_input("x %s and mask %s do not broadcast", c.input_spec(0).str().c_str(),
                           c.input_spec(1).str().c_str());
      Value* x = c.input(0);
      Value* m = c.input(1);
      if (c.input_spec(0).dims != b) x = c.add1("Expand", {x, c.const_i64(b)});
      if (c.input_spec(1).dims != b) m = c.add1("Expand", {m, c.const_i64(b)});
      Value* flat = c.const_i64({-1});
      c.set_output(0, c.add1("Compress", {c.add1("Reshape", {x, flat}), c.add1("Reshape", {m, flat})}));
      return Status::Ok();
    });

}  // namespace
}  // namespace openacl::op
