// The memory plan (STYLE.md 7: the memory plan is data). Compiling a graph
// yields one work arena holding every intermediate value at a fixed offset and
// one weight arena holding every constant; executing the graph then allocates
// nothing. The plan can be printed (to_string) and checked (validate).
//
// What goes where:
//  - Values produced by a node (not constant): a slot in the work arena, sized
//    elements x dtype bytes (or PlanOptions::storage_bytes) rounded up to
//    `alignment`, live from the step of the producer to the step of the last
//    consumer (both inclusive: a node reads its inputs while writing its
//    outputs). Outputs nobody reads live for their
//    producer's step only. Graph outputs live to the last step and are placed
//    in the work arena unless PlanOptions::outputs_in_work_arena is false (the
//    caller then provides output buffers and they get no slot).
//  - Constants (Value::constant): packed in the weight arena in the graph's
//    value order, each offset aligned; only constants some node reads or that
//    are graph outputs.
//  - Graph inputs: user memory, not planned.
// Every planned value must have a fully known shape; otherwise plan_memory
// fails with kInvalidParam naming the values (plan per concrete shape).
//
// In-place: when PlanOptions::can_alias(node, in, out) says the kernel may
// write output `out` over input `in`, and that input's memory dies at that
// node (no later reader, not a graph output), the output takes over the
// input's slot (Buffer::in_place_of names the input).
//
// Offsets: greedy by size (largest first, best-fit into the gaps left by
// already placed buffers whose lifetimes overlap), also tried in a few other
// orders, keeping the smallest arena. lower_bound is the exact peak of bytes
// live at one step for the chosen node order (in-place groups counted once),
// so work_size >= lower_bound always.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace openacl::planner {

struct Buffer {
  const graph::Value* value = nullptr;
  size_t offset = 0;  // into the work or weight arena
  size_t bytes = 0;   // rounded up to the plan's alignment
  int first_use = 0;  // step (index into MemoryPlan::order) that writes it; 0 for weights
  int last_use = 0;   // last step that reads it (inclusive)
  // The value whose slot this one reuses in place (same offset), or nullptr.
  const graph::Value* in_place_of = nullptr;
};

struct MemoryPlan {
  size_t alignment = 64;
  size_t work_size = 0;    // bytes of the work arena
  size_t weight_size = 0;  // bytes of the weight arena
  size_t lower_bound = 0;  // peak of simultaneously live work bytes
  std::vector<Buffer> work;     // sorted by first_use, then offset
  std::vector<Buffer> weights;  // in packing order
  std::vector<const graph::Node*> order;  // execution order; steps index it

  // The buffer of a value, or nullptr (graph input, unplanned output).
  const Buffer* find(const graph::Value* v) const;
  // work_size / lower_bound (1.0 when both are 0).
  double ratio() const;
  // A human-readable dump: sizes, then one line per step and per buffer.
  std::string to_string() const;
};

struct PlanOptions {
  size_t alignment = 64;  // a power of two
  // Whether node n's kernel may write output `out` over input `in`. Empty: never.
  std::function<bool(const graph::Node& n, size_t in, size_t out)> can_alias;
  // The bytes value v's tensor takes, given its plain size; empty: the
  // plain size (the compiled model's blocked tensors may need more: their
  // channels padded up to the block).
  std::function<size_t(const graph::Value& v, size_t plain_bytes)> storage_bytes;
  // Graph outputs get work-arena slots (live to the end). False when the caller
  // provides output buffers: then they are left out of the plan.
  bool outputs_in_work_arena = true;
};

// Plans g in the order of g.topological_order().
Status plan_memory(const graph::Graph& g, const PlanOptions& options, MemoryPlan* out);

// Checks a plan: offsets aligned, buffers inside their arena, weights disjoint,
// and no two work buffers with overlapping lifetimes overlapping in memory
// (except an in-place handoff: same offset, the reused one dying at the step
// that writes the other). Lists the first few violations in one Status.
Status validate(const MemoryPlan& plan);

}  // namespace openacl::planner
