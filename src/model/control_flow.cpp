#include "model/control_flow.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <mutex>
#include <set>

#include "graph/op_schema.h"
#include "kernels/kernel.h"
#include "model/compiled_model.h"
#include "model/executor.h"

namespace openacl::model {

namespace {

using graph::DType;
using graph::Graph;
using graph::Value;
using kernels::Kernel;
using kernels::KernelContext;
using kernels::KernelInit;
using kernels::Tensor;

// A tensor with its own bytes (loop-carried state, collected scan slices).
struct Owned {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  std::vector<char> bytes;

  static Owned of(const Tensor& t) {
    Owned o{t.dtype, t.dims, {}};
    o.bytes.assign(static_cast<const char*>(t.data), static_cast<const char*>(t.data) + t.bytes());
    return o;
  }
  Tensor view() { return Tensor{dtype, dims, bytes.data()}; }
};

size_t explicit_inputs(const graph::Node& n) {
  return static_cast<size_t>(n.attrs.get_int(graph::kExplicitInputsAttr, static_cast<int64_t>(n.inputs.size())));
}

// A compiled body and where its captured values come from among the node's inputs.
struct Body {
  std::shared_ptr<const CompiledModel> model;
  std::vector<size_t> captures;  // node input index of each body input after the declared ones
};

// Compiles a body. `declared` = the body's own inputs (0 for If branches).
// Captured values become inputs of the body after the declared ones (those
// seen on an earlier call stay), typed from the node's appended inputs; a
// constant outer value becomes a constant of the body.
// `declared_types`: what the node passes for each declared body input; a body
// input whose type the model leaves out (ONNX allows it) takes that type.
Status compile_body(const KernelInit& init, const std::shared_ptr<Graph>& g, size_t declared, Body* out,
                    const std::vector<graph::TensorType>& declared_types = {}) {
  if (g->inputs().size() < declared)
    return init.fail("body has %zu inputs; %zu expected", g->inputs().size(), declared);
  for (size_t i = 0; i < declared && i < declared_types.size(); ++i) {
    graph::TensorType& t = g->inputs()[i]->type;
    if (t.dtype == DType::kUndefined) t.dtype = declared_types[i].dtype;
    if (!t.shape) t.shape = declared_types[i].shape;
  }
  std::vector<Value*> caps(g->inputs().begin() + static_cast<std::ptrdiff_t>(declared), g->inputs().end());
  for (Value* v : subgraph_captures(*g)) caps.push_back(v);
  g->inputs().resize(declared);
  const graph::Node& n = init.node();
  for (Value* c : caps) {
    size_t k = explicit_inputs(n);
    while (k < n.inputs.size() && !(n.inputs[k] && n.inputs[k]->name == c->name)) ++k;
    if (k == n.inputs.size()) return init.fail("body reads '%s', which the enclosing graph does not have", c->name.c_str());
    c->type = init.input(k);
    if (const graph::TensorData* d = init.constant(k)) {
      c->constant = graph::TensorData::copy_of(d->dtype, d->dims, d->data, d->bytes);
      c->is_graph_input = false;
      continue;
    }
    c->is_graph_input = true;
    g->inputs().push_back(c);
    out->captures.push_back(k);
  }
  CompileOptions opt;
  std::unique_ptr<CompiledModel> m;
  Status st = CompiledModel::compile(g, opt, &m);
  if (!st.ok()) return init.fail("cannot compile its body: %s", st.message().c_str());
  out->model = std::move(m);
  return Status::Ok();
}

std::shared_ptr<Graph> graph_attr(const KernelInit& init, const char* name) {
  const graph::Attribute* a = init.attrs().find(name);
  return a && a->kind == graph::Attribute::Kind::kGraph ? a->g : nullptr;
}

Status copy_out(KernelContext& ctx, size_t i, const Tensor& src) {
  if (!ctx.has_output(i)) return Status::Ok();
  Tensor* o = nullptr;
  OPENACL_RETURN_IF_ERROR(ctx.allocate_output(i, src.dims, &o));
  if (o->dtype != src.dtype)
    return ctx.fail("output %zu: the body gives %s, the node declares %s", i, graph::dtype_name(src.dtype),
                    graph::dtype_name(o->dtype));
  if (src.bytes()) std::memcpy(o->data, src.data, src.bytes());
  return Status::Ok();
}

bool scalar_bool(const Tensor& t) { return t.elements() > 0 && static_cast<const uint8_t*>(t.data)[0] != 0; }

// outer = prod(dims[:axis]), inner = prod(dims[axis+1:]) * element size.
void axis_split(const std::vector<int64_t>& dims, size_t axis, size_t eb, int64_t* outer, size_t* inner) {
  *outer = 1;
  *inner = eb;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i < axis) *outer *= dims[i];
    if (i > axis) *inner *= static_cast<size_t>(dims[i]);
  }
}

