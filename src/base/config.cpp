#include "base/config.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/log.h"

namespace openacl {

namespace {

constexpr int kMaxNesting = 10;
constexpr int kMaxDevices = 64;

bool parse_int(const std::string& text, long long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0') return false;
  *out = v;
  return true;
}

// CANN counts '{' and '[' nesting separately, each limited to 10 levels.
bool nesting_within_limit(const std::string& text) {
  int braces = 0, brackets = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '{': if (++braces > kMaxNesting) return false; break;
      case '}': --braces; break;
      case '[': if (++brackets > kMaxNesting) return false; break;
      case ']': --brackets; break;
      default: break;
    }
  }
  return true;
}

// Reads a value that CANN documents as a decimal string; numbers are tolerated.
bool json_decimal(const nlohmann::json& v, long long* out) {
  if (v.is_number_integer()) {
    *out = v.get<long long>();
    return true;
  }
  return v.is_string() && parse_int(v.get<std::string>(), out);
}

Status apply_openacl_section(const nlohmann::json& sec, RuntimeConfig& cfg) {
  if (!sec.is_object()) return Errorf(code::kInvalidParam, "acl.json: \"openacl\" must be an object");
  if (sec.contains("device_count")) {
    long long n = 0;
    if (!json_decimal(sec["device_count"], &n) || n < 1 || n > kMaxDevices)
      return Errorf(code::kInvalidParam, "acl.json: openacl.device_count must be 1..%d", kMaxDevices);
    cfg.device_count = static_cast<int>(n);
  }
  if (sec.contains("device_memory")) {
    const auto& v = sec["device_memory"];
    uint64_t bytes = 0;
    bool ok = v.is_number_unsigned() ? (bytes = v.get<uint64_t>(), true)
                                     : (v.is_string() && parse_byte_size(v.get<std::string>(), &bytes));
    if (!ok || bytes == 0)
      return Errorf(code::kInvalidParam,
                    "acl.json: openacl.device_memory must be a byte count like \"16G\" or \"512M\"");
    cfg.device_memory = bytes;
  }
  if (sec.contains("soc_name")) {
    if (!sec["soc_name"].is_string() || sec["soc_name"].get<std::string>().empty())
      return Errorf(code::kInvalidParam, "acl.json: openacl.soc_name must be a non-empty string");
    cfg.soc_name = sec["soc_name"].get<std::string>();
  }
  if (sec.contains("strict")) {
    const auto& v = sec["strict"];
    if (v.is_boolean()) cfg.strict = v.get<bool>();
    else if (v.is_string() && (v == "0" || v == "1")) cfg.strict = v == "1";
    else return Errorf(code::kInvalidParam, "acl.json: openacl.strict must be \"0\" or \"1\"");
  }
  return Status::Ok();
}

}  // namespace

bool parse_byte_size(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0) return false;
  uint64_t value = std::strtoull(text.substr(0, pos).c_str(), nullptr, 10);
  std::string suffix = text.substr(pos);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  unsigned shift = 0;
  if (suffix.empty()) shift = 0;
  else if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M" || suffix == "m") shift = 20;
  else if (suffix == "G" || suffix == "g") shift = 30;
  else if (suffix == "T" || suffix == "t") shift = 40;
  else return false;
  if (shift && value > (UINT64_MAX >> shift)) return false;
  *out = value << shift;
  return true;
}

RuntimeConfig config_from_env() {
  RuntimeConfig cfg;
  if (const char* s = std::getenv("OPENACL_DEVICE_COUNT")) {
    long long n = 0;
    if (parse_int(s, &n) && n >= 1 && n <= kMaxDevices) cfg.device_count = static_cast<int>(n);
    else OACL_WARN("OPENACL_DEVICE_COUNT=%s ignored: expected 1..%d", s, kMaxDevices);
  }
  if (const char* s = std::getenv("OPENACL_DEVICE_MEMORY")) {
    uint64_t bytes = 0;
    if (parse_byte_size(s, &bytes) && bytes > 0) cfg.device_memory = bytes;
    else OACL_WARN("OPENACL_DEVICE_MEMORY=%s ignored: expected bytes or a K/M/G/T suffix", s);
  }
  if (const char* s = std::getenv("OPENACL_SOC_NAME"); s && *s) cfg.soc_name = s;
  if (const char* s = std::getenv("OPENACL_STRICT")) cfg.strict = (s[0] == '1');
  return cfg;
}

Status apply_acl_json(const std::string& path, RuntimeConfig& cfg) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Errorf(code::kInvalidFile, "cannot open config file '%s'; pass an existing acl.json or \"\"",
                         path.c_str());
  std::stringstream buf;
  buf << in.rdbuf();
  std::string text = buf.str();
  bool blank = text.find_first_not_of(" \t\r\n") == std::string::npos;
  if (blank) return Status::Ok();
  if (!nesting_within_limit(text))
    return Errorf(code::kParseFile, "config file '%s' nests objects or arrays deeper than %d levels",
                  path.c_str(), kMaxNesting);
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return Errorf(code::kParseFile, "config file '%s' is not valid JSON: %s", path.c_str(), e.what());
  }
  if (!doc.is_object()) return Errorf(code::kParseFile, "config file '%s' must hold a JSON object", path.c_str());
  cfg.raw_json = text;

  if (doc.contains("err_msg_mode")) {
    const auto& v = doc["err_msg_mode"];
    if (!(v.is_string() && (v == "0" || v == "1")))
      return Errorf(code::kInvalidParam, "acl.json: err_msg_mode must be \"0\" (thread) or \"1\" (process)");
    cfg.err_msg_process_level = v == "1";
  }
  if (doc.contains("defaultDevice")) {
    const auto& sec = doc["defaultDevice"];
    if (!sec.is_object()) return Errorf(code::kInvalidParam, "acl.json: defaultDevice must be an object");
    if (sec.contains("default_device")) {
      long long id = -1;
      if (!json_decimal(sec["default_device"], &id) || id < 0)
        return Errorf(code::kInvalidParam, "acl.json: defaultDevice.default_device must be a device id string");
      cfg.default_device = static_cast<int>(id);
    }
  }
  if (doc.contains("acl_graph")) {
    const auto& sec = doc["acl_graph"];
    if (sec.is_object() && sec.contains("event_mode")) {
      const auto& v = sec["event_mode"];
      if (!(v.is_string() && (v == "0" || v == "1")))
        return Errorf(code::kInvalidParam, "acl.json: acl_graph.event_mode must be \"0\" or \"1\"");
    }
  }
  if (doc.contains("profiler")) {
    const auto& sec = doc["profiler"];
    if (sec.is_object()) {
      cfg.profiler_on = sec.contains("switch") && sec["switch"] == "on";
      if (sec.contains("output") && sec["output"].is_string()) cfg.profiler_output = sec["output"].get<std::string>();
    }
  }
  if (doc.contains("openacl")) OPENACL_RETURN_IF_ERROR(apply_openacl_section(doc["openacl"], cfg));
  if (cfg.default_device >= cfg.device_count)
    return Errorf(code::kInvalidParam, "acl.json: defaultDevice.default_device %d but only %d devices exist",
                  cfg.default_device, cfg.device_count);
  for (auto it = doc.begin(); it != doc.end(); ++it)
    OACL_DEBUG("acl.json key '%s' read", it.key().c_str());
  return Status::Ok();
}

}  // namespace openacl
