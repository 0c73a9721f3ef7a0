// Element types of the graph layer. The numbering is ONNX's TensorProto.DataType,
// so the importer needs no table; capi maps to and from aclDataType at the edge.
#pragma once

#include <cstddef>
#include <cstdint>

namespace openacl::graph {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};

// Bytes per element (0 for undefined, string and sub-byte types).
size_t dtype_bytes(DType t);
// "float32", "int64", ... ; "dtype(<n>)" for values we do not know.
const char* dtype_name(DType t);
bool dtype_is_float(DType t);    // float16/bfloat16/float32/float64
bool dtype_is_integer(DType t);  // signed or unsigned integer types (not bool)
// aclDataType value <-> DType; kUndefined / -1 when there is no counterpart.
DType dtype_from_acl(int acl);
int dtype_to_acl(DType t);

}  // namespace openacl::graph
