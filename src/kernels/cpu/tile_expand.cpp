// Expand and Tile: output coordinate o reads input coordinate 0 (broadcast)
// or o % d (tile) per axis.
#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

Status expand(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t r = y.rank();
  if (x.rank() > r) return ctx.fail("output rank below the input's");
  const int64_t off = r - x.rank();
  // View the input with the output's rank (leading 1s).
  Tensor xv = x;
  xv.dims.assign(static_cast<size_t>(off), 1);
  xv.dims.insert(xv.dims.end(), x.dims.begin(), x.dims.end());
  std::vector<std::vector<int64_t>> maps(r);
  for (int64_t a = 0; a < r; ++a) {
    const int64_t d = xv.dims[a];
    if (d != 1 && d != y.dims[a]) return ctx.fail("input dim %lld cannot broadcast to %lld", static_cast<long long>(d),
                                                  static_cast<long long>(y.dims[a]));
    maps[a].resize(y.dims[a]);
    for (int64_t o = 0; o < y.dims[a]; ++o) maps[a][o] = d == 1 ? 0 : o;
  }
  map_copy(xv, y, maps, nullptr);
  return Status::Ok();
}

bool scalar_int(const Tensor& t, int64_t* v) {
  if (t.elements() != 1) return false;
  double d = 0;
  if (!dispatch<kNumeric>(t.dtype, [&](auto tag) { d = static_cast<double>(load(t.template as<const typename decltype(tag)::type>()[0])); }))
    return false;
  if (!(d > -9.0e18 && d < 9.0e18)) return false;
  *v = static_cast<int64_t>(d);
  return true;
}

Status tile(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const int64_t r = x.rank();
  std::vector<int64_t> reps;
  if (ctx.opset() < 6) {  // Tile-1: `tiles` copies along `axis`
    int64_t tiles = 0, axis = 0;
    if (!ctx.has_input(2) || !scalar_int(ctx.input(1), &tiles) || !scalar_int(ctx.input(2), &axis) ||
        !norm_axis(&axis, r))
      return ctx.fail("tiles and axis must be scalars, axis in range");
    reps.assign(static_cast<size_t>(r), 1);
    reps[axis] = tiles;
  } else if (!ctx.has_input(1) || !is_index_type(ctx.input(1).dtype) || !read_ints(ctx.input(1), &reps)) {
    return ctx.fail("repeats must be an int64 input");
  }
  if (static_cast<int64_t>(reps.size()) != r) return ctx.fail("repeats has %zu entries for rank %lld", reps.size(),
                                                              static_cast<long long>(r));
  std::vector<std::vector<int64_t>> maps(r);
  for (int64_t a = 0; a < r; ++a) {
    if (reps[a] < 0) return ctx.fail("negative repeat");
    if (y.dims[a] != x.dims[a] * reps[a]) return ctx.fail("output dims disagree with repeats");
    maps[a].resize(y.dims[a]);
    for (int64_t o = 0; o < y.dims[a]; ++o) maps[a][o] = o % x.dims[a];
  }
  map_copy(x, y, maps, nullptr);
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Expand, "cpu").types(movable_types()).run(expand);
OPENACL_REGISTER_KERNEL(Tile, "cpu").types(movable_types()).run(tile);

}  // namespace
}  // namespace openacl::kernels::cpu
