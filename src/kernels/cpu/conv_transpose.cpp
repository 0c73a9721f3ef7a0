// ConvTranspose: the reference scatter loops (conv_ref.cpp), float32/float64;
// float16/bfloat16 widened to float. output_shape / auto_pad / output_padding
// are resolved by conv_transpose_geom (ONNX's total_padding equations).
// TODO(perf): oneDNN deconvolution for float32 like Conv.
#include "kernels/cpu/conv_ref.h"
#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

Status conv_transpose(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const bool has_b = ctx.has_input(2) && ctx.input(2).data;
  WindowGeom g;
  const std::string err = conv_transpose_geom(ctx.attrs(), x.dims, w.dims, &g);
  if (!err.empty()) return ctx.fail("%s", err.c_str());
  if (has_b && ctx.input(2).elements() != g.M)
    return ctx.fail("bias has %lld values, expected %lld", static_cast<long long>(ctx.input(2).elements()),
                    static_cast<long long>(g.M));
  if (w.dtype != x.dtype || (has_b && ctx.input(2).dtype != x.dtype)) return ctx.fail("X, W and B types differ");
  Tensor* y = &ctx.output(0);
  const std::vector<int64_t> od = geom_out_dims(g);
  if (!y->data || y->dims != od) OPENACL_RETURN_IF_ERROR(ctx.allocate_output(0, od, &y));
  if (y->elements() == 0) return Status::Ok();
  switch (x.dtype) {
    case DType::kFloat32:
      conv_transpose_ref<float>(g, x.as<float>(), w.as<float>(), has_b ? ctx.input(2).as<float>() : nullptr,
                                y->as<float>());
      return Status::Ok();
    case DType::kFloat64:
      conv_transpose_ref<double>(g, x.as<double>(), w.as<double>(), has_b ? ctx.input(2).as<double>() : nullptr,
                                 y->as<double>());
      return Status::Ok();
    case DType::kFloat16:
    case DType::kBFloat16: {
      const std::vector<float> xf = load_as<float>(x), wf = load_as<float>(w);
      const std::vector<float> bf = has_b ? load_as<float>(ctx.input(2)) : std::vector<float>();
      std::vector<float> yf(static_cast<size_t>(y->elements()));
      conv_transpose_ref<float>(g, xf.data(), wf.data(), has_b ? bf.data() : nullptr, yf.data());
      store_from(yf, *y);
      return Status::Ok();
    }
    default:
      return ctx.fail("unsupported type");
  }
}

OPENACL_REGISTER_KERNEL(ConvTranspose, "cpu").types(float_types()).run(conv_transpose);

}  // namespace
}  // namespace openacl::kernels::cpu
