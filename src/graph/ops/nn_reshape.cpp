// Shape-rearranging ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose,
// Expand, Tile, DepthToSpace, SpaceToDepth.
#include <algorithm>
#include <set>

#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

// Output shape of Reshape from the requested `req` (0 copies unless allowzero,
// -1 inferred). Symbolic input dims that the output copies (0) or repeats by
// name cancel out, so [B,S,12,64] -> [0,0,-1] gives [B,S,768].
Status reshape_from(ShapeContext& ctx, const std::vector<int64_t>& req, bool allowzero, Shape* out) {
  const TensorType& x = ctx.input(0);
  const bool rank_known = x.has_rank();
  int infer_at = -1;
  bool has_zero = false;
  out->assign(req.size(), Dim());
  std::vector<bool> copied(rank_known ? x.shape->size() : 0, false);
  for (size_t i = 0; i < req.size(); ++i) {
    const int64_t s = req[i];
    if (s == -1) {
      if (infer_at >= 0) return ctx.fail("shape %s has more than one -1", ints_str(req).c_str());
      infer_at = static_cast<int>(i);
    } else if (s < -1) {
      return ctx.fail("shape %s has an invalid size %lld", ints_str(req).c_str(), ll(s));
    } else if (s == 0 && !allowzero) {
      if (rank_known) {
        if (i >= x.shape->size())
          return ctx.fail("shape %s copies input dim %zu (0) but the input %s has rank %zu", ints_str(req).c_str(), i,
                          x.str().c_str(), x.shape->size());
        (*out)[i] = (*x.shape)[i];
        copied[i] = true;
      }
    } else {
      has_zero |= s == 0;
      (*out)[i] = Dim(s);
    }
  }
  if (allowzero && has_zero && infer_at >= 0)
    return ctx.fail("shape %s has both 0 and -1 with allowzero=1", ints_str(req).c_str());
  if (!rank_known) return Status::Ok();
  // What the input holds beyond the copied dims.
  int64_t p_in = 1;
  bool opaque = false;
  std::multiset<std::string> syms_in;
  for (size_t i = 0; i < x.shape->size(); ++i) {
    if (copied[i]) continue;
    const Dim& d = (*x.shape)[i];
    if (d.known()) {
      if (!mul_ok(p_in, d.value, &p_in)) return ctx.fail("the element count of %s overflows", x.str().c_str());
    }
    else if (d.symbol.empty()) opaque = true;
    else syms_in.insert(d.symbol);
  }
  int64_t p_out = 1;
  for (size_t i = 0; i < req.size(); ++i)
    if (static_cast<int>(i) != infer_at && !(req[i] == 0 && !allowzero) && !mul_ok(p_out, req[i], &p_out))
      return ctx.fail("the element count of shape %s overflows", ints_str(req).c_str());
  if (opaque) return Status::Ok();
  if (p_in == 0 && !syms_in.empty()) syms_in.clear();  // zero elements whatever the symbols are
  if (infer_at >= 0) {
    if (syms_in.empty()) {
      if (p_out == 0) {
        if (p_in != 0) return ctx.fail("cannot reshape %s to %s", x.str().c_str(), ints_str(req).c_str());
        return Status::Ok();  // 0 elements: the -1 is ambiguous
      }
      if (p_in % p_out != 0)
        return ctx.fail("cannot reshape %s to %s: %lld elements do not divide by %lld", x.str().c_str(),
                        ints_str(req).c_str(), ll(p_in), ll(p_out));
      (*out)[infer_at] = Dim(p_in / p_out);
    } else if (syms_in.size() == 1 && p_in == p_out) {
      (*out)[infer_at] = Dim::symbolic(*syms_in.begin());
    }
  } else if (syms_in.empty() && p_in != p_out) {
    return ctx.fail("cannot reshape %s (%lld elements) to %s (%lld elements)", x.str().c_str(), ll(p_in),
                    ints_str(req).c_str(), ll(p_out));
  }
  return Status::Ok();
}

