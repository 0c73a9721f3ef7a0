// Reshape, Flatten, Squeeze, Unsqueeze: the output is the input's bytes under
// new dims (the shape function computed them), so in place they cost nothing.
#include <cstring>

#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

Status same_bytes(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.data == nullptr && x.elements() != 0) return ctx.fail("output shape could not be inferred");
  Tensor& o = y;
  if (o.elements() != x.elements()) return ctx.fail("output has %lld elements; input has %lld",
                                                    static_cast<long long>(o.elements()),
                                                    static_cast<long long>(x.elements()));
  if (o.data != x.data && x.bytes()) std::memcpy(o.data, x.data, x.bytes());
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Reshape, "cpu").types(movable_types()).in_place(0, 0).run(same_bytes);
OPENACL_REGISTER_KERNEL(Flatten, "cpu").types(movable_types()).in_place(0, 0).run(same_bytes);
OPENACL_REGISTER_KERNEL(Squeeze, "cpu").types(movable_types()).in_place(0, 0).run(same_bytes);
OPENACL_REGISTER_KERNEL(Unsqueeze, "cpu").types(movable_types()).in_place(0, 0).run(same_bytes);

}  // namespace
}  // namespace openacl::kernels::cpu
