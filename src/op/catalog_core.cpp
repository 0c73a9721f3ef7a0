// The catalogue entries the op layer itself relies on: Add (the reference
// element-wise op of the samples and the benchmark) and Cast (aclopCast and
// aclopCreateHandleForCast build it). The families live in catalog_math.cpp,
// catalog_nn.cpp and catalog_shape.cpp.
#include <algorithm>

#include "op/catalog.h"

namespace openacl::op {
namespace {

const std::vector<DType>& cast_types() {
  static const std::vector<DType> t = {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
                                       DType::kInt8,    DType::kUInt8,   DType::kInt16,    DType::kUInt16,
                                       DType::kInt32,   DType::kUInt32,  DType::kInt64,    DType::kUInt64,
                                       DType::kBool};
  return t;
}

}  // namespace

OPENACL_REGISTER_ASCEND_OP(Add)
    .summary("x1 + x2, numpy broadcasting")
    .input("x1").input("x2")
    .output("y")
    .dtypes({DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64, DType::kInt8, DType::kUInt8,
             DType::kInt16, DType::kFloat64})
    .build([](BuildContext& c) -> Status {
      if (c.input_spec(0).dtype != c.input_spec(1).dtype)
        return c.bad_input("x1 is %s but x2 is %s; both inputs must have one type (Cast one of them first)",
                           graph::dtype_name(c.input_spec(0).dtype), graph::dtype_name(c.input_spec(1).dtype));
      c.set_output(0, c.add1("Add", {c.input(0), c.input(1)}));
      return Status::Ok();
    });

// dst_type: the target aclDataType as an int (Ascend's Cast attribute); when
// it is not set the output desc's type is the target (what aclopCast does).
OPENACL_REGISTER_ASCEND_OP(Cast)
    .summary("Converts x to dst_type (or the output desc's type); floats to integers truncate toward zero")
    .input("x")
    .output("y")
    .optional_attr("dst_type", AttrValue::Kind::kInt)
    .attr_bool("truncate", false)
    .dtypes(cast_types())
    .build([](BuildContext& c) -> Status {
      DType to = c.output_spec(0).dtype;
      if (c.attr_set_by_caller("dst_type")) {
        to = graph::dtype_from_acl(static_cast<int>(c.get_int("dst_type")));
        if (to == DType::kUndefined)
          return c.bad_attr("dst_type %lld is not an aclDataType value", static_cast<long long>(c.get_int("dst_type")));
      }
      if (to == DType::kUndefined)
        return c.bad_output("the target type is unknown: set attribute dst_type or describe output y with its type");
      const auto& types = cast_types();
      if (std::find(types.begin(), types.end(), to) == types.end())
        return c.unsupported("cannot cast to %s", graph::dtype_name(to));
      c.set_output(0, c.add1("Cast", {c.input(0)}, [&] {
        graph::AttributeMap a;
        a.set("to", onnx_int(static_cast<int64_t>(to)));
        return a;
      }()));
      return Status::Ok();
    });

}  // namespace openacl::op
