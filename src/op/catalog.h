// The op catalogue: Ascend operator types (Add, MatMulV2, ArgMaxV2, ConcatD, …)
// with their Ascend input, output and attribute names, each mapped onto the
// engine's ONNX ops. A single op is compiled as a small graph built by its
// entry (usually one ONNX node; a few ops need two or three, e.g. Rsqrt =
// Sqrt + Reciprocal) and runs on the model path (single_op.h).
//
// An entry is registered beside its build function, one file per family
// (catalog_math.cpp, catalog_nn.cpp, catalog_shape.cpp):
//
//   OPENACL_REGISTER_ASCEND_OP(MatMulV2)
//       .summary("Matrix product of two 2-D tensors, either operand transposed")
//       .input("x1").input("x2").optional_input("bias")
//       .output("y")
//       .attr_bool("transpose_x1", false).attr_bool("transpose_x2", false)
//       .dtypes({DType::kFloat32, DType::kFloat16})
//       .build([](BuildContext& c) -> Status { ... });
//
// Contract of build(): read inputs (c.input(i): a graph value, or nullptr for
// an omitted optional input), attributes (typed getters; defaults applied,
// kinds already checked), and the caller's output specs (c.output_spec(i),
// e.g. Cast's target dtype); add nodes with c.add(); bind every output with
// c.set_output(). Failures: c.bad_input / c.bad_attr / c.unsupported give the
// CANN code (100021 / 100023 / 100026) and a message naming the op.
// Shapes are not computed here: the engine's shape functions do that after
// build, and their errors are reported against the op.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "op/op_desc.h"

namespace openacl::op {

using graph::DType;

// Opset used for catalogue nodes unless an entry asks for another.
inline constexpr int kCatalogOpset = 18;

struct PortDef {
  std::string name;
  bool optional = false;
  // Variadic: takes every remaining input (ConcatD's x, AddN's x); only the
  // last input may be dynamic.
  bool dynamic = false;
};

struct AttrDef {
  std::string name;
  AttrValue::Kind kind = AttrValue::Kind::kInt;
  bool required = false;
  std::optional<AttrValue> default_value;  // absent and not required: "unset"
};

class BuildContext;
using BuildFn = std::function<Status(BuildContext&)>;

// Upper bounds for outputs whose dims depend on the data (NonZero, Unique):
// given the inputs, fill dims (with -1 where data decides) and, for those,
// ranges. Used by aclopInferShape; entries without it report what the shape
// functions infer (unknown dims get range [0, -1]).
using BoundsFn = std::function<Status(const std::vector<TensorSpec>& inputs, const OpAttrs& attrs,
                                      std::vector<TensorSpec>* outputs)>;

struct OpDef {
  std::string type;     // Ascend op type
  std::string summary;  // one line, for the published catalogue
  std::vector<PortDef> inputs;
  std::vector<PortDef> outputs;
  std::vector<AttrDef> attrs;
  // Element types of the first input (the op's "T"); empty: any the kernels take.
  std::vector<DType> dtypes;
  BuildFn build;
  BoundsFn bounds;  // optional

  const AttrDef* find_attr(const std::string& name) const;
  // Inputs accepted: [min_inputs, max_inputs] (max -1 with a dynamic input).
  int min_inputs() const;
  int max_inputs() const;
};

// What build() sees. Created by the op layer for one compile.
class BuildContext {
 public:
  BuildContext(const OpDef& def, graph::Graph& graph, std::vector<graph::Value*> inputs,
               const std::vector<TensorSpec>& input_specs, const std::vector<TensorSpec>& output_specs,
               const OpAttrs& attrs);

  const OpDef& def() const { return def_; }
  graph::Graph& graph() { return graph_; }

  size_t num_inputs() const { return inputs_.size(); }
  // Graph value of input i (a graph input, or a constant for aclSetTensorConst
  // inputs); nullptr when omitted or i is past the inputs given.
  graph::Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // Inputs from i on (the dynamic input's members).
  std::vector<graph::Value*> inputs_from(size_t i) const;
  const TensorSpec& input_spec(size_t i) const;
  size_t num_outputs() const { return output_specs_.size(); }
  const TensorSpec& output_spec(size_t i) const;

  // Attributes (the def's default when not set; the kind was checked before
  // build, so these do not fail for declared attributes).
  bool has_attr(const std::string& name) const;  // set by the caller or defaulted
  bool attr_set_by_caller(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  int64_t get_int(const std::string& name) const;
  float get_float(const std::string& name) const;
  std::string get_string(const std::string& name) const;
  DType get_dtype(const std::string& name) const;  // kDataType attribute as DType
  std::vector<int64_t> get_ints(const std::string& name) const;  // kListInt / kListBool / kListDataType
  std::vector<float> get_floats(const std::string& name) const;
  std::vector<std::string> get_strings(const std::string& name) const;
  std::vector<std::vector<int64_t>> get_lists(const std::string& name) const;

  // Adds a node of the default ONNX domain. `attrs`: ONNX attributes.
  // Returns its outputs (num_outputs fresh values).
  std::vector<graph::Value*> add(const std::string& onnx_op, std::vector<graph::Value*> inputs,
                                 graph::AttributeMap attrs = {}, size_t num_outputs = 1,
                                 int opset = kCatalogOpset);
  // add() for one output.
  graph::Value* add1(const std::string& onnx_op, std::vector<graph::Value*> inputs,
                     graph::AttributeMap attrs = {}, int opset = kCatalogOpset);
  // Constant values: dims as given; without dims, 1-D (a scalar for one value).
  graph::Value* const_i64(const std::vector<int64_t>& values);
  graph::Value* const_i64_scalar(int64_t value);
  graph::Value* const_f32(const std::vector<float>& values, std::vector<int64_t> dims = {});
  // A constant scalar of `dtype` holding `value` (converted), e.g. Muls' scalar.
  graph::Value* const_scalar(DType dtype, double value);

  // Binds output i of the op to `v`. Every output must be bound.
  void set_output(size_t i, graph::Value* v);
  graph::Value* output(size_t i) const;

  // Failures with CANN's codes; the message is prefixed with the op type.
  Status bad_input(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));    // 100021
  Status bad_output(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));   // 100022
  Status bad_attr(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));     // 100023
  Status unsupported(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));  // 100026

 private:
  const AttrValue* attr(const std::string& name) const;

  const OpDef& def_;
  graph::Graph& graph_;
  std::vector<graph::Value*> inputs_;
  const std::vector<TensorSpec>& input_specs_;
  const std::vector<TensorSpec>& output_specs_;
  const OpAttrs& attrs_;
  std::vector<graph::Value*> outputs_;
};