Status reshape_shape(ShapeContext& ctx) {
  const DType dt = ctx.input(0).dtype;
  std::optional<std::vector<int64_t>> req;
  if (ctx.opset() > 0 && ctx.opset() < 5) {
    req = ctx.attrs().get_ints("shape");
    if (!req) return ctx.fail("the shape attribute is required before opset 5");
  } else {
    if (!ctx.has_input(1)) return ctx.fail("the shape input is required");
    OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "shape"));
    const TensorType& st = ctx.input(1);
    if (st.has_rank() && st.rank() != 1) return ctx.fail("the shape input %s must be 1-D", st.str().c_str());
    req = const_ints(ctx, 1);
    if (!req) {
      const int64_t len = known_length_1d(ctx, 1);
      set_out(ctx, 0, dt, dims_of_rank(len));
      return Status::Ok();
    }
  }
  Shape out;
  OPENACL_RETURN_IF_ERROR(reshape_from(ctx, *req, ctx.attrs().get_int("allowzero", 0) != 0, &out));
  set_out(ctx, 0, dt, std::move(out));
  return Status::Ok();
}

Status flatten_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  int64_t axis = ctx.attrs().get_int("axis", 1);
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, Shape{Dim(), Dim()});
    return Status::Ok();
  }
  const int64_t r = x.rank();
  if (axis < -r || axis > r) return ctx.fail("axis %lld is out of range for %s", ll(axis), x.str().c_str());
  if (axis < 0) axis += r;
  const Shape& s = *x.shape;
  set_out(ctx, 0, x.dtype, Shape{dim_product(s, 0, axis), dim_product(s, axis, s.size())});
  return Status::Ok();
}

// Axes from the attribute (opset < 13) or the second input; `known` false when
// the input is present but not constant.
std::optional<std::vector<int64_t>> axes_of(const ShapeContext& ctx, bool* known) {
  *known = true;
  if (ctx.opset() > 0 && ctx.opset() < 13) return ctx.attrs().get_ints("axes");
  if (!ctx.has_input(1)) return ctx.attrs().get_ints("axes");
  auto v = const_ints(ctx, 1);
  if (!v) *known = false;
  return v;
}

