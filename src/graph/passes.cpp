#include "graph/passes.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <optional>
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
  if (op == "Gelu") return act.inputs.size() == 1 && act.attrs.get_string("approximate", "none") == "none";
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

namespace {

// The single scalar value of a float32 constant, if it is one.
bool scalar_f32(const Value* v, float* out) {
  if (!is_f32_const(v) || v->constant->elements() != 1) return false;
  *out = v->constant->as<float>()[0];
  return true;
}

// The other operand of a binary node whose operand `v` is, or nullptr.
Value* other_operand(const Node* n, const Value* v) {
  if (n->inputs.size() != 2) return nullptr;
  if (n->input(0) == v) return n->input(1);
  if (n->input(1) == v) return n->input(0);
  return nullptr;
}

// The only reader of v (nullptr when none, several, or v is a graph output).
Node* sole_reader(const Value* v, const char* op) {
  if (!v || v->is_graph_output || v->consumers.size() != 1) return nullptr;
  Node* n = v->consumers[0];
  return n->op_type == op && n->domain.empty() && n->outputs.size() == 1 && n->output(0) ? n : nullptr;
}

bool near(float a, float b) { return std::fabs(a - b) <= 1e-4f * std::fabs(b); }

// `node` takes over `last`'s output; `last` (already unlinked or not) goes.
void take_output(Graph& g, Node* node, Node* last) {
  Value* out = last->output(0);
  Value* old = node->output(0);
  g.remove_node(last);
  old->producer = nullptr;
  node->outputs[0] = out;
  out->producer = node;
}

Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}

}  // namespace

namespace {

// n's permutation: its perm attribute, or the reversal of its input's known
// rank; false when neither is there.
bool transpose_perm(const Node& n, std::vector<int64_t>* perm) {
  if (n.op_type != "Transpose" || !n.domain.empty() || n.inputs.size() != 1 || n.outputs.size() != 1 || !n.input(0) ||
      !n.output(0))
    return false;
  if (const auto p = n.attrs.get_ints("perm")) {
    *perm = *p;
  } else {
    const Value* x = n.input(0);
    if (!x->type.shape) return false;
    perm->clear();
    for (int64_t i = static_cast<int64_t>(x->type.shape->size()); i-- > 0;) perm->push_back(i);
  }
  std::vector<bool> seen(perm->size(), false);
  for (int64_t a : *perm) {
    if (a < 0 || a >= static_cast<int64_t>(perm->size()) || seen[static_cast<size_t>(a)]) return false;
    seen[static_cast<size_t>(a)] = true;
  }
  return true;
}

}  // namespace

Status merge_transposes(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> second;
  for (const auto& n : g.nodes()) second.push_back(n.get());
  std::vector<Node*> removed;
  for (Node* t2 : second) {
    if (std::find(removed.begin(), removed.end(), t2) != removed.end()) continue;
    std::vector<int64_t> p1, p2;
    if (!transpose_perm(*t2, &p2)) continue;
    Value* mid = t2->input(0);
    Node* t1 = mid->producer;
    if (!t1 || !transpose_perm(*t1, &p1) || p1.size() != p2.size()) continue;
    Value* x = t1->input(0);
    // Y[j] = mid[p2[j]] = x[p1[p2[j]]].
    std::vector<int64_t> p(p2.size());
    bool identity = true;
    for (size_t j = 0; j < p2.size(); ++j) {
      p[j] = p1[static_cast<size_t>(p2[j])];
      identity = identity && p[j] == static_cast<int64_t>(j);
    }
    mid->consumers.erase(std::find(mid->consumers.begin(), mid->consumers.end(), t2));
    t2->inputs[0] = x;
    x->consumers.push_back(t2);
    Value* y = t2->output(0);
    if (identity && !y->is_graph_output) {  // the readers take x; t2 goes
      for (Node* c : std::vector<Node*>(y->consumers)) {
        for (Value*& in : c->inputs)
          if (in == y) {
            in = x;
            x->consumers.push_back(c);
          }
      }
      y->consumers.clear();
      g.remove_node(t2);
      removed.push_back(t2);
    } else if (identity) {
      t2->op_type = "Identity";
      t2->attrs = AttributeMap();
    } else {
      Attribute a;
      a.kind = Attribute::Kind::kInts;
      a.ints = p;
      t2->attrs.set("perm", a);
    }
    ++*rewrites;
  }
  return Status::Ok();
}

