// Shared oneDNN plumbing for the compute-heavy CPU kernels (Conv, MatMul,
// Gemm): one engine for the process, a stream per thread, user-managed
// scratchpads, and a small shape-keyed primitive cache for dynamic models.
//
// Why user scratchpads: a Kernel's run() may be called from several threads
// at once; oneDNN's library-managed scratchpad is shared per primitive unless
// the library was built for concurrent execution, so each thread brings its
// own buffer.
#pragma once

#if OPENACL_HAVE_DNNL

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "base/page_alloc.h"
#include "graph/tensor.h"
#include "kernels/pack_cache.h"
#include "kernels/cpu/cpu_common.h"
#include "kernels/cpu/movement_util.h"

namespace openacl::kernels::cpu::dnnl_util {

inline dnnl::engine& engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // never destroyed: outlives statics
  return *e;
}

// CPU streams are cheap but not documented as thread-safe: one per thread.
inline dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

using cpu::const_f32;  // cpu_common.h

inline dnnl::memory::dims to_dims(const std::vector<int64_t>& v) { return dnnl::memory::dims(v.begin(), v.end()); }

// Dense row-major f32 descriptor for `dims`.
inline dnnl::memory::desc plain_f32(const std::vector<int64_t>& dims) {
  const std::vector<int64_t> st = [&] {
    std::vector<int64_t> s(dims.size(), 1);
    for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
    return s;
  }();
  return dnnl::memory::desc(to_dims(dims), dnnl::memory::data_type::f32, to_dims(st));
}

// f32 descriptor for logical dims [N, C, sp..] (rank 3..5): plain when
// block == 0, else oneDNN's channel-blocked layout (nCw8c, nChw16c, ...;
// block 8 or 16, see blocked_layout.h).
inline dnnl::memory::desc f32_desc(const std::vector<int64_t>& dims, int64_t block) {
  using tag = dnnl::memory::format_tag;
  if (block == 0) return plain_f32(dims);
  static const tag k8[] = {tag::nCw8c, tag::nChw8c, tag::nCdhw8c};
  static const tag k16[] = {tag::nCw16c, tag::nChw16c, tag::nCdhw16c};
  const size_t r = dims.size() - 3;
  return dnnl::memory::desc(to_dims(dims), dnnl::memory::data_type::f32, block == 16 ? k16[r] : k8[r]);
}

// Attributes every primitive here uses: user scratchpad (see top).
inline dnnl::primitive_attr base_attr() {
  dnnl::primitive_attr a;
  a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return a;
}

// This thread's scratchpad (cpu_common.h), for the primitives' scratchpads too.
using cpu::scratch;

inline size_t align64(size_t n) { return (n + 63) / 64 * 64; }

// Wraps `ptr` (not owned) as a dnnl::memory of `md`.
inline dnnl::memory wrap(const dnnl::memory::desc& md, const void* ptr) {
  return dnnl::memory(md, engine(), const_cast<void*>(ptr));
}

// The execute arguments of one primitive, built once and reused. Making the
// dnnl::memory objects and the argument map afresh costs about 2.3 us and 11
// heap allocations per execute (a 1x1 convolution of one pixel: 2.85 us
// that way, 0.54 us with the arguments reused), more than a small layer's
// work. A kernel's run() may be called by several threads at once, so each
// run takes a set of its own and hands it back; the pool grows to the
// largest number of concurrent runs, then allocates nothing.
class ArgSets {
 public:
  // The memory objects by argument id, and the same as the C API's array
  // (the C++ execute() would build that array, one allocation, per call).
  struct Map {
    std::unordered_map<int, dnnl::memory> mem;
    std::vector<dnnl_exec_arg_t> c_args;
  };

  // An argument whose buffer each run binds.
  void add(int arg, const dnnl::memory::desc& md) { slots_.emplace_back(arg, md); }
  // An argument that is always this memory (packed weights).
  void add_fixed(int arg, const dnnl::memory& mem) { fixed_.emplace_back(arg, mem); }

  class Lease {
   public:
    Lease(const ArgSets* owner, std::unique_ptr<Map> map) : owner_(owner), map_(std::move(map)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { owner_->give_back(std::move(map_)); }
    // Points argument `arg` (one added with add()) at `p`.
    void bind(int arg, const void* p) { map_->mem.at(arg).set_data_handle(const_cast<void*>(p)); }
    // Runs `prim` on these arguments (on stream()).
    void execute(const dnnl::primitive& prim) const {
      dnnl::error::wrap_c_api(dnnl_primitive_execute(prim.get(), stream().get(), static_cast<int>(map_->c_args.size()),
                                                     map_->c_args.data()),
                              "could not execute a primitive");
    }

   private:
    const ArgSets* owner_;
    std::unique_ptr<Map> map_;
  };

