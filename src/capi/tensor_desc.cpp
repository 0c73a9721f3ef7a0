// aclTensorDesc functions (spec §4.3). NULL and range behaviour follows CANN's
// implementation as the spec records it; a non-NULL pointer that is not a live
// desc is refused the same way as NULL, with a message (CANN would read it).
#include "capi/tensor_desc.h"

#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "capi/capi.h"
#include "graph/dtype.h"
#include "op/op_desc.h"

using namespace openacl;
using capi::DescOwner;

namespace {

constexpr int64_t kUnknownDim = -1;
constexpr int64_t kUnknownRank = -2;

std::mutex g_mutex;  // guards the registry and the contents of every registered desc
std::unordered_map<const aclTensorDesc*, DescOwner>& live() {
  static auto* map = new std::unordered_map<const aclTensorDesc*, DescOwner>();
  return *map;
}

// With g_mutex held.
Status check_live(const aclTensorDesc* desc, const char* name = "desc") {
  if (!desc) return Errorf(code::kInvalidParam, "%s is NULL; pass one made by aclCreateTensorDesc", name);
  if (!live().count(desc))
    return Errorf(code::kInvalidParam, "%s %p is unknown or already destroyed; create one with aclCreateTensorDesc",
                  name, static_cast<const void*>(desc));
  return Status::Ok();
}

// Runs `body(desc)` with g_mutex held once `desc` is known to be live; every
// failure is recorded under `api`.
template <class D, class F>
aclError with_desc(const char* api, D* desc, F&& body) {
  return capi::guarded(api, [&]() -> Status {
    std::lock_guard<std::mutex> lock(g_mutex);
    OPENACL_RETURN_IF_ERROR(check_live(desc));
    return body(desc);
  });
}

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// Dims as given to a create / shape setter: -1 (unknown dim) and a lone -2
// (unknown rank) are the only negative values.
Status check_dims(int numDims, const int64_t* dims, std::vector<int64_t>* out) {
  if (numDims < 0) return Errorf(code::kInvalidParam, "numDims %d is negative; pass the number of dims (0 for a scalar)",
                                 numDims);
  if (numDims > 0 && !dims)
    return Errorf(code::kInvalidParam, "dims is NULL while numDims is %d; pass an array of numDims values", numDims);
  out->assign(dims, dims + numDims);
  for (size_t i = 0; i < out->size(); ++i) {
    const int64_t d = (*out)[i];
    if (d == kUnknownRank && out->size() != 1)
      return Errorf(code::kInvalidParam, "dims %s: -2 (unknown rank) must be the only dim", dims_str(*out).c_str());
    if (d < kUnknownRank)
      return Errorf(code::kInvalidParam, "dims[%zu] = %lld is invalid; a dim is >= 0, -1 (unknown) or [-2] (unknown "
                                         "rank)",
                    i, static_cast<long long>(d));
  }
  return Status::Ok();
}

Status read_ranges(const char* what, size_t count, const int64_t (*range)[2],
                   std::vector<std::pair<int64_t, int64_t>>* out) {
  if (count > 0 && !range)
    return Errorf(code::kInvalidParam, "%s is NULL while its count is %zu; pass count [lo, hi] pairs", what, count);
  out->clear();
  for (size_t i = 0; i < count; ++i) out->emplace_back(range[i][0], range[i][1]);
  return Status::Ok();
}

// Product of dims: 1 for a scalar, nullopt for an unknown dim or on overflow.
std::optional<size_t> element_count(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > SIZE_MAX / static_cast<size_t>(d)) return std::nullopt;
    n *= static_cast<size_t>(d);
  }
  return n;
}

aclTensorDesc* register_desc(aclTensorDesc* d, DescOwner owner) {
  std::lock_guard<std::mutex> lock(g_mutex);
  live().emplace(d, owner);
  return d;
}

// ---- aclTransTensorDescFormat: shape conversion between formats ----