class IfKernel final : public Kernel {
 public:
  Body then_, else_;
  Status run(KernelContext& ctx) const override {
    const Body& b = scalar_bool(ctx.input(0)) ? then_ : else_;
    Executor e(b.model);
    std::vector<Tensor> ins, outs;
    for (size_t k : b.captures) ins.push_back(ctx.input(k));
    OPENACL_RETURN_IF_ERROR(e.run(ins, &outs));
    for (size_t i = 0; i < outs.size(); ++i) OPENACL_RETURN_IF_ERROR(copy_out(ctx, i, outs[i]));
    return Status::Ok();
  }
};

class LoopKernel final : public Kernel {
 public:
  Body body;
  size_t carried = 0;
  bool iter_rank1 = false, cond_rank1 = false;  // how the body declares its first two inputs

  Status run(KernelContext& ctx) const override {
    int64_t trips = std::numeric_limits<int64_t>::max();
    if (ctx.has_input(0) && ctx.input(0).elements() > 0) trips = ctx.input(0).as<int64_t>()[0];
    uint8_t cond = ctx.has_input(1) ? scalar_bool(ctx.input(1)) : 1;
    std::vector<Owned> state;
    for (size_t j = 0; j < carried; ++j) state.push_back(Owned::of(ctx.input(2 + j)));
    const size_t scans = body.model->output_ids().size() - 1 - carried;
    std::vector<Owned> acc(scans);
    Executor e(body.model);
    std::vector<Tensor> ins, outs;
    int64_t iters = 0;
    for (int64_t i = 0; i < trips && cond; ++i, ++iters) {
      int64_t iter = i;
      ins.clear();
      ins.push_back(Tensor{DType::kInt64, iter_rank1 ? std::vector<int64_t>{1} : std::vector<int64_t>{}, &iter});
      ins.push_back(Tensor{DType::kBool, cond_rank1 ? std::vector<int64_t>{1} : std::vector<int64_t>{}, &cond});
      for (Owned& s : state) ins.push_back(s.view());
      for (size_t k : body.captures) ins.push_back(ctx.input(k));
      OPENACL_RETURN_IF_ERROR(e.run(ins, &outs));
      cond = scalar_bool(outs[0]);
      for (size_t j = 0; j < carried; ++j) state[j] = Owned::of(outs[1 + j]);
      for (size_t k = 0; k < scans; ++k) {
        const Tensor& t = outs[1 + carried + k];
        if (i == 0) {
          acc[k].dtype = t.dtype;
          acc[k].dims = t.dims;
        } else if (acc[k].dims != t.dims) {
          return ctx.fail("scan output %zu changes shape between iterations (%s, then %s)", k,
                          Tensor{t.dtype, acc[k].dims, nullptr}.type().str().c_str(), t.type().str().c_str());
        }
        acc[k].bytes.insert(acc[k].bytes.end(), static_cast<const char*>(t.data),
                            static_cast<const char*>(t.data) + t.bytes());
      }
      if (iters > (int64_t{1} << 31)) return ctx.fail("more than 2^31 iterations; giving up");
    }
    for (size_t j = 0; j < carried; ++j) OPENACL_RETURN_IF_ERROR(copy_out(ctx, j, state[j].view()));
    for (size_t k = 0; k < scans; ++k) {
      std::vector<int64_t> dims{iters};
      if (iters == 0) {  // no iteration: per-iteration dims from the body's declaration, unknown as 0
        const graph::TensorType& t = body.model->values()[body.model->output_ids()[1 + carried + k]]->type;
        acc[k].dtype = t.dtype;
        if (t.shape)
          for (const graph::Dim& d : *t.shape) acc[k].dims.push_back(d.known() ? d.value : 0);
      }
      dims.insert(dims.end(), acc[k].dims.begin(), acc[k].dims.end());
      OPENACL_RETURN_IF_ERROR(copy_out(ctx, carried + k, Tensor{acc[k].dtype, dims, acc[k].bytes.data()}));
    }
    return Status::Ok();
  }
};

