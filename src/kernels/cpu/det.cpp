// Det: determinant of each trailing [M, M] matrix, by LU decomposition with
// partial pivoting in double precision.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

template <class T>
void det_typed(const T* x, T* y, int64_t count, int64_t m) {
  parallel_for(count, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, m * m * m)), [&](int64_t b, int64_t e) {
    std::vector<double> a(static_cast<size_t>(m * m));
    for (int64_t k = b; k < e; ++k) {
      const T* src = x + k * m * m;
      for (int64_t i = 0; i < m * m; ++i) a[i] = static_cast<double>(load(src[i]));
      double det = 1.0;
      for (int64_t c = 0; c < m && det != 0.0; ++c) {
        int64_t piv = c;
        for (int64_t r = c + 1; r < m; ++r)
          if (std::abs(a[r * m + c]) > std::abs(a[piv * m + c])) piv = r;
        if (a[piv * m + c] == 0.0) {
          det = 0.0;
          break;
        }
        if (piv != c) {
          for (int64_t j = 0; j < m; ++j) std::swap(a[c * m + j], a[piv * m + j]);
          det = -det;
        }
        const double d = a[c * m + c];
        det *= d;
        for (int64_t r = c + 1; r < m; ++r) {
          const double f = a[r * m + c] / d;
          if (f == 0.0) continue;
          for (int64_t j = c + 1; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
        }
      }
      y[k] = store<T>(det);
    }
  });
}

Status det(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) return ctx.fail("Det needs rank >= 2");
  const int64_t m = x.dims[x.rank() - 1];
  if (x.dims[x.rank() - 2] != m) return ctx.fail("Det needs square matrices");
  const int64_t count = m == 0 ? ctx.output(0).elements() : x.elements() / (m * m);
  if (m == 0) {
    // The determinant of a 0x0 matrix is 1.
    dispatch<kFloats>(x.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t k = 0; k < count; ++k) ctx.output(0).as<T>()[k] = store<T>(1.0f);
    });
    return Status::Ok();
  }
  const bool ok = dispatch<kFloats>(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    det_typed<T>(x.as<T>(), ctx.output(0).as<T>(), count, m);
  });
  if (!ok) return ctx.fail("unsupported type %s", graph::dtype_name(x.dtype));
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(Det, "cpu").types(float_types()).run(det);

}  // namespace
}  // namespace openacl::kernels::cpu
