// aclopCreateAttr / aclopDestroyAttr / aclopSetAttr* (spec §4.4).
//
// Values are stored as op::AttrValue of the setter's kind; whether the kind
// fits the op is checked when the op is compiled (ACL_ERROR_OP_ATTR_NOT_MATCH,
// naming the attribute, the kind given and the kind expected), since an attr
// is built before the op type is known. Setting a name again replaces it.
#include "capi/op_attr.h"

#include <mutex>
#include <unordered_set>

#include "capi/capi.h"
#include "graph/dtype.h"

using namespace openacl;
using op::AttrValue;

namespace {

std::mutex g_mutex;  // guards the registry and every attr's contents
std::unordered_set<const aclopAttr*>& live() {
  static auto* set = new std::unordered_set<const aclopAttr*>();
  return *set;
}

// With g_mutex held.
Status check_live(const aclopAttr* attr) {
  if (!attr) return Errorf(code::kInvalidParam, "attr is NULL; pass one made by aclopCreateAttr");
  if (!live().count(attr))
    return Errorf(code::kInvalidParam, "attr %p is unknown or already destroyed; create one with aclopCreateAttr",
                  static_cast<const void*>(attr));
  return Status::Ok();
}

Status check_name(const char* name) {
  if (!name) return Errorf(code::kInvalidParam, "attrName is NULL; pass the attribute's name");
  if (!*name) return Errorf(code::kInvalidParam, "attrName is empty; pass the attribute's name");
  return Status::Ok();
}

Status check_count(int n, const void* values, const char* name) {
  if (n < 0) return Errorf(code::kInvalidParam, "%s: numValues %d is negative", name, n);
  if (n > 0 && !values) return Errorf(code::kInvalidParam, "%s: values is NULL while numValues is %d", name, n);
  return Status::Ok();
}

// Validates, builds the value outside the lock where it can fail, then stores.
template <class Make>
aclError set_attr(const char* api, aclopAttr* attr, const char* name, Make&& make) {
  return capi::guarded(api, [&]() -> Status {
    OPENACL_RETURN_IF_ERROR(check_name(name));
    AttrValue value;
    OPENACL_RETURN_IF_ERROR(make(&value));
    std::lock_guard<std::mutex> lock(g_mutex);
    OPENACL_RETURN_IF_ERROR(check_live(attr));
    attr->attrs[name] = std::move(value);
    return Status::Ok();
  });
}

Status check_dtype(const char* name, aclDataType t) {
  if (graph::dtype_from_acl(static_cast<int>(t)) == graph::DType::kUndefined)
    return Errorf(code::kInvalidParam, "attribute '%s': %d is not an aclDataType (ACL_FLOAT 0, ACL_FLOAT16 1, ...)",
                  name, static_cast<int>(t));
  return Status::Ok();
}

}  // namespace

namespace openacl::capi {

Status read_op_attr(const aclopAttr* attr, op::OpAttrs* out) {
  if (!attr) {
    out->clear();
    return Status::Ok();
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  OPENACL_RETURN_IF_ERROR(check_live(attr));
  *out = attr->attrs;
  return Status::Ok();
}

}  // namespace openacl::capi

extern "C" {

aclopAttr* aclopCreateAttr(void) {
  aclopAttr* out = nullptr;
  capi::guarded(__func__, [&] {
    auto* a = new aclopAttr();
    std::lock_guard<std::mutex> lock(g_mutex);
    live().insert(a);
    out = a;
    return Status::Ok();
  });
  return out;
}

void aclopDestroyAttr(const aclopAttr* attr) {
  if (!attr) return;  // like free(NULL)
  capi::guarded(__func__, [&]() -> Status {
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (!live().erase(attr))
        return Errorf(code::kInvalidParam, "attr %p is unknown or already destroyed", static_cast<const void*>(attr));
    }
    delete attr;
    return Status::Ok();
  });
}

aclError aclopSetAttrBool(aclopAttr* attr, const char* attrName, uint8_t attrValue) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    *v = AttrValue::of_bool(attrValue != 0);
    return Status::Ok();
  });
}

aclError aclopSetAttrInt(aclopAttr* attr, const char* attrName, int64_t attrValue) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    *v = AttrValue::of_int(attrValue);
    return Status::Ok();
  });
}

