// The .om container: writer and defensive reader of the header, section
// table and checksums; GearSpec.
//
// Byte layout (all integers little-endian):
//
//   header, 64 bytes
//     0  char[8] magic "OACLOM\r\n"
//     8  u32     format version (kOmVersion)
//    12  u32     section count (3 in version 1; 3 or 4 in version 2)
//    16  u64     file size
//    24  u64     section table offset (64)
//    32  u32     CRC-32C of the 64 header bytes with this field zero,
//                continued over the section table
//    36  28 bytes reserved, zero
//   section table, 32 bytes per section
//     0  u32 kind (1 META, 2 GRAPH, 3 WEIGHTS,   4  u32 reserved
//                  4 PACKED)
//     8  u64 offset                              16 u64 size
//    24  u32 CRC-32C of the section's bytes      28 u32 reserved
//
// Version 1 has exactly one section of each of the first three kinds,
// version 2 may add one PACKED; any other kind is refused (an addition bumps
// the version, so an old reader says "rebuild" instead of silently ignoring
// what it does not know).
//
//   PACKED section (4096-aligned, like WEIGHTS)
//     0  u32 blob count        4  u32 reserved
//     8  per blob, 32 bytes:
//          0  u64 source offset, within WEIGHTS
//          8  u64 blob offset, from the section start, a multiple of 64
//         16  u64 blob bytes
//         24  u32 recipe offset, from the section start   28  u32 recipe bytes
//     then the recipes' bytes, then the blobs
//
// The GRAPH section's encoding is documented in om_graph_codec.h, META's in
// om_meta.h; this file is the container around them (and GearSpec).
#include "model/om_format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <set>

#include "base/crc32c.h"
#include "base/page_alloc.h"
#include "model/om_graph_codec.h"
#include "model/om_meta.h"

namespace openacl::model {

namespace {

using detail::align_up;
using detail::decode_graph_section;
using detail::encode_graph;
using detail::EncodedGraph;
using detail::gear_kind_name;
using detail::kConstAlign;
using detail::meta_to_json;
using detail::parse_meta;
using detail::WeightBlock;

constexpr char kMagic[8] = {'O', 'A', 'C', 'L', 'O', 'M', '\r', '\n'};
constexpr uint32_t kCannMagic = 0x444F4D49;  // CANN's ModelFileHeader magic
constexpr size_t kHeaderBytes = 64;
constexpr size_t kEntryBytes = 32;
constexpr size_t kSectionCount = 3;  // without PACKED
constexpr size_t kMaxSections = 4;
constexpr size_t kWeightsAlign = 4096;
constexpr size_t kPackedEntryBytes = 32;

enum SectionKind : uint32_t { kSecMeta = 1, kSecGraph = 2, kSecWeights = 3, kSecPacked = 4 };
const char* section_name(uint32_t k) {
  switch (k) {
    case kSecMeta: return "META";
    case kSecGraph: return "GRAPH";
    case kSecWeights: return "WEIGHTS";
    case kSecPacked: return "PACKED";
    default: return "unknown";
  }
}

void put_u32_at(std::string* s, size_t at, uint32_t v) { std::memcpy(s->data() + at, &v, 4); }
void put_u64_at(std::string* s, size_t at, uint64_t v) { std::memcpy(s->data() + at, &v, 8); }
uint32_t get_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

Status container_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status container_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return Errorf(code::kDeserializeModel, "not a readable OpenACL .om: %s", buf);
}

}  // namespace

// ---------------------------------------------------------------- public

ModelFormat sniff_format(const void* data, size_t size) {
  if (!data || size == 0) return ModelFormat::kUnknown;
  const auto* p = static_cast<const uint8_t*>(data);
  if (size >= sizeof kMagic && std::memcmp(p, kMagic, sizeof kMagic) == 0) return ModelFormat::kOm;
  if (size >= 4 && get_u32(p) == kCannMagic) return ModelFormat::kCannOm;
  // A ModelProto's first byte is a field tag: (field << 3) | wire type.
  // Fields 1..8 fit one byte; 14 (metadata_props) too; 20 (training_info)
  // and 25 (functions) need a two-byte varint tag.
  switch (p[0]) {
    case 0x08:  // 1 ir_version, varint
    case 0x12:  // 2 producer_name
    case 0x1A:  // 3 producer_version
    case 0x22:  // 4 domain
    case 0x28:  // 5 model_version, varint
    case 0x32:  // 6 doc_string
    case 0x3A:  // 7 graph
    case 0x42:  // 8 opset_import
    case 0x72:  // 14 metadata_props
      return ModelFormat::kOnnx;
    case 0xA2:  // 20 training_info: 0xA2 0x01
    case 0xCA:  // 25 functions: 0xCA 0x01
      return size >= 2 && p[1] == 0x01 ? ModelFormat::kOnnx : ModelFormat::kUnknown;
    default: return ModelFormat::kUnknown;
  }
}

