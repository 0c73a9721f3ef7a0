// Kernels: the code that computes one node, and the registry that finds it.
//
// A kernel is registered beside its code, keyed by (op type, domain, backend)
// with the opset range and element types it handles (STYLE.md 4, 5):
//
//   OPENACL_REGISTER_KERNEL(Relu, "cpu").types({DType::kFloat32, DType::kFloat16}).run(relu_fn);
//   OPENACL_REGISTER_KERNEL(Conv, "cpu").types({DType::kFloat32}).create(make_conv);  // stateful
//
// Kernels declare, the engine decides: before a kernel runs the engine has
// computed every output shape with the op's shape function and allocated the
// outputs (planned offsets or, for dynamic graphs, a pooled buffer), so a
// kernel only reads its inputs and writes its outputs. When an output's shape
// depends on data the engine could not see (NonZero, Unique, TopK with a
// runtime k that was not constant...), the output comes in with data == nullptr
// and the kernel calls KernelContext::allocate_output with the real dims.
//
// Two kinds of kernel:
//  - run(fn): a stateless function called per execution;
//  - create(factory): the factory runs once when the model is compiled (it sees
//    input types and constant inputs, so it can prepack weights and build
//    oneDNN primitives) and returns a Kernel object whose run() is called per
//    execution. run() must not allocate on the hot path where avoidable.
//
// Thread-safety: one Kernel object may be run by several executions of the
// same compiled model at once (several threads/streams): run() must not
// mutate the object, or must lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "kernels/pack_cache.h"

namespace openacl::kernels {

using graph::DType;

// A dense row-major tensor as a kernel sees it. Inputs are read-only unless
// the kernel declared the (input, output) pair in-place.
struct Tensor {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  void* data = nullptr;

  int64_t rank() const { return static_cast<int64_t>(dims.size()); }
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  size_t bytes() const { return static_cast<size_t>(elements()) * graph::dtype_bytes(dtype); }
  template <class T>
  T* as() const { return static_cast<T*>(data); }
  // Dims as a graph::TensorType (all known).
  graph::TensorType type() const;
};

// Allocates an output whose shape is only known inside the kernel.
using OutputAllocator = std::function<Status(size_t index, const std::vector<int64_t>& dims, Tensor** out)>;

// What a kernel sees when it runs.
class KernelContext {
 public:
  KernelContext(const graph::Node& node, std::vector<const Tensor*> inputs, std::vector<Tensor*> outputs,
                OutputAllocator allocate = nullptr)
      : node_(node),
        own_inputs_(std::move(inputs)),
        own_outputs_(std::move(outputs)),
        inputs_(own_inputs_),
        outputs_(own_outputs_),
        allocate_(std::move(allocate)) {}
  // Over the caller's arrays, which must outlive the context: no copy and no
  // allocation, for a kernel that runs the kernels of its parts per execute.
  KernelContext(const graph::Node& node, std::span<const Tensor* const> inputs, std::span<Tensor* const> outputs)
      : node_(node), inputs_(inputs), outputs_(outputs) {}
  KernelContext(const KernelContext&) = delete;
  KernelContext& operator=(const KernelContext&) = delete;

  const graph::Node& node() const { return node_; }
  const graph::AttributeMap& attrs() const { return node_.attrs; }
  int opset() const { return node_.opset; }

  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  // Input i; an empty tensor (kUndefined, no data) when omitted.
  const Tensor& input(size_t i) const;

  size_t num_outputs() const { return outputs_.size(); }
  bool has_output(size_t i) const { return i < outputs_.size() && outputs_[i] != nullptr; }
  // Output i, already allocated with its inferred dims — or with data ==
  // nullptr when the dims depend on data: then call allocate_output.
  Tensor& output(size_t i);
  // Allocates output i with `dims` (its dtype is the inferred one). Only for
  // outputs that came in unallocated.
  Status allocate_output(size_t i, const std::vector<int64_t>& dims, Tensor** out);

  // A kInvalidParam status naming the node: fail("axis %lld out of range", axis).
  Status fail(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));

 private:
  const graph::Node& node_;
  std::vector<const Tensor*> own_inputs_;  // the first constructor's; the spans point into them
  std::vector<Tensor*> own_outputs_;
  std::span<const Tensor* const> inputs_;
  std::span<Tensor* const> outputs_;
  OutputAllocator allocate_;
};

// A kernel instance bound to one node of one compiled model.
class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual Status run(KernelContext& ctx) const = 0;
};

// What a factory (and a kernel's `supports` check) sees at compile time.
class KernelInit {
 public:
  KernelInit(const graph::Node& node, std::vector<const graph::TensorType*> inputs,
             std::vector<const graph::TensorData*> constants, std::vector<const graph::TensorType*> outputs)
      : node_(node), inputs_(std::move(inputs)), constants_(std::move(constants)), outputs_(std::move(outputs)) {}

