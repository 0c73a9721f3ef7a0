#include "graph/graph.h"

#include <algorithm>
#include <deque>

namespace openacl::graph {

std::string Node::describe() const {
  std::string d = op_type + " '" + name + "'";
  if (opset) d += " (opset " + std::to_string(opset) + ")";
  return d;
}

Value* Graph::add_value(std::string name, TensorType type) {
  // Generated names skip any already taken (a decoded graph holds earlier ones).
  if (name.empty()) {
    do name = "_v" + std::to_string(anon_++);
    while (by_name_.count(name));
  }
  auto v = std::make_unique<Value>();
  v->name = std::move(name);
  v->type = std::move(type);
  Value* raw = v.get();
  by_name_[raw->name] = raw;
  values_.push_back(std::move(v));
  return raw;
}

Value* Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

Node* Graph::add_node(std::string name, std::string op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
                      std::string domain, int opset) {
  auto n = std::make_unique<Node>();
  n->name = std::move(name);
  n->op_type = std::move(op_type);
  n->domain = std::move(domain);
  n->opset = opset;
  n->inputs = std::move(inputs);
  n->outputs = std::move(outputs);
  Node* raw = n.get();
  for (Value* v : raw->inputs)
    if (v) v->consumers.push_back(raw);
  for (Value* v : raw->outputs)
    if (v) v->producer = raw;
  nodes_.push_back(std::move(n));
  return raw;
}

void Graph::remove_node(Node* n) {
  for (Value* v : n->inputs)
    if (v) v->consumers.erase(std::remove(v->consumers.begin(), v->consumers.end(), n), v->consumers.end());
  for (Value* v : n->outputs)
    if (v && v->producer == n) v->producer = nullptr;
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(), [&](auto& p) { return p.get() == n; }), nodes_.end());
}

Status Graph::topological_order(std::vector<Node*>* out) const {
  std::unordered_map<const Node*, size_t> pending;
  std::deque<Node*> ready;
  for (const auto& n : nodes_) {
    size_t deps = 0;
    for (Value* v : n->inputs)
      if (v && v->producer) ++deps;
    pending[n.get()] = deps;
    if (deps == 0) ready.push_back(n.get());
  }
  out->clear();
  out->reserve(nodes_.size());
  while (!ready.empty()) {
    Node* n = ready.front();
    ready.pop_front();
    out->push_back(n);
    for (Value* v : n->outputs) {
      if (!v) continue;
      // A consumer appears once per input slot that reads v; each slot was one dependency.
      for (Node* c : v->consumers)
        if (--pending[c] == 0) ready.push_back(c);
    }
  }
  if (out->size() == nodes_.size()) return Status::Ok();
  std::string stuck;
  size_t listed = 0;
  for (const auto& n : nodes_) {
    if (pending[n.get()] == 0) continue;
    if (listed++ < 8) stuck += (stuck.empty() ? "" : ", ") + n->describe();
  }
  return Errorf(code::kInvalidParam, "the graph has a cycle (or an input produced by a node inside it): %zu node(s) "
                "never become ready, e.g. %s", nodes_.size() - out->size(), stuck.c_str());
}

}  // namespace openacl::graph
