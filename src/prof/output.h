// prof: the files of one stopped collection, in CANN's layout (compat-notes §3;
// schema version and columns in docs/profiling.md):
//
//   PROF_<yyyymmddHHMMSSmmm>_<pid>_<n>/
//     device_<d>/summary/op_summary_<d>_1.csv     one row per executed node
//     device_<d>/summary/op_statistic_<d>_1.csv   per op type
//     host/summary/api_statistic_1.csv            per acl* function
//     timeline/msprof_<yyyymmddHHMMSS>.json       Chrome trace (Perfetto)
//
// Times are steady-clock microseconds with three decimals.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "prof/trace.h"

namespace openacl::prof {

inline constexpr const char* kSchemaVersion = "openacl-prof-1";

struct CollectedData {
  std::vector<uint32_t> devices;
  std::vector<ApiEvent> api;
  std::vector<TaskEvent> tasks;
  std::vector<MarkEvent> marks;  // msproftx
  uint64_t api_dropped = 0;
  uint64_t tasks_dropped = 0;
};

// Writes one PROF_* folder under `dir`; kWriteFile naming the path on failure.
Status write_collection(const std::string& dir, const CollectedData& data, std::string* prof_dir);

}  // namespace openacl::prof
