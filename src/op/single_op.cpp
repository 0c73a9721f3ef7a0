#include "op/single_op.h"

#include <algorithm>
#include <set>

#include "base/codes.h"
#include "base/log.h"
#include "graph/op_schema.h"
#include "model/om_format.h"

namespace openacl::op {
namespace {

std::string names_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

Status find_def(const std::string& op_type, const OpDef** def) {
  *def = Catalog::instance().find(op_type);
  if (*def) return Status::Ok();
  std::vector<std::string> near = Catalog::instance().nearest(op_type);
  std::string hint = near.empty() ? std::string("see docs/op-catalog.md for the op types OpenACL runs")
                                  : "did you mean " + names_list(near) + "? (docs/op-catalog.md lists every op)";
  return Errorf(code::kOpNotFound, "unknown op type '%s'; %s", op_type.c_str(), hint.c_str());
}

std::string port_names(const std::vector<PortDef>& ports) {
  std::string s;
  for (size_t i = 0; i < ports.size(); ++i) {
    s += (i ? ", " : "") + ports[i].name;
    if (ports[i].optional) s += " (optional)";
    if (ports[i].dynamic) s += " (dynamic, 1 or more)";
  }
  return s.empty() ? "none" : s;
}

Status check_counts(const OpDef& def, size_t num_inputs, size_t num_outputs) {
  const int lo = def.min_inputs(), hi = def.max_inputs();
  if (static_cast<int>(num_inputs) < lo || (hi >= 0 && static_cast<int>(num_inputs) > hi))
    return Errorf(code::kOpInputNotMatch, "%s takes %s%d input(s) (%s); %zu were given", def.type.c_str(),
                  hi < 0 ? "at least " : (lo == hi ? "" : ("from " + std::to_string(lo) + " to ").c_str()),
                  hi < 0 || lo == hi ? lo : hi, port_names(def.inputs).c_str(), num_inputs);
  bool dynamic_out = false;
  size_t required = 0, total = def.outputs.size();
  for (const PortDef& p : def.outputs) {
    if (p.dynamic) dynamic_out = true;
    if (!p.optional) ++required;
  }
  if (num_outputs < std::max<size_t>(required, 1) || (!dynamic_out && num_outputs > total))
    return Errorf(code::kOpOutputNotMatch, "%s produces %s%zu output(s) (%s); %zu output desc(s) were given",
                  def.type.c_str(), dynamic_out ? "at least " : "", dynamic_out ? required : total,
                  port_names(def.outputs).c_str(), num_outputs);
  return Status::Ok();
}

Status check_attrs(const OpDef& def, const OpAttrs& attrs) {
  for (const AttrDef& a : def.attrs) {
    auto it = attrs.find(a.name);
    if (it == attrs.end()) {
      if (a.required)
        return Errorf(code::kOpAttrNotMatch, "%s needs attribute '%s' (%s); set it with aclopSetAttr* / "
                      "acl.op.set_attr_*", def.type.c_str(), a.name.c_str(), AttrValue::kind_name(a.kind));
      continue;
    }
    if (it->second.kind != a.kind)
      return Errorf(code::kOpAttrNotMatch, "%s: attribute '%s' must be a %s; a %s (%s) was given", def.type.c_str(),
                    a.name.c_str(), AttrValue::kind_name(a.kind), AttrValue::kind_name(it->second.kind),
                    it->second.str().c_str());
  }
  for (const auto& [name, value] : attrs) {
    // Attributes the entry does not know (framework leftovers such as "T")
    // are ignored, as CANN's compiler ignores attributes an op does not use.
    if (!def.find_attr(name)) OACL_DEBUG("%s: attribute '%s' is not used by this op", def.type.c_str(), name.c_str());
  }
  return Status::Ok();
}

std::string input_name(const OpDef& def, size_t i);

Status check_input_specs(const OpDef& def, const std::vector<TensorSpec>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& s = inputs[i];
    const PortDef* port = i < def.inputs.size() ? &def.inputs[i] : (def.inputs.empty() ? nullptr : &def.inputs.back());
    const char* pname = port ? port->name.c_str() : "?";
    if (s.omitted()) {
      if (port && !port->optional)
        return Errorf(code::kOpInputNotMatch, "%s: input %zu (%s) is required; an omitted-input desc "
                      "(ACL_DT_UNDEFINED, no dims, ACL_FORMAT_UNDEFINED) was given", def.type.c_str(), i, pname);
      continue;
    }
    if (s.dtype == DType::kUndefined)
      return Errorf(code::kOpInputNotMatch, "%s: input %zu (%s) has no data type (ACL_DT_UNDEFINED); create its desc "
                    "with the element type", def.type.c_str(), i, pname);
    if (graph::dtype_bytes(s.dtype) == 0)
      return Errorf(code::kUnsupportedDataType, "%s: input %zu (%s) is %s, which single ops do not take",
                    def.type.c_str(), i, pname, graph::dtype_name(s.dtype));
    if (!s.unknown_rank())
      for (int64_t d : s.dims)
        if (d < -1)
          return Errorf(code::kOpInputNotMatch, "%s: input %zu (%s) has dim %lld; dims are >= 0, or -1 for a dim "
                        "known at execution ([-2] alone: unknown rank)", def.type.c_str(), i, pname,
                        static_cast<long long>(d));
    if (s.constant) {
      const int64_t n = s.elements();
      if (n < 0)
        return Errorf(code::kOpInputNotMatch, "%s: constant input %zu (%s) needs a fully known shape, not %s",
                      def.type.c_str(), i, pname, s.str().c_str());
      const size_t want = static_cast<size_t>(n) * graph::dtype_bytes(s.dtype);
      if (s.constant->bytes != want)
        return Errorf(code::kOpInputNotMatch, "%s: constant input %zu (%s) is %s = %zu bytes, but %zu bytes were "
                      "attached (aclSetTensorConst)", def.type.c_str(), i, pname, s.str().c_str(), want,
                      s.constant->bytes);
    }
  }
  const size_t t = def.type_input;
  if (!def.dtypes.empty() && t < inputs.size() && !inputs[t].omitted() &&
      std::find(def.dtypes.begin(), def.dtypes.end(), inputs[t].dtype) == def.dtypes.end()) {
    std::string allowed;
    for (size_t k = 0; k < def.dtypes.size(); ++k) allowed += (k ? ", " : "") + std::string(graph::dtype_name(def.dtypes[k]));
    return Errorf(code::kUnsupportedDataType, "%s does not take %s input %s; it takes %s", def.type.c_str(),
                  graph::dtype_name(inputs[t].dtype), input_name(def, t).c_str(), allowed.c_str());
  }
  return Status::Ok();
}

graph::TensorType spec_type(const TensorSpec& s) {
  graph::TensorType t;
  t.dtype = s.dtype;
  if (!s.unknown_rank()) {
    graph::Shape shape;
    for (int64_t d : s.dims) shape.emplace_back(d >= 0 ? graph::Dim(d) : graph::Dim());
    t.shape = shape;
  }
  return t;
}

std::string input_name(const OpDef& def, size_t i) {
  if (i < def.inputs.size() && !def.inputs[i].dynamic) return def.inputs[i].name;
  // Members of a dynamic input: x0, x1, ...
  const size_t first = def.inputs.empty() ? 0 : def.inputs.size() - 1;
  const std::string base = def.inputs.empty() ? "x" : def.inputs.back().name;
  return base + std::to_string(i - first);
}

// Builds the op's graph; *model_input receives, per input spec, its index
// among the graph inputs (-1: constant or omitted).
Status build_op_graph(const OpDef& def, const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs,
                      const OpAttrs& attrs, std::shared_ptr<graph::Graph>* out, std::vector<int>* model_input) {
  auto g = std::make_shared<graph::Graph>();
  g->name = def.type;
  g->opsets()[""] = kCatalogOpset;
  std::vector<graph::Value*> values(inputs.size(), nullptr);
  model_input->assign(inputs.size(), -1);
  std::set<std::string> used;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& s = inputs[i];
    if (s.omitted()) continue;
    std::string name = input_name(def, i);
    while (used.count(name)) name += "_";
    used.insert(name);
    graph::Value* v = g->add_value(name, spec_type(s));
    if (s.constant) {
      auto c = std::make_shared<graph::TensorData>(*s.constant);
      c->dtype = s.dtype;
      c->dims = s.dims;
      v->constant = std::move(c);
    } else {
      v->is_graph_input = true;
      (*model_input)[i] = static_cast<int>(g->inputs().size());
      g->inputs().push_back(v);
    }
    values[i] = v;
  }
  BuildContext ctx(def, *g, values, inputs, outputs, attrs);
  OPENACL_RETURN_IF_ERROR(def.build(ctx));
  for (size_t o = 0; o < outputs.size(); ++o) {
    graph::Value* v = ctx.output(o);
    if (!v)
      return Errorf(code::kInternalError, "%s: the catalogue entry bound no value to output %zu", def.type.c_str(), o);
    // An output must be produced by a node of its own: a pass-through
    // (Identity-like entries), a constant or an output bound twice gets a copy.
    const bool repeated = std::find(g->outputs().begin(), g->outputs().end(), v) != g->outputs().end();
    if (!v->producer || repeated) v = ctx.add1("Identity", {v});
    v->is_graph_output = true;
    g->outputs().push_back(v);
  }
  // Opset of the graph: the newest any node uses.
  int opset = kCatalogOpset;
  for (const auto& n : g->nodes()) opset = std::max(opset, n->opset);
  g->opsets()[""] = opset;
  *out = std::move(g);
  return Status::Ok();
}

