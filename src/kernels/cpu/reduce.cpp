// Reduce* ops: one strided reduction engine.
//
// The input is collapsed (size-1 dims dropped, neighbouring dims with the same
// reduced/kept status merged). Three paths then cover every axes set:
//  - [outer, R]           each output reduces one contiguous row (8 lanes so
//                         the compiler vectorises any combine);
//  - [outer, R, inner]    lanes run over the contiguous inner dim;
//  - anything else        per output, a list of reduced offsets, each one a
//                         contiguous run when the last dim is reduced.
// Accumulation is in float for float16/bfloat16, in 64-bit integers for
// integers (double where the result is not an integer: Mean, L2, LogSum*).
// Reducing an empty set gives the op's identity: sum 0, prod 1, max -inf
// (false for bool), min +inf, log-sum -inf, as ONNX's tests expect.
#include <cmath>
#include <limits>
#include <string>

#include "kernels/cpu/reduce_util.h"

namespace openacl::kernels::cpu {
namespace {

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kExpShifted, kSumSquare };

template <Kind K, class A>
struct Op {
  static A map(A x, A s) {
    if constexpr (K == Kind::kL1) return x < A(0) ? A(0) - x : x;
    else if constexpr (K == Kind::kL2 || K == Kind::kSumSquare) return x * x;
    else if constexpr (K == Kind::kExpShifted) return static_cast<A>(std::exp(x - s));
    else return x;
  }
  static A comb(A a, A b) {
    if constexpr (K == Kind::kMax) {
      if constexpr (std::is_floating_point_v<A>) return (b > a || b != b) ? b : a;
      else return b > a ? b : a;
    } else if constexpr (K == Kind::kMin) {
      if constexpr (std::is_floating_point_v<A>) return (b < a || b != b) ? b : a;
      else return b < a ? b : a;
    } else if constexpr (K == Kind::kProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
};

// Identity element, as the accumulator type; bounds of T (not of A) for max/min.
template <Kind K, class T, class A>
A init_value() {
  if constexpr (K == Kind::kProd) return A(1);
  else if constexpr (K == Kind::kMax) {
    if constexpr (is_float_v<T>) return -std::numeric_limits<A>::infinity();
    else return static_cast<A>(std::numeric_limits<T>::lowest());
  } else if constexpr (K == Kind::kMin) {
    if constexpr (is_float_v<T>) return std::numeric_limits<A>::infinity();
    else return static_cast<A>(std::numeric_limits<T>::max());
  } else {
    return A(0);
  }
}

// The collapsed problem.
struct Layout {
  std::vector<int64_t> dims, strides;  // merged dims and their input strides
  std::vector<char> red;               // reduced?
  int64_t out_n = 1, red_n = 1;        // outputs, elements reduced into each
};

Layout collapse(const std::vector<int64_t>& in_dims, const std::vector<bool>& reduced) {
  Layout L;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    const int64_t d = in_dims[i];
    if (reduced[i]) L.red_n *= d;
    else L.out_n *= d;
    if (d == 1) continue;
    if (!L.dims.empty() && L.red.back() == static_cast<char>(reduced[i])) {
      L.dims.back() *= d;
    } else {
      L.dims.push_back(d);
      L.red.push_back(static_cast<char>(reduced[i]));
    }
  }
  L.strides = strides_of(L.dims);
  return L;
}

template <Kind K, class T, class A>
A row_reduce(const T* p, int64_t n, A init, A s) {
  using O = Op<K, A>;
  A lanes[8];
  for (int l = 0; l < 8; ++l) lanes[l] = init;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) lanes[l] = O::comb(lanes[l], O::map(static_cast<A>(load(p[i + l])), s));
  A r = init;
  for (int l = 0; l < 8; ++l) r = O::comb(r, lanes[l]);
  for (; i < n; ++i) r = O::comb(r, O::map(static_cast<A>(load(p[i])), s));
  return r;
}

// acc[o] = the reduction of output o's elements; `shift` (per output, may be
// null) is passed to map (exp(x - max) for LogSumExp).
template <Kind K, class T, class A>
void reduce_into(const T* x, const Layout& L, A init, const A* shift, A* acc) {
  using O = Op<K, A>;
  const size_t nd = L.dims.size();
  auto sh = [&](int64_t o) { return shift ? shift[o] : A(0); };
  // [outer, R] (also: nothing reduced, R = 1; everything reduced, outer = 1).
  if (nd <= 1 || (nd == 2 && !L.red[0] && L.red[1])) {
    const int64_t R = nd == 0 ? 1 : (L.red.back() ? L.dims.back() : 1);
    const int64_t outer = L.out_n;
    if (R == 0) {
      for (int64_t o = 0; o < outer; ++o) acc[o] = init;
      return;
    }
    if (outer < 8 && R >= (int64_t{1} << 16)) {
      // Few long rows: split each row, reduce the pieces in parallel, merge.
      const int64_t pieces = std::min<int64_t>(64, R / 8192);
      std::vector<A> part(static_cast<size_t>(outer * pieces));
      parallel_for(outer * pieces, 1, [&](int64_t b, int64_t e) {
        for (int64_t it = b; it < e; ++it) {
          const int64_t o = it / pieces, c = it % pieces;
          const int64_t r0 = c * R / pieces, r1 = (c + 1) * R / pieces;
          part[static_cast<size_t>(it)] = row_reduce<K, T, A>(x + o * R + r0, r1 - r0, init, sh(o));
        }
      });
      for (int64_t o = 0; o < outer; ++o) {
        A r = init;
        for (int64_t c = 0; c < pieces; ++c) r = O::comb(r, part[static_cast<size_t>(o * pieces + c)]);
        acc[o] = r;
      }
      return;
    }
    parallel_for(outer, std::max<int64_t>(1, 32768 / R), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) acc[o] = row_reduce<K, T, A>(x + o * R, R, init, sh(o));
    });
    return;
  }
  // [outer?, R, inner].
  const bool three_parts = (nd == 2 && L.red[0] && !L.red[1]) || (nd == 3 && !L.red[0] && L.red[1] && !L.red[2]);
  if (three_parts) {
    const int64_t inner = L.dims.back(), R = L.dims[nd - 2];
    const int64_t outer = nd == 3 ? L.dims[0] : 1;
    constexpr int64_t kB = 256;  // lanes per block: 1 KiB of float per row, fewer pages per pass
    const int64_t nb = (inner + kB - 1) / kB;
    parallel_for(outer * nb, std::max<int64_t>(1, 16384 / (kB * std::max<int64_t>(R, 1))), [&](int64_t b, int64_t e) {
      A a[kB];
      A s[kB];
      for (int64_t it = b; it < e; ++it) {
        const int64_t o = it / nb, j0 = (it % nb) * kB, len = std::min(kB, inner - j0);
        const int64_t out0 = o * inner + j0;
        for (int64_t j = 0; j < len; ++j) {
          a[j] = init;
          s[j] = sh(out0 + j);
        }
        const T* base = x + o * R * inner + j0;
        for (int64_t r = 0; r < R; ++r) {
          const T* p = base + r * inner;
#pragma omp simd
          for (int64_t j = 0; j < len; ++j) a[j] = O::comb(a[j], O::map(static_cast<A>(load(p[j])), s[j]));
        }
        for (int64_t j = 0; j < len; ++j) acc[out0 + j] = a[j];
      }
    });
    return;
  }
  // General: kept dims walk the outputs, reduced dims become an offset list.
  std::vector<int64_t> kdims, kstr, rdims, rstr;
  for (size_t i = 0; i < nd; ++i) {
    (L.red[i] ? rdims : kdims).push_back(L.dims[i]);
    (L.red[i] ? rstr : kstr).push_back(L.strides[i]);
  }
  int64_t run = 1;
  if (L.red.back()) {  // the last dim is reduced and contiguous: one run
    run = rdims.back();
    rdims.pop_back();
    rstr.pop_back();
  }
  std::vector<int64_t> roff(1, 0);
  for (size_t i = 0; i < rdims.size(); ++i) {
    std::vector<int64_t> next;
    next.reserve(roff.size() * static_cast<size_t>(rdims[i]));
    for (int64_t o : roff)
      for (int64_t k = 0; k < rdims[i]; ++k) next.push_back(o + k * rstr[i]);
    roff.swap(next);
  }
  const int64_t work = std::max<int64_t>(1, L.red_n);
  parallel_for(L.out_n, std::max<int64_t>(1, 32768 / work), [&](int64_t b, int64_t e) {
    std::vector<int64_t> idx(kdims.size(), 0);
    int64_t base = 0, rem = b;
    for (size_t i = kdims.size(); i-- > 0;) {
      idx[i] = rem % kdims[i];
      rem /= kdims[i];
      base += idx[i] * kstr[i];
    }
    for (int64_t o = b; o < e; ++o) {
      A r = init;
      for (int64_t off : roff) r = O::comb(r, row_reduce<K, T, A>(x + base + off, run, init, sh(o)));
      acc[o] = r;
      for (size_t i = kdims.size(); i-- > 0;) {
        base += kstr[i];
        if (++idx[i] < kdims[i]) break;
        base -= idx[i] * kstr[i];
        idx[i] = 0;
      }
    }
  });
}

