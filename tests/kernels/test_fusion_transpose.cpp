// Transpose pairs (graph::merge_transposes): two Transposes in a row become
// one with the permutations composed, or none where they cancel; the merged
// model gives what the unmerged one gives, node for node as expected.
#include <gtest/gtest.h>

#include <numeric>

#include "fusion_test_util.h"
#include "graph/passes.h"

namespace openacl::model {
namespace {

using graph::Graph;
using graph::Node;
using graph::Value;

struct Case {
  const char* name;
  std::vector<int64_t> p1, p2;  // empty: the attribute left out (reverse the axes)
  bool first_is_output;         // the first Transpose's output is a graph output too
  bool second_is_output;        // the second's output is the graph output (else a Relu reads it)
  size_t nodes_after;           // nodes left after compile with folding
  const char* op_left;          // the op type of the node that reads x (or writes the output)
};

// x [2, 3, 4, 5] -> Transpose(p1) -> Transpose(p2) -> [Relu] -> output.
fusion_test::Result run(const Case& k, bool fold) {
  auto gp = std::make_shared<Graph>();
  Graph& g = *gp;
  g.opsets()[""] = 17;
  Value* x = fusion_test::input(g, "x", {2, 3, 4, 5});
  auto transpose = [&](Value* in, const std::vector<int64_t>& p, const char* name) {
    Value* out = g.add_value(name);
    Node* n = g.add_node(name, "Transpose", {in}, {out}, "", 17);
    if (!p.empty()) n->attrs.set("perm", fusion_test::ints(p));
    return out;
  };
  Value* a = transpose(x, k.p1, "t1");
  Value* b = transpose(a, k.p2, "t2");
  Value* y = b;
  if (!k.second_is_output) {
    y = g.add_value("y");
    g.add_node("relu", "Relu", {b}, {y}, "", 17);
  }
  y->is_graph_output = true;
  g.outputs().push_back(y);
  if (k.first_is_output) {
    a->is_graph_output = true;
    g.outputs().push_back(a);
  }
  std::vector<float> xv(2 * 3 * 4 * 5);
  std::iota(xv.begin(), xv.end(), -60.f);
  return fusion_test::compile_and_run(gp, fold, {kernels::Tensor{graph::DType::kFloat32, {2, 3, 4, 5}, xv.data()}});
}

TEST(MergeTransposes, SameOutputsAndFewerNodes) {
  const Case cases[] = {
      {"NHWC then back: gone", {0, 2, 3, 1}, {0, 3, 1, 2}, false, false, 1, "Relu"},
      {"default perm twice: gone", {}, {}, false, false, 1, "Relu"},
      {"composed into one", {0, 2, 3, 1}, {1, 0, 2, 3}, false, true, 1, "Transpose"},
      {"cancelling, output of the pair: an Identity", {0, 2, 3, 1}, {0, 3, 1, 2}, false, true, 1, "Identity"},
      {"first also read as an output: it stays", {0, 2, 3, 1}, {0, 3, 1, 2}, true, false, 2, "Relu"},
      {"perm and its reverse default: composed", {3, 2, 0, 1}, {}, false, true, 1, "Transpose"},
  };
  for (const Case& k : cases) {
    const fusion_test::Result plain = run(k, false);
    const fusion_test::Result merged = run(k, true);
    fusion_test::expect_near(plain.outputs, merged.outputs, k.name);
    EXPECT_EQ(merged.nodes, k.nodes_after) << k.name;
    ASSERT_TRUE(merged.model) << k.name;
    bool found = false;
    for (const CompiledNode& cn : merged.model->nodes()) found = found || cn.node->op_type == k.op_left;
    EXPECT_TRUE(found) << k.name << ": no " << k.op_left;
    if (std::string(k.op_left) == "Transpose") {  // one Transpose, reading x itself
      for (const CompiledNode& cn : merged.model->nodes()) {
        if (cn.node->op_type == "Transpose") {
          EXPECT_EQ(cn.node->input(0)->name, "x") << k.name;
        }
      }
    }
  }
}

}  // namespace
}  // namespace openacl::model
