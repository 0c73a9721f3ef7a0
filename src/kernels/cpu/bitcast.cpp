// BitCast (opset 26): the input's bytes reinterpreted as type `to` of the
// same width (little-endian host, so the bytes are copied as they are).
#include <cstring>
#include <string>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

Status bitcast(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  const size_t in = graph::dtype_bytes(x.dtype), out = graph::dtype_bytes(y.dtype);
  if (in == 0 || out == 0)
    return ctx.fail("BitCast between %s and %s is not supported (string or sub-byte type)", graph::dtype_name(x.dtype),
                    graph::dtype_name(y.dtype));
  if (in != out)
    return ctx.fail("BitCast needs types of the same width: %s is %zu bytes, %s is %zu", graph::dtype_name(x.dtype), in,
                    graph::dtype_name(y.dtype), out);
  if (y.data != x.data && x.bytes()) std::memcpy(y.data, x.data, x.bytes());
  return Status::Ok();
}

// Any fixed-width type (bool, complex and float8 included) is a plain copy;
// strings and the packed sub-byte types are not.
std::string fixed_width(const KernelInit& init) {
  for (graph::DType t : {init.input(0).dtype, init.output(0).dtype})
    if (graph::dtype_bytes(t) == 0) return std::string(graph::dtype_name(t)) + " has no fixed byte width";
  return "";
}

OPENACL_REGISTER_KERNEL(BitCast, "cpu").supports(fixed_width).run(bitcast);

}  // namespace
}  // namespace openacl::kernels::cpu
