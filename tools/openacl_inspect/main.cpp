// openacl-inspect MODEL.onnx [--shapes] [--plan] [--json] [--input name:1,3,224,224]...
//
// Loads a model with the ONNX importer, overrides input shapes, runs
// infer_shapes, and prints each node with its input/output types (--shapes,
// the default), the memory plan (--plan), or a machine-readable JSON dump of
// both (--json). Exit status: 0 ok, 1 a step failed (the message says which),
// 2 bad usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "graph/graph.h"
#include "graph/onnx/onnx_import.h"
#include "graph/op_schema.h"
#include "planner/memory_plan.h"

namespace {

using openacl::Status;
namespace graph = openacl::graph;
namespace planner = openacl::planner;

const char kUsage[] =
    "usage: openacl-inspect MODEL.onnx [--shapes] [--plan] [--json] [--input NAME:D0,D1,...]...\n"
    "  --shapes        print each node with its input and output types (default)\n"
    "  --plan          print the memory plan (work and weight arenas)\n"
    "  --json          print a JSON dump instead of text (nodes; the plan with --plan)\n"
    "  --input N:DIMS  set graph input N's shape before inferring shapes, e.g. --input data:1,3,224,224\n"
    "  --alignment B   arena alignment in bytes for --plan (default 64)\n";

struct Args {
  std::string model;
  bool shapes = false, plan = false, json = false;
  size_t alignment = 64;
  std::vector<std::pair<std::string, graph::Shape>> inputs;
};

bool parse_dims(const std::string& text, graph::Shape* out) {
  out->clear();
  if (text.empty()) return true;  // a scalar
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty()) return false;
    char* end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (*end == '\0' && v >= 0) {
      out->push_back(graph::Dim(v));
    } else if (item == "?" || item == "-1") {
      out->push_back(graph::Dim());
    } else if ((item[0] >= 'A' && item[0] <= 'Z') || (item[0] >= 'a' && item[0] <= 'z') || item[0] == '_') {
      out->push_back(graph::Dim::symbolic(item));
    } else {
      return false;
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return true;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "openacl-inspect: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

nlohmann::json shape_json(const graph::TensorType& t) {
  if (!t.shape) return nullptr;
  nlohmann::json dims = nlohmann::json::array();
  for (const graph::Dim& d : *t.shape) {
    if (d.known())
      dims.push_back(d.value);
    else if (!d.symbol.empty())
      dims.push_back(d.symbol);
    else
      dims.push_back(nullptr);
  }
  return dims;
}

nlohmann::json value_json(const graph::Value* v) {
  if (!v) return nullptr;
  nlohmann::json j = {{"name", v->name}, {"dtype", graph::dtype_name(v->type.dtype)}, {"shape", shape_json(v->type)}};
  if (v->constant) j["constant"] = true;
  return j;
}

nlohmann::json buffer_json(const planner::Buffer& b, bool with_steps) {
  nlohmann::json j = {{"value", b.value ? b.value->name : ""}, {"offset", b.offset}, {"bytes", b.bytes}};
  if (with_steps) {
    j["first_use"] = b.first_use;
    j["last_use"] = b.last_use;
    if (b.in_place_of) j["in_place_of"] = b.in_place_of->name;
  }
  return j;
}

std::string type_of(const graph::Value* v) {
  if (!v) return "(omitted)";
  std::string s = v->name + ": " + v->type.str();
  if (v->constant) s += " (constant)";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      size_t n = std::strlen(flag);
      if (arg.size() > n && arg.compare(0, n, flag) == 0 && arg[n] == '=') return argv[i] + n + 1;
      if (arg == flag && i + 1 < argc) return argv[++i];
      return nullptr;
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "--shapes") {
      a.shapes = true;
    } else if (arg == "--plan") {
      a.plan = true;
    } else if (arg == "--json") {
      a.json = true;
    } else if (arg == "--input" || arg.rfind("--input=", 0) == 0) {
      const char* v = value("--input");
      if (!v) return usage_error("--input needs NAME:DIMS");
      std::string spec = v;
      size_t colon = spec.rfind(':');
      graph::Shape shape;
      if (colon == std::string::npos || colon == 0 || !parse_dims(spec.substr(colon + 1), &shape))
        return usage_error("bad --input '" + spec + "': expected NAME:D0,D1,... (dims: integers, '?' or a symbol)");
      a.inputs.emplace_back(spec.substr(0, colon), std::move(shape));
    } else if (arg == "--alignment" || arg.rfind("--alignment=", 0) == 0) {
      const char* v = value("--alignment");
      char* end = nullptr;
      unsigned long long n = v ? std::strtoull(v, &end, 10) : 0;
      if (!v || *end != '\0' || n == 0 || (n & (n - 1)) != 0)
        return usage_error("--alignment needs a power of two");
      a.alignment = static_cast<size_t>(n);
    } else if (!arg.empty() && arg[0] == '-') {
      return usage_error("unknown option '" + arg + "'");
    } else if (a.model.empty()) {
      a.model = arg;
    } else {
      return usage_error("more than one model given ('" + a.model + "', '" + arg + "')");
    }
  }
  if (a.model.empty()) return usage_error("no model given");
  if (!a.shapes && !a.plan) a.shapes = true;