  const graph::Node& node() const { return node_; }
  const graph::AttributeMap& attrs() const { return node_.attrs; }
  int opset() const { return node_.opset; }
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  // Input i's type (possibly with unknown dims); empty for an omitted input.
  const graph::TensorType& input(size_t i) const;
  // Constant data of input i (weights), or nullptr.
  const graph::TensorData* constant(size_t i) const { return i < constants_.size() ? constants_[i] : nullptr; }
  size_t num_outputs() const { return outputs_.size(); }
  const graph::TensorType& output(size_t i) const;

  Status fail(const char* fmt, ...) const __attribute__((format(printf, 2, 3)));

  // Weights packed ahead of time (pack_cache.h), for the kernel to use or, at
  // atc, to report its packs to; nullptr when there are none. Only for the
  // factory's use: a kernel must not keep it.
  PackCache* packs() const { return packs_; }
  void set_packs(PackCache* packs) { packs_ = packs; }

 private:
  const graph::Node& node_;
  std::vector<const graph::TensorType*> inputs_;
  std::vector<const graph::TensorData*> constants_;
  std::vector<const graph::TensorType*> outputs_;
  PackCache* packs_ = nullptr;
};

using KernelFn = std::function<Status(KernelContext&)>;
using KernelFactory = std::function<Status(const KernelInit&, std::unique_ptr<Kernel>*)>;
// Returns "" when the kernel handles this node, else why not ("float64 input").
using SupportsFn = std::function<std::string(const KernelInit&)>;

struct KernelDef {
  std::string op_type;
  std::string domain;   // "" = ONNX default domain
  std::string backend;  // "cpu", "cuda"
  int since_version = 1;
  int until_version = 1 << 30;  // last opset handled (inclusive)
  // Element types input `type_input` may have; empty = any. A node whose
  // input `type_input` is omitted matches.
  int type_input = 0;
  std::vector<DType> types;
  SupportsFn supports;  // optional finer check
  KernelFactory factory;
  // (input, output) pairs the kernel may compute in place.
  std::vector<std::pair<int, int>> in_place;
};

class KernelRegistry {
 public:
  static KernelRegistry& instance();
  void add(KernelDef def);
  // The first registered kernel for (op, domain, backend) that handles this
  // node. On failure, *why says what is missing ("no cpu kernel for X",
  // "cpu kernel for X handles float32, float16; input 0 is float64").
  const KernelDef* find(const KernelInit& init, const std::string& backend, std::string* why) const;
  std::vector<const KernelDef*> all() const;

 private:
  std::vector<KernelDef> defs_;
};

// Wraps a stateless function as a Kernel.
std::unique_ptr<Kernel> make_function_kernel(KernelFn fn);

class KernelRegistration {
 public:
  KernelRegistration(const char* op_type, const char* backend, const char* domain = "") {
    def_.op_type = op_type;
    def_.backend = backend;
    def_.domain = domain;
  }
  KernelRegistration& since(int v) { def_.since_version = v; return *this; }
  KernelRegistration& until(int v) { def_.until_version = v; return *this; }
  KernelRegistration& types(std::vector<DType> t, int input = 0) {
    def_.types = std::move(t);
    def_.type_input = input;
    return *this;
  }
  KernelRegistration& supports(SupportsFn fn) { def_.supports = std::move(fn); return *this; }
  KernelRegistration& in_place(int input, int output) { def_.in_place.emplace_back(input, output); return *this; }
  // Terminal calls: register.
  KernelRegistration& run(KernelFn fn);
  KernelRegistration& create(KernelFactory factory);

 private:
  KernelDef def_;
};

#define OPENACL_KERNEL_CONCAT_(a, b) a##b
#define OPENACL_KERNEL_CONCAT(a, b) OPENACL_KERNEL_CONCAT_(a, b)
// Registers at static-initialisation time; kernel files are compiled into an
// OBJECT library so the linker keeps every registration.
#define OPENACL_REGISTER_KERNEL(op, backend) \
  [[maybe_unused]] static ::openacl::kernels::KernelRegistration OPENACL_KERNEL_CONCAT(kernel_registration_, __LINE__) = \
      ::openacl::kernels::KernelRegistration(#op, backend)
// Same, for ops outside the default domain: OPENACL_REGISTER_KERNEL_IN(Gelu, "com.microsoft", "cpu").
#define OPENACL_REGISTER_KERNEL_IN(op, domain, backend) \
  [[maybe_unused]] static ::openacl::kernels::KernelRegistration OPENACL_KERNEL_CONCAT(kernel_registration_, __LINE__) = \
      ::openacl::kernels::KernelRegistration(#op, backend, domain)

}  // namespace openacl::kernels
