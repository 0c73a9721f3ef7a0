// ModelProto -> graph IR. Two passes per graph: first every value that exists
// (initializers, inputs, Constant outputs, node outputs) so that node order
// and outer-scope references from subgraphs do not matter, then the nodes
// themselves, collecting every dangling reference before failing.
#include "graph/onnx/onnx_import.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <unordered_map>
#include <unordered_set>

#include "graph/onnx/onnx_internal.h"

namespace openacl::graph::onnx {
namespace {

namespace pb = ::openacl_onnx;
using detail::convert_tensor;
using detail::convert_type;

std::string normalize_domain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

std::string node_desc(const pb::NodeProto& n, int index) {
  std::string d = n.op_type().empty() ? std::string("<no op_type>") : n.op_type();
  if (!n.name().empty()) return d + " '" + n.name() + "'";
  return d + " (node #" + std::to_string(index) + ")";
}

// One graph being imported; subgraphs point at the scope they sit in.
struct Scope {
  Graph* g = nullptr;
  Scope* parent = nullptr;
  std::string where;  // "" for the main graph, "subgraph 'body' of Loop 'l': " below it
  // Values whose constant data we cannot hold (strings, 4-bit): name -> reason.
  std::unordered_map<std::string, std::string> unsupported;
};

// Finds `name` in this scope or an enclosing one. An outer value becomes a
// capture in every scope between: a value of the same name and type, with no
// producer, that is neither a graph input nor (unless the outer one is) a
// constant — executors bind it from the enclosing graph by name.
Value* lookup(Scope& s, const std::string& name, std::string* unsupported) {
  if (Value* v = s.g->find_value(name)) {
    auto it = s.unsupported.find(name);
    if (it != s.unsupported.end()) *unsupported = it->second;
    return v;
  }
  if (!s.parent) return nullptr;
  Value* outer = lookup(*s.parent, name, unsupported);
  if (!outer) return nullptr;
  Value* v = s.g->add_value(name, outer->type);
  v->constant = outer->constant;
  if (!unsupported->empty()) s.unsupported[name] = *unsupported;
  return v;
}

TensorType type_of(const TensorData& t) {
  TensorType ty;
  ty.dtype = t.dtype;
  Shape s;
  for (int64_t d : t.dims) s.emplace_back(d);
  ty.shape = std::move(s);
  return ty;
}

std::string join_limited(const std::vector<std::string>& items, size_t limit) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (i ? "; " : "") + items[i];
  if (items.size() > limit) out += "; and " + std::to_string(items.size() - limit) + " more";
  return out;
}

class Importer {
 public:
  Importer(std::string base_dir, std::map<std::string, int> opsets)
      : base_dir_(std::move(base_dir)), opsets_(std::move(opsets)) {}

  Status import_graph(pb::GraphProto& gp, Scope& scope);

 private:
  Status convert_attribute(pb::AttributeProto& a, const std::string& owner, Scope& scope, Attribute* out);
  Status fold_constant(pb::NodeProto& n, const std::string& desc, Scope& scope, std::shared_ptr<TensorData>* out,
                       TensorType* type, std::string* unsupported);

