// ONNX importer: a serialized ModelProto in, the graph IR out.
//
// What it guarantees: a returned Graph is structurally sound — every node
// input names a value that exists (graph input, initializer, Constant, another
// node's output, or an outer-scope value for subgraphs), every value has at
// most one producer, and the nodes have no cycle. Whether the ops are
// supported and the shapes consistent is for infer_shapes() and the
// supported-op check, not for the importer.
//
// Hostile input yields a Status, never a crash: sizes are checked against the
// bytes actually present before anything is allocated, and external data is
// read only from regular files inside the model's folder.
//
// Values the IR cannot hold yet (string / 4-bit / newer element types,
// sparse tensors) do not fail the import by themselves: such an initializer
// or Constant fails only when a node or graph output uses it
// (kUnsupportedDataType), and such an attribute is imported with kind
// kUndefined and the reason in Attribute::s, for the supported-op check to
// report with every other unsupported node.
//
// Subgraphs (If/Loop/Scan bodies, Attribute::g) are Graphs of their own. A
// name they read from an enclosing graph becomes a "capture" value there:
// same name and type, no producer, not a graph input (constant data shared
// when the outer value is a constant); executors bind it by name.
//
// Error codes (base/codes.h): kReadModelFailure — the model file (or an
// external-data file) cannot be read; kParseModel — not a ModelProto, or a
// structural error (message names the node/tensor and how to fix it).
//
// Thread-safety: the functions share no state; call them from any thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/status.h"
#include "graph/graph.h"

namespace openacl::graph::onnx {

// IR versions accepted. ONNX keeps ModelProto backward compatible and newer
// fields are ignored; 3 is the first with opset_import.
inline constexpr int kMinIrVersion = 3;
inline constexpr int kMaxIrVersion = 14;

struct ImportOptions {
  // Folder that external-data `location`s are relative to. Empty: a model
  // with external data is refused (import_file sets it to the file's folder).
  std::string base_dir;
};

// Parses `size` bytes at `data` (not retained) into *out. Constants own their
// bytes. On failure *out is left unchanged.
Status import_model(const void* data, size_t size, const ImportOptions& opts, std::unique_ptr<Graph>* out);

// Reads and imports a model file; external data is looked up next to it.
Status import_file(const std::string& path, std::unique_ptr<Graph>* out);

// Parses one serialized TensorProto (the ONNX backend test data format,
// input_0.pb / output_0.pb). External data is refused. `name` may be nullptr.
Status read_tensor_proto(const void* data, size_t size, std::shared_ptr<TensorData>* out, std::string* name);

}  // namespace openacl::graph::onnx
