// The .om GRAPH section: GraphWriter encodes a graph (placing its constants
// in WEIGHTS), GraphReader decodes one defensively. The encoding is
// documented in om_graph_codec.h.
#include "model/om_graph_codec.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace openacl::model::detail {

namespace {

using graph::Attribute;
using graph::DType;
using graph::Graph;
using graph::Node;
using graph::TensorData;
using graph::Value;
using Kind = graph::Attribute::Kind;

constexpr int32_t kMaxDType = static_cast<int32_t>(DType::kInt2);

// Value flags in the GRAPH encoding.
constexpr uint8_t kHasRank = 1, kIsInput = 2, kIsOutput = 4, kIsConstant = 8;
// Dim kinds.
constexpr uint8_t kDimKnown = 0, kDimUnknown = 1, kDimSymbolic = 2;

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
  GraphReader(const uint8_t* p, size_t n, const uint8_t* weights, size_t weight_bytes,
              std::shared_ptr<const void> owner)
      : r(p, n, "GRAPH"), weights_(weights), weight_bytes_(weight_bytes), owner_(std::move(owner)) {}

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
      Value* v = nullptr;
      if (!index("graph input", false, &v)) return false;
      if (!seen.insert(v).second) return r.fail("graph input '%s' listed twice", v->name.c_str());
      g->inputs().push_back(v);
    }
    if (!r.count(&n, 4, "graph output count")) return false;
    for (uint32_t i = 0; i < n; ++i) {
      Value* v = nullptr;
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
        Value* v = nullptr;
        if (!index("node input", true, &v)) return false;
        ins.push_back(v);
      }
      if (!r.count(&m, 4, "node output count")) return false;
      for (uint32_t i = 0; i < m; ++i) {
        Value* v = nullptr;
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

}  // namespace

Status encode_graph(const graph::Graph& g, EncodedGraph* out) {
  GraphWriter gw;
  OPENACL_RETURN_IF_ERROR(gw.graph(g, 0));
  out->bytes = std::move(gw.enc.out);
  out->blocks = std::move(gw.blocks);
  out->weight_bytes = gw.weight_end;
  return Status::Ok();
}

Status decode_graph_section(const uint8_t* p, size_t n, const uint8_t* weights, size_t weight_bytes,
                            std::shared_ptr<const void> owner, std::shared_ptr<graph::Graph>* out) {
  GraphReader gr(p, n, weights, weight_bytes, std::move(owner));
  std::shared_ptr<Graph> g;
  if (!gr.graph(0, &g)) return gr.r.error();
  if (!gr.r.done()) {
    gr.r.fail("%zu bytes follow the graph", gr.r.left());
    return gr.r.error();
  }
  *out = std::move(g);
  return Status::Ok();
}

}  // namespace openacl::model::detail