Status fuse_gelu(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> erfs;
  for (const auto& n : g.nodes())
    if (n->op_type == "Erf" && n->domain.empty()) erfs.push_back(n.get());
  for (Node* erf : erfs) {
    // t = x / sqrt(2) (or x * (1/sqrt(2))), e = Erf(t), a = e + 1, m = x * a, y = m * 0.5
    Value* t = erf->input(0);
    Node* scale = t ? t->producer : nullptr;
    if (!scale || !scale->domain.empty() || scale->inputs.size() != 2 || t->consumers.size() != 1 ||
        t->is_graph_output)
      continue;
    Value* x = scale->input(0);
    float c = 0;
    if (scale->op_type == "Mul" && scalar_f32(scale->input(0), &c)) x = scale->input(1);  // Mul(c, x)
    else if (!scalar_f32(scale->input(1), &c)) continue;
    if (!x || x->type.dtype != DType::kFloat32) continue;
    if (!((scale->op_type == "Div" && near(c, 1.41421356f)) || (scale->op_type == "Mul" && near(c, 0.70710678f))))
      continue;
    Node* add = sole_reader(erf->output(0), "Add");
    float one = 0;
    if (!add || !scalar_f32(other_operand(add, erf->output(0)), &one) || !near(one, 1.f)) continue;
    Node* mul = sole_reader(add->output(0), "Mul");
    if (!mul || other_operand(mul, add->output(0)) != x) continue;
    Node* half = sole_reader(mul->output(0), "Mul");
    float h = 0;
    if (!half || !scalar_f32(other_operand(half, mul->output(0)), &h) || !near(h, 0.5f)) continue;
    // x feeds the scale and the first Mul: both go with the pattern.
    Value* y = half->output(0);
    Node* gelu = g.add_node(erf->name.empty() ? "" : erf->name + "/gelu", "Gelu", {x}, {}, "", 20);
    g.remove_node(half);
    g.remove_node(mul);
    g.remove_node(add);
    g.remove_node(erf);
    g.remove_node(scale);
    gelu->outputs = {y};
    y->producer = gelu;
    ++*rewrites;
  }
  return Status::Ok();
}

namespace {

// n is ReduceMean over the last axis only of its input, keeping dims.
bool mean_over_last_axis(const Node* n) {
  if (!n || n->op_type != "ReduceMean" || !n->domain.empty() || n->attrs.get_int("keepdims", 1) != 1) return false;
  const Value* in = n->input(0);
  if (!in || !in->type.shape || in->type.shape->empty()) return false;
  const int64_t rank = static_cast<int64_t>(in->type.shape->size());
  std::optional<std::vector<int64_t>> axes;
  if (n->opset >= 18) {
    if (n->inputs.size() != 2 || !n->input(1) || !n->input(1)->constant) return false;
    axes = n->input(1)->constant->to_int64();
  } else {
    if (n->inputs.size() != 1) return false;
    axes = n->attrs.get_ints("axes");
  }
  return axes && axes->size() == 1 && ((*axes)[0] == -1 || (*axes)[0] == rank - 1);
}

// A float32 constant of exactly c values in one dimension.
bool vector_f32(const Value* v, int64_t c) {
  return is_f32_const(v) && v->constant->dims.size() == 1 && v->constant->dims[0] == c;
}

}  // namespace

