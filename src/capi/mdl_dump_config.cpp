// The `dump` section of acl.json / aclmdlSetDump files (spec §1.1, compat-notes §4).
#include <unistd.h>

#include <filesystem>
#include <initializer_list>

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "capi/mdl_dump.h"

namespace openacl::capi {

namespace {

using nlohmann::json;

std::string allowed_list(std::initializer_list<const char*> values) {
  std::string s;
  for (const char* v : values) {
    if (!s.empty()) s += ", ";
    s += '"';
    s += v;
    s += '"';
  }
  return s;
}

// A string key whose value must be one of `values`; *out gets its index. Absent: *out untouched.
Status enum_key(const json& sec, const char* key, std::initializer_list<const char*> values,
                const std::string& source, int* out) {
  if (!sec.contains(key)) return Status::Ok();
  const json& v = sec[key];
  if (v.is_string()) {
    int i = 0;
    for (const char* allowed : values) {
      if (v.get<std::string>() == allowed) {
        *out = i;
        return Status::Ok();
      }
      ++i;
    }
  }
  return Errorf(code::kInvalidDumpConfig, "%s: dump.%s is %s; allowed values: %s", source.c_str(), key,
                v.dump().c_str(), allowed_list(values).c_str());
}

Status check_dump_path(const json& sec, const std::string& source, std::string* out) {
  if (!sec.contains("dump_path"))
    return Errorf(code::kInvalidDumpConfig,
                  "%s: dump.dump_path is missing; a model dump needs an existing writable folder there",
                  source.c_str());
  const json& v = sec["dump_path"];
  if (!v.is_string() || v.get<std::string>().empty())
    return Errorf(code::kInvalidDumpConfig, "%s: dump.dump_path is %s; pass the path of an existing writable folder",
                  source.c_str(), v.dump().c_str());
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(v.get<std::string>(), ec);
  if (ec || !std::filesystem::is_directory(p, ec))
    return Errorf(code::kInvalidDumpConfig, "%s: dump.dump_path '%s' is not an existing folder; create it first",
                  source.c_str(), v.get<std::string>().c_str());
  if (::access(p.c_str(), W_OK | X_OK) != 0)
    return Errorf(code::kInvalidDumpConfig, "%s: dump.dump_path '%s' is not writable; pass a folder you can write to",
                  source.c_str(), v.get<std::string>().c_str());
  *out = p.lexically_normal().string();
  while (out->size() > 1 && out->back() == '/') out->pop_back();
  return Status::Ok();
}

Status parse_dump_list(const json& sec, const std::string& source, DumpConfig* cfg) {
  if (!sec.contains("dump_list")) return Status::Ok();
  const json& list = sec["dump_list"];
  if (!list.is_array())
    return Errorf(code::kInvalidDumpConfig,
                  "%s: dump.dump_list must be a list of {\"model_name\": str, \"layer\": [op names]}", source.c_str());
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    if (!e.is_object())
      return Errorf(code::kInvalidDumpConfig,
                    "%s: dump.dump_list[%zu] is %s; each entry must be {\"model_name\": str, \"layer\": [op names]}",
                    source.c_str(), i, e.dump().c_str());
    if (e.contains("watcher_nodes"))
      OACL_WARN("%s: dump.dump_list[%zu].watcher_nodes ignored: the watcher dump scene is not supported",
                source.c_str(), i);
    if (!e.contains("model_name")) {
      // `[{}]` (with dump_op_switch "on": single-op dump only) lists no model.
      if (e.contains("layer"))
        return Errorf(code::kInvalidDumpConfig, "%s: dump.dump_list[%zu] has \"layer\" but no \"model_name\"",
                      source.c_str(), i);
      continue;
    }
    const json& name = e["model_name"];
    if (!name.is_string() || name.get<std::string>().empty())
      return Errorf(code::kInvalidDumpConfig,
                    "%s: dump.dump_list[%zu].model_name is %s; pass the model's name (its graph name)",
                    source.c_str(), i, name.dump().c_str());
    std::set<std::string> layers;
    bool all_ops = true;
    if (e.contains("layer")) {
      const json& l = e["layer"];
      if (!l.is_array())
        return Errorf(code::kInvalidDumpConfig, "%s: dump.dump_list[%zu].layer must be a list of op names",
                      source.c_str(), i);
      for (size_t k = 0; k < l.size(); ++k) {
        if (!l[k].is_string() || l[k].get<std::string>().empty())
          return Errorf(code::kInvalidDumpConfig, "%s: dump.dump_list[%zu].layer[%zu] is %s; pass an op name",
                        source.c_str(), i, k, l[k].dump().c_str());
        layers.insert(l[k].get<std::string>());
      }
      // An empty layer list dumps every op, like an absent one.
      all_ops = layers.empty();
    }
    const std::string key = name.get<std::string>();
    auto it = cfg->models.find(key);
    if (it == cfg->models.end()) {
      cfg->models.emplace(key, all_ops ? std::set<std::string>{} : std::move(layers));
    } else if (!it->second.empty()) {  // listed twice: the union (every op wins)
      if (all_ops) it->second.clear();
      else it->second.insert(layers.begin(), layers.end());
    }
  }
  return Status::Ok();
}

}  // namespace

