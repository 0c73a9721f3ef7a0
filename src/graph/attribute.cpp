#include "graph/attribute.h"

namespace openacl::graph {

const char* attribute_kind_name(Attribute::Kind k) {
  switch (k) {
    case Attribute::Kind::kFloat: return "float";
    case Attribute::Kind::kInt: return "int";
    case Attribute::Kind::kString: return "string";
    case Attribute::Kind::kTensor: return "tensor";
    case Attribute::Kind::kGraph: return "graph";
    case Attribute::Kind::kFloats: return "floats";
    case Attribute::Kind::kInts: return "ints";
    case Attribute::Kind::kStrings: return "strings";
    case Attribute::Kind::kTensors: return "tensors";
    case Attribute::Kind::kGraphs: return "graphs";
    default: return "undefined";
  }
}

int64_t AttributeMap::get_int(const std::string& name, int64_t def) const {
  const Attribute* a = find(name);
  return a && a->kind == Attribute::Kind::kInt ? a->i : def;
}

float AttributeMap::get_float(const std::string& name, float def) const {
  const Attribute* a = find(name);
  return a && a->kind == Attribute::Kind::kFloat ? a->f : def;
}

std::string AttributeMap::get_string(const std::string& name, const std::string& def) const {
  const Attribute* a = find(name);
  return a && a->kind == Attribute::Kind::kString ? a->s : def;
}

std::optional<std::vector<int64_t>> AttributeMap::get_ints(const std::string& name) const {
  const Attribute* a = find(name);
  if (!a || a->kind != Attribute::Kind::kInts) return std::nullopt;
  return a->ints;
}

std::optional<std::vector<float>> AttributeMap::get_floats(const std::string& name) const {
  const Attribute* a = find(name);
  if (!a || a->kind != Attribute::Kind::kFloats) return std::nullopt;
  return a->floats;
}

}  // namespace openacl::graph
