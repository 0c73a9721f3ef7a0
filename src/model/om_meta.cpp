// The .om META section (JSON, documented in om_meta.h) and the JSON dump of
// a whole model (om_to_json, atc --mode=1).
#include "model/om_meta.h"

#include <cstdarg>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "model/om_graph_codec.h"

namespace openacl::model {

namespace {

using graph::Attribute;
using graph::Graph;
using graph::TensorData;
using graph::Value;
using Kind = graph::Attribute::Kind;
using detail::gear_kind_name;
using detail::kMaxGraphDepth;

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

ojson gears_json(const GearSpec& g) {
  ojson j = ojson::object();
  j["kind"] = gear_kind_name(g.kind);
  ojson pos = ojson::array();
  for (const auto& p : g.positions) pos.push_back({{"input", p.input}, {"axis", p.axis}});
  j["positions"] = std::move(pos);
  j["gears"] = g.gears;
  return j;
}

ojson meta_json(const OmMeta& m) {
  ojson j = ojson::object();
  j["producer"] = m.producer;
  j["build_command"] = m.build_command;
  j["soc_version"] = m.soc_version;
  j["precision_mode"] = m.precision_mode;
  j["source"] = m.source;
  j["input_formats"] = m.input_formats;
  if (!m.input_ranges.empty()) {
    ojson r = ojson::object();
    for (const auto& [name, dims] : m.input_ranges) {
      ojson list = ojson::array();
      for (const auto& [lo, hi] : dims) list.push_back({lo, hi});
      r[name] = list;
    }
    j["input_ranges"] = r;
  }
  j["gears"] = gears_json(m.gears);
  if (!m.single_op.empty()) j["single_op"] = ojson::parse(m.single_op, nullptr, /*allow_exceptions=*/false);
  j["work_size"] = m.work_size;
  j["weight_size"] = m.weight_size;
  return j;
}

// Strings are checked as UTF-8 by the JSON writer; bytes that are not are
// replaced (U+FFFD) rather than failing the whole write.
std::string dump(const ojson& j, int indent) { return j.dump(indent, ' ', false, ojson::error_handler_t::replace); }

Status meta_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status meta_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return Errorf(code::kParseModel, "the .om META section is invalid: %s; rebuild the model with atc", buf);
}

// ---------------------------------------------------------------- JSON dump

ojson shape_json(const graph::TensorType& t) {
  if (!t.shape) return nullptr;
  ojson s = ojson::array();
  for (const graph::Dim& d : *t.shape) {
    if (d.known()) s.push_back(d.value);
    else if (!d.symbol.empty()) s.push_back(d.symbol);
    else s.push_back(-1);
  }
  return s;
}

ojson tensor_json(const std::shared_ptr<TensorData>& t) {
  if (!t) return nullptr;
  return {{"dtype", graph::dtype_name(t->dtype)}, {"dims", t->dims}, {"bytes", t->bytes}};
}

ojson graph_json(const Graph& g, int depth);

ojson attribute_json(const Attribute& a, int depth) {
  ojson j = ojson::object();
  j["kind"] = graph::attribute_kind_name(a.kind);
  auto sub = [&](const std::shared_ptr<Graph>& g) -> ojson {
    if (!g) return nullptr;
    if (depth >= kMaxGraphDepth) return "(nested too deep)";
    return graph_json(*g, depth + 1);
  };
  switch (a.kind) {
    case Kind::kUndefined: break;
    case Kind::kFloat: j["value"] = a.f; break;
    case Kind::kInt: j["value"] = a.i; break;
    case Kind::kString: j["value"] = a.s; break;
    case Kind::kTensor: j["value"] = tensor_json(a.t); break;
    case Kind::kGraph: j["value"] = sub(a.g); break;
    case Kind::kFloats: j["value"] = a.floats; break;
    case Kind::kInts: j["value"] = a.ints; break;
    case Kind::kStrings: j["value"] = a.strings; break;
    case Kind::kTensors: {
      ojson arr = ojson::array();
      for (const auto& t : a.tensors) arr.push_back(tensor_json(t));
      j["value"] = std::move(arr);
      break;
    }
    case Kind::kGraphs: {
      ojson arr = ojson::array();
      for (const auto& g : a.graphs) arr.push_back(sub(g));
      j["value"] = std::move(arr);
      break;
    }
  }
  return j;
}

ojson value_json(const Value& v) {
  ojson j = {{"name", v.name}, {"dtype", graph::dtype_name(v.type.dtype)}, {"shape", shape_json(v.type)}};
  return j;
}

ojson graph_json(const Graph& g, int depth) {
  ojson j = ojson::object();
  j["name"] = g.name;
  j["opsets"] = g.opsets();
  ojson ins = ojson::array(), outs = ojson::array();
  for (const Value* v : g.inputs()) ins.push_back(value_json(*v));
  for (const Value* v : g.outputs()) outs.push_back(value_json(*v));
  j["inputs"] = std::move(ins);
  j["outputs"] = std::move(outs);
  ojson consts = ojson::array(), captures = ojson::array();
  for (const auto& v : g.values()) {
    if (v->constant) {
      ojson c = value_json(*v);
      c["bytes"] = v->constant->bytes;
      consts.push_back(std::move(c));
    } else if (!v->producer && !v->is_graph_input && !v->consumers.empty()) {
      captures.push_back(v->name);
    }
  }
  j["constants"] = std::move(consts);
  if (!captures.empty()) j["captures"] = std::move(captures);
  ojson nodes = ojson::array();
  for (const auto& n : g.nodes()) {
    ojson nj = ojson::object();
    nj["name"] = n->name;
    nj["op_type"] = n->op_type;
    if (!n->domain.empty()) nj["domain"] = n->domain;
    nj["opset"] = n->opset;
    ojson ni = ojson::array(), no = ojson::array();
    for (const Value* v : n->inputs) ni.push_back(v ? ojson(v->name) : ojson(""));
    for (const Value* v : n->outputs) no.push_back(v ? ojson(v->name) : ojson(""));
    nj["inputs"] = std::move(ni);
    nj["outputs"] = std::move(no);
    ojson attrs = ojson::object();
    for (const auto& [name, a] : n->attrs.all()) attrs[name] = attribute_json(a, depth);
    if (!attrs.empty()) nj["attributes"] = std::move(attrs);
    nodes.push_back(std::move(nj));
  }
  j["nodes"] = std::move(nodes);
  return j;
}

}  // namespace

