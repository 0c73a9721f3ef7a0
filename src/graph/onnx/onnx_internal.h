// Private to the importer: conversions from the generated ONNX classes.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "graph/tensor.h"
#include "openacl_onnx.pb.h"

namespace openacl::graph::onnx::detail {

// ONNX keeps adding element types (23 float4e2m1, 24 float8e8m0, 25 uint2,
// 26 int2, ...) beyond what DType names. Numbers below this bound are taken
// as "a type we cannot hold yet" (kept as their number, refused when used);
// larger ones are corruption.
inline constexpr int32_t kMaxOnnxElemType = 63;

// TensorProto -> TensorData. `what` names the tensor in messages
// ("initializer 'w'"). Malformed data is a kParseModel error. A well-formed
// tensor of a type we cannot hold yet (string, 4-bit) is not an error here:
// *out stays null and *unsupported says why, so the caller can refuse only
// when the tensor is used. `base_dir` empty refuses external data. May move
// raw_data out of `t`.
Status convert_tensor(openacl_onnx::TensorProto& t, const std::string& what, const std::string& base_dir,
                      std::shared_ptr<TensorData>* out, std::string* unsupported);

// TypeProto -> TensorType. Non-tensor types (sequence, map, optional) leave
// *out empty (dtype undefined, unknown rank); negative dims are an error.
Status convert_type(const openacl_onnx::TypeProto& t, const std::string& what, TensorType* out);

}  // namespace openacl::graph::onnx::detail
