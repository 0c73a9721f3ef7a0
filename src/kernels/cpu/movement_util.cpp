// Shared data-movement helpers (see movement_util.h).
#include "kernels/cpu/movement_util.h"

#include <algorithm>
#include <cstring>

#include "kernels/cpu/simd8.h"

namespace openacl::kernels::cpu {

std::vector<DType> movable_types() {
  std::vector<DType> v = all_types();
  for (DType t : {DType::kComplex64, DType::kComplex128, DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ,
                  DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ})
    v.push_back(t);
  return v;
}

bool read_ints(const Tensor& t, std::vector<int64_t>* out) {
  const int64_t n = t.elements();
  out->resize(static_cast<size_t>(n));
  bool ok = true;
  if (!dispatch<kInts | kBool>(t.dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* p = t.as<const T>();
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (std::is_same_v<T, uint64_t>) ok = ok && p[i] <= static_cast<uint64_t>(INT64_MAX);
          (*out)[i] = static_cast<int64_t>(p[i]);
        }
      }))
    return false;
  return ok;
}

Status ensure_output(KernelContext& ctx, size_t i, const std::vector<int64_t>& dims, Tensor** out) {
  Tensor& t = ctx.output(i);
  if (t.data == nullptr && !(t.dims == dims && t.elements() == 0)) return ctx.allocate_output(i, dims, out);
  if (t.dims != dims) return ctx.fail("output %zu: computed shape disagrees with the inferred one", i);
  *out = &t;
  return Status::Ok();
}

namespace {

template <class U>
void map_copy_t(const Tensor& in, Tensor& out, const std::vector<std::vector<int64_t>>& maps, const void* fill) {
  const U* src = in.as<const U>();
  U* dst = out.as<U>();
  U fv{};
  if (fill) std::memcpy(&fv, fill, sizeof(U));
  const int64_t r = out.rank();
  if (r == 0) {
    dst[0] = src[0];
    return;
  }
  const std::vector<int64_t> is = strides_of(in.dims);
  const int64_t inner = out.dims[r - 1];
  int64_t rows = 1;
  for (int64_t a = 0; a + 1 < r; ++a) rows *= out.dims[a];
  if (rows == 0 || inner == 0) return;
  const int64_t* im = maps[r - 1].data();
  bool contiguous = im[0] >= 0;
  for (int64_t j = 1; contiguous && j < inner; ++j) contiguous = im[j] == im[0] + j;
  const int64_t grain = std::max<int64_t>(1, 16384 / inner);
  parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    std::vector<int64_t> c(static_cast<size_t>(r - 1));
    for (int64_t a = r - 2, q = b; a >= 0; --a) {
      c[a] = q % out.dims[a];
      q /= out.dims[a];
    }
    for (int64_t row = b; row < e; ++row) {
      int64_t base = 0;
      bool fill_row = false;
      for (int64_t a = 0; a + 1 < r; ++a) {
        const int64_t m = maps[a][c[a]];
        if (m < 0) fill_row = true;
        base += m * is[a];
      }
      U* o = dst + row * inner;
      if (fill_row) {
        for (int64_t j = 0; j < inner; ++j) o[j] = fv;
      } else if (contiguous) {
        std::memcpy(o, src + base + im[0], static_cast<size_t>(inner) * sizeof(U));
      } else {
        const U* s = src + base;
        for (int64_t j = 0; j < inner; ++j) {
          const int64_t m = im[j];
          o[j] = m < 0 ? fv : s[m];
        }
      }
      for (int64_t a = r - 2; a >= 0; --a) {
        if (++c[a] < out.dims[a]) break;
        c[a] = 0;
      }
    }
  });
}

