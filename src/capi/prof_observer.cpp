// capi side of profiling's producers: the API trace hook of guarded(), copy
// events, and the observer of model executions that feeds the op-info
// subscription and the collection (src/prof). Converts what only capi knows
// (dtype and format names as CANN writes them, stream handles) into the
// plain values of prof's events.
#include <map>
#include <mutex>
#include <string>

#include "capi/capi.h"
#include "capi/mdl_observe.h"
#include "graph/dtype.h"
#include "prof/collection.h"
#include "prof/subscription.h"

namespace openacl::capi {

namespace {

// CANN's names of aclDataType values, as its op_summary prints them.
const char* dtype_label(graph::DType t) {
  switch (graph::dtype_to_acl(t)) {
    case ACL_FLOAT: return "FLOAT";
    case ACL_FLOAT16: return "FLOAT16";
    case ACL_INT8: return "INT8";
    case ACL_INT32: return "INT32";
    case ACL_UINT8: return "UINT8";
    case ACL_INT16: return "INT16";
    case ACL_UINT16: return "UINT16";
    case ACL_UINT32: return "UINT32";
    case ACL_INT64: return "INT64";
    case ACL_UINT64: return "UINT64";
    case ACL_DOUBLE: return "DOUBLE";
    case ACL_BOOL: return "BOOL";
    case ACL_STRING: return "STRING";
    case ACL_COMPLEX64: return "COMPLEX64";
    case ACL_COMPLEX128: return "COMPLEX128";
    case ACL_BF16: return "BF16";
    default: return "UNDEFINED";
  }
}

// The logical layout of a model tensor: kernels here work on plain row-major
// tensors, so a 4-D activation is NCHW and everything else ND.
const char* format_label(const kernels::Tensor& t) { return t.dims.size() == 4 ? "NCHW" : "ND"; }

void describe(const std::vector<int>& ids, const std::vector<kernels::Tensor>& values, std::string* shapes,
              std::string* dtypes, std::string* formats) {
  bool first = true;
  for (int id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= values.size()) continue;  // omitted optional tensor
    const kernels::Tensor& t = values[static_cast<size_t>(id)];
    if (!first) {
      *shapes += ';';
      *dtypes += ';';
      *formats += ';';
    }
    first = false;
    for (size_t i = 0; i < t.dims.size(); ++i) *shapes += (i ? "," : "") + std::to_string(t.dims[i]);
    *dtypes += dtype_label(t.dtype);
    *formats += format_label(t);
  }
}

const char* copy_kind_label(int kind) {
  switch (kind) {
    case ACL_MEMCPY_HOST_TO_HOST: return "MEMCPY_HOST_TO_HOST";
    case ACL_MEMCPY_HOST_TO_DEVICE: return "MEMCPY_HOST_TO_DEVICE";
    case ACL_MEMCPY_DEVICE_TO_HOST: return "MEMCPY_DEVICE_TO_HOST";
    case ACL_MEMCPY_DEVICE_TO_DEVICE: return "MEMCPY_DEVICE_TO_DEVICE";
    case ACL_MEMCPY_DEFAULT: return "MEMCPY_DEFAULT";
    default: return "MEMCPY";
  }
}

// Execution numbers per model (Infer ID), counted only while profiling.
uint64_t next_infer_id(uint32_t model_id) {
  static std::mutex mutex;
  static auto* counters = new std::map<uint32_t, uint64_t>();  // never destroyed
  std::lock_guard<std::mutex> lock(mutex);
  return ++(*counters)[model_id];
}

class ProfObserver : public model::NodeObserver {
 public:
  ProfObserver(std::shared_ptr<prof::ModelSubscription> sub, bool collect, uint32_t model_id, std::string model_name,
               int device, const void* stream)
      : sub_(std::move(sub)),
        collect_(collect),
        model_id_(model_id),
        model_name_(std::move(model_name)),
        device_(device),
        stream_(reinterpret_cast<uintptr_t>(stream)),
        infer_id_(next_infer_id(model_id)),
        start_ns_(prof::now_ns()) {}

  ~ProfObserver() override {
    if (!collect_) return;
    try {
      prof::TaskEvent e;
      e.kind = prof::TaskKind::kModel;
      e.model_id = model_id_;
      e.model_name = model_name_;
      e.infer_id = infer_id_;
      e.name = model_name_.empty() ? "model " + std::to_string(model_id_) : model_name_;
      e.type = "Model";
      e.stream = stream_;
      e.device = device_;
      e.thread_id = prof::thread_id();
      e.start_ns = start_ns_;
      e.end_ns = prof::now_ns();
      prof::record_task(std::move(e));
    } catch (...) {
    }
  }