aclError aclopSetAttrFloat(aclopAttr* attr, const char* attrName, float attrValue) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    *v = AttrValue::of_float(attrValue);
    return Status::Ok();
  });
}

aclError aclopSetAttrString(aclopAttr* attr, const char* attrName, const char* attrValue) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    OPENACL_RETURN_IF_ERROR(capi::not_null(attrValue, "attrValue"));
    *v = AttrValue::of_string(attrValue);
    return Status::Ok();
  });
}

aclError aclopSetAttrDataType(aclopAttr* attr, const char* attrName, aclDataType attrValue) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    OPENACL_RETURN_IF_ERROR(check_dtype(attrName, attrValue));
    *v = AttrValue::of_data_type(static_cast<int>(attrValue));
    return Status::Ok();
  });
}

aclError aclopSetAttrListDataType(aclopAttr* attr, const char* attrName, int numValues, const aclDataType values[]) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    OPENACL_RETURN_IF_ERROR(check_count(numValues, values, attrName));
    std::vector<int64_t> ints;
    for (int i = 0; i < numValues; ++i) {
      OPENACL_RETURN_IF_ERROR(check_dtype(attrName, values[i]));
      ints.push_back(static_cast<int64_t>(values[i]));
    }
    *v = AttrValue::of_ints(std::move(ints), AttrValue::Kind::kListDataType);
    return Status::Ok();
  });
}

aclError aclopSetAttrListBool(aclopAttr* attr, const char* attrName, int numValues, const uint8_t* values) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    OPENACL_RETURN_IF_ERROR(check_count(numValues, values, attrName));
    std::vector<int64_t> ints;
    for (int i = 0; i < numValues; ++i) ints.push_back(values[i] != 0 ? 1 : 0);
    *v = AttrValue::of_ints(std::move(ints), AttrValue::Kind::kListBool);
    return Status::Ok();
  });
}

aclError aclopSetAttrListInt(aclopAttr* attr, const char* attrName, int numValues, const int64_t* values) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    OPENACL_RETURN_IF_ERROR(check_count(numValues, values, attrName));
    *v = AttrValue::of_ints(std::vector<int64_t>(values, values + numValues));
    return Status::Ok();
  });
}

aclError aclopSetAttrListFloat(aclopAttr* attr, const char* attrName, int numValues, const float* values) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    OPENACL_RETURN_IF_ERROR(check_count(numValues, values, attrName));
    *v = AttrValue::of_floats(std::vector<float>(values, values + numValues));
    return Status::Ok();
  });
}

aclError aclopSetAttrListString(aclopAttr* attr, const char* attrName, int numValues, const char** values) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    OPENACL_RETURN_IF_ERROR(check_count(numValues, values, attrName));
    std::vector<std::string> strings;
    for (int i = 0; i < numValues; ++i) {
      if (!values[i])
        return Errorf(code::kInvalidParam, "attribute '%s': values[%d] is NULL; pass %d strings", attrName, i,
                      numValues);
      strings.emplace_back(values[i]);
    }
    *v = AttrValue::of_strings(std::move(strings));
    return Status::Ok();
  });
}

aclError aclopSetAttrListListInt(aclopAttr* attr, const char* attrName, int numLists, const int* numValues,
                                 const int64_t* const values[]) {
  return set_attr(__func__, attr, attrName, [&](AttrValue* v) {
    if (numLists < 0) return Errorf(code::kInvalidParam, "attribute '%s': numLists %d is negative", attrName, numLists);
    if (numLists > 0 && (!numValues || !values))
      return Errorf(code::kInvalidParam, "attribute '%s': numValues or values is NULL while numLists is %d", attrName,
                    numLists);
    std::vector<std::vector<int64_t>> lists;
    for (int i = 0; i < numLists; ++i) {
      if (numValues[i] < 0)
        return Errorf(code::kInvalidParam, "attribute '%s': numValues[%d] = %d is negative", attrName, i,
                      numValues[i]);
      if (numValues[i] > 0 && !values[i])
        return Errorf(code::kInvalidParam, "attribute '%s': values[%d] is NULL while numValues[%d] is %d", attrName,
                      i, i, numValues[i]);
      lists.emplace_back(values[i], values[i] + numValues[i]);
    }
    *v = AttrValue::of_lists(std::move(lists));
    return Status::Ok();
  });
}

}  // extern "C"