Status fuse_layernorm(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> subs;
  for (const auto& n : g.nodes())
    if (n->op_type == "Sub" && n->domain.empty() && n->inputs.size() == 2) subs.push_back(n.get());
  for (Node* sub : subs) {
    // m = ReduceMean(x), d = x - m, v = ReduceMean(d^2), n = d / Sqrt(v + eps), y = n * gamma + beta
    Value* x = sub->input(0);
    Value* m = sub->input(1);
    Value* d = sub->output(0);
    Node* mean = m ? m->producer : nullptr;
    if (!x || !d || !mean_over_last_axis(mean) || mean->input(0) != x || m->consumers.size() != 1 ||
        m->is_graph_output)
      continue;
    if (x->type.dtype != DType::kFloat32 || !x->type.shape || !x->type.shape->back().known()) continue;
    const int64_t c = x->type.shape->back().value;
    // d feeds the square and the division, nothing else (Mul(d, d) lists its node twice).
    std::vector<Node*> readers = d->consumers;
    std::sort(readers.begin(), readers.end());
    readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
    if (d->is_graph_output || readers.size() != 2) continue;
    Node* sq = nullptr;
    Node* div = nullptr;
    for (Node* r : readers) {
      float two = 0;
      if (r->op_type == "Pow" && r->input(0) == d && scalar_f32(r->input(1), &two) && two == 2.f) sq = r;
      else if (r->op_type == "Mul" && r->input(0) == d && r->input(1) == d) sq = r;
      else if (r->op_type == "Div" && r->input(0) == d) div = r;
    }
    if (!sq || !div || !sq->domain.empty() || !div->domain.empty()) continue;
    Node* var = sole_reader(sq->output(0), "ReduceMean");
    if (!mean_over_last_axis(var) || var->input(0) != sq->output(0)) continue;
    Node* add_eps = sole_reader(var->output(0), "Add");
    float eps = 0;
    if (!add_eps || !scalar_f32(other_operand(add_eps, var->output(0)), &eps) || !(eps >= 0.f)) continue;
    Node* sqrt = sole_reader(add_eps->output(0), "Sqrt");
    if (!sqrt || div->input(1) != sqrt->output(0) || sqrt->output(0)->consumers.size() != 1) continue;
    Node* scale = sole_reader(div->output(0), "Mul");
    Value* gamma = scale ? other_operand(scale, div->output(0)) : nullptr;
    if (!vector_f32(gamma, c)) continue;
    Node* shift = sole_reader(scale->output(0), "Add");
    Value* beta = shift ? other_operand(shift, scale->output(0)) : nullptr;
    if (!vector_f32(beta, c)) shift = nullptr, beta = nullptr;
    Node* last = shift ? shift : scale;
    Value* y = last->output(0);
    Node* ln = g.add_node(sub->name.empty() ? "" : sub->name + "/layernorm", "LayerNormalization",
                          beta ? std::vector<Value*>{x, gamma, beta} : std::vector<Value*>{x, gamma}, {}, "", 17);
    ln->attrs.set("axis", int_attr(-1));
    ln->attrs.set("epsilon", float_attr(eps));
    for (Node* n : {shift, scale, div, sqrt, add_eps, var, sq, sub, mean})
      if (n) g.remove_node(n);
    ln->outputs = {y};
    y->producer = ln;
    ++*rewrites;
  }
  return Status::Ok();
}

