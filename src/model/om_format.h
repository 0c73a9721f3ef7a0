// The OpenACL offline model (.om): what `atc` writes and aclmdlLoad* reads.
//
// A versioned, checksummed container, little-endian, laid out for mmap:
//
//   header (64 bytes)    magic "OACLOM\r\n", format version, section count,
//                        file size, CRC-32C of the header and section table
//   section table        per section: kind, offset, size, CRC-32C
//   META section         JSON: producer, build options (the atc command line,
//                        soc_version, precision mode), input formats, gears,
//                        planned work/weight bytes per gear
//   GRAPH section        the optimised graph (binary, our own encoding): values
//                        with types, nodes with attributes, subgraphs; every
//                        constant refers to bytes of the WEIGHTS section
//   WEIGHTS section      every constant, 64-byte aligned, at the offsets the
//                        graph names; the section itself starts 4096-aligned so
//                        a mapped file can be used in place
//   PACKED section       (optional, version 2) weights atc packed for the
//                        kernels of the machine it ran on (kernels/pack_cache.h):
//                        per blob its source constant, its recipe and its
//                        bytes, 64-byte aligned, the section 4096-aligned
//
// The graph stored is the source graph after the shape-independent passes
// (constant folding, BatchNorm folding, activation fusion, dead nodes);
// kernels, layouts and per-gear plans are made at load, for the machine that
// loads (an .om is portable across CPUs and backends). PACKED only saves
// work: a loader whose kernels want other layouts packs from WEIGHTS.
//
// Reading is defensive: every offset, count and size is checked against the
// bytes present before use; a bad checksum, a truncated file or a future
// version is a Status (kDeserializeModel / kParseModel), never a crash.
//
// Details (om_format.cpp documents the byte layout):
// - Error codes: the container (magic, version, size, section table,
//   checksums) -> kDeserializeModel; its contents (META JSON, GRAPH encoding)
//   -> kParseModel, naming the section and the byte offset. write_om refuses
//   (kInvalidParam) what could not be read back: constants of types without a
//   fixed element size or whose bytes disagree with their dims, empty or
//   repeated value names, subgraphs nested deeper than 32 levels, invalid
//   gears. write_om_file: kWriteFile. GearSpec checks: kInvalidParam.
// - Version 1 has exactly the three sections, version 2 adds an optional
//   PACKED; a reader refuses unknown kinds (a later addition bumps the
//   version, so old builds say "rebuild"). Version 1 files still load.
// - META strings that are not UTF-8 are stored with U+FFFD replacements.
// - No shared state: every function may run on any thread at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"
#include "kernels/pack_cache.h"

namespace openacl::model {

enum class ModelFormat { kUnknown, kOnnx, kOm, kCannOm };

// Decides by content: our magic, CANN's (0x444F4D49 at offset 0), else ONNX
// when the bytes start like a protobuf ModelProto, else unknown.
ModelFormat sniff_format(const void* data, size_t size);
const char* format_name(ModelFormat f);

inline constexpr uint32_t kOmVersion = 2;
inline constexpr const char* kGearInputName = "ascend_mbatch_shape_data";

// ATC's gears. `positions` are the dims marked -1 in --input_shape, in input
// order then axis order. Each gear holds the values the user wrote for it:
//   kBatch:     {batch}         applied to every position
//   kImageSize: {height, width} applied to each input's two positions
//   kDims:      one value per position
enum class GearKind { kNone = 0, kBatch = 1, kImageSize = 2, kDims = 3 };

struct GearPosition {
  std::string input;
  int axis = 0;
};

struct GearSpec {
  GearKind kind = GearKind::kNone;
  std::vector<GearPosition> positions;
  std::vector<std::vector<int64_t>> gears;

