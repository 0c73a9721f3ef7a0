#include "op/op_json.h"

#include <cstring>

#include <nlohmann/json.hpp>

#include "base/codes.h"
#include "base/fp16.h"
#include "model/om_format.h"

namespace openacl::op {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

struct FormatName {
  const char* name;
  int value;
};
constexpr FormatName kFormats[] = {
    {"UNDEFINED", -1}, {"NCHW", 0},  {"NHWC", 1},         {"ND", 2},     {"NC1HWC0", 3},  {"FRACTAL_Z", 4},
    {"NC1HWC0_C04", 12}, {"HWCN", 16}, {"NDHWC", 27}, {"FRACTAL_NZ", 29}, {"NCDHW", 30}, {"NDC1HWC0", 32},
    {"FRACTAL_Z_3D", 33}, {"NC", 35}, {"NCL", 47},
};

struct DTypeName {
  const char* name;
  graph::DType value;
};
constexpr DTypeName kDTypes[] = {
    {"float16", graph::DType::kFloat16}, {"float", graph::DType::kFloat32},   {"float32", graph::DType::kFloat32},
    {"double", graph::DType::kFloat64},  {"float64", graph::DType::kFloat64}, {"bfloat16", graph::DType::kBFloat16},
    {"int8", graph::DType::kInt8},       {"int16", graph::DType::kInt16},     {"int32", graph::DType::kInt32},
    {"int64", graph::DType::kInt64},     {"uint8", graph::DType::kUInt8},     {"uint16", graph::DType::kUInt16},
    {"uint32", graph::DType::kUInt32},   {"uint64", graph::DType::kUInt64},   {"bool", graph::DType::kBool},
    {"UNDEFINED", graph::DType::kUndefined},
};

const char* dtype_json_name(graph::DType t) {
  for (const DTypeName& d : kDTypes)
    if (d.value == t && std::strcmp(d.name, "float") != 0 && std::strcmp(d.name, "double") != 0) return d.name;
  return "UNDEFINED";
}

Status field_error(size_t op, const std::string& where, const std::string& what) {
  return Errorf(code::kInvalidParam, "ops.json: op %zu: %s: %s", op, where.c_str(), what.c_str());
}

// Converts a flat list of numbers into the bytes of `dtype`.
Status const_bytes(const json& values, graph::DType dtype, std::vector<uint8_t>* out) {
  const size_t w = graph::dtype_bytes(dtype);
  out->assign(values.size() * w, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    const json& v = values[i];
    if (!v.is_number() && !v.is_boolean()) return Status(code::kInvalidParam, "const_value holds a non-number");
    const double d = v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
    uint8_t* p = out->data() + i * w;
    switch (dtype) {
      case graph::DType::kFloat32: { float x = static_cast<float>(d); std::memcpy(p, &x, 4); break; }
      case graph::DType::kFloat64: std::memcpy(p, &d, 8); break;
      case graph::DType::kFloat16: { uint16_t x = float_to_half(static_cast<float>(d)); std::memcpy(p, &x, 2); break; }
      case graph::DType::kBFloat16: { uint16_t x = float_to_bf16(static_cast<float>(d)); std::memcpy(p, &x, 2); break; }
      case graph::DType::kBool: *p = d != 0; break;
      case graph::DType::kInt8: { int8_t x = static_cast<int8_t>(d); std::memcpy(p, &x, 1); break; }
      case graph::DType::kUInt8: { uint8_t x = static_cast<uint8_t>(d); std::memcpy(p, &x, 1); break; }
      case graph::DType::kInt16: { int16_t x = static_cast<int16_t>(d); std::memcpy(p, &x, 2); break; }
      case graph::DType::kUInt16: { uint16_t x = static_cast<uint16_t>(d); std::memcpy(p, &x, 2); break; }
      case graph::DType::kInt32: { int32_t x = static_cast<int32_t>(d); std::memcpy(p, &x, 4); break; }
      case graph::DType::kUInt32: { uint32_t x = static_cast<uint32_t>(d); std::memcpy(p, &x, 4); break; }
      case graph::DType::kInt64: { int64_t x = v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(d); std::memcpy(p, &x, 8); break; }
      case graph::DType::kUInt64: { uint64_t x = v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(d); std::memcpy(p, &x, 8); break; }
      default: return Status(code::kInvalidParam, "const_value is not supported for this type");
    }
  }
  return Status::Ok();
}

// Reads a constant's bytes back as numbers (for writing ops.json-form JSON).
json const_values(const graph::TensorData& c) {
  json list = json::array();
  const int64_t n = c.elements();
  for (int64_t i = 0; i < n; ++i) {
    switch (c.dtype) {
      case graph::DType::kFloat32: list.push_back(c.as<float>()[i]); break;
      case graph::DType::kFloat64: list.push_back(c.as<double>()[i]); break;
      case graph::DType::kFloat16: list.push_back(half_to_float(c.as<uint16_t>()[i])); break;
      case graph::DType::kBFloat16: list.push_back(bf16_to_float(c.as<uint16_t>()[i])); break;
      case graph::DType::kBool: list.push_back(c.as<uint8_t>()[i] != 0); break;
      case graph::DType::kInt8: list.push_back(c.as<int8_t>()[i]); break;
      case graph::DType::kUInt8: list.push_back(c.as<uint8_t>()[i]); break;
      case graph::DType::kInt16: list.push_back(c.as<int16_t>()[i]); break;
      case graph::DType::kUInt16: list.push_back(c.as<uint16_t>()[i]); break;
      case graph::DType::kInt32: list.push_back(c.as<int32_t>()[i]); break;
      case graph::DType::kUInt32: list.push_back(c.as<uint32_t>()[i]); break;
      case graph::DType::kInt64: list.push_back(c.as<int64_t>()[i]); break;
      case graph::DType::kUInt64: list.push_back(c.as<uint64_t>()[i]); break;
      default: break;
    }
  }
  return list;
}

Status parse_desc(const json& d, size_t op, const std::string& where, bool is_input, TensorSpec* out) {
  if (!d.is_object()) return field_error(op, where, "is not an object");
  TensorSpec s;
  auto fmt = d.find("format");
  if (fmt != d.end()) {
    if (!fmt->is_string() || !format_from_name(fmt->get<std::string>(), &s.format))
      return field_error(op, where + ".format", "unknown format " + fmt->dump() + " (ND, NCHW, NHWC, ...)");
  }
  auto type = d.find("type");
  if (type == d.end() || !type->is_string() || !dtype_from_name(type->get<std::string>(), &s.dtype))
    return field_error(op, where + ".type",
                       type == d.end() ? std::string("missing") : "unknown type " + type->dump() + " (float16, float, int32, ...)");
  auto shape = d.find("shape");
  if (shape == d.end() || !shape->is_array()) return field_error(op, where + ".shape", "missing or not a list");
  if (shape->size() > 64) return field_error(op, where + ".shape", "more than 64 dims");
  for (const json& x : *shape) {
    if (!x.is_number_integer() || x.get<int64_t>() < -2)
      return field_error(op, where + ".shape", "dims are integers >= 0, -1 (dynamic) or [-2] (unknown rank)");
    s.dims.push_back(x.get<int64_t>());
  }
  if (auto r = d.find("shape_range"); r != d.end()) {
    if (!r->is_array()) return field_error(op, where + ".shape_range", "not a list of [min, max]");
    for (const json& p : *r) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer())
        return field_error(op, where + ".shape_range", "each item is [min, max]");
      s.range.emplace_back(p[0].get<int64_t>(), p[1].get<int64_t>());
    }
  }
  if (auto n = d.find("name"); n != d.end() && n->is_string()) s.name = n->get<std::string>();
  if (is_input) {
    auto c = d.find("is_const");
    if (c != d.end() && c->is_boolean() && c->get<bool>()) {
      auto v = d.find("const_value");
      if (v == d.end() || !v->is_array()) return field_error(op, where + ".const_value", "missing or not a list");
      std::vector<uint8_t> bytes;
      Status st = const_bytes(*v, s.dtype, &bytes);
      if (!st.ok()) return field_error(op, where + ".const_value", st.message());
      s.constant = graph::TensorData::copy_of(s.dtype, s.dims, bytes.data(), bytes.size());
    }
  }
  *out = std::move(s);
  return Status::Ok();
}

