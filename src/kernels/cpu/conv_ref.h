// Window geometry (Conv, ConvTranspose, pooling) and the reference
// convolution kernels: plain loops, correct for every attribute combination,
// used for float64/float16/bfloat16, when oneDNN is absent or declines a case,
// and as the oracle in the tests.
//
// Spatial ranks 1..3 are promoted to 3-D (leading axes of size 1, kernel 1,
// stride 1, no padding) so one loop nest serves all of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/attribute.h"

namespace openacl::kernels::cpu {

constexpr int kMaxSpatial = 3;

struct WindowGeom {
  int nsp = 0;             // spatial rank before promotion (1..3)
  int64_t N = 0, C = 0;    // batch, input channels
  int64_t M = 0;           // output channels (Conv/ConvTranspose; C for pools)
  int64_t G = 1;           // groups
  // Per promoted axis (index 0..2 = D, H, W): sizes and window parameters.
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
  int64_t s[3] = {1, 1, 1}, d[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};  // may be negative for ConvTranspose
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

// Conv: x [N, C, sp...], w [M, C/G, k...]. Returns "" or what is wrong.
std::string conv_geom(const graph::AttributeMap& a, const std::vector<int64_t>& x, const std::vector<int64_t>& w,
                      WindowGeom* g);
// ConvTranspose: x [N, C, sp...], w [C, M/G, k...].
std::string conv_transpose_geom(const graph::AttributeMap& a, const std::vector<int64_t>& x,
                                const std::vector<int64_t>& w, WindowGeom* g);
// Pooling: kernel_shape from the attribute; honours ceil_mode.
std::string pool_geom(const graph::AttributeMap& a, const std::vector<int64_t>& x, WindowGeom* g);

// Output dims [N, M, out...] (unpromoted).
std::vector<int64_t> geom_out_dims(const WindowGeom& g);

// Reference Conv: y = conv(x, w) + b. T in {float, double}; x/w/b/y in T.
// b may be null.
template <class T>
void conv_ref(const WindowGeom& g, const T* x, const T* w, const T* b, T* y);
// Reference ConvTranspose.
template <class T>
void conv_transpose_ref(const WindowGeom& g, const T* x, const T* w, const T* b, T* y);

}  // namespace openacl::kernels::cpu

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {

// Tensor contents converted to C (float16/bfloat16 widen to float). Copies;
// used on the rare-dtype paths only.
template <class C>
std::vector<C> load_as(const Tensor& t) {
  std::vector<C> v(static_cast<size_t>(t.elements()));
  dispatch<kNumeric>(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.as<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<C>(load(p[i]));
  });
  return v;
}

template <class C>
void store_from(const std::vector<C>& v, Tensor& t) {
  dispatch<kNumeric>(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = t.as<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = store<T>(v[i]);
  });
}

}  // namespace openacl::kernels::cpu