const char* format_name(aclFormat f) {
  switch (f) {
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_ND: return "ND";
    case ACL_FORMAT_HWCN: return "HWCN";
    case ACL_FORMAT_NC1HWC0: return "NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z: return "FRACTAL_Z";
    case ACL_FORMAT_FRACTAL_NZ: return "FRACTAL_NZ";
    default: return nullptr;
  }
}

std::string format_str(aclFormat f) {
  const char* n = format_name(f);
  return n ? n : std::to_string(static_cast<int>(f));
}

// Axis letters of the plain 4-D formats, in storage order.
const char* layout(aclFormat f) {
  switch (f) {
    case ACL_FORMAT_NCHW: return "NCHW";
    case ACL_FORMAT_NHWC: return "NHWC";
    case ACL_FORMAT_HWCN: return "HWCN";
    default: return nullptr;
  }
}

// The cube unit along C for a blocked format: 32 elements for 1-byte types,
// 16 otherwise.
int64_t c0_of(aclDataType t) { return aclDataTypeSize(t) == 1 ? 32 : 16; }

int64_t ceil_div(int64_t a, int64_t b) { return a < 0 ? kUnknownDim : (a + b - 1) / b; }

Status trans_shape(const aclTensorDesc& src, aclFormat dst, std::vector<int64_t>* out) {
  const auto& dims = src.dims;
  const aclFormat from = src.format;
  auto unsupported = [&]() {
    return Errorf(ACL_ERROR_FORMAT_NOT_MATCH,
                  "cannot convert a %s tensor %s to format %s; supported: between NCHW, NHWC, HWCN and ND (4-D), "
                  "and from those to NC1HWC0, FRACTAL_Z (4-D) and FRACTAL_NZ (rank >= 1)",
                  format_str(from).c_str(), dims_str(dims).c_str(), format_str(dst).c_str());
  };
  if (!dims.empty() && dims[0] == kUnknownRank)
    return Errorf(ACL_ERROR_FORMAT_NOT_MATCH, "the desc has unknown rank [-2]: no shape to convert");
  if (dst == from) {
    *out = dims;
    return Status::Ok();
  }
  const bool plain_from = from == ACL_FORMAT_ND || layout(from);
  if (!plain_from) return unsupported();
  if (dst == ACL_FORMAT_ND) {
    *out = dims;
    return Status::Ok();
  }
  if (dst == ACL_FORMAT_FRACTAL_NZ) {
    // [..., m, n] -> [..., ceil(n/C0), ceil(m/16), 16, C0]; a vector is [1, n].
    if (dims.empty()) return unsupported();
    std::vector<int64_t> d = dims;
    if (d.size() == 1) d.insert(d.begin(), 1);
    const int64_t m = d[d.size() - 2], n = d[d.size() - 1], c0 = c0_of(src.dtype);
    out->assign(d.begin(), d.end() - 2);
    out->insert(out->end(), {ceil_div(n, c0), ceil_div(m, 16), 16, c0});
    return Status::Ok();
  }
  // The rest need a 4-D source whose axes are known: ND is read as NCHW.
  if (dims.size() != 4) return unsupported();
  const char* lf = layout(from) ? layout(from) : "NCHW";
  auto axis = [&](char c) { return dims[static_cast<size_t>(std::strchr(lf, c) - lf)]; };
  const int64_t n = axis('N'), c = axis('C'), h = axis('H'), w = axis('W');
  if (const char* lt = layout(dst)) {
    out->clear();
    for (const char* p = lt; *p; ++p) out->push_back(axis(*p));
    return Status::Ok();
  }
  const int64_t c0 = c0_of(src.dtype);
  if (dst == ACL_FORMAT_NC1HWC0) {
    *out = {n, ceil_div(c, c0), h, w, c0};
    return Status::Ok();
  }
  if (dst == ACL_FORMAT_FRACTAL_Z) {
    const int64_t c1 = ceil_div(c, c0);
    const int64_t c1hw = (c1 < 0 || h < 0 || w < 0) ? kUnknownDim : c1 * h * w;
    *out = {c1hw, ceil_div(n, 16), 16, c0};
    return Status::Ok();
  }
  return unsupported();
}

}  // namespace