  Lease take() const {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!free_.empty()) {
        std::unique_ptr<Map> m = std::move(free_.back());
        free_.pop_back();
        return Lease(this, std::move(m));
      }
    }
    auto m = std::make_unique<Map>();
    for (const auto& [arg, md] : slots_) m->mem.emplace(arg, dnnl::memory(md, engine(), DNNL_MEMORY_NONE));
    for (const auto& [arg, mem] : fixed_) m->mem.emplace(arg, mem);
    for (const auto& [arg, mem] : m->mem) m->c_args.push_back({arg, mem.get()});
    return Lease(this, std::move(m));
  }

 private:
  void give_back(std::unique_ptr<Map> m) const {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(m));
  }

  std::vector<std::pair<int, dnnl::memory::desc>> slots_;
  std::vector<std::pair<int, dnnl::memory>> fixed_;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Map>> free_;
};

// A reorder primitive with its execute arguments built once (ArgSets): a run
// binds the two buffers instead of wrapping each in a new dnnl::memory and
// building the C++ API's argument map (four heap allocations per reorder).
class Reorder {
 public:
  void init(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
    prim_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine(), from, engine(), to));
    args_.add(DNNL_ARG_FROM, from);
    args_.add(DNNL_ARG_TO, to);
  }
  // from -> to, on stream() (the caller waits).
  void run(const void* from, void* to) const {
    ArgSets::Lease a = args_.take();
    a.bind(DNNL_ARG_FROM, from);
    a.bind(DNNL_ARG_TO, to);
    a.execute(prim_);
  }

 private:
  dnnl::reorder prim_;
  ArgSets args_;
};

// Copies `src` (plain `from`) into `out`, in out's layout.
inline void reorder_into(const dnnl::memory::desc& from, const void* src, dnnl::memory& out) {
  dnnl::memory in = wrap(from, src);
  dnnl::reorder(in, out).execute(stream(), in, out);
  stream().wait();
}

// Copies `src` (plain `from`) into a freshly allocated memory of layout `to`.
inline dnnl::memory reorder_to(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to) {
  dnnl::memory out(to, engine());
  reorder_into(from, src, out);
  return out;
}

// Constant weights repacked once, when the kernel is built: `mem` is in the
// primitive's layout, on pages that `storage` owns (alloc_pages: faulted in
// up front).
struct Packed {
  dnnl::memory mem;
  std::shared_ptr<void> storage;
  explicit operator bool() const { return static_cast<bool>(mem); }
};

// An empty memory of layout `md` on fresh pages. Throws dnnl::error when out of memory.
inline Packed packed_memory(const dnnl::memory::desc& md) {
  PageBuffer buf = alloc_pages(md.get_size());
  if (!buf) throw dnnl::error(dnnl_out_of_memory, "cannot allocate packed weights");
  Packed p;
  p.mem = dnnl::memory(md, engine(), buf.get());
  p.storage = std::shared_ptr<void>(buf.release(), PageFree());
  return p;
}

// The strides of a dense, unblocked 2-D f32 desc ({} when it is not one).
inline std::vector<int64_t> dense_2d_strides(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.ndims != 2 || d.data_type != dnnl_f32 || d.format_kind != dnnl_blocked || d.format_desc.blocking.inner_nblks != 0 ||
      d.offset0 != 0 || d.padded_dims[0] != d.dims[0] || d.padded_dims[1] != d.dims[1])
    return {};
  const int64_t s0 = d.format_desc.blocking.strides[0], s1 = d.format_desc.blocking.strides[1];
  if ((s1 == 1 && s0 == d.dims[1]) || (s0 == 1 && s1 == d.dims[0])) return {s0, s1};
  return {};
}

// `src` (plain `from`) repacked into layout `to`, on fresh pages. A 2-D transpose (ab <-> ba,
// as MatMul and Gemm weights need) is done by our tiled transpose: oneDNN
// 2.6's reorder for it runs at about 1.5 GB/s, which made it most of BERT's
// load time.
inline Packed pack_fresh(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to) {
  Packed out = packed_memory(to);
  const std::vector<int64_t> fs = dense_2d_strides(from), ts = dense_2d_strides(to);
  if (!fs.empty() && !ts.empty() && fs != ts && from.data.dims[0] > 0 && from.data.dims[1] > 0) {
    // In memory order, `from` is [rows, cols] with rows = the dim whose stride is not 1.
    const bool from_ab = fs[1] == 1;
    const std::vector<int64_t> mem_dims = from_ab ? std::vector<int64_t>{from.data.dims[0], from.data.dims[1]}
                                                  : std::vector<int64_t>{from.data.dims[1], from.data.dims[0]};
    transpose_bytes(src, out.mem.get_data_handle(), mem_dims, {1, 0}, sizeof(float));
    return out;
  }
  reorder_into(from, src, out.mem);
  return out;
}