class ScanKernel final : public Kernel {
 public:
  Body body;
  size_t states = 0, m = 0;
  std::vector<int64_t> in_axes, in_dirs, out_axes, out_dirs;

  Status run(KernelContext& ctx) const override {
    // Sequence length and per-input slice geometry.
    int64_t seq = -1;
    std::vector<size_t> axes(m);
    std::vector<Owned> slices(m);
    for (size_t j = 0; j < m; ++j) {
      const Tensor& x = ctx.input(states + j);
      int64_t ax = in_axes[j] < 0 ? in_axes[j] + x.rank() : in_axes[j];
      if (ax < 0 || ax >= x.rank()) return ctx.fail("scan_input_axes[%zu] out of range for %s", j, x.type().str().c_str());
      axes[j] = static_cast<size_t>(ax);
      if (seq >= 0 && x.dims[axes[j]] != seq)
        return ctx.fail("scan input %zu has %lld steps, input 0 has %lld", j, static_cast<long long>(x.dims[axes[j]]),
                        static_cast<long long>(seq));
      seq = x.dims[axes[j]];
      slices[j].dtype = x.dtype;
      slices[j].dims = x.dims;
      slices[j].dims.erase(slices[j].dims.begin() + static_cast<std::ptrdiff_t>(axes[j]));
      slices[j].bytes.resize(x.bytes() / static_cast<size_t>(std::max<int64_t>(seq, 1)));
    }
    std::vector<Owned> state;
    for (size_t i = 0; i < states; ++i) state.push_back(Owned::of(ctx.input(i)));
    const size_t scans = body.model->output_ids().size() - states;
    std::vector<Owned> per(scans);  // slices in step order, concatenated
    Executor e(body.model);
    std::vector<Tensor> ins, outs;
    for (int64_t t = 0; t < seq; ++t) {
      for (size_t j = 0; j < m; ++j) {
        const Tensor& x = ctx.input(states + j);
        const int64_t idx = in_dirs[j] ? seq - 1 - t : t;
        int64_t outer;
        size_t inner;
        axis_split(x.dims, axes[j], graph::dtype_bytes(x.dtype), &outer, &inner);
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(slices[j].bytes.data() + o * inner, static_cast<const char*>(x.data) + (o * seq + idx) * inner, inner);
      }
      ins.clear();
      for (Owned& s : state) ins.push_back(s.view());
      for (Owned& s : slices) ins.push_back(s.view());
      for (size_t k : body.captures) ins.push_back(ctx.input(k));
      OPENACL_RETURN_IF_ERROR(e.run(ins, &outs));
      for (size_t i = 0; i < states; ++i) state[i] = Owned::of(outs[i]);
      for (size_t k = 0; k < scans; ++k) {
        const Tensor& y = outs[states + k];
        if (t == 0) {
          per[k].dtype = y.dtype;
          per[k].dims = y.dims;
        } else if (per[k].dims != y.dims) {
          return ctx.fail("scan output %zu changes shape between steps", k);
        }
        per[k].bytes.insert(per[k].bytes.end(), static_cast<const char*>(y.data),
                            static_cast<const char*>(y.data) + y.bytes());
      }
    }
    for (size_t i = 0; i < states; ++i) OPENACL_RETURN_IF_ERROR(copy_out(ctx, i, state[i].view()));
    for (size_t k = 0; k < scans; ++k) {
      if (!ctx.has_output(states + k)) continue;
      std::vector<int64_t> dims = per[k].dims;
      const int64_t r = static_cast<int64_t>(dims.size()) + 1;
      const int64_t ax = out_axes[k] < 0 ? out_axes[k] + r : out_axes[k];
      if (ax < 0 || ax >= r) return ctx.fail("scan_output_axes[%zu] out of range", k);
      dims.insert(dims.begin() + ax, seq);
      Tensor* o = nullptr;
      OPENACL_RETURN_IF_ERROR(ctx.allocate_output(states + k, dims, &o));
      int64_t outer;
      size_t inner;
      axis_split(dims, static_cast<size_t>(ax), graph::dtype_bytes(per[k].dtype), &outer, &inner);
      const size_t slice_bytes = static_cast<size_t>(outer) * inner;
      for (int64_t t = 0; t < seq; ++t) {
        const int64_t pos = out_dirs[k] ? seq - 1 - t : t;
        const char* src = per[k].bytes.data() + static_cast<size_t>(t) * slice_bytes;
        for (int64_t o2 = 0; o2 < outer; ++o2)
          std::memcpy(static_cast<char*>(o->data) + (o2 * seq + pos) * inner, src + o2 * inner, inner);
      }
    }
    return Status::Ok();
  }
};