Status parse_attr(const json& a, size_t op, OpAttrs* attrs) {
  if (!a.is_object()) return field_error(op, "attr", "each attr is {name, type, value}");
  auto n = a.find("name");
  auto t = a.find("type");
  auto v = a.find("value");
  if (n == a.end() || !n->is_string()) return field_error(op, "attr", "an attr has no name");
  const std::string name = n->get<std::string>();
  const std::string where = "attr '" + name + "'";
  if (t == a.end() || !t->is_string()) return field_error(op, where, "no type");
  if (v == a.end()) return field_error(op, where, "no value");
  const std::string type = t->get<std::string>();
  auto ints = [&](const json& list, std::vector<int64_t>* out) {
    if (!list.is_array()) return false;
    for (const json& x : list) {
      if (x.is_boolean()) out->push_back(x.get<bool>());
      else if (x.is_number_integer()) out->push_back(x.get<int64_t>());
      else return false;
    }
    return true;
  };
  try {
    if (type == "bool") (*attrs)[name] = AttrValue::of_bool(v->get<bool>());
    else if (type == "int") (*attrs)[name] = AttrValue::of_int(v->get<int64_t>());
    else if (type == "float") (*attrs)[name] = AttrValue::of_float(v->get<float>());
    else if (type == "string") (*attrs)[name] = AttrValue::of_string(v->get<std::string>());
    else if (type == "data_type") {
      graph::DType dt;
      if (v->is_string() && dtype_from_name(v->get<std::string>(), &dt))
        (*attrs)[name] = AttrValue::of_data_type(graph::dtype_to_acl(dt));
      else
        (*attrs)[name] = AttrValue::of_data_type(static_cast<int>(v->get<int64_t>()));
    } else if (type == "list_bool" || type == "list_int") {
      std::vector<int64_t> list;
      if (!ints(*v, &list)) return field_error(op, where, "value is not a list of " + type.substr(5));
      (*attrs)[name] = AttrValue::of_ints(list, type == "list_bool" ? AttrValue::Kind::kListBool
                                                                    : AttrValue::Kind::kListInt);
    } else if (type == "list_float") {
      (*attrs)[name] = AttrValue::of_floats(v->get<std::vector<float>>());
    } else if (type == "list_string") {
      (*attrs)[name] = AttrValue::of_strings(v->get<std::vector<std::string>>());
    } else if (type == "list_data_type") {
      std::vector<int64_t> list;
      if (!v->is_array()) return field_error(op, where, "value is not a list");
      for (const json& x : *v) {
        graph::DType dt;
        if (x.is_string() && dtype_from_name(x.get<std::string>(), &dt)) list.push_back(graph::dtype_to_acl(dt));
        else list.push_back(x.get<int64_t>());
      }
      (*attrs)[name] = AttrValue::of_ints(list, AttrValue::Kind::kListDataType);
    } else if (type == "list_list_int") {
      std::vector<std::vector<int64_t>> lists;
      if (!v->is_array()) return field_error(op, where, "value is not a list of lists");
      for (const json& inner : *v) {
        std::vector<int64_t> list;
        if (!ints(inner, &list)) return field_error(op, where, "value is not a list of lists of int");
        lists.push_back(std::move(list));
      }
      (*attrs)[name] = AttrValue::of_lists(std::move(lists));
    } else {
      return field_error(op, where, "unknown type '" + type + "' (bool, int, float, string, data_type, list_bool, "
                                    "list_int, list_float, list_string, list_data_type, list_list_int)");
    }
  } catch (const json::exception&) {
    return field_error(op, where, "value " + v->dump() + " is not a " + type);
  }
  return Status::Ok();
}

