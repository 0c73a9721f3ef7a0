// Binary arithmetic with numpy broadcasting: Add Sub Mul Div Mod BitShift
// BitwiseAnd/Or/Xor (Pow is in binary_pow.cpp).
//
// Integers wrap around (two's complement) like numpy. Integer division and
// modulo by zero are defined, not errors: x / 0 = 0 and x % 0 = 0 (numpy's
// results), and INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0 (no trap). Checking
// for zero would need a pass over B before writing anything; a defined value
// keeps the kernel one pass and never crashes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "kernels/cpu/binary_common.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/simd8.h"

namespace openacl::kernels::cpu {
namespace {

struct AddOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
    else return a + b;
  }
};
struct SubOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
    else return a - b;
  }
};
struct MulOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
    else return a * b;
  }
};
struct DivOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return static_cast<T>(WrapType<T>(0) - static_cast<WrapType<T>>(a));
      return static_cast<T>(a / b);  // truncates toward zero, as ONNX specifies
    } else {
      return a / b;
    }
  }
};

// fmod=0 on integers: the remainder takes the divisor's sign (Python's %).
struct IntModOp {
  template <class T>
  T operator()(T a, T b) const {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
      T r = static_cast<T>(a % b);
      if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      return static_cast<T>(a % b);
    }
  }
};
// fmod=1: C's fmod / truncated %, the remainder takes the dividend's sign.
struct FmodOp {
  template <class T>
  T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<T>)
        if (b == -1) return 0;
      return static_cast<T>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
// fmod=0 on floats (opset 28): numpy.mod — the remainder takes the divisor's
// sign, a zero remainder is a zero of the divisor's sign; NaN for x mod 0 and
// inf mod y.
struct FloatFloorModOp {
  template <class T>
  T operator()(T a, T b) const {
    T r = std::fmod(a, b);
    if (r == 0) return std::copysign(T(0), b);
    if ((r < 0) != (b < 0)) r += b;
    return r;
  }
};

struct BitAndOp {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct BitOrOp {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct BitXorOp {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

// Shifts by a negative amount or by >= the bit width give 0 (LEFT) or the
// sign fill (RIGHT: -1 for negative signed x, else 0), as the opset 28 spec
// defines; left shifts of signed values shift the bit pattern.
template <class T>
inline bool shift_out_of_range(T b) {
  if constexpr (std::is_signed_v<T>)
    if (b < 0) return true;
  return static_cast<uint64_t>(b) >= sizeof(T) * 8;
}
struct ShiftLeftOp {
  template <class T>
  T operator()(T a, T b) const {
    using U = WrapType<T>;
    if (shift_out_of_range(b)) return 0;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<unsigned>(b)));
  }
};
struct ShiftRightOp {
  template <class T>
  T operator()(T a, T b) const {
    if (shift_out_of_range(b)) {
      if constexpr (std::is_signed_v<T>) return a < 0 ? T(-1) : T(0);
      else return 0;
    }
    return static_cast<T>(a >> static_cast<unsigned>(b));  // arithmetic for signed (C++20)
  }
};

Status add(KernelContext& ctx) { return binary_same_type<kNumeric, false>(ctx, AddOp{}); }
Status sub(KernelContext& ctx) { return binary_same_type<kNumeric, false>(ctx, SubOp{}); }
Status mul(KernelContext& ctx) { return binary_same_type<kNumeric, false>(ctx, MulOp{}); }
Status div(KernelContext& ctx) { return binary_same_type<kNumeric, false>(ctx, DivOp{}); }

// out[s, j] = in[s, j] * scale[j] over S pixels of one block of b channels
// (b = 8 or 16: whole vectors of 8 in the AVX2 clone).
OPENACL_AVX2_CLONES void scale_block(const float* in, float* out, int64_t S, int64_t b, const float* scale) {
  if (b % 8 != 0) {
    for (int64_t s = 0; s < S; ++s)
      for (int64_t j = 0; j < b; ++j) out[s * b + j] = in[s * b + j] * scale[j];
    return;
  }
  for (int64_t j = 0; j < b; j += 8) {
    const v8f f = ld8(scale + j);
    for (int64_t s = 0; s < S; ++s) st8(out + s * b + j, ld8(in + s * b + j) * f);
  }
}

// Mul whose output the layout pass left channel-blocked while one operand is
// a plain per-channel scale [N or 1, C, 1, ...] (a squeeze-excite gate,
// model/layout.h): the scale's channel c multiplies lane c % b of block c / b.
// Where the blocks pad C, the last block's padding lanes are scaled by 0.
class BlockedChannelScaleMul final : public Kernel {
 public:
  BlockedChannelScaleMul(int64_t block, size_t scale) : block_(block), scale_(scale) {}

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(1 - scale_);
    const Tensor& sc = ctx.input(scale_);
    Tensor& y = ctx.output(0);
    const int64_t b = block_;
    bool ok = x.dtype == DType::kFloat32 && sc.dtype == DType::kFloat32 && x.dims == y.dims && y.rank() >= 3 &&
              sc.rank() == y.rank() && (sc.dims[0] == 1 || sc.dims[0] == y.dims[0]) && sc.dims[1] == y.dims[1] &&
              b <= 16;
    for (int64_t i = 2; ok && i < sc.rank(); ++i) ok = sc.dims[i] == 1;
    if (!ok) return ctx.fail("blocked Mul takes a tensor and a per-channel scale (internal error)");
    const int64_t N = y.dims[0], C = y.dims[1], blocks = (C + b - 1) / b;
    int64_t S = 1;
    for (int64_t i = 2; i < y.rank(); ++i) S *= y.dims[i];
    const float* xp = x.as<float>();
    const float* sp = sc.as<float>();
    float* yp = y.as<float>();
    const bool per_image = sc.dims[0] != 1;
    parallel_for(N * blocks, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, S * b)), [&](int64_t lo, int64_t hi) {
      for (int64_t q = lo; q < hi; ++q) {
        const float* scale = sp + (per_image ? q / blocks * C : 0) + q % blocks * b;
        const int64_t tail = C - q % blocks * b;  // channels in this block
        alignas(64) float padded[16];
        if (tail < b) {  // the padding lanes: scaled by 0, and the scale is not read past C
          std::fill(padded + tail, padded + b, 0.f);
          std::memcpy(padded, scale, static_cast<size_t>(tail) * sizeof(float));
          scale = padded;
        }
        scale_block(xp + q * S * b, yp + q * S * b, S, b, scale);
      }
    });
    return Status::Ok();
  }

 private:
  const int64_t block_;
  const size_t scale_;
};

