// Method tables of the `acl` module, one per source file, each ending with a
// null sentinel. module.cpp adds them to their (sub)module with
// PyModule_AddFunctions, so a new group of functions is a new table here and
// one line there.
#pragma once

#include "py_common.h"

namespace openacl::python {

extern PyMethodDef kAclMethods[];         // py_acl.cpp: acl.* (init, version, data buffers...)
extern PyMethodDef kTensorDescMethods[];  // py_tensor_desc.cpp: acl.* tensor descriptors
extern PyMethodDef kRtMethods[];          // py_rt.cpp: devices, contexts, streams, events
extern PyMethodDef kRtMemoryMethods[];    // py_rt_memory.cpp: allocation and copies
extern PyMethodDef kRtCallbackMethods[];  // py_rt_callback.cpp: subscribe/launch/process report
extern PyMethodDef kUtilMethods[];        // py_util.cpp: numpy / bytes <-> address
extern PyMethodDef kUtilThreadMethods[];  // py_util_thread.cpp: start_thread / stop_thread
extern PyMethodDef kMdlMethods[];         // py_mdl.cpp: acl.mdl (models: load, desc, datasets, execute)
extern PyMethodDef kOpMethods[];          // py_op.cpp: acl.op (single operators)
extern PyMethodDef kProfMethods[];        // py_prof.cpp: acl.prof (profiling)

// Drops the references held for launch_callback calls that will never run.
// Only valid once the runtime is torn down (aclFinalize returned success);
// needs the GIL.
void release_pending_callbacks();

}  // namespace openacl::python
