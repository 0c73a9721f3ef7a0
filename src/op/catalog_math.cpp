// The element-wise family of the Ascend op catalogue: arithmetic, math
// functions, activations, softmax, comparisons, logic and selection, with
// Ascend input and attribute names (TensorFlow's, which Ascend mirrors).
//
// Most entries are one ONNX node. Ascend ops without an ONNX twin are composed
// from a few (Rsqrt = Reciprocal(Sqrt), FloorDiv on integers = (x1 - x1 mod x2)
// / x2, DivNoNan = Where(x2 == 0, 0, x1 / x2), ...); the composition is the
// op's definition, so it is written where the entry is. Broadcasting is
// numpy's, as the ONNX ops do it.
//
// Declared dtypes are those every node of an entry's graph has a CPU kernel
// for (src/kernels/cpu); float16 is computed by those kernels (in float, then
// rounded per node). Add and Cast live in catalog_core.cpp.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "op/catalog.h"

namespace openacl::op {
namespace {

using graph::Value;

// Dtype sets (what the entries' kernels take; see the file comment).
const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat16, DType::kFloat64};
// Arithmetic: the float types and the integer types Ascend arithmetic takes.
const std::vector<DType> kReal = {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt8,
                                  DType::kInt16,   DType::kInt32,   DType::kInt64,   DType::kUInt8};
const std::vector<DType> kSigned = {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt8,
                                    DType::kInt16,   DType::kInt32,   DType::kInt64};
const std::vector<DType> kRealBool = {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt8, DType::kInt16,
                                      DType::kInt32,   DType::kInt64,   DType::kUInt8,   DType::kBool};
const std::vector<DType> kBool = {DType::kBool};
const std::vector<DType> kInts = {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
                                  DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
// ONNX Pow's CPU kernel: floats, int32, int64.
const std::vector<DType> kPowTypes = {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt32, DType::kInt64};

bool contains(const std::vector<DType>& set, DType t) {
  for (DType d : set)
    if (d == t) return true;
  return false;
}

graph::AttributeMap onnx_attrs(std::initializer_list<std::pair<const char*, graph::Attribute>> list) {
  graph::AttributeMap m;
  for (const auto& [name, a] : list) m.set(name, a);
  return m;
}

std::string input_name(const BuildContext& c, size_t i) {
  const auto& ports = c.def().inputs;
  if (i < ports.size() && !ports[i].dynamic) return ports[i].name;
  const size_t first = ports.empty() ? 0 : ports.size() - 1;
  return (ports.empty() ? std::string("x") : ports.back().name) + std::to_string(i - first);
}

// Inputs [first, num_inputs) must have input `ref`'s dtype. The ONNX shape
// functions reject mixed types as well; this message names the Ascend inputs
// and says what to do.
Status same_type(const BuildContext& c, size_t first = 1, size_t ref = 0) {
  const DType t = c.input_spec(ref).dtype;
  for (size_t i = first; i < c.num_inputs(); ++i) {
    if (i == ref || c.input_spec(i).dtype == t) continue;
    return c.bad_input("%s is %s but %s is %s; the inputs must share one type (Cast one of them first)",
                       input_name(c, ref).c_str(), graph::dtype_name(t), input_name(c, i).c_str(),
                       graph::dtype_name(c.input_spec(i).dtype));
  }
  return Status::Ok();
}

// Whether `v` converts to `t` without overflow (scalar attributes like Adds'
// value become constants of x's type).
bool fits(DType t, double v) {
  if (graph::dtype_is_float(t) || t == DType::kBool) return true;
  if (!std::isfinite(v)) return false;
  auto in = [v](auto lo, auto hi) { return v >= static_cast<double>(lo) && v <= static_cast<double>(hi); };
  switch (t) {
    case DType::kInt8: return in(INT8_MIN, INT8_MAX);
    case DType::kUInt8: return in(0, UINT8_MAX);
    case DType::kInt16: return in(INT16_MIN, INT16_MAX);
    case DType::kUInt16: return in(0, UINT16_MAX);
    case DType::kInt32: return in(INT32_MIN, INT32_MAX);
    case DType::kUInt32: return in(0, UINT32_MAX);
    // 2^63 is not an int64; the largest double below it is.
    case DType::kInt64: return v >= -9223372036854775808.0 && v < 9223372036854775808.0;
    case DType::kUInt64: return v >= 0 && v < 18446744073709551616.0;
    default: return false;
  }
}

// One ONNX node on every input, in order.
BuildFn direct(std::string onnx_op, graph::AttributeMap attrs = {}, int opset = kCatalogOpset) {
  return [onnx_op, attrs, opset](BuildContext& c) -> Status {
    OPENACL_RETURN_IF_ERROR(same_type(c));
    std::vector<Value*> in;
    for (size_t i = 0; i < c.num_inputs(); ++i) in.push_back(c.input(i));
    c.set_output(0, c.add1(onnx_op, in, attrs, opset));
    return Status::Ok();
  };
}

Value* scalar_like(BuildContext& c, double v) { return c.const_scalar(c.input_spec(0).dtype, v); }

// Normalised, checked softmax axes (rank known), or the axes as given when the
// rank is unknown (the ONNX ops check them then).
Status softmax_axes(const BuildContext& c, std::vector<int64_t>* axes) {
  *axes = c.get_ints("axes");
  if (axes->empty()) return c.bad_attr("axes is empty; give at least one axis (default [-1], the last)");
  const TensorSpec& x = c.input_spec(0);
  if (x.unknown_rank()) return Status::Ok();
  const int64_t r = static_cast<int64_t>(x.dims.size());
  std::set<int64_t> seen;
  for (int64_t& a : *axes) {
    if (a < -r || a >= r)
      return c.bad_attr("axis %lld is out of range for x of rank %lld; axes are in [%lld, %lld]",
                        static_cast<long long>(a), static_cast<long long>(r), static_cast<long long>(-r),
                        static_cast<long long>(r - 1));
    if (a < 0) a += r;
    if (!seen.insert(a).second) return c.bad_attr("axis %lld is given twice in axes", static_cast<long long>(a));
  }
  return Status::Ok();
}

// Softmax over several axes has no ONNX op: exp(x - max) / sum(exp(x - max))
// over the axes (the max keeps exp in range, as the kernels do per row).
Status softmax_build(BuildContext& c, bool log) {
  std::vector<int64_t> axes;
  OPENACL_RETURN_IF_ERROR(softmax_axes(c, &axes));
  Value* x = c.input(0);
  if (axes.size() == 1) {
    c.set_output(0, c.add1(log ? "LogSoftmax" : "Softmax", {x}, onnx_attrs({{"axis", onnx_int(axes[0])}})));
    return Status::Ok();
  }
  const graph::AttributeMap keep = onnx_attrs({{"keepdims", onnx_int(1)}});
  Value* m = c.add1("ReduceMax", {x, c.const_i64(axes)}, keep);
  Value* shifted = c.add1("Sub", {x, m});
  Value* e = c.add1("Exp", {shifted});
  Value* s = c.add1("ReduceSum", {e, c.const_i64(axes)}, keep);
  c.set_output(0, log ? c.add1("Sub", {shifted, c.add1("Log", {s})}) : c.add1("Div", {e, s}));
  return Status::Ok();
}

// Adds / Subs / Muls: x op value, value converted to x's type.
BuildFn scalar_op(const char* onnx_op) {
  return [onnx_op](BuildContext& c) -> Status {
    const float v = c.get_float("value");
    const DType t = c.input_spec(0).dtype;
    if (!fits(t, v))
      return c.bad_attr("value %g does not fit x's type %s", static_cast<double>(v), graph::dtype_name(t));
    c.set_output(0, c.add1(onnx_op, {c.input(0), scalar_like(c, v)}));
    return Status::Ok();
  };
}

// Shape [n] → [n, 1, ..., 1] of rank `rank` (so a per-row / per-channel vector
// broadcasts against dim 0 / 1 instead of the last dim).
Value* unsqueeze_tail(BuildContext& c, Value* v, int64_t first_axis, int64_t rank) {
  std::vector<int64_t> axes;
  for (int64_t a = first_axis; a < rank; ++a) axes.push_back(a);
  if (axes.empty()) return v;
  return c.add1("Unsqueeze", {v, c.const_i64(axes)});
}

}  // namespace

// ---------------------------------------------------------------- arithmetic

OPENACL_REGISTER_ASCEND_OP(Sub)
    .summary("x1 - x2, numpy broadcasting; integers wrap around")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build(direct("Sub"));

OPENACL_REGISTER_ASCEND_OP(Mul)
    .summary("x1 * x2, numpy broadcasting; integers wrap around")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build(direct("Mul"));

// Integer division truncates toward zero (TensorFlow's RealDiv / Div kernels);
// an integer divided by zero gives 0 (the engine's defined value, no trap).
OPENACL_REGISTER_ASCEND_OP(RealDiv)
    .summary("x1 / x2, numpy broadcasting; integers truncate toward zero, x / 0 = 0 for integers")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build(direct("Div"));

OPENACL_REGISTER_ASCEND_OP(Div)
    .summary("x1 / x2, numpy broadcasting; integers truncate toward zero, x / 0 = 0 for integers")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build(direct("Div"));

OPENACL_REGISTER_ASCEND_OP(DivNoNan)
    .summary("x1 / x2, and 0 where x2 is 0 (also 0 / 0)")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      Value* zero = scalar_like(c, 0);
      Value* q = c.add1("Div", {c.input(0), c.input(1)});
      Value* is_zero = c.add1("Equal", {c.input(1), zero});
      // Where broadcasts the zero scalar to the quotient's shape.
      c.set_output(0, c.add1("Where", {is_zero, zero, q}));
      return Status::Ok();
    });