namespace openacl::capi {

aclTensorDesc* copy_tensor_desc(const aclTensorDesc* src, DescOwner owner, Status* status) {
  aclTensorDesc* d = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    *status = check_live(src, "tensorDesc");
    if (!status->ok()) return nullptr;
    d = new aclTensorDesc(*src);
  }
  return register_desc(d, owner);
}

aclTensorDesc* new_tensor_desc(aclDataType dtype, std::vector<int64_t> dims, aclFormat format, DescOwner owner) {
  auto* d = new aclTensorDesc();
  d->dtype = dtype;
  d->dims = std::move(dims);
  d->format = format;
  return register_desc(d, owner);
}

Status assign_tensor_desc(aclTensorDesc* dst, const aclTensorDesc* src) {
  std::lock_guard<std::mutex> lock(g_mutex);
  OPENACL_RETURN_IF_ERROR(check_live(src, "tensorDesc"));
  OPENACL_RETURN_IF_ERROR(check_live(dst, "dataset's tensor desc"));
  if (dst != src) *dst = *src;
  return Status::Ok();
}

void delete_tensor_desc(aclTensorDesc* desc) {
  if (!desc) return;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (!live().erase(desc)) return;
  }
  delete desc;
}

Status tensor_desc_shape(const aclTensorDesc* desc, std::vector<int64_t>* dims, aclDataType* dtype) {
  std::lock_guard<std::mutex> lock(g_mutex);
  OPENACL_RETURN_IF_ERROR(check_live(desc));
  *dims = desc->dims;
  *dtype = desc->dtype;
  return Status::Ok();
}

Status update_tensor_desc(aclTensorDesc* desc, aclDataType dtype, const std::vector<int64_t>& dims,
                          aclFormat format, void* address) {
  std::lock_guard<std::mutex> lock(g_mutex);
  OPENACL_RETURN_IF_ERROR(check_live(desc));
  desc->dtype = dtype;
  desc->dims = dims;
  desc->storage_dims = dims;
  desc->format = format;
  desc->storage_format = format;
  desc->address = address;
  return Status::Ok();
}

Status tensor_desc_spec(const aclTensorDesc* desc, const char* what, size_t index, op::TensorSpec* out) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (!desc) return Errorf(code::kInvalidParam, "%s %zu: its tensor desc is NULL; pass one made by aclCreateTensorDesc",
                           what, index);
  if (!live().count(desc))
    return Errorf(code::kInvalidParam,
                  "%s %zu: tensor desc %p is unknown or already destroyed; create one with aclCreateTensorDesc", what,
                  index, static_cast<const void*>(desc));
  out->dtype = graph::dtype_from_acl(static_cast<int>(desc->dtype));
  if (out->dtype == graph::DType::kUndefined && desc->dtype != ACL_DT_UNDEFINED)
    return Errorf(code::kUnsupportedDataType, "%s %zu: data type %d is not an aclDataType", what, index,
                  static_cast<int>(desc->dtype));
  out->dims = desc->dims;
  out->format = static_cast<int>(desc->format);
  out->range = desc->shape_range;
  out->dynamic_input = desc->dynamic_input_name;
  out->name = desc->name;
  out->constant.reset();
  if (desc->is_const) {
    const size_t unit = graph::dtype_bytes(out->dtype);
    auto n = element_count(desc->dims);
    if (!n || unit == 0)
      return Errorf(code::kInvalidParam,
                    "%s %zu: a constant (aclSetTensorConst) needs a known dtype and shape, the desc says %s %s", what,
                    index, graph::dtype_name(out->dtype), dims_str(desc->dims).c_str());
    const size_t need = *n * unit;
    if (desc->const_data.size() < need)
      return Errorf(code::kInvalidParam,
                    "%s %zu: the constant holds %zu bytes but %s%s needs %zu; pass that many bytes to "
                    "aclSetTensorConst",
                    what, index, desc->const_data.size(), graph::dtype_name(out->dtype), dims_str(desc->dims).c_str(),
                    need);
    out->constant = graph::TensorData::copy_of(out->dtype, desc->dims, desc->const_data.data(), need);
  }
  return Status::Ok();
}

