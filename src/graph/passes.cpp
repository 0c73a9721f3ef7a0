#include "graph/passes.h"

#include <cmath>
#include <string>
#include <vector>

namespace openacl::graph {

namespace {

bool is_f32_const(const Value* v) { return v && v->constant && v->constant->dtype == DType::kFloat32; }

}  // namespace

Status fold_batchnorm_into_conv(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> bns;
  for (const auto& n : g.nodes())
    if (n->op_type == "BatchNormalization" && n->domain.empty()) bns.push_back(n.get());
  for (Node* bn : bns) {
    Value* x = bn->input(0);
    Node* conv = x ? x->producer : nullptr;
    if (!conv || conv->op_type != "Conv" || !conv->domain.empty()) continue;
    if (x->consumers.size() != 1 || x->is_graph_output) continue;
    if (bn->outputs.size() > 1) {  // training-mode outputs in use: leave it
      bool extra = false;
      for (size_t i = 1; i < bn->outputs.size(); ++i) extra = extra || bn->outputs[i] != nullptr;
      if (extra) continue;
    }
    if (bn->attrs.get_int("training_mode", 0) != 0) continue;
    Value* w = conv->input(1);
    Value* b = conv->input(2);
    if (!is_f32_const(w) || (b && !is_f32_const(b))) continue;
    bool consts = true;
    for (size_t i = 1; i < 5; ++i) consts = consts && is_f32_const(bn->input(i));
    if (!consts || w->constant->dims.empty()) continue;
    const int64_t k = w->constant->dims[0];
    const int64_t per = w->constant->elements() / std::max<int64_t>(k, 1);
    bool sizes = true;
    for (size_t i = 1; i < 5; ++i) sizes = sizes && bn->input(i)->constant->elements() == k;
    if (b) sizes = sizes && b->constant->elements() == k;
    if (!sizes || w->constant->bytes < static_cast<size_t>(k * per) * sizeof(float)) continue;
    const float eps = bn->attrs.get_float("epsilon", 1e-5f);
    const float* scale = bn->input(1)->constant->as<float>();
    const float* bias = bn->input(2)->constant->as<float>();
    const float* mean = bn->input(3)->constant->as<float>();
    const float* var = bn->input(4)->constant->as<float>();
    std::vector<float> nw(w->constant->as<float>(), w->constant->as<float>() + k * per);
    std::vector<float> nb(static_cast<size_t>(k));
    for (int64_t c = 0; c < k; ++c) {
      const float s = scale[c] / std::sqrt(var[c] + eps);
      for (int64_t i = 0; i < per; ++i) nw[c * per + i] *= s;
      nb[c] = ((b ? b->constant->as<float>()[c] : 0.f) - mean[c]) * s + bias[c];
    }
    // New constants (the old ones may be shared with other nodes).
    Value* w2 = g.add_value("", w->type);
    w2->constant = TensorData::copy_of(DType::kFloat32, w->constant->dims, nw.data(), nw.size() * sizeof(float));
    Value* b2 = g.add_value("", TensorType{DType::kFloat32, Shape{Dim(k)}});
    b2->constant = TensorData::copy_of(DType::kFloat32, {k}, nb.data(), nb.size() * sizeof(float));
    Value* y = bn->output(0);
    std::vector<Value*> ins = {conv->input(0), w2, b2};
    Node* fused = g.add_node(conv->name, "Conv", {}, {}, "", conv->opset);
    fused->attrs = conv->attrs;
    g.remove_node(bn);
    g.remove_node(conv);
    fused->inputs = ins;
    for (Value* v : ins) v->consumers.push_back(fused);
    fused->outputs = {y};
    y->producer = fused;
    ++*rewrites;
  }
  return Status::Ok();
}

namespace {

Attribute float_attr(float v) {
  Attribute a;
  a.kind = Attribute::Kind::kFloat;
  a.f = v;
  return a;
}

// The activation's parameters, or false when it cannot be fused.
bool activation_params(const Node& act, float* alpha, float* beta) {
  const std::string& op = act.op_type;
  *alpha = 0;
  *beta = 0;
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish") return act.inputs.size() == 1;
  if (op == "LeakyRelu") {
    *alpha = act.attrs.get_float("alpha", 0.01f);
    return true;
  }
  if (op == "HardSigmoid") {
    *alpha = act.attrs.get_float("alpha", 0.2f);
    *beta = act.attrs.get_float("beta", 0.5f);
    return true;
  }
  if (op == "Clip") {
    *alpha = -INFINITY;
    *beta = INFINITY;
    if (act.opset < 11) {
      *alpha = act.attrs.get_float("min", -INFINITY);
      *beta = act.attrs.get_float("max", INFINITY);
      return true;
    }
    for (size_t i = 1; i < act.inputs.size() && i < 3; ++i) {
      const Value* b = act.inputs[i];
      if (!b) continue;
      if (!b->constant || b->constant->dtype != DType::kFloat32 || b->constant->elements() != 1) return false;
      (i == 1 ? *alpha : *beta) = b->constant->as<float>()[0];
    }
    return true;
  }
  return false;
}

}  // namespace

Status fuse_conv_activation(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> convs;
  for (const auto& n : g.nodes())
    if (n->op_type == "Conv" && n->domain.empty() && !n->attrs.has(kFusedActivationAttr)) convs.push_back(n.get());
  for (Node* conv : convs) {
    Value* y = conv->output(0);
    if (!y || y->is_graph_output || y->consumers.size() != 1) continue;
    const DType t = y->type.dtype;  // the kernel applies fused activations in float
    if (t != DType::kFloat32 && t != DType::kFloat16 && t != DType::kBFloat16) continue;
    Node* act = y->consumers[0];
    if (!act->domain.empty() || act->input(0) != y || act->outputs.size() != 1 || !act->output(0)) continue;
    float alpha = 0, beta = 0;
    if (!activation_params(*act, &alpha, &beta)) continue;
    Value* out = act->output(0);
    Attribute kind;
    kind.kind = Attribute::Kind::kString;
    kind.s = act->op_type;
    conv->attrs.set(kFusedActivationAttr, kind);
    conv->attrs.set(kFusedAlphaAttr, float_attr(alpha));
    conv->attrs.set(kFusedBetaAttr, float_attr(beta));
    g.remove_node(act);
    // The Conv now writes the activation's output; its old output is unused.
    y->producer = nullptr;
    conv->outputs[0] = out;
    out->producer = conv;
    ++*rewrites;
  }
  return Status::Ok();
}

Status fuse_conv_add(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> convs;
  for (const auto& n : g.nodes())
    if (n->op_type == "Conv" && n->domain.empty() && n->inputs.size() <= 3 && !n->attrs.has(kFusedSumAttr) &&
        !n->attrs.has(kFusedActivationAttr))
      convs.push_back(n.get());
  for (Node* conv : convs) {
    Value* y = conv->output(0);
    if (!y || y->is_graph_output || y->consumers.size() != 1) continue;
    if (y->type.dtype != DType::kFloat32 || !y->type.shape || !fully_known(*y->type.shape)) continue;
    Node* add = y->consumers[0];
    if (add->op_type != "Add" || !add->domain.empty() || add->inputs.size() != 2 || !add->output(0)) continue;
    if (add->input(0) == add->input(1)) continue;  // conv(x) + conv(x)
    Value* r = add->input(0) == y ? add->input(1) : add->input(0);
    if (!r || r->type.dtype != DType::kFloat32 || !r->type.shape || !(*r->type.shape == *y->type.shape)) continue;
    // The kernel may write its output over the residual: the residual must
    // not also be one of the Conv's operands.
    if (r == conv->input(0) || r == conv->input(1) || r == conv->input(2)) continue;
    // No cycle can appear: r cannot depend on y, which only the Add reads.
    Value* out = add->output(0);
    g.remove_node(add);
    while (conv->inputs.size() < 3) conv->inputs.push_back(nullptr);
    conv->inputs.push_back(r);
    r->consumers.push_back(conv);
    Attribute one;
    one.kind = Attribute::Kind::kInt;
    one.i = 1;
    conv->attrs.set(kFusedSumAttr, one);
    y->producer = nullptr;
    conv->outputs[0] = out;
    out->producer = conv;
    ++*rewrites;
  }
  return Status::Ok();
}

}  // namespace openacl::graph