// floor(x1 / x2). Floats: Floor(Div). Integers: x1 - (x1 mod x2) is a
// multiple of x2 when mod takes the divisor's sign (ONNX Mod fmod=0), so the
// division is exact and no rounding step is needed; x / 0 = 0.
OPENACL_REGISTER_ASCEND_OP(FloorDiv)
    .summary("floor(x1 / x2), numpy broadcasting; x / 0 = 0 for integers")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      Value* x = c.input(0);
      Value* y = c.input(1);
      if (graph::dtype_is_float(c.input_spec(0).dtype)) {
        c.set_output(0, c.add1("Floor", {c.add1("Div", {x, y})}));
      } else {
        Value* r = c.add1("Mod", {x, y}, onnx_attrs({{"fmod", onnx_int(0)}}));
        c.set_output(0, c.add1("Div", {c.add1("Sub", {x, r}), y}));
      }
      return Status::Ok();
    });

// The remainder takes the divisor's sign (numpy.mod, Python's %). ONNX Mod
// defines that for floats from opset 28.
OPENACL_REGISTER_ASCEND_OP(FloorMod)
    .summary("x1 - floor(x1 / x2) * x2: the remainder has x2's sign; integers: x mod 0 = 0")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build(direct("Mod", onnx_attrs({{"fmod", onnx_int(0)}}), 28));

