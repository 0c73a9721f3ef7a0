// Runtime configuration: defaults, environment variables, and acl.json.
// Keys and error codes: spec §1.1 and docs/runtime.md "Init and acl.json".
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace openacl {

struct RuntimeConfig {
  int device_count = 2;
  uint64_t device_memory = 16ull << 30;  // per device
  std::string soc_name = "Ascend310P3";
  bool strict = false;
  bool err_msg_process_level = false;  // acl.json err_msg_mode "1"
  int default_device = -1;             // acl.json defaultDevice.default_device
  bool profiler_on = false;            // acl.json profiler.switch (used by the profiling layer)
  std::string profiler_output;
  std::string raw_json;                // the file's content, for later layers (dump, profiler)
};

// Defaults overridden by OPENACL_DEVICE_COUNT / OPENACL_DEVICE_MEMORY /
// OPENACL_SOC_NAME / OPENACL_STRICT. Bad values are logged and ignored.
RuntimeConfig config_from_env();

// Reads acl.json at path into cfg (which holds the env-derived values).
// Cannot open: kInvalidFile; malformed or nested deeper than 10: kParseFile;
// bad values: kInvalidParam. An empty file is accepted.
Status apply_acl_json(const std::string& path, RuntimeConfig& cfg);

// "16G", "512M", "1048576" -> bytes; false on a malformed value.
bool parse_byte_size(const std::string& text, uint64_t* out);

}  // namespace openacl
