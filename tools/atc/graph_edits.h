// The edits atc makes on an imported graph before it is optimised, one per
// option: declared input shapes (--input_shape, --input_shape_range), the
// gear description (--dynamic_*), chosen outputs (--out_nodes), output casts
// (--output_type) and float16 inputs (--input_fp16_nodes).
//
// Each edit keeps the graph sound (producer/consumer links, unique value
// names) and keeps the names users see: a cast inserted on a graph output
// takes over the output's value (and name) and the producer writes a new
// internal value instead. Errors are kInvalidParam Statuses naming the option,
// the bad value and close valid names.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "model/om_format.h"
#include "options.h"

namespace openacl::atc {

// Sets the declared shapes of the named graph inputs. A gear dim (-1) or a
// range becomes an unknown dim (a declared symbolic dim keeps its symbol);
// other inputs keep their declared shapes. `option` names the option in
// messages.
Status apply_input_shapes(graph::Graph& g, const std::string& option, const std::vector<ShapeArg>& shapes);

// The gear options as given ("" = absent).
struct GearArgs {
  std::string batch;       // --dynamic_batch_size "1,2,4,8"
  std::string image_size;  // --dynamic_image_size "112,112;224,224"
  std::string dims;        // --dynamic_dims "4,224;8,224"
};

// Builds the GearSpec by ATC's rules: at most one gear option; a gear option
// needs -1 dims in --input_shape and -1 dims need a gear option; batch: -1
// only on axis 0; image size: exactly two -1 dims per input that has any;
// dims: one value per -1 dim in every gear. Positions: the -1 dims in
// --input_shape order, then axis order. Ends with GearSpec::validate().
Status build_gears(const std::vector<ShapeArg>& shapes, const GearArgs& args, model::GearSpec* out);

// --out_nodes: the graph outputs become these node outputs, in this order.
Status set_out_nodes(graph::Graph& g, const std::vector<OutNode>& outs);

// --output_type: "FP32" / "FP16" / "UINT8" for every floating-point output, or
// "node:idx:FP16;..." per output. Inserts ONNX Cast nodes. `notes` receives
// what was skipped or renamed.
Status set_output_types(graph::Graph& g, const std::string& text, std::vector<std::string>* notes);

// --input_fp16_nodes "in1;in2": those float inputs are fed as float16; a Cast
// back to the original type follows each.
Status set_input_fp16(graph::Graph& g, const std::string& text, std::vector<std::string>* notes);

}  // namespace openacl::atc
