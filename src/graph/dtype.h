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

// Bytes per element in memory (0 for undefined and string). The sub-byte
// types (int4, uint4, int2, uint2, float4e2m1) are held one element per byte
// everywhere in the engine and at the ACL boundary (aclDataTypeSize(ACL_INT4)
// is 1 in CANN too): int4/int2 sign-extended like int8, uint4/uint2 like
// uint8, float4e2m1 as its 4-bit code. Only ONNX files pack them
// (dtype_bits), and the importer unpacks.
size_t dtype_bytes(DType t);
// Bits per element as ONNX stores them: 4 or 2 for the sub-byte types, else
// 8 * dtype_bytes.
size_t dtype_bits(DType t);
// "float32", "int64", ... ; "dtype(<n>)" for values we do not know.
const char* dtype_name(DType t);
bool dtype_is_float(DType t);    // float16/bfloat16/float32/float64
bool dtype_is_integer(DType t);  // signed or unsigned integer types (not bool)
// aclDataType value <-> DType; kUndefined / -1 when there is no counterpart.
DType dtype_from_acl(int acl);
int dtype_to_acl(DType t);

}  // namespace openacl::graph