Status prepare(const std::string& op_type, const std::vector<TensorSpec>& inputs,
               const std::vector<TensorSpec>& outputs, const OpAttrs& attrs, const OpDef** def) {
  OPENACL_RETURN_IF_ERROR(find_def(op_type, def));
  OPENACL_RETURN_IF_ERROR(check_counts(**def, inputs.size(), outputs.size()));
  OPENACL_RETURN_IF_ERROR(check_attrs(**def, attrs));
  return check_input_specs(**def, inputs);
}

// Engine failures (shape functions, kernel choice) are about the op's inputs:
// report them as CANN reports a single op that does not fit.
Status as_op_error(const OpDef& def, const std::vector<TensorSpec>& inputs, const std::vector<TensorSpec>& outputs,
                   const OpAttrs& attrs, const Status& st) {
  if (st.ok()) return st;
  int c = st.code();
  if (c == code::kInvalidParam || c == code::kParseModel) {
    c = st.message().find("no kernel") != std::string::npos || st.message().find("not supported for") != std::string::npos
            ? code::kUnsupportedDataType
            : code::kOpInputNotMatch;
  }
  return Errorf(c, "%s cannot run as %s: %s", def.type.c_str(), describe_call(def.type, inputs, outputs, attrs).c_str(),
                st.message().c_str());
}