template <Kind K, class T, class A>
void reduce_typed(const Tensor& x, const Layout& L, Tensor* y) {
  const T* xp = x.as<T>();
  T* yp = y->as<T>();
  const int64_t n = L.red_n, outs = L.out_n;
  std::vector<A> acc(static_cast<size_t>(outs));
  if constexpr (K == Kind::kLogSumExp) {
    std::vector<A> mx(static_cast<size_t>(outs));
    reduce_into<Kind::kMax, T, A>(xp, L, init_value<Kind::kMax, T, A>(), nullptr, mx.data());
    for (A& m : mx)
      if (!std::isfinite(static_cast<double>(m))) m = A(0);  // all +-inf or empty: no shift
    reduce_into<Kind::kExpShifted, T, A>(xp, L, A(0), mx.data(), acc.data());
    for (int64_t o = 0; o < outs; ++o) yp[o] = store<T>(std::log(acc[o]) + mx[o]);
    return;
  } else {
    reduce_into<K, T, A>(xp, L, init_value<K, T, A>(), nullptr, acc.data());
  }
  for (int64_t o = 0; o < outs; ++o) {
    const A a = acc[o];
    if constexpr (K == Kind::kMean) yp[o] = store<T>(std::is_integral_v<A> ? static_cast<double>(a) / n : a / A(n));
    else if constexpr (K == Kind::kL2) yp[o] = store<T>(std::sqrt(a));
    else if constexpr (K == Kind::kLogSum) yp[o] = store<T>(std::log(a));
    else yp[o] = store<T>(a);
  }
}