// Truncated remainder (C's fmod / %): the remainder has x1's sign.
OPENACL_REGISTER_ASCEND_OP(Mod)
    .summary("truncated remainder of x1 / x2 (C fmod): the remainder has x1's sign; integers: x mod 0 = 0")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build(direct("Mod", onnx_attrs({{"fmod", onnx_int(1)}})));

OPENACL_REGISTER_ASCEND_OP(Pow)
    .summary("x1 ** x2, numpy broadcasting")
    .input("x1").input("x2").output("y")
    .dtypes(kPowTypes)
    .build(direct("Pow"));

OPENACL_REGISTER_ASCEND_OP(Maximum)
    .summary("element-wise max(x1, x2), numpy broadcasting; NaN propagates")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build(direct("Max"));

OPENACL_REGISTER_ASCEND_OP(Minimum)
    .summary("element-wise min(x1, x2), numpy broadcasting; NaN propagates")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build(direct("Min"));

OPENACL_REGISTER_ASCEND_OP(SquaredDifference)
    .summary("(x1 - x2)^2, numpy broadcasting")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      Value* d = c.add1("Sub", {c.input(0), c.input(1)});
      c.set_output(0, c.add1("Mul", {d, d}));
      return Status::Ok();
    });

// N: the number of inputs (Ascend's attribute); when set it must match.
OPENACL_REGISTER_ASCEND_OP(AddN)
    .summary("sum of the N inputs x0..x{N-1}, numpy broadcasting")
    .dynamic_input("x").output("y")
    .optional_attr("N", AttrValue::Kind::kInt)
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      if (c.attr_set_by_caller("N") && c.get_int("N") != static_cast<int64_t>(c.num_inputs()))
        return c.bad_attr("N is %lld but %zu inputs were given; N must be the number of inputs",
                          static_cast<long long>(c.get_int("N")), c.num_inputs());
      OPENACL_RETURN_IF_ERROR(same_type(c));
      c.set_output(0, c.add1("Sum", c.inputs_from(0)));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Adds)
    .summary("x + value (value converted to x's type; integers truncate it)")
    .input("x").output("y")
    .required_attr("value", AttrValue::Kind::kFloat)
    .dtypes(kReal)
    .build(scalar_op("Add"));

OPENACL_REGISTER_ASCEND_OP(Subs)
    .summary("x - value (value converted to x's type; integers truncate it)")
    .input("x").output("y")
    .required_attr("value", AttrValue::Kind::kFloat)
    .dtypes(kReal)
    .build(scalar_op("Sub"));

OPENACL_REGISTER_ASCEND_OP(Muls)
    .summary("x * value (value converted to x's type; integers truncate it)")
    .input("x").output("y")
    .required_attr("value", AttrValue::Kind::kFloat)
    .dtypes(kReal)
    .build(scalar_op("Mul"));

OPENACL_REGISTER_ASCEND_OP(Axpy)
    .summary("x1 * alpha + x2, numpy broadcasting (alpha converted to the inputs' type)")
    .input("x1").input("x2").output("y")
    .required_attr("alpha", AttrValue::Kind::kFloat)
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      const float alpha = c.get_float("alpha");
      const DType t = c.input_spec(0).dtype;
      if (!fits(t, alpha))
        return c.bad_attr("alpha %g does not fit the inputs' type %s", static_cast<double>(alpha),
                          graph::dtype_name(t));
      Value* scaled = c.add1("Mul", {c.input(0), scalar_like(c, alpha)});
      c.set_output(0, c.add1("Add", {scaled, c.input(1)}));
      return Status::Ok();
    });

// Quotient truncated toward zero. Integers: Div already truncates. Floats:
// floor for a positive quotient, ceil for a negative one.
OPENACL_REGISTER_ASCEND_OP(TruncateDiv)
    .summary("x1 / x2 truncated toward zero, numpy broadcasting; x / 0 = 0 for integers")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      Value* q = c.add1("Div", {c.input(0), c.input(1)});
      if (graph::dtype_is_float(c.input_spec(0).dtype)) {
        Value* negative = c.add1("Less", {q, scalar_like(c, 0)});
        q = c.add1("Where", {negative, c.add1("Ceil", {q}), c.add1("Floor", {q})});
      }
      c.set_output(0, q);
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(TruncateMod)
    .summary("truncated remainder of x1 / x2 (C fmod), as Mod; integers: x mod 0 = 0")
    .input("x1").input("x2").output("y")
    .dtypes(kReal)
    .build(direct("Mod", onnx_attrs({{"fmod", onnx_int(1)}})));

// x * log(y) and x / y, defined as 0 where x is 0 (whatever y is).
OPENACL_REGISTER_ASCEND_OP(Xlogy)
    .summary("x1 * log(x2), and 0 where x1 is 0")
    .input("x1").input("x2").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      Value* zero = scalar_like(c, 0);
      Value* v = c.add1("Mul", {c.input(0), c.add1("Log", {c.input(1)})});
      c.set_output(0, c.add1("Where", {c.add1("Equal", {c.input(0), zero}), zero, v}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Xdivy)
    .summary("x1 / x2, and 0 where x1 is 0")
    .input("x1").input("x2").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      Value* zero = scalar_like(c, 0);
      Value* v = c.add1("Div", {c.input(0), c.input(1)});
      c.set_output(0, c.add1("Where", {c.add1("Equal", {c.input(0), zero}), zero, v}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Lerp)
    .summary("start + weight * (end - start), numpy broadcasting")
    .input("start").input("end").input("weight").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      Value* d = c.add1("Sub", {c.input(1), c.input(0)});
      c.set_output(0, c.add1("Add", {c.input(0), c.add1("Mul", {c.input(2), d})}));
      return Status::Ok();
    });

// ------------------------------------------------------------------- bitwise

