#include "model/layout.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "graph/passes.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/resize.h"

namespace openacl::model {

namespace {

using graph::Node;
using graph::Value;

// Element-wise ops whose CPU kernels treat same-shape operands as flat
// arrays. Unary: input 0 is the tensor (Clip's other inputs are scalars).
bool is_unary_elementwise(const Node& n) {
  static const std::set<std::string> kOps = {"Relu",  "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
                                             "Elu",   "Selu",      "Celu",    "Softplus",    "Softsign",  "Clip",
                                             "Abs",   "Neg",       "Exp",     "Log",         "Sqrt",      "Reciprocal",
                                             "Floor", "Ceil",      "Round",   "Erf",         "Gelu",      "Mish",
                                             "Sign",  "Identity",  "ThresholdedRelu"};
  return n.domain.empty() && kOps.count(n.op_type) != 0;
}

// Binary / variadic: blocked only when every operand has the output's shape.
bool is_nary_elementwise(const Node& n) {
  static const std::set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean"};
  return n.domain.empty() && kOps.count(n.op_type) != 0;
}

bool is_pool(const Node& n) {
  if (!n.domain.empty()) return false;
  if (n.op_type == "AveragePool") return true;
  return n.op_type == "MaxPool" && !n.output(1) && n.attrs.get_int("storage_order", 0) == 0;
}

bool same_shape(const Value* a, const Value* b) {
  return a && b && a->type.shape && b->type.shape && *a->type.shape == *b->type.shape;
}

// A Mul of a tensor by a per-channel scale of the same rank ([N or 1, C, 1,
// ...]: a squeeze-excite gate): the index of the scale, else -1. The Mul
// kernel reads the tensor blocked and the scale plain.
int channel_scale_input(const Node& n) {
  if (!n.domain.empty() || n.op_type != "Mul" || n.inputs.size() != 2 || n.outputs.size() != 1 || !n.output(0))
    return -1;
  for (int s = 0; s < 2; ++s) {
    const Value* x = n.input(1 - s);
    const Value* sc = n.input(s);
    if (!same_shape(x, n.output(0)) || !sc || sc->type.dtype != graph::DType::kFloat32 || !sc->type.shape ||
        !graph::fully_known(*sc->type.shape) || !graph::fully_known(*x->type.shape))
      continue;
    const graph::Shape &xs = *x->type.shape, &ss = *sc->type.shape;
    bool ok = xs.size() >= 3 && ss.size() == xs.size() && (ss[0].value == 1 || ss[0] == xs[0]) && ss[1] == xs[1];
    for (size_t i = 2; ok && i < ss.size(); ++i) ok = ss[i].value == 1;
    if (ok && !same_shape(sc, n.output(0))) return s;
  }
  return -1;
}

// The tensor inputs of an element-wise node that share its output's layout.
std::vector<size_t> ew_tensor_inputs(const Node& n) {
  if (is_unary_elementwise(n)) return {0};
  if (const int s = channel_scale_input(n); s >= 0) return {static_cast<size_t>(1 - s)};
  std::vector<size_t> ins;
  for (size_t i = 0; i < n.inputs.size(); ++i) ins.push_back(i);
  return ins;
}

bool ew_ok(const Node& n) {
  if (!(is_unary_elementwise(n) || is_nary_elementwise(n)) || n.outputs.size() != 1 || !n.output(0)) return false;
  for (size_t i : ew_tensor_inputs(n))
    if (!same_shape(n.input(i), n.output(0))) return false;
  return true;
}

bool is_conv(const Node& n) { return n.domain.empty() && n.op_type == "Conv"; }

// Whether n's kernel reads and writes its marked tensors in channel blocks
// that pad C (Conv; GlobalAveragePool; the channel-scale Mul, whose scale
// stays plain; the linear upsampling Resize, which resamples the padding
// lanes like the others).
bool pads_ok(const Node& n) {
  return is_conv(n) || (n.domain.empty() && n.op_type == "GlobalAveragePool") || channel_scale_input(n) >= 0 ||
         kernels::cpu::resize_runs_blocked(n);
}

// Whether n writes output `i` in a blocked layout when asked to.
bool producer_ok(const Node& n, size_t i) {
  if (i != 0) return false;
  if (is_conv(n)) return true;
  return is_pool(n) || ew_ok(n) || kernels::cpu::resize_runs_blocked(n);
}

// Whether n reads input `i` in a blocked layout when asked to.
bool consumer_ok(const Node& n, size_t i) {
  if (!n.domain.empty()) return false;
  if (n.op_type == "Conv") return i == 0 || (i == 3 && n.attrs.get_int(graph::kFusedSumAttr, 0) != 0);
  if (is_pool(n) || n.op_type == "GlobalAveragePool") return i == 0;
  if (kernels::cpu::resize_runs_blocked(n)) return i == 0;
  if (ew_ok(n)) {
    const std::vector<size_t> ins = ew_tensor_inputs(n);
    return std::find(ins.begin(), ins.end(), i) != ins.end();
  }
  return false;
}

bool candidate(const Value* v) {
  if (!v || !v->producer || v->constant || v->is_graph_input || v->is_graph_output) return false;
  if (v->type.dtype != graph::DType::kFloat32 || !v->type.shape || !graph::fully_known(*v->type.shape)) return false;
  const size_t r = v->type.shape->size();
  return r >= 3 && r <= 5;
}

class Groups {
 public:
  const Value* find(const Value* v) {
    auto it = parent_.find(v);
    if (it == parent_.end() || it->second == v) return v;
    const Value* root = find(it->second);
    parent_[v] = root;
    return root;
  }
  void join(const Value* a, const Value* b) {
    const Value *ra = find(a), *rb = find(b);
    if (ra != rb) parent_[ra] = rb;
  }