Status squeeze_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "axes"));
  bool known = true;
  auto axes = axes_of(ctx, &known);
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  const int64_t r = x.rank();
  if (!known) {
    const int64_t len = known_length_1d(ctx, 1);
    set_out(ctx, 0, x.dtype, len >= 0 && len <= r ? std::optional<Shape>(unknown_dims(r - len)) : std::nullopt);
    return Status::Ok();
  }
  std::vector<bool> drop(r, false);
  if (!axes || axes->empty()) {
    for (int64_t i = 0; i < r; ++i) {
      const Dim& d = (*x.shape)[i];
      if (!d.known()) {  // cannot tell whether it is 1
        set_out(ctx, 0, x.dtype, std::nullopt);
        return Status::Ok();
      }
      drop[i] = d.value == 1;
    }
  } else {
    for (int64_t a : *axes) {
      int64_t n;
      if (!normalize_axis(a, r, &n)) return ctx.fail("axis %lld is out of range for %s", ll(a), x.str().c_str());
      if (drop[n]) return ctx.fail("axes %s repeat axis %lld", ints_str(*axes).c_str(), ll(n));
      const Dim& d = (*x.shape)[n];
      if (d.known() && d.value != 1)
        return ctx.fail("cannot squeeze axis %lld of %s: its size is %lld, not 1", ll(a), x.str().c_str(), ll(d.value));
      drop[n] = true;
    }
  }
  Shape out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[i]) out.push_back((*x.shape)[i]);
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status unsqueeze_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "axes"));
  bool known = true;
  auto axes = axes_of(ctx, &known);
  if (known && !axes) return ctx.fail("axes are required");
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  if (!known) {
    const int64_t len = known_length_1d(ctx, 1);
    set_out(ctx, 0, x.dtype, len >= 0 ? dims_of_rank(x.rank() + std::min(len, kMaxDerivedRank + 1)) : std::nullopt);
    return Status::Ok();
  }
  const int64_t r = x.rank() + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(r, false);
  for (int64_t a : *axes) {
    int64_t n;
    if (!normalize_axis(a, r, &n)) return ctx.fail("axis %lld is out of range for output rank %lld", ll(a), ll(r));
    if (inserted[n]) return ctx.fail("axes %s repeat axis %lld", ints_str(*axes).c_str(), ll(n));
    inserted[n] = true;
  }
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(inserted[i] ? Dim(1) : (*x.shape)[k++]);
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status transpose_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  auto perm = ctx.attrs().get_ints("perm");
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, perm ? std::optional<Shape>(unknown_dims(perm->size())) : std::nullopt);
    return Status::Ok();
  }
  const int64_t r = x.rank();
  std::vector<int64_t> p;
  if (perm && !perm->empty()) p = *perm;
  else for (int64_t i = r - 1; i >= 0; --i) p.push_back(i);
  if (static_cast<int64_t>(p.size()) != r)
    return ctx.fail("perm %s has %zu entries for input %s of rank %lld", ints_str(p).c_str(), p.size(),
                    x.str().c_str(), ll(r));
  std::vector<bool> seen(r, false);
  Shape out;
  for (int64_t a : p) {
    if (a < 0 || a >= r || seen[a]) return ctx.fail("perm %s is not a permutation of 0..%lld", ints_str(p).c_str(), ll(r - 1));
    seen[a] = true;
    out.push_back((*x.shape)[a]);
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status expand_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "shape"));
  auto shape = const_ints(ctx, 1);
  if (!shape) {
    const int64_t len = known_length_1d(ctx, 1);
    if (len < 0 || !x.has_rank()) set_out(ctx, 0, x.dtype, std::nullopt);
    else set_out(ctx, 0, x.dtype, dims_of_rank(std::max(len, x.rank())));
    return Status::Ok();
  }
  Shape target;
  for (int64_t v : *shape) {
    if (v < 0) return ctx.fail("shape %s has a negative size", ints_str(*shape).c_str());
    target.push_back(Dim(v));
  }
  if (!x.has_rank()) {
    // Only the rank is bounded below; dims of 1 in `shape` keep the input's.
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  Shape out;
  Status st = broadcast_shapes(*x.shape, target, &out);
  if (!st.ok()) return ctx.fail("cannot expand %s to %s", x.str().c_str(), ints_str(*shape).c_str());
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status tile_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  if (ctx.opset() == 0 || ctx.opset() >= 6) OPENACL_RETURN_IF_ERROR(require_index_dtype(ctx, 1, "repeats"));
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, std::nullopt);
    return Status::Ok();
  }
  if (ctx.opset() >= 1 && ctx.opset() < 6) {  // Tile-1: scalar tiles and axis inputs
    auto tiles = const_doubles(ctx, 1), axis = const_doubles(ctx, 2);
    if (!tiles || !axis || tiles->size() != 1 || axis->size() != 1) {
      set_out(ctx, 0, x.dtype, unknown_dims(x.rank()));
      return Status::Ok();
    }
    int64_t a;
    const double t = (*tiles)[0];
    if (!(t >= 0 && t < 9.0e18)) return ctx.fail("tiles %g is not a count", t);
    const double ax = (*axis)[0];
    if (!(ax > -9.0e18 && ax < 9.0e18) || !normalize_axis(static_cast<int64_t>(ax), x.rank(), &a))
      return ctx.fail("axis %g is out of range for %s", ax, x.str().c_str());
    Shape out = *x.shape;
    int64_t v;
    if (out[a].known() && !mul_ok(out[a].value, static_cast<int64_t>(t), &v)) return ctx.fail("tiling overflows");
    out[a] = dim_mul(out[a], static_cast<int64_t>(t));
    set_out(ctx, 0, x.dtype, std::move(out));
    return Status::Ok();
  }
  auto reps = const_ints(ctx, 1);
  if (!reps) {
    set_out(ctx, 0, x.dtype, unknown_dims(x.rank()));
    return Status::Ok();
  }
  if (static_cast<int64_t>(reps->size()) != x.rank())
    return ctx.fail("repeats %s has %zu entries for input %s of rank %lld", ints_str(*reps).c_str(), reps->size(),
                    x.str().c_str(), ll(x.rank()));
  Shape out;
  for (size_t i = 0; i < reps->size(); ++i) {
    if ((*reps)[i] < 0) return ctx.fail("repeats %s has a negative entry", ints_str(*reps).c_str());
    int64_t v;
    const Dim& d = (*x.shape)[i];
    if (d.known() && !mul_ok(d.value, (*reps)[i], &v))
      return ctx.fail("tiling %s by %s overflows", x.str().c_str(), ints_str(*reps).c_str());
    out.push_back(dim_mul((*x.shape)[i], (*reps)[i]));
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status block_shape(ShapeContext& ctx, bool to_space) {
  const TensorType& x = ctx.input(0);
  const int64_t b = ctx.attrs().get_int("blocksize", 0);
  if (b < 1 || b > (int64_t{1} << 20)) return ctx.fail("blocksize %lld must be in [1, 2^20]", ll(b));
  if (!x.has_rank()) {
    set_out(ctx, 0, x.dtype, unknown_dims(4));
    return Status::Ok();
  }
  if (x.rank() != 4) return ctx.fail("input %s must be 4-D [N, C, H, W]", x.str().c_str());
  const Shape& s = *x.shape;
  Shape out = s;
  if (to_space) {
    if (s[1].known() && s[1].value % (b * b) != 0)
      return ctx.fail("channels %lld are not divisible by blocksize^2 = %lld", ll(s[1].value), ll(b * b));
    out[1] = s[1].known() ? Dim(s[1].value / (b * b)) : (b == 1 ? s[1] : Dim());
    out[2] = dim_mul(s[2], b);
    out[3] = dim_mul(s[3], b);
  } else {
    for (int i = 2; i < 4; ++i) {
      if (s[i].known() && s[i].value % b != 0)
        return ctx.fail("spatial size %lld of %s is not divisible by blocksize %lld", ll(s[i].value), x.str().c_str(), ll(b));
      out[i] = s[i].known() ? Dim(s[i].value / b) : (b == 1 ? s[i] : Dim());
    }
    out[1] = dim_mul(s[1], b * b);
  }
  set_out(ctx, 0, x.dtype, std::move(out));
  return Status::Ok();
}

Status depth_to_space_shape(ShapeContext& ctx) { return block_shape(ctx, true); }
Status space_to_depth_shape(ShapeContext& ctx) { return block_shape(ctx, false); }

}  // namespace

OPENACL_REGISTER_OP(Reshape).inputs(1, 2).outputs(1, 1).shape(reshape_shape);
OPENACL_REGISTER_OP(Flatten).inputs(1, 1).outputs(1, 1).shape(flatten_shape);
OPENACL_REGISTER_OP(Squeeze).inputs(1, 2).outputs(1, 1).shape(squeeze_shape);
OPENACL_REGISTER_OP(Unsqueeze).inputs(1, 2).outputs(1, 1).shape(unsqueeze_shape);
OPENACL_REGISTER_OP(Transpose).inputs(1, 1).outputs(1, 1).shape(transpose_shape);
OPENACL_REGISTER_OP(Expand).inputs(2, 2).outputs(1, 1).shape(expand_shape);
OPENACL_REGISTER_OP(Tile).inputs(2, 3).outputs(1, 1).shape(tile_shape);
OPENACL_REGISTER_OP(DepthToSpace).inputs(1, 1).outputs(1, 1).shape(depth_to_space_shape);
OPENACL_REGISTER_OP(SpaceToDepth).inputs(1, 1).outputs(1, 1).shape(space_to_depth_shape);

}  // namespace openacl::graph::nn