OPENACL_REGISTER_ASCEND_OP(BitwiseAnd).summary("x1 & x2, numpy broadcasting").input("x1").input("x2").output("y")
    .dtypes(kInts).build(direct("BitwiseAnd"));
OPENACL_REGISTER_ASCEND_OP(BitwiseOr).summary("x1 | x2, numpy broadcasting").input("x1").input("x2").output("y")
    .dtypes(kInts).build(direct("BitwiseOr"));
OPENACL_REGISTER_ASCEND_OP(BitwiseXor).summary("x1 ^ x2, numpy broadcasting").input("x1").input("x2").output("y")
    .dtypes(kInts).build(direct("BitwiseXor"));
OPENACL_REGISTER_ASCEND_OP(Invert).summary("~x (bitwise not)").input("x").output("y").dtypes(kInts)
    .build(direct("BitwiseNot"));

// Shifts by a negative amount or by the bit width or more: 0 (left) or the
// sign fill (right), as ONNX BitShift defines from opset 28 (which also takes
// signed types; right shifts of signed values are arithmetic).
OPENACL_REGISTER_ASCEND_OP(LeftShift)
    .summary("x << y, numpy broadcasting; shifts out of [0, bits) give 0")
    .input("x").input("y").output("z")
    .dtypes(kInts)
    .build(direct("BitShift", onnx_attrs({{"direction", onnx_string("LEFT")}}), 28));

OPENACL_REGISTER_ASCEND_OP(RightShift)
    .summary("x >> y (arithmetic for signed x), numpy broadcasting; shifts out of [0, bits) give the sign fill")
    .input("x").input("y").output("z")
    .dtypes(kInts)
    .build(direct("BitShift", onnx_attrs({{"direction", onnx_string("RIGHT")}}), 28));

// ------------------------------------------------------------ math functions

// y = base ^ (shift + scale * x); base -1 means e.
OPENACL_REGISTER_ASCEND_OP(Exp)
    .summary("base ^ (shift + scale * x); base -1 (default) is e")
    .input("x").output("y")
    .attr_float("base", -1.0f).attr_float("scale", 1.0f).attr_float("shift", 0.0f)
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      const float base = c.get_float("base"), scale = c.get_float("scale"), shift = c.get_float("shift");
      if (!(base > 0 || base == -1.0f))
        return c.bad_attr("base %g is not valid; give a positive base, or -1 for e", static_cast<double>(base));
      Value* t = c.input(0);
      if (scale != 1.0f) t = c.add1("Mul", {t, scalar_like(c, scale)});
      if (shift != 0.0f) t = c.add1("Add", {t, scalar_like(c, shift)});
      if (base != -1.0f) t = c.add1("Mul", {t, scalar_like(c, std::log(static_cast<double>(base)))});
      c.set_output(0, c.add1("Exp", {t}));
      return Status::Ok();
    });

// y = log_base(shift + scale * x); base -1 means e.
OPENACL_REGISTER_ASCEND_OP(Log)
    .summary("log_base(shift + scale * x); base -1 (default) is e")
    .input("x").output("y")
    .attr_float("base", -1.0f).attr_float("scale", 1.0f).attr_float("shift", 0.0f)
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      const float base = c.get_float("base"), scale = c.get_float("scale"), shift = c.get_float("shift");
      if (!((base > 0 && base != 1.0f) || base == -1.0f))
        return c.bad_attr("base %g is not valid; give a positive base other than 1, or -1 for e",
                          static_cast<double>(base));
      Value* t = c.input(0);
      if (scale != 1.0f) t = c.add1("Mul", {t, scalar_like(c, scale)});
      if (shift != 0.0f) t = c.add1("Add", {t, scalar_like(c, shift)});
      Value* y = c.add1("Log", {t});
      if (base != -1.0f) y = c.add1("Mul", {y, scalar_like(c, 1.0 / std::log(static_cast<double>(base)))});
      c.set_output(0, y);
      return Status::Ok();
    });

// log(1 + x) loses x's low bits when |x| is small (1 + x rounds). For
// |x| < 0.5 this uses log(u) * x / (u - 1) with u = 1 + x, where u - 1 is exact
// and the ratio cancels u's rounding error (Goldberg, "What every computer
// scientist should know about floating-point arithmetic", thm. 4); x itself
// where u rounds to 1.
OPENACL_REGISTER_ASCEND_OP(Log1p)
    .summary("log(1 + x), accurate for small x")
    .input("x").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      Value* x = c.input(0);
      Value* u = c.add1("Add", {x, scalar_like(c, 1)});
      Value* log_u = c.add1("Log", {u});
      Value* d = c.add1("Sub", {u, scalar_like(c, 1)});
      Value* small = c.add1("Mul", {log_u, c.add1("Div", {x, d})});
      small = c.add1("Where", {c.add1("Equal", {d, scalar_like(c, 0)}), x, small});
      Value* near0 = c.add1("Less", {c.add1("Abs", {x}), scalar_like(c, 0.5)});
      c.set_output(0, c.add1("Where", {near0, small, log_u}));
      return Status::Ok();
    });

