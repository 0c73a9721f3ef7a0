// aclTensorDesc (spec §4.3): what a tensor is (dtype, shape, format), kept
// apart from where it lives (aclDataBuffer). Used by the model API for dynamic
// shapes (aclmdlSetDatasetTensorDesc) and, later, by the single-operator API.
//
// Two shapes and two formats, with CANN's semantics: the ORIGIN ones are what
// aclCreateTensorDesc takes and what every getter reports (dims, element count,
// size, format); the STORAGE ones are written by aclSetTensorShape /
// aclSetTensorFormat as well as by aclSetTensorStorageShape / Format (a CANN
// quirk, §9) and only read by the operator API.
//
// Live descs are registered: a destroyed or bogus pointer is refused instead
// of read (getters return their NULL values, setters ACL_ERROR_INVALID_PARAM).
// One mutex guards the registry and every desc's contents, so a desc may be
// read and written from several threads (each call sees a consistent desc).
// Pointers a getter returns into a desc (aclGetTensorDescName) stay valid
// until the desc is changed or destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl.h"
#include "base/status.h"

namespace openacl::op {
struct TensorSpec;
}

// Complete type: aclGetTensorDescByIndex does pointer arithmetic over arrays
// of descs (the operator API hands such arrays out).
struct aclTensorDesc {
  aclDataType dtype = ACL_DT_UNDEFINED;
  aclFormat format = ACL_FORMAT_UNDEFINED;          // origin format
  std::vector<int64_t> dims;                        // origin shape; {-2}: unknown rank
  aclFormat storage_format = ACL_FORMAT_UNDEFINED;  // set by aclSetTensorFormat / StorageFormat
  std::vector<int64_t> storage_dims;                // set by aclSetTensorShape / StorageShape
  std::vector<std::pair<int64_t, int64_t>> shape_range;  // per dim [min, max]
  std::vector<std::pair<int64_t, int64_t>> value_range;  // per element [lo, hi]
  std::string name;
  std::string dynamic_input_name;
  bool is_const = false;
  std::vector<uint8_t> const_data;  // a copy of what aclSetTensorConst was given
  aclMemType placement = ACL_MEMTYPE_DEVICE;
  void* address = nullptr;  // the tensor's data, when the library knows it (model outputs)
};

namespace openacl::capi {

// Who may destroy a registered desc: the user (aclDestroyTensorDesc), or a
// dataset (aclmdlDestroyDataset / aclmdlSetDatasetTensorDesc), in which case
// aclDestroyTensorDesc refuses it.
enum class DescOwner { kUser, kDataset };

// A registered copy of `src` (which must be live) with the given owner;
// nullptr with *status set when `src` is unknown.
aclTensorDesc* copy_tensor_desc(const aclTensorDesc* src, DescOwner owner, Status* status);
// A registered desc built from the fields given.
aclTensorDesc* new_tensor_desc(aclDataType dtype, std::vector<int64_t> dims, aclFormat format, DescOwner owner);
// Overwrites `dst` (live) with `src`'s contents (live); ownership of dst kept.
Status assign_tensor_desc(aclTensorDesc* dst, const aclTensorDesc* src);
// Unregisters and frees a desc the library owns. No-op for nullptr.
void delete_tensor_desc(aclTensorDesc* desc);
// Copies out the origin dims / dtype of a live desc.
Status tensor_desc_shape(const aclTensorDesc* desc, std::vector<int64_t>* dims, aclDataType* dtype);
// Sets the shape (origin and storage), dtype, formats and address of a live
// desc: what an execution reports for an output.
Status update_tensor_desc(aclTensorDesc* desc, aclDataType dtype, const std::vector<int64_t>& dims,
                          aclFormat format, void* address);

// The op layer's view of a live desc (single-operator calls): dtype, origin
// dims and format, shape range, constant data (aclSetTensorConst, copied),
// dynamic-input group and name. Read under the registry's lock, so a desc
// changed by another thread is seen whole. `what` names the desc in messages
// ("input 1"). kInvalidParam for a NULL / unknown desc; a dtype that is no
// aclDataType kUnsupportedDataType; constant data shorter than the dims need
// kInvalidParam.
Status tensor_desc_spec(const aclTensorDesc* desc, const char* what, size_t index, op::TensorSpec* out);
// Writes what shape inference found for an output into a live desc: dtype,
// dims (origin and storage), shape range (cleared when spec has none); the
// desc's format is kept unless it is ACL_FORMAT_UNDEFINED (then spec's).
Status spec_to_tensor_desc(aclTensorDesc* desc, const op::TensorSpec& spec);

// ---- the descs of a dataset (mdl_dataset.cpp) ----
//
// A dataset keeps, per buffer index, an optional desc it owns: a copy of what
// aclmdlSetDatasetTensorDesc was given, or one the library made for an output.

// Per buffer of a live dataset: the origin dims of its desc, nullopt without
// one; empty when the dataset holds no desc at all (dims may be nullptr: only
// the serial). *serial identifies this dataset
// (never reused), for dataset_report_outputs.
Status dataset_desc_dims(const aclmdlDataset* dataset, const char* role,
                         std::vector<std::optional<std::vector<int64_t>>>* dims, uint64_t* serial);

// What an execution produced for one output.
struct OutputReport {
  aclDataType dtype = ACL_DT_UNDEFINED;
  std::vector<int64_t> dims;
  aclFormat format = ACL_FORMAT_UNDEFINED;
  void* address = nullptr;
};
// Writes the reports into the dataset's descs, creating those missing. Does
// nothing when the dataset with that serial was destroyed meanwhile (an
// aclmdlExecuteAsync whose output dataset went before the task ran).
void dataset_report_outputs(const aclmdlDataset* dataset, uint64_t serial, const std::vector<OutputReport>& reports);

}  // namespace openacl::capi
