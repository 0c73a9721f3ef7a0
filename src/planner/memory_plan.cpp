// Liveness-based memory planning; see memory_plan.h for the rules.
#include "planner/memory_plan.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>

namespace openacl::planner {

using graph::Node;
using graph::Value;

namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();

bool align_up(size_t n, size_t a, size_t* out) {
  if (n > std::numeric_limits<size_t>::max() - (a - 1)) return false;
  *out = (n + a - 1) / a * a;
  return true;
}

// Bytes of a value's tensor, unrounded; an empty string saying why on failure.
std::string tensor_bytes(const Value& v, size_t* bytes) {
  const graph::TensorType& t = v.type;
  if (t.dtype == graph::DType::kUndefined) return "unknown element type";
  if (t.dtype == graph::DType::kString) return "string tensors have no fixed size";
  if (!t.shape || !graph::fully_known(*t.shape)) return "shape not fully known";
  std::optional<int64_t> n = graph::element_count(*t.shape);
  if (!n) return "element count overflows";
  size_t elem = graph::dtype_bytes(t.dtype);
  uint64_t count = static_cast<uint64_t>(*n);
  if (elem == 0) {  // sub-byte types (int4/uint4): two per byte
    *bytes = static_cast<size_t>((count + 1) / 2);
    return "";
  }
  if (count > std::numeric_limits<size_t>::max() / elem) return "byte size overflows";
  *bytes = static_cast<size_t>(count) * elem;
  return "";
}

// A slot of the work arena: one value, or a chain of values reusing one slot in place.
struct Group {
  size_t bytes = 0;
  int first = 0, last = 0;
  size_t offset = 0;
};

bool lifetimes_overlap(const Group& a, const Group& b) { return a.first <= b.last && b.first <= a.last; }

// Places groups in the given order: each into a gap between already placed
// groups whose lifetimes overlap it — the smallest gap that fits (best fit) or
// the lowest (first fit) — else on top of them. Returns the arena size and
// fills offsets.
size_t place(const std::vector<Group>& groups, const std::vector<size_t>& sequence, bool best_fit,
             std::vector<size_t>* offsets) {
  offsets->assign(groups.size(), 0);
  std::vector<size_t> placed;  // sorted by offset
  std::vector<size_t> live;
  size_t total = 0;
  for (size_t gi : sequence) {
    const Group& g = groups[gi];
    live.clear();
    for (size_t p : placed)
      if (lifetimes_overlap(g, groups[p])) live.push_back(p);
    size_t best = kNone, best_gap = kNone, prev_end = 0;
    for (size_t p : live) {
      size_t off = (*offsets)[p];
      if (off > prev_end) {
        size_t gap = off - prev_end;
        if (gap >= g.bytes && gap < best_gap) {
          best_gap = gap;
          best = prev_end;
          if (!best_fit) break;
        }
      }
      prev_end = std::max(prev_end, off + groups[p].bytes);
    }
    if (best == kNone) best = prev_end;
    (*offsets)[gi] = best;
    total = std::max(total, best + g.bytes);
    auto pos = std::upper_bound(placed.begin(), placed.end(), best,
                                [&](size_t off, size_t p) { return off < (*offsets)[p]; });
    placed.insert(pos, gi);
  }
  return total;
}

std::string join_limited(const std::vector<std::string>& items, size_t limit) {
  std::string s;
  for (size_t i = 0; i < items.size() && i < limit; ++i) s += (i ? "; " : "") + items[i];
  if (items.size() > limit) s += strformat("; and %zu more", items.size() - limit);
  return s;
}

}  // namespace