Status parse_op(const json& o, size_t index, OpCall* call) {
  if (!o.is_object()) return field_error(index, "op", "each op is an object with op, input_desc, output_desc, attr");
  auto type = o.find("op");
  if (type == o.end() || !type->is_string() || type->get<std::string>().empty())
    return field_error(index, "op", "missing op type");
  call->type = type->get<std::string>();
  for (const char* key : {"input_desc", "output_desc"}) {
    auto list = o.find(key);
    if (list == o.end()) continue;
    if (!list->is_array()) return field_error(index, key, "not a list");
    const bool is_input = std::strcmp(key, "input_desc") == 0;
    for (size_t i = 0; i < list->size(); ++i) {
      TensorSpec s;
      OPENACL_RETURN_IF_ERROR(parse_desc((*list)[i], index, std::string(key) + "[" + std::to_string(i) + "]",
                                         is_input, &s));
      (is_input ? call->inputs : call->outputs).push_back(std::move(s));
    }
  }
  if (auto attrs = o.find("attr"); attrs != o.end()) {
    if (!attrs->is_array()) return field_error(index, "attr", "not a list");
    for (const json& a : *attrs) OPENACL_RETURN_IF_ERROR(parse_attr(a, index, &call->attrs));
  }
  return Status::Ok();
}

ojson desc_json(const TensorSpec& s) {
  ojson d = ojson::object();
  d["format"] = format_to_name(s.format);
  d["shape"] = s.dims;
  d["type"] = dtype_json_name(s.dtype);
  if (!s.range.empty()) {
    ojson r = ojson::array();
    for (auto& [lo, hi] : s.range) r.push_back({lo, hi});
    d["shape_range"] = r;
  }
  if (!s.name.empty()) d["name"] = s.name;
  if (s.constant) {
    d["is_const"] = true;
    d["const_value"] = const_values(*s.constant);
  }
  return d;
}

