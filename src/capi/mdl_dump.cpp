// Model dump: acl.json `dump` and aclmdlInitDump / aclmdlSetDump /
// aclmdlFinalizeDump (spec §3.8, compat-notes §4).
#include "capi/mdl_observe.h"

namespace openacl::capi {

std::unique_ptr<model::NodeObserver> execution_observer(const ModelEntry& entry, int device) { return nullptr; }

}  // namespace openacl::capi
