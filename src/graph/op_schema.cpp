#include "graph/op_schema.h"

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace openacl::graph {

const TensorType& ShapeContext::input(size_t i) const {
  static const TensorType kEmpty;
  return has_input(i) ? *inputs_[i] : kEmpty;
}

Status ShapeContext::fail(const char* fmt, ...) const {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return Errorf(code::kInvalidParam, "%s: %s", node_.describe().c_str(), buf);
}

OpRegistry& OpRegistry::instance() {
  static OpRegistry* r = new OpRegistry();
  return *r;
}

void OpRegistry::add(OpSchema schema) { schemas_.push_back(std::move(schema)); }

const OpSchema* OpRegistry::find(const std::string& op_type, const std::string& domain, int opset) const {
  const std::string& dom = domain == "ai.onnx" ? std::string() : domain;
  const OpSchema* best = nullptr;
  for (const OpSchema& s : schemas_) {
    if (s.op_type != op_type || s.domain != dom) continue;
    if (opset && s.since_version > opset) continue;
    if (!best || s.since_version > best->since_version) best = &s;
  }
  return best;
}

std::vector<const OpSchema*> OpRegistry::all() const {
  std::vector<const OpSchema*> out;
  for (const OpSchema& s : schemas_) out.push_back(&s);
  return out;
}

Status check_node(const Node& n, const OpSchema** schema) {
  *schema = OpRegistry::instance().find(n.op_type, n.domain, n.opset);
  if (!*schema)
    return Status(code::kInvalidParam, n.describe() + (n.domain.empty() ? "" : " in domain '" + n.domain + "'") +
                                           ": operator not supported");
  const int in = static_cast<int>(n.inputs.size()), out = static_cast<int>(n.outputs.size());
  const OpSchema& s = **schema;
  if (in < s.min_inputs || in > s.max_inputs || out < s.min_outputs || out > s.max_outputs)
    return Errorf(code::kInvalidParam, "%s: %d input(s) and %d output(s); it takes %d..%d inputs and %d..%d outputs",
                  n.describe().c_str(), in, out, s.min_inputs, s.max_inputs, s.min_outputs, s.max_outputs);
  return Status::Ok();
}

Status infer_node_shapes(Node& n) {
  const OpSchema* schema = nullptr;
  OPENACL_RETURN_IF_ERROR(check_node(n, &schema));
  std::vector<const TensorType*> types;
  std::vector<const TensorData*> consts;
  types.reserve(n.inputs.size());
  consts.reserve(n.inputs.size());
  for (Value* v : n.inputs) {
    types.push_back(v ? &v->type : nullptr);
    consts.push_back(v ? v->constant.get() : nullptr);
  }
  ShapeContext ctx(n, std::move(types), std::move(consts));
  OPENACL_RETURN_IF_ERROR(schema->shape(ctx));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i]) n.outputs[i]->type = ctx.output(i);
  return Status::Ok();
}

Status infer_shapes(Graph& g) {
  std::vector<Node*> order;
  OPENACL_RETURN_IF_ERROR(g.topological_order(&order));
  std::vector<std::string> problems;
  for (Node* n : order) {
    Status st = infer_node_shapes(*n);
    if (!st.ok()) problems.push_back(st.message());
  }
  return problems_status(problems);
}

Status problems_status(const std::vector<std::string>& problems) {
  if (problems.empty()) return Status::Ok();
  std::string msg = strformat("%zu node(s) cannot run:", problems.size());
  for (const std::string& p : problems) msg += "\n  " + p;
  return Status(code::kInvalidParam, msg);
}

Status broadcast_shapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t rank = std::max(a.size(), b.size());
  Shape r(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim* da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const Dim* db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (!da) { r[i] = *db; continue; }
    if (!db) { r[i] = *da; continue; }
    if (da->known() && db->known()) {
      if (da->value == db->value || db->value == 1) r[i] = *da;
      else if (da->value == 1) r[i] = *db;
      else return Errorf(code::kInvalidParam, "shapes %s and %s do not broadcast (dim %zu: %lld vs %lld)",
                         shape_str(a).c_str(), shape_str(b).c_str(), i, static_cast<long long>(da->value),
                         static_cast<long long>(db->value));
    } else if (da->known() && da->value != 1) {
      r[i] = *da;
    } else if (db->known() && db->value != 1) {
      r[i] = *db;
    } else if (da->known()) {  // 1 vs unknown
      r[i] = *db;
    } else if (db->known()) {
      r[i] = *da;
    } else {
      r[i] = (!da->symbol.empty() && da->symbol == db->symbol) ? *da : Dim();
    }
  }
  *out = std::move(r);
  return Status::Ok();
}

bool normalize_axis(int64_t axis, int64_t rank, int64_t* out) {
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

}  // namespace openacl::graph
