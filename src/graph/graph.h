// The graph IR: values (tensors flowing between nodes), nodes (one op each)
// and the graph that owns them. Pure data plus small helpers; importers build
// it, passes rewrite it, the planner and executors read it. Knows nothing of
// the runtime or of acl* types (STYLE.md 1).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "graph/attribute.h"
#include "graph/tensor.h"

namespace openacl::graph {

class Node;

struct Value {
  std::string name;
  TensorType type;
  Node* producer = nullptr;                // nullptr: graph input or constant
  std::vector<Node*> consumers;
  std::shared_ptr<TensorData> constant;    // set for initializers and folded values
  bool is_graph_input = false;
  bool is_graph_output = false;
};

class Node {
 public:
  std::string name;
  std::string op_type;
  std::string domain;  // "" is the default ONNX domain
  int opset = 0;       // opset version of the node's domain in its model
  std::vector<Value*> inputs;   // nullptr for an omitted optional input
  std::vector<Value*> outputs;  // nullptr for an omitted optional output
  AttributeMap attrs;

  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs.size() ? outputs[i] : nullptr; }
  // "Conv 'conv1' (opset 13)" for messages.
  std::string describe() const;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Creates a value; names must be unique ("" is allowed for internal values and
  // gets a generated name).
  Value* add_value(std::string name, TensorType type = {});
  Value* find_value(const std::string& name) const;
  // Creates a node and wires producer/consumer links.
  Node* add_node(std::string name, std::string op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
                 std::string domain = "", int opset = 0);
  // Unlinks and destroys a node (its output values stay, without producer).
  void remove_node(Node* n);

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  std::vector<Value*>& inputs() { return inputs_; }
  std::vector<Value*>& outputs() { return outputs_; }
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  std::map<std::string, int>& opsets() { return opsets_; }  // domain -> version
  const std::map<std::string, int>& opsets() const { return opsets_; }
  std::string name;

  // Nodes in an order where every producer comes before its consumers.
  // kParseModel-style failure (a cycle, naming the nodes on it) as a Status.
  Status topological_order(std::vector<Node*>* out) const;

 private:
  std::vector<std::unique_ptr<Value>> values_;
  std::unordered_map<std::string, Value*> by_name_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::map<std::string, int> opsets_;
  size_t anon_ = 0;
};

}  // namespace openacl::graph
