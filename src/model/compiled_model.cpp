#include "model/compiled_model.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>

#include "base/page_alloc.h"
#include "graph/passes.h"
#include "kernels/cpu/blocked_layout.h"
#include "kernels/cpu/cpu_common.h"
#include "model/control_flow.h"
#include "model/layout.h"

namespace openacl::model {

namespace {

using graph::DType;
using graph::Node;
using graph::TensorData;
using graph::TensorType;
using graph::Value;

// Ops whose result is not a function of their inputs: never folded.
bool nondeterministic(const Node& n) {
  static const std::set<std::string> kOps = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                             "RandomUniformLike", "Multinomial", "Bernoulli"};
  return kOps.count(n.op_type) != 0;
}

std::vector<int64_t> known_dims(const TensorType& t) {
  std::vector<int64_t> d;
  for (const graph::Dim& x : *t.shape) d.push_back(x.value);
  return d;
}

// Bytes of a fully known type, saturating at SIZE_MAX (an element count that
// overflows must not look small to the fold limit).
size_t type_bytes(const TensorType& t) {
  auto n = graph::element_count(*t.shape);
  if (!n) return SIZE_MAX;
  const size_t w = graph::dtype_bytes(t.dtype);
  if (w && static_cast<size_t>(*n) > SIZE_MAX / w) return SIZE_MAX;
  return static_cast<size_t>(*n) * w;
}

// Shape / Size of a value whose shape is fully known: computed from the type.
bool fold_shape_op(const Node& n, std::shared_ptr<TensorData>* out) {
  const Value* in = n.input(0);
  if (!in || !in->type.shape || !graph::fully_known(*in->type.shape)) return false;
  const std::vector<int64_t> dims = known_dims(in->type);
  if (n.op_type == "Size") {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    *out = TensorData::copy_of(DType::kInt64, {}, &count, sizeof count);
    return true;
  }
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t start = n.attrs.get_int("start", 0), end = n.attrs.get_int("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<int64_t> part;
  for (int64_t i = start; i < end; ++i) part.push_back(dims[i]);
  *out = TensorData::copy_of(DType::kInt64, {static_cast<int64_t>(part.size())}, part.data(),
                             part.size() * sizeof(int64_t));
  return true;
}

// Releases the pages of constants that lie in a private read-only file
// mapping once every node reading them has its kernel
// (CompileOptions::release_begin). Always safe: such pages were never
// written, so a later read faults them back in from the file.
class ConstantReleaser {
 public:
  explicit ConstantReleaser(const CompileOptions& opt)
      : begin_(reinterpret_cast<uintptr_t>(opt.release_begin)), end_(begin_ + opt.release_size) {}

  // Call after node n's kernel is built; returns the bytes released.
  size_t after(const Node& n) {
    if (begin_ == end_) return 0;
    size_t released = 0;
    for (const Value* v : n.inputs) {
      if (!v || !v->constant || v->is_graph_output || !v->constant->data) continue;
      const uintptr_t lo = reinterpret_cast<uintptr_t>(v->constant->data);
      const uintptr_t hi = lo + v->constant->bytes;
      if (lo < begin_ || hi > end_) continue;
      // consumers holds a node once per input it reads the value through, as
      // this loop counts.
      auto it = left_.emplace(v, v->consumers.size()).first;
      if (it->second == 0 || --it->second != 0) continue;
      released += release_pages(v->constant->data, v->constant->bytes);
    }
    return released;
  }

 private:
  const uintptr_t begin_, end_;
  std::unordered_map<const Value*, size_t> left_;
};

kernels::KernelInit make_init(const Node& n) {
  std::vector<const TensorType*> in_types, out_types;
  std::vector<const TensorData*> consts;
  for (Value* v : n.inputs) {
    in_types.push_back(v ? &v->type : nullptr);
    consts.push_back(v ? v->constant.get() : nullptr);
  }
  for (Value* v : n.outputs) out_types.push_back(v ? &v->type : nullptr);
  return kernels::KernelInit(n, std::move(in_types), std::move(consts), std::move(out_types));
}

// Tries to fold n (all inputs constant, outputs known and small). On success
// the output values hold constants and n can be removed.
Status try_fold(Node& n, const CompileOptions& opt, bool* folded) {
  *folded = false;
  if (nondeterministic(n) || n.outputs.empty()) return Status::Ok();
  if ((n.op_type == "Shape" || n.op_type == "Size") && n.domain.empty()) {
    std::shared_ptr<TensorData> c;
    if (n.output(0) && fold_shape_op(n, &c)) {
      n.outputs[0]->constant = c;
      *folded = true;
    }
    return Status::Ok();
  }
  std::vector<std::shared_ptr<TensorData>> inputs;
  for (Value* v : n.inputs) {
    if (v && !v->constant) return Status::Ok();
    inputs.push_back(v ? v->constant : nullptr);
  }
  if (inputs.empty()) return Status::Ok();  // no inputs: a generator (Random*), nothing to fold
  size_t total = 0;
  std::vector<TensorType> out_types;
  for (Value* v : n.outputs) {
    if (!v) {
      out_types.emplace_back();
      continue;
    }
    if (!v->type.shape || !graph::fully_known(*v->type.shape) || v->type.dtype == DType::kString) return Status::Ok();
    const size_t b = type_bytes(v->type);
    total = b > SIZE_MAX - total ? SIZE_MAX : total + b;
    out_types.push_back(v->type);
  }
  if (total > opt.fold_limit_bytes) return Status::Ok();
  std::string why;
  const kernels::KernelDef* def = kernels::KernelRegistry::instance().find(make_init(n), opt.backend, &why);
  if (!def) return Status::Ok();  // reported later, with the other nodes that cannot run
  std::vector<std::shared_ptr<TensorData>> outs;
  OPENACL_RETURN_IF_ERROR(run_node_once(n, *def, inputs, out_types, &outs));
  for (size_t i = 0; i < n.outputs.size(); ++i)
    if (n.outputs[i]) n.outputs[i]->constant = outs[i];
  *folded = true;
  return Status::Ok();
}

bool is_fully_known(const TensorType& t) { return t.shape && graph::fully_known(*t.shape); }

}  // namespace

Status run_node_once(const Node& node, const kernels::KernelDef& def,
                     const std::vector<std::shared_ptr<TensorData>>& inputs,
                     const std::vector<TensorType>& output_types, std::vector<std::shared_ptr<TensorData>>* outputs) {
  std::vector<TensorType> in_types(inputs.size());
  std::vector<const TensorType*> in_type_ptrs;
  std::vector<const TensorData*> consts;
  std::vector<kernels::Tensor> in_tensors(inputs.size());
  std::vector<const kernels::Tensor*> in_ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) {
      in_type_ptrs.push_back(nullptr);
      consts.push_back(nullptr);
      in_ptrs.push_back(nullptr);
      continue;
    }
    in_types[i].dtype = inputs[i]->dtype;
    in_types[i].shape = graph::Shape(inputs[i]->dims.begin(), inputs[i]->dims.end());
    in_type_ptrs.push_back(&in_types[i]);
    consts.push_back(inputs[i].get());
    in_tensors[i] = kernels::Tensor{inputs[i]->dtype, inputs[i]->dims, const_cast<void*>(inputs[i]->data)};
    in_ptrs.push_back(&in_tensors[i]);
  }
  std::vector<const TensorType*> out_type_ptrs;
  for (const TensorType& t : output_types) out_type_ptrs.push_back(&t);
  kernels::KernelInit init(node, in_type_ptrs, consts, out_type_ptrs);
  std::unique_ptr<kernels::Kernel> kernel;
  OPENACL_RETURN_IF_ERROR(def.factory(init, &kernel));

  outputs->assign(output_types.size(), nullptr);
  std::vector<kernels::Tensor> out_tensors(output_types.size());
  std::vector<kernels::Tensor*> out_ptrs;
  auto allocate = [&](size_t i, const std::vector<int64_t>& dims, std::shared_ptr<TensorData>* slot) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    const size_t bytes = static_cast<size_t>(n) * graph::dtype_bytes(output_types[i].dtype);
    std::vector<char> zeros(bytes);
    *slot = TensorData::copy_of(output_types[i].dtype, dims, zeros.data(), bytes);
    out_tensors[i] = kernels::Tensor{output_types[i].dtype, dims, const_cast<void*>((*slot)->data)};
  };
  for (size_t i = 0; i < output_types.size(); ++i) {
    if (output_types[i].dtype == DType::kUndefined && !output_types[i].shape) {
      out_ptrs.push_back(nullptr);  // omitted output
      continue;
    }
    out_tensors[i].dtype = output_types[i].dtype;
    if (is_fully_known(output_types[i])) allocate(i, known_dims(output_types[i]), &(*outputs)[i]);
    out_ptrs.push_back(&out_tensors[i]);
  }
  kernels::KernelContext ctx(node, in_ptrs, out_ptrs,
                             [&](size_t i, const std::vector<int64_t>& dims, kernels::Tensor** out) {
                               allocate(i, dims, &(*outputs)[i]);
                               *out = &out_tensors[i];
                               return Status::Ok();
                             });
  OPENACL_RETURN_IF_ERROR(kernel->run(ctx));
  for (size_t i = 0; i < output_types.size(); ++i)
    if (out_ptrs[i] && !(*outputs)[i])
      return Errorf(code::kInvalidParam, "%s: kernel left output %zu unallocated", node.describe().c_str(), i);
  return Status::Ok();
}

