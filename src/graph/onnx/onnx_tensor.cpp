// TensorProto and TypeProto conversion, including external data.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>

#include "graph/onnx/onnx_internal.h"

namespace openacl::graph::onnx::detail {
namespace {

using openacl_onnx::TensorProto;

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

bool parse_u64(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// realpath() as a std::string; empty on failure.
std::string real_path(const std::string& p) {
  char* r = ::realpath(p.c_str(), nullptr);
  if (!r) return {};
  std::string s(r);
  std::free(r);
  return s;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads the external data of `t` (`bytes` expected) from inside base_dir.
Status read_external(const TensorProto& t, const std::string& what, const std::string& base_dir, size_t bytes,
                     std::shared_ptr<std::string>* out) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool has_length = false, has_location = false;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
      has_location = true;
    } else if (kv.key() == "offset" || kv.key() == "length") {
      uint64_t v = 0;
      if (!parse_u64(kv.value(), &v))
        return Errorf(code::kParseModel, "%s: external_data %s '%s' is not a non-negative integer", what.c_str(),
                      kv.key().c_str(), kv.value().c_str());
      if (kv.key() == "offset") {
        offset = v;
      } else {
        length = v;
        has_length = true;
      }
    }
  }
  if (!has_location || location.empty())
    return Errorf(code::kParseModel, "%s: data_location is EXTERNAL but external_data has no 'location'", what.c_str());
  if (base_dir.empty())
    return Errorf(code::kParseModel,
                  "%s: external data '%s' needs a base folder; load the model from its file or set "
                  "ImportOptions::base_dir", what.c_str(), location.c_str());
  if (location.find('\0') != std::string::npos || location[0] == '/')
    return Errorf(code::kParseModel, "%s: external data location '%s' is absolute; it must be relative to the model's "
                  "folder", what.c_str(), location.c_str());
  // Refuse '..' components outright, then check the resolved path (symlinks).
  for (size_t pos = 0; pos <= location.size();) {
    size_t end = location.find('/', pos);
    if (end == std::string::npos) end = location.size();
    if (location.compare(pos, end - pos, "..") == 0 && end - pos == 2)
      return Errorf(code::kParseModel, "%s: external data location '%s' leaves the model's folder ('..')",
                    what.c_str(), location.c_str());
    pos = end + 1;
  }
  const std::string root = real_path(base_dir);
  if (root.empty())
    return Errorf(code::kReadModelFailure, "%s: model folder '%s' cannot be resolved: %s", what.c_str(),
                  base_dir.c_str(), std::strerror(errno));
  const std::string file = real_path(base_dir + "/" + location);
  if (file.empty())
    return Errorf(code::kReadModelFailure, "%s: external data file '%s' (in '%s') cannot be opened: %s", what.c_str(),
                  location.c_str(), base_dir.c_str(), std::strerror(errno));
  if (file.compare(0, root.size(), root) != 0 || (root != "/" && file.size() > root.size() && file[root.size()] != '/') ||
      file.size() == root.size())
    return Errorf(code::kParseModel, "%s: external data location '%s' resolves to '%s', outside the model's folder "
                  "'%s'", what.c_str(), location.c_str(), file.c_str(), root.c_str());

