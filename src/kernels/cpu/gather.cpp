// Gather, GatherElements, GatherND. Indices are int32 or int64; negative ones
// wrap once; anything still out of range fails before a byte is written.
#include <cstring>

#include "base/file_map.h"

#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu {
namespace {

int64_t prod(const std::vector<int64_t>& d, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e && i < d.size(); ++i) n *= d[i];
  return n;
}

// Checks every index against `limit` (negatives wrap once); false on a bad
// one, in *bad. Gather then reads them in place: no copy.
bool check_indices(const Tensor& t, int64_t limit, int64_t* bad) {
  for (int64_t i = 0, n = t.elements(); i < n; ++i) {
    const int64_t v = index_at(t, i);
    if (v < -limit || v >= limit) {
      *bad = v;
      return false;
    }
  }
  return true;
}

inline int64_t wrapped(int64_t v, int64_t limit) { return v < 0 ? v + limit : v; }

// Rows of a table that lies in a mapped model file (base/file_map.h) are
// read from the file, not through the mapping, when the table is at least
// kReadTableFrom bytes and a row at least kReadRowsFrom: a few rows of a large
// embedding then make only themselves resident, not the page-cache folios
// around them. Below that, the mapping costs less than a system call a run.
constexpr size_t kReadTableFrom = kRegisterFrom;  // smaller files are not registered anyway
constexpr size_t kReadRowsFrom = 256;

// Reads all indices, wrapping negatives against `limit`; false on a bad one.
bool load_indices(const Tensor& t, int64_t limit, std::vector<int64_t>* out, int64_t* bad) {
  if (!check_indices(t, limit, bad)) return false;
  out->resize(static_cast<size_t>(t.elements()));
  for (size_t i = 0; i < out->size(); ++i) (*out)[i] = wrapped(index_at(t, static_cast<int64_t>(i)), limit);
  return true;
}

Status gather(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  Tensor& y = ctx.output(0);
  if (!is_index_type(idx.dtype)) return ctx.fail("indices must be int32 or int64");
  const int64_t r = x.rank();
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (!norm_axis(&axis, r)) return ctx.fail("axis %lld out of range", static_cast<long long>(axis));
  int64_t bad = 0;
  if (!check_indices(idx, x.dims[axis], &bad))
    return ctx.fail("index %lld out of range for axis of size %lld", static_cast<long long>(bad),
                    static_cast<long long>(x.dims[axis]));
  const int64_t outer = prod(x.dims, 0, axis), d = x.dims[axis], n = idx.elements();
  const int64_t inner = prod(x.dims, axis + 1, r);
  if (y.elements() != outer * n * inner) return ctx.fail("output dims disagree with the inputs");
  if (y.elements() == 0) return Status::Ok();
  const size_t es = elem_size(x);
  // The copies, with the index type fixed once (int32 or int64).
  auto copy = [&](const auto* ind) {
    if (inner == 1) {
      dispatch_size(es, [&](auto tag) {
        using U = typename decltype(tag)::type;
        const U* src = x.as<const U>();
        U* dst = y.as<U>();
        parallel_for(outer * n, 16384, [&](int64_t b, int64_t e) {
          int64_t o = b / n, j = b % n;
          for (int64_t k = b; k < e; ++k) {
            dst[k] = src[o * d + wrapped(ind[j], d)];
            if (++j == n) {
              j = 0;
              ++o;
            }
          }
        });
      });
      return;
    }
    const size_t row = static_cast<size_t>(inner) * es;
    const char* src = static_cast<const char*>(x.data);
    char* dst = static_cast<char*>(y.data);
    const int64_t grain = std::max<int64_t>(1, 65536 / static_cast<int64_t>(row));
    const FileSpan file = row >= kReadRowsFrom && x.bytes() >= kReadTableFrom ? file_span(x.data, x.bytes()) : FileSpan{};
    if (file.fd >= 0) {  // runs of consecutive rows, one pread each (the mapping if one fails)
      parallel_for(outer * n, grain, [&](int64_t b, int64_t e) {
        for (int64_t k = b, run; k < e; k += run) {
          const int64_t first = (k / n) * d + wrapped(ind[k % n], d);
          for (run = 1; k + run < e && (k + run) / n * d + wrapped(ind[(k + run) % n], d) == first + run;) ++run;
          const size_t at = static_cast<size_t>(first) * row, bytes = static_cast<size_t>(run) * row;
          if (!read_span(file, at, dst + k * row, bytes)) std::memcpy(dst + k * row, src + at, bytes);
        }
      });
      return;
    }
    parallel_for(outer * n, grain, [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k)
        std::memcpy(dst + k * row, src + ((k / n) * d + wrapped(ind[k % n], d)) * row, row);
    });
  };
  if (idx.dtype == DType::kInt32)
    copy(idx.as<const int32_t>());
  else
    copy(idx.as<const int64_t>());
  return Status::Ok();
}