const char* format_name(ModelFormat f) {
  switch (f) {
    case ModelFormat::kOnnx: return "ONNX";
    case ModelFormat::kOm: return "OpenACL .om";
    case ModelFormat::kCannOm: return "CANN .om";
    default: return "unknown";
  }
}

size_t GearSpec::values_per_gear() const {
  switch (kind) {
    case GearKind::kBatch: return 1;
    case GearKind::kImageSize: return 2;
    case GearKind::kDims: return positions.size();
    default: return 0;
  }
}

Status GearSpec::validate() const {
  const char* kn = gear_kind_name(kind);
  if (kind == GearKind::kNone) {
    if (!positions.empty() || !gears.empty())
      return Errorf(code::kInvalidParam, "gears: kind none but %zu positions and %zu gears are given", positions.size(),
                    gears.size());
    return Status::Ok();
  }
  if (kind != GearKind::kBatch && kind != GearKind::kImageSize && kind != GearKind::kDims)
    return Errorf(code::kInvalidParam, "gears: unknown kind %d", static_cast<int>(kind));
  if (gears.size() < 2 || gears.size() > 100)
    return Errorf(code::kInvalidParam, "%s gears: %zu given; ATC takes 2 to 100", kn, gears.size());
  if (positions.empty())
    return Errorf(code::kInvalidParam, "%s gears: no dim is marked -1 in the input shapes; mark the dims the gears set",
                  kn);
  // Positions come grouped by input, axes increasing within an input.
  std::map<std::string, std::vector<int>> axes;
  std::string last;
  for (size_t i = 0; i < positions.size(); ++i) {
    const GearPosition& p = positions[i];
    if (p.input.empty()) return Errorf(code::kInvalidParam, "%s gears: position %zu names no input", kn, i);
    if (p.axis < 0) return Errorf(code::kInvalidParam, "%s gears: position %zu has axis %d", kn, i, p.axis);
    auto& list = axes[p.input];
    if (!list.empty() && p.input != last)
      return Errorf(code::kInvalidParam, "%s gears: the positions of input '%s' are not together", kn, p.input.c_str());
    if (!list.empty() && p.axis <= list.back())
      return Errorf(code::kInvalidParam, "%s gears: input '%s' axis %d repeated or out of order", kn, p.input.c_str(),
                    p.axis);
    list.push_back(p.axis);
    last = p.input;
  }
  if (kind == GearKind::kImageSize)
    for (const auto& [in, list] : axes)
      if (list.size() != 2)
        return Errorf(code::kInvalidParam,
                      "image_size gears: input '%s' has %zu dims marked -1; it needs exactly 2 (height, width)",
                      in.c_str(), list.size());
  const size_t per = values_per_gear();
  std::set<std::vector<int64_t>> seen;
  for (size_t g = 0; g < gears.size(); ++g) {
    if (gears[g].size() != per)
      return Errorf(code::kInvalidParam, "%s gears: gear %zu has %zu values; each gear needs %zu", kn, g, gears[g].size(),
                    per);
    for (int64_t v : gears[g])
      if (v <= 0)
        return Errorf(code::kInvalidParam, "%s gears: gear %zu holds %lld; gear values must be > 0", kn, g,
                      static_cast<long long>(v));
    if (!seen.insert(gears[g]).second)
      return Errorf(code::kInvalidParam, "%s gears: gear %zu repeats an earlier gear", kn, g);
  }
  return Status::Ok();
}

