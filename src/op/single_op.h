// Single operators on the model path (DESIGN.md "Single-operator API").
//
// compile(): the catalogue entry builds a small graph (inputs → ONNX node(s) →
// outputs); the graph goes through the same passes, shape functions, kernel
// choice and memory plan as a model, and is loaded as a model::LoadedModel. So
// a single op checks its buffers, runs in a planned arena without allocating
// (static shapes), reports real output dims (data-dependent shapes), and can be
// watched by a NodeObserver (dump, profiling) exactly as a model can.
//
// OpCache: compiled ops by op_key() (type, specs, attributes), least recently
// used evicted past the capacity (aclopSetMaxOpQueueNum, acl.json
// max_opqueue_num). A hit is a hash lookup on a key built per call.
//
// Errors (CANN codes): unknown type 100024 (ACL_ERROR_OP_NOT_FOUND, the message
// suggests the nearest names); wrong input/output count or input dtype/shape
// 100021 / 100022; attribute of the wrong kind or missing 100023; dtype the op
// does not take 100026; an output buffer too small 100022 (nothing written).
//
// Thread-safety: a CompiledOp may execute from several threads at once (the
// LoadedModel takes a free executor per call). The cache is internally locked.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "model/loaded_model.h"
#include "op/catalog.h"
#include "op/op_desc.h"

namespace openacl::op {

class CompiledOp {
 public:
  // Builds and compiles `op_type` for these specs: one input spec per input
  // given (omitted optionals included), one output spec per output. Output
  // specs may carry -1 dims; known dims must match the inferred ones, and
  // their dtypes what the op produces (Cast-like ops take their target dtype
  // from the output spec). `allocator`: where the model's arenas live
  // (default: aligned host memory).
  static Status compile(const std::string& op_type, const std::vector<TensorSpec>& inputs,
                        const std::vector<TensorSpec>& outputs, const OpAttrs& attrs,
                        const model::Allocator& allocator, std::shared_ptr<CompiledOp>* out);
  // The op as a stored graph (what atc --singleop writes into an .om), and
  // back: load() compiles a graph read from an .om (single_op meta).
  static Status build_graph(const std::string& op_type, const std::vector<TensorSpec>& inputs,
                            const std::vector<TensorSpec>& outputs, const OpAttrs& attrs,
                            std::shared_ptr<graph::Graph>* graph);

  const std::string& type() const { return type_; }
  const std::string& key() const { return key_; }
  // Output specs as compiled: dtypes, dims (-1 where data decides).
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const model::LoadedModel& model() const { return *model_; }

  // Runs the op. inputs: one buffer per input spec, in order; the buffers of
  // constant inputs (aclSetTensorConst: the value is compiled in) and of
  // omitted optional inputs are not read. outputs: one per output.
  // input_dims: per input spec, the real shape when the op was compiled with
  // -1 dims (empty vector, or no vector at all: as compiled). output_dims
  // (optional) receives the dims written. Buffers too small: 100021 / 100022
  // before anything runs (data-dependent outputs: before anything is written).
  Status execute(const std::vector<model::IoBuffer>& inputs, const std::vector<model::IoBuffer>& outputs,
                 const std::vector<std::vector<int64_t>>& input_dims = {},
                 std::vector<std::vector<int64_t>>* output_dims = nullptr,
                 model::NodeObserver* observer = nullptr) const;

 private:
  std::string type_, key_;
  std::vector<TensorSpec> inputs_, outputs_;
  std::vector<int> model_input_;  // per input spec: index among the model's inputs, or -1 (const / omitted)
  std::shared_ptr<model::LoadedModel> model_;
};

// Output shapes without compiling kernels (aclopInferShape): outputs get dtype,
// dims (-1 where the data decides, {-2} when even the rank is unknown) and, for
// -1 dims, a range whose max is the upper bound (entry's bounds(), else
// [0, -1]). `outputs` is resized to `num_outputs`; num_outputs must fit the op.
Status infer_shape(const std::string& op_type, const std::vector<TensorSpec>& inputs, size_t num_outputs,
                   const OpAttrs& attrs, std::vector<TensorSpec>* outputs);

class OpCache {
 public:
  static constexpr size_t kDefaultCapacity = 20000;  // CANN's max_opqueue_num default

  // The compiled op cached under `key` (compiling and caching it on a miss).
  // `key` is op_key(op_type, inputs, outputs, attrs), possibly with a prefix
  // of the caller's (capi keeps one entry per device: "dev0|...").
  Status get(const std::string& key, const std::string& op_type, const std::vector<TensorSpec>& inputs,
             const std::vector<TensorSpec>& outputs, const OpAttrs& attrs, const model::Allocator& allocator,
             std::shared_ptr<CompiledOp>* out);
  // Caches a compiled op under `key` (set_model_dir / aclopLoad, a
  // recompiled op), replacing what the key held.
  void put(const std::string& key, std::shared_ptr<CompiledOp> op);
  // Capacity in entries (>= 1); shrinking evicts the least recently used.
  void set_capacity(size_t n);
  size_t size() const;
  uint64_t hits() const;
  uint64_t misses() const;
  // Drops every entry and zeroes the counters.
  void clear();

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<CompiledOp> op;
  };
  using Iter = std::list<Entry>::iterator;
  void touch_locked(Iter it);
  void evict_locked();

  mutable std::mutex mu_;
  size_t capacity_ = kDefaultCapacity;
  std::list<Entry> lru_;  // most recent first
  std::unordered_map<std::string, Iter> by_key_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace openacl::op