Status spec_to_tensor_desc(aclTensorDesc* desc, const op::TensorSpec& spec) {
  std::lock_guard<std::mutex> lock(g_mutex);
  OPENACL_RETURN_IF_ERROR(check_live(desc, "output desc"));
  desc->dtype = static_cast<aclDataType>(graph::dtype_to_acl(spec.dtype));
  desc->dims = spec.dims;
  desc->storage_dims = spec.dims;
  desc->shape_range = spec.range;
  if (desc->format == ACL_FORMAT_UNDEFINED) desc->format = static_cast<aclFormat>(spec.format);
  return Status::Ok();
}

}  // namespace openacl::capi

extern "C" {

aclTensorDesc* aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t* dims, aclFormat format) {
  aclTensorDesc* out = nullptr;
  capi::guarded(__func__, [&] {
    std::vector<int64_t> d;
    OPENACL_RETURN_IF_ERROR(check_dims(numDims, dims, &d));
    out = capi::new_tensor_desc(dataType, std::move(d), format, DescOwner::kUser);
    return Status::Ok();
  });
  return out;
}

void aclDestroyTensorDesc(const aclTensorDesc* desc) {
  if (!desc) return;  // like free(NULL)
  capi::guarded(__func__, [&]() -> Status {
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      auto it = live().find(desc);
      if (it == live().end())
        return Errorf(code::kInvalidParam, "desc %p is unknown or already destroyed", static_cast<const void*>(desc));
      if (it->second == DescOwner::kDataset)
        return Errorf(code::kInvalidParam,
                      "desc %p belongs to a dataset (aclmdlGetDatasetTensorDesc); it is destroyed with the dataset",
                      static_cast<const void*>(desc));
      live().erase(it);
    }
    delete desc;
    return Status::Ok();
  });
}

aclDataType aclGetTensorDescType(const aclTensorDesc* desc) {
  aclDataType t = ACL_DT_UNDEFINED;
  with_desc(__func__, desc, [&](const aclTensorDesc* d) {
    t = d->dtype;
    return Status::Ok();
  });
  return t;
}

aclFormat aclGetTensorDescFormat(const aclTensorDesc* desc) {
  aclFormat f = ACL_FORMAT_UNDEFINED;
  with_desc(__func__, desc, [&](const aclTensorDesc* d) {
    f = d->format;
    return Status::Ok();
  });
  return f;
}

size_t aclGetTensorDescSize(const aclTensorDesc* desc) {
  size_t n = 0;
  with_desc(__func__, desc, [&](const aclTensorDesc* d) {
    const auto count = element_count(d->dims);
    const size_t esize = aclDataTypeSize(d->dtype);
    if (count && (esize == 0 || *count <= SIZE_MAX / esize)) n = *count * esize;
    return Status::Ok();
  });
  return n;
}

size_t aclGetTensorDescElementCount(const aclTensorDesc* desc) {
  size_t n = 0;
  with_desc(__func__, desc, [&](const aclTensorDesc* d) {
    n = element_count(d->dims).value_or(0);
    return Status::Ok();
  });
  return n;
}

size_t aclGetTensorDescNumDims(const aclTensorDesc* desc) {
  size_t n = 0;
  with_desc(__func__, desc, [&](const aclTensorDesc* d) {
    n = (!d->dims.empty() && d->dims[0] == kUnknownRank) ? static_cast<size_t>(ACL_UNKNOWN_RANK) : d->dims.size();
    return Status::Ok();
  });
  return n;
}