  bool empty() const { return kind == GearKind::kNone; }
  // Values per gear in the gear input (ascend_mbatch_shape_data): 1, 2 or positions.size().
  size_t values_per_gear() const;
  // Checks kind/positions/gears agree (counts, positive values, 2..100 gears).
  Status validate() const;
  // The concrete shapes of the graph inputs named in `positions` under gear g,
  // starting from each input's declared shape (*out is replaced). Fails when
  // an input is missing, has no rank, an axis is out of range, or a declared
  // known dim differs from the gear's value.
  Status input_shapes(size_t g, const graph::Graph& graph, std::map<std::string, graph::Shape>* out) const;
  // The gear whose values are `values`, or -1.
  int find(const std::vector<int64_t>& values) const;
};

// What an .om holds besides the graph.
struct OmMeta {
  std::string producer;          // "OpenACL <version>"
  std::string build_command;     // the atc command line, for the record
  std::string soc_version;
  std::string precision_mode;
  std::string source;            // source model file name
  std::map<std::string, int> input_formats;  // aclFormat value per input name
  // atc --input_shape_range / "lo~hi" dims: per input, one [min, max] per dim
  // (max -1: unbounded; fixed dims [d, d]). Inputs without ranges are absent.
  std::map<std::string, std::vector<std::pair<int64_t, int64_t>>> input_ranges;
  GearSpec gears;
  // A single-operator model (atc --singleop): the op call it was built for,
  // as JSON (op/op_json.h); empty for a model.
  std::string single_op;
  // Planned bytes at build time (the largest gear); load recomputes them.
  uint64_t work_size = 0;
  uint64_t weight_size = 0;
};

struct OmModel {
  OmMeta meta;
  std::shared_ptr<graph::Graph> graph;
  // Written to PACKED (none: no section). source_offset is within WEIGHTS
  // as this graph lays it out (a PackCache over the decoded weights).
  std::vector<kernels::PackedBlob> packs;
};

// Serialises model into .om bytes. Constants are deduplicated by their data
// pointer and packed in the WEIGHTS section.
Status write_om(const OmModel& model, std::string* bytes);
Status write_om_file(const OmModel& model, const std::string& path);

// A section checksum open_om left to the caller (defer_weights).
struct SectionCheck {
  const char* name = "";
  const uint8_t* p = nullptr;
  size_t size = 0;
  uint32_t want = 0;
  bool drop = false;  // release the pages once checksummed (open_om's mapped_file rule)
};

// The parts of a validated .om, before the graph is decoded.
struct OmView {
  OmMeta meta;
  const uint8_t* graph = nullptr;
  size_t graph_bytes = 0;
  const uint8_t* weights = nullptr;  // inside the file bytes
  size_t weight_bytes = 0;
  // PACKED's blobs, data inside the file bytes (keep unset), checked to lie
  // in the section with their sources inside WEIGHTS.
  std::vector<kernels::PackedBlob> packed;
  size_t packed_bytes = 0;  // the section's size
  // WEIGHTS' and PACKED's checksums when open_om was asked to defer them.
  std::vector<SectionCheck> deferred;
};

// Checks header, section table, sizes and checksums, and parses META.
// mapped_file: `data` is a private read-only mapping of the file. When the
// file has PACKED (whose blobs kernels then use instead of most weights),
// WEIGHTS' pages are dropped (MADV_DONTNEED) as they are checksummed, so the
// check does not hold both in memory at once; a later read faults them back
// from the file. Never set it for other memory.
// defer_weights: WEIGHTS' and PACKED's checksums (nearly all of the bytes)
// are not computed but left in out->deferred, for the caller to run with
// verify_sections() while it builds, before it uses the model; everything
// else, PACKED's table included, is checked here as always. Exception: a
// mapped file without PACKED has WEIGHTS checked here (the build releases
// those pages after packing from them; a concurrent read would keep them).
Status open_om(const void* data, size_t size, OmView* out, bool mapped_file = false, bool defer_weights = false);

// Runs checksums open_om deferred; the first mismatch is the error open_om
// would have returned.
Status verify_sections(const std::vector<SectionCheck>& checks);

// Decodes the GRAPH section of `view` into a new graph. Constants point into
// `weights` (view.weight_bytes bytes, e.g. the file's own WEIGHTS section or a
// copy of it in device memory), kept alive by `owner`.
// Constants sit at 64-byte multiples from `weights`; constants that shared
// bytes when written share them again.
Status decode_graph(const OmView& view, const uint8_t* weights, std::shared_ptr<const void> owner,
                    std::shared_ptr<graph::Graph>* out);

// JSON dump of the model (atc --mode=1): meta, inputs, outputs, nodes with
// attributes (tensors summarised), no weight bytes.
std::string om_to_json(const OmModel& model);

}  // namespace openacl::model
