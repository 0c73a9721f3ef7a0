// Private to src/model (om_format.cpp): the .om META section, JSON.
//
// META is one compact JSON object, keys in this order: producer,
// build_command, soc_version, precision_mode, source (strings), input_formats
// (object: input name -> aclFormat integer), gears ({kind: "none" | "batch" |
// "image_size" | "dims", positions: [{input, axis}], gears: [[int]]}),
// work_size, weight_size (non-negative integers). The reader takes any key
// order and missing keys (defaults), and refuses wrong types.
//
// No shared state: every function may run on any thread at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/status.h"
#include "model/om_format.h"

namespace openacl::model::detail {

// "none", "batch", "image_size", "dims": the names META and messages use.
const char* gear_kind_name(GearKind k);

// The META section's bytes. Strings that are not UTF-8 are stored with U+FFFD
// replacements (never a failure).
std::string meta_to_json(const OmMeta& m);

// Parses META (n bytes at p) into *out (replaced on success only). Invalid
// JSON, wrong types or invalid gears: kParseModel ("the .om META section is
// invalid: ...").
Status parse_meta(const uint8_t* p, size_t n, OmMeta* out);

}  // namespace openacl::model::detail