Status plan_memory(const graph::Graph& g, const PlanOptions& options, MemoryPlan* out) {
  const size_t align = options.alignment;
  if (align == 0 || (align & (align - 1)) != 0)
    return Errorf(code::kInvalidParam, "plan_memory: alignment %zu is not a power of two", align);

  std::vector<Node*> order;
  OPENACL_RETURN_IF_ERROR(g.topological_order(&order));
  MemoryPlan plan;
  plan.alignment = align;
  plan.order.assign(order.begin(), order.end());
  const int last_step = static_cast<int>(order.size()) - 1;
  std::unordered_map<const Node*, int> step_of;
  for (size_t i = 0; i < order.size(); ++i) step_of[order[i]] = static_cast<int>(i);

  // 1. Work values with their sizes and lifetimes.
  std::vector<std::string> bad;
  std::vector<Buffer> work;
  std::unordered_map<const Value*, size_t> buffer_of;
  for (size_t s = 0; s < order.size(); ++s) {
    for (const Value* v : order[s]->outputs) {
      if (!v || v->constant || v->is_graph_input || buffer_of.count(v)) continue;
      if (v->is_graph_output && !options.outputs_in_work_arena) continue;
      size_t raw = 0, bytes = 0;
      std::string why = tensor_bytes(*v, &raw);
      if (why.empty() && options.storage_bytes) raw = options.storage_bytes(*v, raw);
      if (why.empty() && !align_up(raw, align, &bytes)) why = "byte size overflows";
      if (!why.empty()) {
        bad.push_back(strformat("'%s' %s (output of %s): %s", v->name.c_str(), v->type.str().c_str(),
                                order[s]->describe().c_str(), why.c_str()));
        continue;
      }
      Buffer b;
      b.value = v;
      b.bytes = bytes;
      b.first_use = b.last_use = static_cast<int>(s);
      for (const Node* c : v->consumers) {
        auto it = step_of.find(c);
        if (it != step_of.end()) b.last_use = std::max(b.last_use, it->second);
      }
      if (v->is_graph_output) b.last_use = last_step;
      buffer_of[v] = work.size();
      work.push_back(b);
    }
  }
  if (!bad.empty())
    return Errorf(code::kInvalidParam,
                  "plan_memory: %zu value(s) cannot be given a fixed-size slot: %s. Plan per concrete shape: set "
                  "the input shapes and run infer_shapes first",
                  bad.size(), join_limited(bad, 8).c_str());

  // 2. In-place reuse: an output joins the group of an input that dies at its node.
  std::vector<Group> groups;
  std::vector<size_t> group_of(work.size());
  for (size_t i = 0; i < work.size(); ++i) {
    group_of[i] = i;
    groups.push_back({work[i].bytes, work[i].first_use, work[i].last_use, 0});
  }
  if (options.can_alias) {
    std::vector<int> claimed_at(groups.size(), -1);  // step at which a group was taken over
    for (size_t s = 0; s < order.size(); ++s) {
      const Node& n = *order[s];
      const int step = static_cast<int>(s);
      for (size_t o = 0; o < n.outputs.size(); ++o) {
        auto ob = n.outputs[o] ? buffer_of.find(n.outputs[o]) : buffer_of.end();
        if (ob == buffer_of.end()) continue;
        Buffer& obuf = work[ob->second];
        for (size_t i = 0; i < n.inputs.size(); ++i) {
          const Value* in = n.inputs[i];
          auto ib = in ? buffer_of.find(in) : buffer_of.end();
          if (ib == buffer_of.end() || in->is_graph_output) continue;
          size_t gi = group_of[ib->second];
          Group& grp = groups[gi];
          if (grp.last != step || claimed_at[gi] == step || obuf.bytes > grp.bytes) continue;
          bool read_twice = false;  // the same value at another input slot: keep it intact
          for (size_t j = 0; j < n.inputs.size(); ++j)
            if (j != i && n.inputs[j] == in) read_twice = true;
          if (read_twice || !options.can_alias(n, i, o)) continue;
          claimed_at[gi] = step;
          group_of[ob->second] = gi;
          grp.last = std::max(grp.last, obuf.last_use);
          groups[ob->second].bytes = 0;  // merged away
          obuf.in_place_of = in;
          break;
        }
      }
    }
  }
  std::vector<size_t> roots;
  for (size_t i = 0; i < work.size(); ++i)
    if (group_of[i] == i) roots.push_back(i);

  // 3. Lower bound: the peak over steps of the bytes of live groups.
  {
    std::vector<size_t> add(order.size() + 1, 0), sub(order.size() + 1, 0);
    for (size_t r : roots) {
      add[groups[r].first] += groups[r].bytes;
      sub[groups[r].last + 1] += groups[r].bytes;
    }
    size_t live = 0;
    for (size_t s = 0; s < order.size(); ++s) {
      live = live + add[s] - sub[s];
      plan.lower_bound = std::max(plan.lower_bound, live);
    }
  }

  // 4. Offsets: greedy placement in a few orders, keeping the smallest arena.
  auto length = [&](size_t r) { return groups[r].last - groups[r].first; };
  std::vector<std::function<bool(size_t, size_t)>> orders = {
      [&](size_t a, size_t b) {  // greedy by size
        if (groups[a].bytes != groups[b].bytes) return groups[a].bytes > groups[b].bytes;
        if (length(a) != length(b)) return length(a) > length(b);
        return groups[a].first < groups[b].first;
      },
      [&](size_t a, size_t b) {  // by size x lifetime
        long double ka = static_cast<long double>(groups[a].bytes) * (length(a) + 1);
        long double kb = static_cast<long double>(groups[b].bytes) * (length(b) + 1);
        if (ka != kb) return ka > kb;
        return groups[a].first < groups[b].first;
      },
      [&](size_t a, size_t b) {  // longest-lived first
        if (length(a) != length(b)) return length(a) > length(b);
        if (groups[a].bytes != groups[b].bytes) return groups[a].bytes > groups[b].bytes;
        return groups[a].first < groups[b].first;
      },
      [&](size_t a, size_t b) {  // in execution order
        if (groups[a].first != groups[b].first) return groups[a].first < groups[b].first;
        return groups[a].bytes > groups[b].bytes;
      },
  };
  size_t best_size = kNone;
  std::vector<size_t> best_offsets, offsets;
  for (const auto& cmp : orders) {
    std::vector<size_t> seq = roots;
    std::stable_sort(seq.begin(), seq.end(), cmp);
    for (bool best_fit : {true, false}) {
      size_t size = place(groups, seq, best_fit, &offsets);
      if (size < best_size) {
        best_size = size;
        best_offsets = offsets;
      }
      if (best_size == plan.lower_bound) break;  // optimal
    }
    if (best_size == plan.lower_bound) break;
  }
  // Then a few seeded perturbations of greedy-by-size (sizes scaled by random factors in
  // [0.6, 1.4]), while the graph is small enough for the quadratic placement.
  if (best_size > plan.lower_bound && roots.size() <= 4000) {
    std::mt19937 rng(20240601u);  // fixed: the plan is reproducible
    std::uniform_real_distribution<double> jitter(0.6, 1.4);
    const int rounds = roots.size() <= 1000 ? 24 : 6;
    std::vector<std::pair<double, size_t>> keyed(roots.size());
    std::vector<size_t> seq(roots.size());
    for (int round = 0; round < rounds && best_size > plan.lower_bound; ++round) {
      for (size_t i = 0; i < roots.size(); ++i) keyed[i] = {-static_cast<double>(groups[roots[i]].bytes) * jitter(rng), roots[i]};
      std::sort(keyed.begin(), keyed.end());
      for (size_t i = 0; i < keyed.size(); ++i) seq[i] = keyed[i].second;
      size_t size = place(groups, seq, true, &offsets);
      if (size < best_size) {
        best_size = size;
        best_offsets = offsets;
      }
    }
  }
  plan.work_size = roots.empty() ? 0 : best_size;
  for (size_t i = 0; i < work.size(); ++i) work[i].offset = best_offsets.empty() ? 0 : best_offsets[group_of[i]];
  std::stable_sort(work.begin(), work.end(), [](const Buffer& a, const Buffer& b) {
    return a.first_use != b.first_use ? a.first_use < b.first_use : a.offset < b.offset;
  });
  plan.work = std::move(work);

  // 5. Weights: constants someone reads, packed in value order.
  for (const auto& vp : g.values()) {
    const Value* v = vp.get();
    if (!v->constant || v->is_graph_input) continue;
    if (v->consumers.empty() && !v->is_graph_output) continue;
    Buffer b;
    b.value = v;
    if (!align_up(v->constant->bytes, align, &b.bytes) || plan.weight_size > kNone - b.bytes)
      return Errorf(code::kInvalidParam, "plan_memory: constant '%s' is too large", v->name.c_str());
    b.offset = plan.weight_size;
    b.first_use = 0;
    b.last_use = last_step < 0 ? 0 : last_step;
    plan.weight_size += b.bytes;
    plan.weights.push_back(b);
  }

#ifndef NDEBUG
  OPENACL_RETURN_IF_ERROR(validate(plan));
#endif
  *out = std::move(plan);
  return Status::Ok();
}

