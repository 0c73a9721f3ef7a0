// The .om container: writer, defensive reader, graph encoding, META JSON.
//
// Byte layout (all integers little-endian):
//
//   header, 64 bytes
//     0  char[8] magic "OACLOM\r\n"
//     8  u32     format version (kOmVersion)
//    12  u32     section count (3 in version 1)
//    16  u64     file size
//    24  u64     section table offset (64)
//    32  u32     CRC-32C of the 64 header bytes with this field zero,
//                continued over the section table
//    36  28 bytes reserved, zero
//   section table, 32 bytes per section
//     0  u32 kind (1 META, 2 GRAPH, 3 WEIGHTS)   4  u32 reserved
//     8  u64 offset                              16 u64 size
//    24  u32 CRC-32C of the section's bytes      28 u32 reserved
//
// Version 1 has exactly one section of each kind; any other kind is refused
// (an addition bumps the version, so an old reader says "rebuild" instead of
// silently ignoring what it does not know).
//
// GRAPH encoding (u32 counts, i32 value indices local to their graph, -1 for
// an omitted input/output; str = u32 length + bytes):
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
// with no producer (as in the graph IR); they are kept by name.
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
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "base/crc32c.h"

namespace openacl::model {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the .om encoding is little-endian");

namespace {

using graph::Attribute;
using graph::DType;
using graph::Graph;
using graph::Node;
using graph::TensorData;
using graph::Value;
using Kind = graph::Attribute::Kind;

constexpr char kMagic[8] = {'O', 'A', 'C', 'L', 'O', 'M', '\r', '\n'};
constexpr uint32_t kCannMagic = 0x444F4D49;  // CANN's ModelFileHeader magic
constexpr size_t kHeaderBytes = 64;
constexpr size_t kEntryBytes = 32;
constexpr size_t kSectionCount = 3;
constexpr size_t kWeightsAlign = 4096;
constexpr size_t kConstAlign = 64;
// Subgraph nesting: real models nest If/Loop a few levels; the limit bounds
// the reader's recursion on hostile input.
constexpr int kMaxGraphDepth = 32;
constexpr int32_t kMaxDType = static_cast<int32_t>(DType::kInt2);

enum SectionKind : uint32_t { kSecMeta = 1, kSecGraph = 2, kSecWeights = 3 };
const char* section_name(uint32_t k) {
  switch (k) {
    case kSecMeta: return "META";
    case kSecGraph: return "GRAPH";
    case kSecWeights: return "WEIGHTS";
    default: return "unknown";
  }
}

// Value flags in the GRAPH encoding.
constexpr uint8_t kHasRank = 1, kIsInput = 2, kIsOutput = 4, kIsConstant = 8;
// Dim kinds.
constexpr uint8_t kDimKnown = 0, kDimUnknown = 1, kDimSymbolic = 2;

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
size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// ---------------------------------------------------------------- writing

class Encoder {
 public:
  std::string out;