Status GearSpec::input_shapes(size_t g, const graph::Graph& graph, std::map<std::string, graph::Shape>* out) const {
  OPENACL_RETURN_IF_ERROR(validate());
  if (empty()) {
    out->clear();
    return Status::Ok();
  }
  if (g >= gears.size())
    return Errorf(code::kInvalidParam, "gear %zu does not exist; the model has %zu gears", g, gears.size());
  std::map<std::string, graph::Shape> shapes;
  std::map<std::string, int> seen_of_input;  // image_size: 0 -> height, 1 -> width
  for (size_t i = 0; i < positions.size(); ++i) {
    const GearPosition& p = positions[i];
    auto it = shapes.find(p.input);
    if (it == shapes.end()) {
      const graph::Value* in = nullptr;
      for (const graph::Value* v : graph.inputs())
        if (v->name == p.input) in = v;
      if (!in)
        return Errorf(code::kInvalidParam, "gears: input '%s' is not an input of graph '%s'", p.input.c_str(),
                      graph.name.c_str());
      if (!in->type.shape)
        return Errorf(code::kInvalidParam, "gears: input '%s' has unknown rank; its axis %d cannot be set",
                      p.input.c_str(), p.axis);
      it = shapes.emplace(p.input, *in->type.shape).first;
    }
    graph::Shape& s = it->second;
    if (p.axis < 0 || static_cast<size_t>(p.axis) >= s.size())
      return Errorf(code::kInvalidParam, "gears: input '%s' has rank %zu; axis %d is out of range", p.input.c_str(),
                    s.size(), p.axis);
    int64_t v = 0;
    switch (kind) {
      case GearKind::kBatch: v = gears[g][0]; break;
      case GearKind::kImageSize: v = gears[g][static_cast<size_t>(seen_of_input[p.input]++)]; break;
      default: v = gears[g][i]; break;
    }
    graph::Dim& d = s[static_cast<size_t>(p.axis)];
    if (d.known() && d.value != v)
      return Errorf(code::kInvalidParam, "gears: input '%s' axis %d is declared %lld; gear %zu sets it to %lld",
                    p.input.c_str(), p.axis, static_cast<long long>(d.value), g, static_cast<long long>(v));
    d = graph::Dim(v);
  }
  *out = std::move(shapes);
  return Status::Ok();
}

int GearSpec::find(const std::vector<int64_t>& values) const {
  for (size_t i = 0; i < gears.size(); ++i)
    if (gears[i] == values) return static_cast<int>(i);
  return -1;
}

