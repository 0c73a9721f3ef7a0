// Control-flow kernels (If, Loop, Scan): they compile their bodies into
// CompiledModels and run them with Executors, so they live in the model layer
// rather than in kernels/cpu. compile() registers them once.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace openacl::model {

// Registers the If/Loop/Scan kernels, and FlexAttention (its modifiers are
// subgraphs too), for the "cpu" backend (idempotent).
void register_control_flow_kernels();
void register_flex_attention_kernel();

// The values a subgraph reads from its enclosing graph, in the subgraph's
// value order: no producer, not a graph input, no constant data.
std::vector<graph::Value*> subgraph_captures(const graph::Graph& body);

// For every node of g with subgraph attributes: appends the enclosing-graph
// values its bodies capture to the node's inputs (once each) and records the
// model's own input count in graph::kExplicitInputsAttr. Fails when a
// captured name is not a value of g.
Status make_captures_explicit(graph::Graph& g);

}  // namespace openacl::model
