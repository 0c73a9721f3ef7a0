// Op calls as JSON: CANN's `atc --singleop=ops.json` description format, and
// single-operator .om files (one op call each) that aclopSetModelDir /
// aclopLoad read back.
//
// ops.json is a list of ops:
//   [{"op": "Add",
//     "input_desc":  [{"format": "ND", "shape": [8, 16], "type": "float16"}, ...],
//     "output_desc": [{"format": "ND", "shape": [8, 16], "type": "float16"}],
//     "attr": [{"name": "alpha", "type": "float", "value": 1.0}, ...]}]
// input/output desc keys: format, shape (-1: dynamic dim, [-2]: unknown rank),
// type, and optional shape_range ([[min, max], ...]), name, and for inputs
// is_const + const_value (a flat list of numbers). An omitted optional input
// is {"format": "UNDEFINED", "shape": [], "type": "UNDEFINED"}. attr types:
// bool, int, float, string, data_type, list_bool, list_int, list_float,
// list_string, list_data_type, list_list_int.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "model/loaded_model.h"
#include "op/op_desc.h"
#include "op/single_op.h"

namespace openacl::op {

struct OpCall {
  std::string type;
  std::vector<TensorSpec> inputs, outputs;
  OpAttrs attrs;
};

// Parses ops.json text. Errors (kInvalidParam) name the op index and the field.
Status parse_ops_json(const std::string& text, std::vector<OpCall>* out);
// One op in the ops.json form (for the single_op meta of an .om and for tools).
std::string op_call_json(const OpCall& call);
Status op_call_from_json(const std::string& text, OpCall* out);

// A single-op .om: the op's graph (as compile builds it) and the call in the
// META section. Fails as CompiledOp::compile would (unknown op, bad specs...).
Status write_op_om(const OpCall& call, const std::string& producer_command, std::string* bytes);
// Reads a single-op .om and compiles its op (kOpLoadFailed for a model that
// is not a single-op .om or cannot be read).
Status load_op_om(const void* data, size_t size, const model::Allocator& allocator, std::shared_ptr<CompiledOp>* out);

// "ND" <-> 2, "float16" <-> kFloat16, as ops.json spells them.
bool format_from_name(const std::string& name, int* format);
const char* format_to_name(int format);
bool dtype_from_name(const std::string& name, graph::DType* dtype);

}  // namespace openacl::op
