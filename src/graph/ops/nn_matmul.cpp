// MatMul (numpy semantics: 1-D promotion, batch broadcasting), MatMulInteger,
// Gemm (transA/transB) and Einsum (explicit and implicit outputs, ellipsis).
#include <algorithm>
#include <map>

#include "graph/ops/nn_common.h"
#include "graph/passes.h"

namespace openacl::graph::nn {
namespace {

Status matmul_common(ShapeContext& ctx, DType out_dtype, size_t ia = 0, size_t ib = 1) {
  const TensorType& a = ctx.input(ia);
  const TensorType& b = ctx.input(ib);
  if (!a.has_rank() || !b.has_rank()) {
    set_out(ctx, 0, out_dtype, std::nullopt);
    return Status::Ok();
  }
  if (a.rank() == 0 || b.rank() == 0) return ctx.fail("MatMul operands %s and %s must not be scalars", a.str().c_str(), b.str().c_str());
  Shape sa = *a.shape, sb = *b.shape;
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1) sa.insert(sa.begin(), Dim(1));
  if (b1) sb.push_back(Dim(1));
  const Dim& ka = sa[sa.size() - 1];
  const Dim& kb = sb[sb.size() - 2];
  if (ka.known() && kb.known() && ka.value != kb.value)
    return ctx.fail("inner dimensions differ: A %s has K=%lld, B %s has K=%lld", a.str().c_str(), ll(ka.value),
                    b.str().c_str(), ll(kb.value));
  Shape batch;
  Status st = broadcast_shapes(Shape(sa.begin(), sa.end() - 2), Shape(sb.begin(), sb.end() - 2), &batch);
  if (!st.ok()) return ctx.fail("batch dimensions of A %s and B %s do not broadcast", a.str().c_str(), b.str().c_str());
  if (!a1) batch.push_back(sa[sa.size() - 2]);
  if (!b1) batch.push_back(sb[sb.size() - 1]);
  set_out(ctx, 0, out_dtype, std::move(batch));
  return Status::Ok();
}

Status matmul_shape(ShapeContext& ctx) {
  // Inputs 2 (bias) and 3 (residual) exist only on MatMuls that absorbed
  // their epilogue (graph::fuse_matmul_epilogue).
  const bool bias = ctx.has_input(2), sum = ctx.has_input(3);
  if (ctx.num_inputs() > 2) {
    if ((bias && !ctx.attrs().has(kFusedBiasAttr)) || (sum && !ctx.attrs().has(kFusedSumAttr)) ||
        (!bias && !sum))
      return ctx.fail("MatMul takes 2 inputs (A, B)");
  }
  OPENACL_RETURN_IF_ERROR(matmul_common(ctx, ctx.input(0).dtype));
  if (sum && ctx.input(3).dtype != ctx.output(0).dtype)
    return ctx.fail("the fused residual input must have the MatMul output's type %s", ctx.output(0).str().c_str());
  return Status::Ok();
}
Status matmul_integer_shape(ShapeContext& ctx) { return matmul_common(ctx, DType::kInt32); }
// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): y_zp's dtype.
Status qlinear_matmul_shape(ShapeContext& ctx) {
  const DType out = ctx.input(7).dtype != DType::kUndefined ? ctx.input(7).dtype : ctx.input(0).dtype;
  return matmul_common(ctx, out, 0, 3);
}

Status gemm_shape(ShapeContext& ctx) {
  const TensorType& a = ctx.input(0);
  const TensorType& b = ctx.input(1);
  const bool ta = ctx.attrs().get_int("transA", 0) != 0, tb = ctx.attrs().get_int("transB", 0) != 0;
  if (a.has_rank() && a.rank() != 2) return ctx.fail("A %s must be 2-D", a.str().c_str());
  if (b.has_rank() && b.rank() != 2) return ctx.fail("B %s must be 2-D", b.str().c_str());
  Dim m, ka, kb, n;
  if (a.has_rank()) m = (*a.shape)[ta ? 1 : 0], ka = (*a.shape)[ta ? 0 : 1];
  if (b.has_rank()) kb = (*b.shape)[tb ? 1 : 0], n = (*b.shape)[tb ? 0 : 1];
  if (ka.known() && kb.known() && ka.value != kb.value)
    return ctx.fail("inner dimensions differ: A %s (transA=%d) has K=%lld, B %s (transB=%d) has K=%lld",
                    a.str().c_str(), ta, ll(ka.value), b.str().c_str(), tb, ll(kb.value));
  Shape out{m, n};
  if (ctx.has_input(2) && ctx.input(2).has_rank()) {
    // C must broadcast to [M, N] (unidirectionally).
    const Shape& c = *ctx.input(2).shape;
    if (c.size() > 2) return ctx.fail("C %s has rank > 2", ctx.input(2).str().c_str());
    for (size_t i = 0; i < c.size(); ++i) {
      Dim& o = out[2 - c.size() + i];
      if (c[i].known() && c[i].value != 1) {
        if (o.known() && o.value != c[i].value)
          return ctx.fail("C %s does not broadcast to [M, N] = %s", ctx.input(2).str().c_str(), shape_str(out).c_str());
        if (!o.known()) o = c[i];
      }
    }
  }
  set_out(ctx, 0, a.dtype != DType::kUndefined ? a.dtype : b.dtype, std::move(out));
  return Status::Ok();
}

// One einsum term: letters, with kEllipsis where "..." stands.
constexpr char kEllipsis = '.';

bool parse_term(const std::string& t, std::string* out) {
  out->clear();
  bool ell = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (ell || t.compare(i, 3, "...") != 0) return false;
      ell = true;
      out->push_back(kEllipsis);
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      out->push_back(c);
    } else {
      return false;
    }
  }
  return true;
}

