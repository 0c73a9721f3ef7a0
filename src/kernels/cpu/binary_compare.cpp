// Comparisons (Equal Greater GreaterOrEqual Less LessOrEqual) and logical
// And/Or/Xor, with numpy broadcasting: same-typed inputs, bool output.
// 16-bit floats compare as float; NaN compares unequal/false like numpy.
#include "kernels/cpu/binary_common.h"

namespace openacl::kernels::cpu {
namespace {

struct EqOp {
  template <class T>
  bool operator()(T a, T b) const { return a == b; }
};
struct GtOp {
  template <class T>
  bool operator()(T a, T b) const { return a > b; }
};
struct GeOp {
  template <class T>
  bool operator()(T a, T b) const { return a >= b; }
};
struct LtOp {
  template <class T>
  bool operator()(T a, T b) const { return a < b; }
};
struct LeOp {
  template <class T>
  bool operator()(T a, T b) const { return a <= b; }
};
struct AndOp {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp {
  bool operator()(bool a, bool b) const { return a != b; }
};

Status equal(KernelContext& ctx) { return binary_same_type<kAll, true>(ctx, EqOp{}); }
Status greater(KernelContext& ctx) { return binary_same_type<kNumeric, true>(ctx, GtOp{}); }
Status greater_equal(KernelContext& ctx) { return binary_same_type<kNumeric, true>(ctx, GeOp{}); }
Status less(KernelContext& ctx) { return binary_same_type<kNumeric, true>(ctx, LtOp{}); }
Status less_equal(KernelContext& ctx) { return binary_same_type<kNumeric, true>(ctx, LeOp{}); }
Status logical_and(KernelContext& ctx) { return binary_same_type<kBool, true>(ctx, AndOp{}); }
Status logical_or(KernelContext& ctx) { return binary_same_type<kBool, true>(ctx, OrOp{}); }
Status logical_xor(KernelContext& ctx) { return binary_same_type<kBool, true>(ctx, XorOp{}); }

OPENACL_REGISTER_KERNEL(Equal, "cpu").types(all_types()).run(equal);
OPENACL_REGISTER_KERNEL(Greater, "cpu").types(numeric_types()).run(greater);
OPENACL_REGISTER_KERNEL(GreaterOrEqual, "cpu").types(numeric_types()).run(greater_equal);
OPENACL_REGISTER_KERNEL(Less, "cpu").types(numeric_types()).run(less);
OPENACL_REGISTER_KERNEL(LessOrEqual, "cpu").types(numeric_types()).run(less_equal);
OPENACL_REGISTER_KERNEL(And, "cpu").types({DType::kBool}).run(logical_and);
OPENACL_REGISTER_KERNEL(Or, "cpu").types({DType::kBool}).run(logical_or);
OPENACL_REGISTER_KERNEL(Xor, "cpu").types({DType::kBool}).run(logical_xor);

}  // namespace
}  // namespace openacl::kernels::cpu