// Scan-8: input 0 is sequence_lens (optional, int64 [batch]); states are
// [batch, ...] and scan inputs [batch, seq, ...]. Each batch entry runs its
// own scan of sequence_lens[b] steps (directions per scan input); scan outputs
// are [batch, seq, ...] in step order, zero past an entry's length.
class Scan8Kernel final : public Kernel {
 public:
  Body body;
  size_t states = 0, m = 0;
  std::vector<int64_t> dirs;

  Status run(KernelContext& ctx) const override {
    const size_t n = states + m;
    const Tensor& first_scan = ctx.input(1 + states);
    if (first_scan.rank() < 2) return ctx.fail("scan input 0 must be [batch, sequence, ...], got %s",
                                                first_scan.type().str().c_str());
    const int64_t batch = first_scan.dims[0], seq = first_scan.dims[1];
    for (size_t j = 0; j < n; ++j) {
      const Tensor& x = ctx.input(1 + j);
      const bool scan = j >= states;
      if (x.rank() < (scan ? 2 : 1) || x.dims[0] != batch || (scan && x.dims[1] != seq))
        return ctx.fail("input %zu is %s; the first scan input makes it [%lld%s, ...]", 1 + j,
                        x.type().str().c_str(), static_cast<long long>(batch),
                        scan ? (", " + std::to_string(seq)).c_str() : "");
    }
    std::vector<int64_t> lens(static_cast<size_t>(batch), seq);
    if (ctx.has_input(0) && ctx.input(0).data) {
      const Tensor& l = ctx.input(0);
      if (l.dtype != DType::kInt64 || l.elements() != batch)
        return ctx.fail("sequence_lens must be int64 [%lld], got %s", static_cast<long long>(batch),
                        l.type().str().c_str());
      for (int64_t b = 0; b < batch; ++b) {
        lens[b] = l.as<int64_t>()[b];
        if (lens[b] < 0 || lens[b] > seq)
          return ctx.fail("sequence_lens[%lld] = %lld is outside [0, %lld]", static_cast<long long>(b),
                          static_cast<long long>(lens[b]), static_cast<long long>(seq));
      }
    }
    const size_t scans = body.model->output_ids().size() - states;
    std::vector<Owned> final_states(states);  // [batch, ...] gathered entry by entry
    std::vector<Owned> per(scans);            // [batch, seq, ...], zero where no step wrote
    std::vector<size_t> slice_bytes(scans, 0);
    std::vector<bool> shaped(scans, false);
    Executor e(body.model);
    std::vector<Tensor> ins, outs;
    std::vector<Owned> state(states), slices(m);
    for (int64_t b = 0; b < batch; ++b) {
      for (size_t i = 0; i < states; ++i) {
        const Tensor& x = ctx.input(1 + i);
        const size_t eb = x.bytes() / static_cast<size_t>(batch);
        state[i].dtype = x.dtype;
        state[i].dims.assign(x.dims.begin() + 1, x.dims.end());
        const char* src = static_cast<const char*>(x.data) + b * eb;
        state[i].bytes.assign(src, src + eb);
      }
      for (int64_t t = 0; t < lens[b]; ++t) {
        for (size_t j = 0; j < m; ++j) {
          const Tensor& x = ctx.input(1 + states + j);
          const size_t step = x.bytes() / static_cast<size_t>(batch * seq);
          const int64_t idx = dirs[j] ? lens[b] - 1 - t : t;
          const char* src = static_cast<const char*>(x.data) + (b * seq + idx) * step;
          slices[j].dtype = x.dtype;
          slices[j].dims.assign(x.dims.begin() + 2, x.dims.end());
          slices[j].bytes.assign(src, src + step);
        }
        ins.clear();
        for (Owned& s : state) ins.push_back(s.view());
        for (Owned& s : slices) ins.push_back(s.view());
        for (size_t k : body.captures) ins.push_back(ctx.input(k));
        OPENACL_RETURN_IF_ERROR(e.run(ins, &outs));
        for (size_t i = 0; i < states; ++i) state[i] = Owned::of(outs[i]);
        for (size_t k = 0; k < scans; ++k) {
          const Tensor& y = outs[states + k];
          if (!shaped[k]) {
            shaped[k] = true;
            per[k].dtype = y.dtype;
            per[k].dims = y.dims;
            slice_bytes[k] = y.bytes();
            per[k].bytes.assign(slice_bytes[k] * static_cast<size_t>(batch * seq), 0);
          } else if (per[k].dims != y.dims) {
            return ctx.fail("scan output %zu changes shape between steps", k);
          }
          std::memcpy(per[k].bytes.data() + (b * seq + t) * slice_bytes[k], y.data, slice_bytes[k]);
        }
      }
      for (size_t i = 0; i < states; ++i) {
        if (b == 0) {
          final_states[i].dtype = state[i].dtype;
          final_states[i].dims = state[i].dims;
          final_states[i].dims.insert(final_states[i].dims.begin(), batch);
        } else if (!std::equal(state[i].dims.begin(), state[i].dims.end(), final_states[i].dims.begin() + 1,
                               final_states[i].dims.end())) {
          return ctx.fail("state %zu has different shapes for different batch entries", i);
        }
        final_states[i].bytes.insert(final_states[i].bytes.end(), state[i].bytes.begin(), state[i].bytes.end());
      }
    }
    for (size_t i = 0; i < states; ++i) OPENACL_RETURN_IF_ERROR(copy_out(ctx, i, final_states[i].view()));
    for (size_t k = 0; k < scans; ++k) {
      if (!ctx.has_output(states + k)) continue;
      if (!shaped[k]) return ctx.fail("scan output %zu: no step ran (every sequence length is 0), so its shape "
                                      "is unknown", k);
      std::vector<int64_t> dims = per[k].dims;
      dims.insert(dims.begin(), {batch, seq});
      OPENACL_RETURN_IF_ERROR(copy_out(ctx, states + k, Tensor{per[k].dtype, dims, per[k].bytes.data()}));
    }
    return Status::Ok();
  }
};

