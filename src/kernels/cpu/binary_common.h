// Shared plumbing of the binary element-wise kernels (binary*.cpp): input B's
// effective dims under the opset < 7 `broadcast`/`axis` rules, wrap-around
// integer arithmetic, and the "same type in, T or bool out" kernel body.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/broadcast.h"

namespace openacl::kernels::cpu {

// Before opset 7, B is stretched onto A: with broadcast=1 its dims line up
// with A's starting at `axis` (default: the trailing dims), 1 elsewhere; with
// broadcast=0 the shapes must be equal. From opset 7 on B's dims are numpy-
// broadcast as they are.
// *b_dims points at B's own dims, or (legacy broadcast) at `legacy`, filled
// here: no copy, no allocation in the common case.
inline Status binary_b_dims(const KernelContext& ctx, std::vector<int64_t>* legacy,
                            const std::vector<int64_t>** b_dims) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  *b_dims = &b.dims;
  if (ctx.opset() >= 7) return Status::Ok();
  if (ctx.attrs().get_int("broadcast", 0) == 0) {
    if (a.dims != b.dims) return ctx.fail("input shapes differ and broadcast=0 (opset %d)", ctx.opset());
    return Status::Ok();
  }
  const int64_t ra = a.rank(), rb = b.rank();
  int64_t axis = ctx.attrs().get_int("axis", ra - rb);
  if (axis < 0) axis += ra;
  if (axis < 0 || axis + rb > ra) return ctx.fail("legacy broadcast axis %lld does not fit B into A", (long long)axis);
  legacy->assign(static_cast<size_t>(ra), 1);
  for (int64_t i = 0; i < rb; ++i) (*legacy)[static_cast<size_t>(axis + i)] = b.dims[static_cast<size_t>(i)];
  *b_dims = legacy;
  return Status::Ok();
}

// Integer arithmetic without signed-overflow UB: computed in an unsigned type
// at least as wide as int (so uint16 * uint16 does not promote to signed int),
// then wrapped back to T two's-complement style like numpy.
template <class T>
using WrapType = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// y = op(a, b) with a, b of one element type T in `Set`; y is T (or bool when
// BoolOut). Applies the legacy broadcast rules.
template <unsigned Set, bool BoolOut, class Op>
Status binary_same_type(KernelContext& ctx, const Op& op, int64_t grain = kElementwiseGrain) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Tensor& y = ctx.output(0);
  if (a.dtype != b.dtype)
    return ctx.fail("inputs have different types %s and %s", graph::dtype_name(a.dtype), graph::dtype_name(b.dtype));
  std::vector<int64_t> legacy;
  const std::vector<int64_t>* b_dims = nullptr;
  OPENACL_RETURN_IF_ERROR(binary_b_dims(ctx, &legacy, &b_dims));
  bool shapes_ok = true;
  const bool typed = dispatch<Set>(a.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (BoolOut)
      shapes_ok = binary_broadcast(a.as<T>(), a.dims, b.as<T>(), *b_dims, y.as<bool>(), y.dims, op, grain);
    else
      shapes_ok = binary_broadcast(a.as<T>(), a.dims, b.as<T>(), *b_dims, y.as<T>(), y.dims, op, grain);
  });
  if (!typed) return ctx.fail("element type %s is not supported", graph::dtype_name(a.dtype));
  if (!shapes_ok) return ctx.fail("input shapes do not broadcast to the output shape");
  return Status::Ok();
}

}  // namespace openacl::kernels::cpu