Status make_mul(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  if (init.num_inputs() == 2 && init.num_outputs() == 1 && init.has_input(0) && init.has_input(1)) {
    if (const int64_t b = blocked_block(init.attrs(), true, 0, init.output(0))) {
      const auto& y = init.output(0).shape;
      for (size_t scale = 0; scale < 2; ++scale)
        if (init.input(scale).shape != y) {
          *out = std::make_unique<BlockedChannelScaleMul>(b, scale);
          return Status::Ok();
        }
    }
  }
  *out = make_function_kernel(mul);  // same-shape operands (blocked or not) are flat arrays
  return Status::Ok();
}

constexpr int64_t kCostlyGrain = 2048;

Status mod(KernelContext& ctx) {
  const int64_t fmod = ctx.attrs().get_int("fmod", 0);
  if (fmod != 0 && fmod != 1) return ctx.fail("attribute 'fmod' must be 0 or 1, got %lld", (long long)fmod);
  const DType t = ctx.input(0).dtype;
  if (graph::dtype_is_float(t))
    return fmod ? binary_same_type<kFloats, false>(ctx, FmodOp{}, kCostlyGrain)
                : binary_same_type<kFloats, false>(ctx, FloatFloorModOp{}, kCostlyGrain);
  return fmod ? binary_same_type<kInts, false>(ctx, FmodOp{}) : binary_same_type<kInts, false>(ctx, IntModOp{});
}

Status bitshift(KernelContext& ctx) {
  const std::string dir = ctx.attrs().get_string("direction", "");
  if (dir == "LEFT") return binary_same_type<kInts, false>(ctx, ShiftLeftOp{});
  if (dir == "RIGHT") return binary_same_type<kInts, false>(ctx, ShiftRightOp{});
  return ctx.fail("attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \"%s\"", dir.c_str());
}

Status bitwise_and(KernelContext& ctx) { return binary_same_type<kInts, false>(ctx, BitAndOp{}); }
Status bitwise_or(KernelContext& ctx) { return binary_same_type<kInts, false>(ctx, BitOrOp{}); }
Status bitwise_xor(KernelContext& ctx) { return binary_same_type<kInts, false>(ctx, BitXorOp{}); }

OPENACL_REGISTER_KERNEL(Add, "cpu").types(numeric_types()).run(add);
OPENACL_REGISTER_KERNEL(Sub, "cpu").types(numeric_types()).run(sub);
OPENACL_REGISTER_KERNEL(Mul, "cpu").types(numeric_types()).create(make_mul);
OPENACL_REGISTER_KERNEL(Div, "cpu").types(numeric_types()).run(div);
OPENACL_REGISTER_KERNEL(Mod, "cpu").types(numeric_types()).run(mod);
OPENACL_REGISTER_KERNEL(BitShift, "cpu").types(int_types()).run(bitshift);
OPENACL_REGISTER_KERNEL(BitwiseAnd, "cpu").types(int_types()).run(bitwise_and);
OPENACL_REGISTER_KERNEL(BitwiseOr, "cpu").types(int_types()).run(bitwise_or);
OPENACL_REGISTER_KERNEL(BitwiseXor, "cpu").types(int_types()).run(bitwise_xor);

}  // namespace
}  // namespace openacl::kernels::cpu