// exp(x) - 1 cancels when |x| is small. For |x| < 0.5: (u - 1) * x / log(u)
// with u = exp(x) (Kahan's expm1; the ratio x / log(u) cancels u's rounding);
// x itself where u rounds to 1.
OPENACL_REGISTER_ASCEND_OP(Expm1)
    .summary("exp(x) - 1, accurate for small x")
    .input("x").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      Value* x = c.input(0);
      Value* u = c.add1("Exp", {x});
      Value* um1 = c.add1("Sub", {u, scalar_like(c, 1)});
      Value* small = c.add1("Mul", {um1, c.add1("Div", {x, c.add1("Log", {u})})});
      small = c.add1("Where", {c.add1("Equal", {um1, scalar_like(c, 0)}), x, small});
      Value* near0 = c.add1("Less", {c.add1("Abs", {x}), scalar_like(c, 0.5)});
      c.set_output(0, c.add1("Where", {near0, small, um1}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Sqrt).summary("sqrt(x); NaN below 0").input("x").output("y").dtypes(kFloats)
    .build(direct("Sqrt"));

OPENACL_REGISTER_ASCEND_OP(Rsqrt)
    .summary("1 / sqrt(x)")
    .input("x").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("Reciprocal", {c.add1("Sqrt", {c.input(0)})}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Reciprocal).summary("1 / x").input("x").output("y").dtypes(kFloats)
    .build(direct("Reciprocal"));
OPENACL_REGISTER_ASCEND_OP(Inv).summary("1 / x (Reciprocal's other name)").input("x").output("y").dtypes(kFloats)
    .build(direct("Reciprocal"));
OPENACL_REGISTER_ASCEND_OP(Abs).summary("|x|").input("x").output("y").dtypes(kReal).build(direct("Abs"));
OPENACL_REGISTER_ASCEND_OP(Neg).summary("-x; integers wrap around").input("x").output("y").dtypes(kSigned)
    .build(direct("Neg"));

OPENACL_REGISTER_ASCEND_OP(Square)
    .summary("x * x; integers wrap around")
    .input("x").output("y")
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("Mul", {c.input(0), c.input(0)}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Floor).summary("floor(x)").input("x").output("y").dtypes(kFloats).build(direct("Floor"));
OPENACL_REGISTER_ASCEND_OP(Ceil).summary("ceil(x)").input("x").output("y").dtypes(kFloats).build(direct("Ceil"));
OPENACL_REGISTER_ASCEND_OP(Round).summary("x rounded to the nearest integer, halves to even").input("x").output("y")
    .dtypes(kFloats).build(direct("Round"));
OPENACL_REGISTER_ASCEND_OP(Sign).summary("-1, 0 or 1 by x's sign (NaN stays NaN)").input("x").output("y")
    .dtypes(kReal).build(direct("Sign"));
OPENACL_REGISTER_ASCEND_OP(Sin).summary("sin(x)").input("x").output("y").dtypes(kFloats).build(direct("Sin"));
OPENACL_REGISTER_ASCEND_OP(Cos).summary("cos(x)").input("x").output("y").dtypes(kFloats).build(direct("Cos"));
OPENACL_REGISTER_ASCEND_OP(Tan).summary("tan(x)").input("x").output("y").dtypes(kFloats).build(direct("Tan"));
OPENACL_REGISTER_ASCEND_OP(Asin).summary("arcsin(x); NaN outside [-1, 1]").input("x").output("y").dtypes(kFloats)
    .build(direct("Asin"));
OPENACL_REGISTER_ASCEND_OP(Acos).summary("arccos(x); NaN outside [-1, 1]").input("x").output("y").dtypes(kFloats)
    .build(direct("Acos"));
OPENACL_REGISTER_ASCEND_OP(Atan).summary("arctan(x)").input("x").output("y").dtypes(kFloats).build(direct("Atan"));
OPENACL_REGISTER_ASCEND_OP(Sinh).summary("sinh(x)").input("x").output("y").dtypes(kFloats).build(direct("Sinh"));
OPENACL_REGISTER_ASCEND_OP(Cosh).summary("cosh(x)").input("x").output("y").dtypes(kFloats).build(direct("Cosh"));
OPENACL_REGISTER_ASCEND_OP(Asinh).summary("arsinh(x)").input("x").output("y").dtypes(kFloats).build(direct("Asinh"));
OPENACL_REGISTER_ASCEND_OP(Acosh).summary("arcosh(x); NaN below 1").input("x").output("y").dtypes(kFloats)
    .build(direct("Acosh"));
OPENACL_REGISTER_ASCEND_OP(Atanh).summary("artanh(x); NaN outside [-1, 1]").input("x").output("y").dtypes(kFloats)
    .build(direct("Atanh"));
OPENACL_REGISTER_ASCEND_OP(Erf).summary("the error function erf(x)").input("x").output("y").dtypes(kFloats)
    .build(direct("Erf"));

// 1 - erf(x): absolute error of the type's epsilon, so for x above ~3 (float32)
// the tiny true value is lost; no ONNX op computes erfc directly.
OPENACL_REGISTER_ASCEND_OP(Erfc)
    .summary("1 - erf(x) (absolute accuracy: the type's epsilon)")
    .input("x").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("Sub", {scalar_like(c, 1), c.add1("Erf", {c.input(0)})}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(IsNan).summary("x is NaN (bool)").input("x").output("y").dtypes(kFloats)
    .build(direct("IsNaN"));
OPENACL_REGISTER_ASCEND_OP(IsInf).summary("x is +inf or -inf (bool)").input("x").output("y").dtypes(kFloats)
    .build(direct("IsInf"));

// x - x is 0 exactly when x is finite (NaN for inf and NaN).
OPENACL_REGISTER_ASCEND_OP(IsFinite)
    .summary("x is neither inf nor NaN (bool)")
    .input("x").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      Value* d = c.add1("Sub", {c.input(0), c.input(0)});
      c.set_output(0, c.add1("Equal", {d, scalar_like(c, 0)}));
      return Status::Ok();
    });

