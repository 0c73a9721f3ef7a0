// Op schemas: what the engine knows about an op type — input/output counts and
// its shape function. Each op registers itself in its own file beside its shape
// function (STYLE.md 4, 6): the importer, the planner, aclopInferShape and the
// tests all call the same function.
//
//   OPENACL_REGISTER_OP(Relu).inputs(1, 1).outputs(1, 1).shape(same_as_input0);
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace openacl::graph {

// What a shape function sees and fills. Input types are those of the node's
// inputs (nullptr for omitted optionals); constant inputs expose their data.
class ShapeContext {
 public:
  ShapeContext(const Node& node, std::vector<const TensorType*> inputs, std::vector<const TensorData*> constants)
      : node_(node), inputs_(std::move(inputs)), constants_(std::move(constants)), outputs_(node.outputs.size()) {}

  const Node& node() const { return node_; }
  const AttributeMap& attrs() const { return node_.attrs; }
  int opset() const { return node_.opset; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  // The input's type; an empty TensorType for an omitted input.
  const TensorType& input(size_t i) const;
  // Constant data of input i (initializer / folded), or nullptr.
  const TensorData* constant(size_t i) const { return i < constants_.size() ? constants_[i] : nullptr; }
  TensorType& output(size_t i) { return outputs_.at(i); }
  std::vector<TensorType>& outputs() { return outputs_; }

  // A kInvalidParam status naming the node: fail("axis %lld out of range", axis).
  Status fail(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));

 private:
  const Node& node_;
  std::vector<const TensorType*> inputs_;
  std::vector<const TensorData*> constants_;
  std::vector<TensorType> outputs_;
};

using ShapeFn = std::function<Status(ShapeContext&)>;

// Set by the compiler on If/Loop/Scan nodes whose bodies read values of the
// enclosing graph: those values are appended to the node's inputs (so order
// and liveness see them) and this int attribute keeps the model's own count.
inline constexpr const char* kExplicitInputsAttr = "__openacl_explicit_inputs";

struct OpSchema {
  std::string op_type;
  std::string domain;  // "" = ONNX default domain
  int min_inputs = 0, max_inputs = 0;
  int min_outputs = 1, max_outputs = 1;
  int since_version = 1;  // oldest opset handled
  ShapeFn shape;
};

class OpRegistry {
 public:
  static OpRegistry& instance();
  void add(OpSchema schema);
  // nullptr when the op (or that opset) is not supported.
  const OpSchema* find(const std::string& op_type, const std::string& domain, int opset) const;
  std::vector<const OpSchema*> all() const;

 private:
  std::vector<OpSchema> schemas_;
};

// Fluent registration helper; the destructor-free static object registers once.
class OpRegistration {
 public:
  explicit OpRegistration(const char* op_type, const char* domain = "") {
    schema_.op_type = op_type;
    schema_.domain = domain;
  }
  OpRegistration& inputs(int min, int max) { schema_.min_inputs = min; schema_.max_inputs = max; return *this; }
  OpRegistration& outputs(int min, int max) { schema_.min_outputs = min; schema_.max_outputs = max; return *this; }
  OpRegistration& since(int version) { schema_.since_version = version; return *this; }
  OpRegistration& shape(ShapeFn fn) {
    schema_.shape = std::move(fn);
    OpRegistry::instance().add(schema_);
    return *this;
  }

 private:
  OpSchema schema_;
};

#define OPENACL_OP_CONCAT_(a, b) a##b
#define OPENACL_OP_CONCAT(a, b) OPENACL_OP_CONCAT_(a, b)
// Registers at static-initialisation time; op files are compiled into an
// OBJECT library so the linker keeps every registration.
#define OPENACL_REGISTER_OP(op) \
  [[maybe_unused]] static ::openacl::graph::OpRegistration OPENACL_OP_CONCAT(op_registration_, __LINE__) = \
      ::openacl::graph::OpRegistration(#op)

// Runs every node's shape function in topological order and stores the output
// types on the values. Lists every node that cannot be handled (unknown op,
// wrong arity, shape error) in one Status, never just the first.
Status infer_shapes(Graph& g);

// The op's schema for node n, checking that it exists for the node's opset and
// that the input/output counts fit; a Status naming the node otherwise.
Status check_node(const Node& n, const OpSchema** schema);
// Runs one node's shape function on its inputs' current types and constants
// and stores the output types on its output values.
Status infer_node_shapes(Node& n);
// "N node(s) cannot run:" + one line per problem; Ok when the list is empty.
Status problems_status(const std::vector<std::string>& problems);

// Shared shape helpers for op files.
// Numpy-style multidirectional broadcasting; fails on incompatible known dims.
Status broadcast_shapes(const Shape& a, const Shape& b, Shape* out);
// Normalises a possibly negative axis against rank; false when out of range.
bool normalize_axis(int64_t axis, int64_t rank, int64_t* out);

}  // namespace openacl::graph
