// Einsum: the general path. Every label (ellipsis dims become labels of their
// own) gets one size; each operand reads a label through a stride (0 when the
// operand lacks it or broadcasts it; repeated labels add their strides, which
// walks the diagonal). Output elements are computed in parallel, each summing
// over the contracted labels. Two-operand equations that are a batched matrix
// product in disguise take the gather + batched GEMM + scatter path instead.
// TODO(perf): run that GEMM on oneDNN for float32 (needs a primitive cache).
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/matmul_common.h"

namespace openacl::kernels::cpu {
namespace {

constexpr int kLetters = 52;

int letter_id(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + (c - 'A') : -1; }

// A term as label ids; -2 marks the ellipsis. False on a syntax error.
bool parse_term(const std::string& t, std::vector<int>* out) {
  out->clear();
  bool ell = false;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i] == ' ') continue;
    if (t[i] == '.') {
      if (ell || t.compare(i, 3, "...") != 0) return false;
      ell = true;
      out->push_back(-2);
      i += 2;
    } else {
      const int id = letter_id(t[i]);
      if (id < 0) return false;
      out->push_back(id);
    }
  }
  return true;
}

struct EinsumPlan {
  std::vector<int64_t> size;                 // per label id
  std::vector<std::vector<int64_t>> stride;  // [operand][label id]
  std::vector<int> out_labels, sum_labels;
  std::vector<int64_t> out_dims;
  std::vector<std::vector<int>> dim_labels;  // [operand][dim] -> label id
};

std::string plan_einsum(const std::string& eq, const std::vector<const Tensor*>& ins, EinsumPlan* p) {
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t b = 0;;) {
    const size_t c = lhs.find(',', b);
    terms.push_back(lhs.substr(b, c == std::string::npos ? std::string::npos : c - b));
    if (c == std::string::npos) break;
    b = c + 1;
  }
  if (terms.size() != ins.size()) return "equation has " + std::to_string(terms.size()) + " terms for " +
                                         std::to_string(ins.size()) + " inputs";
  int64_t ell_rank = 0;
  std::vector<std::vector<int>> parsed(terms.size());
  for (size_t k = 0; k < terms.size(); ++k) {
    if (!parse_term(terms[k], &parsed[k])) return "cannot parse equation '" + eq + "'";
    const bool has_ell = std::count(parsed[k].begin(), parsed[k].end(), -2) > 0;
    const int64_t letters = static_cast<int64_t>(parsed[k].size()) - (has_ell ? 1 : 0);
    if (has_ell ? ins[k]->rank() < letters : ins[k]->rank() != letters)
      return "operand " + std::to_string(k) + " has the wrong rank for its term";
    if (has_ell) ell_rank = std::max(ell_rank, ins[k]->rank() - letters);
  }
  const int nlab = kLetters + static_cast<int>(ell_rank);
  p->size.assign(nlab, -1);
  p->stride.assign(ins.size(), std::vector<int64_t>(nlab, 0));
  std::vector<int> count(nlab, 0);
  p->dim_labels.assign(ins.size(), {});
  for (size_t k = 0; k < terms.size(); ++k) {
    const std::vector<int64_t> st = strides_of(ins[k]->dims);
    const int64_t letters = static_cast<int64_t>(parsed[k].size()) - (std::count(parsed[k].begin(), parsed[k].end(), -2) ? 1 : 0);
    const int64_t er = ins[k]->rank() - letters;
    size_t d = 0;
    for (int lab : parsed[k]) {
      std::vector<int> ids;
      if (lab == -2)
        for (int64_t e = 0; e < er; ++e) ids.push_back(kLetters + static_cast<int>(ell_rank - er + e));
      else
        ids.push_back(lab);
      for (int id : ids) {
        const int64_t n = ins[k]->dims[d];
        if (p->size[id] < 0 || p->size[id] == 1) p->size[id] = n;
        else if (n != 1 && n != p->size[id]) return "label sizes disagree";
        if (n != 1) p->stride[k][id] += st[d];
        p->dim_labels[k].push_back(id);
        ++count[id];
        ++d;
      }
    }
  }
  std::vector<int> out;
  if (arrow != std::string::npos) {
    std::vector<int> ot;
    if (!parse_term(eq.substr(arrow + 2), &ot)) return "cannot parse equation '" + eq + "'";
    for (int lab : ot) {
      if (lab == -2) {
        for (int64_t e = 0; e < ell_rank; ++e) out.push_back(kLetters + static_cast<int>(e));
      } else {
        if (p->size[lab] < 0) return "output label appears in no input";
        out.push_back(lab);
      }
    }
  } else {
    for (int64_t e = 0; e < ell_rank; ++e) out.push_back(kLetters + static_cast<int>(e));
    std::vector<char> singles;  // implicit output: letters used once, in ASCII order
    for (int id = 0; id < kLetters; ++id)
      if (count[id] == 1) singles.push_back(id < 26 ? static_cast<char>('a' + id) : static_cast<char>('A' + id - 26));
    std::sort(singles.begin(), singles.end());
    for (char c : singles) out.push_back(letter_id(c));
  }
  p->out_labels = out;
  p->out_dims.clear();
  for (int id : out) p->out_dims.push_back(p->size[id] < 0 ? 1 : p->size[id]);
  p->sum_labels.clear();
  for (int id = 0; id < nlab; ++id)
    if (p->size[id] >= 0 && std::find(out.begin(), out.end(), id) == out.end()) p->sum_labels.push_back(id);
  return "";
}