  void u8(uint8_t v) { out.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
  void i32(int32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
  void u64(uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
  void i64(int64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
  void f32(float v) { out.append(reinterpret_cast<const char*>(&v), 4); }
  void str(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    out.append(s);
  }
};

// One distinct block of constant bytes and where it goes in WEIGHTS.
struct WeightBlock {
  const void* data;
  size_t bytes;
  size_t offset;
};

class GraphWriter {
 public:
  Encoder enc;
  std::vector<WeightBlock> blocks;
  size_t weight_end = 0;

  Status graph(const Graph& g, int depth) {
    if (depth > kMaxGraphDepth)
      return Errorf(code::kInvalidParam, "write_om: subgraphs nest deeper than %d levels (graph '%s')", kMaxGraphDepth,
                    g.name.c_str());
    if (g.values().size() > INT32_MAX || g.nodes().size() > INT32_MAX)
      return Errorf(code::kInvalidParam, "write_om: graph '%s' is too large for the .om encoding", g.name.c_str());
    enc.str(g.name);
    enc.u32(static_cast<uint32_t>(g.opsets().size()));
    for (const auto& [domain, version] : g.opsets()) {
      enc.str(domain);
      enc.i32(version);
    }
    std::unordered_map<const Value*, int32_t> index;
    std::unordered_set<std::string> names;
    enc.u32(static_cast<uint32_t>(g.values().size()));
    for (const auto& v : g.values()) {
      // The reader finds values by name (captures resolve by name), so a
      // name used twice could not be read back; refuse it here.
      if (v->name.empty() || !names.insert(v->name).second)
        return Errorf(code::kInvalidParam, "write_om: graph '%s' has %s value name '%s'; value names must be unique",
                      g.name.c_str(), v->name.empty() ? "an empty" : "a repeated", v->name.c_str());
      index.emplace(v.get(), static_cast<int32_t>(index.size()));
      OPENACL_RETURN_IF_ERROR(value(*v));
    }
    auto ref = [&](const Value* v, const std::string& where, int32_t* out) {
      if (!v) {
        *out = -1;
        return Status::Ok();
      }
      auto it = index.find(v);
      if (it == index.end())
        return Errorf(code::kInvalidParam, "write_om: %s refers to value '%s', which is not a value of graph '%s'",
                      where.c_str(), v->name.c_str(), g.name.c_str());
      *out = it->second;
      return Status::Ok();
    };
    for (const auto* list : {&g.inputs(), &g.outputs()}) {
      enc.u32(static_cast<uint32_t>(list->size()));
      for (const Value* v : *list) {
        int32_t i = -1;
        OPENACL_RETURN_IF_ERROR(ref(v, list == &g.inputs() ? "a graph input" : "a graph output", &i));
        if (i < 0) return Errorf(code::kInvalidParam, "write_om: graph '%s' lists a null input/output", g.name.c_str());
        enc.i32(i);
      }
    }
    enc.u32(static_cast<uint32_t>(g.nodes().size()));
    for (const auto& n : g.nodes()) {
      enc.str(n->name);
      enc.str(n->op_type);
      enc.str(n->domain);
      enc.i32(n->opset);
      for (const auto* list : {&n->inputs, &n->outputs}) {
        enc.u32(static_cast<uint32_t>(list->size()));
        for (const Value* v : *list) {
          int32_t i = -1;
          OPENACL_RETURN_IF_ERROR(ref(v, "node " + n->describe(), &i));
          enc.i32(i);
        }
      }
      enc.u32(static_cast<uint32_t>(n->attrs.all().size()));
      for (const auto& [name, a] : n->attrs.all())
        OPENACL_RETURN_IF_ERROR(attribute(name, a, *n, depth));
    }
    return Status::Ok();
  }

 private:
  // Deduplicated by (data pointer, size): constants shared between values,
  // attributes and subgraphs are stored once.
  std::map<std::pair<const void*, size_t>, size_t> placed_;

  Status tensor(const TensorData& t, const std::string& what) {
    const size_t elem = graph::dtype_bytes(t.dtype);
    if (elem == 0)
      return Errorf(code::kInvalidParam, "write_om: %s is a %s constant; the .om stores fixed-size element types only",
                    what.c_str(), graph::dtype_name(t.dtype));
    uint64_t count = 1;
    for (int64_t d : t.dims)
      if (d < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(d), &count))
        return Errorf(code::kInvalidParam, "write_om: %s has invalid dims", what.c_str());
    uint64_t need = 0;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(elem), &need) || need != t.bytes)
      return Errorf(code::kInvalidParam, "write_om: %s holds %zu bytes but its dims and %s need %llu", what.c_str(),
                    t.bytes, graph::dtype_name(t.dtype), static_cast<unsigned long long>(need));
    if (t.bytes && !t.data) return Errorf(code::kInvalidParam, "write_om: %s has no data", what.c_str());
    size_t offset;
    auto key = std::make_pair(t.data, t.bytes);
    auto it = placed_.find(key);
    if (it != placed_.end()) {
      offset = it->second;
    } else {
      offset = align_up(weight_end, kConstAlign);
      if (t.bytes) {
        blocks.push_back({t.data, t.bytes, offset});
        weight_end = offset + t.bytes;
      }
      placed_.emplace(key, offset);
    }
    enc.i32(static_cast<int32_t>(t.dtype));
    enc.u32(static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) enc.i64(d);
    enc.u64(offset);
    enc.u64(t.bytes);
    return Status::Ok();
  }

  Status value(const Value& v) {
    enc.str(v.name);
    enc.i32(static_cast<int32_t>(v.type.dtype));
    uint8_t flags = 0;
    if (v.type.shape) flags |= kHasRank;
    if (v.is_graph_input) flags |= kIsInput;
    if (v.is_graph_output) flags |= kIsOutput;
    if (v.constant) flags |= kIsConstant;
    enc.u8(flags);
    if (v.type.shape) {
      enc.u32(static_cast<uint32_t>(v.type.shape->size()));
      for (const graph::Dim& d : *v.type.shape) {
        if (d.known()) {
          enc.u8(kDimKnown);
          enc.i64(d.value);
        } else if (d.symbol.empty()) {
          enc.u8(kDimUnknown);
        } else {
          enc.u8(kDimSymbolic);
          enc.str(d.symbol);
        }
      }
    }
    if (v.constant) return tensor(*v.constant, "constant '" + v.name + "'");
    return Status::Ok();
  }

  Status attribute(const std::string& name, const Attribute& a, const Node& n, int depth) {
    const std::string what = "attribute '" + name + "' of " + n.describe();
    enc.str(name);
    enc.u8(static_cast<uint8_t>(a.kind));
    auto sub = [&](const std::shared_ptr<Graph>& g) {
      if (!g) return Errorf(code::kInvalidParam, "write_om: %s holds a null graph", what.c_str());
      return graph(*g, depth + 1);
    };
    auto tens = [&](const std::shared_ptr<TensorData>& t) {
      if (!t) return Errorf(code::kInvalidParam, "write_om: %s holds a null tensor", what.c_str());
      return tensor(*t, what);
    };
    switch (a.kind) {
      case Kind::kUndefined: return Status::Ok();
      case Kind::kFloat: enc.f32(a.f); return Status::Ok();
      case Kind::kInt: enc.i64(a.i); return Status::Ok();
      case Kind::kString: enc.str(a.s); return Status::Ok();
      case Kind::kTensor: return tens(a.t);
      case Kind::kGraph: return sub(a.g);
      case Kind::kFloats:
        enc.u32(static_cast<uint32_t>(a.floats.size()));
        for (float f : a.floats) enc.f32(f);
        return Status::Ok();
      case Kind::kInts:
        enc.u32(static_cast<uint32_t>(a.ints.size()));
        for (int64_t i : a.ints) enc.i64(i);
        return Status::Ok();
      case Kind::kStrings:
        enc.u32(static_cast<uint32_t>(a.strings.size()));
        for (const auto& s : a.strings) enc.str(s);
        return Status::Ok();
      case Kind::kTensors:
        enc.u32(static_cast<uint32_t>(a.tensors.size()));
        for (const auto& t : a.tensors) OPENACL_RETURN_IF_ERROR(tens(t));
        return Status::Ok();
      case Kind::kGraphs:
        enc.u32(static_cast<uint32_t>(a.graphs.size()));
        for (const auto& g : a.graphs) OPENACL_RETURN_IF_ERROR(sub(g));
        return Status::Ok();
    }
    return Errorf(code::kInvalidParam, "write_om: %s has unknown kind %d", what.c_str(), static_cast<int>(a.kind));
  }
};

// ---------------------------------------------------------------- META JSON

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

const char* gear_kind_name(GearKind k) {
  switch (k) {
    case GearKind::kBatch: return "batch";
    case GearKind::kImageSize: return "image_size";
    case GearKind::kDims: return "dims";
    default: return "none";
  }
}

ojson gears_json(const GearSpec& g) {
  ojson j = ojson::object();
  j["kind"] = gear_kind_name(g.kind);
  ojson pos = ojson::array();
  for (const auto& p : g.positions) pos.push_back({{"input", p.input}, {"axis", p.axis}});
  j["positions"] = std::move(pos);
  j["gears"] = g.gears;
  return j;
}

ojson meta_json(const OmMeta& m) {
  ojson j = ojson::object();
  j["producer"] = m.producer;
  j["build_command"] = m.build_command;
  j["soc_version"] = m.soc_version;
  j["precision_mode"] = m.precision_mode;
  j["source"] = m.source;
  j["input_formats"] = m.input_formats;
  j["gears"] = gears_json(m.gears);
  j["work_size"] = m.work_size;
  j["weight_size"] = m.weight_size;
  return j;
}

// Strings are checked as UTF-8 by the JSON writer; bytes that are not are
// replaced (U+FFFD) rather than failing the whole write.
std::string dump(const ojson& j, int indent) { return j.dump(indent, ' ', false, ojson::error_handler_t::replace); }

Status meta_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status meta_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return Errorf(code::kParseModel, "the .om META section is invalid: %s; rebuild the model with atc", buf);
}

Status parse_meta(const uint8_t* p, size_t n, OmMeta* out) {
  json j;
  try {
    j = json::parse(p, p + n);
  } catch (const json::exception& e) {
    return meta_error("not valid JSON (%s)", e.what());
  }
  if (!j.is_object()) return meta_error("not a JSON object");
  OmMeta m;
  auto str = [&](const char* key, std::string* dst) {
    auto it = j.find(key);
    if (it == j.end()) return Status::Ok();
    if (!it->is_string()) return meta_error("\"%s\" is not a string", key);
    *dst = it->get<std::string>();
    return Status::Ok();
  };
  auto size = [&](const char* key, uint64_t* dst) {
    auto it = j.find(key);
    if (it == j.end()) return Status::Ok();
    if (!it->is_number_unsigned()) return meta_error("\"%s\" is not a non-negative integer", key);
    *dst = it->get<uint64_t>();
    return Status::Ok();
  };
  OPENACL_RETURN_IF_ERROR(str("producer", &m.producer));
  OPENACL_RETURN_IF_ERROR(str("build_command", &m.build_command));
  OPENACL_RETURN_IF_ERROR(str("soc_version", &m.soc_version));
  OPENACL_RETURN_IF_ERROR(str("precision_mode", &m.precision_mode));
  OPENACL_RETURN_IF_ERROR(str("source", &m.source));
  OPENACL_RETURN_IF_ERROR(size("work_size", &m.work_size));
  OPENACL_RETURN_IF_ERROR(size("weight_size", &m.weight_size));
  if (auto it = j.find("input_formats"); it != j.end()) {
    if (!it->is_object()) return meta_error("\"input_formats\" is not an object");
    for (auto f = it->begin(); f != it->end(); ++f) {
      if (!f->is_number_integer() || f->get<int64_t>() < INT32_MIN || f->get<int64_t>() > INT32_MAX)
        return meta_error("input format of '%s' is not an integer", f.key().c_str());
      m.input_formats[f.key()] = static_cast<int>(f->get<int64_t>());
    }
  }
  if (auto it = j.find("gears"); it != j.end()) {
    const json& g = *it;
    if (!g.is_object()) return meta_error("\"gears\" is not an object");
    auto k = g.find("kind");
    if (k == g.end() || !k->is_string()) return meta_error("\"gears.kind\" is missing or not a string");
    const std::string kind = k->get<std::string>();
    if (kind == "none") m.gears.kind = GearKind::kNone;
    else if (kind == "batch") m.gears.kind = GearKind::kBatch;
    else if (kind == "image_size") m.gears.kind = GearKind::kImageSize;
    else if (kind == "dims") m.gears.kind = GearKind::kDims;
    else return meta_error("gear kind \"%s\" is not one of none, batch, image_size, dims", kind.c_str());
    if (auto ps = g.find("positions"); ps != g.end()) {
      if (!ps->is_array()) return meta_error("\"gears.positions\" is not an array");
      for (const json& p : *ps) {
        if (!p.is_object()) return meta_error("a gear position is not an object");
        auto in = p.find("input");
        auto ax = p.find("axis");
        if (in == p.end() || !in->is_string() || ax == p.end() || !ax->is_number_integer() || ax->get<int64_t>() < 0 ||
            ax->get<int64_t>() > INT32_MAX)
          return meta_error("a gear position needs \"input\" (string) and \"axis\" (integer >= 0)");
        m.gears.positions.push_back({in->get<std::string>(), static_cast<int>(ax->get<int64_t>())});
      }
    }
    if (auto gs = g.find("gears"); gs != g.end()) {
      if (!gs->is_array()) return meta_error("\"gears.gears\" is not an array");
      for (const json& gear : *gs) {
        if (!gear.is_array()) return meta_error("a gear is not an array");
        std::vector<int64_t> vals;
        for (const json& v : gear) {
          if (!v.is_number_integer()) return meta_error("a gear value is not an integer");
          vals.push_back(v.get<int64_t>());
        }
        m.gears.gears.push_back(std::move(vals));
      }
    }
    Status st = m.gears.validate();
    if (!st.ok()) return meta_error("%s", st.message().c_str());
  }
  *out = std::move(m);
  return Status::Ok();
}

// ---------------------------------------------------------------- reading

// Bounds-checked cursor over one section. The first failure is kept (with
// the offset where it happened) and every later read fails.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n, const char* section) : p_(p), n_(n), section_(section) {}