int64_t aclGetTensorDescDim(const aclTensorDesc* desc, size_t index) {
  int64_t v = -1;
  with_desc(__func__, desc, [&](const aclTensorDesc* d) {
    if (index >= d->dims.size())
      return Errorf(code::kInvalidParam, "index %zu is out of range: the desc has %zu dim(s)", index, d->dims.size());
    v = d->dims[index];
    return Status::Ok();
  });
  return v;
}

aclError aclGetTensorDescDimV2(const aclTensorDesc* desc, size_t index, int64_t* dimSize) {
  return with_desc(__func__, desc, [&](const aclTensorDesc* d) {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dimSize, "dimSize"));
    if (index >= d->dims.size())
      return Errorf(code::kInvalidParam, "index %zu is out of range: the desc has %zu dim(s)", index, d->dims.size());
    *dimSize = d->dims[index];
    return Status::Ok();
  });
}

aclError aclGetTensorDescDimRange(const aclTensorDesc* desc, size_t index, size_t dimRangeNum, int64_t* dimRange) {
  return with_desc(__func__, desc, [&](const aclTensorDesc* d) {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dimRange, "dimRange"));
    if (index >= d->shape_range.size())
      return Errorf(code::kInvalidParam,
                    "index %zu is out of range: the desc has %zu dim range(s) (set them with aclSetTensorShapeRange)",
                    index, d->shape_range.size());
    if (dimRangeNum < ACL_TENSOR_SHAPE_RANGE_NUM)
      return Errorf(code::kInvalidParam, "dimRangeNum %zu is too small: a range is %d values (min, max)", dimRangeNum,
                    ACL_TENSOR_SHAPE_RANGE_NUM);
    dimRange[0] = d->shape_range[index].first;
    dimRange[1] = d->shape_range[index].second;
    return Status::Ok();
  });
}

void aclSetTensorDescName(aclTensorDesc* desc, const char* name) {
  with_desc(__func__, desc, [&](aclTensorDesc* d) {
    d->name = name ? name : "";
    return Status::Ok();
  });
}

const char* aclGetTensorDescName(aclTensorDesc* desc) {
  if (!desc) return "";
  const char* out = "";
  with_desc(__func__, desc, [&](aclTensorDesc* d) {
    out = d->name.c_str();
    return Status::Ok();
  });
  return out;
}

aclError aclTransTensorDescFormat(const aclTensorDesc* srcDesc, aclFormat dstFormat, aclTensorDesc** dstDesc) {
  return capi::guarded(__func__, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dstDesc, "dstDesc"));
    aclDataType dtype;
    std::vector<int64_t> dims;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      OPENACL_RETURN_IF_ERROR(check_live(srcDesc, "srcDesc"));
      OPENACL_RETURN_IF_ERROR(trans_shape(*srcDesc, dstFormat, &dims));
      dtype = srcDesc->dtype;
    }
    *dstDesc = capi::new_tensor_desc(dtype, std::move(dims), dstFormat, DescOwner::kUser);
    return Status::Ok();
  });
}

// Format setters: NULL is ignored and 0 returned, as CANN does.
aclError aclSetTensorStorageFormat(aclTensorDesc* desc, aclFormat format) {
  if (!desc) return ACL_SUCCESS;
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    d->storage_format = format;
    return Status::Ok();
  });
}

aclError aclSetTensorFormat(aclTensorDesc* desc, aclFormat format) {
  if (!desc) return ACL_SUCCESS;
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    d->storage_format = format;  // CANN: the storage format, not the one aclGetTensorDescFormat reports
    return Status::Ok();
  });
}

aclError aclSetTensorOriginFormat(aclTensorDesc* desc, aclFormat format) {
  if (!desc) return ACL_SUCCESS;
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    d->format = format;
    return Status::Ok();
  });
}

aclError aclSetTensorStorageShape(aclTensorDesc* desc, int numDims, const int64_t* dims) {
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    std::vector<int64_t> v;
    OPENACL_RETURN_IF_ERROR(check_dims(numDims, dims, &v));
    d->storage_dims = std::move(v);
    return Status::Ok();
  });
}

