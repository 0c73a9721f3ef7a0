// capi: who watches a model execution node by node: the dump (acl.json
// `dump`, aclmdlInitDump / aclmdlSetDump) and profiling (op-info subscription,
// collection to files). execution_observer() fans out to whichever watch.
#pragma once

#include <memory>
#include <string>

#include "capi/mdl_registry.h"
#include "model/executor.h"

namespace openacl::capi {

// The observer for one execution of `entry` on `device` (`stream`: the
// aclrtStream it runs on, nullptr for aclmdlExecute), or nullptr when nothing
// watches it (the common case: then execution costs nothing extra). Called on
// the thread that runs the execution, just before it runs; destroyed when the
// execution ends.
std::unique_ptr<model::NodeObserver> execution_observer(const ModelEntry& entry, int device,
                                                        const void* stream = nullptr);

// The two watchers (mdl_dump.cpp, prof_observer.cpp); nullptr when off.
std::unique_ptr<model::NodeObserver> dump_observer(const ModelEntry& entry, int device);
std::unique_ptr<model::NodeObserver> prof_observer(const ModelEntry& entry, int device, const void* stream);

// Model id of single-op executions in profiling output (no model: CANN's
// "invalid" id).
inline constexpr uint32_t kSingleOpModelId = 0xFFFFFFFFu;
// The watcher of one single-op execution (aclopExecute*, aclopExecWithHandle,
// aclopCast): collection to files only (subscriptions are per model);
// nullptr when profiling is off.
std::unique_ptr<model::NodeObserver> single_op_observer(const std::string& op_type, int device, const void* stream);

}  // namespace openacl::capi
