// atc's command line: ATC's option names and syntax (`--name=value`, also
// `--name value` and gflags' single-dash `-name=value`), parsed into Options,
// plus the parsers for the structured option values (--input_shape, gears,
// --out_nodes, ...). Nothing here touches a graph; graph_edits.h applies the
// parsed values.
//
// Every parse error is a Status (code::kInvalidParam) whose message names the
// option, the bad text and what is expected, so main() can print it as is.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace openacl::atc {

struct Options {
  // Values as given, by option name (without dashes); the last occurrence wins
  // (gflags' rule).
  std::map<std::string, std::string> values;
  bool help = false;
  bool version = false;
  // Options ATC has that change nothing here (device tuning knobs); each is
  // accepted and reported once on stderr.
  std::vector<std::string> ignored;
  // The command line as typed (shell-quoted where needed), for OmMeta.
  std::string command_line;

  bool has(const std::string& name) const { return values.count(name) != 0; }
  std::string get(const std::string& name, const std::string& def = "") const {
    auto it = values.find(name);
    return it == values.end() ? def : it->second;
  }
};

// Parses argv. Unknown option -> error naming it and the nearest known name;
// a value option without a value -> error.
Status parse_args(int argc, char** argv, Options* out);

// Every option atc knows (for --help and suggestions).
const std::vector<std::string>& known_options();

// The candidate closest to `word` by edit distance (ties: first), "" if none.
std::string nearest_name(const std::string& word, const std::vector<std::string>& candidates);
// Up to `limit` candidates closest to `word`, closest first, quoted and
// comma-separated: "'conv1', 'conv2'".
std::string close_names(const std::string& word, const std::vector<std::string>& candidates, size_t limit = 5);

// A strict decimal integer (optional leading '-'); false for anything else.
bool parse_int(const std::string& text, int64_t* out);
// Splits on `sep`, trimming spaces; empty pieces are dropped.
std::vector<std::string> split(const std::string& text, char sep);

// One dim of --input_shape / --input_shape_range.
struct DimArg {
  int64_t value = 0;   // >= 0: fixed size
  bool gear = false;   // -1 in --input_shape: a gear dim
  bool free = false;   // a range ("1~16", or -1 in --input_shape_range): left unknown
  int64_t lo = 0, hi = -1;  // the range's ends when free (hi -1: unbounded)
};

struct ShapeArg {
  std::string name;
  std::vector<DimArg> dims;
};

// --input_shape "name:1,3,224,224;name2:-1,10" (a name may itself contain ':',
// the last one separates the dims; "name:" is a scalar). Dims: n >= 0, -1 (a
// gear dim), or "lo~hi" (a range; hi may be -1 for unbounded).
Status parse_input_shape(const std::string& text, std::vector<ShapeArg>* out);
// --input_shape_range "name:[1~16,3,224,224];name2:[-1,10]": -1 and ranges
// are free dims.
Status parse_input_shape_range(const std::string& text, std::vector<ShapeArg>* out);

// "node:0;node2:1" -> (node, index); an entry without ":index" is a tensor
// (value) name, returned with index -1.
struct OutNode {
  std::string node;
  int64_t index = -1;
};
Status parse_out_nodes(const std::string& option, const std::string& text, std::vector<OutNode>* out);

}  // namespace openacl::atc