Status make_scan8(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  auto k = std::make_unique<Scan8Kernel>();
  auto g = graph_attr(init, "body");
  if (!g) return init.fail("needs a body graph");
  const size_t n = explicit_inputs(init.node());
  if (n < 2) return init.fail("needs sequence_lens (may be empty) and at least one scan input");
  k->m = static_cast<size_t>(init.attrs().get_int("num_scan_inputs", 0));
  if (k->m < 1 || k->m > n - 1) return init.fail("num_scan_inputs must be in 1..%zu", n - 1);
  k->states = n - 1 - k->m;
  k->dirs = init.attrs().get_ints("directions").value_or(std::vector<int64_t>(k->m, 0));
  if (k->dirs.size() != k->m) return init.fail("directions has %zu entries for %zu scan inputs", k->dirs.size(), k->m);
  std::vector<graph::TensorType> types;
  for (size_t j = 0; j < n - 1; ++j) {  // one batch entry (and one step of a scan input)
    graph::TensorType t = init.input(1 + j);
    const size_t lead = j < k->states ? 1 : 2;
    if (t.shape) {
      if (t.shape->size() < lead)
        return init.fail("input %zu lacks the batch%s axis", 1 + j, lead == 2 ? "/sequence" : "");
      t.shape->erase(t.shape->begin(), t.shape->begin() + static_cast<std::ptrdiff_t>(lead));
    }
    types.push_back(t);
  }
  OPENACL_RETURN_IF_ERROR(compile_body(init, g, n - 1, &k->body, types));
  if (k->body.model->output_ids().size() < k->states)
    return init.fail("body gives too few outputs for %zu states", k->states);
  *out = std::move(k);
  return Status::Ok();
}

