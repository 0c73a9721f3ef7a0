#include "kernels/kernel.h"

#include <cstdarg>
#include <cstdio>

namespace openacl::kernels {

namespace {

std::string vformat(const char* fmt, va_list ap) {
  char buf[512];
  vsnprintf(buf, sizeof buf, fmt, ap);
  return buf;
}

const graph::TensorType& empty_type() {
  static const graph::TensorType t;
  return t;
}

class FunctionKernel final : public Kernel {
 public:
  explicit FunctionKernel(KernelFn fn) : fn_(std::move(fn)) {}
  Status run(KernelContext& ctx) const override { return fn_(ctx); }

 private:
  KernelFn fn_;
};

}  // namespace

graph::TensorType Tensor::type() const {
  graph::TensorType t;
  t.dtype = dtype;
  t.shape = graph::Shape(dims.begin(), dims.end());
  return t;
}

const Tensor& KernelContext::input(size_t i) const {
  static const Tensor kEmpty;
  return has_input(i) ? *inputs_[i] : kEmpty;
}

Tensor& KernelContext::output(size_t i) {
  static thread_local Tensor scratch;
  if (!has_output(i)) {  // an omitted optional output: writes go nowhere useful
    scratch = Tensor();
    return scratch;
  }
  return *outputs_[i];
}

Status KernelContext::allocate_output(size_t i, const std::vector<int64_t>& dims, Tensor** out) {
  if (!has_output(i)) {
    *out = &output(i);
    return Status::Ok();
  }
  if ((outputs_[i]->data != nullptr || outputs_[i]->elements() == 0) && outputs_[i]->dims == dims &&
      (outputs_[i]->data != nullptr || !allocate_)) {
    *out = outputs_[i];
    return Status::Ok();
  }
  if (!allocate_) return fail("output %zu has no allocator (internal error)", i);
  for (int64_t d : dims)
    if (d < 0) return fail("output %zu: negative dim %lld", i, static_cast<long long>(d));
  return allocate_(i, dims, out);
}

Status KernelContext::fail(const char* fmt, ...) const {
  va_list ap;
  va_start(ap, fmt);
  std::string msg = vformat(fmt, ap);
  va_end(ap);
  return Status(code::kInvalidParam, node_.describe() + ": " + msg);
}

const graph::TensorType& KernelInit::input(size_t i) const { return has_input(i) ? *inputs_[i] : empty_type(); }

const graph::TensorType& KernelInit::output(size_t i) const {
  return i < outputs_.size() && outputs_[i] ? *outputs_[i] : empty_type();
}

Status KernelInit::fail(const char* fmt, ...) const {
  va_list ap;
  va_start(ap, fmt);
  std::string msg = vformat(fmt, ap);
  va_end(ap);
  return Status(code::kInvalidParam, node_.describe() + ": " + msg);
}

KernelRegistry& KernelRegistry::instance() {
  static KernelRegistry* r = new KernelRegistry();  // never destroyed: registrations outlive statics
  return *r;
}

void KernelRegistry::add(KernelDef def) { defs_.push_back(std::move(def)); }

const KernelDef* KernelRegistry::find(const KernelInit& init, const std::string& backend, std::string* why) const {
  const graph::Node& n = init.node();
  std::string reasons;
  bool any = false;
  for (const KernelDef& d : defs_) {
    if (d.op_type != n.op_type || d.domain != n.domain || d.backend != backend) continue;
    any = true;
    std::string reason;
    if (n.opset < d.since_version || n.opset > d.until_version) {
      reason = strformat("handles opsets %d..%d", d.since_version, d.until_version);
    } else if (!d.types.empty() && init.has_input(static_cast<size_t>(d.type_input))) {
      const DType t = init.input(static_cast<size_t>(d.type_input)).dtype;
      bool ok = false;
      for (DType x : d.types) ok = ok || x == t;
      if (!ok) {
        reason = "handles input " + std::to_string(d.type_input) + " of type";
        for (size_t i = 0; i < d.types.size(); ++i) reason += (i ? ", " : " ") + std::string(graph::dtype_name(d.types[i]));
        reason += std::string(", not ") + graph::dtype_name(t);
      }
    }
    if (reason.empty() && d.supports) reason = d.supports(init);
    if (reason.empty()) return &d;
    if (!reasons.empty()) reasons += "; ";
    reasons += reason;
  }
  if (why) {
    if (!any) *why = "no " + backend + " kernel for this operator";
    else *why = "no " + backend + " kernel for this case: " + reasons;
  }
  return nullptr;
}

std::vector<const KernelDef*> KernelRegistry::all() const {
  std::vector<const KernelDef*> out;
  for (const KernelDef& d : defs_) out.push_back(&d);
  return out;
}

std::unique_ptr<Kernel> make_function_kernel(KernelFn fn) { return std::make_unique<FunctionKernel>(std::move(fn)); }

KernelRegistration& KernelRegistration::run(KernelFn fn) {
  def_.factory = [fn = std::move(fn)](const KernelInit&, std::unique_ptr<Kernel>* out) {
    *out = make_function_kernel(fn);
    return Status::Ok();
  };
  KernelRegistry::instance().add(def_);
  return *this;
}

KernelRegistration& KernelRegistration::create(KernelFactory factory) {
  def_.factory = std::move(factory);
  KernelRegistry::instance().add(def_);
  return *this;
}

}  // namespace openacl::kernels
