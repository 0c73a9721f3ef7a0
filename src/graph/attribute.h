// Node attributes (ONNX AttributeProto's kinds).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/tensor.h"

namespace openacl::graph {

class Graph;

struct Attribute {
  enum class Kind { kUndefined, kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kTensors, kGraphs };
  Kind kind = Kind::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<TensorData> t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<std::shared_ptr<TensorData>> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
};

const char* attribute_kind_name(Attribute::Kind k);

// Typed lookups with defaults. A present attribute of the wrong kind counts as
// absent for get_*; shape functions that care check kinds with find().
class AttributeMap {
 public:
  void set(std::string name, Attribute a) { map_[std::move(name)] = std::move(a); }
  const Attribute* find(const std::string& name) const {
    auto it = map_.find(name);
    return it == map_.end() ? nullptr : &it->second;
  }
  bool has(const std::string& name) const { return map_.count(name) != 0; }
  int64_t get_int(const std::string& name, int64_t def) const;
  float get_float(const std::string& name, float def) const;
  std::string get_string(const std::string& name, const std::string& def) const;
  std::optional<std::vector<int64_t>> get_ints(const std::string& name) const;
  std::optional<std::vector<float>> get_floats(const std::string& name) const;
  const std::map<std::string, Attribute>& all() const { return map_; }

 private:
  std::map<std::string, Attribute> map_;
};

}  // namespace openacl::graph