// min(max(x, lo), hi): the bounds may be scalars or tensors that broadcast.
OPENACL_REGISTER_ASCEND_OP(ClipByValue)
    .summary("x clipped to [clip_value_min, clip_value_max] (scalars or broadcastable tensors)")
    .input("x").input("clip_value_min").input("clip_value_max").output("y")
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      Value* lo = c.add1("Max", {c.input(0), c.input(1)});
      c.set_output(0, c.add1("Min", {lo, c.input(2)}));
      return Status::Ok();
    });

// --------------------------------------------------------------- activations

OPENACL_REGISTER_ASCEND_OP(Relu).summary("max(x, 0)").input("x").output("y").dtypes(kSigned).build(direct("Relu"));

OPENACL_REGISTER_ASCEND_OP(Relu6)
    .summary("min(max(x, 0), 6)")
    .input("x").output("y")
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("Clip", {c.input(0), scalar_like(c, 0), scalar_like(c, 6)}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(LeakyRelu)
    .summary("x where x >= 0, negative_slope * x below")
    .input("x").output("y")
    .attr_float("negative_slope", 0.0f)
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("LeakyRelu", {c.input(0)},
                             onnx_attrs({{"alpha", onnx_float(c.get_float("negative_slope"))}})));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Elu)
    .summary("x where x > 0, alpha * (exp(x) - 1) below")
    .input("x").output("y")
    .attr_float("alpha", 1.0f)
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("Elu", {c.input(0)}, onnx_attrs({{"alpha", onnx_float(c.get_float("alpha"))}})));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Selu)
    .summary("scale * (x where x > 0, alpha * (exp(x) - 1) below), the self-normalising constants")
    .input("x").output("y")
    .dtypes(kFloats)
    .build(direct("Selu"));

OPENACL_REGISTER_ASCEND_OP(Sigmoid).summary("1 / (1 + exp(-x))").input("x").output("y").dtypes(kFloats)
    .build(direct("Sigmoid"));
OPENACL_REGISTER_ASCEND_OP(Tanh).summary("tanh(x)").input("x").output("y").dtypes(kFloats).build(direct("Tanh"));

// Ascend's Gelu is the tanh approximation; GeluV2 chooses.
OPENACL_REGISTER_ASCEND_OP(Gelu)
    .summary("0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), the tanh approximation")
    .input("x").output("y")
    .dtypes(kFloats)
    .build(direct("Gelu", onnx_attrs({{"approximate", onnx_string("tanh")}}), 20));

OPENACL_REGISTER_ASCEND_OP(GeluV2)
    .summary("GELU: approximate \"none\" (x * Phi(x), erf form) or \"tanh\"")
    .input("x").output("y")
    .attr_string("approximate", "none")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      const std::string a = c.get_string("approximate");
      if (a != "none" && a != "tanh") return c.bad_attr("approximate is \"%s\"; it is \"none\" or \"tanh\"", a.c_str());
      c.set_output(0, c.add1("Gelu", {c.input(0)}, onnx_attrs({{"approximate", onnx_string(a)}}), 20));
      return Status::Ok();
    });

// x * sigmoid(1.702 x): ONNX Swish (opset 24) with alpha 1.702 is exactly that.
OPENACL_REGISTER_ASCEND_OP(FastGelu)
    .summary("x * sigmoid(1.702 x)")
    .input("x").output("y")
    .dtypes(kFloats)
    .build(direct("Swish", onnx_attrs({{"alpha", onnx_float(1.702f)}}), 24));

OPENACL_REGISTER_ASCEND_OP(Swish)
    .summary("x * sigmoid(scale * x)")
    .input("x").output("y")
    .attr_float("scale", 1.0f)
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("Swish", {c.input(0)}, onnx_attrs({{"alpha", onnx_float(c.get_float("scale"))}}), 24));
      return Status::Ok();
    });

// Ascend's defaults (alpha 1/6) differ from ONNX's (0.2): always passed.
OPENACL_REGISTER_ASCEND_OP(HardSigmoid)
    .summary("max(0, min(1, alpha * x + beta))")
    .input("x").output("y")
    .attr_float("alpha", 0.16666666f).attr_float("beta", 0.5f)
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("HardSigmoid", {c.input(0)},
                             onnx_attrs({{"alpha", onnx_float(c.get_float("alpha"))},
                                         {"beta", onnx_float(c.get_float("beta"))}})));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(HardSwish).summary("x * max(0, min(1, x / 6 + 0.5))").input("x").output("y")
    .dtypes(kFloats).build(direct("HardSwish"));
OPENACL_REGISTER_ASCEND_OP(Mish).summary("x * tanh(softplus(x))").input("x").output("y").dtypes(kFloats)
    .build(direct("Mish"));
OPENACL_REGISTER_ASCEND_OP(Softplus).summary("log(1 + exp(x))").input("x").output("y").dtypes(kFloats)
    .build(direct("Softplus"));
OPENACL_REGISTER_ASCEND_OP(Softsign).summary("x / (1 + |x|)").input("x").output("y").dtypes(kFloats)
    .build(direct("Softsign"));

// log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (where
// the two agree to the type's precision and exp would overflow).
OPENACL_REGISTER_ASCEND_OP(SoftplusV2)
    .summary("log(1 + exp(beta * x)) / beta; x where beta * x > threshold")
    .input("x").output("y")
    .attr_float("beta", 1.0f).attr_float("threshold", 20.0f)
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      const float beta = c.get_float("beta");
      if (beta == 0 || !std::isfinite(beta))
        return c.bad_attr("beta %g is not valid; give a finite non-zero beta", static_cast<double>(beta));
      Value* x = c.input(0);
      Value* bx = beta == 1.0f ? x : c.add1("Mul", {x, scalar_like(c, beta)});
      Value* sp = c.add1("Softplus", {bx});
      if (beta != 1.0f) sp = c.add1("Div", {sp, scalar_like(c, beta)});
      Value* big = c.add1("Greater", {bx, scalar_like(c, c.get_float("threshold"))});
      c.set_output(0, c.add1("Where", {big, x, sp}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(LogSigmoid)
    .summary("log(sigmoid(x)) = -softplus(-x)")
    .input("x").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      c.set_output(0, c.add1("Neg", {c.add1("Softplus", {c.add1("Neg", {c.input(0)})})}));
      return Status::Ok();
    });