 private:
  std::unordered_map<const Value*, const Value*> parent_;
};

void set_ints(graph::AttributeMap* attrs, const char* name, std::vector<int64_t> v) {
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kInts;
  a.ints = std::move(v);
  attrs->set(name, std::move(a));
}

}  // namespace

Status mark_blocked_layouts(graph::Graph& g, bool enabled, size_t* marked) {
  *marked = 0;
  for (const auto& n : g.nodes()) {
    const auto& all = n->attrs.all();
    if (!all.count(kernels::cpu::kBlockedInputsAttr) && !all.count(kernels::cpu::kBlockedOutputsAttr)) continue;
    graph::AttributeMap kept;  // AttributeMap has no erase: copy all but the marks
    for (const auto& [name, a] : all)
      if (name != kernels::cpu::kBlockedInputsAttr && name != kernels::cpu::kBlockedOutputsAttr &&
          name != kernels::cpu::kBlockedMaxAttr && name != kernels::cpu::kBlockedPadInputsAttr &&
          name != kernels::cpu::kBlockedPadOutputsAttr)
        kept.set(name, a);
    n->attrs = std::move(kept);
  }
  if (!enabled) return Status::Ok();

  // Values that must share a layout.
  Groups groups;
  for (const auto& np : g.nodes()) {
    const Node& n = *np;
    if (ew_ok(n))
      for (size_t i : ew_tensor_inputs(n)) groups.join(n.input(i), n.output(0));
    if (n.domain.empty() && n.op_type == "Conv" && n.attrs.get_int(graph::kFusedSumAttr, 0) != 0 && n.input(3) &&
        n.output(0))
      groups.join(n.input(3), n.output(0));
    if (kernels::cpu::resize_runs_blocked(n)) groups.join(n.input(0), n.output(0));
  }
  // A group is out as soon as one member is not a candidate or one of its
  // writers / readers cannot handle a blocked tensor there.
  std::set<const Value*> bad;
  std::vector<const Value*> values;
  std::set<const Value*> seen;
  auto visit = [&](const Value* v) {
    if (!v || !seen.insert(v).second) return;
    values.push_back(v);
    bool ok = candidate(v);
    if (ok) {
      const Node& p = *v->producer;
      for (size_t i = 0; i < p.outputs.size(); ++i)
        if (p.outputs[i] == v) ok = ok && producer_ok(p, i);
      for (const Node* c : v->consumers)
        for (size_t i = 0; i < c->inputs.size(); ++i)
          if (c->inputs[i] == v) ok = ok && consumer_ok(*c, i);
    }
    if (!ok) bad.insert(groups.find(v));
  };
  for (const auto& n : g.nodes()) {
    for (const Value* v : n->inputs) visit(v);
    for (const Value* v : n->outputs) visit(v);
  }
  std::map<Node*, std::set<int64_t>> ins, outs;
  // Regions: marked values connected through the nodes that read or write
  // them. One whose channel counts include a multiple of 8 that is not one
  // of 16 is capped at 8-blocks (kBlockedMaxAttr).
  auto is_marked = [&](const Value* v) { return v && seen.count(v) && !bad.count(groups.find(v)); };
  Groups regions;
  for (const auto& n : g.nodes()) {
    const Value* first = nullptr;
    for (const auto* list : {&n->inputs, &n->outputs})
      for (const Value* v : *list)
        if (is_marked(v)) {
          if (first) regions.join(first, v);
          first = first ? first : v;
        }
  }
  std::set<const Value*> capped;
  for (const Value* v : values) {
    const int64_t c = is_marked(v) ? (*v->type.shape)[1].value : 0;
    if (c % 16 != 0 && c % 8 == 0) capped.insert(regions.find(v));
  }
  // Groups of such values written and read only by kernels that handle
  // channel blocks padded up to the block (kBlockedPad*Attr) may take them.
  std::set<const Value*> unpaddable;
  for (const Value* v : values) {
    if (!is_marked(v)) continue;
    bool ok = pads_ok(*v->producer);
    for (const Node* c : v->consumers) ok = ok && pads_ok(*c);
    if (!ok) unpaddable.insert(groups.find(v));
  }
  std::map<Node*, std::set<int64_t>> pad_ins, pad_outs;
  for (const Value* v : values) {
    if (bad.count(groups.find(v))) continue;
    ++*marked;
    const int64_t c = (*v->type.shape)[1].value;
    const bool pad = c % 16 != 0 && c % 8 == 0 && !unpaddable.count(groups.find(v));
    Node* p = v->producer;
    for (size_t i = 0; i < p->outputs.size(); ++i)
      if (p->outputs[i] == v) {
        outs[p].insert(static_cast<int64_t>(i));
        if (pad) pad_outs[p].insert(static_cast<int64_t>(i));
      }
    for (Node* n : v->consumers)
      for (size_t i = 0; i < n->inputs.size(); ++i)
        if (n->inputs[i] == v) {
          ins[n].insert(static_cast<int64_t>(i));
          if (pad) pad_ins[n].insert(static_cast<int64_t>(i));
        }
  }
  for (auto& [n, s] : ins) set_ints(&n->attrs, kernels::cpu::kBlockedInputsAttr, {s.begin(), s.end()});
  for (auto& [n, s] : outs) set_ints(&n->attrs, kernels::cpu::kBlockedOutputsAttr, {s.begin(), s.end()});
  for (auto& [n, s] : pad_ins) set_ints(&n->attrs, kernels::cpu::kBlockedPadInputsAttr, {s.begin(), s.end()});
  for (auto& [n, s] : pad_outs) set_ints(&n->attrs, kernels::cpu::kBlockedPadOutputsAttr, {s.begin(), s.end()});
  if (!capped.empty()) {
    graph::Attribute eight;
    eight.kind = graph::Attribute::Kind::kInt;
    eight.i = 8;
    for (const Value* v : values) {
      if (bad.count(groups.find(v)) || !capped.count(regions.find(v))) continue;
      v->producer->attrs.set(kernels::cpu::kBlockedMaxAttr, eight);
      for (Node* c : v->consumers) c->attrs.set(kernels::cpu::kBlockedMaxAttr, eight);
    }
  }
  return Status::Ok();
}

}  // namespace openacl::model