  std::string base_dir_;
  std::map<std::string, int> opsets_;
};

Status Importer::convert_attribute(pb::AttributeProto& a, const std::string& owner, Scope& scope, Attribute* out) {
  using K = Attribute::Kind;
  const std::string what = scope.where + owner + " attribute '" + a.name() + "'";
  if (!a.ref_attr_name().empty())
    return Errorf(code::kParseModel, "%s refers to function attribute '%s', which is only valid inside a function "
                  "body", what.c_str(), a.ref_attr_name().c_str());
  auto type = a.type();
  if (type == pb::AttributeProto::UNDEFINED) {  // writers before IR 2 leave it out; infer from the field set
    if (a.has_f()) type = pb::AttributeProto::FLOAT;
    else if (a.has_i()) type = pb::AttributeProto::INT;
    else if (a.has_s()) type = pb::AttributeProto::STRING;
    else if (a.has_t()) type = pb::AttributeProto::TENSOR;
    else if (a.has_g()) type = pb::AttributeProto::GRAPH;
    else if (a.floats_size()) type = pb::AttributeProto::FLOATS;
    else if (a.ints_size()) type = pb::AttributeProto::INTS;
    else if (a.strings_size()) type = pb::AttributeProto::STRINGS;
    else if (a.tensors_size()) type = pb::AttributeProto::TENSORS;
    else if (a.graphs_size()) type = pb::AttributeProto::GRAPHS;
  }
  // A value we cannot hold (string tensor, sparse tensor, type proto) does not
  // fail the import: the attribute stays kUndefined with the reason in `s`, so
  // the supported-op check can list this node with all the others.
  bool held = true;
  auto unheld = [&](std::string why) {
    held = false;
    *out = Attribute{};
    out->s = std::move(why);
  };
  auto tensor = [&](pb::TensorProto& t, std::shared_ptr<TensorData>* td) -> Status {
    std::string unsupported;
    OPENACL_RETURN_IF_ERROR(convert_tensor(t, what, base_dir_, td, &unsupported));
    if (!unsupported.empty()) unheld(unsupported);
    return Status::Ok();
  };
  auto graph = [&](pb::GraphProto& gp, std::shared_ptr<Graph>* g) -> Status {
    auto sub = std::make_shared<Graph>();
    Scope inner;
    inner.g = sub.get();
    inner.parent = &scope;
    inner.where = scope.where + "subgraph '" + a.name() + "' of " + owner + ": ";
    OPENACL_RETURN_IF_ERROR(import_graph(gp, inner));
    *g = std::move(sub);
    return Status::Ok();
  };
  switch (type) {
    case pb::AttributeProto::FLOAT: out->kind = K::kFloat; out->f = a.f(); break;
    case pb::AttributeProto::INT: out->kind = K::kInt; out->i = a.i(); break;
    case pb::AttributeProto::STRING: out->kind = K::kString; out->s = a.s(); break;
    case pb::AttributeProto::TENSOR:
      out->kind = K::kTensor;
      OPENACL_RETURN_IF_ERROR(tensor(*a.mutable_t(), &out->t));
      break;
    case pb::AttributeProto::GRAPH:
      out->kind = K::kGraph;
      OPENACL_RETURN_IF_ERROR(graph(*a.mutable_g(), &out->g));
      break;
    case pb::AttributeProto::FLOATS: out->kind = K::kFloats; out->floats.assign(a.floats().begin(), a.floats().end()); break;
    case pb::AttributeProto::INTS: out->kind = K::kInts; out->ints.assign(a.ints().begin(), a.ints().end()); break;
    case pb::AttributeProto::STRINGS:
      out->kind = K::kStrings;
      out->strings.assign(a.strings().begin(), a.strings().end());
      break;
    case pb::AttributeProto::TENSORS:
      out->kind = K::kTensors;
      for (auto& t : *a.mutable_tensors()) {
        std::shared_ptr<TensorData> td;
        OPENACL_RETURN_IF_ERROR(tensor(t, &td));
        if (!held) break;
        out->tensors.push_back(std::move(td));
      }
      break;
    case pb::AttributeProto::GRAPHS:
      out->kind = K::kGraphs;
      for (auto& gp : *a.mutable_graphs()) {
        out->graphs.emplace_back();
        OPENACL_RETURN_IF_ERROR(graph(gp, &out->graphs.back()));
      }
      break;
    case pb::AttributeProto::UNDEFINED:
      return Errorf(code::kParseModel, "%s has no value", what.c_str());
    default:
      unheld(strformat("%s has kind %d (sparse tensor / type proto), which is not supported yet", what.c_str(),
                       static_cast<int>(type)));
  }
  if (!held) out->kind = K::kUndefined;
  return Status::Ok();
}

// A Constant node's value as constant data (its attributes per the ONNX spec).
Status Importer::fold_constant(pb::NodeProto& n, const std::string& desc, Scope& scope,
                               std::shared_ptr<TensorData>* out, TensorType* type, std::string* unsupported) {
  const std::string what = scope.where + desc;
  if (n.input_size() != 0 || n.output_size() != 1 || n.output(0).empty())
    return Errorf(code::kParseModel, "%s: a Constant takes no inputs and has exactly one named output (has %d inputs, "
                  "%d outputs)", what.c_str(), n.input_size(), n.output_size());
  if (n.attribute_size() != 1)
    return Errorf(code::kParseModel, "%s: a Constant needs exactly one of value, value_float(s), value_int(s), "
                  "value_string(s), sparse_value (has %d attributes)", what.c_str(), n.attribute_size());
  pb::AttributeProto& a = *n.mutable_attribute(0);
  const std::string& an = a.name();
  if (an == "value") {
    OPENACL_RETURN_IF_ERROR(convert_tensor(*a.mutable_t(), what + " attribute 'value'", base_dir_, out, unsupported));
    if (a.t().data_type() == static_cast<int>(DType::kString)) type->dtype = DType::kString;
  } else if (an == "value_float") {
    const float f = a.f();
    *out = TensorData::copy_of(DType::kFloat32, {}, &f, sizeof f);
  } else if (an == "value_floats") {
    const auto n_el = static_cast<size_t>(a.floats_size());
    *out = TensorData::copy_of(DType::kFloat32, {static_cast<int64_t>(n_el)}, a.floats().data(), n_el * sizeof(float));
  } else if (an == "value_int") {
    const int64_t i = a.i();
    *out = TensorData::copy_of(DType::kInt64, {}, &i, sizeof i);
  } else if (an == "value_ints") {
    const auto n_el = static_cast<size_t>(a.ints_size());
    *out = TensorData::copy_of(DType::kInt64, {static_cast<int64_t>(n_el)}, a.ints().data(), n_el * sizeof(int64_t));
  } else if (an == "value_string" || an == "value_strings") {
    *unsupported = what + ": string constants are not supported yet";
    type->dtype = DType::kString;
  } else if (an == "sparse_value") {
    *unsupported = what + ": sparse constants are not supported yet";
  } else {
    return Errorf(code::kParseModel, "%s: unknown Constant attribute '%s'", what.c_str(), an.c_str());
  }
  if (*out) *type = type_of(**out);
  return Status::Ok();
}

Status Importer::import_graph(pb::GraphProto& gp, Scope& scope) {
  Graph& g = *scope.g;
  const char* where = scope.where.c_str();
  g.name = gp.name();
  g.opsets() = opsets_;
  // name -> what made it, for "produced twice" messages.
  std::unordered_map<std::string, std::string> origin;

  if (gp.sparse_initializer_size())
    return Errorf(code::kUnsupportedDataType, "%ssparse_initializer '%s' is not supported; store it as a dense "
                  "initializer", where, gp.sparse_initializer(0).values().name().c_str());

  for (int i = 0; i < gp.initializer_size(); ++i) {
    pb::TensorProto& t = *gp.mutable_initializer(i);
    if (t.name().empty()) return Errorf(code::kParseModel, "%sinitializer #%d has no name", where, i);
    if (g.find_value(t.name()))
      return Errorf(code::kParseModel, "%sinitializer '%s' appears twice; names must be unique", where,
                    t.name().c_str());
    std::shared_ptr<TensorData> td;
    std::string unsupported;
    OPENACL_RETURN_IF_ERROR(convert_tensor(t, scope.where + "initializer '" + t.name() + "'", base_dir_, &td,
                                           &unsupported));
    TensorType ty;
    if (td) ty = type_of(*td);
    else if (t.data_type() == static_cast<int>(DType::kString)) ty.dtype = DType::kString;
    Value* v = g.add_value(t.name(), ty);
    v->constant = std::move(td);
    if (!unsupported.empty()) scope.unsupported[t.name()] = unsupported;
    origin[t.name()] = "initializer";
  }

  for (int i = 0; i < gp.input_size(); ++i) {
    const pb::ValueInfoProto& vi = gp.input(i);
    if (vi.name().empty()) return Errorf(code::kParseModel, "%sgraph input #%d has no name", where, i);
    auto it = origin.find(vi.name());
    if (it != origin.end()) {
      if (it->second == "initializer") continue;  // an input with a default: a constant, not a real input
      return Errorf(code::kParseModel, "%sgraph input '%s' is listed twice", where, vi.name().c_str());
    }
    TensorType ty;
    OPENACL_RETURN_IF_ERROR(convert_type(vi.type(), scope.where + "graph input '" + vi.name() + "'", &ty));
    Value* v = g.add_value(vi.name(), std::move(ty));
    v->is_graph_input = true;
    g.inputs().push_back(v);
    origin[vi.name()] = "graph input";
  }

  // Pass 1: every node output exists before any node is wired.
  std::vector<bool> folded(static_cast<size_t>(gp.node_size()), false);
  for (int k = 0; k < gp.node_size(); ++k) {
    pb::NodeProto& n = *gp.mutable_node(k);
    const std::string desc = node_desc(n, k);
    if (n.op_type().empty()) return Errorf(code::kParseModel, "%snode #%d has no op_type", where, k);
    for (const std::string& out : n.output()) {
      if (out.empty()) continue;
      auto it = origin.find(out);
      if (it != origin.end())
        return Errorf(code::kParseModel, "%svalue '%s' is produced twice: by %s and by %s; every value needs a "
                      "unique name", where, out.c_str(), it->second.c_str(), desc.c_str());
      origin[out] = desc;
    }
    if (n.op_type() == "Constant" && normalize_domain(n.domain()).empty()) {
      std::shared_ptr<TensorData> td;
      TensorType ty;
      std::string unsupported;
      OPENACL_RETURN_IF_ERROR(fold_constant(n, desc, scope, &td, &ty, &unsupported));
      Value* v = g.add_value(n.output(0), ty);
      v->constant = std::move(td);
      if (!unsupported.empty()) scope.unsupported[n.output(0)] = unsupported;
      folded[static_cast<size_t>(k)] = true;
      continue;
    }
    for (const std::string& out : n.output())
      if (!out.empty()) g.add_value(out);
  }

  for (const pb::ValueInfoProto& vi : gp.value_info()) {
    Value* v = g.find_value(vi.name());
    if (!v || v->constant || v->is_graph_input || v->type.dtype != DType::kUndefined) continue;
    OPENACL_RETURN_IF_ERROR(convert_type(vi.type(), scope.where + "value_info '" + vi.name() + "'", &v->type));
  }

  // Pass 2: nodes. Dangling names and unusable constants are collected, not
  // returned one by one.
  std::vector<std::string> missing, unusable;
  for (int k = 0; k < gp.node_size(); ++k) {
    if (folded[static_cast<size_t>(k)]) continue;
    pb::NodeProto& n = *gp.mutable_node(k);
    const std::string desc = node_desc(n, k);
    const std::string domain = normalize_domain(n.domain());
    auto op = opsets_.find(domain);
    if (op == opsets_.end())
      return Errorf(code::kParseModel, "%s%s uses domain '%s', which the model's opset_import does not list; add "
                    "an opset_import entry for it", where, desc.c_str(), n.domain().c_str());
    std::vector<Value*> ins, outs;
    for (int i = 0; i < n.input_size(); ++i) {
      const std::string& name = n.input(i);
      if (name.empty()) {
        ins.push_back(nullptr);
        continue;
      }
      std::string unsupported;
      Value* v = lookup(scope, name, &unsupported);
      if (!v) missing.push_back(strformat("%s input %d '%s'", desc.c_str(), i, name.c_str()));
      else if (!unsupported.empty()) unusable.push_back(strformat("%s input %d: %s", desc.c_str(), i, unsupported.c_str()));
      ins.push_back(v);
    }
    for (const std::string& out : n.output()) outs.push_back(out.empty() ? nullptr : g.find_value(out));
    AttributeMap attrs;
    for (pb::AttributeProto& a : *n.mutable_attribute()) {
      if (a.name().empty()) return Errorf(code::kParseModel, "%s%s has an attribute with no name", where, desc.c_str());
      if (attrs.has(a.name()))
        return Errorf(code::kParseModel, "%s%s has attribute '%s' twice", where, desc.c_str(), a.name().c_str());
      Attribute attr;
      OPENACL_RETURN_IF_ERROR(convert_attribute(a, desc, scope, &attr));
      attrs.set(a.name(), std::move(attr));
    }
    Node* node = g.add_node(n.name(), n.op_type(), std::move(ins), std::move(outs), domain, op->second);
    node->attrs = std::move(attrs);
  }

  for (int i = 0; i < gp.output_size(); ++i) {
    const pb::ValueInfoProto& vi = gp.output(i);
    if (vi.name().empty()) return Errorf(code::kParseModel, "%sgraph output #%d has no name", where, i);
    std::string unsupported;
    Value* v = lookup(scope, vi.name(), &unsupported);
    if (!v) {
      missing.push_back("graph output '" + vi.name() + "'");
      continue;
    }
    if (!unsupported.empty()) unusable.push_back("graph output '" + vi.name() + "': " + unsupported);
    TensorType ty;
    OPENACL_RETURN_IF_ERROR(convert_type(vi.type(), scope.where + "graph output '" + vi.name() + "'", &ty));
    if (!v->constant && v->type.dtype == DType::kUndefined) v->type = std::move(ty);
    v->is_graph_output = true;
    g.outputs().push_back(v);
  }

  if (!missing.empty())
    return Errorf(code::kParseModel, "%s%zu reference(s) to values that nothing produces (not a graph input, "
                  "initializer, Constant or node output): %s. Check that the model is complete (onnx.checker) and "
                  "that producing nodes were not stripped", where, missing.size(), join_limited(missing, 32).c_str());
  if (!unusable.empty())
    return Errorf(code::kUnsupportedDataType, "%s%zu use(s) of unsupported constants: %s", where, unusable.size(),
                  join_limited(unusable, 32).c_str());

  std::vector<Node*> order;
  Status st = g.topological_order(&order);
  if (!st.ok()) return Status(code::kParseModel, scope.where + st.message());
  return Status::Ok();
}

}  // namespace