TensorSpec output_spec_of(const model::IoInfo& io) {
  TensorSpec s;
  s.dtype = io.dtype;
  s.dims = io.dims;
  s.format = kFormatND;
  return s;
}

}  // namespace

Status CompiledOp::build_graph(const std::string& op_type, const std::vector<TensorSpec>& inputs,
                               const std::vector<TensorSpec>& outputs, const OpAttrs& attrs,
                               std::shared_ptr<graph::Graph>* graph) {
  const OpDef* def = nullptr;
  OPENACL_RETURN_IF_ERROR(prepare(op_type, inputs, outputs, attrs, &def));
  std::vector<int> model_input;
  return build_op_graph(*def, inputs, outputs, attrs, graph, &model_input);
}

Status CompiledOp::compile(const std::string& op_type, const std::vector<TensorSpec>& inputs,
                           const std::vector<TensorSpec>& outputs, const OpAttrs& attrs,
                           const model::Allocator& allocator, std::shared_ptr<CompiledOp>* out) {
  const OpDef* def = nullptr;
  OPENACL_RETURN_IF_ERROR(prepare(op_type, inputs, outputs, attrs, &def));
  auto op = std::make_shared<CompiledOp>();
  op->type_ = op_type;
  op->key_ = op_key(op_type, inputs, outputs, attrs);
  op->inputs_ = inputs;
  model::OmModel om;
  OPENACL_RETURN_IF_ERROR(build_op_graph(*def, inputs, outputs, attrs, &om.graph, &op->model_input_));
  om.meta.producer = "OpenACL single op";
  om.meta.source = op_type;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (op->model_input_[i] < 0 || inputs[i].range.empty()) continue;
    if (inputs[i].range.size() != inputs[i].dims.size())
      return Errorf(code::kOpInputNotMatch, "%s: input %zu has %zu dims but %zu shape ranges; give one [min, max] "
                    "per dim (aclSetTensorShapeRange)", op_type.c_str(), i, inputs[i].dims.size(),
                    inputs[i].range.size());
    om.meta.input_ranges[om.graph->inputs()[op->model_input_[i]]->name] = inputs[i].range;
  }
  std::string bytes;
  OPENACL_RETURN_IF_ERROR(model::write_om(om, &bytes));
  model::LoadOptions options;
  options.allocator = allocator;
  Status st = model::LoadedModel::load(bytes.data(), bytes.size(), nullptr, options, &op->model_);
  if (!st.ok()) return as_op_error(*def, inputs, outputs, attrs, st);

  // What the op produces against what the caller described.
  const model::ModelInfo& info = op->model_->info();
  for (size_t o = 0; o < info.outputs.size() && o < outputs.size(); ++o) {
    TensorSpec produced = output_spec_of(info.outputs[o]);
    produced.format = outputs[o].format == kFormatUndefined ? kFormatND : outputs[o].format;
    const TensorSpec& want = outputs[o];
    const std::string oname = o < def->outputs.size() ? def->outputs[o].name : def->outputs.back().name;
    if (want.dtype != DType::kUndefined && want.dtype != produced.dtype)
      return Errorf(code::kOpOutputNotMatch, "%s: output %zu (%s) is %s, but its desc says %s; describe the output "
                    "as %s", op_type.c_str(), o, oname.c_str(), graph::dtype_name(produced.dtype),
                    graph::dtype_name(want.dtype), graph::dtype_name(produced.dtype));
    if (!want.unknown_rank() && !(want.dims.empty() && want.dtype == DType::kUndefined)) {
      bool same = want.dims.size() == produced.dims.size();
      for (size_t k = 0; same && k < want.dims.size(); ++k)
        if (want.dims[k] >= 0 && produced.dims[k] >= 0 && want.dims[k] != produced.dims[k]) same = false;
      // A data-dependent output may be described by its capacity in any rank
      // only when its rank is unknown to us too.
      if (!same)
        return Errorf(code::kOpOutputNotMatch, "%s: output %zu (%s) is %s, but its desc says %s; describe the output "
                      "with the shape the op produces (aclopInferShape reports it)", op_type.c_str(), o, oname.c_str(),
                      produced.str().c_str(), want.str().c_str());
    }
    op->outputs_.push_back(std::move(produced));
  }
  *out = std::move(op);
  return Status::Ok();
}

