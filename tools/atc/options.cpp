#include "options.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <utility>

#include "base/text.h"

namespace openacl::atc {

namespace {

// Options that take a value.
const std::vector<std::string> kValueOptions = {
    "model",         "framework",        "output",          "soc_version",        "input_shape",
    "input_format",  "dynamic_batch_size", "dynamic_image_size", "dynamic_dims",   "input_shape_range",
    "out_nodes",     "output_type",      "input_fp16_nodes", "precision_mode",    "insert_op_conf",
    "log",           "mode",             "om",              "json",               "singleop",
    "weight",        "pack_weights",
};

// ATC options that tune code generation for Ascend devices. They have no
// counterpart on a CPU (our kernels keep source dtypes and layouts anyway), so
// they are accepted, reported and otherwise ignored, which lets existing
// conversion scripts run unchanged.
const std::vector<std::string> kIgnoredOptions = {
    "op_select_implmode", "optypelist_for_implmode", "buffer_optimize",      "enable_small_channel",
    "fusion_switch_file", "host_env_os",             "host_env_cpu",         "disable_reuse_memory",
    "enable_compress_weight", "compress_weight_conf", "keep_dtype",          "op_debug_level",
    "enable_scope_fusion_passes", "op_compiler_cache_mode", "op_compiler_cache_dir", "debug_dir",
    "is_input_adjust_hw_layout", "is_output_adjust_hw_layout", "modify_mixlist", "allow_hf32",
    "virtual_type",       "status_check",            "op_precision_mode",    "precision_mode_v2",
};

const std::vector<std::string> kFlagOptions = {"help", "h", "version"};

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:,+@%") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}


std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// One dim of a shape option. `gear_minus_one`: -1 is a gear dim (input_shape)
// rather than a free dim (input_shape_range).
Status parse_dim(const std::string& option, const std::string& entry, const std::string& text, bool gear_minus_one,
                 DimArg* out) {
  const std::string t = trim(text);
  size_t tilde = t.find('~');
  int64_t v = 0;
  if (tilde != std::string::npos) {
    int64_t lo = 0, hi = 0;
    if (!parse_int(trim(t.substr(0, tilde)), &lo) || !parse_int(trim(t.substr(tilde + 1)), &hi) || lo < 0 ||
        (hi != -1 && hi < lo))
      return Errorf(code::kInvalidParam, "--%s: dim '%s' in '%s' is not a valid range; write lo~hi with 0 <= lo <= "
                    "hi (hi -1 for no upper bound), e.g. 1~16", option.c_str(), t.c_str(), entry.c_str());
    out->free = true;
    out->lo = lo;
    out->hi = hi;
    return Status::Ok();
  }
  if (!parse_int(t, &v) || v < -1)
    return Errorf(code::kInvalidParam, "--%s: dim '%s' in '%s' is not a size; use a number >= 0, -1 for a dynamic "
                  "dim, or lo~hi for a range", option.c_str(), t.c_str(), entry.c_str());
  if (v == -1) {
    if (gear_minus_one) out->gear = true;
    else out->free = true;
    out->lo = 0;
    out->hi = -1;
    return Status::Ok();
  }
  out->value = v;
  return Status::Ok();
}

Status check_unique(const std::string& option, const std::vector<ShapeArg>& shapes) {
  for (size_t i = 0; i < shapes.size(); ++i)
    for (size_t j = i + 1; j < shapes.size(); ++j)
      if (shapes[i].name == shapes[j].name)
        return Errorf(code::kInvalidParam, "--%s names input '%s' twice; give each input once", option.c_str(),
                      shapes[i].name.c_str());
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& known_options() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v = kValueOptions;
    v.insert(v.end(), kIgnoredOptions.begin(), kIgnoredOptions.end());
    v.insert(v.end(), kFlagOptions.begin(), kFlagOptions.end());
    return v;
  }();
  return all;
}

std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::numeric_limits<size_t>::max();
  for (const std::string& c : candidates) {
    size_t d = edit_distance(word, c);
    // A candidate that contains the word (or the reverse) is a strong hint.
    if (c.find(word) != std::string::npos || word.find(c) != std::string::npos) d = std::min<size_t>(d, 1);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string close_names(const std::string& word, const std::vector<std::string>& candidates, size_t limit) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& c : candidates) {
    size_t d = edit_distance(word, c);
    if (c.find(word) != std::string::npos || word.find(c) != std::string::npos) d = std::min<size_t>(d, 1);
    scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string s;
  for (size_t i = 0; i < scored.size() && i < limit; ++i) s += (i ? ", '" : "'") + scored[i].second + "'";
  if (scored.size() > limit) s += strformat(" (%zu more)", scored.size() - limit);
  return s;
}

bool parse_int(const std::string& text, int64_t* out) {
  if (text.empty()) return false;
  size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) return false;
  for (size_t k = i; k < text.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(text[k]))) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return false;
  *out = v;
  return true;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t p = 0;
  while (p <= text.size()) {
    size_t q = text.find(sep, p);
    if (q == std::string::npos) q = text.size();
    std::string piece = trim(text.substr(p, q - p));
    if (!piece.empty()) parts.push_back(piece);
    p = q + 1;
  }
  return parts;
}