  Fd f;
  f.fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0)
    return Errorf(code::kReadModelFailure, "%s: cannot open external data file '%s': %s", what.c_str(), file.c_str(),
                  std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Errorf(code::kReadModelFailure, "%s: external data '%s' is not a regular file", what.c_str(), file.c_str());
  const uint64_t fsize = static_cast<uint64_t>(st.st_size);
  if (offset > fsize)
    return Errorf(code::kParseModel, "%s: external data offset %llu is past the end of '%s' (%llu bytes)",
                  what.c_str(), static_cast<unsigned long long>(offset), location.c_str(),
                  static_cast<unsigned long long>(fsize));
  if (!has_length) length = fsize - offset;
  if (length > fsize - offset)
    return Errorf(code::kParseModel, "%s: external data offset %llu + length %llu exceeds '%s' (%llu bytes)",
                  what.c_str(), static_cast<unsigned long long>(offset), static_cast<unsigned long long>(length),
                  location.c_str(), static_cast<unsigned long long>(fsize));
  if (length != bytes)
    return Errorf(code::kParseModel, "%s: external data has %llu bytes but its dims %s and type %s need %zu",
                  what.c_str(), static_cast<unsigned long long>(length), dims_str({t.dims().begin(), t.dims().end()}).c_str(),
                  dtype_name(static_cast<DType>(t.data_type())), bytes);
  auto buf = std::make_shared<std::string>(bytes, '\0');
  size_t done = 0;
  while (done < bytes) {
    const ssize_t r = ::pread(f.fd, buf->data() + done, bytes - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      return Errorf(code::kReadModelFailure, "%s: reading external data '%s' failed: %s", what.c_str(),
                    location.c_str(), r < 0 ? std::strerror(errno) : "file shrank while reading");
    done += static_cast<size_t>(r);
  }
  *out = std::move(buf);
  return Status::Ok();
}

// Which typed field ONNX uses for a dtype, and how many entries per element.
enum class Field { kNone, kFloat, kInt32, kInt64, kDouble, kUInt64 };

Field field_for(DType t, int* per_element) {
  *per_element = 1;
  switch (t) {
    case DType::kFloat32: return Field::kFloat;
    case DType::kComplex64: *per_element = 2; return Field::kFloat;
    case DType::kInt32: case DType::kInt16: case DType::kInt8: case DType::kUInt16: case DType::kUInt8:
    case DType::kBool: case DType::kFloat16: case DType::kBFloat16: case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ: case DType::kFloat8E5M2: case DType::kFloat8E5M2FNUZ: case DType::kFloat8E8M0:
      return Field::kInt32;
    case DType::kInt64: return Field::kInt64;
    case DType::kFloat64: return Field::kDouble;
    case DType::kComplex128: *per_element = 2; return Field::kDouble;
    case DType::kUInt32: case DType::kUInt64: return Field::kUInt64;
    default: return Field::kNone;
  }
}

const char* field_name(Field f) {
  switch (f) {
    case Field::kFloat: return "float_data";
    case Field::kInt32: return "int32_data";
    case Field::kInt64: return "int64_data";
    case Field::kDouble: return "double_data";
    case Field::kUInt64: return "uint64_data";
    default: return "none";
  }
}

int field_size(const TensorProto& t, Field f) {
  switch (f) {
    case Field::kFloat: return t.float_data_size();
    case Field::kInt32: return t.int32_data_size();
    case Field::kInt64: return t.int64_data_size();
    case Field::kDouble: return t.double_data_size();
    case Field::kUInt64: return t.uint64_data_size();
    default: return 0;
  }
}

// Narrows each entry of a repeated field to the element size (little-endian).
template <class Src>
void pack(const Src* src, size_t count, size_t elem_bytes, char* dst) {
  if (count == 0) return;  // an empty repeated field may have no storage at all
  if (elem_bytes == sizeof(Src)) {
    std::memcpy(dst, src, count * sizeof(Src));
    return;
  }
  for (size_t i = 0; i < count; ++i) {
    const Src v = src[i];
    std::memcpy(dst + i * elem_bytes, &v, elem_bytes);  // low bytes first on little-endian hosts
  }
}

// A sub-byte tensor (int4, uint4, float4e2m1: two per byte; int2, uint2:
// four), low bits first, in raw_data, external data or int32_data (one packed
// byte per entry), unpacked to one element per byte (dtype.h): signed types
// sign-extended.
Status convert_packed(TensorProto& t, const std::string& what, const std::string& base_dir,
                      std::vector<int64_t>& dims, uint64_t count, std::shared_ptr<TensorData>* out) {
  const DType dtype = static_cast<DType>(t.data_type());
  const size_t bits = dtype_bits(dtype);
  if (count > SIZE_MAX / 2)
    return Errorf(code::kParseModel, "%s: dims %s of %s are too large", what.c_str(), dims_str(dims).c_str(),
                  dtype_name(dtype));
  const size_t packed = static_cast<size_t>((count * bits + 7) / 8);
  std::string src;
  if (t.data_location() == TensorProto::EXTERNAL) {
    std::shared_ptr<std::string> buf;
    OPENACL_RETURN_IF_ERROR(read_external(t, what, base_dir, packed, &buf));
    src.swap(*buf);
  } else if (t.has_raw_data()) {
    if (t.raw_data().size() != packed)
      return Errorf(code::kParseModel, "%s: raw_data has %zu bytes but dims %s of %s need %zu (%zu bits each, packed)",
                    what.c_str(), t.raw_data().size(), dims_str(dims).c_str(), dtype_name(dtype), packed, bits);
    src.swap(*t.mutable_raw_data());
  } else {
    for (Field f : {Field::kFloat, Field::kInt64, Field::kDouble, Field::kUInt64})
      if (field_size(t, f) != 0)
        return Errorf(code::kParseModel, "%s: a %s tensor keeps its values in int32_data (or raw_data), not %s",
                      what.c_str(), dtype_name(dtype), field_name(f));
    if (static_cast<size_t>(t.int32_data_size()) != packed)
      return Errorf(code::kParseModel, "%s: int32_data has %d entries but dims %s of %s need %zu (one packed byte each)",
                    what.c_str(), t.int32_data_size(), dims_str(dims).c_str(), dtype_name(dtype), packed);
    src.resize(packed);
    for (size_t i = 0; i < packed; ++i) src[i] = static_cast<char>(t.int32_data(static_cast<int>(i)) & 0xFF);
  }
  const bool is_signed = dtype == DType::kInt4 || dtype == DType::kInt2;
  const unsigned per_byte = static_cast<unsigned>(8 / bits), mask = (1u << bits) - 1;
  auto buf = std::make_shared<std::string>(static_cast<size_t>(count), '\0');
  for (size_t i = 0; i < count; ++i) {
    unsigned v = (static_cast<unsigned char>(src[i / per_byte]) >> ((i % per_byte) * bits)) & mask;
    if (is_signed && (v >> (bits - 1))) v |= ~mask;  // sign-extend into the byte
    (*buf)[i] = static_cast<char>(v);
  }
  auto td = std::make_shared<TensorData>();
  td->dtype = dtype;
  td->dims = std::move(dims);
  td->data = buf->data();
  td->bytes = static_cast<size_t>(count);
  td->owner = std::shared_ptr<const void>(buf, buf->data());
  *out = std::move(td);
  return Status::Ok();
}

}  // namespace

Status convert_tensor(TensorProto& t, const std::string& what, const std::string& base_dir,
                      std::shared_ptr<TensorData>* out, std::string* unsupported) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "ONNX raw_data is little-endian");
  out->reset();
  unsupported->clear();
  if (t.has_segment())
    return Errorf(code::kParseModel, "%s: segmented tensors are not supported; re-save the model without segments",
                  what.c_str());
  const int32_t dt = t.data_type();
  if (dt <= 0 || dt > kMaxOnnxElemType)
    return Errorf(code::kParseModel, "%s: data_type %d is not a known ONNX tensor type", what.c_str(), dt);
  const DType dtype = static_cast<DType>(dt);
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  uint64_t count = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0)
      return Errorf(code::kParseModel, "%s: dim %zu is negative (%lld); tensor dims must be >= 0", what.c_str(), i,
                    static_cast<long long>(dims[i]));
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dims[i]), &count) || count > static_cast<uint64_t>(INT64_MAX))
      return Errorf(code::kParseModel, "%s: dims %s overflow the element count", what.c_str(), dims_str(dims).c_str());
  }
  const size_t elem = dtype_bytes(dtype);
  if (dtype == DType::kString || elem == 0) {
    *unsupported = strformat("%s: %s tensors are not supported yet", what.c_str(), dtype_name(dtype));
    return Status::Ok();
  }
  uint64_t bytes64 = 0;
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(elem), &bytes64) || bytes64 > SIZE_MAX / 2)
    return Errorf(code::kParseModel, "%s: dims %s of %s overflow the byte size", what.c_str(), dims_str(dims).c_str(),
                  dtype_name(dtype));
  const size_t bytes = static_cast<size_t>(bytes64);

  auto make = [&](std::shared_ptr<std::string> buf) {
    auto td = std::make_shared<TensorData>();
    td->dtype = dtype;
    td->dims = std::move(dims);
    td->data = buf->data();
    td->bytes = bytes;
    td->owner = std::shared_ptr<const void>(buf, buf->data());
    *out = std::move(td);
  };

  if (dtype_bits(dtype) < 8) return convert_packed(t, what, base_dir, dims, count, out);

  if (t.data_location() == TensorProto::EXTERNAL) {
    std::shared_ptr<std::string> buf;
    OPENACL_RETURN_IF_ERROR(read_external(t, what, base_dir, bytes, &buf));
    make(std::move(buf));
    return Status::Ok();
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes)
      return Errorf(code::kParseModel, "%s: raw_data has %zu bytes but dims %s of %s need %zu", what.c_str(),
                    t.raw_data().size(), dims_str(dims).c_str(), dtype_name(dtype), bytes);
    auto buf = std::make_shared<std::string>();
    buf->swap(*t.mutable_raw_data());
    make(std::move(buf));
    return Status::Ok();
  }
  int per = 1;
  const Field want = field_for(dtype, &per);
  // Data in a field ONNX does not use for this dtype is a writer bug; say which.
  for (Field f : {Field::kFloat, Field::kInt32, Field::kInt64, Field::kDouble, Field::kUInt64}) {
    if (f != want && field_size(t, f) != 0)
      return Errorf(code::kParseModel, "%s: a %s tensor keeps its values in %s (or raw_data), not %s", what.c_str(),
                    dtype_name(dtype), field_name(want), field_name(f));
  }
  const uint64_t have = static_cast<uint64_t>(field_size(t, want));
  if (have != count * static_cast<uint64_t>(per))
    return Errorf(code::kParseModel, "%s: %s has %llu entries but dims %s of %s need %llu", what.c_str(),
                  field_name(want), static_cast<unsigned long long>(have), dims_str(dims).c_str(), dtype_name(dtype),
                  static_cast<unsigned long long>(count * per));
  auto buf = std::make_shared<std::string>(bytes, '\0');
  const size_t entries = static_cast<size_t>(have);
  const size_t entry_bytes = per == 2 ? elem / 2 : elem;
  switch (want) {
    case Field::kFloat: pack(t.float_data().data(), entries, entry_bytes, buf->data()); break;
    case Field::kInt32: pack(t.int32_data().data(), entries, entry_bytes, buf->data()); break;
    case Field::kInt64: pack(t.int64_data().data(), entries, entry_bytes, buf->data()); break;
    case Field::kDouble: pack(t.double_data().data(), entries, entry_bytes, buf->data()); break;
    case Field::kUInt64: pack(t.uint64_data().data(), entries, entry_bytes, buf->data()); break;
    case Field::kNone: break;
  }
  make(std::move(buf));
  return Status::Ok();
}

Status convert_type(const openacl_onnx::TypeProto& t, const std::string& what, TensorType* out) {
  *out = TensorType{};
  if (!t.has_tensor_type()) return Status::Ok();
  const auto& tt = t.tensor_type();
  const int32_t et = tt.elem_type();
  if (et < 0 || et > kMaxOnnxElemType)
    return Errorf(code::kParseModel, "%s: elem_type %d is not a known ONNX tensor type", what.c_str(), et);
  out->dtype = static_cast<DType>(et);
  if (!tt.has_shape()) return Status::Ok();
  Shape shape;
  shape.reserve(static_cast<size_t>(tt.shape().dim_size()));
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        return Errorf(code::kParseModel, "%s: dim %d is negative (%lld); use dim_param for a free dimension",
                      what.c_str(), i, static_cast<long long>(d.dim_value()));
      shape.emplace_back(d.dim_value());
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      shape.push_back(Dim::symbolic(d.dim_param()));
    } else {
      shape.emplace_back();
    }
  }
  out->shape = std::move(shape);
  return Status::Ok();
}

}  // namespace openacl::graph::onnx::detail
