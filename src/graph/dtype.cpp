#include "graph/dtype.h"

#include <cstdio>

namespace openacl::graph {

size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::kFloat32: case DType::kInt32: case DType::kUInt32: return 4;
    case DType::kUInt8: case DType::kInt8: case DType::kBool:
    case DType::kFloat8E4M3FN: case DType::kFloat8E4M3FNUZ: case DType::kFloat8E5M2: case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0: case DType::kInt4: case DType::kUInt4: case DType::kInt2: case DType::kUInt2:
    case DType::kFloat4E2M1: return 1;
    case DType::kUInt16: case DType::kInt16: case DType::kFloat16: case DType::kBFloat16: return 2;
    case DType::kInt64: case DType::kUInt64: case DType::kFloat64: case DType::kComplex64: return 8;
    case DType::kComplex128: return 16;
    default: return 0;
  }
}

size_t dtype_bits(DType t) {
  switch (t) {
    case DType::kInt4: case DType::kUInt4: case DType::kFloat4E2M1: return 4;
    case DType::kInt2: case DType::kUInt2: return 2;
    default: return 8 * dtype_bytes(t);
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kUndefined: return "undefined";
    case DType::kFloat32: return "float32";
    case DType::kUInt8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUInt16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kFloat64: return "float64";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3FN: return "float8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::kFloat8E5M2: return "float8e5m2";
    case DType::kFloat8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::kUInt4: return "uint4";
    case DType::kInt4: return "int4";
    case DType::kFloat4E2M1: return "float4e2m1";
    case DType::kFloat8E8M0: return "float8e8m0";
    case DType::kUInt2: return "uint2";
    case DType::kInt2: return "int2";
  }
  static thread_local char buf[24];
  std::snprintf(buf, sizeof buf, "dtype(%d)", static_cast<int>(t));
  return buf;
}

bool dtype_is_float(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat64;
}

bool dtype_is_integer(DType t) {
  switch (t) {
    case DType::kUInt8: case DType::kInt8: case DType::kUInt16: case DType::kInt16: case DType::kInt32:
    case DType::kInt64: case DType::kUInt32: case DType::kUInt64: return true;
    default: return false;
  }
}

namespace {
struct AclPair {
  int acl;
  DType dtype;
};
// aclDataType values (spec §4.1) for the types both sides have.
constexpr AclPair kAcl[] = {
    {0, DType::kFloat32}, {1, DType::kFloat16}, {2, DType::kInt8},     {3, DType::kInt32},
    {4, DType::kUInt8},   {6, DType::kInt16},   {7, DType::kUInt16},   {8, DType::kUInt32},
    {9, DType::kInt64},   {10, DType::kUInt64}, {11, DType::kFloat64}, {12, DType::kBool},
    {13, DType::kString}, {16, DType::kComplex64}, {17, DType::kComplex128}, {27, DType::kBFloat16},
    {29, DType::kInt4},   {35, DType::kFloat8E5M2}, {36, DType::kFloat8E4M3FN},
    {40, DType::kFloat4E2M1},
};
}  // namespace

DType dtype_from_acl(int acl) {
  for (const auto& p : kAcl)
    if (p.acl == acl) return p.dtype;
  return DType::kUndefined;
}

int dtype_to_acl(DType t) {
  for (const auto& p : kAcl)
    if (p.dtype == t) return p.acl;
  return -1;
}

}  // namespace openacl::graph