  std::unique_ptr<graph::Graph> g;
  Status st = graph::onnx::import_file(a.model, &g);
  if (!st.ok()) {
    std::fprintf(stderr, "openacl-inspect: cannot load '%s': %s\n", a.model.c_str(), st.message().c_str());
    return 1;
  }
  for (const auto& [name, shape] : a.inputs) {
    graph::Value* target = nullptr;
    for (graph::Value* v : g->inputs())
      if (v->name == name) target = v;
    if (!target) {
      std::string names;
      for (graph::Value* v : g->inputs())
        if (!v->constant) names += (names.empty() ? "" : ", ") + v->name;
      std::fprintf(stderr, "openacl-inspect: --input: the model has no input '%s' (inputs: %s)\n", name.c_str(),
                   names.c_str());
      return 1;
    }
    if (target->type.shape && target->type.shape->size() != shape.size())
      std::fprintf(stderr, "openacl-inspect: warning: input '%s' has rank %lld in the model, overridden with rank %zu\n",
                   name.c_str(), static_cast<long long>(target->type.rank()), shape.size());
    target->type.shape = shape;
  }

  int rc = 0;
  Status shapes_st = graph::infer_shapes(*g);
  if (!shapes_st.ok()) {
    std::fprintf(stderr, "openacl-inspect: shape inference: %s\n", shapes_st.message().c_str());
    rc = 1;
  }
  std::vector<graph::Node*> order;
  Status order_st = g->topological_order(&order);
  if (!order_st.ok()) {
    std::fprintf(stderr, "openacl-inspect: %s\n", order_st.message().c_str());
    return 1;
  }

  planner::MemoryPlan plan;
  Status plan_st;
  if (a.plan) {
    planner::PlanOptions opts;
    opts.alignment = a.alignment;
    plan_st = planner::plan_memory(*g, opts, &plan);
    if (!plan_st.ok()) {
      std::fprintf(stderr, "openacl-inspect: memory plan: %s\n", plan_st.message().c_str());
      if (plan_st.code() == openacl::code::kInvalidParam)
        std::fprintf(stderr, "openacl-inspect: hint: give concrete input shapes with --input NAME:D0,D1,...\n");
      rc = 1;
    }
  }

  if (a.json) {
    nlohmann::json j;
    j["model"] = a.model;
    j["graph"] = g->name;
    nlohmann::json opsets = nlohmann::json::object();
    for (const auto& [domain, version] : g->opsets()) opsets[domain.empty() ? "ai.onnx" : domain] = version;
    j["opsets"] = opsets;
    j["inputs"] = nlohmann::json::array();
    for (graph::Value* v : g->inputs()) j["inputs"].push_back(value_json(v));
    j["outputs"] = nlohmann::json::array();
    for (graph::Value* v : g->outputs()) j["outputs"].push_back(value_json(v));
    j["nodes"] = nlohmann::json::array();
    for (graph::Node* n : order) {
      nlohmann::json jn = {{"name", n->name}, {"op", n->op_type}, {"domain", n->domain}, {"opset", n->opset}};
      jn["inputs"] = nlohmann::json::array();
      for (graph::Value* v : n->inputs) jn["inputs"].push_back(v ? nlohmann::json(v->name) : nlohmann::json(nullptr));
      jn["outputs"] = nlohmann::json::array();
      for (graph::Value* v : n->outputs) jn["outputs"].push_back(value_json(v));
      j["nodes"].push_back(std::move(jn));
    }
    j["shape_inference"] = shapes_st.ok() ? nlohmann::json("ok") : nlohmann::json(shapes_st.message());
    if (a.plan) {
      if (plan_st.ok()) {
        nlohmann::json jp = {{"alignment", plan.alignment},
                             {"work_size", plan.work_size},
                             {"weight_size", plan.weight_size},
                             {"lower_bound", plan.lower_bound},
                             {"ratio", plan.ratio()}};
        jp["work"] = nlohmann::json::array();
        for (const planner::Buffer& b : plan.work) jp["work"].push_back(buffer_json(b, true));
        jp["weights"] = nlohmann::json::array();
        for (const planner::Buffer& b : plan.weights) jp["weights"].push_back(buffer_json(b, false));
        j["plan"] = std::move(jp);
      } else {
        j["plan"] = {{"error", plan_st.message()}};
      }
    }
    std::printf("%s\n", j.dump(2).c_str());
    return rc;
  }

  std::printf("model %s: graph '%s', %zu nodes, %zu values\n", a.model.c_str(), g->name.c_str(), g->nodes().size(),
              g->values().size());
  for (graph::Value* v : g->inputs())
    if (!v->constant) std::printf("  input  %s\n", type_of(v).c_str());
  for (graph::Value* v : g->outputs()) std::printf("  output %s\n", type_of(v).c_str());
  if (a.shapes) {
    std::printf("nodes (execution order):\n");
    for (size_t i = 0; i < order.size(); ++i) {
      const graph::Node* n = order[i];
      std::printf("  %4zu  %s\n", i, n->describe().c_str());
      for (const graph::Value* v : n->inputs) std::printf("          in   %s\n", type_of(v).c_str());
      for (const graph::Value* v : n->outputs) std::printf("          out  %s\n", type_of(v).c_str());
    }
  }
  if (a.plan && plan_st.ok()) std::printf("%s", plan.to_string().c_str());
  return rc;
}
