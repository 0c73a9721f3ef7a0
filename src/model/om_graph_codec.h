// Private to src/model (om_format.cpp, om_meta.cpp): the binary encoding of
// the .om GRAPH section and the placement of constants in WEIGHTS.
//
// GRAPH encoding (little-endian; u32 counts, i32 value indices local to their
// graph, -1 for an omitted input/output; str = u32 length + bytes):
//   graph  := str name, u32 n, n x (str domain, i32 version),
//             u32 n, n x value, u32 n, n x i32 input, u32 n, n x i32 output,
//             u32 n, n x node
//   value  := str name, i32 dtype, u8 flags (1 rank known, 2 graph input,
//             4 graph output, 8 constant), [u32 rank, rank x dim], [tensor]
//   dim    := u8 0 + i64 size | u8 1 (unknown) | u8 2 + str symbol
//   tensor := i32 dtype, u32 ndims, ndims x i64, u64 offset, u64 bytes
//             (offset into WEIGHTS, 64-aligned; bytes == elements x size)
//   node   := str name, str op_type, str domain, i32 opset, u32 n, n x i32,
//             u32 n, n x i32, u32 n, n x (str name, u8 kind, payload)
//   payload by Attribute::Kind: float f32 | int i64 | string str | tensor |
//             graph | u32 n + n x (f32 | i64 | str | tensor | graph)
// Values a subgraph reads from an enclosing graph are values of the subgraph
// with no producer (as in the graph IR); they are kept by name, so value
// names are unique and non-empty within a graph.
//
// Both directions are deterministic: the same graph always encodes to the
// same bytes (the tests re-encode a decoded model and compare). Constants are
// placed in encounter order, deduplicated by (data pointer, size), each at the
// next 64-byte multiple (the container writes zero bytes in the gaps).
//
// No shared state: every function may run on any thread at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "graph/graph.h"

namespace openacl::model::detail {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the .om encoding is little-endian");

// Alignment of every constant within WEIGHTS.
inline constexpr size_t kConstAlign = 64;
// Subgraph nesting: real models nest If/Loop a few levels; the limit bounds
// the reader's recursion on hostile input (and the JSON dump's).
inline constexpr int kMaxGraphDepth = 32;

inline constexpr size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// One distinct block of constant bytes and where it goes in WEIGHTS.
struct WeightBlock {
  const void* data;  // the constant's bytes, owned by the graph encoded
  size_t bytes;
  size_t offset;     // from the start of WEIGHTS, a kConstAlign multiple
};

struct EncodedGraph {
  std::string bytes;                // the GRAPH section
  std::vector<WeightBlock> blocks;  // the WEIGHTS section's blocks, in offset order
  size_t weight_bytes = 0;          // WEIGHTS section size (end of the last block)
};

// Encodes g (and its subgraphs). Refuses with kInvalidParam (messages start
// "write_om:") what could not be read back: constants of types without a
// fixed element size, whose bytes disagree with their dims or that have no
// data; empty or repeated value names; references to values of another
// graph; subgraphs nested deeper than kMaxGraphDepth. `out->blocks` point
// into g's constants: g must outlive their use.
Status encode_graph(const graph::Graph& g, EncodedGraph* out);

// Decodes a GRAPH section of n bytes at p; every byte must belong to the
// graph. Constants point into `weights` (weight_bytes bytes; may be null when
// weight_bytes is 0) and hold `owner`. Malformed input is kParseModel naming
// the GRAPH section and the byte offset; nothing is read outside [p, p + n).
Status decode_graph_section(const uint8_t* p, size_t n, const uint8_t* weights, size_t weight_bytes,
                            std::shared_ptr<const void> owner, std::shared_ptr<graph::Graph>* out);

}  // namespace openacl::model::detail
