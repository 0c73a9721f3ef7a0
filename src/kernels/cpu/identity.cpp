// Identity-like ops: the output is the input's bytes.
#include <cstring>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

Status copy_input0(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.data != x.data && x.bytes()) std::memcpy(y.data, x.data, x.bytes());
  return Status::Ok();
}

// Dropout at inference: y = x; the optional mask output is all true.
Status dropout(KernelContext& ctx) {
  OPENACL_RETURN_IF_ERROR(copy_input0(ctx));
  if (ctx.has_output(1)) {
    Tensor& mask = ctx.output(1);
    std::memset(mask.data, 1, mask.bytes());
  }
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Identity, "cpu").in_place(0, 0).run(copy_input0);
OPENACL_REGISTER_KERNEL(Dropout, "cpu").in_place(0, 0).run(dropout);

}  // namespace
}  // namespace openacl::kernels::cpu
