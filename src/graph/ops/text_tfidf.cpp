// TfIdfVectorizer (opset 9): n-gram counts of a [C] or [B, C] token tensor
// against a pool of n-grams; the output width is max(ngram_indexes) + 1.
#include "graph/ops/nn_common.h"

namespace openacl::graph::nn {
namespace {

Status tfidf_shape(ShapeContext& ctx) {
  const TensorType& x = ctx.input(0);
  const auto idx = ctx.attrs().get_ints("ngram_indexes");
  if (!idx || idx->empty()) return ctx.fail("ngram_indexes is required");
  int64_t width = 0;
  for (int64_t i : *idx) {
    if (i < 0) return ctx.fail("ngram_indexes must be >= 0");
    width = std::max(width, i + 1);
  }
  const std::string mode = ctx.attrs().get_string("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") return ctx.fail("mode must be TF, IDF or TFIDF");
  if (!x.has_rank()) {
    set_out(ctx, 0, DType::kFloat32, std::nullopt);
    return Status::Ok();
  }
  if (x.rank() > 2) return ctx.fail("input must be [C] or [B, C]");
  if (x.rank() == 2) set_out(ctx, 0, DType::kFloat32, Shape{(*x.shape)[0], Dim(width)});
  else set_out(ctx, 0, DType::kFloat32, Shape{Dim(width)});
  return Status::Ok();
}

}  // namespace

OPENACL_REGISTER_OP(TfIdfVectorizer).since(9).inputs(1, 1).outputs(1, 1).shape(tfidf_shape);

}  // namespace openacl::graph::nn