template <class T>
void einsum_run(const EinsumPlan& p, const std::vector<const Tensor*>& ins, T* y, int64_t total) {
  using Acc = ComputeType<T>;
  const size_t nops = ins.size();
  std::vector<const T*> base(nops);
  for (size_t k = 0; k < nops; ++k) base[k] = ins[k]->as<T>();
  int64_t inner = 1;
  for (int id : p.sum_labels) inner *= p.size[id];
  parallel_for(total, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, inner)), [&](int64_t b, int64_t e) {
    std::vector<int64_t> off(nops), idx(p.sum_labels.size());
    for (int64_t o = b; o < e; ++o) {
      int64_t rem = o;
      std::fill(off.begin(), off.end(), 0);
      for (size_t i = p.out_labels.size(); i-- > 0;) {
        const int id = p.out_labels[i];
        const int64_t n = p.size[id] < 0 ? 1 : p.size[id], v = rem % n;
        rem /= n;
        for (size_t k = 0; k < nops; ++k) off[k] += v * p.stride[k][id];
      }
      Acc acc = Acc(0);
      std::fill(idx.begin(), idx.end(), 0);
      for (int64_t it = 0; it < inner; ++it) {
        Acc prod = Acc(1);
        for (size_t k = 0; k < nops; ++k) {
          int64_t q = off[k];
          for (size_t s = 0; s < idx.size(); ++s) q += idx[s] * p.stride[k][p.sum_labels[s]];
          prod *= static_cast<Acc>(load(base[k][q]));
        }
        acc += prod;
        for (size_t s = idx.size(); s-- > 0;) {
          if (++idx[s] < p.size[p.sum_labels[s]]) break;
          idx[s] = 0;
        }
      }
      y[o] = store<T>(acc);
    }
  });
}

// Two operands whose labels are each batch (A, B, out), M (A, out), N (B,
// out) or K (A, B): gathered into [batch, M, K] and [batch, K, N], multiplied
// by the batched GEMM, scattered into the output's label order. False when
// the equation has another shape (diagonals, broadcasting, one-sided sums).
struct MatmulForm {
  std::vector<int> batch, m, n, k;
};

bool matmul_form(const EinsumPlan& p, const std::vector<const Tensor*>& ins, MatmulForm* f) {
  if (ins.size() != 2) return false;
  const size_t nlab = p.size.size();
  std::vector<int> in_a(nlab, 0), in_b(nlab, 0), in_out(nlab, 0);
  for (int id : p.out_labels)
    if (++in_out[id] > 1) return false;
  for (int k = 0; k < 2; ++k) {
    std::vector<int>& occ = k == 0 ? in_a : in_b;
    for (size_t d = 0; d < p.dim_labels[k].size(); ++d) {
      const int id = p.dim_labels[k][d];
      if (++occ[id] > 1 || ins[k]->dims[d] != p.size[id]) return false;
    }
  }
  for (size_t id = 0; id < nlab; ++id) {
    const int i = static_cast<int>(id);
    if (in_a[id] && in_b[id]) (in_out[id] ? f->batch : f->k).push_back(i);
    else if (in_a[id]) { if (!in_out[id]) return false; f->m.push_back(i); }
    else if (in_b[id]) { if (!in_out[id]) return false; f->n.push_back(i); }
  }
  for (int id : p.out_labels)
    if (!in_a[id] && !in_b[id]) return false;
  return true;
}

