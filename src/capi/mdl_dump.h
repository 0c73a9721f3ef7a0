// capi internals of the model dump (spec §1.1 `dump` keys, §3.8; compat-notes
// §4; docs/models.md "Dump").
//
// A dump is configured by one of two sources, never both at once:
//  - acl.json's `dump` section, read at aclInit (dump_from_acl_json) and ended
//    by aclFinalize (dump_reset);
//  - aclmdlInitDump, then aclmdlSetDump(file) (each Set replaces the previous
//    configuration), ended by aclmdlFinalizeDump.
// While a configuration with a non-empty dump_list is active, every execution
// of a listed model (matched by ModelInfo::name, the graph name) writes the
// tensors of its selected ops under
//   {dump_path}/{time}/{device}/{model_name}/{model_id}/{index}/
// (see mdl_dump_write.h for the file names and formats).
//
// Thread-safety: every function may be called from any thread; executions on
// several threads dump at once (one observer per execution; the per-model
// execution counters are atomic under the session).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "base/status.h"

namespace openacl::capi {

enum class DumpMode { kOutput, kInput, kAll };
enum class DumpData { kTensor, kStats };

// One parsed `dump` section.
struct DumpConfig {
  std::string path;  // absolute, an existing writable folder; "" when no model dump
  // model name -> layers (op names); an empty set means every op.
  std::map<std::string, std::set<std::string>> models;
  DumpMode mode = DumpMode::kOutput;
  DumpData data = DumpData::kTensor;
  bool op_switch = false;  // dump_op_switch "on": single-op dump (acl.op; recorded only)
  bool model_dump() const { return !models.empty(); }
};

// Parses the `dump` object of a JSON document (acl.json or an aclmdlSetDump
// file; `source` names it in messages). *has_section: whether the document has
// a `dump` key. kParseFile for text that is not a JSON object;
// kInvalidDumpConfig naming the key and the allowed values for a bad value,
// or for a missing/unusable dump_path when a model or single-op dump is asked
// for. Unknown keys are ignored; the scenes OpenACL does not run (dump_scene,
// dump_debug, dump_kernel_data, watcher_nodes) are accepted with a log note.
Status parse_dump_json(const std::string& text, const std::string& source, bool* has_section, DumpConfig* out);

// aclInit: applies the `dump` section of the acl.json text (`raw_json` of the
// runtime config; "" = no file). No section: nothing happens.
Status dump_from_acl_json(const std::string& raw_json);
// aclFinalize: ends any dump (both sources) and forgets aclmdlInitDump.
void dump_reset();
// dump_op_switch of the active configuration (for single-op execution).
bool single_op_dump_enabled();

}  // namespace openacl::capi
