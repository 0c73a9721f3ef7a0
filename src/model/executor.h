// Executor: runs a CompiledModel. One Executor per concurrent execution (it
// holds the work memory); the CompiledModel is shared and read-only.
//
// Static models: the work arena of the memory plan is allocated once, at
// construction; every node's kernel context is prebuilt; run() binds the
// caller's input pointers and performs no heap allocation.
// Dynamic models: each run infers shapes node by node with the actual input
// values (so Reshape/Expand/Resize/... targets given as runtime tensors
// resolve), allocates outputs from a pool that keeps its blocks across runs,
// and returns a block as soon as its last reader has run.
//
// Inputs are checked against the model (count, dtype, rank, known dims) with
// messages naming the input and what was expected. Outputs are views into the
// executor's memory (or the model's constants), valid until the next run().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/page_alloc.h"
#include "base/status.h"
#include "kernels/kernel.h"
#include "model/compiled_model.h"

namespace openacl::model {

struct NodeTiming {
  const graph::Node* node = nullptr;
  int64_t ns = 0;
};

// Watches an execution node by node (dump, profiling). Called on the
// executing thread. `values` holds every value's tensor by value id
// (CompiledNode::inputs / outputs index it): in before_node the inputs are
// intact (a kernel may then write its output over an input); in after_node the
// outputs are written. Times are steady_clock nanoseconds. An observer that is
// not passed costs nothing.
class NodeObserver {
 public:
  virtual ~NodeObserver() = default;
  virtual void before_node(const CompiledNode& node, const std::vector<kernels::Tensor>& values) {}
  virtual void after_node(const CompiledNode& node, const std::vector<kernels::Tensor>& values, int64_t start_ns,
                          int64_t end_ns) {}
};

class Executor {
 public:
  explicit Executor(std::shared_ptr<const CompiledModel> model);
  // Static models only: runs in `arena` (at least plan().work_size bytes,
  // aligned to the plan's alignment), which the caller owns and keeps alive
  // (aclmdlLoad*WithMem user memory). A dynamic model ignores it.
  Executor(std::shared_ptr<const CompiledModel> model, void* arena, size_t arena_bytes);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Allocates the work arena (static models). Called by run() if needed.
  Status prepare();

  // inputs: one per graph input, in order. *outputs: one per graph output.
  // timings: when non-null, one entry per executed node (wall time).
  // observer: when non-null, told before and after every node.
  // output_into (static models): per graph output, a buffer to write it into
  // instead of the work arena, or nullptr. Only outputs for which
  // output_writable_in_place(i) holds are redirected; the caller checks sizes,
  // alignment (the plan's) and that the buffers overlap no input or other output.
  Status run(const std::vector<kernels::Tensor>& inputs, std::vector<kernels::Tensor>* outputs,
             std::vector<NodeTiming>* timings = nullptr, NodeObserver* observer = nullptr,
             const std::vector<void*>* output_into = nullptr);
  // Static models: whether graph output i is a work buffer of its own (not a
  // constant, a graph input, or a second name for an earlier output), which a
  // node writes and which can therefore live in the caller's buffer instead.
  bool output_writable_in_place(size_t i) const { return i < output_arena_.size() && output_arena_[i]; }

  const CompiledModel& model() const { return *model_; }
  // Bytes of work memory held (the arena, or the pool's blocks).
  size_t work_bytes() const;

 private:
  class Pool;
  Status check_inputs(const std::vector<kernels::Tensor>& inputs) const;
  Status run_static(const std::vector<kernels::Tensor>& inputs, std::vector<kernels::Tensor>* outputs,
                    std::vector<NodeTiming>* timings, NodeObserver* observer, const std::vector<void*>* output_into);
  Status run_dynamic(const std::vector<kernels::Tensor>& inputs, std::vector<kernels::Tensor>* outputs,
                     std::vector<NodeTiming>* timings, NodeObserver* observer);

  std::shared_ptr<const CompiledModel> model_;
  std::vector<kernels::Tensor> tensors_;  // by value id
  // Static: prebuilt contexts, one per node.
  std::vector<std::unique_ptr<kernels::KernelContext>> contexts_;
  // Static: per graph output, its place in the arena (nullptr: not redirectable).
  std::vector<void*> output_arena_;
  void* arena_ = nullptr;
  PageBuffer own_arena_;  // arena_ when the executor allocated it
  size_t arena_bytes_ = 0;
  bool external_arena_ = false;
  bool prepared_ = false;
  std::unique_ptr<Pool> pool_;
  std::vector<void*> blocks_;  // dynamic: pool blocks holding the last run's outputs
};

}  // namespace openacl::model