  size_t pos() const { return pos_; }
  size_t left() const { return n_ - pos_; }
  const Status& error() const { return err_; }
  bool done() const { return pos_ == n_; }

  bool fail(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    if (!err_.ok()) return false;
    va_list ap;
    va_start(ap, fmt);
    char buf[512];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    err_ = Errorf(code::kParseModel, "the .om %s section is malformed at offset %zu: %s; rebuild the model with atc",
                  section_, pos_, buf);
    return false;
  }

  bool bytes(size_t n, const char* what, const uint8_t** out) {
    if (!err_.ok()) return false;
    if (n > left()) return fail("%s needs %zu bytes, %zu left", what, n, left());
    *out = p_ + pos_;
    pos_ += n;
    return true;
  }
  template <class T>
  bool fixed(T* v, const char* what) {
    const uint8_t* b = nullptr;
    if (!bytes(sizeof(T), what, &b)) return false;
    std::memcpy(v, b, sizeof(T));
    return true;
  }
  bool str(std::string* s, const char* what) {
    uint32_t len;
    if (!fixed(&len, what)) return false;
    const uint8_t* b = nullptr;
    if (len > left()) return fail("%s: length %u exceeds the %zu bytes left", what, len, left());
    if (!bytes(len, what, &b)) return false;
    s->assign(reinterpret_cast<const char*>(b), len);
    return true;
  }
  // A count of items that take at least `min_bytes` each: a count the bytes
  // left cannot hold is refused before anything is allocated for it.
  bool count(uint32_t* n, size_t min_bytes, const char* what) {
    if (!fixed(n, what)) return false;
    if (static_cast<uint64_t>(*n) * min_bytes > left())
      return fail("%s %u cannot fit in the %zu bytes left", what, *n, left());
    return true;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
  const char* section_;
  Status err_;
};

// Smallest encodings, for Reader::count.
constexpr size_t kMinOpset = 8, kMinValue = 9, kMinNode = 28, kMinAttr = 5, kMinTensor = 24, kMinGraph = 24;

class GraphReader {
 public:
  GraphReader(const OmView& view, const uint8_t* weights, std::shared_ptr<const void> owner)
      : r(view.graph, view.graph_bytes, "GRAPH"), weights_(weights), weight_bytes_(view.weight_bytes),
        owner_(std::move(owner)) {}