namespace {

// A model ready to write: everything before WEIGHTS as bytes (header, table,
// META, GRAPH, padding; checksums filled in), and the weight blocks to follow
// at `weights_off` (zero bytes between them). Lets write_om_file stream the
// weights from where they are instead of copying them once more.
struct Layout {
  std::string head;
  std::vector<WeightBlock> blocks;  // in offset order
  size_t weight_bytes = 0;
  // PACKED, when there are packs: at packed_off, its blocks (the table, then
  // the blobs) at offsets from the section start.
  size_t packed_off = 0;
  std::string packed_table;
  std::vector<WeightBlock> packed_blocks;
  size_t packed_bytes = 0;
  size_t total = 0;
};

// CRC-32C of a section made of blocks (WEIGHTS, PACKED) with zero padding between.
uint32_t weights_crc(const std::vector<WeightBlock>& blocks) {
  static const uint8_t kZeros[kConstAlign] = {};
  uint32_t crc = 0;
  size_t at = 0;
  for (const WeightBlock& b : blocks) {
    crc = crc32c(kZeros, b.offset - at, crc);
    crc = crc32c(b.data, b.bytes, crc);
    at = b.offset + b.bytes;
  }
  return crc;
}

// The PACKED section's table and blocks for `packs` (sources checked to lie
// in a WEIGHTS section of weight_bytes).
Status lay_out_packed(const std::vector<kernels::PackedBlob>& packs, size_t weight_bytes, Layout* out) {
  std::string& t = out->packed_table;
  const size_t n = packs.size();
  t.assign(8 + n * kPackedEntryBytes, '\0');
  put_u32_at(&t, 0, static_cast<uint32_t>(n));
  for (size_t i = 0; i < n; ++i) {
    const kernels::PackedBlob& b = packs[i];
    if (b.source_offset >= weight_bytes || (!b.data && b.bytes) || b.recipe.empty() || b.recipe.size() > (1u << 20))
      return Errorf(code::kInvalidParam,
                    "write_om: packed blob %zu is invalid (source offset %llu of %zu weight bytes, %zu-byte recipe)",
                    i, static_cast<unsigned long long>(b.source_offset), weight_bytes, b.recipe.size());
    put_u64_at(&t, 8 + i * kPackedEntryBytes, b.source_offset);
    put_u32_at(&t, 8 + i * kPackedEntryBytes + 24, static_cast<uint32_t>(t.size()));
    put_u32_at(&t, 8 + i * kPackedEntryBytes + 28, static_cast<uint32_t>(b.recipe.size()));
    t += b.recipe;
  }
  if (n > UINT32_MAX || t.size() > UINT32_MAX) return Errorf(code::kInvalidParam, "write_om: too many packed blobs");
  size_t at = t.size();
  for (size_t i = 0; i < n; ++i) {
    at = align_up(at, kConstAlign);
    put_u64_at(&t, 8 + i * kPackedEntryBytes + 8, at);
    put_u64_at(&t, 8 + i * kPackedEntryBytes + 16, packs[i].bytes);
    out->packed_blocks.push_back({packs[i].data, packs[i].bytes, at});
    at += packs[i].bytes;
  }
  out->packed_blocks.insert(out->packed_blocks.begin(), WeightBlock{t.data(), t.size(), 0});
  out->packed_bytes = at;
  return Status::Ok();
}

Status lay_out(const OmModel& model, Layout* out) {
  if (!model.graph) return Errorf(code::kInvalidParam, "write_om: the model has no graph");
  OPENACL_RETURN_IF_ERROR(model.meta.gears.validate());
  EncodedGraph eg;
  OPENACL_RETURN_IF_ERROR(encode_graph(*model.graph, &eg));
  const std::string meta = meta_to_json(model.meta);
  const bool packed = !model.packs.empty();
  if (packed) OPENACL_RETURN_IF_ERROR(lay_out_packed(model.packs, eg.weight_bytes, out));
  const size_t sections = packed ? kMaxSections : kSectionCount;

  const size_t table = kHeaderBytes;
  const size_t meta_off = table + sections * kEntryBytes;
  const size_t graph_off = align_up(meta_off + meta.size(), 8);
  const size_t weights_off = align_up(graph_off + eg.bytes.size(), kWeightsAlign);
  out->packed_off = packed ? align_up(weights_off + eg.weight_bytes, kWeightsAlign) : 0;
  out->total = packed ? out->packed_off + out->packed_bytes : weights_off + eg.weight_bytes;
  std::string& h = out->head;
  h.assign(weights_off, '\0');
  std::memcpy(h.data() + meta_off, meta.data(), meta.size());
  std::memcpy(h.data() + graph_off, eg.bytes.data(), eg.bytes.size());
  std::memcpy(h.data(), kMagic, sizeof kMagic);
  put_u32_at(&h, 8, kOmVersion);
  put_u32_at(&h, 12, static_cast<uint32_t>(sections));
  put_u64_at(&h, 16, out->total);
  put_u64_at(&h, 24, table);
  const struct {
    uint32_t kind;
    size_t off, size;
    uint32_t crc;
  } secs[kMaxSections] = {
      {kSecMeta, meta_off, meta.size(), crc32c(meta.data(), meta.size())},
      {kSecGraph, graph_off, eg.bytes.size(), crc32c(eg.bytes.data(), eg.bytes.size())},
      {kSecWeights, weights_off, eg.weight_bytes, weights_crc(eg.blocks)},
      {kSecPacked, out->packed_off, out->packed_bytes, packed ? weights_crc(out->packed_blocks) : 0}};
  for (size_t i = 0; i < sections; ++i) {
    const size_t e = table + i * kEntryBytes;
    put_u32_at(&h, e, secs[i].kind);
    put_u64_at(&h, e + 8, secs[i].off);
    put_u64_at(&h, e + 16, secs[i].size);
    put_u32_at(&h, e + 24, secs[i].crc);
  }
  put_u32_at(&h, 32, crc32c(h.data(), meta_off));  // header (crc field still 0) + table
  out->blocks = std::move(eg.blocks);
  out->weight_bytes = eg.weight_bytes;
  return Status::Ok();
}

// write(2) all of it; errno on failure, 0 on success.
int write_all(int fd, const void* data, size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

int write_zeros(int fd, size_t n) {
  static const uint8_t kZeros[kWeightsAlign] = {};
  int err = 0;
  while (n && !err) {
    const size_t k = std::min(n, sizeof kZeros);
    err = write_all(fd, kZeros, k);
    n -= k;
  }
  return err;
}

// A section's blocks with the zero padding between them.
int write_blocks(int fd, const std::vector<WeightBlock>& blocks) {
  size_t at = 0;
  int err = 0;
  for (const WeightBlock& b : blocks) {
    if (!err) err = write_zeros(fd, b.offset - at);
    if (!err) err = write_all(fd, b.data, b.bytes);
    at = b.offset + b.bytes;
  }
  return err;
}

// CRC-32C of a section's bytes. drop: they are a private read-only file
// mapping, page-aligned (WEIGHTS): each chunk's pages are released once
// checksummed.
uint32_t section_crc(const uint8_t* p, size_t n, bool drop) {
  if (!drop) return crc32c(p, n);
  constexpr size_t kChunk = size_t{4} << 20;
  uint32_t crc = 0;
  for (size_t at = 0; at < n; at += kChunk) {
    const size_t len = std::min(kChunk, n - at);
    crc = crc32c(p + at, len, crc);
    release_pages(p + at, len);  // the last partial page stays
  }
  return crc;
}

// The PACKED section's table (layout at the top), every entry checked.
Status parse_packed(const uint8_t* p, size_t n, size_t weight_bytes, std::vector<kernels::PackedBlob>* out) {
  if (n < 8) return Errorf(code::kParseModel, "PACKED section: %zu bytes, too short for its blob count", n);
  const uint64_t count = get_u32(p);
  if (count > (n - 8) / kPackedEntryBytes)
    return Errorf(code::kParseModel, "PACKED section: %llu blobs do not fit its %zu bytes",
                  static_cast<unsigned long long>(count), n);
  out->clear();
  for (uint64_t i = 0; i < count; ++i) {
    const uint8_t* e = p + 8 + i * kPackedEntryBytes;
    const uint64_t source = get_u64(e), off = get_u64(e + 8), bytes = get_u64(e + 16);
    const uint64_t r_off = get_u32(e + 24), r_len = get_u32(e + 28);
    const size_t at = static_cast<size_t>(8 + i * kPackedEntryBytes);
    if (source >= weight_bytes)
      return Errorf(code::kParseModel, "PACKED section, byte %zu: blob %llu's source offset %llu is outside the %zu "
                    "weight bytes", at, static_cast<unsigned long long>(i), static_cast<unsigned long long>(source),
                    weight_bytes);
    if (off % kConstAlign || off > n || bytes > n - off)
      return Errorf(code::kParseModel, "PACKED section, byte %zu: blob %llu (%llu bytes at %llu) lies outside the "
                    "%zu-byte section or is not %zu-aligned", at, static_cast<unsigned long long>(i),
                    static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(off), n, kConstAlign);
    if (r_len == 0 || r_off > n || r_len > n - r_off)
      return Errorf(code::kParseModel, "PACKED section, byte %zu: blob %llu's recipe (%llu bytes at %llu) lies "
                    "outside the section", at, static_cast<unsigned long long>(i),
                    static_cast<unsigned long long>(r_len), static_cast<unsigned long long>(r_off));
    kernels::PackedBlob b;
    b.source_offset = source;
    b.recipe.assign(reinterpret_cast<const char*>(p + r_off), static_cast<size_t>(r_len));
    b.data = p + off;
    b.bytes = static_cast<size_t>(bytes);
    out->push_back(std::move(b));
  }
  return Status::Ok();
}

}  // namespace

Status write_om(const OmModel& model, std::string* bytes) {
  Layout l;
  OPENACL_RETURN_IF_ERROR(lay_out(model, &l));
  const size_t weights_off = l.head.size();
  std::string& out = l.head;
  try {
    out.resize(l.total, '\0');
  } catch (const std::bad_alloc&) {
    return Errorf(code::kBadAlloc, "write_om: cannot allocate %zu bytes for the .om", l.total);
  }
  for (const WeightBlock& b : l.blocks) std::memcpy(out.data() + weights_off + b.offset, b.data, b.bytes);
  for (const WeightBlock& b : l.packed_blocks)
    if (b.bytes) std::memcpy(out.data() + l.packed_off + b.offset, b.data, b.bytes);
  *bytes = std::move(out);
  return Status::Ok();
}

Status write_om_file(const OmModel& model, const std::string& path) {
  Layout l;
  OPENACL_RETURN_IF_ERROR(lay_out(model, &l));
  // Written beside the target and renamed over it, so a reader never sees a
  // half-written model and a failed write leaves the old file in place.
  static std::atomic<uint64_t> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    const uint64_t stamp = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    tmp = strformat("%s.tmp.%d.%llu.%llu", path.c_str(), static_cast<int>(getpid()),
                    static_cast<unsigned long long>(counter++), static_cast<unsigned long long>(stamp % 1000000));
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0)
    return Errorf(code::kWriteFile, "cannot create '%s' (to write '%s'): %s; check the folder exists and is writable",
                  tmp.c_str(), path.c_str(), std::strerror(errno));
  int err = write_all(fd, l.head.data(), l.head.size());
  if (!err) err = write_blocks(fd, l.blocks);
  if (!err && l.packed_off) {
    err = write_zeros(fd, l.packed_off - (l.head.size() + l.weight_bytes));
    if (!err) err = write_blocks(fd, l.packed_blocks);
  }
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    return Errorf(code::kWriteFile, "cannot write '%s' (%zu bytes): %s", path.c_str(), l.total, std::strerror(err));
  }
  return Status::Ok();
}