size_t CompiledModel::storage_bytes(int id, const kernels::Tensor& t) const {
  const int64_t block = value_block(id);
  return block ? kernels::cpu::blocked_bytes(t.dtype, t.dims, block, t.bytes()) : t.bytes();
}

int CompiledModel::value_id(const Value* v) const {
  auto it = ids_.find(v);
  return it == ids_.end() ? -1 : it->second;
}

Status CompiledModel::compile(std::shared_ptr<graph::Graph> graph, const CompileOptions& opt,
                              std::unique_ptr<CompiledModel>* out) {
  if (!graph) return Status(code::kInvalidParam, "no graph to compile");
  register_control_flow_kernels();
  auto m = std::unique_ptr<CompiledModel>(new CompiledModel());
  graph::Graph& g = *graph;
  OPENACL_RETURN_IF_ERROR(make_captures_explicit(g));
  for (const auto& [name, shape] : opt.input_shapes) {
    Value* v = g.find_value(name);
    if (!v || !v->is_graph_input)
      return Errorf(code::kInvalidParam, "input shape given for '%s', which is not an input of the model",
                    name.c_str());
    if (v->type.shape && v->type.shape->size() != shape.size())
      return Errorf(code::kInvalidParam, "input '%s' has rank %zu; the shape given, %s, has rank %zu", name.c_str(),
                    v->type.shape->size(), graph::shape_str(shape).c_str(), shape.size());
    v->type.shape = shape;
  }

  // Shapes, with folding interleaved.
  std::vector<Node*> order;
  OPENACL_RETURN_IF_ERROR(g.topological_order(&order));
  std::vector<std::string> problems;
  std::vector<Node*> folded;
  for (Node* n : order) {
    Status st = graph::infer_node_shapes(*n);
    if (!st.ok()) {
      problems.push_back(st.message());
      continue;
    }
    if (!opt.fold_constants) continue;
    bool did = false;
    st = try_fold(*n, opt, &did);
    if (!st.ok()) problems.push_back("constant folding: " + st.message());
    if (did) folded.push_back(n);
  }
  OPENACL_RETURN_IF_ERROR(graph::problems_status(problems));
  for (Node* n : folded) g.remove_node(n);
  m->folded_ = folded.size();
  if (opt.fold_constants) {
    size_t bn = 0;
    OPENACL_RETURN_IF_ERROR(graph::fold_batchnorm_into_conv(g, &bn));
    m->folded_ += bn;
    size_t fused = 0;
    OPENACL_RETURN_IF_ERROR(graph::fuse_gelu(g, &fused));
    m->fused_ += fused;
    OPENACL_RETURN_IF_ERROR(graph::fuse_layernorm(g, &fused));
    m->fused_ += fused;
    OPENACL_RETURN_IF_ERROR(graph::fuse_attention(g, &fused));
    m->fused_ += fused;
    OPENACL_RETURN_IF_ERROR(graph::merge_transposes(g, &fused));  // after attention: it reads Transpose pairs
    m->fused_ += fused;
    OPENACL_RETURN_IF_ERROR(graph::fuse_conv_add(g, &fused));
    m->fused_ += fused;
    OPENACL_RETURN_IF_ERROR(graph::fuse_conv_activation(g, &fused));
    m->fused_ += fused;
    OPENACL_RETURN_IF_ERROR(graph::fuse_inverted_residual(g, &fused));
    m->fused_ += fused;
    OPENACL_RETURN_IF_ERROR(graph::fuse_conv_depthwise(g, &fused));
    m->fused_ += fused;
    OPENACL_RETURN_IF_ERROR(graph::fuse_matmul_epilogue(g, &fused));
    m->fused_ += fused;
  }

  // Dead nodes.
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<Node*> dead;
    for (const auto& n : g.nodes()) {
      bool used = false;
      for (Value* v : n->outputs) used = used || (v && (!v->consumers.empty() || v->is_graph_output));
      if (!used) dead.push_back(n.get());
    }
    for (Node* n : dead) g.remove_node(n);
    m->removed_ += dead.size();
    changed = !dead.empty();
  }
  if (opt.fold_constants) {  // once fuse_attention's per-head Reshapes of q, k, v are gone
    size_t fused = 0;
    OPENACL_RETURN_IF_ERROR(graph::fuse_attention_split(g, &fused));
    m->fused_ += fused;
  }

  OPENACL_RETURN_IF_ERROR(mark_blocked_layouts(g, opt.blocked_layouts, &m->blocked_marked_));

  // Value ids, kernels.
  OPENACL_RETURN_IF_ERROR(g.topological_order(&order));
  auto id_of = [&](const Value* v) {
    if (!v) return -1;
    auto [it, fresh] = m->ids_.emplace(v, static_cast<int>(m->values_.size()));
    if (fresh) m->values_.push_back(v);
    return it->second;
  };
  for (Value* v : g.inputs()) m->input_ids_.push_back(id_of(v));
  for (Value* v : g.outputs()) m->output_ids_.push_back(id_of(v));
  // Every node is checked and its kernel looked up in order; the kernels are
  // then built in parallel (each build is independent, and oneDNN's JIT,
  // weight packing and the first touch of the packed pages, most of a load,
  // are serial inside one), the constants of a node released as soon as all
  // their readers are built, and the nodes kept in order.
  struct Pending {
    CompiledNode cn;
    std::optional<kernels::KernelInit> init;
    bool failed = false;
    std::string problem;  // why, when failed
  };
  std::vector<Pending> pending(order.size());
  std::vector<size_t> builds;
  for (size_t k = 0; k < order.size(); ++k) {
    Node* n = order[k];
    Pending& p = pending[k];
    CompiledNode& cn = p.cn;
    cn.node = n;
    for (Value* v : n->inputs) cn.inputs.push_back(id_of(v));
    for (Value* v : n->outputs) cn.outputs.push_back(id_of(v));
    for (size_t i = 0; i < n->inputs.size(); ++i)
      cn.input_blocks.push_back(n->inputs[i] ? kernels::cpu::blocked_block(n->attrs, false, i, n->inputs[i]->type) : 0);
    for (size_t i = 0; i < n->outputs.size(); ++i)
      cn.output_blocks.push_back(n->outputs[i] ? kernels::cpu::blocked_block(n->attrs, true, i, n->outputs[i]->type)
                                               : 0);
    Status st = graph::check_node(*n, &cn.schema);
    if (!st.ok()) {
      p.failed = true;
      p.problem = st.message();
      continue;
    }
    p.init.emplace(make_init(*n));
    p.init->set_packs(opt.packs);
    std::string why;
    cn.def = kernels::KernelRegistry::instance().find(*p.init, opt.backend, &why);
    if (!cn.def) {
      std::string types;
      for (Value* v : n->inputs) types += (types.empty() ? "" : ", ") + (v ? v->type.str() : std::string("-"));
      p.failed = true;
      p.problem = n->describe() + " [" + types + "]: " + why;
      continue;
    }
    if (opt.create_kernels) builds.push_back(k);
  }
  ConstantReleaser releaser(opt);
  std::mutex release_mu;
  kernels::cpu::parallel_tasks(static_cast<int64_t>(builds.size()), [&](int64_t b) {
    Pending& p = pending[builds[static_cast<size_t>(b)]];
    Status st = Status::Ok();
    try {
      st = p.cn.def->factory(*p.init, &p.cn.kernel);
    } catch (const std::exception& e) {  // nothing may leave a parallel region
      st = Errorf(code::kInternalError, "%s: building its kernel failed: %s", p.cn.node->describe().c_str(), e.what());
    }
    if (!st.ok()) {
      p.failed = true;
      p.problem = st.message();
      return;
    }
    std::lock_guard<std::mutex> lock(release_mu);
    m->released_bytes_ += releaser.after(*p.cn.node);
  });
  for (Pending& p : pending) {
    if (p.failed) problems.push_back(std::move(p.problem));
    else m->nodes_.push_back(std::move(p.cn));
  }
  OPENACL_RETURN_IF_ERROR(graph::problems_status(problems));
  m->value_blocks_.assign(m->values_.size(), 0);
  for (const CompiledNode& cn : m->nodes_)
    for (size_t o = 0; o < cn.outputs.size(); ++o)
      if (cn.outputs[o] >= 0) m->value_blocks_[static_cast<size_t>(cn.outputs[o])] = cn.output_blocks[o];
  m->use_counts_.assign(m->values_.size(), 0);
  for (const CompiledNode& cn : m->nodes_)
    for (int id : cn.inputs)
      if (id >= 0) ++m->use_counts_[id];
  for (int id : m->output_ids_) ++m->use_counts_[id];

  bool all_known = true;
  for (const Value* v : m->values_)
    if (!v->constant) all_known = all_known && is_fully_known(v->type) && v->type.dtype != DType::kString;
  m->static_ = all_known;
  if (all_known) {
    planner::PlanOptions po;
    po.alignment = opt.alignment;
    std::unordered_map<const Node*, const kernels::KernelDef*> defs;
    for (const CompiledNode& cn : m->nodes_) defs[cn.node] = cn.def;
    po.can_alias = [defs](const Node& n, size_t in, size_t outi) {
      auto it = defs.find(&n);
      if (it == defs.end()) return false;
      for (auto [i, o] : it->second->in_place)
        if (static_cast<size_t>(i) == in && static_cast<size_t>(o) == outi) return n.input(in)->type.dtype == n.output(outi)->type.dtype;
      return false;
    };
    const CompiledModel* cm = m.get();
    po.storage_bytes = [cm](const Value& v, size_t plain) {
      const int id = cm->value_id(&v);
      const int64_t block = id >= 0 ? cm->value_block(id) : 0;
      if (!block) return plain;
      std::vector<int64_t> dims;
      for (const graph::Dim& d : *v.type.shape) dims.push_back(d.value);
      return kernels::cpu::blocked_bytes(v.type.dtype, dims, block, plain);
    };
    OPENACL_RETURN_IF_ERROR(planner::plan_memory(g, po, &m->plan_));
    if (m->plan_.order.size() != m->nodes_.size())
      return Errorf(code::kInternalError, "memory plan covers %zu nodes, model has %zu", m->plan_.order.size(),
                    m->nodes_.size());
    for (size_t i = 0; i < m->nodes_.size(); ++i)
      if (m->plan_.order[i] != m->nodes_[i].node)
        return Status(code::kInternalError, "memory plan and compiled model disagree on the node order");
  }
  m->graph_ = std::move(graph);
  *out = std::move(m);
  return Status::Ok();
}

}  // namespace openacl::model