  Reader r;

  bool graph(int depth, std::shared_ptr<Graph>* out) {
    if (depth > kMaxGraphDepth) return r.fail("subgraphs nest deeper than %d levels", kMaxGraphDepth);
    auto g = std::make_shared<Graph>();
    if (!r.str(&g->name, "graph name")) return false;
    uint32_t n;
    if (!r.count(&n, kMinOpset, "opset count")) return false;
    for (uint32_t i = 0; i < n; ++i) {
      std::string domain;
      int32_t version;
      if (!r.str(&domain, "opset domain") || !r.fixed(&version, "opset version")) return false;
      if (!g->opsets().emplace(domain, version).second) return r.fail("opset domain '%s' repeated", domain.c_str());
    }
    if (!r.count(&n, kMinValue, "value count")) return false;
    std::vector<Value*> values;
    values.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      Value* v = nullptr;
      if (!value(*g, &v)) return false;
      values.push_back(v);
    }
    auto index = [&](const char* what, bool allow_none, Value** v) {
      int32_t i;
      if (!r.fixed(&i, what)) return false;
      if (i == -1 && allow_none) {
        *v = nullptr;
        return true;
      }
      if (i < 0 || static_cast<size_t>(i) >= values.size())
        return r.fail("%s refers to value %d of %zu", what, i, values.size());
      *v = values[static_cast<size_t>(i)];
      return true;
    };
    if (!r.count(&n, 4, "graph input count")) return false;
    std::unordered_set<Value*> seen;
    for (uint32_t i = 0; i < n; ++i) {
      Value* v;
      if (!index("graph input", false, &v)) return false;
      if (!seen.insert(v).second) return r.fail("graph input '%s' listed twice", v->name.c_str());
      g->inputs().push_back(v);
    }
    if (!r.count(&n, 4, "graph output count")) return false;
    for (uint32_t i = 0; i < n; ++i) {
      Value* v;
      if (!index("graph output", false, &v)) return false;
      g->outputs().push_back(v);
    }
    if (!r.count(&n, kMinNode, "node count")) return false;
    for (uint32_t k = 0; k < n; ++k) {
      std::string name, op, domain;
      int32_t opset;
      if (!r.str(&name, "node name") || !r.str(&op, "node op_type") || !r.str(&domain, "node domain") ||
          !r.fixed(&opset, "node opset"))
        return false;
      if (op.empty()) return r.fail("node '%s' has an empty op_type", name.c_str());
      std::vector<Value*> ins, outs;
      uint32_t m;
      if (!r.count(&m, 4, "node input count")) return false;
      for (uint32_t i = 0; i < m; ++i) {
        Value* v;
        if (!index("node input", true, &v)) return false;
        ins.push_back(v);
      }
      if (!r.count(&m, 4, "node output count")) return false;
      for (uint32_t i = 0; i < m; ++i) {
        Value* v;
        if (!index("node output", true, &v)) return false;
        // One producer per value: a second one would silently rewire the graph.
        if (v && (v->producer || std::find(outs.begin(), outs.end(), v) != outs.end()))
          return r.fail("value '%s' is produced by two nodes", v->name.c_str());
        outs.push_back(v);
      }
      Node* node = g->add_node(std::move(name), std::move(op), std::move(ins), std::move(outs), std::move(domain),
                               opset);
      if (!r.count(&m, kMinAttr, "attribute count")) return false;
      for (uint32_t i = 0; i < m; ++i)
        if (!attribute(*node, depth)) return false;
    }
    *out = std::move(g);
    return true;
  }