namespace {

// The input of v's producer when that is a Transpose with exactly `perm`.
Value* transposed_from(const Value* v, std::initializer_list<int64_t> perm) {
  const Node* t = v ? v->producer : nullptr;
  if (!t || t->op_type != "Transpose" || !t->domain.empty() || t->inputs.size() != 1) return nullptr;
  const auto p = t->attrs.get_ints("perm");
  return p && std::equal(p->begin(), p->end(), perm.begin(), perm.end()) ? t->input(0) : nullptr;
}

// v = Reshape(x, [B, S, H, D]) of a float32 x [B, S, H*D] with H and D
// known: returns x and sets *heads, *size.
Value* heads_of(const Value* v, int64_t* heads, int64_t* size) {
  const Node* r = v ? v->producer : nullptr;
  if (!r || r->op_type != "Reshape" || !r->domain.empty() || !r->output(0)) return nullptr;
  Value* x = r->input(0);
  if (!x || x->type.dtype != DType::kFloat32 || x->type.rank() != 3 || v->type.rank() != 4) return nullptr;
  const Shape& in = *x->type.shape;
  const Shape& out = *v->type.shape;
  if (!(in[0] == out[0]) || !(in[1] == out[1]) || !out[2].known() || !out[3].known() || !in[2].known() ||
      in[2].value != out[2].value * out[3].value || out[2].value < 1)
    return nullptr;
  *heads = out[2].value;
  *size = out[3].value;
  return x;
}

// The mask operand m of Add(scores, m) when it broadcasts to the scores
// without growing them and has the key length as its last dim.
bool is_attention_mask(const Value* m, const Shape& scores) {
  if (!m || m->type.dtype != DType::kFloat32 || !m->type.shape || m->type.rank() < 1 || m->type.rank() > 4)
    return false;
  const Shape& ms = *m->type.shape;
  const size_t off = scores.size() - ms.size();
  for (size_t i = 0; i < ms.size(); ++i)
    if (!(ms[i] == scores[off + i]) && !(ms[i].known() && ms[i].value == 1 && i + 1 < ms.size())) return false;
  return true;
}

}  // namespace

Status fuse_attention(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> softmaxes;
  for (const auto& n : g.nodes())
    if (n->op_type == "Softmax" && n->domain.empty() && n->inputs.size() == 1 && n->outputs.size() == 1)
      softmaxes.push_back(n.get());
  for (Node* sm : softmaxes) {
    Value* s = sm->input(0);
    if (!s || s->type.dtype != DType::kFloat32 || s->type.rank() != 4 || s->consumers.size() != 1 ||
        s->is_graph_output)
      continue;
    int64_t axis = sm->attrs.get_int("axis", sm->opset >= 13 ? -1 : 1);
    if (axis < 0) axis += 4;
    if (axis != 3) continue;
    // Backwards from the Softmax: [Add mask] <- [Div/Mul scalar] <- MatMul.
    Node* add = nullptr;
    Node* scale_node = nullptr;
    Value* mask = nullptr;
    float scale = 1.f;
    Node* n = s->producer;
    if (n && n->op_type == "Add" && n->domain.empty() && n->inputs.size() == 2) {
      for (int side = 0; side < 2 && !add; ++side) {
        Value* a = n->input(side);
        Value* m = n->input(1 - side);
        Node* p = a ? a->producer : nullptr;
        if (a && m && a != m && p && (p->op_type == "Div" || p->op_type == "Mul" || p->op_type == "MatMul") &&
            a->type.shape && *a->type.shape == *s->type.shape && is_attention_mask(m, *s->type.shape))
          add = n, mask = m;
      }
      if (!add) continue;
      Value* a = other_operand(add, mask);
      if (a->consumers.size() != 1 || a->is_graph_output) continue;
      n = a->producer;
    }
    if (n && (n->op_type == "Div" || n->op_type == "Mul") && n->domain.empty() && n->inputs.size() == 2) {
      float c = 0;
      Value* a = n->input(0);
      if (n->op_type == "Mul" && scalar_f32(n->input(0), &c)) a = n->input(1);
      else if (!scalar_f32(n->input(1), &c)) continue;
      if (!a || a->consumers.size() != 1 || a->is_graph_output || !(c != 0.f) || !std::isfinite(c)) continue;
      scale = n->op_type == "Div" ? 1.f / c : c;
      scale_node = n;
      n = a->producer;
    }
    if (!n || n->op_type != "MatMul" || !n->domain.empty() || n->inputs.size() != 2) continue;
    Node* qk = n;
    // Q = Transpose(Reshape(q), 0 2 1 3); Kt = Transpose(Reshape(k), 0 2 3 1)
    // or Transpose(Transpose(Reshape(k), 0 2 1 3), 0 1 3 2).
    int64_t hq = 0, dq = 0, hk = 0, dk = 0, hv = 0, dv = 0;
    Value* q = heads_of(transposed_from(qk->input(0), {0, 2, 1, 3}), &hq, &dq);
    Value* kt = transposed_from(qk->input(1), {0, 2, 3, 1});
    if (!kt)
      if (Value* kh = transposed_from(qk->input(1), {0, 1, 3, 2})) kt = transposed_from(kh, {0, 2, 1, 3});
    Value* k = heads_of(kt, &hk, &dk);
    // Forwards: MatMul with V, Transpose back, Reshape to [B, S, H*D].
    Node* pv = sole_reader(sm->output(0), "MatMul");
    if (!q || !k || !pv || pv->input(0) != sm->output(0)) continue;
    Value* v = heads_of(transposed_from(pv->input(1), {0, 2, 1, 3}), &hv, &dv);
    Node* back = sole_reader(pv->output(0), "Transpose");
    const auto perm = back ? back->attrs.get_ints("perm") : std::nullopt;
    if (!v || !perm || *perm != std::vector<int64_t>{0, 2, 1, 3}) continue;
    Node* merge = sole_reader(back->output(0), "Reshape");
    if (!merge) continue;
    Value* y = merge->output(0);
    if (hq != hk || hq != hv || dq != dk || y->type.rank() != 3 || y->type.dtype != DType::kFloat32) continue;
    const Shape& ys = *y->type.shape;
    const Shape& qs = *q->type.shape;
    const Shape& ks = *k->type.shape;
    const Shape& vs = *v->type.shape;
    if (!(ys[0] == qs[0]) || !(ys[1] == qs[1]) || !ys[2].known() || ys[2].value != hq * dv || !(ks[0] == qs[0]) ||
        !(vs[0] == qs[0]) || !(vs[1] == ks[1]))
      continue;
    // The scores' key axis is k's sequence axis; the mask was checked against it.
    Node* att = g.add_node(sm->name.empty() ? "" : sm->name + "/attention", "Attention",
                           mask ? std::vector<Value*>{q, k, v, mask} : std::vector<Value*>{q, k, v}, {}, "", 23);
    att->attrs.set("q_num_heads", int_attr(hq));
    att->attrs.set("kv_num_heads", int_attr(hq));
    att->attrs.set("scale", float_attr(scale));
    for (Node* dead : {merge, back, pv, sm, add, scale_node, qk})
      if (dead) g.remove_node(dead);
    att->outputs = {y};
    y->producer = att;
    ++*rewrites;
  }
  return Status::Ok();
}

