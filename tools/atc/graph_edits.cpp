#include "graph_edits.h"

#include <algorithm>
#include <set>
#include <utility>

#include "graph/op_schema.h"

namespace openacl::atc {

namespace {

using graph::DType;
using graph::Graph;
using graph::Node;
using graph::Value;

std::vector<std::string> input_names(const Graph& g) {
  std::vector<std::string> v;
  for (const Value* in : g.inputs()) v.push_back(in->name);
  return v;
}

std::vector<std::string> node_names(const Graph& g) {
  std::vector<std::string> v;
  for (const auto& n : g.nodes())
    if (!n->name.empty()) v.push_back(n->name);
  return v;
}

Value* find_input(const Graph& g, const std::string& name) {
  for (Value* in : g.inputs())
    if (in->name == name) return in;
  return nullptr;
}

Node* find_node(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes())
    if (n->name == name) return n.get();
  return nullptr;
}

// A value name not used yet in g.
std::string unique_value_name(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 1; g.find_value(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

std::string unique_node_name(const Graph& g, const std::string& base) {
  std::set<std::string> used;
  for (const auto& n : g.nodes()) used.insert(n->name);
  std::string name = base;
  for (int k = 1; used.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

// Whether an If/Loop/Scan body (at any depth) reads `name` from this graph: a
// rename or retype of that value would change what the body sees.
bool captured_by_subgraph(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes()) {
    for (const auto& [attr_name, a] : n->attrs.all()) {
      std::vector<std::shared_ptr<Graph>> subs = a.graphs;
      if (a.g) subs.push_back(a.g);
      for (const auto& sub : subs) {
        if (!sub) continue;
        const Value* v = sub->find_value(name);
        if (v && !v->producer && !v->is_graph_input) return true;
        if (captured_by_subgraph(*sub, name)) return true;
      }
    }
  }
  return false;
}

int default_opset(Graph& g) {
  auto it = g.opsets().find("");
  return it != g.opsets().end() && it->second > 0 ? it->second : 13;
}

Node* add_cast(Graph& g, const std::string& node_name, Value* in, Value* out, DType to) {
  Node* cast = g.add_node(unique_node_name(g, node_name), "Cast", {in}, {out}, "", default_opset(g));
  graph::Attribute a;
  a.kind = graph::Attribute::Kind::kInt;
  a.i = static_cast<int64_t>(to);  // graph DType numbers are ONNX's TensorProto.DataType
  cast->attrs.set("to", a);
  return cast;
}

// Every reader of `from` reads `to` instead.
void move_consumers(Value* from, Value* to) {
  for (Node* c : from->consumers)
    for (Value*& in : c->inputs)
      if (in == from) in = to;
  // A node reading `from` in two slots appears twice in the list, as it will in to's.
  to->consumers.insert(to->consumers.end(), from->consumers.begin(), from->consumers.end());
  from->consumers.clear();
}

bool is_float(DType t) { return graph::dtype_is_float(t); }

// Casts graph output `v` to `to`, keeping the output's name where possible.
Status cast_output(Graph& g, Value* v, DType to, std::vector<std::string>* notes) {
  if (v->type.dtype == to) return Status::Ok();
  if (captured_by_subgraph(g, v->name))
    return Errorf(code::kInvalidParam, "--output_type: output '%s' is also read inside an If/Loop/Scan body, so it "
                  "cannot be cast in place; cast it in the source model instead", v->name.c_str());
  Node* producer = v->producer;
  if (!producer) {
    // A graph input or constant passed straight through: its name stays with
    // it, so the cast result needs a new one.
    Value* w = g.add_value(unique_value_name(g, v->name + "_" + graph::dtype_name(to)),
                           graph::TensorType{to, v->type.shape});
    add_cast(g, "atc_output_cast_" + v->name, v, w, to);
    for (Value*& o : g.outputs())
      if (o == v) o = w;
    v->is_graph_output = false;
    w->is_graph_output = true;
    notes->push_back(strformat("output '%s' passes an input or constant through; its %s copy is named '%s'",
                               v->name.c_str(), graph::dtype_name(to), w->name.c_str()));
    return Status::Ok();
  }
  // The producer now writes an internal value; the Cast writes `v`, so the
  // output keeps its name and position.
  Value* w = g.add_value(unique_value_name(g, v->name + "__atc_before_cast"), v->type);
  for (Value*& o : producer->outputs)
    if (o == v) o = w;
  w->producer = producer;
  v->producer = nullptr;
  move_consumers(v, w);
  add_cast(g, "atc_output_cast_" + v->name, w, v, to);
  v->type.dtype = to;
  return Status::Ok();
}

bool parse_type_word(const std::string& word, DType* out) {
  if (word == "FP32") *out = DType::kFloat32;
  else if (word == "FP16") *out = DType::kFloat16;
  else if (word == "UINT8") *out = DType::kUInt8;
  else return false;
  return true;
}

Status parse_gear_values(const char* option, const std::string& gear_text, std::vector<int64_t>* out) {
  out->clear();
  for (const std::string& item : split(gear_text, ',')) {
    int64_t v = 0;
    if (!parse_int(item, &v) || v <= 0)
      return Errorf(code::kInvalidParam, "--%s: '%s' is not a positive size (in gear '%s')", option, item.c_str(),
                    gear_text.c_str());
    out->push_back(v);
  }
  return Status::Ok();
}

Status check_no_duplicates(const char* option, const std::vector<std::vector<int64_t>>& gears) {
  for (size_t i = 0; i < gears.size(); ++i)
    for (size_t j = i + 1; j < gears.size(); ++j)
      if (gears[i] == gears[j]) {
        std::string s;
        for (int64_t v : gears[i]) s += (s.empty() ? "" : ",") + std::to_string(v);
        return Errorf(code::kInvalidParam, "--%s lists gear %s twice; list each gear once", option, s.c_str());
      }
  return Status::Ok();
}

}  // namespace

Status apply_input_shapes(Graph& g, const std::string& option, const std::vector<ShapeArg>& shapes) {
  for (const ShapeArg& s : shapes) {
    Value* v = find_input(g, s.name);
    if (!v) {
      const std::vector<std::string> names = input_names(g);
      return Errorf(code::kInvalidParam, "--%s: '%s' is not an input of the model; its inputs are %s", option.c_str(),
                    s.name.c_str(), names.empty() ? "(none)" : close_names(s.name, names, 16).c_str());
    }
    if (v->type.has_rank() && static_cast<size_t>(v->type.rank()) != s.dims.size())
      return Errorf(code::kInvalidParam, "--%s: input '%s' has rank %lld (declared %s) but %zu dim(s) were given; "
                    "give one value per dim", option.c_str(), s.name.c_str(), static_cast<long long>(v->type.rank()),
                    v->type.str().c_str(), s.dims.size());
    graph::Shape shape;
    for (size_t i = 0; i < s.dims.size(); ++i) {
      const DimArg& d = s.dims[i];
      if (!d.gear && !d.free) {
        shape.push_back(graph::Dim(d.value));
        continue;
      }
      const graph::Dim* declared = v->type.has_rank() ? &(*v->type.shape)[i] : nullptr;
      shape.push_back(declared && !declared->known() && !declared->symbol.empty() ? *declared : graph::Dim());
    }
    v->type.shape = std::move(shape);
  }
  return Status::Ok();
}

Status build_gears(const std::vector<ShapeArg>& shapes, const GearArgs& args, model::GearSpec* out) {
  *out = model::GearSpec();
  std::vector<const char*> given;
  if (!args.batch.empty()) given.push_back("--dynamic_batch_size");
  if (!args.image_size.empty()) given.push_back("--dynamic_image_size");
  if (!args.dims.empty()) given.push_back("--dynamic_dims");
  if (given.size() > 1)
    return Errorf(code::kInvalidParam, "%s and %s cannot be used together; choose one kind of gear", given[0],
                  given[1]);

  std::vector<model::GearPosition> positions;
  bool ranges = false;
  for (const ShapeArg& s : shapes)
    for (size_t axis = 0; axis < s.dims.size(); ++axis) {
      if (s.dims[axis].gear) positions.push_back({s.name, static_cast<int>(axis)});
      if (s.dims[axis].free) ranges = true;
    }

  if (given.empty()) {
    if (!positions.empty())
      return Errorf(code::kInvalidParam, "--input_shape marks dim %d of input '%s' as -1, which needs a gear option: "
                    "--dynamic_batch_size, --dynamic_image_size or --dynamic_dims (or a range such as 1~16 for a "
                    "dim chosen freely at execution)", positions[0].axis, positions[0].input.c_str());
    return Status::Ok();
  }
  if (ranges)
    return Errorf(code::kInvalidParam, "%s cannot be combined with ranges (lo~hi) in --input_shape; use -1 for the "
                  "gear dims", given[0]);
  if (positions.empty())
    return Errorf(code::kInvalidParam, "%s needs --input_shape with -1 for the dims the gears set, e.g. "
                  "--input_shape=\"input:-1,3,224,224\"", given[0]);

  model::GearSpec spec;
  spec.positions = positions;
  if (!args.batch.empty()) {
    spec.kind = model::GearKind::kBatch;
    for (const auto& p : positions)
      if (p.axis != 0)
        return Errorf(code::kInvalidParam, "--dynamic_batch_size: -1 is allowed only on the batch axis (axis 0), "
                      "but input '%s' has -1 at axis %d; use --dynamic_dims for other dims", p.input.c_str(), p.axis);
    std::vector<int64_t> values;
    OPENACL_RETURN_IF_ERROR(parse_gear_values("dynamic_batch_size", args.batch, &values));
    for (int64_t v : values) spec.gears.push_back({v});
    OPENACL_RETURN_IF_ERROR(check_no_duplicates("dynamic_batch_size", spec.gears));
  } else if (!args.image_size.empty()) {
    spec.kind = model::GearKind::kImageSize;
    for (const ShapeArg& s : shapes) {
      int n = 0;
      for (const DimArg& d : s.dims) n += d.gear ? 1 : 0;
      if (n != 0 && n != 2)
        return Errorf(code::kInvalidParam, "--dynamic_image_size: input '%s' has %d dim(s) set to -1; an image "
                      "input needs exactly two (height and width), e.g. \"%s:1,3,-1,-1\"", s.name.c_str(), n,
                      s.name.c_str());
    }
    for (const std::string& gear : split(args.image_size, ';')) {
      std::vector<int64_t> values;
      OPENACL_RETURN_IF_ERROR(parse_gear_values("dynamic_image_size", gear, &values));
      if (values.size() != 2)
        return Errorf(code::kInvalidParam, "--dynamic_image_size: gear '%s' has %zu value(s); each gear is "
                      "height,width and gears are separated by ';', e.g. \"112,112;224,224\"", gear.c_str(),
                      values.size());
      spec.gears.push_back(values);
    }
    OPENACL_RETURN_IF_ERROR(check_no_duplicates("dynamic_image_size", spec.gears));
  } else {
    spec.kind = model::GearKind::kDims;
    for (const std::string& gear : split(args.dims, ';')) {
      std::vector<int64_t> values;
      OPENACL_RETURN_IF_ERROR(parse_gear_values("dynamic_dims", gear, &values));
      if (values.size() != positions.size())
        return Errorf(code::kInvalidParam, "--dynamic_dims: gear '%s' has %zu value(s) but --input_shape has %zu "
                      "dim(s) set to -1; give one value per -1 dim, in --input_shape order", gear.c_str(),
                      values.size(), positions.size());
      spec.gears.push_back(values);
    }
    OPENACL_RETURN_IF_ERROR(check_no_duplicates("dynamic_dims", spec.gears));
  }
  Status st = spec.validate();
  if (!st.ok()) return Status(code::kInvalidParam, std::string(given[0]) + ": " + st.message());
  *out = std::move(spec);
  return Status::Ok();
}

Status set_out_nodes(Graph& g, const std::vector<OutNode>& outs) {
  std::vector<Value*> chosen;
  for (const OutNode& o : outs) {
    Value* v = nullptr;
    if (o.index < 0) {
      // A tensor name.
      v = g.find_value(o.node);
      if (!v || (!v->producer && !v->is_graph_input)) {
        std::vector<std::string> names = node_names(g);
        return Errorf(code::kInvalidParam, "--out_nodes: '%s' is neither node:index nor a tensor produced in the "
                      "model; close node names: %s", o.node.c_str(),
                      names.empty() ? "(none)" : close_names(o.node, names).c_str());
      }
    } else {
      Node* n = find_node(g, o.node);
      if (!n) {
        std::vector<std::string> names = node_names(g);
        return Errorf(code::kInvalidParam, "--out_nodes: the model has no node '%s'; close names: %s",
                      o.node.c_str(), names.empty() ? "(no named nodes)" : close_names(o.node, names).c_str());
      }
      v = n->output(static_cast<size_t>(o.index));
      if (!v)
        return Errorf(code::kInvalidParam, "--out_nodes: %s has %zu output(s); index %lld does not exist "
                      "(indices start at 0)", n->describe().c_str(), n->outputs.size(),
                      static_cast<long long>(o.index));
    }
    if (std::find(chosen.begin(), chosen.end(), v) != chosen.end())
      return Errorf(code::kInvalidParam, "--out_nodes names output '%s' twice", v->name.c_str());
    chosen.push_back(v);
  }
  for (Value* v : g.outputs()) v->is_graph_output = false;
  g.outputs() = chosen;
  for (Value* v : chosen) v->is_graph_output = true;
  return Status::Ok();
}

Status set_output_types(Graph& g, const std::string& text, std::vector<std::string>* notes) {
  DType global = DType::kUndefined;
  std::vector<std::pair<Value*, DType>> targets;
  if (text.find(':') == std::string::npos) {
    if (!parse_type_word(text, &global))
      return Errorf(code::kInvalidParam, "--output_type: '%s' is not FP32, FP16 or UINT8 (or node:index:TYPE per "
                    "output)", text.c_str());
  } else {
    for (const std::string& entry : split(text, ';')) {
      size_t c2 = entry.rfind(':');
      size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : entry.rfind(':', c2 - 1);
      int64_t idx = 0;
      DType t;
      if (c1 == std::string::npos || !parse_int(entry.substr(c1 + 1, c2 - c1 - 1), &idx) || idx < 0 ||
          !parse_type_word(entry.substr(c2 + 1), &t))
        return Errorf(code::kInvalidParam, "--output_type: entry '%s' is not node:index:TYPE with TYPE FP32, FP16 "
                      "or UINT8, e.g. \"conv1:0:FP16\"", entry.c_str());
      const std::string name = entry.substr(0, c1);
      Node* n = find_node(g, name);
      if (!n) {
        std::vector<std::string> names = node_names(g);
        return Errorf(code::kInvalidParam, "--output_type: the model has no node '%s'; close names: %s",
                      name.c_str(), names.empty() ? "(no named nodes)" : close_names(name, names).c_str());
      }
      Value* v = n->output(static_cast<size_t>(idx));
      if (!v || !v->is_graph_output) {
        std::string outs;
        for (const Value* o : g.outputs()) {
          const Node* p = o->producer;
          if (!p) continue;
          for (size_t k = 0; k < p->outputs.size(); ++k)
            if (p->outputs[k] == o) outs += strformat("%s%s:%zu", outs.empty() ? "" : ", ", p->name.c_str(), k);
        }
        return Errorf(code::kInvalidParam, "--output_type: %s:%lld is not a graph output; the outputs are %s (use "
                      "--out_nodes to choose others)", name.c_str(), static_cast<long long>(idx),
                      outs.empty() ? "(none produced by a node)" : outs.c_str());
      }
      targets.emplace_back(v, t);
    }
  }

  // The global form casts floating-point outputs only, so it needs their types.
  if (global != DType::kUndefined) {
    bool unknown = false;
    for (const Value* v : g.outputs()) unknown |= v->type.dtype == DType::kUndefined;
    // Best effort: types for the outputs whose producers can be inferred; a
    // failure here is reported by optimize() with every other problem.
    if (unknown) (void)graph::infer_shapes(g);
    for (Value* v : g.outputs()) {
      if (v->type.dtype == DType::kUndefined || is_float(v->type.dtype)) {
        targets.emplace_back(v, global);
      } else {
        notes->push_back(strformat("--output_type=%s leaves output '%s' (%s) as it is: it is not floating-point",
                                   text.c_str(), v->name.c_str(), graph::dtype_name(v->type.dtype)));
      }
    }
  }
  std::vector<Value*> done;
  for (auto& [v, t] : targets) {
    if (std::find(done.begin(), done.end(), v) != done.end()) continue;
    OPENACL_RETURN_IF_ERROR(cast_output(g, v, t, notes));
    done.push_back(v);
  }
  return Status::Ok();
}

Status set_input_fp16(Graph& g, const std::string& text, std::vector<std::string>* notes) {
  const std::vector<std::string> names = split(text, ';');
  if (names.empty())
    return Errorf(code::kInvalidParam, "--input_fp16_nodes is empty; write the input names separated by ';'");
  for (const std::string& name : names) {
    Value* v = find_input(g, name);
    if (!v) {
      const std::vector<std::string> all = input_names(g);
      return Errorf(code::kInvalidParam, "--input_fp16_nodes: '%s' is not an input of the model; its inputs are %s",
                    name.c_str(), all.empty() ? "(none)" : close_names(name, all, 16).c_str());
    }
    const DType orig = v->type.dtype;
    if (orig == DType::kFloat16) {
      notes->push_back("--input_fp16_nodes: input '" + name + "' is float16 already");
      continue;
    }
    if (!is_float(orig))
      return Errorf(code::kInvalidParam, "--input_fp16_nodes: input '%s' is %s; only floating-point inputs can be "
                    "fed as float16", name.c_str(), graph::dtype_name(orig));
    if (captured_by_subgraph(g, name))
      return Errorf(code::kInvalidParam, "--input_fp16_nodes: input '%s' is read inside an If/Loop/Scan body, which "
                    "expects %s; convert it in the source model instead", name.c_str(), graph::dtype_name(orig));
    Value* w = g.add_value(unique_value_name(g, name + "__atc_" + graph::dtype_name(orig)), v->type);
    move_consumers(v, w);
    // A graph output that is the input itself becomes the converted value.
    for (Value*& o : g.outputs())
      if (o == v) {
        o = w;
        w->is_graph_output = true;
        v->is_graph_output = false;
        notes->push_back(strformat("output '%s' was input '%s' itself; it is now named '%s'", name.c_str(),
                                   name.c_str(), w->name.c_str()));
      }
    add_cast(g, "atc_input_cast_" + name, v, w, orig);
    v->type.dtype = DType::kFloat16;
  }
  return Status::Ok();
}

}  // namespace openacl::atc