Status validate(const MemoryPlan& plan) {
  std::vector<std::string> errs;
  const size_t align = plan.alignment;
  if (align == 0 || (align & (align - 1)) != 0) errs.push_back(strformat("alignment %zu is not a power of two", align));
  auto name = [](const Buffer& b) { return b.value ? "'" + b.value->name + "'" : std::string("<null>"); };
  auto check_arena = [&](const std::vector<Buffer>& bufs, size_t size, const char* arena) {
    for (const Buffer& b : bufs) {
      if (!b.value) errs.push_back(strformat("a %s buffer has no value", arena));
      if (align && b.offset % align != 0)
        errs.push_back(strformat("%s offset %zu of %s is not %zu-aligned", arena, b.offset, name(b).c_str(), align));
      if (b.offset > size || b.bytes > size - b.offset)
        errs.push_back(strformat("%s [%zu, +%zu) of %s exceeds the %s arena (%zu bytes)", arena, b.offset, b.bytes,
                                 name(b).c_str(), arena, size));
      if (b.first_use > b.last_use || b.first_use < 0 ||
          (!plan.order.empty() && b.last_use >= static_cast<int>(plan.order.size())))
        errs.push_back(strformat("%s %s has lifetime %d..%d outside 0..%zu", arena, name(b).c_str(), b.first_use,
                                 b.last_use, plan.order.size()));
    }
  };
  check_arena(plan.work, plan.work_size, "work");
  check_arena(plan.weights, plan.weight_size, "weight");

  // Sweep buffers by offset; compare each with those starting inside it.
  auto overlaps = [&](const std::vector<Buffer>& bufs, bool weights) {
    std::vector<const Buffer*> by_off;
    for (const Buffer& b : bufs)
      if (b.bytes) by_off.push_back(&b);
    std::sort(by_off.begin(), by_off.end(), [](const Buffer* a, const Buffer* b) { return a->offset < b->offset; });
    for (size_t i = 0; i < by_off.size(); ++i) {
      const Buffer& a = *by_off[i];
      for (size_t j = i + 1; j < by_off.size() && by_off[j]->offset < a.offset + a.bytes; ++j) {
        const Buffer& b = *by_off[j];
        if (!weights) {
          if (a.first_use > b.last_use || b.first_use > a.last_use) continue;
          bool handoff = a.offset == b.offset && ((b.in_place_of == a.value && a.last_use == b.first_use) ||
                                                  (a.in_place_of == b.value && b.last_use == a.first_use));
          if (handoff) continue;
        }
        errs.push_back(strformat("%s buffers %s [%zu, +%zu) steps %d..%d and %s [%zu, +%zu) steps %d..%d overlap",
                                 weights ? "weight" : "work", name(a).c_str(), a.offset, a.bytes, a.first_use,
                                 a.last_use, name(b).c_str(), b.offset, b.bytes, b.first_use, b.last_use));
        if (errs.size() > 16) return;
      }
    }
  };
  overlaps(plan.work, false);
  overlaps(plan.weights, true);
  if (plan.work_size < plan.lower_bound)
    errs.push_back(strformat("work size %zu is below the lower bound %zu", plan.work_size, plan.lower_bound));
  if (errs.empty()) return Status::Ok();
  return Errorf(code::kInternalError, "invalid memory plan: %zu problem(s): %s", errs.size(),
                join_limited(errs, 6).c_str());
}