// One tile of a 4-byte transpose: out[c * out_stride + r] = in[r * in_stride + c]
// for r < rows, c < cols. Whole 8x8 blocks go through registers (eight row
// loads, three rounds of shuffles, eight column stores), so a block touches
// eight input lines: the plain column loop touched 32 lines per column, and
// when the rows are a multiple of 4 KiB apart (BERT's 3072-wide weights) all
// of them fall into one L1 set and every read missed.
OPENACL_AVX2_CLONES
void transpose_tile_4byte(const float* in, int64_t in_stride, float* out, int64_t out_stride, int64_t rows,
                          int64_t cols) {
  const int64_t r8 = rows / 8 * 8, c8 = cols / 8 * 8;
  for (int64_t r = 0; r < r8; r += 8)
    for (int64_t c = 0; c < c8; c += 8) {
      v8f v[8], t[8], s[8];
      for (int i = 0; i < 8; ++i) v[i] = ld8(in + (r + i) * in_stride + c);
      for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shufflevector(v[i], v[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        t[i + 1] = __builtin_shufflevector(v[i], v[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
      }
      for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; ++h) {
          s[i + 2 * h] = __builtin_shufflevector(t[i + h], t[i + h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
          s[i + 2 * h + 1] = __builtin_shufflevector(t[i + h], t[i + h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
      // s[k] (k < 4) holds rows 0-3 of columns k and k + 4; s[k + 4] rows 4-7.
      for (int k = 0; k < 4; ++k) {
        st8(out + (c + k) * out_stride + r, __builtin_shufflevector(s[k], s[k + 4], 0, 1, 2, 3, 8, 9, 10, 11));
        st8(out + (c + k + 4) * out_stride + r, __builtin_shufflevector(s[k], s[k + 4], 4, 5, 6, 7, 12, 13, 14, 15));
      }
    }
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = c < c8 ? r8 : 0; r < rows; ++r)
      std::memcpy(out + c * out_stride + r, in + r * in_stride + c, 4);  // bits as they are (int32 too)
}

// Tiled permute for when the innermost input axis moves: for every index of
// the other axes, a 2-D transpose between input axis A (innermost in the
// output) and the innermost input axis, in 32x32 tiles so reads and writes
// both stay in cache lines. NCHW->NHWC and batched matrix transposes land here.
template <class U>
void transpose_tiled(const U* in, U* out, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm) {
  constexpr int64_t kT = 32;
  const int64_t n = static_cast<int64_t>(perm.size());
  std::vector<int64_t> od(n);
  for (int64_t i = 0; i < n; ++i) od[i] = dims[perm[i]];
  const std::vector<int64_t> is = strides_of(dims), os = strides_of(od);
  const int64_t A = perm[n - 1];
  int64_t q = 0;
  while (perm[q] != n - 1) ++q;
  const int64_t R = dims[A], C = dims[n - 1], a_in = is[A], c_out = os[q];
  // The other output positions, outermost first.
  std::vector<int64_t> rest;
  for (int64_t i = 0; i + 1 < n; ++i)
    if (i != q) rest.push_back(i);
  int64_t outer = 1;
  for (int64_t i : rest) outer *= od[i];
  const int64_t tr = (R + kT - 1) / kT, tc = (C + kT - 1) / kT;
  parallel_for(outer * tr * tc, 4, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / (tr * tc);
      const int64_t rem = t % (tr * tc);
      int64_t ib = 0, ob = 0;
      for (int64_t k = static_cast<int64_t>(rest.size()) - 1; k >= 0; --k) {
        const int64_t pos = rest[k], c = o % od[pos];
        o /= od[pos];
        ib += c * is[perm[pos]];
        ob += c * os[pos];
      }
      const int64_t r0 = (rem / tc) * kT, c0 = (rem % tc) * kT;
      const int64_t r1 = std::min(R, r0 + kT), c1 = std::min(C, c0 + kT);
      if constexpr (sizeof(U) == 4) {
        transpose_tile_4byte(reinterpret_cast<const float*>(in + ib + r0 * a_in + c0), a_in,
                             reinterpret_cast<float*>(out + ob + c0 * c_out + r0), c_out, r1 - r0, c1 - c0);
        continue;
      }
      for (int64_t c = c0; c < c1; ++c) {
        const U* src = in + ib + c;
        U* dst = out + ob + c * c_out;
        for (int64_t r = r0; r < r1; ++r) dst[r] = src[r * a_in];
      }
    }
  });
}

// Generic strided permute; each "element" is `block` contiguous bytes.
void transpose_generic(const char* in, char* out, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm,
                       size_t block) {
  const int64_t r = static_cast<int64_t>(perm.size());
  const std::vector<int64_t> is = strides_of(dims);
  std::vector<int64_t> od(r), st(r);
  for (int64_t i = 0; i < r; ++i) {
    od[i] = dims[perm[i]];
    st[i] = is[perm[i]];
  }
  const int64_t inner = od[r - 1], istep = st[r - 1];
  int64_t rows = 1;
  for (int64_t a = 0; a + 1 < r; ++a) rows *= od[a];
  auto body = [&](auto tag, int64_t b, int64_t e) {
    using U = typename decltype(tag)::type;
    std::vector<int64_t> c(static_cast<size_t>(r > 1 ? r - 1 : 0));
    for (int64_t a = r - 2, q = b; a >= 0; --a) {
      c[a] = q % od[a];
      q /= od[a];
    }
    for (int64_t row = b; row < e; ++row) {
      int64_t base = 0;
      for (int64_t a = 0; a + 1 < r; ++a) base += c[a] * st[a];
      char* o = out + row * inner * static_cast<int64_t>(block);
      if constexpr (std::is_same_v<U, void>) {
        for (int64_t j = 0; j < inner; ++j) std::memcpy(o + j * block, in + (base + j * istep) * block, block);
      } else {
        const U* s = reinterpret_cast<const U*>(in) + base;
        U* ot = reinterpret_cast<U*>(o);
        for (int64_t j = 0; j < inner; ++j) ot[j] = s[j * istep];
      }
      for (int64_t a = r - 2; a >= 0; --a) {
        if (++c[a] < od[a]) break;
        c[a] = 0;
      }
    }
  };
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
    if (!dispatch_size(block, [&](auto tag) { body(tag, b, e); })) body(TypeTag<void>{}, b, e);
  });
}

}  // namespace

void map_copy(const Tensor& in, Tensor& out, const std::vector<std::vector<int64_t>>& maps, const void* fill) {
  if (out.elements() == 0) return;
  dispatch_size(elem_size(out), [&](auto tag) { map_copy_t<typename decltype(tag)::type>(in, out, maps, fill); });
}

void transpose_bytes(const void* in, void* out, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm,
                     size_t esize) {
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  if (total == 0) return;
  // Drop size-1 axes, then merge output-adjacent axes that are adjacent in the
  // input too: NCHW->NHWC becomes a batched [C, HW] transpose.
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> runs_first, runs_len;  // in output order: first input axis, length
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t p = perm[i];
    if (dims[p] == 1) continue;
    if (!runs_first.empty()) {
      // Extends the previous run when p follows its last axis (skipping 1s).
      int64_t last = runs_first.back() + runs_len.back() - 1;
      int64_t next = last + 1;
      while (next < rank && dims[next] == 1) ++next;
      if (next == p) {
        runs_len.back() = p - runs_first.back() + 1;
        continue;
      }
    }
    runs_first.push_back(p);
    runs_len.push_back(1);
  }
  const int64_t n = static_cast<int64_t>(runs_first.size());
  if (n <= 1) {
    std::memcpy(out, in, static_cast<size_t>(total) * esize);
    return;
  }
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return runs_first[a] < runs_first[b]; });
  std::vector<int64_t> cdims(n), cperm(n), rank_of(n);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t run = order[k];
    rank_of[run] = k;
    int64_t d = 1;
    for (int64_t a = runs_first[run]; a < runs_first[run] + runs_len[run]; ++a) d *= dims[a];
    cdims[k] = d;
  }
  for (int64_t i = 0; i < n; ++i) cperm[i] = rank_of[i];
  if (cperm[n - 1] != n - 1 && dispatch_size(esize, [&](auto tag) {
        using U = typename decltype(tag)::type;
        transpose_tiled(static_cast<const U*>(in), static_cast<U*>(out), cdims, cperm);
      }))
    return;
  // The innermost input axis staying innermost: move it as one block.
  size_t block = esize;
  if (cperm[n - 1] == n - 1) {
    block *= static_cast<size_t>(cdims[n - 1]);
    cdims.pop_back();
    cperm.pop_back();
  }
  transpose_generic(static_cast<const char*>(in), static_cast<char*>(out), cdims, cperm, block);
}

}  // namespace openacl::kernels::cpu
