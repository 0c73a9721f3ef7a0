// Transpose (see transpose_bytes in movement_util.cpp): size-1 axes dropped
// and adjacent axes merged, then 32x32 tiles when the innermost axis moves
// (matrix transposes, NCHW<->NHWC), block copies when it stays.
#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

Status transpose(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank();
  std::vector<int64_t> perm;
  if (auto p = ctx.attrs().get_ints("perm")) {
    perm = *p;
  } else {
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != r) return ctx.fail("perm has %zu entries for rank %lld", perm.size(),
                                                              static_cast<long long>(r));
  std::vector<bool> seen(static_cast<size_t>(r), false);
  for (int64_t& p : perm) {
    if (!norm_axis(&p, r) || seen[p]) return ctx.fail("perm is not a permutation");
    seen[p] = true;
  }
  for (int64_t i = 0; i < r; ++i)
    if (y.dims[i] != x.dims[perm[i]]) return ctx.fail("output dims disagree with perm");
  transpose_bytes(x.data, y.data, x.dims, perm, elem_size(x));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Transpose, "cpu").types(movable_types()).run(transpose);

}  // namespace
}  // namespace openacl::kernels::cpu