// dst (contiguous, row-major over `labels`) <- src read through per-label strides.
template <class T>
void gather(const T* src, const std::vector<int64_t>& stride, const std::vector<int>& labels,
            const std::vector<int64_t>& size, T* dst, int64_t total) {
  for (int64_t i = 0; i < total; ++i) {
    int64_t rem = i, off = 0;
    for (size_t l = labels.size(); l-- > 0;) {
      const int64_t n = size[labels[l]];
      off += (rem % n) * stride[labels[l]];
      rem /= n;
    }
    dst[i] = src[off];
  }
}

template <class T>
void einsum_matmul(const EinsumPlan& p, const MatmulForm& f, const std::vector<const Tensor*>& ins, T* y) {
  using Acc = ComputeType<T>;
  auto prod = [&](const std::vector<int>& ls) {
    int64_t n = 1;
    for (int id : ls) n *= p.size[id];
    return n;
  };
  const int64_t Bt = prod(f.batch), M = prod(f.m), N = prod(f.n), K = prod(f.k);
  auto cat = [](std::vector<int> a, const std::vector<int>& b, const std::vector<int>& c) {
    a.insert(a.end(), b.begin(), b.end());
    a.insert(a.end(), c.begin(), c.end());
    return a;
  };
  std::vector<T> a(static_cast<size_t>(Bt * M * K)), b(static_cast<size_t>(Bt * K * N)), c(static_cast<size_t>(Bt * M * N));
  gather(ins[0]->as<T>(), p.stride[0], cat(f.batch, f.m, f.k), p.size, a.data(), Bt * M * K);
  gather(ins[1]->as<T>(), p.stride[1], cat(f.batch, f.k, f.n), p.size, b.data(), Bt * K * N);
  MatmulShape s;
  matmul_shape({Bt, M, K}, {Bt, K, N}, &s);
  batched_matmul_ref<T, T, Acc, T>(s, a.data(), b.data(), c.data());
  // Scatter: c is row-major over batch, m, n; y over out_labels.
  std::vector<int64_t> ost(p.size.size(), 0);
  const std::vector<int64_t> ys = strides_of(p.out_dims);
  for (size_t i = 0; i < p.out_labels.size(); ++i) ost[p.out_labels[i]] = ys[i];
  const std::vector<int> cl = cat(f.batch, f.m, f.n);
  for (int64_t i = 0; i < Bt * M * N; ++i) {
    int64_t rem = i, off = 0;
    for (size_t l = cl.size(); l-- > 0;) {
      const int64_t n = p.size[cl[l]];
      off += (rem % n) * ost[cl[l]];
      rem /= n;
    }
    y[off] = c[i];
  }
}

Status einsum(KernelContext& ctx) {
  const std::string eq = ctx.attrs().get_string("equation", "");
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.fail("input %zu is missing", i);
    ins.push_back(&ctx.input(i));
    if (ins.back()->dtype != ins[0]->dtype) return ctx.fail("inputs differ in type");
  }
  if (ins.empty()) return ctx.fail("no inputs");
  EinsumPlan p;
  const std::string err = plan_einsum(eq, ins, &p);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  Tensor* y = &ctx.output(0);
  if (!y->data || y->dims != p.out_dims) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, p.out_dims, &y));
  if (y->elements() == 0) return Status::Ok();
  MatmulForm f;
  const bool as_matmul = matmul_form(p, ins, &f);
  const bool ok = dispatch<kNumeric>(ins[0]->dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (as_matmul) einsum_matmul<T>(p, f, ins, y->as<T>());
    else einsum_run<T>(p, ins, y->as<T>(), y->elements());
  });
  return ok ? Status::Ok() : ctx.fail("unsupported type");
}

OPENACL_REGISTER_KERNEL(Einsum, "cpu").types(numeric_types()).run(einsum);

}  // namespace
}  // namespace openacl::kernels::cpu