namespace detail {

const char* gear_kind_name(GearKind k) {
  switch (k) {
    case GearKind::kBatch: return "batch";
    case GearKind::kImageSize: return "image_size";
    case GearKind::kDims: return "dims";
    default: return "none";
  }
}

std::string meta_to_json(const OmMeta& m) { return dump(meta_json(m), -1); }

Status parse_meta(const uint8_t* p, size_t n, OmMeta* out) {
  json j;
  try {
    j = json::parse(p, p + n);
  } catch (const json::exception& e) {
    return meta_error("not valid JSON (%s)", e.what());
  }
  if (!j.is_object()) return meta_error("not a JSON object");
  OmMeta m;
  auto str = [&](const char* key, std::string* dst) {
    auto it = j.find(key);
    if (it == j.end()) return Status::Ok();
    if (!it->is_string()) return meta_error("\"%s\" is not a string", key);
    *dst = it->get<std::string>();
    return Status::Ok();
  };
  auto size = [&](const char* key, uint64_t* dst) {
    auto it = j.find(key);
    if (it == j.end()) return Status::Ok();
    if (!it->is_number_unsigned()) return meta_error("\"%s\" is not a non-negative integer", key);
    *dst = it->get<uint64_t>();
    return Status::Ok();
  };
  OPENACL_RETURN_IF_ERROR(str("producer", &m.producer));
  OPENACL_RETURN_IF_ERROR(str("build_command", &m.build_command));
  OPENACL_RETURN_IF_ERROR(str("soc_version", &m.soc_version));
  OPENACL_RETURN_IF_ERROR(str("precision_mode", &m.precision_mode));
  OPENACL_RETURN_IF_ERROR(str("source", &m.source));
  OPENACL_RETURN_IF_ERROR(size("work_size", &m.work_size));
  OPENACL_RETURN_IF_ERROR(size("weight_size", &m.weight_size));
  if (auto it = j.find("input_formats"); it != j.end()) {
    if (!it->is_object()) return meta_error("\"input_formats\" is not an object");
    for (auto f = it->begin(); f != it->end(); ++f) {
      if (!f->is_number_integer() || f->get<int64_t>() < INT32_MIN || f->get<int64_t>() > INT32_MAX)
        return meta_error("input format of '%s' is not an integer", f.key().c_str());
      m.input_formats[f.key()] = static_cast<int>(f->get<int64_t>());
    }
  }
  if (auto it = j.find("input_ranges"); it != j.end()) {
    if (!it->is_object()) return meta_error("\"input_ranges\" is not an object");
    for (auto f = it->begin(); f != it->end(); ++f) {
      if (!f->is_array() || f->size() > 128) return meta_error("input ranges of '%s' are not a list", f.key().c_str());
      std::vector<std::pair<int64_t, int64_t>> dims;
      for (const json& d : *f) {
        if (!d.is_array() || d.size() != 2 || !d[0].is_number_integer() || !d[1].is_number_integer())
          return meta_error("an input range of '%s' is not a [min, max] pair", f.key().c_str());
        const int64_t lo = d[0].get<int64_t>(), hi = d[1].get<int64_t>();
        if (lo < 0 || (hi != -1 && hi < lo))
          return meta_error("input range [%lld, %lld] of '%s' is invalid", static_cast<long long>(lo),
                            static_cast<long long>(hi), f.key().c_str());
        dims.emplace_back(lo, hi);
      }
      m.input_ranges[f.key()] = std::move(dims);
    }
  }
  if (auto it = j.find("single_op"); it != j.end()) {
    if (!it->is_object()) return meta_error("\"single_op\" is not an object");
    m.single_op = it->dump();
  }
  if (auto it = j.find("gears"); it != j.end()) {
    const json& g = *it;
    if (!g.is_object()) return meta_error("\"gears\" is not an object");
    auto k = g.find("kind");
    if (k == g.end() || !k->is_string()) return meta_error("\"gears.kind\" is missing or not a string");
    const std::string kind = k->get<std::string>();
    if (kind == "none") m.gears.kind = GearKind::kNone;
    else if (kind == "batch") m.gears.kind = GearKind::kBatch;
    else if (kind == "image_size") m.gears.kind = GearKind::kImageSize;
    else if (kind == "dims") m.gears.kind = GearKind::kDims;
    else return meta_error("gear kind \"%s\" is not one of none, batch, image_size, dims", kind.c_str());
    if (auto ps = g.find("positions"); ps != g.end()) {
      if (!ps->is_array()) return meta_error("\"gears.positions\" is not an array");
      for (const json& p : *ps) {
        if (!p.is_object()) return meta_error("a gear position is not an object");
        auto in = p.find("input");
        auto ax = p.find("axis");
        if (in == p.end() || !in->is_string() || ax == p.end() || !ax->is_number_integer() || ax->get<int64_t>() < 0 ||
            ax->get<int64_t>() > INT32_MAX)
          return meta_error("a gear position needs \"input\" (string) and \"axis\" (integer >= 0)");
        m.gears.positions.push_back({in->get<std::string>(), static_cast<int>(ax->get<int64_t>())});
      }
    }
    if (auto gs = g.find("gears"); gs != g.end()) {
      if (!gs->is_array()) return meta_error("\"gears.gears\" is not an array");
      for (const json& gear : *gs) {
        if (!gear.is_array()) return meta_error("a gear is not an array");
        std::vector<int64_t> vals;
        for (const json& v : gear) {
          if (!v.is_number_integer()) return meta_error("a gear value is not an integer");
          vals.push_back(v.get<int64_t>());
        }
        m.gears.gears.push_back(std::move(vals));
      }
    }
    Status st = m.gears.validate();
    if (!st.ok()) return meta_error("%s", st.message().c_str());
  }
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace detail

std::string om_to_json(const OmModel& model) {
  ojson j = ojson::object();
  j["format"] = format_name(ModelFormat::kOm);
  j["version"] = kOmVersion;
  j["meta"] = meta_json(model.meta);
  j["graph"] = model.graph ? graph_json(*model.graph, 0) : ojson(nullptr);
  return dump(j, 2);
}

}  // namespace openacl::model
