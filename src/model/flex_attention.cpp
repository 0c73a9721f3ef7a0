// FlexAttention (ai.onnx.preview opset 1): 4-D attention
//   S = Q·Kᵀ·scale;  S = score_mod(S);  P = softmax(S);  P = prob_mod(P);  Y = P·V
// with K/V heads shared by contiguous groups of query heads (GQA). The
// modifiers are arbitrary ONNX subgraphs over the whole [B, Hq, L, S] tensor,
// so they are compiled once (at kernel creation) into CompiledModels and run
// with an Executor, as the control-flow kernels run their bodies. Scores and
// probabilities are in softmax_precision: float32, or float64 (the default for
// float64 inputs).
//
// Note: this kernel uses the model layer (CompiledModel/Executor) from
// kernels/cpu; every target linking openacl_kernels also links openacl_model.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/cpu/cpu_common.h"
#include "model/compiled_model.h"
#include "model/control_flow.h"
#include "model/executor.h"

namespace openacl::model {
namespace {

using namespace openacl::kernels;
using namespace openacl::kernels::cpu;

using model::CompiledModel;
using model::Executor;

// A one-input, one-output modifier subgraph, compiled.
struct Modifier {
  std::shared_ptr<const CompiledModel> model;

  // Replaces `data` (dims, dtype dt) by the subgraph's output.
  Status apply(const KernelContext& ctx, const char* name, DType dt, const std::vector<int64_t>& dims,
               std::vector<char>& data) const {
    if (!model) return Status::Ok();
    Executor e(model);
    std::vector<Tensor> outs;
    OPENACL_RETURN_IF_ERROR(e.run({Tensor{dt, dims, data.data()}}, &outs));
    if (outs.size() != 1 || outs[0].dtype != dt || outs[0].dims != dims)
      return ctx.fail("%s must return one tensor of its input's type and shape", name);
    std::memcpy(data.data(), outs[0].data, data.size());
    return Status::Ok();
  }
};

Status compile_modifier(const KernelInit& init, const char* name, Modifier* out) {
  const graph::Attribute* a = init.attrs().find(name);
  if (!a) return Status::Ok();
  if (a->kind != graph::Attribute::Kind::kGraph || !a->g) return init.fail("%s must be a graph", name);
  std::shared_ptr<graph::Graph> g = a->g;
  if (g->inputs().size() != 1 || g->outputs().size() != 1) return init.fail("%s must have one input and one output", name);
  if (!model::subgraph_captures(*g).empty())
    return init.fail("%s reads values of the enclosing graph, which is not supported", name);
  std::unique_ptr<CompiledModel> m;
  Status st = CompiledModel::compile(g, model::CompileOptions(), &m);
  if (!st.ok()) return init.fail("cannot compile %s: %s", name, st.message().c_str());
  out->model = std::move(m);
  return Status::Ok();
}

class FlexAttentionKernel final : public Kernel {
 public:
  Modifier score_mod, prob_mod;
  DType precision = DType::kFloat32;

  Status run(KernelContext& ctx) const override {
    Status st = Status::Ok();
    if (!dispatch<kFloats>(ctx.input(0).dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          if (precision == DType::kFloat64) st = typed<T, double>(ctx);
          else st = typed<T, float>(ctx);
        }))
      return ctx.fail("Q must be a float tensor");
    return st;
  }

 private:
  template <class T, class C>
  Status typed(KernelContext& ctx) const {
    const Tensor& q = ctx.input(0);
    const Tensor& k = ctx.input(1);
    const Tensor& v = ctx.input(2);
    if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4) return ctx.fail("Q, K and V must be 4-D");
    if (k.dtype != q.dtype || v.dtype != q.dtype) return ctx.fail("Q, K and V must have one dtype");
    const int64_t B = q.dims[0], hq = q.dims[1], L = q.dims[2], E = q.dims[3];
    const int64_t hkv = k.dims[1], S = k.dims[2], Ev = v.dims[3];
    if (k.dims[0] != B || v.dims[0] != B) return ctx.fail("Q, K and V disagree on batch");
    if (k.dims[3] != E) return ctx.fail("Q and K head sizes differ");
    if (v.dims[1] != hkv || v.dims[2] != S) return ctx.fail("K and V disagree on heads or length");
    if (hkv == 0 || hq % hkv) return ctx.fail("q heads must be a multiple of kv heads");
    const int64_t group = hq / hkv;
    const graph::Attribute* sa = ctx.attrs().find("scale");
    const C scale = sa ? static_cast<C>(sa->f) : (E > 0 ? C(1) / std::sqrt(static_cast<C>(E)) : C(1));