Status CompiledOp::execute(const std::vector<model::IoBuffer>& inputs, const std::vector<model::IoBuffer>& outputs,
                           const std::vector<std::vector<int64_t>>& input_dims,
                           std::vector<std::vector<int64_t>>* output_dims, model::NodeObserver* observer) const {
  if (inputs.size() != inputs_.size())
    return Errorf(code::kOpInputNotMatch, "%s was compiled for %zu inputs; %zu buffers were given", type_.c_str(),
                  inputs_.size(), inputs.size());
  if (outputs.size() != outputs_.size())
    return Errorf(code::kOpOutputNotMatch, "%s was compiled for %zu outputs; %zu buffers were given", type_.c_str(),
                  outputs_.size(), outputs.size());
  // Per-thread scratch: a warm execution allocates nothing here.
  thread_local std::vector<model::IoBuffer> ins;
  thread_local std::vector<std::vector<int64_t>> dims;
  ins.clear();
  bool any_dims = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (model_input_[i] < 0) continue;
    ins.push_back(inputs[i]);
    if (i < input_dims.size() && !input_dims[i].empty()) any_dims = true;
  }
  if (any_dims) {
    dims.clear();
    for (size_t i = 0; i < inputs.size(); ++i)
      if (model_input_[i] >= 0) dims.push_back(i < input_dims.size() ? input_dims[i] : std::vector<int64_t>{});
  }
  static const std::vector<std::vector<int64_t>> kNoDims;
  Status st = model_->execute(ins, outputs, any_dims ? dims : kNoDims, output_dims, observer);
  if (st.ok()) return st;
  int c = st.code();
  if (c == code::kModelInputNotMatch) c = code::kOpInputNotMatch;
  if (c == code::kModelOutputNotMatch) c = code::kOpOutputNotMatch;
  return Status(c, type_ + ": " + st.message());
}