// Which accumulator a T uses for kind K.
template <Kind K, class T>
void reduce_dispatch(const Tensor& x, const Layout& L, Tensor* y) {
  if constexpr (std::is_same_v<T, double>) reduce_typed<K, T, double>(x, L, y);
  else if constexpr (is_float_v<T>) reduce_typed<K, T, float>(x, L, y);
  else if constexpr (K == Kind::kLogSumExp) reduce_typed<K, T, double>(x, L, y);
  else if constexpr (std::is_unsigned_v<T> && !std::is_same_v<T, bool>) reduce_typed<K, T, uint64_t>(x, L, y);
  else reduce_typed<K, T, int64_t>(x, L, y);
}

// From this opset the op reads axes from input 1 (ReduceSum: 13, others: 18).
int axes_input_since(const std::string& op) { return op == "ReduceSum" ? 13 : 18; }

template <Kind K>
Status reduce(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  const bool as_input = ctx.opset() <= 0 || ctx.opset() >= axes_input_since(ctx.node().op_type);
  const bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
  std::vector<int64_t> axes;
  if (as_input) {
    if (ctx.has_input(1) && !red::read_ints(ctx.input(1), &axes))
      return ctx.fail("axes (input 1) must be int64, got %s", graph::dtype_name(ctx.input(1).dtype));
  } else {
    axes = ctx.attrs().get_ints("axes").value_or(std::vector<int64_t>{});
  }
  std::vector<bool> reduced(static_cast<size_t>(r), false);
  if (axes.empty()) {
    const bool noop = as_input && ctx.attrs().get_int("noop_with_empty_axes", 0) != 0;
    if (!noop) reduced.assign(static_cast<size_t>(r), true);
  }
  for (int64_t a : axes) {
    int64_t n = 0;
    if (!red::norm_axis(a, r, &n))
      return ctx.fail("axis %lld is out of range for rank %lld", static_cast<long long>(a), static_cast<long long>(r));
    reduced[static_cast<size_t>(n)] = true;
  }
  std::vector<int64_t> out_dims;
  for (int64_t i = 0; i < r; ++i) {
    if (!reduced[static_cast<size_t>(i)]) out_dims.push_back(x.dims[static_cast<size_t>(i)]);
    else if (keepdims) out_dims.push_back(1);
  }
  Tensor* y = nullptr;
  OPENACL_RETURN_IF_ERROR(red::output_with_dims(ctx, 0, out_dims, &y));
  if (y->elements() == 0) return Status::Ok();
  const Layout L = collapse(x.dims, reduced);
  const bool ok = dispatch<kAll>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_dispatch<K, T>(x, L, y);
  });
  if (!ok) return ctx.fail("%s does not handle %s", ctx.node().op_type.c_str(), graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(ReduceSum, "cpu").types(numeric_types()).run(reduce<Kind::kSum>);
OPENACL_REGISTER_KERNEL(ReduceMean, "cpu").types(numeric_types()).run(reduce<Kind::kMean>);
OPENACL_REGISTER_KERNEL(ReduceMax, "cpu").types(all_types()).run(reduce<Kind::kMax>);
OPENACL_REGISTER_KERNEL(ReduceMin, "cpu").types(all_types()).run(reduce<Kind::kMin>);
OPENACL_REGISTER_KERNEL(ReduceProd, "cpu").types(numeric_types()).run(reduce<Kind::kProd>);
OPENACL_REGISTER_KERNEL(ReduceL1, "cpu").types(numeric_types()).run(reduce<Kind::kL1>);
OPENACL_REGISTER_KERNEL(ReduceL2, "cpu").types(numeric_types()).run(reduce<Kind::kL2>);
OPENACL_REGISTER_KERNEL(ReduceLogSum, "cpu").types(numeric_types()).run(reduce<Kind::kLogSum>);
OPENACL_REGISTER_KERNEL(ReduceLogSumExp, "cpu").types(numeric_types()).run(reduce<Kind::kLogSumExp>);
OPENACL_REGISTER_KERNEL(ReduceSumSquare, "cpu").types(numeric_types()).run(reduce<Kind::kSumSquare>);

}  // namespace
}  // namespace openacl::kernels::cpu