// ONNX attribute helpers for build functions.
graph::Attribute onnx_int(int64_t v);
graph::Attribute onnx_float(float v);
graph::Attribute onnx_string(std::string v);
graph::Attribute onnx_ints(std::vector<int64_t> v);
graph::Attribute onnx_floats(std::vector<float> v);

class Catalog {
 public:
  static Catalog& instance();
  void add(OpDef def);
  // nullptr when unknown.
  const OpDef* find(const std::string& type) const;
  // Up to n known types closest to `type` (edit distance, case-insensitive),
  // for "unknown op type" messages.
  std::vector<std::string> nearest(const std::string& type, size_t n = 3) const;
  // Every entry, sorted by type.
  std::vector<const OpDef*> all() const;

 private:
  std::vector<OpDef> defs_;
};

// Fluent registration; registers when build() is called.
class OpDefRegistration {
 public:
  explicit OpDefRegistration(const char* type) { def_.type = type; }
  OpDefRegistration& summary(std::string s) { def_.summary = std::move(s); return *this; }
  OpDefRegistration& input(std::string name) { def_.inputs.push_back({std::move(name), false, false}); return *this; }
  OpDefRegistration& optional_input(std::string name) {
    def_.inputs.push_back({std::move(name), true, false});
    return *this;
  }
  OpDefRegistration& dynamic_input(std::string name) {
    def_.inputs.push_back({std::move(name), false, true});
    return *this;
  }
  OpDefRegistration& output(std::string name) { def_.outputs.push_back({std::move(name), false, false}); return *this; }
  OpDefRegistration& optional_output(std::string name) {
    def_.outputs.push_back({std::move(name), true, false});
    return *this;
  }
  OpDefRegistration& dynamic_output(std::string name) {
    def_.outputs.push_back({std::move(name), false, true});
    return *this;
  }
  // Attribute with a default (optional for the caller).
  OpDefRegistration& attr(std::string name, AttrValue default_value) {
    def_.attrs.push_back({std::move(name), default_value.kind, false, std::move(default_value)});
    return *this;
  }
  OpDefRegistration& attr_bool(std::string name, bool d) { return attr(std::move(name), AttrValue::of_bool(d)); }
  OpDefRegistration& attr_int(std::string name, int64_t d) { return attr(std::move(name), AttrValue::of_int(d)); }
  OpDefRegistration& attr_float(std::string name, float d) { return attr(std::move(name), AttrValue::of_float(d)); }
  OpDefRegistration& attr_string(std::string name, std::string d) {
    return attr(std::move(name), AttrValue::of_string(std::move(d)));
  }
  OpDefRegistration& attr_ints(std::string name, std::vector<int64_t> d) {
    return attr(std::move(name), AttrValue::of_ints(std::move(d)));
  }
  OpDefRegistration& attr_floats(std::string name, std::vector<float> d) {
    return attr(std::move(name), AttrValue::of_floats(std::move(d)));
  }
  // The caller must set it.
  OpDefRegistration& required_attr(std::string name, AttrValue::Kind kind) {
    def_.attrs.push_back({std::move(name), kind, true, std::nullopt});
    return *this;
  }
  // Optional, no default: has_attr() is false unless the caller sets it.
  OpDefRegistration& optional_attr(std::string name, AttrValue::Kind kind) {
    def_.attrs.push_back({std::move(name), kind, false, std::nullopt});
    return *this;
  }
  OpDefRegistration& dtypes(std::vector<DType> types) { def_.dtypes = std::move(types); return *this; }
  OpDefRegistration& bounds(BoundsFn fn) { def_.bounds = std::move(fn); return *this; }
  OpDefRegistration& build(BuildFn fn) {
    def_.build = std::move(fn);
    Catalog::instance().add(def_);
    return *this;
  }

 private:
  OpDef def_;
};

#define OPENACL_ASCEND_OP_CONCAT_(a, b) a##b
#define OPENACL_ASCEND_OP_CONCAT(a, b) OPENACL_ASCEND_OP_CONCAT_(a, b)
// Registers at static-initialisation time (the op layer is an OBJECT library,
// so every catalogue file's registrations reach the final binary).
#define OPENACL_REGISTER_ASCEND_OP(type) \
  [[maybe_unused]] static ::openacl::op::OpDefRegistration OPENACL_ASCEND_OP_CONCAT(ascend_op_, __LINE__) = \
      ::openacl::op::OpDefRegistration(#type)

// Common dtype sets for entries.
inline const std::vector<DType>& float_types() {
  static const std::vector<DType> t = {DType::kFloat32, DType::kFloat16};
  return t;
}
inline const std::vector<DType>& numeric_types() {
  static const std::vector<DType> t = {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64,
                                       DType::kInt8, DType::kUInt8};
  return t;
}

}  // namespace openacl::op