// ONNX Shrink: x + bias below -lambd, x - bias above lambd, 0 between.
OPENACL_REGISTER_ASCEND_OP(HardShrink)
    .summary("x where |x| > lambd, else 0")
    .input("input_x").output("output_y")
    .attr_float("lambd", 0.5f)
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      const float l = c.get_float("lambd");
      if (!(l >= 0)) return c.bad_attr("lambd %g is negative; it is a threshold >= 0", static_cast<double>(l));
      c.set_output(0, c.add1("Shrink", {c.input(0)}, onnx_attrs({{"lambd", onnx_float(l)}, {"bias", onnx_float(0)}})));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(SoftShrink)
    .summary("x - lambd above lambd, x + lambd below -lambd, else 0")
    .input("input_x").output("output_y")
    .attr_float("lambd", 0.5f)
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      const float l = c.get_float("lambd");
      if (!(l >= 0)) return c.bad_attr("lambd %g is negative; it is a threshold >= 0", static_cast<double>(l));
      c.set_output(0, c.add1("Shrink", {c.input(0)}, onnx_attrs({{"lambd", onnx_float(l)}, {"bias", onnx_float(l)}})));
      return Status::Ok();
    });

// weight: one slope per channel (dim 1, or the last dim for NHWC) or a single
// slope. ONNX broadcasts a 1-D slope against the last dim, so for NCHW-like x
// the slope becomes [C, 1, ..., 1].
OPENACL_REGISTER_ASCEND_OP(PRelu)
    .summary("x where x >= 0, weight * x below; weight per channel (dim 1; last dim for NHWC) or one value")
    .input("x").input("weight").output("y")
    .dtypes(kFloats)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      const TensorSpec& x = c.input_spec(0);
      const TensorSpec& w = c.input_spec(1);
      Value* slope = c.input(1);
      if (!w.unknown_rank() && w.dims.size() == 1) {
        if (x.unknown_rank())
          return c.unsupported("x has unknown rank, so the channel dim of a 1-D weight cannot be placed; "
                               "describe x with its rank");
        const int64_t r = static_cast<int64_t>(x.dims.size());
        const int64_t channel_axis = (x.format == kFormatNHWC || r < 2) ? r - 1 : 1;
        const int64_t c_dim = r == 0 ? 1 : x.dims[static_cast<size_t>(channel_axis)];
        if (w.dims[0] >= 0 && c_dim >= 0 && w.dims[0] != 1 && w.dims[0] != c_dim)
          return c.bad_input("weight has %lld values but x (%s) has %lld channels; give one slope per channel, or one",
                             static_cast<long long>(w.dims[0]), x.str().c_str(), static_cast<long long>(c_dim));
        if (channel_axis == 1 && r > 2) slope = unsqueeze_tail(c, slope, 1, r - 1);
      }
      c.set_output(0, c.add1("PRelu", {c.input(0), slope}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(SoftmaxV2)
    .summary("exp(x) / sum(exp(x)) over axes (default [-1])")
    .input("x").output("y")
    .attr_ints("axes", {-1})
    .dtypes(kFloats)
    .build([](BuildContext& c) { return softmax_build(c, false); });

OPENACL_REGISTER_ASCEND_OP(Softmax)
    .summary("exp(x) / sum(exp(x)) over axes (default [-1]); SoftmaxV2's older name")
    .input("x").output("y")
    .attr_ints("axes", {-1})
    .dtypes(kFloats)
    .build([](BuildContext& c) { return softmax_build(c, false); });

OPENACL_REGISTER_ASCEND_OP(LogSoftmaxV2)
    .summary("x - log(sum(exp(x))) over axes (default [-1])")
    .input("logits").output("logsoftmax")
    .attr_ints("axes", {-1})
    .dtypes(kFloats)
    .build([](BuildContext& c) { return softmax_build(c, true); });

// ------------------------------------------------------ comparisons and logic

OPENACL_REGISTER_ASCEND_OP(Equal).summary("x1 == x2 (bool), numpy broadcasting").input("x1").input("x2").output("y")
    .dtypes(kRealBool).build(direct("Equal"));

OPENACL_REGISTER_ASCEND_OP(NotEqual)
    .summary("x1 != x2 (bool), numpy broadcasting; NaN != NaN")
    .input("x1").input("x2").output("y")
    .dtypes(kRealBool)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(same_type(c));
      c.set_output(0, c.add1("Not", {c.add1("Equal", {c.input(0), c.input(1)})}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(Less).summary("x1 < x2 (bool), numpy broadcasting").input("x1").input("x2").output("y")
    .dtypes(kReal).build(direct("Less"));
OPENACL_REGISTER_ASCEND_OP(LessEqual).summary("x1 <= x2 (bool), numpy broadcasting").input("x1").input("x2")
    .output("y").dtypes(kReal).build(direct("LessOrEqual"));
OPENACL_REGISTER_ASCEND_OP(Greater).summary("x1 > x2 (bool), numpy broadcasting").input("x1").input("x2").output("y")
    .dtypes(kReal).build(direct("Greater"));
OPENACL_REGISTER_ASCEND_OP(GreaterEqual).summary("x1 >= x2 (bool), numpy broadcasting").input("x1").input("x2")
    .output("y").dtypes(kReal).build(direct("GreaterOrEqual"));

OPENACL_REGISTER_ASCEND_OP(LogicalAnd).summary("x1 and x2 (bool), numpy broadcasting").input("x1").input("x2")
    .output("y").dtypes(kBool).build(direct("And"));
OPENACL_REGISTER_ASCEND_OP(LogicalOr).summary("x1 or x2 (bool), numpy broadcasting").input("x1").input("x2")
    .output("y").dtypes(kBool).build(direct("Or"));
OPENACL_REGISTER_ASCEND_OP(LogicalNot).summary("not x (bool)").input("x").output("y").dtypes(kBool)
    .build(direct("Not"));

namespace {

// Checks shared by Select and SelectV2: x1 and x2 of one type the kernels take.
// (.dtypes() constrains the first input, here the bool condition; the values'
// types are checked here.)
Status check_select(const BuildContext& c) {
  OPENACL_RETURN_IF_ERROR(same_type(c, 2, 1));
  if (!contains(kRealBool, c.input_spec(1).dtype))
    return c.unsupported("%s is %s; the values may be float16, float32, float64, int8, int16, int32, int64, uint8 "
                         "or bool", input_name(c, 1).c_str(), graph::dtype_name(c.input_spec(1).dtype));
  return Status::Ok();
}

}  // namespace

// TensorFlow's Select: x1 and x2 have one shape; condition has that shape, or
// is a vector over dim 0 that picks whole rows.
OPENACL_REGISTER_ASCEND_OP(Select)
    .summary("x1 where condition (bool), else x2; condition has x1's shape or is a vector choosing rows (dim 0); "
             "x1, x2: float16/32/64, int8/16/32/64, uint8 or bool")
    .input("condition").input("x1").input("x2").output("y")
    .dtypes(kBool)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(check_select(c));
      const TensorSpec& cond = c.input_spec(0);
      const TensorSpec& x1 = c.input_spec(1);
      const TensorSpec& x2 = c.input_spec(2);
      auto known_mismatch = [](const TensorSpec& a, const TensorSpec& b) {
        if (a.unknown_rank() || b.unknown_rank()) return false;
        if (a.dims.size() != b.dims.size()) return true;
        for (size_t k = 0; k < a.dims.size(); ++k)
          if (a.dims[k] >= 0 && b.dims[k] >= 0 && a.dims[k] != b.dims[k]) return true;
        return false;
      };
      if (known_mismatch(x1, x2))
        return c.bad_input("x1 is %s but x2 is %s; Select needs one shape (SelectV2 broadcasts)", x1.str().c_str(),
                           x2.str().c_str());
      Value* condition = c.input(0);
      const bool row_vector = !cond.unknown_rank() && !x1.unknown_rank() && cond.dims.size() == 1 && x1.dims.size() > 1;
      if (row_vector) {
        if (cond.dims[0] >= 0 && x1.dims[0] >= 0 && cond.dims[0] != x1.dims[0])
          return c.bad_input("condition is %s but x1 is %s; a vector condition has one value per row of x1",
                             cond.str().c_str(), x1.str().c_str());
        condition = unsqueeze_tail(c, condition, 1, static_cast<int64_t>(x1.dims.size()));
      } else if (known_mismatch(cond, x1)) {
        return c.bad_input("condition is %s but x1 is %s; condition has x1's shape, or is a vector over x1's rows",
                           cond.str().c_str(), x1.str().c_str());
      }
      c.set_output(0, c.add1("Where", {condition, c.input(1), c.input(2)}));
      return Status::Ok();
    });

OPENACL_REGISTER_ASCEND_OP(SelectV2)
    .summary("then where condition (bool), else else; the three broadcast (numpy); then, else: float16/32/64, "
             "int8/16/32/64, uint8 or bool")
    .input("condition").input("then").input("else").output("result")
    .dtypes(kBool)
    .build([](BuildContext& c) -> Status {
      OPENACL_RETURN_IF_ERROR(check_select(c));
      c.set_output(0, c.add1("Where", {c.input(0), c.input(1), c.input(2)}));
      return Status::Ok();
    });

namespace {

// A constant of x's type in x's shape: Where(true, value, x) broadcasts the
// scalar to x's shape, so the shape functions see x's dims (Expand(value,
// Shape(x)) would leave them to run time) and x's values (NaN, inf) play no
// part, as they would in x * 0.
BuildFn fill_like(double value) {
  return [value](BuildContext& c) -> Status {
    Value* all = c.const_scalar(DType::kBool, 1);
    c.set_output(0, c.add1("Where", {all, scalar_like(c, value), c.input(0)}));
    return Status::Ok();
  };
}

}  // namespace

OPENACL_REGISTER_ASCEND_OP(ZerosLike).summary("zeros of x's shape and type").input("x").output("y")
    .dtypes(kRealBool).build(fill_like(0));
OPENACL_REGISTER_ASCEND_OP(OnesLike).summary("ones of x's shape and type").input("x").output("y")
    .dtypes(kRealBool).build(fill_like(1));

OPENACL_REGISTER_ASCEND_OP(Fills)
    .summary("value (converted to x's type) in x's shape")
    .input("x").output("y")
    .required_attr("value", AttrValue::Kind::kFloat)
    .dtypes(kReal)
    .build([](BuildContext& c) -> Status {
      const float v = c.get_float("value");
      if (!fits(c.input_spec(0).dtype, v))
        return c.bad_attr("value %g does not fit x's type %s", static_cast<double>(v),
                          graph::dtype_name(c.input_spec(0).dtype));
      return fill_like(v)(c);
    });

}  // namespace openacl::op