Status verify_sections(const std::vector<SectionCheck>& checks) {
  for (const SectionCheck& c : checks) {
    const uint32_t got = section_crc(c.p, c.size, c.drop);
    if (got != c.want)
      return container_error("%s section checksum mismatch (stored 0x%08x, computed 0x%08x): the file is corrupted",
                             c.name, c.want, got);
  }
  return Status::Ok();
}

Status open_om(const void* data, size_t size, OmView* out, bool mapped_file, bool defer_weights) {
  if (!data && size) return Errorf(code::kInvalidParam, "open_om: data is null");
  const auto* p = static_cast<const uint8_t*>(data);
  if (size < sizeof kMagic || std::memcmp(p, kMagic, sizeof kMagic) != 0) {
    if (size >= 4 && get_u32(p) == kCannMagic)
      return container_error("it is a CANN-built .om (NPU code); rebuild it from the source model with OpenACL's atc");
    return container_error("the magic \"OACLOM\" is missing (%zu bytes given); pass a model written by atc", size);
  }
  if (size < kHeaderBytes) return container_error("truncated: %zu bytes, the header alone takes %zu", size, kHeaderBytes);
  const uint32_t version = get_u32(p + 8);
  if (version > kOmVersion)
    return container_error(
        "the model is .om version %u, but this build reads version %u; rebuild the model with this build's atc",
        version, kOmVersion);
  if (version == 0) return container_error("format version 0 is invalid (corrupted header)");
  const uint64_t file_size = get_u64(p + 16);
  if (file_size != size)
    return container_error("the header says the file has %llu bytes but %zu are given (truncated or appended to)",
                           static_cast<unsigned long long>(file_size), size);
  const uint32_t count = get_u32(p + 12);
  const uint64_t table = get_u64(p + 24);
  const size_t max_count = version >= 2 ? kMaxSections : kSectionCount;
  if (count < kSectionCount || count > max_count || table != kHeaderBytes)
    return container_error("section count %u / table offset %llu: version %u has %zu to %zu sections at offset %zu",
                           count, static_cast<unsigned long long>(table), version, kSectionCount, max_count,
                           kHeaderBytes);
  const size_t table_end = kHeaderBytes + count * kEntryBytes;
  if (size < table_end) return container_error("truncated in the section table (%zu bytes)", size);
  uint8_t header[kHeaderBytes];
  std::memcpy(header, p, kHeaderBytes);
  std::memset(header + 32, 0, 4);
  const uint32_t stored = get_u32(p + 32);
  const uint32_t computed = crc32c(p + kHeaderBytes, table_end - kHeaderBytes, crc32c(header, kHeaderBytes));
  if (stored != computed)
    return container_error("header checksum mismatch (stored 0x%08x, computed 0x%08x): the file is corrupted", stored,
                           computed);

  struct Sec {
    const uint8_t* p = nullptr;
    size_t off = 0, size = 0;
    bool seen = false;
  } secs[kMaxSections + 1];
  std::vector<std::pair<size_t, size_t>> ranges;
  std::vector<SectionCheck> deferred;
  const uint32_t last_kind = version >= 2 ? kSecPacked : kSecWeights;
  bool has_packed = false;
  for (size_t i = 0; i < count; ++i) has_packed = has_packed || get_u32(p + kHeaderBytes + i * kEntryBytes) == kSecPacked;
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* e = p + kHeaderBytes + i * kEntryBytes;
    const uint32_t kind = get_u32(e);
    const uint64_t off = get_u64(e + 8), len = get_u64(e + 16);
    if (kind < kSecMeta || kind > last_kind)
      return container_error("section %zu has unknown kind %u (a version %u file)", i, kind, version);
    Sec& s = secs[kind];
    if (s.seen) return container_error("section %s appears twice", section_name(kind));
    if (off < table_end || off > size || len > size - off)
      return container_error("section %s at offset %llu, %llu bytes, lies outside the %zu-byte file",
                             section_name(kind), static_cast<unsigned long long>(off),
                             static_cast<unsigned long long>(len), size);
    if ((kind == kSecWeights || kind == kSecPacked) && off % kWeightsAlign)
      return container_error("section %s at offset %llu is not %zu-aligned", section_name(kind),
                             static_cast<unsigned long long>(off), kWeightsAlign);
    s = {p + off, static_cast<size_t>(off), static_cast<size_t>(len), true};
    ranges.emplace_back(s.off, s.size);
    const SectionCheck check{section_name(kind), s.p, s.size, get_u32(e + 24),
                             mapped_file && has_packed && kind == kSecWeights};
    // A mapped file without PACKED checks WEIGHTS here: its kernels pack
    // from those pages and the build then releases them, which a checksum
    // still reading them would undo (they would stay resident).
    const bool defer = defer_weights && (kind == kSecPacked || (kind == kSecWeights && (!mapped_file || has_packed)));
    if (defer) deferred.push_back(check);
    else OPENACL_RETURN_IF_ERROR(verify_sections({check}));
  }
  for (uint32_t k = kSecMeta; k <= kSecWeights; ++k)
    if (!secs[k].seen) return container_error("section %s is missing", section_name(k));
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i - 1].first + ranges[i - 1].second > ranges[i].first)
      return container_error("sections overlap at offset %zu", ranges[i].first);

  OmView v;
  OPENACL_RETURN_IF_ERROR(parse_meta(secs[kSecMeta].p, secs[kSecMeta].size, &v.meta));
  v.graph = secs[kSecGraph].p;
  v.graph_bytes = secs[kSecGraph].size;
  v.weights = secs[kSecWeights].p;
  v.weight_bytes = secs[kSecWeights].size;
  if (secs[kSecPacked].seen) {
    OPENACL_RETURN_IF_ERROR(parse_packed(secs[kSecPacked].p, secs[kSecPacked].size, v.weight_bytes, &v.packed));
    v.packed_bytes = secs[kSecPacked].size;
  }
  v.deferred = std::move(deferred);
  *out = std::move(v);
  return Status::Ok();
}

Status decode_graph(const OmView& view, const uint8_t* weights, std::shared_ptr<const void> owner,
                    std::shared_ptr<graph::Graph>* out) {
  if (!view.graph && view.graph_bytes) return Errorf(code::kInvalidParam, "decode_graph: the view has no GRAPH bytes");
  if (!weights && view.weight_bytes)
    return Errorf(code::kInvalidParam, "decode_graph: weights is null but the model has %zu weight bytes",
                  view.weight_bytes);
  return decode_graph_section(view.graph, view.graph_bytes, weights, view.weight_bytes, std::move(owner), out);
}
}  // namespace openacl::model