    const std::vector<int64_t> sdims{B, hq, L, S};
    std::vector<char> buf(static_cast<size_t>(B * hq * L * S) * sizeof(C));
    C* sc = reinterpret_cast<C*>(buf.data());
    const T* qd = q.as<const T>();
    const T* kd = k.as<const T>();
    const T* vd = v.as<const T>();
    parallel_for(B * hq * L, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const int64_t bh = r / L, b = bh / hq, hk = (bh % hq) / group;
        const T* qr = qd + r * E;
        const T* kb = kd + (b * hkv + hk) * S * E;
        for (int64_t j = 0; j < S; ++j) {
          C acc = 0;
          for (int64_t e = 0; e < E; ++e) acc += static_cast<C>(load(qr[e])) * static_cast<C>(load(kb[j * E + e]));
          sc[r * S + j] = acc * scale;
        }
      }
    });
    const DType cdt = std::is_same_v<C, double> ? DType::kFloat64 : DType::kFloat32;
    OPENACL_RETURN_IF_ERROR(score_mod.apply(ctx, "score_mod", cdt, sdims, buf));
    parallel_for(B * hq * L, 16, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        C* row = sc + r * S;
        C mx = -std::numeric_limits<C>::infinity();
        for (int64_t j = 0; j < S; ++j) mx = row[j] > mx ? row[j] : mx;
        C sum = 0;
        for (int64_t j = 0; j < S; ++j) sum += (row[j] = std::exp(row[j] - mx));
        for (int64_t j = 0; j < S; ++j) row[j] /= sum;
      }
    });
    OPENACL_RETURN_IF_ERROR(prob_mod.apply(ctx, "prob_mod", cdt, sdims, buf));
    sc = reinterpret_cast<C*>(buf.data());
    T* yd = ctx.output(0).as<T>();
    parallel_for(B * hq * L, 16, [&](int64_t begin, int64_t end) {
      std::vector<C> acc(static_cast<size_t>(Ev));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t bh = r / L, b = bh / hq, hk = (bh % hq) / group;
        const T* vb = vd + (b * hkv + hk) * S * Ev;
        const C* p = sc + r * S;
        for (int64_t e = 0; e < Ev; ++e) acc[e] = 0;
        for (int64_t j = 0; j < S; ++j) {
          const C pj = p[j];
          for (int64_t e = 0; e < Ev; ++e) acc[e] += pj * static_cast<C>(load(vb[j * Ev + e]));
        }
        for (int64_t e = 0; e < Ev; ++e) yd[r * Ev + e] = store<T>(acc[e]);
      }
    });
    return Status::Ok();
  }
};

Status make_flex_attention(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  auto kern = std::make_unique<FlexAttentionKernel>();
  const DType in = init.input(0).dtype;
  const graph::Attribute* p = init.attrs().find("softmax_precision");
  if (p) {
    const auto dt = static_cast<DType>(p->i);
    if (dt != DType::kFloat32 && dt != DType::kFloat64)
      return init.fail("softmax_precision %lld is not supported (float32 or float64 only)", static_cast<long long>(p->i));
    kern->precision = dt;
  } else {
    kern->precision = in == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  }
  OPENACL_RETURN_IF_ERROR(compile_modifier(init, "score_mod", &kern->score_mod));
  OPENACL_RETURN_IF_ERROR(compile_modifier(init, "prob_mod", &kern->prob_mod));
  *out = std::move(kern);
  return Status::Ok();
}

}  // namespace

// In the model layer, beside If/Loop/Scan: it runs its modifier subgraphs
// with compiled models. Registered by register_control_flow_kernels().
void register_flex_attention_kernel() {
  KernelRegistration("FlexAttention", "cpu", "ai.onnx.preview").types(float_types()).create(make_flex_attention);
}

}  // namespace openacl::model
