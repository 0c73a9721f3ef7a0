// Identity-like ops: the output is the input's bytes.
//
// Dropout runs as inference: y = x, mask all true. In training mode (opset 12+
// training_mode input true, or is_test = 0 before opset 7) with a ratio above
// 0 the output is random; ONNX leaves the generator unspecified, so no
// implementation can match another's bits (the `test_training_dropout*` node
// tests with ratio > 0 included): such nodes fail with a clear message
// instead of silently returning x. Training mode with ratio 0 is exact (scale
// 1, nothing dropped) and supported.
#include <cstring>
#include <string>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

Status copy_input0(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (y.data != x.data && x.bytes()) std::memcpy(y.data, x.data, x.bytes());
  return Status::Ok();
}

// Reads a float scalar of any float type (Dropout's ratio); false if it is not one.
bool scalar_as_double(const Tensor& t, double* v) {
  if (t.elements() != 1) return false;
  return dispatch<kFloats>(t.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *v = static_cast<double>(load(t.as<const T>()[0]));
  });
}

Status dropout(KernelContext& ctx) {
  bool training = false;
  double ratio = 0.5;
  if (ctx.opset() >= 12) {
    if (ctx.has_input(1) && !scalar_as_double(ctx.input(1), &ratio))
      return ctx.fail("Dropout ratio must be a floating-point scalar");
    if (ctx.has_input(2)) {
      const Tensor& t = ctx.input(2);
      if (t.dtype != DType::kBool || t.elements() != 1) return ctx.fail("Dropout training_mode must be a bool scalar");
      training = *t.as<const uint8_t>() != 0;
    }
  } else if (ctx.opset() < 7) {
    training = ctx.attrs().get_int("is_test", 0) == 0;
    ratio = ctx.attrs().get_float("ratio", 0.5f);
  }
  if (training && ratio != 0.0)
    return ctx.fail("Dropout in training mode with ratio %g drops random elements, which is not supported "
                    "(inference, or training with ratio 0, only)", ratio);
  OPENACL_RETURN_IF_ERROR(copy_input0(ctx));
  if (ctx.has_output(1)) {
    // The mask is bool from opset 10, x's type before: all ones either way.
    Tensor& mask = ctx.output(1);
    const bool ok = dispatch<kAll>(mask.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* m = mask.as<T>();
      const T one = store<T>(1.0f);
      for (int64_t i = 0, n = mask.elements(); i < n; ++i) m[i] = one;
    });
    if (!ok) return ctx.fail("Dropout mask type %s is not handled", graph::dtype_name(mask.dtype));
  }
  return Status::Ok();
}

// Byte copies need whole-byte elements: strings and packed 4-/2-bit types
// are not plain bytes here.
std::string plain_bytes(const KernelInit& init) {
  const DType t = init.input(0).dtype;
  if (graph::dtype_bytes(t) == 0) return std::string(graph::dtype_name(t)) + " tensors are not handled";
  return "";
}

// Refuses at compile time what run() would refuse, when the mode is known
// (is_test before opset 7; training_mode and ratio as constants from 12).
std::string dropout_supports(const KernelInit& init) {
  std::string why = plain_bytes(init);
  if (!why.empty()) return why;
  const char* kRandom = "Dropout in training mode with ratio > 0 is random: not supported (inference or ratio 0 only)";
  if (init.opset() < 7 && init.opset() >= 1 && init.attrs().get_int("is_test", 0) == 0 &&
      init.attrs().get_float("ratio", 0.5f) != 0.0f)
    return kRandom;
  if (init.opset() >= 12 && init.has_input(2)) {
    const graph::TensorData* mode = init.constant(2);
    if (!mode || mode->dtype != DType::kBool || mode->elements() != 1 || *mode->as<uint8_t>() == 0) return "";
    if (!init.has_input(1)) return kRandom;  // default ratio 0.5
    const graph::TensorData* r = init.constant(1);
    if (!r || r->elements() != 1) return "";
    double ratio = 0;
    const bool is_float = dispatch<kFloats>(r->dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      ratio = static_cast<double>(load(r->as<T>()[0]));
    });
    if (is_float && ratio != 0.0) return kRandom;
  }
  return "";
}

OPENACL_REGISTER_KERNEL(Identity, "cpu").supports(plain_bytes).in_place(0, 0).run(copy_input0);
OPENACL_REGISTER_KERNEL(Dropout, "cpu").supports(dropout_supports).in_place(0, 0).run(dropout);

}  // namespace
}  // namespace openacl::kernels::cpu
