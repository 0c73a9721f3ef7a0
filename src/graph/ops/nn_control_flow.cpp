// Control flow: If, Loop, Scan. Their bodies are subgraphs (Attribute::g).
//
// Values a body reads from the enclosing graph ("captures", see the importer)
// are appended to the node's inputs by the compiler (model layer) so that
// ordering and liveness see them; kExplicitInputsAttr records how many inputs
// the node had in the model. Shape functions look at the explicit ones only.
//
// Output types come from the bodies' declared outputs: dims both branches (or
// every iteration) agree on stay known, others become unknown, and the
// executor resolves them at run time.
#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

int64_t explicit_inputs(ShapeContext& ctx) {
  return ctx.attrs().get_int(kExplicitInputsAttr, static_cast<int64_t>(ctx.num_inputs()));
}

const Graph* body(ShapeContext& ctx, const char* name) {
  const Attribute* a = ctx.attrs().find(name);
  return a && a->kind == Attribute::Kind::kGraph && a->g ? a->g.get() : nullptr;
}

// Types a body's outputs from its inputs: declared inputs the model left
// untyped take `declared` (ONNX lets bodies omit them), captured values take
// the types of the node's appended inputs, then the body's own shape
// functions run. Bodies are the node's own (one attribute each), so typing
// them in place is what compiling them would do anyway. Bodies whose outputs
// are all typed are left alone (so executions never touch a compiled body).
Status infer_body(ShapeContext& ctx, const char* name, const std::vector<TensorType>& declared) {
  const Attribute* a = ctx.attrs().find(name);
  if (!a || a->kind != Attribute::Kind::kGraph || !a->g) return ctx.fail("needs a graph attribute %s", name);
  Graph& g = *a->g;
  bool typed = true;
  for (const Value* v : g.outputs()) typed = typed && v->type.dtype != DType::kUndefined;
  if (typed) return Status::Ok();  // declared by the model, or typed when it was compiled
  for (size_t i = 0; i < declared.size() && i < g.inputs().size(); ++i) {
    TensorType& t = g.inputs()[i]->type;
    if (t.dtype == DType::kUndefined) t.dtype = declared[i].dtype;
    if (!t.shape) t.shape = declared[i].shape;
  }
  const size_t n_explicit = static_cast<size_t>(explicit_inputs(ctx));
  for (size_t k = n_explicit; k < ctx.num_inputs(); ++k) {
    const Value* outer = ctx.node().input(k);
    Value* inner = outer ? g.find_value(outer->name) : nullptr;
    if (inner && !inner->producer && !inner->constant && ctx.has_input(k)) inner->type = ctx.input(k);
  }
  Status st = infer_shapes(g);
  if (!st.ok()) return ctx.fail("body '%s': %s", name, st.message().c_str());
  return Status::Ok();
}

// Dims equal in both stay; others become unknown; rank kept when equal.
TensorType merge(const TensorType& a, const TensorType& b) {
  TensorType t;
  t.dtype = a.dtype == DType::kUndefined ? b.dtype : a.dtype;
  if (a.shape && b.shape && a.shape->size() == b.shape->size()) {
    Shape s(a.shape->size());
    for (size_t i = 0; i < s.size(); ++i)
      if ((*a.shape)[i] == (*b.shape)[i]) s[i] = (*a.shape)[i];
    t.shape = std::move(s);
  }
  return t;
}

Status if_shape(ShapeContext& ctx) {
  const Graph* then_g = body(ctx, "then_branch");
  const Graph* else_g = body(ctx, "else_branch");
  if (!then_g || !else_g) return ctx.fail("needs graph attributes then_branch and else_branch");
  OPENACL_RETURN_IF_ERROR(infer_body(ctx, "then_branch", {}));
  OPENACL_RETURN_IF_ERROR(infer_body(ctx, "else_branch", {}));
  const TensorType& cond = ctx.input(0);
  if (cond.dtype != DType::kBool) return ctx.fail("cond must be bool, not %s", dtype_name(cond.dtype));
  if (then_g->outputs().size() != ctx.num_outputs() || else_g->outputs().size() != ctx.num_outputs())
    return ctx.fail("has %zu outputs; then_branch gives %zu and else_branch %zu", ctx.num_outputs(),
                    then_g->outputs().size(), else_g->outputs().size());
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    const TensorType& a = then_g->outputs()[i]->type;
    const TensorType& b = else_g->outputs()[i]->type;
    if (a.dtype != DType::kUndefined && b.dtype != DType::kUndefined && a.dtype != b.dtype)
      return ctx.fail("output %zu is %s in then_branch but %s in else_branch", i, dtype_name(a.dtype), dtype_name(b.dtype));
    ctx.output(i) = merge(a, b);
  }
  return Status::Ok();
}