Status parse_dump_json(const std::string& text, const std::string& source, bool* has_section, DumpConfig* out) {
  *has_section = false;
  *out = DumpConfig{};
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return Status::Ok();
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return Errorf(code::kParseFile, "%s is not valid JSON: %s", source.c_str(), e.what());
  }
  if (!doc.is_object()) return Errorf(code::kParseFile, "%s must hold a JSON object", source.c_str());
  if (!doc.contains("dump")) return Status::Ok();
  *has_section = true;
  const json& sec = doc["dump"];
  if (!sec.is_object())
    return Errorf(code::kInvalidDumpConfig, "%s: \"dump\" must be an object with dump_path, dump_list, ...",
                  source.c_str());
  DumpConfig cfg;
  int mode = 0;
  OPENACL_RETURN_IF_ERROR(enum_key(sec, "dump_mode", {"output", "input", "all"}, source, &mode));
  cfg.mode = static_cast<DumpMode>(mode);
  int data = 0;
  OPENACL_RETURN_IF_ERROR(enum_key(sec, "dump_data", {"tensor", "stats"}, source, &data));
  cfg.data = static_cast<DumpData>(data);
  int op_switch = 0;
  OPENACL_RETURN_IF_ERROR(enum_key(sec, "dump_op_switch", {"off", "on"}, source, &op_switch));
  cfg.op_switch = op_switch == 1;
  int level = 0;
  OPENACL_RETURN_IF_ERROR(enum_key(sec, "dump_level", {"all", "op", "kernel"}, source, &level));
  int scene = -1;
  OPENACL_RETURN_IF_ERROR(enum_key(sec, "dump_scene",
                                   {"aic_err_brief_dump", "aic_err_norm_dump", "aic_err_detail_dump",
                                    "lite_exception", "watcher"},
                                   source, &scene));
  if (scene >= 0)
    OACL_WARN("%s: dump.dump_scene %s accepted but not supported (no exception or watcher dumps on the CPU)",
              source.c_str(), sec["dump_scene"].dump().c_str());
  int debug = 0;
  OPENACL_RETURN_IF_ERROR(enum_key(sec, "dump_debug", {"off", "on"}, source, &debug));
  if (debug == 1)
    OACL_WARN("%s: dump.dump_debug \"on\" accepted but not supported (no overflow detection on the CPU)",
              source.c_str());
  if (sec.contains("dump_kernel_data"))
    OACL_WARN("%s: dump.dump_kernel_data accepted but not supported (no Ascend C kernels run)", source.c_str());
  OPENACL_RETURN_IF_ERROR(parse_dump_list(sec, source, &cfg));
  if (cfg.model_dump() || cfg.op_switch) {
    OPENACL_RETURN_IF_ERROR(check_dump_path(sec, source, &cfg.path));
  } else if (scene < 0 && debug == 0) {
    OACL_WARN("%s: the dump section lists no model (dump_list) and dump_op_switch is not \"on\": nothing is dumped",
              source.c_str());
  }
  if (cfg.op_switch)
    OACL_INFO("%s: dump_op_switch \"on\" recorded; single-operator dumps arrive with acl.op", source.c_str());
  *out = std::move(cfg);
  return Status::Ok();
}

}  // namespace openacl::capi