Status gather_elements(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  Tensor& y = ctx.output(0);
  if (!is_index_type(idx.dtype)) return ctx.fail("indices must be int32 or int64");
  const int64_t r = x.rank();
  int64_t axis = ctx.attrs().get_int("axis", 0);
  if (!norm_axis(&axis, r)) return ctx.fail("axis %lld out of range", static_cast<long long>(axis));
  if (idx.rank() != r) return ctx.fail("indices must have the data's rank");
  for (int64_t a = 0; a < r; ++a)
    if (a != axis && idx.dims[a] > x.dims[a]) return ctx.fail("indices dim %lld exceeds the data's", static_cast<long long>(a));
  if (y.dims != idx.dims) return ctx.fail("output dims disagree with the indices");
  std::vector<int64_t> ind;
  int64_t bad = 0;
  if (!load_indices(idx, x.dims[axis], &ind, &bad))
    return ctx.fail("index %lld out of range for axis of size %lld", static_cast<long long>(bad),
                    static_cast<long long>(x.dims[axis]));
  const int64_t n = idx.elements();
  if (n == 0) return Status::Ok();
  const std::vector<int64_t> xs = strides_of(x.dims);
  dispatch_size(elem_size(x), [&](auto tag) {
    using U = typename decltype(tag)::type;
    const U* src = x.as<const U>();
    U* dst = y.as<U>();
    const int64_t inner = idx.dims[r - 1];
    const int64_t rows = n / inner;
    parallel_for(rows, std::max<int64_t>(1, 16384 / inner), [&](int64_t b, int64_t e) {
      std::vector<int64_t> c(static_cast<size_t>(r), 0);
      for (int64_t a = r - 2, q = b; a >= 0; --a) {
        c[a] = q % idx.dims[a];
        q /= idx.dims[a];
      }
      for (int64_t row = b; row < e; ++row) {
        int64_t base = 0;
        for (int64_t a = 0; a + 1 < r; ++a) base += (a == axis ? 0 : c[a] * xs[a]);
        const int64_t* ir = ind.data() + row * inner;
        if (axis == r - 1) {
          for (int64_t j = 0; j < inner; ++j) dst[row * inner + j] = src[base + ir[j]];
        } else {
          const int64_t as = xs[axis];
          for (int64_t j = 0; j < inner; ++j) dst[row * inner + j] = src[base + j + ir[j] * as];
        }
        for (int64_t a = r - 2; a >= 0; --a) {
          if (++c[a] < idx.dims[a]) break;
          c[a] = 0;
        }
      }
    });
  });
  return Status::Ok();
}

Status gather_nd(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  Tensor& y = ctx.output(0);
  if (!is_index_type(idx.dtype)) return ctx.fail("indices must be int32 or int64");
  const int64_t r = x.rank(), q = idx.rank();
  const int64_t bd = ctx.attrs().get_int("batch_dims", 0);
  if (q < 1 || bd < 0 || bd >= std::min(r, q)) return ctx.fail("batch_dims %lld invalid", static_cast<long long>(bd));
  const int64_t k = idx.dims[q - 1];
  if (k < 1 || bd + k > r) return ctx.fail("indices last dim %lld invalid", static_cast<long long>(k));
  for (int64_t a = 0; a < bd; ++a)
    if (x.dims[a] != idx.dims[a]) return ctx.fail("batch dims of data and indices differ");
  const int64_t batch = prod(x.dims, 0, bd);
  const int64_t per_batch = prod(idx.dims, bd, q - 1);  // index tuples per batch
  const int64_t slice = prod(x.dims, bd + k, r);
  const int64_t batch_stride = prod(x.dims, bd, r);
  if (y.elements() != batch * per_batch * slice) return ctx.fail("output dims disagree with the inputs");
  const std::vector<int64_t> xs = strides_of(x.dims);
  // Element offsets of each tuple, validated up front.
  const int64_t tuples = batch * per_batch;
  std::vector<int64_t> off(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t o = (t / std::max<int64_t>(per_batch, 1)) * batch_stride;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t raw = index_at(idx, t * k + j);
      const int64_t d = x.dims[bd + j];
      const int64_t v = raw < 0 ? raw + d : raw;
      if (v < 0 || v >= d) return ctx.fail("index %lld out of range for dim of size %lld", static_cast<long long>(raw),
                                           static_cast<long long>(d));
      o += v * xs[bd + j];
    }
    off[t] = o;
  }
  if (y.elements() == 0) return Status::Ok();
  const size_t es = elem_size(x), row = static_cast<size_t>(slice) * es;
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(y.data);
  parallel_for(tuples, std::max<int64_t>(1, 65536 / static_cast<int64_t>(row)), [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) std::memcpy(dst + t * row, src + off[t] * static_cast<int64_t>(es), row);
  });
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Gather, "cpu").types(movable_types()).run(gather);
OPENACL_REGISTER_KERNEL(GatherElements, "cpu").types(movable_types()).run(gather_elements);
OPENACL_REGISTER_KERNEL(GatherND, "cpu").types(movable_types()).run(gather_nd);

}  // namespace
}  // namespace openacl::kernels::cpu
