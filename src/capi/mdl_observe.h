// capi: who watches a model execution node by node. Today the dump
// (acl.json `dump`, aclmdlInitDump / aclmdlSetDump); profiling joins later.
#pragma once

#include <memory>

#include "capi/mdl_registry.h"
#include "model/executor.h"

namespace openacl::capi {

// The observer for one execution of `entry` on `device`, or nullptr when
// nothing watches it (the common case: then execution costs nothing extra).
// Called on the thread that runs the execution, just before it runs.
std::unique_ptr<model::NodeObserver> execution_observer(const ModelEntry& entry, int device);

}  // namespace openacl::capi