aclError aclSetTensorShape(aclTensorDesc* desc, int numDims, const int64_t* dims) {
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    std::vector<int64_t> v;
    OPENACL_RETURN_IF_ERROR(check_dims(numDims, dims, &v));
    d->storage_dims = std::move(v);  // CANN: the storage shape; aclSetTensorOriginShape sets the reported one
    return Status::Ok();
  });
}

aclError aclSetTensorOriginShape(aclTensorDesc* desc, int numDims, const int64_t* dims) {
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    std::vector<int64_t> v;
    OPENACL_RETURN_IF_ERROR(check_dims(numDims, dims, &v));
    d->dims = std::move(v);
    return Status::Ok();
  });
}

aclError aclSetTensorShapeRange(aclTensorDesc* desc, size_t dimsCount, int64_t dimsRange[][ACL_TENSOR_SHAPE_RANGE_NUM]) {
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    std::vector<std::pair<int64_t, int64_t>> r;
    OPENACL_RETURN_IF_ERROR(read_ranges("dimsRange", dimsCount, dimsRange, &r));
    d->shape_range = std::move(r);
    return Status::Ok();
  });
}

aclError aclSetTensorValueRange(aclTensorDesc* desc, size_t valueCount,
                                int64_t valueRange[][ACL_TENSOR_VALUE_RANGE_NUM]) {
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    std::vector<std::pair<int64_t, int64_t>> r;
    OPENACL_RETURN_IF_ERROR(read_ranges("valueRange", valueCount, valueRange, &r));
    d->value_range = std::move(r);
    return Status::Ok();
  });
}

aclError aclSetTensorDynamicInput(aclTensorDesc* desc, const char* dynamicInputName) {
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dynamicInputName, "dynamicInputName"));
    d->dynamic_input_name = dynamicInputName;
    return Status::Ok();
  });
}

aclError aclSetTensorConst(aclTensorDesc* desc, void* dataBuffer, size_t length) {
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    OPENACL_RETURN_IF_ERROR(capi::not_null(dataBuffer, "dataBuffer"));
    if (length == 0) return Errorf(code::kInvalidParam, "length is 0; pass the number of bytes at dataBuffer");
    const auto* p = static_cast<const uint8_t*>(dataBuffer);
    d->const_data.assign(p, p + length);  // copied: the caller's buffer may go away
    d->is_const = true;
    return Status::Ok();
  });
}

aclError aclSetTensorPlaceMent(aclTensorDesc* desc, aclMemType memType) {
  return with_desc(__func__, desc, [&](aclTensorDesc* d) {
    if (memType != ACL_MEMTYPE_DEVICE && memType != ACL_MEMTYPE_HOST &&
        memType != ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT)
      return Errorf(code::kInvalidParam,
                    "memType %d is not an aclMemType; pass ACL_MEMTYPE_DEVICE (0), ACL_MEMTYPE_HOST (1) or "
                    "ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT (2)",
                    static_cast<int>(memType));
    d->placement = memType;
    return Status::Ok();
  });
}

aclTensorDesc* aclGetTensorDescByIndex(aclTensorDesc* desc, size_t index) {
  if (!desc) {
    capi::guarded(__func__, [] { return capi::not_null(nullptr, "desc"); });
    return nullptr;
  }
  // CANN: plain pointer arithmetic over an array of descs, no bounds check.
  // Done on integers; a pointer past the array is refused by every other call.
  return reinterpret_cast<aclTensorDesc*>(reinterpret_cast<uintptr_t>(desc) + index * sizeof(aclTensorDesc));
}

void* aclGetTensorDescAddress(const aclTensorDesc* desc) {
  void* out = nullptr;
  with_desc(__func__, desc, [&](const aclTensorDesc* d) {
    out = d->address;
    return Status::Ok();
  });
  return out;
}

}  // extern "C"
