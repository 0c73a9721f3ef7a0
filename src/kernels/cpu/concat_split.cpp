// Concat and Split: both are copies of contiguous [axis:] blocks per outer
// index; sizes along the axis come from the (inferred) tensor dims.
#include <cstring>

#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

int64_t prod(const std::vector<int64_t>& d, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e; ++i) n *= d[i];
  return n;
}

Status concat(KernelContext& ctx) {
  Tensor& y = ctx.output(0);
  const int64_t r = y.rank();
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (!norm_axis(&axis, r)) return ctx.fail("axis %lld out of range", static_cast<long long>(axis));
  const size_t es = elem_size(y);
  const int64_t outer = prod(y.dims, 0, axis);
  const int64_t out_row = prod(y.dims, axis, r) * static_cast<int64_t>(es);
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const Tensor& x = ctx.input(i);
    if (x.rank() != r) return ctx.fail("input %zu has rank %lld, expected %lld", i, static_cast<long long>(x.rank()),
                                       static_cast<long long>(r));
    const int64_t row = prod(x.dims, axis, r) * static_cast<int64_t>(es);
    if (offset + row > out_row) return ctx.fail("inputs do not fit the output");
    if (row > 0) {
      const char* src = static_cast<const char*>(x.data);
      char* dst = static_cast<char*>(y.data) + offset;
      parallel_for(outer, std::max<int64_t>(1, 65536 / row), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) std::memcpy(dst + o * out_row, src + o * row, static_cast<size_t>(row));
      });
    }
    offset += row;
  }
  if (offset != out_row) return ctx.fail("inputs do not fill the output");
  return Status::Ok();
}

Status split(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (!norm_axis(&axis, r)) return ctx.fail("axis %lld out of range", static_cast<long long>(axis));
  const size_t es = elem_size(x);
  const int64_t outer = prod(x.dims, 0, axis);
  const int64_t in_row = prod(x.dims, axis, r) * static_cast<int64_t>(es);
  int64_t offset = 0;
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    if (!ctx.has_output(i)) continue;
    Tensor& y = ctx.output(i);
    if (y.data == nullptr && y.elements() != 0) return ctx.fail("output %zu shape could not be inferred", i);
    if (y.rank() != r) return ctx.fail("output %zu has the wrong rank", i);
    const int64_t row = prod(y.dims, axis, r) * static_cast<int64_t>(es);
    if (offset + row > in_row) return ctx.fail("outputs exceed the input");
    if (row > 0) {
      const char* src = static_cast<const char*>(x.data) + offset;
      char* dst = static_cast<char*>(y.data);
      parallel_for(outer, std::max<int64_t>(1, 65536 / row), [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) std::memcpy(dst + o * row, src + o * in_row, static_cast<size_t>(row));
      });
    }
    offset += row;
  }
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Concat, "cpu").types(movable_types()).run(concat);
OPENACL_REGISTER_KERNEL(Split, "cpu").types(movable_types()).run(split);

}  // namespace
}  // namespace openacl::kernels::cpu
