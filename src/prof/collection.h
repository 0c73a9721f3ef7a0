// prof: a collection to files (aclprofInit / Start / Stop / Finalize, acl.json
// `profiler`, the openacl-msprof wrapper).
//
// Events are kept in memory while a collection runs (at most 4M task and 4M
// API events; beyond that they are counted as dropped and the files say so)
// and written when it stops: one PROF_* folder per stop (output.h, schema in
// docs/profiling.md). Task events are kept for the devices started only; API
// events are process-wide.
//
// Thread-safety: every function may be called from any thread. record_*()
// are called by executing threads and API calls concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "prof/trace.h"

namespace openacl::prof {

// aclprofInit: where PROF_* folders go. Creates the folder (kInvalidParam
// naming it when that fails).
Status collection_init(const std::string& dir);
bool collection_initialized();
// The folder of collection_init ("" when none).
std::string collection_dir();
// Starts collecting `what` (kCollect* bits) for `devices`. false (and
// *busy = the device) when one of them is collecting already.
bool collection_start(const std::vector<uint32_t>& devices, uint32_t what, uint32_t* busy);
// true when every device of `devices` is collecting.
bool collection_running(const std::vector<uint32_t>& devices);
bool collection_any_running();
// Stops `devices` and writes their events (and the API events so far) into a
// new PROF_* folder under the init folder; *prof_dir receives its path.
Status collection_stop(const std::vector<uint32_t>& devices, std::string* prof_dir);
// aclprofFinalize / aclFinalize: stops what still runs (writing it) and forgets
// the folder. Returns the first write error, if any.
Status collection_finalize(std::string* prof_dir = nullptr);

void record_api(const ApiEvent& e) noexcept;
void record_task(TaskEvent&& e) noexcept;
// msproftx annotations: kept when the collection asked for kCollectTx.
void record_mark(MarkEvent&& e) noexcept;
// Training steps (aclprofGetStepTimestamp): kept by any running collection.
void record_step(MarkEvent&& e) noexcept;

}  // namespace openacl::prof