Status einsum_shape(ShapeContext& ctx) {
  const std::string eq = ctx.attrs().get_string("equation", "");
  if (eq.empty()) return ctx.fail("the equation attribute is required");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t pos = 0;;) {
    const size_t comma = lhs.find(',', pos);
    std::string t;
    if (!parse_term(lhs.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos), &t))
      return ctx.fail("cannot parse equation '%s'", eq.c_str());
    terms.push_back(t);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (terms.size() != ctx.num_inputs())
    return ctx.fail("equation '%s' has %zu operand(s) but the node has %zu input(s)", eq.c_str(), terms.size(),
                    ctx.num_inputs());
  DType dt = ctx.input(0).dtype;
  std::map<char, Dim> dims;
  std::map<char, int> counts;
  Shape ell_dims;
  bool ell_unknown = false, any_ell = false;
  for (size_t k = 0; k < terms.size(); ++k) {
    const std::string& t = terms[k];
    const TensorType& in = ctx.input(k);
    const bool has_ell = t.find(kEllipsis) != std::string::npos;
    any_ell |= has_ell;
    const int64_t letters = static_cast<int64_t>(t.size()) - (has_ell ? 1 : 0);
    for (char c : t)
      if (c != kEllipsis) ++counts[c];
    if (!in.has_rank()) {
      if (has_ell) ell_unknown = true;
      for (char c : t)
        if (c != kEllipsis) dims.emplace(c, Dim());
      continue;
    }
    const int64_t r = in.rank();
    if (has_ell ? r < letters : r != letters)
      return ctx.fail("operand %zu %s has the wrong rank for its term in equation '%s'", k, in.str().c_str(), eq.c_str());
    const int64_t ell_rank = r - letters;
    size_t d = 0;
    for (char c : t) {
      if (c == kEllipsis) {
        Shape part(in.shape->begin() + d, in.shape->begin() + d + ell_rank);
        Shape merged;
        if (!broadcast_shapes(ell_dims, part, &merged).ok())
          return ctx.fail("ellipsis dimensions of operand %zu %s do not broadcast with %s", k, in.str().c_str(),
                          shape_str(ell_dims).c_str());
        ell_dims = std::move(merged);
        d += ell_rank;
        continue;
      }
      const Dim& x = (*in.shape)[d++];
      auto it = dims.find(c);
      if (it == dims.end()) {
        dims.emplace(c, x);
        continue;
      }
      Dim& cur = it->second;
      if (cur.known() && x.known() && cur.value != x.value) {
        if (x.value == 1) continue;
        if (cur.value == 1) { cur = x; continue; }
        return ctx.fail("label '%c' has sizes %lld and %lld in equation '%s'", c, ll(cur.value), ll(x.value), eq.c_str());
      }
      Dim m;
      if (merge_dim(cur, x, &m)) cur = m;
    }
  }
  std::string out_term;
  if (arrow != std::string::npos) {
    if (!parse_term(eq.substr(arrow + 2), &out_term)) return ctx.fail("cannot parse equation '%s'", eq.c_str());
    for (char c : out_term)
      if (c != kEllipsis && !dims.count(c))
        return ctx.fail("output label '%c' of equation '%s' appears in no input", c, eq.c_str());
  } else {
    if (any_ell) out_term.push_back(kEllipsis);
    std::string singles;
    for (const auto& [c, n] : counts)
      if (n == 1) singles.push_back(c);
    std::sort(singles.begin(), singles.end());
    out_term += singles;
  }
  if (out_term.find(kEllipsis) != std::string::npos && ell_unknown) {
    set_out(ctx, 0, dt, std::nullopt);
    return Status::Ok();
  }
  Shape out;
  for (char c : out_term) {
    if (c == kEllipsis) out.insert(out.end(), ell_dims.begin(), ell_dims.end());
    else out.push_back(dims[c]);
  }
  set_out(ctx, 0, dt, std::move(out));
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(MatMul).inputs(2, 4).outputs(1, 1).shape(matmul_shape);
OPENACL_REGISTER_OP(MatMulInteger).inputs(2, 4).outputs(1, 1).shape(matmul_integer_shape);
OPENACL_REGISTER_OP(QLinearMatMul).inputs(8, 8).outputs(1, 1).shape(qlinear_matmul_shape);
OPENACL_REGISTER_OP(Gemm).inputs(2, 3).outputs(1, 1).shape(gemm_shape);
OPENACL_REGISTER_OP(Einsum).inputs(1, 64).outputs(1, 1).shape(einsum_shape);

}  // namespace openacl::graph::nn