Status import_model(const void* data, size_t size, const ImportOptions& opts, std::unique_ptr<Graph>* out) {
  if (!out || (!data && size)) return Errorf(code::kInvalidParam, "import_model: null %s", out ? "data" : "out");
  if (size > static_cast<size_t>(INT_MAX))
    return Errorf(code::kParseModel, "the model is %zu bytes; protobuf models are limited to 2 GiB, so store the "
                  "weights as external data (onnx.save(..., save_as_external_data=True))", size);
  try {
    pb::ModelProto m;
    if (!m.ParseFromArray(data, static_cast<int>(size)))
      return Errorf(code::kParseModel, "the %zu bytes are not a valid ONNX ModelProto (truncated or corrupted file?)",
                    size);
    if (!m.has_ir_version())
      return Errorf(code::kParseModel, "not an ONNX model: no ir_version (%zu bytes)", size);
    if (m.ir_version() < kMinIrVersion || m.ir_version() > kMaxIrVersion)
      return Errorf(code::kParseModel, "ONNX IR version %lld is not supported (%d to %d); convert the model with "
                    "onnx.version_converter or re-export it", static_cast<long long>(m.ir_version()), kMinIrVersion,
                    kMaxIrVersion);
    if (!m.has_graph()) return Errorf(code::kParseModel, "the ONNX model has no graph");
    std::map<std::string, int> opsets;
    for (const auto& os : m.opset_import()) {
      const std::string domain = normalize_domain(os.domain());
      if (os.version() <= 0 || os.version() > INT_MAX)
        return Errorf(code::kParseModel, "opset_import for domain '%s' has version %lld", os.domain().c_str(),
                      static_cast<long long>(os.version()));
      if (opsets.count(domain) && opsets[domain] != static_cast<int>(os.version()))
        return Errorf(code::kParseModel, "opset_import lists domain '%s' twice with different versions",
                      os.domain().c_str());
      opsets[domain] = static_cast<int>(os.version());
    }
    if (opsets.empty()) return Errorf(code::kParseModel, "the ONNX model has no opset_import");
    auto g = std::make_unique<Graph>();
    Importer imp(opts.base_dir, std::move(opsets));
    Scope scope;
    scope.g = g.get();
    OPENACL_RETURN_IF_ERROR(imp.import_graph(*m.mutable_graph(), scope));
    *out = std::move(g);
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return Errorf(code::kBadAlloc, "out of memory while importing a %zu-byte ONNX model", size);
  }
}

