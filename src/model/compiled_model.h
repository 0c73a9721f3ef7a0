// A compiled model: the graph after shape inference and passes, a kernel bound
// to every node, and — when every shape is known at compile time — the memory
// plan. Immutable once built; any number of Executors may run it at once.
//
// Compile steps (compile()):
//  0. values that If/Loop/Scan bodies read from this graph become explicit
//     inputs of those nodes (control_flow.h);
//  1. input shapes overridden (CompileOptions::input_shapes);
//  2. shapes inferred node by node, with constant folding interleaved: a node
//     whose inputs are all constants (or a Shape/Size of a fully known value)
//     is run once by its kernel and replaced by its outputs' constants, so
//     Shape -> Gather -> Concat -> Reshape chains resolve to constants;
//     then BatchNormalization folded into a preceding Conv, residual Adds
//     and then activations fused into the Conv before them (graph/passes.h);
//  3. dead nodes (no output read, none a graph output) removed;
//  3b. the layout pass (model/layout.h) marks activations that may stay
//     blocked between kernels;
//  4. a kernel chosen for every node (KernelRegistry, backend "cpu") and
//     created (weights prepacked there);
//  5. static models (every value's shape fully known) get a memory plan;
//     dynamic ones resolve shapes per execution.
// Every node that cannot run — unknown op, shape error, no kernel for its
// types — is listed in one Status (kInvalidParam), never just the first.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "graph/op_schema.h"
#include "kernels/kernel.h"
#include "planner/memory_plan.h"

namespace openacl::model {

struct CompileOptions {
  std::string backend = "cpu";
  // Shapes for graph inputs (by name), replacing the model's declared shape.
  std::map<std::string, graph::Shape> input_shapes;
  size_t alignment = 64;
  bool fold_constants = true;
  // Folding skips nodes whose outputs would exceed this many bytes in total.
  size_t fold_limit_bytes = 64u << 20;
  // False: every node gets its kernel chosen (so an unsupported node still
  // fails compile) but not created — no weight prepacking. Such a model only
  // describes the optimised graph and its plan (atc, model::optimize); it
  // cannot run.
  bool create_kernels = true;
  // The layout pass (model/layout.h): activations between convolutions and
  // poolings stay in oneDNN's blocked layout. False: everything plain.
  bool blocked_layouts = true;
  // Bytes that are a private, read-only mapping of a file (an .om's weights
  // loaded in place), or {nullptr, 0}. Once every node reading a constant in
  // there has its kernel, the pages wholly inside that constant are released
  // (madvise MADV_DONTNEED): kernels that packed the weights no longer need
  // them, and a later read, by a kernel that reads in place or one built
  // later for another shape, faults them back in from the file. So prepacked
  // weights are not held twice once loaded (the .om's checksum has already
  // touched every weight page, so the load itself still peaks at the
  // originals plus the copies built so far).
  const void* release_begin = nullptr;
  size_t release_size = 0;
  // Weights packed ahead of time (kernels/pack_cache.h): an .om's PACKED
  // section for the kernels to use in place, or, at atc, where they record
  // what they packed. Null: every kernel packs its own.
  kernels::PackCache* packs = nullptr;
};

struct CompiledNode {
  const graph::Node* node = nullptr;
  const graph::OpSchema* schema = nullptr;
  const kernels::KernelDef* def = nullptr;
  std::unique_ptr<kernels::Kernel> kernel;
  std::vector<int> inputs;   // value ids; -1 for omitted
  std::vector<int> outputs;  // value ids; -1 for omitted
  // Per input / output: the channel block its tensor is stored in
  // (kernels/cpu/blocked_layout.h; 0 = plain row-major), as the kernels
  // decided it. Observers that show tensors (the dump) convert blocked ones.
  std::vector<int64_t> input_blocks, output_blocks;
};

class CompiledModel {
 public:
  // Takes the graph (shared: If/Loop/Scan bodies are compiled from the
  // subgraphs their node attributes hold) and rewrites it in place.
  static Status compile(std::shared_ptr<graph::Graph> graph, const CompileOptions& options,
                        std::unique_ptr<CompiledModel>* out);

  const graph::Graph& graph() const { return *graph_; }
  const std::vector<CompiledNode>& nodes() const { return nodes_; }  // execution order
  // Dense ids for values: values()[id].
  const std::vector<const graph::Value*>& values() const { return values_; }
  int value_id(const graph::Value* v) const;
  const std::vector<int>& input_ids() const { return input_ids_; }
  const std::vector<int>& output_ids() const { return output_ids_; }
  // Number of nodes that read each value id (graph outputs count one extra).
  const std::vector<int>& use_counts() const { return use_counts_; }

  // The channel block value id's tensor is stored in (its writer's
  // CompiledNode::output_blocks; 0 = plain), and the bytes a tensor of that
  // value with `dims` takes: more than the plain size where the block pads C.
  int64_t value_block(int id) const { return value_blocks_[static_cast<size_t>(id)]; }
  size_t storage_bytes(int id, const kernels::Tensor& t) const;

  // True when every value has a fully known shape: plan() is then valid and
  // executions allocate nothing.
  bool is_static() const { return static_; }
  const planner::MemoryPlan& plan() const { return plan_; }
  // Nodes removed by constant folding / dead-node removal.
  size_t folded_nodes() const { return folded_; }
  size_t removed_nodes() const { return removed_; }
  // Activations fused into the node before them (graph::fuse_conv_activation).
  size_t fused_nodes() const { return fused_; }
  // Values the layout pass marked (blocked when their channels allow it).
  size_t blocked_marked() const { return blocked_marked_; }
  // Bytes of constants released after their kernels were built
  // (CompileOptions::release_begin).
  size_t released_bytes() const { return released_bytes_; }

 private:
  std::shared_ptr<graph::Graph> graph_;
  std::vector<CompiledNode> nodes_;
  std::vector<const graph::Value*> values_;
  std::unordered_map<const graph::Value*, int> ids_;
  std::vector<int> input_ids_, output_ids_, use_counts_;
  std::vector<int64_t> value_blocks_;  // by value id
  bool static_ = false;
  planner::MemoryPlan plan_;
  size_t folded_ = 0, removed_ = 0, fused_ = 0, blocked_marked_ = 0, released_bytes_ = 0;
};

// Runs one node's kernel on constant inputs outside any model (used by
// constant folding; also handy in tests). Outputs get owned buffers.
Status run_node_once(const graph::Node& node, const kernels::KernelDef& def,
                     const std::vector<std::shared_ptr<graph::TensorData>>& inputs,
                     const std::vector<graph::TensorType>& output_types,
                     std::vector<std::shared_ptr<graph::TensorData>>* outputs);

}  // namespace openacl::model
