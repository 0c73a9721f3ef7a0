// aclopAttr (spec §4.4): a registered op::OpAttrs. Live attrs are registered
// like tensor descs (tensor_desc.h): a NULL, destroyed or bogus pointer is
// refused with ACL_ERROR_INVALID_PARAM instead of read. One mutex guards the
// registry and every attr's contents, so an attr may be set from one thread
// while another executes with it (each call sees a consistent set).
#pragma once

#include "acl/acl.h"
#include "base/status.h"
#include "op/op_desc.h"

struct aclopAttr {
  openacl::op::OpAttrs attrs;
};

namespace openacl::capi {

// Copies the attributes of a live attr into *out; nullptr: no attributes
// (out cleared). kInvalidParam for an unknown pointer.
Status read_op_attr(const aclopAttr* attr, op::OpAttrs* out);

}  // namespace openacl::capi