namespace {

// Whether Split node n cuts its input's last axis (size `width`, known) into
// three equal parts: axis -1 (or rank - 1), and the sizes given by a
// constant `split` input, by num_outputs (opset 18) or by nothing (equal).
bool splits_in_three(const Node& n, int64_t width) {
  const Value* x = n.input(0);
  if (!x || !x->type.shape || n.outputs.size() != 3 || width % 3 != 0) return false;
  const int64_t rank = static_cast<int64_t>(x->type.shape->size());
  const int64_t axis = n.attrs.get_int("axis", 0);
  if (axis != -1 && axis != rank - 1) return false;
  const std::vector<int64_t> equal(3, width / 3);
  if (const auto split = n.attrs.get_ints("split")) return *split == equal;  // before opset 13
  const Value* sizes = n.input(1);
  if (!sizes) return n.attrs.get_int("num_outputs", 3) == 3;
  const auto v = sizes->constant ? sizes->constant->to_int64() : std::nullopt;
  return v && *v == equal;
}

}  // namespace

Status fuse_attention_split(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> atts;
  for (const auto& n : g.nodes())
    if (n->op_type == "Attention" && n->domain.empty()) atts.push_back(n.get());
  for (Node* att : atts) {
    const int64_t hq = att->attrs.get_int("q_num_heads", 0);
    if (hq < 1 || att->attrs.get_int("kv_num_heads", 0) != hq || att->attrs.get_int(kPackedQkvAttr, 0) != 0 ||
        att->inputs.size() > 4 || att->outputs.size() != 1)
      continue;
    Value* q = att->input(0);
    Node* split = q ? q->producer : nullptr;
    if (!split || split->op_type != "Split" || !split->domain.empty()) continue;
    Value* x = split->input(0);
    const bool parts_in_order =
        att->input(1) == split->output(1) && att->input(2) == split->output(2) && split->output(0) == q;
    if (!parts_in_order || !x || x->type.dtype != DType::kFloat32 || !x->type.shape || x->type.shape->size() != 3)
      continue;
    const Dim width = (*x->type.shape)[2];
    if (!width.known() || !splits_in_three(*split, width.value)) continue;
    bool private_parts = true;  // the parts have no reader but this node
    for (Value* part : split->outputs)
      private_parts = private_parts && part && !part->is_graph_output && part->consumers.size() == 1;
    if (!private_parts) continue;
    for (Value* part : split->outputs) part->consumers.clear();
    att->inputs[0] = x;
    att->inputs[1] = att->inputs[2] = nullptr;
    x->consumers.push_back(att);
    att->attrs.set(kPackedQkvAttr, int_attr(1));
    g.remove_node(split);
    ++*rewrites;
  }
  return Status::Ok();
}

