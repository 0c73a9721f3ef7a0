// TfIdfVectorizer (opset 9) for int32/int64 tokens (string tokens are not
// supported). The n-gram pool is indexed once at kernel creation: pool n-grams
// are numbered in pool order across all sizes (ngram_counts[i] is where the
// (i+1)-grams start); only sizes in [min_gram_length, max_gram_length] are
// matched, and n-gram number j counts into column ngram_indexes[j].
// Per row and per skip distance d = 1..max_skip_count+1, every start position
// contributes the n-grams x[s], x[s+d], ..., x[s+(n-1)d]; unigrams are counted
// for d = 1 only (they do not depend on d). TF = counts, IDF = weight (or 1) if
// the count > 0, TFIDF = weight * count (count without weights).
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

class TfIdfKernel final : public Kernel {
 public:
  std::map<std::vector<int64_t>, int64_t> grams;  // n-gram -> output column
  int64_t min_n = 1, max_n = 1, max_skip = 0, width = 0;
  int mode = 0;  // 0 TF, 1 IDF, 2 TFIDF
  std::vector<float> weights;

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.rank() > 2) return ctx.fail("input must be [C] or [B, C]");
    const int64_t rows = x.rank() == 2 ? x.dims[0] : 1;
    const int64_t cols = x.rank() == 0 ? 1 : x.dims.back();
    Tensor& y = ctx.output(0);
    if (y.elements() != rows * width) return ctx.fail("unexpected output size");
    float* yd = y.as<float>();
    const bool i32 = x.dtype == DType::kInt32;
    parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> key;
      std::vector<int64_t> counts(static_cast<size_t>(width));
      for (int64_t r = begin; r < end; ++r) {
        std::fill(counts.begin(), counts.end(), 0);
        auto tok = [&](int64_t i) -> int64_t {
          return i32 ? x.as<const int32_t>()[r * cols + i] : x.as<const int64_t>()[r * cols + i];
        };
        for (int64_t d = 1; d <= max_skip + 1; ++d) {
          const int64_t first_n = d == 1 ? min_n : std::max<int64_t>(min_n, 2);
          if (first_n > max_n) break;
          for (int64_t s = 0; s < cols; ++s) {
            key.clear();
            for (int64_t n = 1, i = s; n <= max_n && i < cols; ++n, i += d) {
              key.push_back(tok(i));
              if (n < first_n) continue;
              auto it = grams.find(key);
              if (it != grams.end()) ++counts[static_cast<size_t>(it->second)];
            }
          }
        }
        float* out = yd + r * width;
        for (int64_t c = 0; c < width; ++c) {
          const float w = weights.empty() ? 1.0f : weights[static_cast<size_t>(c)];
          const int64_t f = counts[static_cast<size_t>(c)];
          out[c] = mode == 0 ? static_cast<float>(f) : mode == 1 ? (f > 0 ? w : 0.0f) : w * static_cast<float>(f);
        }
      }
    });
    return Status::Ok();
  }
};

Status make_tfidf(const KernelInit& init, std::unique_ptr<Kernel>* out) {
  const graph::AttributeMap& at = init.attrs();
  auto k = std::make_unique<TfIdfKernel>();
  const std::string mode = at.get_string("mode", "");
  k->mode = mode == "TF" ? 0 : mode == "IDF" ? 1 : mode == "TFIDF" ? 2 : -1;
  if (k->mode < 0) return init.fail("mode must be TF, IDF or TFIDF");
  k->min_n = at.get_int("min_gram_length", 0);
  k->max_n = at.get_int("max_gram_length", 0);
  k->max_skip = at.get_int("max_skip_count", 0);
  if (k->min_n < 1 || k->max_n < k->min_n || k->max_skip < 0)
    return init.fail("need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
  const auto pool = at.get_ints("pool_int64s");
  if (!pool) return init.fail("only pool_int64s (integer tokens) is supported");
  const std::vector<int64_t> counts = at.get_ints("ngram_counts").value_or(std::vector<int64_t>());
  const std::vector<int64_t> idx = at.get_ints("ngram_indexes").value_or(std::vector<int64_t>());
  for (int64_t i : idx) {
    if (i < 0) return init.fail("ngram_indexes must be >= 0");
    k->width = std::max(k->width, i + 1);
  }
  if (auto w = at.get_floats("weights")) {
    k->weights = *w;
    if (!k->weights.empty() && static_cast<int64_t>(k->weights.size()) < k->width)
      return init.fail("weights has fewer entries than output columns");
  }
  const int64_t total = static_cast<int64_t>(pool->size());
  int64_t id = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t n = static_cast<int64_t>(i) + 1;
    const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : total;
    if (begin < 0 || end > total || end < begin) return init.fail("ngram_counts is inconsistent with the pool");
    const int64_t grams = (end - begin) / n;
    for (int64_t g = 0; g < grams; ++g, ++id) {
      if (n < k->min_n || n > k->max_n) continue;
      if (id >= static_cast<int64_t>(idx.size())) return init.fail("ngram_indexes has too few entries for the pool");
      std::vector<int64_t> key(pool->begin() + begin + g * n, pool->begin() + begin + (g + 1) * n);
      k->grams[key] = idx[static_cast<size_t>(id)];
    }
  }
  *out = std::move(k);
  return Status::Ok();
}

OPENACL_REGISTER_KERNEL(TfIdfVectorizer, "cpu").types({DType::kInt32, DType::kInt64}).create(make_tfidf);

}  // namespace
}  // namespace openacl::kernels::cpu
