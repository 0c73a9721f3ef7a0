#include "model/executor.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace openacl::model {

namespace {

using graph::DType;
using graph::TensorData;
using graph::TensorType;
using graph::Value;

constexpr size_t kAlign = 64;

size_t round_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

kernels::Tensor constant_tensor(const TensorData& c) {
  return kernels::Tensor{c.dtype, c.dims, const_cast<void*>(c.data)};
}

std::vector<int64_t> dims_of(const TensorType& t) {
  std::vector<int64_t> d;
  if (t.shape)
    for (const graph::Dim& x : *t.shape) d.push_back(x.value);
  return d;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// Work memory for dynamic models: blocks kept across runs, reused best-fit
// (a block at most twice the request), freed at destruction.
class Executor::Pool {
 public:
  ~Pool() {
    for (auto& [p, size] : owned_) std::free(p);
  }
  void* get(size_t bytes) {
    bytes = round_up(bytes ? bytes : 1);
    auto it = free_.lower_bound(bytes);
    if (it != free_.end() && it->first <= 2 * bytes) {
      void* p = it->second;
      free_.erase(it);
      return p;
    }
    void* p = std::aligned_alloc(kAlign, bytes);
    if (!p) return nullptr;
    owned_[p] = bytes;
    total_ += bytes;
    return p;
  }
  void put(void* p) {
    if (p) free_.emplace(owned_.at(p), p);
  }
  size_t total() const { return total_; }

 private:
  std::multimap<size_t, void*> free_;
  std::map<void*, size_t> owned_;
  size_t total_ = 0;
};

Executor::Executor(std::shared_ptr<const CompiledModel> model)
    : model_(std::move(model)), pool_(std::make_unique<Pool>()) {}

Executor::Executor(std::shared_ptr<const CompiledModel> model, void* arena, size_t arena_bytes)
    : model_(std::move(model)), arena_(arena), arena_bytes_(arena_bytes), external_arena_(arena != nullptr),
      pool_(std::make_unique<Pool>()) {}

Executor::~Executor() = default;

size_t Executor::work_bytes() const { return arena_bytes_ + pool_->total(); }

Status Executor::prepare() {
  if (prepared_) return Status::Ok();
  const CompiledModel& m = *model_;
  tensors_.assign(m.values().size(), kernels::Tensor());
  for (size_t id = 0; id < m.values().size(); ++id) {
    const Value* v = m.values()[id];
    if (v->constant) tensors_[id] = constant_tensor(*v->constant);
    else tensors_[id] = kernels::Tensor{v->type.dtype, dims_of(v->type), nullptr};
  }
  if (m.is_static()) {
    const planner::MemoryPlan& plan = m.plan();
    if (external_arena_) {
      if (arena_bytes_ < plan.work_size)
        return Errorf(code::kInvalidParam, "the work memory given holds %zu bytes; the model's plan needs %zu",
                      arena_bytes_, plan.work_size);
      if (reinterpret_cast<uintptr_t>(arena_) % plan.alignment != 0)
        return Errorf(code::kInvalidParam, "the work memory at %p is not %zu-byte aligned", arena_, plan.alignment);
    } else {
      arena_bytes_ = round_up(plan.work_size ? plan.work_size : 1);
      own_arena_ = plan.alignment <= kAlign ? alloc_pages(arena_bytes_)
                                            : PageBuffer(std::aligned_alloc(plan.alignment, arena_bytes_));
      arena_ = own_arena_.get();
      if (!arena_)
        return Errorf(code::kBadAlloc, "cannot allocate the model's work memory (%zu bytes)", arena_bytes_);
    }
    for (const planner::Buffer& b : plan.work) {
      const int id = m.value_id(b.value);
      if (id >= 0) tensors_[id].data = static_cast<char*>(arena_) + b.offset;
    }
    output_arena_.assign(m.output_ids().size(), nullptr);
    std::vector<bool> in_work(m.values().size(), false);
    for (const planner::Buffer& b : plan.work) {
      const int id = m.value_id(b.value);
      if (id >= 0) in_work[id] = true;
    }
    std::vector<bool> seen(m.values().size(), false);
    for (size_t i = 0; i < m.output_ids().size(); ++i) {
      const int id = m.output_ids()[i];
      if (id < 0 || seen[id]) continue;
      seen[id] = true;
      const Value* v = m.values()[id];
      if (in_work[id] && !v->constant && !v->is_graph_input && v->producer) output_arena_[i] = tensors_[id].data;
    }
    for (const CompiledNode& cn : m.nodes()) {
      std::vector<const kernels::Tensor*> ins;
      std::vector<kernels::Tensor*> outs;
      for (int id : cn.inputs) ins.push_back(id >= 0 ? &tensors_[id] : nullptr);
      for (int id : cn.outputs) outs.push_back(id >= 0 ? &tensors_[id] : nullptr);
      contexts_.push_back(std::make_unique<kernels::KernelContext>(*cn.node, std::move(ins), std::move(outs)));
    }
  }
  prepared_ = true;
  return Status::Ok();
}

Status Executor::check_inputs(const std::vector<kernels::Tensor>& inputs) const {
  const CompiledModel& m = *model_;
  if (inputs.size() != m.input_ids().size())
    return Errorf(code::kInvalidParam, "the model has %zu input(s); %zu given", m.input_ids().size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = m.values()[m.input_ids()[i]];
    const kernels::Tensor& t = inputs[i];
    if (t.dtype != v->type.dtype)
      return Errorf(code::kInvalidParam, "input %zu ('%s') is %s; the model expects %s", i, v->name.c_str(),
                    graph::dtype_name(t.dtype), graph::dtype_name(v->type.dtype));
    bool ok = !v->type.shape || v->type.shape->size() == t.dims.size();
    for (size_t d = 0; ok && v->type.shape && d < t.dims.size(); ++d) {
      const graph::Dim& want = (*v->type.shape)[d];
      ok = t.dims[d] >= 0 && (!want.known() || want.value == t.dims[d]);
    }
    if (!ok)
      return Errorf(code::kInvalidParam, "input %zu ('%s') has shape %s; the model expects %s", i, v->name.c_str(),
                    t.type().str().c_str(), v->type.str().c_str());
    if (t.data == nullptr && t.elements() != 0)
      return Errorf(code::kInvalidParam, "input %zu ('%s') has no data", i, v->name.c_str());
  }
  return Status::Ok();
}

Status Executor::run(const std::vector<kernels::Tensor>& inputs, std::vector<kernels::Tensor>* outputs,
                     std::vector<NodeTiming>* timings, NodeObserver* observer,
                     const std::vector<void*>* output_into) {
  OPENACL_RETURN_IF_ERROR(prepare());
  OPENACL_RETURN_IF_ERROR(check_inputs(inputs));
  if (timings) timings->clear();
  return model_->is_static() ? run_static(inputs, outputs, timings, observer, output_into)
                              : run_dynamic(inputs, outputs, timings, observer);
}

Status Executor::run_static(const std::vector<kernels::Tensor>& inputs, std::vector<kernels::Tensor>* outputs,
                            std::vector<NodeTiming>* timings, NodeObserver* observer,
                            const std::vector<void*>* output_into) {
  const CompiledModel& m = *model_;
  for (size_t i = 0; i < inputs.size(); ++i) tensors_[m.input_ids()[i]].data = inputs[i].data;
  // Every run binds each redirectable output afresh: the caller's buffer or its arena place.
  for (size_t i = 0; i < output_arena_.size(); ++i)
    if (output_arena_[i])
      tensors_[m.output_ids()[i]].data =
          output_into && i < output_into->size() && (*output_into)[i] ? (*output_into)[i] : output_arena_[i];
  for (size_t i = 0; i < m.nodes().size(); ++i) {
    if (observer) observer->before_node(m.nodes()[i], tensors_);
    const int64_t t0 = timings || observer ? now_ns() : 0;
    OPENACL_RETURN_IF_ERROR(m.nodes()[i].kernel->run(*contexts_[i]));
    if (timings || observer) {
      const int64_t t1 = now_ns();
      if (timings) timings->push_back({m.nodes()[i].node, t1 - t0});
      if (observer) observer->after_node(m.nodes()[i], tensors_, t0, t1);
    }
  }
  outputs->resize(m.output_ids().size());
  for (size_t i = 0; i < m.output_ids().size(); ++i) (*outputs)[i] = tensors_[m.output_ids()[i]];
  return Status::Ok();
}

Status Executor::run_dynamic(const std::vector<kernels::Tensor>& inputs, std::vector<kernels::Tensor>* outputs,
                             std::vector<NodeTiming>* timings, NodeObserver* observer) {
  const CompiledModel& m = *model_;
  const size_t nv = m.values().size();
  // Blocks still held from the previous run (its outputs) go back first.
  std::vector<void*> held(nv, nullptr);
  for (void*& p : blocks_) pool_->put(p);
  blocks_.clear();
  std::vector<TensorType> types(nv);
  std::vector<std::shared_ptr<TensorData>> views(nv);
  for (size_t id = 0; id < nv; ++id) {
    const Value* v = m.values()[id];
    if (v->constant) {
      tensors_[id] = constant_tensor(*v->constant);
      types[id] = tensors_[id].type();
    } else {
      tensors_[id] = kernels::Tensor{v->type.dtype, {}, nullptr};
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    tensors_[m.input_ids()[i]] = inputs[i];
    types[m.input_ids()[i]] = inputs[i].type();
  }
  std::vector<int> remaining = m.use_counts();
  auto view_of = [&](int id) -> const TensorData* {
    if (!views[id]) {
      auto d = std::make_shared<TensorData>();
      d->dtype = tensors_[id].dtype;
      d->dims = tensors_[id].dims;
      d->data = tensors_[id].data;
      d->bytes = tensors_[id].bytes();
      views[id] = d;
    }
    return views[id].get();
  };
  auto allocate = [&](int id, const std::vector<int64_t>& dims) -> Status {
    kernels::Tensor& t = tensors_[id];
    t.dims = dims;
    const size_t bytes = m.storage_bytes(id, t);  // a blocked tensor's padding channels too
    void* p = pool_->get(bytes);
    if (!p) return Errorf(code::kBadAlloc, "cannot allocate %zu bytes for '%s'", bytes, m.values()[id]->name.c_str());
    held[id] = p;
    t.data = p;
    types[id] = t.type();
    return Status::Ok();
  };

  for (const CompiledNode& cn : m.nodes()) {
    std::vector<const TensorType*> in_types;
    std::vector<const TensorData*> consts;
    std::vector<const kernels::Tensor*> ins;
    for (int id : cn.inputs) {
      in_types.push_back(id >= 0 ? &types[id] : nullptr);
      consts.push_back(id >= 0 ? view_of(id) : nullptr);
      ins.push_back(id >= 0 ? &tensors_[id] : nullptr);
    }
    graph::ShapeContext sc(*cn.node, std::move(in_types), std::move(consts));
    OPENACL_RETURN_IF_ERROR(cn.schema->shape(sc));
    std::vector<kernels::Tensor*> outs;
    for (size_t o = 0; o < cn.outputs.size(); ++o) {
      const int id = cn.outputs[o];
      if (id < 0) {
        outs.push_back(nullptr);
        continue;
      }
      const TensorType& t = sc.output(o);
      tensors_[id] = kernels::Tensor{t.dtype, {}, nullptr};
      if (t.shape && graph::fully_known(*t.shape)) OPENACL_RETURN_IF_ERROR(allocate(id, dims_of(t)));
      outs.push_back(&tensors_[id]);
    }
    kernels::KernelContext ctx(*cn.node, std::move(ins), outs,
                               [&](size_t o, const std::vector<int64_t>& dims, kernels::Tensor** out) -> Status {
                                 const int id = cn.outputs[o];
                                 if (held[id]) {
                                   pool_->put(held[id]);
                                   held[id] = nullptr;
                                 }
                                 OPENACL_RETURN_IF_ERROR(allocate(id, dims));
                                 *out = &tensors_[id];
                                 return Status::Ok();
                               });
    if (observer) observer->before_node(cn, tensors_);
    const int64_t t0 = timings || observer ? now_ns() : 0;
    OPENACL_RETURN_IF_ERROR(cn.kernel->run(ctx));
    if (timings || observer) {
      const int64_t t1 = now_ns();
      if (timings) timings->push_back({cn.node, t1 - t0});
      if (observer) observer->after_node(cn, tensors_, t0, t1);
    }
    for (size_t o = 0; o < cn.outputs.size(); ++o)
      if (cn.outputs[o] >= 0 && !held[cn.outputs[o]])
        return Errorf(code::kInternalError, "%s: kernel left output %zu unallocated", cn.node->describe().c_str(), o);
    for (int id : cn.inputs) {
      if (id < 0) continue;
      views[id].reset();
      if (--remaining[id] == 0 && held[id]) {
        pool_->put(held[id]);
        held[id] = nullptr;
      }
    }
  }
  outputs->resize(m.output_ids().size());
  for (size_t i = 0; i < m.output_ids().size(); ++i) (*outputs)[i] = tensors_[m.output_ids()[i]];
  for (void* p : held)
    if (p) blocks_.push_back(p);
  return Status::Ok();
}

}  // namespace openacl::model