Status fuse_matmul_epilogue(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> mms;
  for (const auto& n : g.nodes())
    if (n->op_type == "MatMul" && n->domain.empty() && n->inputs.size() == 2) mms.push_back(n.get());
  for (Node* mm : mms) {
    Value* b = mm->input(1);
    Value* y = mm->output(0);
    if (!is_f32_const(b) || b->constant->dims.size() != 2 || !y || y->type.dtype != DType::kFloat32) continue;
    const int64_t n = b->constant->dims[1];
    bool changed = false;
    // Bias: Add of a constant with N values along the last axis.
    if (Node* add = sole_reader(y, "Add")) {
      Value* c = other_operand(add, y);
      bool ok = is_f32_const(c) && c->constant->elements() == n && !c->constant->dims.empty() &&
                c->constant->dims.back() == n && c->constant->dims.size() <= (y->type.shape ? y->type.shape->size() : 0);
      if (ok) {
        take_output(g, mm, add);
        mm->inputs.push_back(c);
        c->consumers.push_back(mm);
        mm->attrs.set(kFusedBiasAttr, int_attr(1));
        y = mm->output(0);
        changed = true;
      }
    }
    // Then an activation, or else a residual Add.
    Node* next = y->is_graph_output || y->consumers.size() != 1 ? nullptr : y->consumers[0];
    float alpha = 0, beta = 0;
    if (next && next->domain.empty() && next->input(0) == y && next->outputs.size() == 1 && next->output(0) &&
        activation_params(*next, &alpha, &beta)) {
      Attribute kind;
      kind.kind = Attribute::Kind::kString;
      kind.s = next->op_type;
      mm->attrs.set(kFusedActivationAttr, kind);
      mm->attrs.set(kFusedAlphaAttr, float_attr(alpha));
      mm->attrs.set(kFusedBetaAttr, float_attr(beta));
      take_output(g, mm, next);
      changed = true;
    } else if (Node* add = sole_reader(y, "Add")) {
      Value* r = other_operand(add, y);
      if (r && r != y && r->type.dtype == DType::kFloat32 && r->type.shape && y->type.shape &&
          fully_known(*y->type.shape) && *r->type.shape == *y->type.shape && r != mm->input(0) && r != b &&
          r != mm->input(2)) {
        take_output(g, mm, add);
        while (mm->inputs.size() < 3) mm->inputs.push_back(nullptr);
        mm->inputs.push_back(r);
        r->consumers.push_back(mm);
        mm->attrs.set(kFusedSumAttr, int_attr(1));
        changed = true;
      }
    }
    if (changed) ++*rewrites;
  }
  return Status::Ok();
}