Status loop_shape(ShapeContext& ctx) {
  const Graph* g = body(ctx, "body");
  if (!g) return ctx.fail("needs a graph attribute body");
  const int64_t n_in = explicit_inputs(ctx);
  const int64_t carried = n_in - 2;
  if (carried < 0) return ctx.fail("needs inputs M and cond (either may be empty)");
  if (static_cast<int64_t>(g->inputs().size()) < carried + 2)  // compiled bodies also take their captures
    return ctx.fail("body takes %zu inputs; the loop passes %lld (iteration, condition, %lld carried)",
                    g->inputs().size(), ll(carried + 2), ll(carried));
  {
    std::vector<TensorType> declared = {TensorType{DType::kInt64, Shape{}}, TensorType{DType::kBool, Shape{}}};
    for (int64_t i = 0; i < carried; ++i) {  // a carried shape may change per iteration: rank only
      const TensorType& init = ctx.input(static_cast<size_t>(i + 2));
      declared.push_back(TensorType{init.dtype, init.shape ? std::optional<Shape>(unknown_dims(init.rank())) : std::nullopt});
    }
    OPENACL_RETURN_IF_ERROR(infer_body(ctx, "body", declared));
  }
  const int64_t scans = static_cast<int64_t>(g->outputs().size()) - 1 - carried;
  if (scans < 0 || static_cast<int64_t>(ctx.num_outputs()) > carried + scans)
    return ctx.fail("body gives %zu outputs; the loop needs condition + %lld carried (+ scan outputs)",
                    g->outputs().size(), ll(carried));
  for (int64_t i = 0; i < carried && i < static_cast<int64_t>(ctx.num_outputs()); ++i) {
    const TensorType& init = ctx.input(static_cast<size_t>(i + 2));
    ctx.output(i) = merge(init, g->outputs()[i + 1]->type);  // a carried shape may change per iteration
  }
  for (int64_t k = 0; carried + k < static_cast<int64_t>(ctx.num_outputs()); ++k) {
    const TensorType& per = g->outputs()[1 + carried + k]->type;
    TensorType t;
    t.dtype = per.dtype;
    if (per.shape) {
      Shape s{Dim()};
      for (const Dim& d : *per.shape) s.push_back(d);
      t.shape = std::move(s);
    }
    ctx.output(carried + k) = t;
  }
  return Status::Ok();
}

// Scan's input/output counts: n_in state and scan inputs (sequence_lens not
// counted), num_scan_inputs of them scanned; the body's extra outputs are the
// scan outputs.
Status scan_counts(ShapeContext& ctx, const Graph& g, int64_t n_in, int64_t* m, int64_t* states, int64_t* scans) {
  *m = ctx.attrs().get_int("num_scan_inputs", -1);
  if (*m < 1 || *m > n_in) return ctx.fail("num_scan_inputs %lld must be in 1..%lld", ll(*m), ll(n_in));
  *states = n_in - *m;
  *scans = static_cast<int64_t>(g.outputs().size()) - *states;
  if (*scans < 0 || static_cast<int64_t>(ctx.num_outputs()) != *states + *scans)
    return ctx.fail("body gives %zu outputs for %lld states; the node has %zu outputs", g.outputs().size(),
                    ll(*states), ctx.num_outputs());
  return Status::Ok();
}

