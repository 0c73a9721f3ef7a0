#include "op/catalog.h"

#include <algorithm>
#include <cctype>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "base/codes.h"
#include "base/fp16.h"
#include "base/log.h"
#include "base/text.h"

namespace openacl::op {

const AttrDef* OpDef::find_attr(const std::string& name) const {
  for (const AttrDef& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

int OpDef::min_inputs() const {
  int n = 0;
  for (const PortDef& p : inputs)
    if (!p.optional) ++n;
  return n;
}

int OpDef::max_inputs() const {
  for (const PortDef& p : inputs)
    if (p.dynamic) return -1;
  return static_cast<int>(inputs.size());
}

BuildContext::BuildContext(const OpDef& def, graph::Graph& graph, std::vector<graph::Value*> inputs,
                           const std::vector<TensorSpec>& input_specs, const std::vector<TensorSpec>& output_specs,
                           const OpAttrs& attrs)
    : def_(def),
      graph_(graph),
      inputs_(std::move(inputs)),
      input_specs_(input_specs),
      output_specs_(output_specs),
      attrs_(attrs),
      outputs_(output_specs.size(), nullptr) {}

std::vector<graph::Value*> BuildContext::inputs_from(size_t i) const {
  if (i >= inputs_.size()) return {};
  return std::vector<graph::Value*>(inputs_.begin() + static_cast<std::ptrdiff_t>(i), inputs_.end());
}

const TensorSpec& BuildContext::input_spec(size_t i) const {
  static const TensorSpec kNone = [] {
    TensorSpec s;
    s.format = kFormatUndefined;
    return s;
  }();
  return i < input_specs_.size() ? input_specs_[i] : kNone;
}

const TensorSpec& BuildContext::output_spec(size_t i) const {
  static const TensorSpec kNone;
  return i < output_specs_.size() ? output_specs_[i] : kNone;
}

const AttrValue* BuildContext::attr(const std::string& name) const {
  auto it = attrs_.find(name);
  if (it != attrs_.end()) return &it->second;
  const AttrDef* d = def_.find_attr(name);
  return d && d->default_value ? &*d->default_value : nullptr;
}

bool BuildContext::has_attr(const std::string& name) const { return attr(name) != nullptr; }
bool BuildContext::attr_set_by_caller(const std::string& name) const { return attrs_.count(name) != 0; }

bool BuildContext::get_bool(const std::string& name) const {
  const AttrValue* a = attr(name);
  return a && a->i != 0;
}
int64_t BuildContext::get_int(const std::string& name) const {
  const AttrValue* a = attr(name);
  return a ? a->i : 0;
}
float BuildContext::get_float(const std::string& name) const {
  const AttrValue* a = attr(name);
  return a ? a->f : 0.0f;
}
std::string BuildContext::get_string(const std::string& name) const {
  const AttrValue* a = attr(name);
  return a ? a->s : std::string();
}
DType BuildContext::get_dtype(const std::string& name) const {
  const AttrValue* a = attr(name);
  return a ? graph::dtype_from_acl(static_cast<int>(a->i)) : DType::kUndefined;
}
std::vector<int64_t> BuildContext::get_ints(const std::string& name) const {
  const AttrValue* a = attr(name);
  return a ? a->ints : std::vector<int64_t>{};
}
std::vector<float> BuildContext::get_floats(const std::string& name) const {
  const AttrValue* a = attr(name);
  return a ? a->floats : std::vector<float>{};
}
std::vector<std::string> BuildContext::get_strings(const std::string& name) const {
  const AttrValue* a = attr(name);
  return a ? a->strings : std::vector<std::string>{};
}
std::vector<std::vector<int64_t>> BuildContext::get_lists(const std::string& name) const {
  const AttrValue* a = attr(name);
  return a ? a->lists : std::vector<std::vector<int64_t>>{};
}

std::vector<graph::Value*> BuildContext::add(const std::string& onnx_op, std::vector<graph::Value*> inputs,
                                             graph::AttributeMap attrs, size_t num_outputs, int opset) {
  std::vector<graph::Value*> outs;
  outs.reserve(num_outputs);
  for (size_t i = 0; i < num_outputs; ++i) outs.push_back(graph_.add_value(""));
  const std::string name = def_.type + "/" + onnx_op + "_" + std::to_string(graph_.nodes().size());
  graph::Node* n = graph_.add_node(name, onnx_op, std::move(inputs), outs, "", opset);
  n->attrs = std::move(attrs);
  return outs;
}

graph::Value* BuildContext::add1(const std::string& onnx_op, std::vector<graph::Value*> inputs,
                                 graph::AttributeMap attrs, int opset) {
  return add(onnx_op, std::move(inputs), std::move(attrs), 1, opset)[0];
}

namespace {

graph::Value* constant_value(graph::Graph& g, std::shared_ptr<graph::TensorData> data) {
  graph::TensorType t;
  t.dtype = data->dtype;
  graph::Shape s;
  for (int64_t d : data->dims) s.emplace_back(d);
  t.shape = s;
  graph::Value* v = g.add_value("", t);
  v->constant = std::move(data);
  return v;
}

}  // namespace

graph::Value* BuildContext::const_i64(const std::vector<int64_t>& values) {
  return constant_value(graph_, graph::TensorData::copy_of(DType::kInt64, {static_cast<int64_t>(values.size())},
                                                           values.data(), values.size() * sizeof(int64_t)));
}

graph::Value* BuildContext::const_i64_scalar(int64_t value) {
  return constant_value(graph_, graph::TensorData::copy_of(DType::kInt64, {}, &value, sizeof(value)));
}

graph::Value* BuildContext::const_f32(const std::vector<float>& values, std::vector<int64_t> dims) {
  if (dims.empty() && values.size() != 1) dims = {static_cast<int64_t>(values.size())};
  return constant_value(graph_, graph::TensorData::copy_of(DType::kFloat32, std::move(dims), values.data(),
                                                           values.size() * sizeof(float)));
}

graph::Value* BuildContext::const_scalar(DType dtype, double value) {
  uint8_t buf[8] = {};
  switch (dtype) {
    case DType::kFloat32: { float v = static_cast<float>(value); std::memcpy(buf, &v, 4); break; }
    case DType::kFloat64: std::memcpy(buf, &value, 8); break;
    case DType::kFloat16: { uint16_t v = float_to_half(static_cast<float>(value)); std::memcpy(buf, &v, 2); break; }
    case DType::kBFloat16: { uint16_t v = float_to_bf16(static_cast<float>(value)); std::memcpy(buf, &v, 2); break; }
    case DType::kInt8: { int8_t v = static_cast<int8_t>(value); std::memcpy(buf, &v, 1); break; }
    case DType::kUInt8: { uint8_t v = static_cast<uint8_t>(value); std::memcpy(buf, &v, 1); break; }
    case DType::kBool: buf[0] = value != 0; break;
    case DType::kInt16: { int16_t v = static_cast<int16_t>(value); std::memcpy(buf, &v, 2); break; }
    case DType::kUInt16: { uint16_t v = static_cast<uint16_t>(value); std::memcpy(buf, &v, 2); break; }
    case DType::kInt32: { int32_t v = static_cast<int32_t>(value); std::memcpy(buf, &v, 4); break; }
    case DType::kUInt32: { uint32_t v = static_cast<uint32_t>(value); std::memcpy(buf, &v, 4); break; }
    case DType::kInt64: { int64_t v = static_cast<int64_t>(value); std::memcpy(buf, &v, 8); break; }
    case DType::kUInt64: { uint64_t v = static_cast<uint64_t>(value); std::memcpy(buf, &v, 8); break; }
    default: break;
  }
  return constant_value(graph_, graph::TensorData::copy_of(dtype, {}, buf, graph::dtype_bytes(dtype)));
}

void BuildContext::set_output(size_t i, graph::Value* v) {
  if (i < outputs_.size()) outputs_[i] = v;
}

graph::Value* BuildContext::output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }

namespace {

Status op_failure(int code, const std::string& type, const char* fmt, va_list args) {
  char buf[768];
  std::vsnprintf(buf, sizeof buf, fmt, args);
  return Errorf(code, "%s: %s", type.c_str(), buf);
}

}  // namespace

#define OPENACL_OP_FAIL(code_value)                                \
  va_list args;                                                    \
  va_start(args, fmt);                                             \
  Status st = op_failure(code_value, def_.type, fmt, args);        \
  va_end(args);                                                    \
  return st

Status BuildContext::bad_input(const char* fmt, ...) const { OPENACL_OP_FAIL(code::kOpInputNotMatch); }
Status BuildContext::bad_output(const char* fmt, ...) const { OPENACL_OP_FAIL(code::kOpOutputNotMatch); }
Status BuildContext::bad_attr(const char* fmt, ...) const { OPENACL_OP_FAIL(code::kOpAttrNotMatch); }
Status BuildContext::unsupported(const char* fmt, ...) const { OPENACL_OP_FAIL(code::kUnsupportedDataType); }

#undef OPENACL_OP_FAIL

graph::Attribute onnx_int(int64_t v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kInt;
  a.i = v;
  return a;
}
graph::Attribute onnx_float(float v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kFloat;
  a.f = v;
  return a;
}
graph::Attribute onnx_string(std::string v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}
graph::Attribute onnx_ints(std::vector<int64_t> v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
graph::Attribute onnx_floats(std::vector<float> v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}

Catalog& Catalog::instance() {
  static Catalog* c = new Catalog();  // never destroyed: entries outlive static destruction order
  return *c;
}

void Catalog::add(OpDef def) {
  for (OpDef& d : defs_) {
    if (d.type == def.type) {
      // Two registrations of one type is a programming error; the later one
      // wins so the process still works, and the log says so.
      OACL_ERROR("op catalogue: %s registered twice; keeping the later entry", def.type.c_str());
      d = std::move(def);
      return;
    }
  }
  defs_.push_back(std::move(def));
}

const OpDef* Catalog::find(const std::string& type) const {
  for (const OpDef& d : defs_)
    if (d.type == type) return &d;
  return nullptr;
}

std::vector<std::string> Catalog::nearest(const std::string& type, size_t n) const {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const OpDef& d : defs_) scored.emplace_back(edit_distance(type, d.type), d.type);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  // Only names that are plausibly what was meant: within half the length.
  const size_t limit = std::max<size_t>(2, type.size() / 2);
  for (auto& [dist, name] : scored) {
    if (out.size() == n || dist > limit) break;
    out.push_back(name);
  }
  return out;
}

std::vector<const OpDef*> Catalog::all() const {
  std::vector<const OpDef*> out;
  for (const OpDef& d : defs_) out.push_back(&d);
  std::sort(out.begin(), out.end(), [](const OpDef* a, const OpDef* b) { return a->type < b->type; });
  return out;
}

}  // namespace openacl::op
