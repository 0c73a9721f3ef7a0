#include "graph/tensor.h"

#include <cstring>

namespace openacl::graph {

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    if (s[i].known()) out += std::to_string(s[i].value);
    else out += s[i].symbol.empty() ? "?" : s[i].symbol;
  }
  return out + "]";
}

std::optional<int64_t> element_count(const Shape& s) {
  int64_t n = 1;
  for (const Dim& d : s) {
    if (!d.known()) return std::nullopt;
    if (d.value != 0 && n > INT64_MAX / d.value) return std::nullopt;
    n *= d.value;
  }
  return n;
}

bool fully_known(const Shape& s) {
  for (const Dim& d : s)
    if (!d.known()) return false;
  return true;
}

std::string TensorType::str() const {
  return std::string(dtype_name(dtype)) + (shape ? shape_str(*shape) : std::string("[?]"));
}

int64_t TensorData::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::shared_ptr<TensorData> TensorData::copy_of(DType dtype, std::vector<int64_t> dims, const void* src, size_t bytes) {
  auto t = std::make_shared<TensorData>();
  t->dtype = dtype;
  t->dims = std::move(dims);
  std::shared_ptr<char[]> buf(new char[bytes ? bytes : 1]);
  if (bytes) std::memcpy(buf.get(), src, bytes);
  t->data = buf.get();
  t->bytes = bytes;
  t->owner = std::shared_ptr<const void>(buf, buf.get());
  return t;
}

std::optional<std::vector<int64_t>> TensorData::to_int64() const {
  const int64_t n = elements();
  if (n < 0 || static_cast<size_t>(n) * dtype_bytes(dtype) > bytes) return std::nullopt;
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kInt64: out[i] = as<int64_t>()[i]; break;
      case DType::kInt32: out[i] = as<int32_t>()[i]; break;
      case DType::kInt16: out[i] = as<int16_t>()[i]; break;
      case DType::kInt8: out[i] = as<int8_t>()[i]; break;
      case DType::kUInt8: case DType::kBool: out[i] = as<uint8_t>()[i]; break;
      case DType::kUInt16: out[i] = as<uint16_t>()[i]; break;
      case DType::kUInt32: out[i] = as<uint32_t>()[i]; break;
      case DType::kUInt64: out[i] = static_cast<int64_t>(as<uint64_t>()[i]); break;
      default: return std::nullopt;
    }
  }
  return out;
}

}  // namespace openacl::graph