Status parse_args(int argc, char** argv, Options* out) {
  *out = Options();
  out->command_line = "atc";
  for (int i = 1; i < argc; ++i) out->command_line += " " + shell_quote(argv[i]);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-')
      return Errorf(code::kInvalidParam, "unexpected argument '%s': every atc option has the form --name=value "
                    "(e.g. --model=%s)", arg.c_str(), arg.c_str());
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string name = body, value;
    bool has_value = false;
    size_t eq = body.find('=');
    if (eq != std::string::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    if (contains(kFlagOptions, name)) {
      bool on = true;
      if (has_value) {
        if (value == "true" || value == "1") on = true;
        else if (value == "false" || value == "0") on = false;
        else return Errorf(code::kInvalidParam, "--%s takes no value (got '%s')", name.c_str(), value.c_str());
      }
      if (name == "version") out->version = on;
      else out->help = on;
      continue;
    }
    const bool ignored = contains(kIgnoredOptions, name);
    if (!contains(kValueOptions, name) && !ignored) {
      std::string near = nearest_name(name, known_options());
      const std::string dashes = arg.substr(0, arg.size() - body.size());
      return Errorf(code::kInvalidParam, "unknown option '%s%s'%s; see atc --help for the options", dashes.c_str(),
                    name.c_str(),
                    near.empty() ? "" : strformat(" (did you mean --%s?)", near.c_str()).c_str());
    }
    if (!has_value) {
      // `--name value`: the next argument, unless it is itself an option.
      if (i + 1 >= argc || std::string(argv[i + 1]).rfind("--", 0) == 0)
        return Errorf(code::kInvalidParam, "option --%s needs a value: --%s=VALUE", name.c_str(), name.c_str());
      value = argv[++i];
    }
    if (ignored) {
      if (!contains(out->ignored, name)) out->ignored.push_back(name);
      continue;
    }
    out->values[name] = value;
  }
  return Status::Ok();
}

Status parse_input_shape(const std::string& text, std::vector<ShapeArg>* out) {
  out->clear();
  for (const std::string& entry : split(text, ';')) {
    size_t colon = entry.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return Errorf(code::kInvalidParam, "--input_shape: entry '%s' is not name:dims; write e.g. "
                    "\"input:1,3,224,224;input2:1,10\"", entry.c_str());
    ShapeArg s;
    s.name = trim(entry.substr(0, colon));
    for (const std::string& d : split(entry.substr(colon + 1), ',')) {
      DimArg dim;
      OPENACL_RETURN_IF_ERROR(parse_dim("input_shape", entry, d, /*gear_minus_one=*/true, &dim));
      s.dims.push_back(dim);
    }
    out->push_back(std::move(s));
  }
  if (out->empty())
    return Errorf(code::kInvalidParam, "--input_shape is empty; write e.g. \"input:1,3,224,224\"");
  return check_unique("input_shape", *out);
}

Status parse_input_shape_range(const std::string& text, std::vector<ShapeArg>* out) {
  out->clear();
  for (const std::string& entry : split(text, ';')) {
    size_t open = entry.find('[');
    size_t close = entry.rfind(']');
    size_t colon = open == std::string::npos ? std::string::npos : entry.rfind(':', open);
    if (open == std::string::npos || close == std::string::npos || close < open || colon == std::string::npos ||
        colon == 0 || !trim(entry.substr(close + 1)).empty())
      return Errorf(code::kInvalidParam, "--input_shape_range: entry '%s' is not name:[dims]; write e.g. "
                    "\"input:[1~16,3,224,224]\"", entry.c_str());
    ShapeArg s;
    s.name = trim(entry.substr(0, colon));
    for (const std::string& d : split(entry.substr(open + 1, close - open - 1), ',')) {
      DimArg dim;
      OPENACL_RETURN_IF_ERROR(parse_dim("input_shape_range", entry, d, /*gear_minus_one=*/false, &dim));
      s.dims.push_back(dim);
    }
    out->push_back(std::move(s));
  }
  if (out->empty())
    return Errorf(code::kInvalidParam, "--input_shape_range is empty; write e.g. \"input:[1~16,3,224,224]\"");
  return check_unique("input_shape_range", *out);
}

Status parse_out_nodes(const std::string& option, const std::string& text, std::vector<OutNode>* out) {
  out->clear();
  for (const std::string& entry : split(text, ';')) {
    OutNode o;
    size_t colon = entry.rfind(':');
    int64_t idx = 0;
    if (colon != std::string::npos && parse_int(trim(entry.substr(colon + 1)), &idx)) {
      if (idx < 0)
        return Errorf(code::kInvalidParam, "--%s: output index %lld in '%s' is negative; indices start at 0",
                      option.c_str(), static_cast<long long>(idx), entry.c_str());
      o.node = trim(entry.substr(0, colon));
      o.index = idx;
    } else {
      o.node = entry;  // a tensor name
    }
    if (o.node.empty())
      return Errorf(code::kInvalidParam, "--%s: entry '%s' has no node name; write node:index", option.c_str(),
                    entry.c_str());
    out->push_back(std::move(o));
  }
  if (out->empty())
    return Errorf(code::kInvalidParam, "--%s is empty; write e.g. \"node:0;node2:1\"", option.c_str());
  return Status::Ok();
}

}  // namespace openacl::atc