  void after_node(const model::CompiledNode& node, const std::vector<kernels::Tensor>& values, int64_t start_ns,
                  int64_t end_ns) override {
    const uint32_t task = task_id_++;
    if (node.node == nullptr) return;
    const std::string& type = node.node->op_type;
    const std::string name = node.node->name.empty() ? type + "_" + std::to_string(task) : node.node->name;
    const uint32_t tid = prof::thread_id();
    if (sub_) sub_->emit(name, type, start_ns, end_ns, tid);
    if (!collect_) return;
    prof::TaskEvent e;
    e.kind = prof::TaskKind::kNode;
    e.model_id = model_id_;
    e.model_name = model_name_;
    e.infer_id = infer_id_;
    e.task_id = task;
    e.name = name;
    e.type = type;
    describe(node.inputs, values, &e.input_shapes, &e.input_dtypes, &e.input_formats);
    describe(node.outputs, values, &e.output_shapes, &e.output_dtypes, &e.output_formats);
    e.stream = stream_;
    e.device = device_;
    e.thread_id = tid;
    e.start_ns = start_ns;
    e.end_ns = end_ns;
    prof::record_task(std::move(e));
  }

 private:
  std::shared_ptr<prof::ModelSubscription> sub_;
  const bool collect_;
  const uint32_t model_id_;
  const std::string model_name_;
  const int device_;
  const uint64_t stream_;
  const uint64_t infer_id_;
  const int64_t start_ns_;
  uint32_t task_id_ = 0;
};

// Both watchers of one execution, dump first (it reads inputs before a node
// runs; profiling only looks after).
class FanOut : public model::NodeObserver {
 public:
  FanOut(std::unique_ptr<model::NodeObserver> a, std::unique_ptr<model::NodeObserver> b)
      : a_(std::move(a)), b_(std::move(b)) {}
  void before_node(const model::CompiledNode& node, const std::vector<kernels::Tensor>& values) override {
    a_->before_node(node, values);
    b_->before_node(node, values);
  }
  void after_node(const model::CompiledNode& node, const std::vector<kernels::Tensor>& values, int64_t start_ns,
                  int64_t end_ns) override {
    a_->after_node(node, values, start_ns, end_ns);
    b_->after_node(node, values, start_ns, end_ns);
  }

 private:
  std::unique_ptr<model::NodeObserver> a_, b_;
};

}  // namespace

std::unique_ptr<model::NodeObserver> prof_observer(const ModelEntry& entry, int device, const void* stream) {
  const bool collect = prof::task_tracing();
  std::shared_ptr<prof::ModelSubscription> sub;
  if (prof::subscriptions_active()) sub = prof::find_subscription(entry.id());
  if (!collect && !sub) return nullptr;
  auto model = entry.model();
  std::string name = model ? model->info().name : std::string();
  return std::make_unique<ProfObserver>(std::move(sub), collect, entry.id(), std::move(name), device, stream);
}

std::unique_ptr<model::NodeObserver> single_op_observer(const std::string& op_type, int device, const void* stream) {
  if (!prof::task_tracing()) return nullptr;
  return std::make_unique<ProfObserver>(nullptr, true, kSingleOpModelId, op_type, device, stream);
}

std::unique_ptr<model::NodeObserver> execution_observer(const ModelEntry& entry, int device, const void* stream) {
  std::unique_ptr<model::NodeObserver> dump = dump_observer(entry, device);
  std::unique_ptr<model::NodeObserver> prof;
  if (prof::task_tracing() || prof::subscriptions_active()) prof = prof_observer(entry, device, stream);
  if (!prof) return dump;
  if (!dump) return prof;
  return std::make_unique<FanOut>(std::move(dump), std::move(prof));
}

void trace_api(const char* api, int64_t start_ns, int result) noexcept {
  prof::ApiEvent e;
  e.name = api;
  e.start_ns = start_ns;
  e.end_ns = prof::now_ns();
  e.thread_id = prof::thread_id();
  e.result = result;
  prof::record_api(e);
}

void trace_copy(const char* api, const void* stream, int device, int kind, size_t bytes, int64_t start_ns) noexcept {
  try {
    prof::TaskEvent e;
    e.kind = prof::TaskKind::kCopy;
    e.name = api;
    e.type = copy_kind_label(kind);
    e.stream = reinterpret_cast<uintptr_t>(stream);
    if (device < 0) {
      std::shared_ptr<rt::Context> ctx;
      device = runtime().current_context(&ctx).ok() ? ctx->device() : 0;
    }
    e.device = device;
    e.thread_id = prof::thread_id();
    e.start_ns = start_ns;
    e.end_ns = prof::now_ns();
    e.bytes = bytes;
    prof::record_task(std::move(e));
  } catch (...) {
  }
}

}  // namespace openacl::capi
