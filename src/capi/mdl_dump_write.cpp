// The dump's file formats: .npy tensors and stats lines (mdl_dump_write.h).
#include "capi/mdl_dump_write.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include "base/fp16.h"

namespace openacl::capi {

namespace {

using graph::DType;

// NumPy's descr for the dtype as written ("" = not written).
const char* npy_descr(DType t) {
  switch (t) {
    case DType::kFloat32: return "<f4";
    case DType::kFloat64: return "<f8";
    case DType::kFloat16: return "<f2";
    case DType::kBFloat16: return "<f4";  // widened
    case DType::kInt8: return "|i1";
    case DType::kInt16: return "<i2";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
    case DType::kUInt8: return "|u1";
    case DType::kUInt16: return "<u2";
    case DType::kUInt32: return "<u4";
    case DType::kUInt64: return "<u8";
    case DType::kBool: return "|b1";
    case DType::kComplex64: return "<c8";
    case DType::kComplex128: return "<c16";
    default: return "";
  }
}

std::string npy_header(const kernels::Tensor& t) {
  std::string dict = "{'descr': '";
  dict += npy_descr(t.dtype);
  dict += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < t.dims.size(); ++i) {
    dict += std::to_string(t.dims[i]);
    if (t.dims.size() == 1 || i + 1 < t.dims.size()) dict += ",";
    if (i + 1 < t.dims.size()) dict += " ";
  }
  dict += "), }";
  // magic(6) + version(2) + length(2) + dict + padding + '\n': a multiple of 64.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string header("\x93NUMPY\x01\x00", 8);
  const size_t len = dict.size();
  header += static_cast<char>(len & 0xFF);
  header += static_cast<char>((len >> 8) & 0xFF);
  return header + dict;
}

// Element i as double (for stats); complex: the real part.
double element(const kernels::Tensor& t, int64_t i) {
  const void* p = t.data;
  switch (t.dtype) {
    case DType::kFloat32: return static_cast<const float*>(p)[i];
    case DType::kFloat64: return static_cast<const double*>(p)[i];
    case DType::kFloat16: return half_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16: return bf16_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::kUInt8: return static_cast<const uint8_t*>(p)[i];
    case DType::kUInt16: return static_cast<const uint16_t*>(p)[i];
    case DType::kUInt32: return static_cast<const uint32_t*>(p)[i];
    case DType::kUInt64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DType::kBool: return static_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0;
    case DType::kComplex64: return static_cast<const float*>(p)[2 * i];
    case DType::kComplex128: return static_cast<const double*>(p)[2 * i];
    default: return std::numeric_limits<double>::quiet_NaN();
  }
}

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string dump_safe_name(const std::string& name, const std::string& fallback) {
  if (name.empty()) return fallback;
  std::string s = name.substr(0, 128);
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || c == '.' || u <= 0x20 || u == 0x7F) c = '_';
  }
  return s;
}

bool dump_dtype_supported(DType t) { return npy_descr(t)[0] != '\0'; }

bool write_npy(const std::string& path, const kernels::Tensor& t, std::string* error) {
  if (!dump_dtype_supported(t.dtype)) {
    *error = std::string("dtype ") + graph::dtype_name(t.dtype) + " has no NumPy counterpart";
    return false;
  }
  for (int64_t d : t.dims)
    if (d < 0) {
      *error = "the tensor's shape is not known";
      return false;
    }
  const std::string header = npy_header(t);
  const int64_t n = t.elements();
  std::vector<float> widened;
  const void* data = t.data;
  size_t bytes = t.bytes();
  if (t.dtype == DType::kBFloat16) {
    widened.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) widened[static_cast<size_t>(i)] = bf16_to_float(t.as<uint16_t>()[i]);
    data = widened.data();
    bytes = widened.size() * sizeof(float);
  }
  if (bytes > 0 && data == nullptr) {
    *error = "the tensor has no data";
    return false;
  }
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    *error = std::string("cannot create '") + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(header.data(), 1, header.size(), f) == header.size();
  if (ok && bytes > 0) ok = std::fwrite(data, 1, bytes, f) == bytes;
  const int saved = errno;
  if (std::fclose(f) != 0) ok = false;
  if (!ok) *error = std::string("cannot write '") + path + "': " + std::strerror(saved ? saved : errno);
  return ok;
}

const char* dump_stats_header() { return "tensor,dtype,shape,count,min,max,mean,nan_count\n"; }

std::string dump_stats_line(const std::string& label, const kernels::Tensor& t) {
  std::string shape;
  for (size_t i = 0; i < t.dims.size(); ++i) shape += (i ? "x" : "") + std::to_string(t.dims[i]);
  bool known = true;
  for (int64_t d : t.dims) known = known && d >= 0;
  const int64_t n = known ? t.elements() : 0;
  std::string line = label + "," + graph::dtype_name(t.dtype) + "," + shape + "," + std::to_string(n) + ",";
  if (!known || !dump_dtype_supported(t.dtype) || (n > 0 && t.data == nullptr)) return line + "nan,nan,nan,0\n";
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t nan = 0, counted = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double v = element(t, i);
    if (std::isnan(v)) {
      ++nan;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    ++counted;
  }
  const double q = std::numeric_limits<double>::quiet_NaN();
  line += number(counted ? lo : q) + "," + number(counted ? hi : q) + "," +
          number(counted ? sum / static_cast<double>(counted) : q) + "," + std::to_string(nan) + "\n";
  return line;
}

}  // namespace openacl::capi