// Scan-8: an optional sequence_lens first, states [batch, ...], scan inputs
// [batch, seq, ...] (the sequence axis is 1, no axes attributes), outputs
// [batch, ...] and [batch, seq, ...]; the body sees one batch entry.
Status scan8_shape(ShapeContext& ctx) {
  const Graph* g = body(ctx, "body");
  if (!g) return ctx.fail("needs a graph attribute body");
  const int64_t n_in = explicit_inputs(ctx) - 1;  // without sequence_lens
  int64_t m = 0, states = 0, scans = 0;
  OPENACL_RETURN_IF_ERROR(scan_counts(ctx, *g, n_in, &m, &states, &scans));
  if (ctx.has_input(0) && ctx.input(0).dtype != DType::kInt64 && ctx.input(0).dtype != DType::kUndefined)
    return ctx.fail("sequence_lens must be int64, not %s", dtype_name(ctx.input(0).dtype));
  Dim batch, seq;
  std::vector<TensorType> declared;
  for (int64_t j = 0; j < n_in; ++j) {
    TensorType t = ctx.input(static_cast<size_t>(1 + j));
    const size_t lead = j < states ? 1 : 2;  // batch (and sequence) axes the body does not see
    if (t.shape) {
      if (t.shape->size() < lead)
        return ctx.fail("input %lld must have a batch%s axis", ll(1 + j), lead == 2 ? " and a sequence" : "");
      if ((*t.shape)[0].known()) batch = (*t.shape)[0];
      if (lead == 2 && (*t.shape)[1].known()) seq = (*t.shape)[1];
      t.shape->erase(t.shape->begin(), t.shape->begin() + static_cast<std::ptrdiff_t>(lead));
    }
    declared.push_back(t);
  }
  OPENACL_RETURN_IF_ERROR(infer_body(ctx, "body", declared));
  for (int64_t i = 0; i < states; ++i) ctx.output(i) = ctx.input(static_cast<size_t>(1 + i));
  for (int64_t k = 0; k < scans; ++k) {
    const TensorType& per = g->outputs()[states + k]->type;
    TensorType t;
    t.dtype = per.dtype;
    if (per.shape) {
      Shape sh = *per.shape;
      sh.insert(sh.begin(), {batch, seq});
      t.shape = std::move(sh);
    }
    ctx.output(states + k) = t;
  }
  return Status::Ok();
}

Status scan_shape(ShapeContext& ctx) {
  if (ctx.opset() < 9) return scan8_shape(ctx);
  const Graph* g = body(ctx, "body");
  if (!g) return ctx.fail("needs a graph attribute body");
  int64_t m = 0, states = 0, scans = 0;
  OPENACL_RETURN_IF_ERROR(scan_counts(ctx, *g, explicit_inputs(ctx), &m, &states, &scans));
  auto in_axes = ctx.attrs().get_ints("scan_input_axes").value_or(std::vector<int64_t>(static_cast<size_t>(m), 0));
  auto out_axes =
      ctx.attrs().get_ints("scan_output_axes").value_or(std::vector<int64_t>(static_cast<size_t>(scans), 0));
  if (static_cast<int64_t>(in_axes.size()) != m || static_cast<int64_t>(out_axes.size()) != scans)
    return ctx.fail("scan_input_axes/scan_output_axes have the wrong length");
  {
    std::vector<TensorType> declared;
    for (int64_t i = 0; i < states; ++i) declared.push_back(ctx.input(static_cast<size_t>(i)));
    for (int64_t j = 0; j < m; ++j) {  // one step's slice: the scan input without its scan axis
      TensorType t = ctx.input(static_cast<size_t>(states + j));
      if (t.shape) {
        int64_t ax = 0;
        if (!normalize_axis(in_axes[j], t.rank(), &ax)) return ctx.fail("scan_input_axes[%lld] out of range", ll(j));
        t.shape->erase(t.shape->begin() + ax);
      }
      declared.push_back(t);
    }
    OPENACL_RETURN_IF_ERROR(infer_body(ctx, "body", declared));
  }
  Dim seq;
  const TensorType& first = ctx.input(static_cast<size_t>(states));
  if (first.has_rank()) {
    int64_t ax = 0;
    if (!normalize_axis(in_axes[0], first.rank(), &ax)) return ctx.fail("scan_input_axes[0] out of range");
    seq = (*first.shape)[static_cast<size_t>(ax)];
  }
  for (int64_t i = 0; i < states; ++i) ctx.output(i) = ctx.input(static_cast<size_t>(i));
  for (int64_t k = 0; k < scans; ++k) {
    const TensorType& per = g->outputs()[states + k]->type;
    TensorType t;
    t.dtype = per.dtype;
    if (per.shape) {
      Shape s = *per.shape;
      int64_t ax = 0;
      if (!normalize_axis(out_axes[k], static_cast<int64_t>(s.size()) + 1, &ax))
        return ctx.fail("scan_output_axes[%lld] out of range", ll(k));
      s.insert(s.begin() + ax, seq);
      t.shape = std::move(s);
    }
    ctx.output(states + k) = t;
  }
  return Status::Ok();
}

constexpr int kAny = 1 << 20;

OPENACL_REGISTER_OP(If).inputs(1, kAny).outputs(1, kAny).since(1).shape(if_shape);
OPENACL_REGISTER_OP(Loop).inputs(2, kAny).outputs(1, kAny).since(1).shape(loop_shape);
OPENACL_REGISTER_OP(Scan).inputs(1, kAny).outputs(1, kAny).since(8).shape(scan_shape);

}  // namespace
}  // namespace openacl::graph::nn