// A canonical spelling of a memory descriptor, field by field (the struct's
// padding bytes are not reliably zero), for PackCache recipes; "" for a
// format other than blocked (nothing is recorded for those).
inline std::string md_key(const dnnl::memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.ndims < 0 || d.ndims > DNNL_MAX_NDIMS) return {};
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  if (b.inner_nblks < 0 || b.inner_nblks > DNNL_MAX_NDIMS) return {};
  std::string k = "dt" + std::to_string(static_cast<int>(d.data_type)) + " off" + std::to_string(d.offset0);
  for (int i = 0; i < d.ndims; ++i)
    k += " " + std::to_string(d.dims[i]) + "/" + std::to_string(d.padded_dims[i]) + "+" +
         std::to_string(d.padded_offsets[i]) + ":" + std::to_string(b.strides[i]);
  k += " blk";
  for (int i = 0; i < b.inner_nblks; ++i) k += " " + std::to_string(b.inner_idxs[i]) + "x" + std::to_string(b.inner_blks[i]);
  k += " x" + std::to_string(d.extra.flags) + "," + std::to_string(d.extra.compensation_mask) + "," +
       std::to_string(d.extra.scale_adjust) + "," + std::to_string(d.extra.asymm_compensation_mask);
  return k;
}

// The recipe of packing `from` into `to` with oneDNN (and our transpose):
// the library's version and both layouts. "" when either is not blocked.
inline std::string pack_recipe(const char* what, const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  const std::string f = md_key(from), t = md_key(to);
  if (f.empty() || t.empty()) return {};
  const dnnl_version_t* v = dnnl_version();
  return std::string(what) + " onednn " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " from " + f + " to " + t;
}

// A packed blob from a PackCache used where it lies, as a Packed of layout `md`.
inline Packed adopt(const dnnl::memory::desc& md, std::shared_ptr<const void> blob) {
  Packed p;
  p.mem = dnnl::memory(md, engine(), const_cast<void*>(blob.get()));  // only ever read
  p.storage = std::const_pointer_cast<void>(std::move(blob));
  return p;
}

// `src` (plain `from`) in layout `to`: the blob atc packed, when `packs` has
// one for this source and recipe, else packed now (and, at atc, recorded).
inline Packed pack(const dnnl::memory::desc& from, const void* src, const dnnl::memory::desc& to,
                   PackCache* packs = nullptr) {
  if (!packs) return pack_fresh(from, src, to);
  const std::string recipe = pack_recipe("reorder", from, to);
  if (auto blob = packs->find(src, recipe, to.get_size())) return adopt(to, std::move(blob));
  Packed out = pack_fresh(from, src, to);
  packs->record(src, recipe, out.mem.get_data_handle(), to.get_size(), out.storage);
  return out;
}

// Primitives per input shape. The entry built at compile time (shapes known)
// sits in a slot read without locking (set only while the kernel is being
// constructed); shapes seen only at run time (dynamic models) are built
// lazily into a mutex-protected map, since run() is const and may race.
// Entries are shared_ptrs so a caller keeps its entry alive even if another
// thread clears the map. Bounded: cleared when full (dynamic models rarely
// cycle through many shapes).
template <class Entry>
class ShapeCache {
 public:
  using Dims = std::vector<int64_t>;
  // Only from the kernel's constructor.
  void put_static(const Dims& a, const Dims& b, int64_t tag, std::shared_ptr<const Entry> e) {
    static_key_ = Key{a, b, tag};
    static_ = std::move(e);
  }
  template <class Make>
  std::shared_ptr<const Entry> get(const Dims& a, const Dims& b, int64_t tag, Make&& make) const {
    if (static_ && static_key_.tag == tag && static_key_.a == a && static_key_.b == b) return static_;
    Key key{a, b, tag};
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    std::shared_ptr<const Entry> e = make();  // outside the lock: building may take milliseconds
    std::lock_guard<std::mutex> lock(mu_);
    if (map_.size() >= kMaxEntries) map_.clear();
    map_.emplace(std::move(key), e);
    return e;
  }

 private:
  struct Key {
    Dims a, b;
    int64_t tag = 0;
    bool operator<(const Key& o) const {
      if (tag != o.tag) return tag < o.tag;
      if (a != o.a) return a < o.a;
      return b < o.b;
    }
  };
  static constexpr size_t kMaxEntries = 16;
  Key static_key_;
  std::shared_ptr<const Entry> static_;
  mutable std::mutex mu_;
  mutable std::map<Key, std::shared_ptr<const Entry>> map_;
};

}  // namespace openacl::kernels::cpu::dnnl_util

#endif  // OPENACL_HAVE_DNNL