const Buffer* MemoryPlan::find(const graph::Value* v) const {
  for (const Buffer& b : work)
    if (b.value == v) return &b;
  for (const Buffer& b : weights)
    if (b.value == v) return &b;
  return nullptr;
}

double MemoryPlan::ratio() const {
  if (lower_bound == 0) return work_size == 0 ? 1.0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(work_size) / static_cast<double>(lower_bound);
}

std::string MemoryPlan::to_string() const {
  std::string s = strformat("memory plan: %zu steps, alignment %zu\n", order.size(), alignment);
  s += strformat("  work arena   %zu bytes in %zu buffers (lower bound %zu, ratio %.3f)\n", work_size, work.size(),
                 lower_bound, ratio());
  s += strformat("  weight arena %zu bytes in %zu constants\n", weight_size, weights.size());
  s += "steps:\n";
  for (size_t i = 0; i < order.size(); ++i) s += strformat("  %4zu  %s\n", i, order[i]->describe().c_str());
  auto line = [&](const Buffer& b, bool with_steps) {
    std::string r = strformat("  [%12zu, %12zu) %12zu", b.offset, b.offset + b.bytes, b.bytes);
    if (with_steps) r += strformat("  %4d..%-4d", b.first_use, b.last_use);
    r += strformat("  %s %s", b.value ? b.value->name.c_str() : "<null>", b.value ? b.value->type.str().c_str() : "");
    if (b.in_place_of) r += strformat("  (in place of '%s')", b.in_place_of->name.c_str());
    return r + "\n";
  };
  s += "work buffers: [offset, end) bytes steps value type\n";
  for (const Buffer& b : work) s += line(b, true);
  s += "weights: [offset, end) bytes value type\n";
  for (const Buffer& b : weights) s += line(b, false);
  return s;
}

}  // namespace openacl::planner