Status infer_shape(const std::string& op_type, const std::vector<TensorSpec>& inputs, size_t num_outputs,
                   const OpAttrs& attrs, std::vector<TensorSpec>* outputs) {
  const OpDef* def = nullptr;
  std::vector<TensorSpec> probe(num_outputs);
  OPENACL_RETURN_IF_ERROR(prepare(op_type, inputs, probe, attrs, &def));
  std::shared_ptr<graph::Graph> g;
  std::vector<int> model_input;
  OPENACL_RETURN_IF_ERROR(build_op_graph(*def, inputs, probe, attrs, &g, &model_input));
  Status st = graph::infer_shapes(*g);
  if (!st.ok()) return as_op_error(*def, inputs, probe, attrs, st);
  outputs->assign(num_outputs, TensorSpec());
  for (size_t o = 0; o < num_outputs; ++o) {
    const graph::TensorType& t = g->outputs()[o]->type;
    TensorSpec& s = (*outputs)[o];
    s.dtype = t.dtype;
    s.format = kFormatND;
    if (!t.shape) {
      s.dims = {-2};
      continue;
    }
    bool unknown = false;
    for (const graph::Dim& d : *t.shape) {
      s.dims.push_back(d.known() ? d.value : -1);
      unknown |= !d.known();
    }
    if (unknown)
      for (int64_t d : s.dims) s.range.emplace_back(d >= 0 ? d : 0, d >= 0 ? d : -1);
  }
  if (def->bounds) {
    // The entry knows the upper bounds of its data-dependent dims.
    std::vector<TensorSpec> bounded = *outputs;
    OPENACL_RETURN_IF_ERROR(def->bounds(inputs, attrs, &bounded));
    if (bounded.size() == outputs->size()) *outputs = std::move(bounded);
  }
  return Status::Ok();
}

Status OpCache::get(const std::string& key, const std::string& op_type, const std::vector<TensorSpec>& inputs,
                    const std::vector<TensorSpec>& outputs, const OpAttrs& attrs, const model::Allocator& allocator,
                    std::shared_ptr<CompiledOp>* out) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = by_key_.find(key);
    if (it != by_key_.end()) {
      ++hits_;
      touch_locked(it->second);
      *out = it->second->op;
      return Status::Ok();
    }
    ++misses_;
  }
  // Compile outside the lock: other ops keep running meanwhile. Two threads
  // missing on one key both compile; the second insert replaces the first.
  std::shared_ptr<CompiledOp> op;
  OPENACL_RETURN_IF_ERROR(CompiledOp::compile(op_type, inputs, outputs, attrs, allocator, &op));
  put(key, op);
  *out = std::move(op);
  return Status::Ok();
}

void OpCache::put(const std::string& key, std::shared_ptr<CompiledOp> op) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_key_.find(key);
  if (it != by_key_.end()) {
    it->second->op = std::move(op);
    touch_locked(it->second);
    return;
  }
  lru_.push_front({key, std::move(op)});
  by_key_[key] = lru_.begin();
  evict_locked();
}

void OpCache::touch_locked(Iter it) {
  if (it != lru_.begin()) lru_.splice(lru_.begin(), lru_, it);
}

void OpCache::evict_locked() {
  // Evicted ops stay alive while an execution still holds them (shared_ptr).
  while (lru_.size() > capacity_) {
    by_key_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

void OpCache::set_capacity(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  capacity_ = std::max<size_t>(n, 1);
  evict_locked();
}

size_t OpCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lru_.size();
}

uint64_t OpCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

uint64_t OpCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

void OpCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  by_key_.clear();
  lru_.clear();
  hits_ = misses_ = 0;
}

}  // namespace openacl::op