 private:
  const uint8_t* weights_;
  size_t weight_bytes_;
  std::shared_ptr<const void> owner_;

  bool dtype(int32_t d, const char* what) {
    if (d < 0 || d > kMaxDType) return r.fail("%s: unknown dtype %d", what, d);
    return true;
  }

  bool tensor(const char* what, std::shared_ptr<TensorData>* out) {
    int32_t dt;
    if (!r.fixed(&dt, what) || !dtype(dt, what)) return false;
    const size_t elem = graph::dtype_bytes(static_cast<DType>(dt));
    if (elem == 0) return r.fail("%s: %s is not a fixed-size element type", what, graph::dtype_name(static_cast<DType>(dt)));
    uint32_t nd;
    if (!r.count(&nd, 8, "tensor rank")) return false;
    std::vector<int64_t> dims(nd);
    uint64_t count = 1;
    for (uint32_t i = 0; i < nd; ++i) {
      if (!r.fixed(&dims[i], "tensor dim")) return false;
      if (dims[i] < 0) return r.fail("%s: dim %u is negative (%lld)", what, i, static_cast<long long>(dims[i]));
      if (__builtin_mul_overflow(count, static_cast<uint64_t>(dims[i]), &count) ||
          count > static_cast<uint64_t>(INT64_MAX))
        return r.fail("%s: the dims overflow the element count", what);
    }
    uint64_t offset, bytes, need;
    if (!r.fixed(&offset, "tensor offset") || !r.fixed(&bytes, "tensor size")) return false;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(elem), &need) || need != bytes)
      return r.fail("%s: %llu bytes stored but the dims and %s need more or fewer", what,
                    static_cast<unsigned long long>(bytes), graph::dtype_name(static_cast<DType>(dt)));
    if (offset % kConstAlign) return r.fail("%s: offset %llu is not %zu-aligned", what,
                                            static_cast<unsigned long long>(offset), kConstAlign);
    if (offset > weight_bytes_ || bytes > weight_bytes_ - offset)
      return r.fail("%s: bytes [%llu, +%llu) lie outside the %zu-byte WEIGHTS section", what,
                    static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes), weight_bytes_);
    auto t = std::make_shared<TensorData>();
    t->dtype = static_cast<DType>(dt);
    t->dims = std::move(dims);
    // Empty constants still get a valid, non-null address.
    alignas(kConstAlign) static const uint8_t kEmpty[kConstAlign] = {};
    t->data = weights_ ? weights_ + offset : kEmpty;
    t->bytes = static_cast<size_t>(bytes);
    t->owner = owner_;
    *out = std::move(t);
    return true;
  }

  bool value(Graph& g, Value** out) {
    std::string name;
    int32_t dt;
    uint8_t flags;
    if (!r.str(&name, "value name")) return false;
    if (name.empty()) return r.fail("a value has an empty name");
    if (g.find_value(name)) return r.fail("value name '%s' repeated", name.c_str());
    if (!r.fixed(&dt, "value dtype") || !dtype(dt, "value dtype") || !r.fixed(&flags, "value flags")) return false;
    if (flags & ~(kHasRank | kIsInput | kIsOutput | kIsConstant))
      return r.fail("value '%s' has unknown flags 0x%02x", name.c_str(), flags);
    graph::TensorType type;
    type.dtype = static_cast<DType>(dt);
    if (flags & kHasRank) {
      uint32_t rank;
      if (!r.count(&rank, 1, "value rank")) return false;
      graph::Shape s;
      s.reserve(rank);
      for (uint32_t i = 0; i < rank; ++i) {
        uint8_t kind;
        if (!r.fixed(&kind, "dim kind")) return false;
        if (kind == kDimKnown) {
          int64_t d;
          if (!r.fixed(&d, "dim")) return false;
          if (d < 0) return r.fail("value '%s': dim %u is negative", name.c_str(), i);
          s.emplace_back(d);
        } else if (kind == kDimUnknown) {
          s.emplace_back();
        } else if (kind == kDimSymbolic) {
          std::string sym;
          if (!r.str(&sym, "dim symbol")) return false;
          if (sym.empty()) return r.fail("value '%s': dim %u has an empty symbol", name.c_str(), i);
          s.push_back(graph::Dim::symbolic(std::move(sym)));
        } else {
          return r.fail("value '%s': unknown dim kind %u", name.c_str(), kind);
        }
      }
      type.shape = std::move(s);
    }
    std::shared_ptr<TensorData> constant;
    if ((flags & kIsConstant) && !tensor("constant", &constant)) return false;
    Value* v = g.add_value(std::move(name), std::move(type));
    v->is_graph_input = flags & kIsInput;
    v->is_graph_output = flags & kIsOutput;
    v->constant = std::move(constant);
    *out = v;
    return true;
  }

  bool attribute(Node& n, int depth) {
    std::string name;
    uint8_t k;
    if (!r.str(&name, "attribute name") || !r.fixed(&k, "attribute kind")) return false;
    if (name.empty()) return r.fail("node '%s' has an attribute with an empty name", n.name.c_str());
    if (n.attrs.has(name)) return r.fail("node '%s': attribute '%s' repeated", n.name.c_str(), name.c_str());
    if (k > static_cast<uint8_t>(Kind::kGraphs))
      return r.fail("node '%s': attribute '%s' has unknown kind %u", n.name.c_str(), name.c_str(), k);
    Attribute a;
    a.kind = static_cast<Kind>(k);
    uint32_t m = 0;
    bool ok = true;
    switch (a.kind) {
      case Kind::kUndefined: break;
      case Kind::kFloat: ok = r.fixed(&a.f, "float attribute"); break;
      case Kind::kInt: ok = r.fixed(&a.i, "int attribute"); break;
      case Kind::kString: ok = r.str(&a.s, "string attribute"); break;
      case Kind::kTensor: ok = tensor("tensor attribute", &a.t); break;
      case Kind::kGraph: ok = graph(depth + 1, &a.g); break;
      case Kind::kFloats:
        ok = r.count(&m, 4, "float count");
        for (uint32_t i = 0; ok && i < m; ++i) ok = r.fixed(&a.floats.emplace_back(), "float");
        break;
      case Kind::kInts:
        ok = r.count(&m, 8, "int count");
        for (uint32_t i = 0; ok && i < m; ++i) ok = r.fixed(&a.ints.emplace_back(), "int");
        break;
      case Kind::kStrings:
        ok = r.count(&m, 4, "string count");
        for (uint32_t i = 0; ok && i < m; ++i) ok = r.str(&a.strings.emplace_back(), "string");
        break;
      case Kind::kTensors:
        ok = r.count(&m, kMinTensor, "tensor count");
        for (uint32_t i = 0; ok && i < m; ++i) ok = tensor("tensor attribute", &a.tensors.emplace_back());
        break;
      case Kind::kGraphs:
        ok = r.count(&m, kMinGraph, "graph count");
        for (uint32_t i = 0; ok && i < m; ++i) ok = graph(depth + 1, &a.graphs.emplace_back());
        break;
    }
    if (!ok) return false;
    n.attrs.set(std::move(name), std::move(a));
    return true;
  }
};