Status make_if(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  auto k = std::make_unique<IfKernel>();
  auto t = graph_attr(init, "then_branch"), e = graph_attr(init, "else_branch");
  if (!t || !e) return init.fail("needs then_branch and else_branch graphs");
  OPENACL_RETURN_IF_ERROR(compile_body(init, t, 0, &k->then_));
  OPENACL_RETURN_IF_ERROR(compile_body(init, e, 0, &k->else_));
  *out = std::move(k);
  return Status::Ok();
}

Status make_loop(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  auto k = std::make_unique<LoopKernel>();
  auto g = graph_attr(init, "body");
  if (!g) return init.fail("needs a body graph");
  const size_t n = explicit_inputs(init.node());
  k->carried = n - 2;
  if (g->inputs().size() < 2) return init.fail("body must take the iteration number and the condition");
  k->iter_rank1 = g->inputs()[0]->type.rank() == 1;
  k->cond_rank1 = g->inputs()[1]->type.rank() == 1;
  std::vector<graph::TensorType> types = {graph::TensorType{DType::kInt64, graph::Shape{}},
                                          graph::TensorType{DType::kBool, graph::Shape{}}};
  for (size_t j = 2; j < n; ++j) {  // a carried value's shape may change per iteration: keep only its rank
    graph::TensorType t{init.input(j).dtype, std::nullopt};
    if (init.input(j).shape) t.shape = graph::Shape(init.input(j).shape->size());
    types.push_back(t);
  }
  OPENACL_RETURN_IF_ERROR(compile_body(init, g, n, &k->body, types));
  if (k->body.model->output_ids().size() < 1 + k->carried)
    return init.fail("body gives too few outputs for %zu carried values", k->carried);
  *out = std::move(k);
  return Status::Ok();
}