ojson attr_json(const std::string& name, const AttrValue& v) {
  using K = AttrValue::Kind;
  ojson a = ojson::object();
  a["name"] = name;
  switch (v.kind) {
    case K::kBool: a["type"] = "bool"; a["value"] = v.i != 0; break;
    case K::kInt: a["type"] = "int"; a["value"] = v.i; break;
    case K::kFloat: a["type"] = "float"; a["value"] = v.f; break;
    case K::kString: a["type"] = "string"; a["value"] = v.s; break;
    case K::kDataType: a["type"] = "data_type"; a["value"] = v.i; break;
    case K::kListBool: {
      a["type"] = "list_bool";
      ojson l = ojson::array();
      for (int64_t x : v.ints) l.push_back(x != 0);
      a["value"] = l;
      break;
    }
    case K::kListInt: a["type"] = "list_int"; a["value"] = v.ints; break;
    case K::kListFloat: a["type"] = "list_float"; a["value"] = v.floats; break;
    case K::kListString: a["type"] = "list_string"; a["value"] = v.strings; break;
    case K::kListDataType: a["type"] = "list_data_type"; a["value"] = v.ints; break;
    case K::kListListInt: a["type"] = "list_list_int"; a["value"] = v.lists; break;
  }
  return a;
}

}  // namespace

bool format_from_name(const std::string& name, int* format) {
  for (const FormatName& f : kFormats)
    if (name == f.name) {
      *format = f.value;
      return true;
    }
  return false;
}

const char* format_to_name(int format) {
  for (const FormatName& f : kFormats)
    if (f.value == format) return f.name;
  return "ND";
}

bool dtype_from_name(const std::string& name, graph::DType* dtype) {
  for (const DTypeName& d : kDTypes)
    if (name == d.name) {
      *dtype = d.value;
      return true;
    }
  return false;
}

Status parse_ops_json(const std::string& text, std::vector<OpCall>* out) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status(code::kInvalidParam, "ops.json is not valid JSON");
  if (j.is_object()) j = json::array({j});  // one op without the list
  if (!j.is_array() || j.empty()) return Status(code::kInvalidParam, "ops.json holds no ops: give a list of ops");
  out->clear();
  for (size_t i = 0; i < j.size(); ++i) {
    OpCall call;
    OPENACL_RETURN_IF_ERROR(parse_op(j[i], i, &call));
    out->push_back(std::move(call));
  }
  return Status::Ok();
}

std::string op_call_json(const OpCall& call) {
  ojson o = ojson::object();
  o["op"] = call.type;
  ojson ins = ojson::array(), outs = ojson::array(), attrs = ojson::array();
  for (const TensorSpec& s : call.inputs) ins.push_back(desc_json(s));
  for (const TensorSpec& s : call.outputs) outs.push_back(desc_json(s));
  for (const auto& [name, v] : call.attrs) attrs.push_back(attr_json(name, v));
  o["input_desc"] = ins;
  o["output_desc"] = outs;
  o["attr"] = attrs;
  return o.dump();
}

Status op_call_from_json(const std::string& text, OpCall* out) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status(code::kInvalidParam, "the op description is not valid JSON");
  *out = OpCall();
  return parse_op(j, 0, out);
}

Status write_op_om(const OpCall& call, const std::string& producer_command, std::string* bytes) {
  model::OmModel om;
  OPENACL_RETURN_IF_ERROR(CompiledOp::build_graph(call.type, call.inputs, call.outputs, call.attrs, &om.graph));
  // Check the op compiles for these descs (shapes, kernels) before writing it.
  std::shared_ptr<CompiledOp> probe;
  OPENACL_RETURN_IF_ERROR(CompiledOp::compile(call.type, call.inputs, call.outputs, call.attrs, {}, &probe));
  om.meta.producer = "OpenACL atc --singleop";
  om.meta.build_command = producer_command;
  om.meta.source = call.type;
  om.meta.single_op = op_call_json(call);
  return model::write_om(om, bytes);
}

Status load_op_om(const void* data, size_t size, const model::Allocator& allocator,
                  std::shared_ptr<CompiledOp>* out) {
  if (model::sniff_format(data, size) != model::ModelFormat::kOm)
    return Status(code::kOpLoadFailed, "not an OpenACL .om file (build single-op models with atc --singleop)");
  model::OmView view;
  Status st = model::open_om(data, size, &view);
  if (!st.ok()) return Status(code::kOpLoadFailed, st.message());
  if (view.meta.single_op.empty())
    return Status(code::kOpLoadFailed, "the .om is a model, not a single-op model (load it with aclmdlLoadFromFile; "
                                       "build single-op models with atc --singleop)");
  OpCall call;
  st = op_call_from_json(view.meta.single_op, &call);
  if (!st.ok()) return Status(code::kOpLoadFailed, "its op description is unreadable: " + st.message());
  return CompiledOp::compile(call.type, call.inputs, call.outputs, call.attrs, allocator, out);
}

}  // namespace openacl::op