Status container_error(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
Status container_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char buf[512];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return Errorf(code::kDeserializeModel, "not a readable OpenACL .om: %s", buf);
}

// ---------------------------------------------------------------- JSON dump

ojson shape_json(const graph::TensorType& t) {
  if (!t.shape) return nullptr;
  ojson s = ojson::array();
  for (const graph::Dim& d : *t.shape) {
    if (d.known()) s.push_back(d.value);
    else if (!d.symbol.empty()) s.push_back(d.symbol);
    else s.push_back(-1);
  }
  return s;
}

ojson tensor_json(const std::shared_ptr<TensorData>& t) {
  if (!t) return nullptr;
  return {{"dtype", graph::dtype_name(t->dtype)}, {"dims", t->dims}, {"bytes", t->bytes}};
}

ojson graph_json(const Graph& g, int depth);

ojson attribute_json(const Attribute& a, int depth) {
  ojson j = ojson::object();
  j["kind"] = graph::attribute_kind_name(a.kind);
  auto sub = [&](const std::shared_ptr<Graph>& g) -> ojson {
    if (!g) return nullptr;
    if (depth >= kMaxGraphDepth) return "(nested too deep)";
    return graph_json(*g, depth + 1);
  };
  switch (a.kind) {
    case Kind::kUndefined: break;
    case Kind::kFloat: j["value"] = a.f; break;
    case Kind::kInt: j["value"] = a.i; break;
    case Kind::kString: j["value"] = a.s; break;
    case Kind::kTensor: j["value"] = tensor_json(a.t); break;
    case Kind::kGraph: j["value"] = sub(a.g); break;
    case Kind::kFloats: j["value"] = a.floats; break;
    case Kind::kInts: j["value"] = a.ints; break;
    case Kind::kStrings: j["value"] = a.strings; break;
    case Kind::kTensors: {
      ojson arr = ojson::array();
      for (const auto& t : a.tensors) arr.push_back(tensor_json(t));
      j["value"] = std::move(arr);
      break;
    }
    case Kind::kGraphs: {
      ojson arr = ojson::array();
      for (const auto& g : a.graphs) arr.push_back(sub(g));
      j["value"] = std::move(arr);
      break;
    }
  }
  return j;
}