Status make_scan(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  auto k = std::make_unique<ScanKernel>();
  auto g = graph_attr(init, "body");
  if (!g) return init.fail("needs a body graph");
  const size_t n = explicit_inputs(init.node());
  k->m = static_cast<size_t>(init.attrs().get_int("num_scan_inputs", 0));
  if (k->m < 1 || k->m > n) return init.fail("num_scan_inputs must be in 1..%zu", n);
  k->states = n - k->m;
  auto get = [&](const char* name, size_t count) {
    auto v = init.attrs().get_ints(name).value_or(std::vector<int64_t>());
    if (v.empty()) v.assign(count, 0);
    return v;
  };
  k->in_axes = get("scan_input_axes", k->m);
  k->in_dirs = get("scan_input_directions", k->m);
  if (k->in_axes.size() != k->m) return init.fail("scan_input_axes has the wrong length");
  std::vector<graph::TensorType> types;
  for (size_t i = 0; i < k->states; ++i) types.push_back(init.input(i));
  for (size_t j = 0; j < k->m; ++j) {  // a step's slice: the scan input without its scan axis
    graph::TensorType t = init.input(k->states + j);
    if (t.shape) {
      const int64_t r = static_cast<int64_t>(t.shape->size());
      const int64_t ax = k->in_axes[j] < 0 ? k->in_axes[j] + r : k->in_axes[j];
      if (ax < 0 || ax >= r) return init.fail("scan_input_axes[%zu] out of range", j);
      t.shape->erase(t.shape->begin() + ax);
    }
    types.push_back(t);
  }
  OPENACL_RETURN_IF_ERROR(compile_body(init, g, n, &k->body, types));
  const size_t scans = k->body.model->output_ids().size() - k->states;
  k->out_axes = get("scan_output_axes", scans);
  k->out_dirs = get("scan_output_directions", scans);
  if (k->in_axes.size() != k->m || k->in_dirs.size() != k->m || k->out_axes.size() != scans ||
      k->out_dirs.size() != scans)
    return init.fail("scan axes/directions attributes have the wrong length");
  *out = std::move(k);
  return Status::Ok();
}

}  // namespace

std::vector<Value*> subgraph_captures(const Graph& body) {
  std::vector<Value*> out;
  for (const auto& v : body.values())
    if (!v->producer && !v->is_graph_input && !v->constant && (!v->consumers.empty() || v->is_graph_output))
      out.push_back(v.get());
  return out;
}

Status make_captures_explicit(Graph& g) {
  for (const auto& np : g.nodes()) {
    graph::Node& n = *np;
    if (n.attrs.has(graph::kExplicitInputsAttr)) continue;
    std::vector<Graph*> bodies;
    for (const auto& [name, a] : n.attrs.all()) {
      if (a.kind == graph::Attribute::Kind::kGraph && a.g) bodies.push_back(a.g.get());
      if (a.kind == graph::Attribute::Kind::kGraphs)
        for (const auto& sub : a.graphs) bodies.push_back(sub.get());
    }
    if (bodies.empty()) continue;
    // Inner levels first: a value an inner body reads through this body then
    // has a consumer here, so it counts as this body's capture too.
    for (Graph* b : bodies) OPENACL_RETURN_IF_ERROR(make_captures_explicit(*b));
    std::vector<Value*> extra;
    std::set<std::string> seen;
    for (const Graph* b : bodies)
      for (Value* c : subgraph_captures(*b)) {
        if (!seen.insert(c->name).second) continue;
        Value* outer = g.find_value(c->name);
        if (!outer)
          return Errorf(code::kParseModel, "%s: its body reads '%s', which is not defined in the enclosing graph",
                        n.describe().c_str(), c->name.c_str());
        extra.push_back(outer);
      }
    graph::Attribute count;
    count.kind = graph::Attribute::Kind::kInt;
    count.i = static_cast<int64_t>(n.inputs.size());
    n.attrs.set(graph::kExplicitInputsAttr, count);
    for (Value* v : extra) {
      n.inputs.push_back(v);
      v->consumers.push_back(&n);
    }
  }
  return Status::Ok();
}

void register_control_flow_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    kernels::KernelRegistration("If", "cpu").create(make_if);
    kernels::KernelRegistration("Loop", "cpu").create(make_loop);
    kernels::KernelRegistration("Scan", "cpu").since(8).until(8).create(make_scan8);
    kernels::KernelRegistration("Scan", "cpu").since(9).create(make_scan);
    register_flex_attention_kernel();
  });
}

}  // namespace openacl::model
