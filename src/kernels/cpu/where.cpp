// Where(condition, X, Y): a three-way numpy broadcast choosing X where the
// bool condition holds, else Y. Only bytes move, so it runs on the element
// size, not the type: every fixed-size type (bool ... float64) takes one of
// four instantiations.
#include "kernels/cpu/broadcast.h"

namespace openacl::kernels::cpu {
namespace {

template <class T>
void where_run(const uint8_t* c, int64_t sc, const T* x, int64_t sx, const T* y, int64_t sy, T* out, int64_t n) {
  if (sc && sx && sy) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i] : y[i];
  } else if (sc) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? x[i * sx] : y[i * sy];
  } else {
    // One condition for the whole run: a copy or a fill.
    const T* src = *c ? x : y;
    const int64_t s = *c ? sx : sy;
    if (s) std::copy(src, src + n, out);
    else std::fill(out, out + n, *src);
  }
}

template <class T>
bool where_typed(const Tensor& c, const Tensor& x, const Tensor& y, Tensor& out) {
  BroadcastPlan<3> p;
  if (!plan_broadcast<3>({&c.dims, &x.dims, &y.dims}, out.dims, &p)) return false;
  const uint8_t* cp = c.as<uint8_t>();  // bytes, so any nonzero value is true
  const T* xp = x.as<T>();
  const T* yp = y.as<T>();
  T* op = out.as<T>();
  for_each_run(p, kElementwiseGrain,
               [&](int64_t o, const std::array<int64_t, 3>& off, const std::array<int64_t, 3>& s, int64_t n) {
                 where_run(cp + off[0], s[0], xp + off[1], s[1], yp + off[2], s[2], op + o, n);
               });
  return true;
}

Status where(KernelContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  Tensor& out = ctx.output(0);
  if (c.dtype != DType::kBool) return ctx.fail("condition must be bool, got %s", graph::dtype_name(c.dtype));
  if (x.dtype != y.dtype || out.dtype != x.dtype)
    return ctx.fail("X and Y must share a type, got %s and %s", graph::dtype_name(x.dtype), graph::dtype_name(y.dtype));
  bool ok = false;
  switch (graph::dtype_bytes(x.dtype)) {
    case 1: ok = where_typed<uint8_t>(c, x, y, out); break;
    case 2: ok = where_typed<uint16_t>(c, x, y, out); break;
    case 4: ok = where_typed<uint32_t>(c, x, y, out); break;
    case 8: ok = where_typed<uint64_t>(c, x, y, out); break;
    default: return ctx.fail("element type %s is not supported", graph::dtype_name(x.dtype));
  }
  if (!ok) return ctx.fail("input shapes do not broadcast to the output shape");
  return Status::Ok();
}

// X's type is input 1; the condition (input 0) is checked in the kernel.
OPENACL_REGISTER_KERNEL(Where, "cpu").types(all_types(), 1).run(where);

}  // namespace
}  // namespace openacl::kernels::cpu