ojson value_json(const Value& v) {
  ojson j = {{"name", v.name}, {"dtype", graph::dtype_name(v.type.dtype)}, {"shape", shape_json(v.type)}};
  return j;
}

ojson graph_json(const Graph& g, int depth) {
  ojson j = ojson::object();
  j["name"] = g.name;
  j["opsets"] = g.opsets();
  ojson ins = ojson::array(), outs = ojson::array();
  for (const Value* v : g.inputs()) ins.push_back(value_json(*v));
  for (const Value* v : g.outputs()) outs.push_back(value_json(*v));
  j["inputs"] = std::move(ins);
  j["outputs"] = std::move(outs);
  ojson consts = ojson::array(), captures = ojson::array();
  for (const auto& v : g.values()) {
    if (v->constant) {
      ojson c = value_json(*v);
      c["bytes"] = v->constant->bytes;
      consts.push_back(std::move(c));
    } else if (!v->producer && !v->is_graph_input && !v->consumers.empty()) {
      captures.push_back(v->name);
    }
  }
  j["constants"] = std::move(consts);
  if (!captures.empty()) j["captures"] = std::move(captures);
  ojson nodes = ojson::array();
  for (const auto& n : g.nodes()) {
    ojson nj = ojson::object();
    nj["name"] = n->name;
    nj["op_type"] = n->op_type;
    if (!n->domain.empty()) nj["domain"] = n->domain;
    nj["opset"] = n->opset;
    ojson ni = ojson::array(), no = ojson::array();
    for (const Value* v : n->inputs) ni.push_back(v ? ojson(v->name) : ojson(""));
    for (const Value* v : n->outputs) no.push_back(v ? ojson(v->name) : ojson(""));
    nj["inputs"] = std::move(ni);
    nj["outputs"] = std::move(no);
    ojson attrs = ojson::object();
    for (const auto& [name, a] : n->attrs.all()) attrs[name] = attribute_json(a, depth);
    if (!attrs.empty()) nj["attributes"] = std::move(attrs);
    nodes.push_back(std::move(nj));
  }
  j["nodes"] = std::move(nodes);
  return j;
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
  size_t total = 0;
};

// CRC-32C of the WEIGHTS section: the blocks with the zero padding between.
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

