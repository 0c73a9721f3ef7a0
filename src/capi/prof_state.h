// capi internals of profiling shared by prof_collect.cpp, prof_subscribe.cpp
// and acl_init.cpp: argument checks and the ordering rules between the two
// ways to profile (acl_prof.h).
#pragma once

#include "base/status.h"

namespace openacl::capi {

// kInvalidParam unless `value` is an aclprofAicoreMetrics value.
Status check_aicore_metrics(int value, const char* name);
// ACL_ERROR_PROF_API_CONFLICT when a collection (aclprofInit, acl.json
// profiler, openacl-msprof) is set up: subscriptions cannot be mixed with it.
Status check_no_collection(const char* api);

// aclInit: starts a collection for every device when acl.json's profiler
// section says "switch": "on" or OPENACL_PROFILING_OUTPUT names a folder (the
// openacl-msprof wrapper sets it). A bad folder fails aclInit with
// ACL_ERROR_INVALID_PROFILING_CONFIG.
Status prof_from_config();
// aclFinalize: ends every subscription (flushing and closing their pipes) and
// writes what a collection still holds.
void prof_shutdown();

}  // namespace openacl::capi
