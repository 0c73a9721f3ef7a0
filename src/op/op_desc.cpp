#include "op/op_desc.h"

#include <charconv>
#include <cstring>

#include "base/crc32c.h"
#include "base/log.h"

namespace openacl::op {
namespace {

void append_int(std::string* out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, r.ptr);
}

void append_float(std::string* out, float v) {
  // The bit pattern: exact, and distinct for every value (0.1f vs 0.1000001f).
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  append_int(out, bits);
}

const char* format_name(int f) {
  switch (f) {
    case -1: return "UNDEFINED";
    case 0: return "NCHW";
    case 1: return "NHWC";
    case 2: return "ND";
    case 3: return "NC1HWC0";
    case 4: return "FRACTAL_Z";
    case 29: return "FRACTAL_NZ";
    case 30: return "NCDHW";
    default: return nullptr;
  }
}

// 64-bit FNV-1a: with the CRC-32C and the size, identifies constant bytes in
// the key without copying them there.
uint64_t fnv1a(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

void append_spec(std::string* key, const TensorSpec& s) {
  append_int(key, static_cast<int>(s.dtype));
  key->push_back('[');
  for (int64_t d : s.dims) {
    append_int(key, d);
    key->push_back(',');
  }
  key->push_back(']');
  append_int(key, s.format);
  if (!s.range.empty()) {
    key->push_back('r');
    for (auto& [lo, hi] : s.range) {
      append_int(key, lo);
      key->push_back('~');
      append_int(key, hi);
      key->push_back(',');
    }
  }
  if (s.constant) {
    const graph::TensorData& c = *s.constant;
    key->push_back('c');
    if (c.bytes <= 64) {
      // Small constants (axes, perms, shapes) are the common case: the bytes
      // themselves, hex.
      static const char* kHex = "0123456789abcdef";
      const auto* p = static_cast<const uint8_t*>(c.data);
      for (size_t i = 0; i < c.bytes; ++i) {
        key->push_back(kHex[p[i] >> 4]);
        key->push_back(kHex[p[i] & 15]);
      }
    } else {
      append_int(key, static_cast<int64_t>(c.bytes));
      key->push_back(':');
      append_int(key, crc32c(c.data, c.bytes));
      key->push_back(':');
      append_int(key, static_cast<int64_t>(fnv1a(c.data, c.bytes)));
    }
  }
  if (!s.dynamic_input.empty()) {
    key->push_back('d');
    key->append(s.dynamic_input);
  }
  key->push_back(';');
}

void append_attr(std::string* key, const AttrValue& v) {
  append_int(key, static_cast<int>(v.kind));
  key->push_back(':');
  using K = AttrValue::Kind;
  switch (v.kind) {
    case K::kBool: case K::kInt: case K::kDataType: append_int(key, v.i); break;
    case K::kFloat: append_float(key, v.f); break;
    case K::kString:
      append_int(key, static_cast<int64_t>(v.s.size()));
      key->push_back(':');
      key->append(v.s);
      break;
    case K::kListBool: case K::kListInt: case K::kListDataType:
      for (int64_t x : v.ints) {
        append_int(key, x);
        key->push_back(',');
      }
      break;
    case K::kListFloat:
      for (float x : v.floats) {
        append_float(key, x);
        key->push_back(',');
      }
      break;
    case K::kListString:
      for (const std::string& s : v.strings) {
        append_int(key, static_cast<int64_t>(s.size()));
        key->push_back(':');
        key->append(s);
      }
      break;
    case K::kListListInt:
      for (const auto& l : v.lists) {
        key->push_back('[');
        for (int64_t x : l) {
          append_int(key, x);
          key->push_back(',');
        }
        key->push_back(']');
      }
      break;
  }
}

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

}  // namespace

bool TensorSpec::static_shape() const {
  for (int64_t d : dims)
    if (d < 0) return false;
  return true;
}

int64_t TensorSpec::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

std::string TensorSpec::str() const {
  if (omitted()) return "(omitted)";
  std::string s = graph::dtype_name(dtype);
  s += unknown_rank() ? std::string("[unknown rank]") : ints_str(dims);
  const char* f = format_name(format);
  s += " ";
  s += f ? f : ("format " + std::to_string(format)).c_str();
  if (!range.empty()) {
    s += " range [";
    for (size_t i = 0; i < range.size(); ++i) {
      if (i) s += ",";
      s += "[" + std::to_string(range[i].first) + "," + std::to_string(range[i].second) + "]";
    }
    s += "]";
  }
  if (constant) s += " const";
  return s;
}

AttrValue AttrValue::of_bool(bool v) {
  AttrValue a;
  a.kind = Kind::kBool;
  a.i = v ? 1 : 0;
  return a;
}
AttrValue AttrValue::of_int(int64_t v) {
  AttrValue a;
  a.kind = Kind::kInt;
  a.i = v;
  return a;
}
AttrValue AttrValue::of_float(float v) {
  AttrValue a;
  a.kind = Kind::kFloat;
  a.f = v;
  return a;
}
AttrValue AttrValue::of_string(std::string v) {
  AttrValue a;
  a.kind = Kind::kString;
  a.s = std::move(v);
  return a;
}
AttrValue AttrValue::of_data_type(int acl_dtype) {
  AttrValue a;
  a.kind = Kind::kDataType;
  a.i = acl_dtype;
  return a;
}
AttrValue AttrValue::of_ints(std::vector<int64_t> v, Kind kind) {
  AttrValue a;
  a.kind = kind;
  a.ints = std::move(v);
  return a;
}
AttrValue AttrValue::of_floats(std::vector<float> v) {
  AttrValue a;
  a.kind = Kind::kListFloat;
  a.floats = std::move(v);
  return a;
}
AttrValue AttrValue::of_strings(std::vector<std::string> v) {
  AttrValue a;
  a.kind = Kind::kListString;
  a.strings = std::move(v);
  return a;
}
AttrValue AttrValue::of_lists(std::vector<std::vector<int64_t>> v) {
  AttrValue a;
  a.kind = Kind::kListListInt;
  a.lists = std::move(v);
  return a;
}

const char* AttrValue::kind_name(Kind k) {
  switch (k) {
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "string";
    case Kind::kDataType: return "data type";
    case Kind::kListBool: return "list of bool";
    case Kind::kListInt: return "list of int";
    case Kind::kListFloat: return "list of float";
    case Kind::kListString: return "list of string";
    case Kind::kListDataType: return "list of data type";
    case Kind::kListListInt: return "list of list of int";
  }
  return "?";
}

std::string AttrValue::str() const {
  auto dt = [](int64_t v) { return std::string(graph::dtype_name(graph::dtype_from_acl(static_cast<int>(v)))); };
  switch (kind) {
    case Kind::kBool: return i ? "true" : "false";
    case Kind::kInt: return std::to_string(i);
    case Kind::kFloat: return strformat("%g", f);
    case Kind::kString: return "\"" + s + "\"";
    case Kind::kDataType: return dt(i);
    case Kind::kListBool:
    case Kind::kListInt: return ints_str(ints);
    case Kind::kListDataType: {
      std::string r = "[";
      for (size_t k = 0; k < ints.size(); ++k) r += (k ? "," : "") + dt(ints[k]);
      return r + "]";
    }
    case Kind::kListFloat: {
      std::string r = "[";
      for (size_t k = 0; k < floats.size(); ++k) r += (k ? "," : "") + strformat("%g", floats[k]);
      return r + "]";
    }
    case Kind::kListString: {
      std::string r = "[";
      for (size_t k = 0; k < strings.size(); ++k) r += (k ? ",\"" : "\"") + strings[k] + "\"";
      return r + "]";
    }
    case Kind::kListListInt: {
      std::string r = "[";
      for (size_t k = 0; k < lists.size(); ++k) r += (k ? "," : "") + ints_str(lists[k]);
      return r + "]";
    }
  }
  return "?";
}

std::string op_key(const std::string& op_type, const std::vector<TensorSpec>& inputs,
                   const std::vector<TensorSpec>& outputs, const OpAttrs& attrs) {
  std::string key;
  key.reserve(64 + 24 * (inputs.size() + outputs.size()) + 24 * attrs.size());
  key.append(op_type);
  key.push_back('|');
  for (const TensorSpec& s : inputs) append_spec(&key, s);
  key.push_back('|');
  for (const TensorSpec& s : outputs) append_spec(&key, s);
  key.push_back('|');
  for (const auto& [name, value] : attrs) {
    key.append(name);
    key.push_back('=');
    append_attr(&key, value);
    key.push_back(';');
  }
  return key;
}

std::string describe_call(const std::string& op_type, const std::vector<TensorSpec>& inputs,
                          const std::vector<TensorSpec>& outputs, const OpAttrs& attrs) {
  std::string s = op_type + "(";
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? ", " : "") + inputs[i].str();
  s += ") -> (";
  for (size_t i = 0; i < outputs.size(); ++i) s += (i ? ", " : "") + outputs[i].str();
  s += ")";
  if (!attrs.empty()) {
    s += " {";
    bool first = true;
    for (const auto& [name, v] : attrs) {
      s += (first ? "" : ", ") + name + "=" + v.str();
      first = false;
    }
    s += "}";
  }
  return s;
}

}  // namespace openacl::op