Status lay_out(const OmModel& model, Layout* out) {
  if (!model.graph) return Errorf(code::kInvalidParam, "write_om: the model has no graph");
  OPENACL_RETURN_IF_ERROR(model.meta.gears.validate());
  GraphWriter gw;
  OPENACL_RETURN_IF_ERROR(gw.graph(*model.graph, 0));
  const std::string meta = dump(meta_json(model.meta), -1);

  const size_t table = kHeaderBytes;
  const size_t meta_off = table + kSectionCount * kEntryBytes;
  const size_t graph_off = align_up(meta_off + meta.size(), 8);
  const size_t weights_off = align_up(graph_off + gw.enc.out.size(), kWeightsAlign);
  std::string& h = out->head;
  h.assign(weights_off, '\0');
  std::memcpy(h.data() + meta_off, meta.data(), meta.size());
  std::memcpy(h.data() + graph_off, gw.enc.out.data(), gw.enc.out.size());
  std::memcpy(h.data(), kMagic, sizeof kMagic);
  put_u32_at(&h, 8, kOmVersion);
  put_u32_at(&h, 12, kSectionCount);
  put_u64_at(&h, 16, weights_off + gw.weight_end);
  put_u64_at(&h, 24, table);
  const struct {
    uint32_t kind;
    size_t off, size;
    uint32_t crc;
  } secs[kSectionCount] = {
      {kSecMeta, meta_off, meta.size(), crc32c(meta.data(), meta.size())},
      {kSecGraph, graph_off, gw.enc.out.size(), crc32c(gw.enc.out.data(), gw.enc.out.size())},
      {kSecWeights, weights_off, gw.weight_end, weights_crc(gw.blocks)}};
  for (size_t i = 0; i < kSectionCount; ++i) {
    const size_t e = table + i * kEntryBytes;
    put_u32_at(&h, e, secs[i].kind);
    put_u64_at(&h, e + 8, secs[i].off);
    put_u64_at(&h, e + 16, secs[i].size);
    put_u32_at(&h, e + 24, secs[i].crc);
  }
  put_u32_at(&h, 32, crc32c(h.data(), meta_off));  // header (crc field still 0) + table
  out->blocks = std::move(gw.blocks);
  out->weight_bytes = gw.weight_end;
  out->total = weights_off + gw.weight_end;
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
  static const uint8_t kZeros[kConstAlign] = {};
  int err = write_all(fd, l.head.data(), l.head.size());
  size_t at = 0;
  for (const WeightBlock& b : l.blocks) {
    if (!err) err = write_all(fd, kZeros, b.offset - at);
    if (!err) err = write_all(fd, b.data, b.bytes);
    at = b.offset + b.bytes;
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

Status open_om(const void* data, size_t size, OmView* out) {
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
  if (count != kSectionCount || table != kHeaderBytes)
    return container_error("section count %u / table offset %llu: version %u has %zu sections at offset %zu", count,
                           static_cast<unsigned long long>(table), kOmVersion, kSectionCount, kHeaderBytes);
  const size_t table_end = kHeaderBytes + kSectionCount * kEntryBytes;
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
  } secs[4];
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t i = 0; i < kSectionCount; ++i) {
    const uint8_t* e = p + kHeaderBytes + i * kEntryBytes;
    const uint32_t kind = get_u32(e);
    const uint64_t off = get_u64(e + 8), len = get_u64(e + 16);
    if (kind < kSecMeta || kind > kSecWeights)
      return container_error("section %zu has unknown kind %u (this build reads version %u)", i, kind, kOmVersion);
    Sec& s = secs[kind];
    if (s.seen) return container_error("section %s appears twice", section_name(kind));
    if (off < table_end || off > size || len > size - off)
      return container_error("section %s at offset %llu, %llu bytes, lies outside the %zu-byte file",
                             section_name(kind), static_cast<unsigned long long>(off),
                             static_cast<unsigned long long>(len), size);
    if (kind == kSecWeights && off % kWeightsAlign)
      return container_error("section WEIGHTS at offset %llu is not %zu-aligned", static_cast<unsigned long long>(off),
                             kWeightsAlign);
    s = {p + off, static_cast<size_t>(off), static_cast<size_t>(len), true};
    ranges.emplace_back(s.off, s.size);
    const uint32_t want = get_u32(e + 24), got = crc32c(s.p, s.size);
    if (want != got)
      return container_error("%s section checksum mismatch (stored 0x%08x, computed 0x%08x): the file is corrupted",
                             section_name(kind), want, got);
  }
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
  *out = std::move(v);
  return Status::Ok();
}

Status decode_graph(const OmView& view, const uint8_t* weights, std::shared_ptr<const void> owner,
                    std::shared_ptr<graph::Graph>* out) {
  if (!view.graph && view.graph_bytes) return Errorf(code::kInvalidParam, "decode_graph: the view has no GRAPH bytes");
  if (!weights && view.weight_bytes)
    return Errorf(code::kInvalidParam, "decode_graph: weights is null but the model has %zu weight bytes",
                  view.weight_bytes);
  GraphReader gr(view, weights, std::move(owner));
  std::shared_ptr<Graph> g;
  if (!gr.graph(0, &g)) return gr.r.error();
  if (!gr.r.done()) {
    gr.r.fail("%zu bytes follow the graph", gr.r.left());
    return gr.r.error();
  }
  *out = std::move(g);
  return Status::Ok();
}

std::string om_to_json(const OmModel& model) {
  ojson j = ojson::object();
  j["format"] = format_name(ModelFormat::kOm);
  j["version"] = kOmVersion;
  j["meta"] = meta_json(model.meta);
  j["graph"] = model.graph ? graph_json(*model.graph, 0) : ojson(nullptr);
  return dump(j, 2);
}

}  // namespace openacl::model
