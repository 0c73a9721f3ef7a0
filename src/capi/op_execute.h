// capi internals of the single-operator API (acl_op.h) that other entry
// points need.
#pragma once

namespace openacl::capi {

// Empties the compiled-op cache (its device memory is released) and forgets
// the acl.json capacity, for aclFinalize: compiled ops must go before the
// devices are torn down. Handles still held keep their ops until destroyed,
// but refuse to execute (their context is gone).
void op_reset();

}  // namespace openacl::capi