namespace {

// Attribute `name` is `count` copies of v; absent counts as its default
// `absent` (1 for strides and dilations, 0 for pads).
bool ints_are(const Node& n, const char* name, int64_t v, size_t count, int64_t absent) {
  const std::optional<std::vector<int64_t>> a = n.attrs.get_ints(name);
  if (!a) return v == absent;
  if (a->size() != count) return false;
  return std::all_of(a->begin(), a->end(), [&](int64_t x) { return x == v; });
}

// A plain 2-D float32 Conv: constant W of rank 4, optional constant B, no
// fused residual or depthwise, explicit (or no) padding.
bool plain_conv2d(const Node& n) {
  if (n.op_type != "Conv" || !n.domain.empty() || n.inputs.size() < 2 || n.inputs.size() > 3 || !n.output(0) ||
      n.attrs.has(kFusedSumAttr) || n.attrs.has(kFusedDwStrideAttr))
    return false;
  const std::string pad = n.attrs.get_string("auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "") return false;
  const Value* w = n.input(1);
  const Value* b = n.input(2);
  const Value* x = n.input(0);
  return x && x->type.dtype == DType::kFloat32 && x->type.shape && x->type.shape->size() == 4 &&
         fully_known(*x->type.shape) && is_f32_const(w) && w->constant->dims.size() == 4 && (!b || is_f32_const(b)) &&
         ints_are(n, "dilations", 1, 2, 1);
}

}  // namespace

namespace {

// A plain 1x1 Conv: group 1, stride 1, no padding.
bool pointwise(const Node& n) {
  const std::vector<int64_t>& wd = n.input(1)->constant->dims;
  return wd[2] == 1 && wd[3] == 1 && n.attrs.get_int("group", 1) == 1 && ints_are(n, "strides", 1, 2, 1) &&
         ints_are(n, "pads", 0, 4, 0);
}

// The stride of a plain depthwise 3x3 Conv with padding 1 over c channels
// (group c, W [c, 1, 3, 3]), 1 or 2; 0 when n is not one.
int64_t depthwise_stride(const Node& n, int64_t c) {
  const std::vector<int64_t>& dd = n.input(1)->constant->dims;
  if (n.attrs.get_int("group", 1) != c || dd != std::vector<int64_t>{c, 1, 3, 3} || !ints_are(n, "pads", 1, 4, 0))
    return 0;
  const std::optional<std::vector<int64_t>> st = n.attrs.get_ints("strides");
  const int64_t s = st && st->size() == 2 ? (*st)[0] : 1;
  if ((st && (st->size() != 2 || (*st)[1] != s)) || (s != 1 && s != 2)) return 0;
  return s;
}

// The only reader of n's output when it is a plain 2-D Conv reading it as X.
Node* sole_conv_reader(const Node& n) {
  const Value* y = n.output(0);
  if (y->is_graph_output || y->consumers.size() != 1 || !y->type.shape || !fully_known(*y->type.shape)) return nullptr;
  Node* r = y->consumers[0];
  return r != &n && plain_conv2d(*r) && r->input(0) == y ? r : nullptr;
}

// conv takes over the depthwise dw (stride s) after it: the dw attributes,
// inputs 4 and 5 (3 left for a residual).
void absorb_depthwise(Graph& g, Node* conv, Node* dw, int64_t s) {
  if (dw->attrs.has(kFusedActivationAttr)) {
    conv->attrs.set(kFusedDwActivationAttr, *dw->attrs.find(kFusedActivationAttr));
    conv->attrs.set(kFusedDwAlphaAttr, float_attr(dw->attrs.get_float(kFusedAlphaAttr, 0.f)));
    conv->attrs.set(kFusedDwBetaAttr, float_attr(dw->attrs.get_float(kFusedBetaAttr, 0.f)));
  }
  conv->attrs.set(kFusedDwStrideAttr, int_attr(s));
  Value* dw_w = dw->input(1);
  Value* dw_b = dw->input(2);
  while (conv->inputs.size() < 4) conv->inputs.push_back(nullptr);
  conv->inputs.push_back(dw_w);
  conv->inputs.push_back(dw_b);
  dw_w->consumers.push_back(conv);
  if (dw_b) dw_b->consumers.push_back(conv);
  take_output(g, conv, dw);
}

}  // namespace

Status fuse_conv_depthwise(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> convs;
  for (const auto& n : g.nodes())
    if (plain_conv2d(*n)) convs.push_back(n.get());
  std::vector<const Node*> removed;  // depthwise nodes absorbed (some may be in `convs`)
  for (Node* conv : convs) {
    if (std::find(removed.begin(), removed.end(), conv) != removed.end() || !pointwise(*conv)) continue;
    Node* dw = sole_conv_reader(*conv);
    if (!dw) continue;
    const Shape& ys = *conv->output(0)->type.shape;
    const int64_t c = ys[1].value, s = depthwise_stride(*dw, c);
    if (!s) continue;
    const int64_t image_bytes = c * ys[2].value * ys[3].value * static_cast<int64_t>(sizeof(float));
    if (image_bytes < kDwFusionMinImageBytes || ys[0].value * image_bytes < kDwFusionMinBytes) continue;
    removed.push_back(dw);
    absorb_depthwise(g, conv, dw, s);
    if (!conv->input(5)) conv->inputs.pop_back();  // no depthwise bias: input 5 omitted
    ++*rewrites;
  }
  return Status::Ok();
}

Status fuse_inverted_residual(Graph& g, size_t* rewrites) {
  *rewrites = 0;
  std::vector<Node*> convs;
  for (const auto& n : g.nodes())
    if (plain_conv2d(*n)) convs.push_back(n.get());
  std::vector<const Node*> removed;  // nodes absorbed (some may be in `convs`)
  for (Node* head : convs) {
    if (std::find(removed.begin(), removed.end(), head) != removed.end()) continue;
    // head: the 1x1 before the depthwise, or the depthwise itself.
    Node* dw = pointwise(*head) ? sole_conv_reader(*head) : head;
    if (!dw) continue;
    const Value* dx = dw->input(0);  // the depthwise's input
    const int64_t c = (*dx->type.shape)[1].value, s = depthwise_stride(*dw, c);
    if (!s) continue;
    const Shape& ds = *dx->type.shape;
    if (ds[0].value * c * ds[2].value * ds[3].value * static_cast<int64_t>(sizeof(float)) < kBlockFusionMinBytes)
      continue;
    // The projection: a 1x1 without an activation, with or without a residual.
    const Value* dy = dw->output(0);
    if (dy->is_graph_output || dy->consumers.size() != 1 || !dy->type.shape || !fully_known(*dy->type.shape)) continue;
    Node* proj = dy->consumers[0];
    const bool sum = proj->attrs.get_int(kFusedSumAttr, 0) != 0;
    if (proj == dw || proj->op_type != "Conv" || !proj->domain.empty() || proj->input(0) != dy ||
        (sum ? proj->inputs.size() != 4 || !proj->input(3) : proj->inputs.size() > 3) ||
        proj->attrs.has(kFusedActivationAttr) || proj->attrs.has(kFusedDwStrideAttr) ||
        proj->attrs.has(kFusedProjectAttr) || proj->attrs.get_string("auto_pad", "NOTSET") != "NOTSET" ||
        !ints_are(*proj, "dilations", 1, 2, 1) || !proj->output(0))
      continue;
    Value* pw = proj->input(1);
    Value* pb = proj->input(2);
    if (!is_f32_const(pw) || pw->constant->dims.size() != 4 || pw->constant->dims[1] != c ||
        (pb && !is_f32_const(pb)) || !pointwise(*proj))
      continue;
    Value* r = sum ? proj->input(3) : nullptr;
    if (dw != head) {
      removed.push_back(dw);
      absorb_depthwise(g, head, dw, s);
    } else {
      while (head->inputs.size() < 6) head->inputs.push_back(nullptr);
    }
    head->inputs.resize(6);
    head->inputs[3] = r;
    head->inputs.push_back(pw);
    head->inputs.push_back(pb);
    if (!pb) head->inputs.pop_back();
    for (Value* v : {r, pw, pb})
      if (v) v->consumers.push_back(head);
    if (sum) head->attrs.set(kFusedSumAttr, int_attr(1));
    head->attrs.set(kFusedProjectAttr, int_attr(1));
    removed.push_back(proj);
    take_output(g, head, proj);
    ++*rewrites;
  }
  return Status::Ok();
}

}  // namespace openacl::graph
