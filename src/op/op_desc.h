// What a single-operator call describes, without acl* types: tensor specs
// (aclTensorDesc contents) and attribute values (aclopAttr contents), plus the
// canonical key that identifies a compiled op (DESIGN.md "Single-operator API":
// compiled ops are cached by (type, descriptors, attributes)).
//
// capi converts aclTensorDesc / aclopAttr into these; the op layer, the
// catalogue and the cache only see these.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "graph/dtype.h"
#include "graph/tensor.h"

namespace openacl::op {

// aclFormat values the op layer reads (the rest are carried through).
inline constexpr int kFormatUndefined = -1;
inline constexpr int kFormatNCHW = 0;
inline constexpr int kFormatNHWC = 1;
inline constexpr int kFormatND = 2;

// One input or output of an op call.
struct TensorSpec {
  graph::DType dtype = graph::DType::kUndefined;
  std::vector<int64_t> dims;  // -1: unknown dim (see range); {-2}: unknown rank; {}: scalar
  int format = kFormatND;     // aclFormat value (origin format)
  // Per dim [min, max] (max -1: unbounded); empty when none was given.
  std::vector<std::pair<int64_t, int64_t>> range;
  // Host constant data (aclSetTensorConst): the op is compiled with the value
  // folded in, and the value is part of the cache key. nullptr otherwise.
  std::shared_ptr<graph::TensorData> constant;
  // aclSetTensorDynamicInput: the variadic input group this input belongs to.
  std::string dynamic_input;
  std::string name;  // aclSetTensorDescName; informative only (not in the key)

  // An omitted optional input: created as (ACL_DT_UNDEFINED, [], ACL_FORMAT_UNDEFINED).
  bool omitted() const { return dtype == graph::DType::kUndefined && dims.empty() && format == kFormatUndefined; }
  bool unknown_rank() const { return dims.size() == 1 && dims[0] == -2; }
  // Every dim known (>= 0) and the rank known.
  bool static_shape() const;
  // Element count; -1 when a dim is unknown or the product overflows.
  int64_t elements() const;
  // "float32[2,3] ND", "float16[-1,8] NCHW range [[1,16],[8,8]]", "float32[] const".
  std::string str() const;
};

// One attribute value (aclopSetAttr*). Bool / data-type values and lists are
// held as ints (data types as aclDataType values), so a value compares and
// hashes by kind + ints / floats / strings.
struct AttrValue {
  enum class Kind {
    kBool, kInt, kFloat, kString, kDataType,
    kListBool, kListInt, kListFloat, kListString, kListDataType, kListListInt,
  };
  Kind kind = Kind::kInt;
  int64_t i = 0;                          // kBool (0/1), kInt, kDataType (aclDataType)
  float f = 0;                            // kFloat
  std::string s;                          // kString
  std::vector<int64_t> ints;              // kListBool, kListInt, kListDataType
  std::vector<float> floats;              // kListFloat
  std::vector<std::string> strings;       // kListString
  std::vector<std::vector<int64_t>> lists;  // kListListInt

  static AttrValue of_bool(bool v);
  static AttrValue of_int(int64_t v);
  static AttrValue of_float(float v);
  static AttrValue of_string(std::string v);
  static AttrValue of_data_type(int acl_dtype);
  static AttrValue of_ints(std::vector<int64_t> v, Kind kind = Kind::kListInt);
  static AttrValue of_floats(std::vector<float> v);
  static AttrValue of_strings(std::vector<std::string> v);
  static AttrValue of_lists(std::vector<std::vector<int64_t>> v);

  // "int", "list of float", ... for messages.
  static const char* kind_name(Kind k);
  // "3", "[1,2]", "\"SAME\"", "float16" (data types by name).
  std::string str() const;
};

// Attributes by name; std::map so iteration (and hence the key) is ordered.
using OpAttrs = std::map<std::string, AttrValue>;

// The identity of a compiled op: type, every input and output spec (dtype,
// dims, format, ranges, constant bytes, dynamic-input group) and every
// attribute. Two calls with equal keys can share one compiled op.
std::string op_key(const std::string& op_type, const std::vector<TensorSpec>& inputs,
                   const std::vector<TensorSpec>& outputs, const OpAttrs& attrs);

// "Add(x1: float32[2,3] ND, x2: float32[3] ND) -> float32[2,3] ND {alpha=1}" —
// for messages and logs.
std::string describe_call(const std::string& op_type, const std::vector<TensorSpec>& inputs,
                          const std::vector<TensorSpec>& outputs, const OpAttrs& attrs);

}  // namespace openacl::op