Status import_file(const std::string& path, std::unique_ptr<Graph>* out) {
  if (!out) return Errorf(code::kInvalidParam, "import_file: null out");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Errorf(code::kReadModelFailure, "cannot open model file '%s': %s", path.c_str(), std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Errorf(code::kReadModelFailure, "model path '%s' is not a regular file", path.c_str());
  }
  if (static_cast<uint64_t>(st.st_size) > static_cast<uint64_t>(INT_MAX)) {
    ::close(fd);
    return Errorf(code::kParseModel, "model file '%s' is %lld bytes; protobuf models are limited to 2 GiB, so store "
                  "the weights as external data", path.c_str(), static_cast<long long>(st.st_size));
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t r = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int err = errno;
      ::close(fd);
      return Errorf(code::kReadModelFailure, "reading model file '%s' failed: %s", path.c_str(),
                    r < 0 ? std::strerror(err) : "file shrank while reading");
    }
    done += static_cast<size_t>(r);
  }
  ::close(fd);
  ImportOptions opts;
  const size_t slash = path.rfind('/');
  opts.base_dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  Status st2 = import_model(bytes.data(), bytes.size(), opts, out);
  if (!st2.ok()) return Status(st2.code(), path + ": " + st2.message());
  return st2;
}

Status read_tensor_proto(const void* data, size_t size, std::shared_ptr<TensorData>* out, std::string* name) {
  if (!out || (!data && size)) return Errorf(code::kInvalidParam, "read_tensor_proto: null %s", out ? "data" : "out");
  if (size > static_cast<size_t>(INT_MAX))
    return Errorf(code::kParseModel, "a %zu-byte TensorProto exceeds protobuf's 2 GiB limit", size);
  try {
    pb::TensorProto t;
    if (!t.ParseFromArray(data, static_cast<int>(size)))
      return Errorf(code::kParseModel, "the %zu bytes are not a valid ONNX TensorProto (truncated or corrupted?)", size);
    std::string unsupported;
    OPENACL_RETURN_IF_ERROR(convert_tensor(t, "tensor '" + t.name() + "'", "", out, &unsupported));
    if (!unsupported.empty()) return Status(code::kUnsupportedDataType, unsupported);
    if (name) *name = t.name();
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return Errorf(code::kBadAlloc, "out of memory while reading a %zu-byte TensorProto", size);
  }
}

}  // namespace openacl::graph::onnx
