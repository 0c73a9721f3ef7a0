// Attention's float32 fast path (no cache, no causal or window limits, an
// additive float mask or none): its own tiles (6 query rows x 16 keys on
// AVX2 machines without AVX-512, 6 x up to 64 on AVX-512; K^T and V packed
// per head), elsewhere (and with OPENACL_ATTENTION_TILES=0) oneDNN's sgemm. Shapes are chosen around the tiles' edges (rows past a
// multiple of 6, keys past 8 and 16, head sizes 8 and 16 wide, d's past 8)
// and checked against a double-precision reference through the public op.
#include <cmath>
#include <limits>

#include "graph/passes.h"
#include "op_test_util.h"

namespace openacl::testing {
namespace {

enum class Mask { kNone, kPerKey, kPerBatch, kFull };

struct Shape {
  int64_t batch, hq, hkv, sq, skv, dk, dv;
  Mask mask;
  bool four_d;  // [B, H, S, D] inputs; else [B, S, H*D] with the head counts as attributes
};

std::vector<int64_t> mask_dims(const Shape& s) {
  switch (s.mask) {
    case Mask::kPerKey: return {s.skv};
    case Mask::kPerBatch: return {s.batch, 1, 1, s.skv};
    case Mask::kFull: return {s.batch, s.hq, s.sq, s.skv};
    case Mask::kNone: break;
  }
  return {};
}

// Element (b, h, t, d) of a Q/K/V/Y tensor in either layout.
int64_t at(const Shape& s, bool four_d, int64_t heads, int64_t len, int64_t size, int64_t b, int64_t h, int64_t t,
           int64_t d) {
  return four_d ? ((b * heads + h) * len + t) * size + d : ((b * len + t) * heads + h) * size + d;
}

// softmax(scale Q K^T + mask) V per head in double; a row masked everywhere
// gives zeros, as the kernel does.
std::vector<float> reference(const Shape& s, const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v, const std::vector<float>& m, float scale) {
  std::vector<float> y(static_cast<size_t>(s.batch * s.hq * s.sq * s.dv));
  const std::vector<int64_t> md = mask_dims(s);
  std::vector<double> p(static_cast<size_t>(s.skv));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.hq; ++h) {
      const int64_t kh = h / (s.hq / s.hkv);
      for (int64_t i = 0; i < s.sq; ++i) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < s.skv; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < s.dk; ++d)
            dot += double(q[at(s, s.four_d, s.hq, s.sq, s.dk, b, h, i, d)]) *
                   k[at(s, s.four_d, s.hkv, s.skv, s.dk, b, kh, j, d)];
          double add = 0;
          if (s.mask == Mask::kPerKey) add = m[j];
          if (s.mask == Mask::kPerBatch) add = m[b * s.skv + j];
          if (s.mask == Mask::kFull) add = m[((b * s.hq + h) * s.sq + i) * s.skv + j];
          p[j] = dot * scale + add;
          mx = std::max(mx, p[j]);
        }
        double sum = 0;
        for (double& e : p) sum += (e = mx == -INFINITY ? 0 : std::exp(e - mx));
        for (int64_t d = 0; d < s.dv; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < s.skv; ++j) acc += p[j] * v[at(s, s.four_d, s.hkv, s.skv, s.dv, b, kh, j, d)];
          y[at(s, s.four_d, s.hq, s.sq, s.dv, b, h, i, d)] = float(sum > 0 ? acc / sum : 0);
        }
      }
    }
  return y;
}

struct Inputs {
  std::vector<float> q, k, v, m;
};

Inputs inputs_of(const Shape& s, uint32_t seed) {
  Inputs in;
  in.q = random_floats(static_cast<size_t>(s.batch * s.hq * s.sq * s.dk), seed);
  in.k = random_floats(static_cast<size_t>(s.batch * s.hkv * s.skv * s.dk), seed + 1);
  in.v = random_floats(static_cast<size_t>(s.batch * s.hkv * s.skv * s.dv), seed + 2);
  if (s.mask != Mask::kNone) {
    int64_t n = 1;
    for (int64_t d : mask_dims(s)) n *= d;
    in.m = random_floats(static_cast<size_t>(n), seed + 3);
    for (size_t i = 0; i < in.m.size(); i += 5) in.m[i] = -10000.f;  // some keys masked, as BERT's padding
  }
  return in;
}

OpRun run(const Shape& s, const Inputs& in, float scale) {
  OpSpec spec;
  spec.op_type = "Attention";
  spec.opset = 23;
  spec.attrs.set("scale", attr_float(scale));
  std::vector<int64_t> qd = {s.batch, s.hq, s.sq, s.dk}, kd = {s.batch, s.hkv, s.skv, s.dk},
                       vd = {s.batch, s.hkv, s.skv, s.dv};
  if (!s.four_d) {
    qd = {s.batch, s.sq, s.hq * s.dk}, kd = {s.batch, s.skv, s.hkv * s.dk}, vd = {s.batch, s.skv, s.hkv * s.dv};
    spec.attrs.set("q_num_heads", attr_int(s.hq));
    spec.attrs.set("kv_num_heads", attr_int(s.hkv));
  }
  std::vector<Data> ins = {tensor<float>(qd, in.q), tensor<float>(kd, in.k), tensor<float>(vd, in.v)};
  if (s.mask != Mask::kNone) ins.push_back(tensor<float>(mask_dims(s), in.m));
  return run_op(spec, ins);
}

void expect_matches(const Shape& s, const Inputs& in, const std::string& name) {
  const float scale = 1.f / std::sqrt(float(s.dk));
  OpRun r = run(s, in, scale);
  ASSERT_TRUE(r.status.ok()) << name << ": " << r.status.message();
  const std::vector<float> got = values<float>(r.outputs[0]);
  const std::vector<float> want = reference(s, in.q, in.k, in.v, in.m, scale);
  ASSERT_EQ(got.size(), want.size()) << name;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-5f) << name << " at " << i;
}

TEST(AttentionFast, TileEdgesMatchReference) {
  const std::vector<Shape> shapes = {
      {1, 12, 12, 128, 128, 64, 64, Mask::kPerBatch, false},  // BERT-base's heads
      {2, 3, 3, 7, 9, 8, 8, Mask::kNone, true},                // one row past a tile, one key past 8
      {1, 2, 2, 13, 17, 12, 24, Mask::kPerKey, false},         // d's past 8, a 16 + 8 wide V
      {2, 4, 2, 65, 33, 16, 16, Mask::kFull, true},            // grouped heads, rows past a 64-row block
      {1, 1, 1, 130, 5, 3, 8, Mask::kNone, false},             // fewer keys than a vector, d < 8
      {1, 2, 1, 1, 1, 8, 40, Mask::kPerKey, true},             // one query, one key
      {3, 1, 1, 6, 16, 64, 8, Mask::kPerBatch, false},         // exactly one tile, one panel
      // The 16-lane tiles' edges (V 16 to 80 wide: one to four panels and a
      // fifth; keys in one to four panels at once and more)
      {1, 2, 2, 11, 65, 7, 80, Mask::kPerKey, false},
      {2, 2, 1, 6, 48, 32, 48, Mask::kFull, true},
      {1, 1, 1, 3, 100, 64, 32, Mask::kNone, false},
      {1, 3, 3, 20, 16, 5, 16, Mask::kPerBatch, true},
      // Many keys: the 16-lane tiles' blocks of fewer query rows (18 at 3000 keys)
      {1, 2, 1, 40, 3000, 16, 32, Mask::kPerKey, false},
  };
  for (const Shape& s : shapes) {
    const std::string name = "B" + std::to_string(s.batch) + " H" + std::to_string(s.hq) + "/" +
                             std::to_string(s.hkv) + " S" + std::to_string(s.sq) + "x" + std::to_string(s.skv) +
                             " D" + std::to_string(s.dk) + "/" + std::to_string(s.dv);
    expect_matches(s, inputs_of(s, 11), name);
  }
}

TEST(AttentionFast, MaskedRowsGiveZerosAndNaNStays) {
  const Shape s = {1, 2, 2, 8, 20, 8, 16, Mask::kFull, true};
  Inputs in = inputs_of(s, 5);
  const float ninf = -std::numeric_limits<float>::infinity();
  std::fill(in.m.begin(), in.m.begin() + s.skv, ninf);  // head 0, row 0: every key masked
  for (int64_t j = 0; j < s.skv; j += 2) in.m[s.skv * 3 + j] = ninf;  // head 0, row 3: half of them
  expect_matches(s, in, "masked rows");

  in.q[at(s, true, s.hq, s.sq, s.dk, 0, 1, 2, 0)] = std::numeric_limits<float>::quiet_NaN();  // head 1, row 2
  OpRun r = run(s, in, 0.5f);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const std::vector<float> y = values<float>(r.outputs[0]);
  for (int64_t h = 0; h < s.hq; ++h)
    for (int64_t i = 0; i < s.sq; ++i)
      for (int64_t d = 0; d < s.dv; ++d) {
        const float e = y[at(s, true, s.hq, s.sq, s.dv, 0, h, i, d)];
        if (h == 1 && i == 2) EXPECT_TRUE(std::isnan(e)) << "row with a NaN score, d " << d;
        else if (h == 0 && i == 0) EXPECT_EQ(e, 0.f) << "fully masked row, d " << d;
        else EXPECT_TRUE(std::isfinite(e)) << "h " << h << " row " << i << " d " << d;
      }
}

// graph::fuse_attention_split's form: one [B, S, 3 * H * D] input read in
// place (kPackedQkvAttr), on the fast path and, causal, on the reference
// path; each must give what three separate inputs give. Packed inputs of
// the wrong rank or width are refused with a message.
TEST(AttentionFast, PackedQkvMatchesSeparateAndBadShapesFail) {
  const Shape s = {2, 3, 3, 13, 13, 8, 8, Mask::kPerKey, false};
  const Inputs in = inputs_of(s, 17);
  const int64_t w = s.hq * s.dk;
  std::vector<float> packed;  // each row q | k | v
  for (int64_t r = 0; r < s.batch * s.sq; ++r)
    for (const std::vector<float>* part : {&in.q, &in.k, &in.v})
      packed.insert(packed.end(), part->begin() + r * w, part->begin() + (r + 1) * w);
  for (bool causal : {false, true}) {
    OpSpec spec;
    spec.op_type = "Attention";
    spec.opset = 23;
    spec.attrs.set("q_num_heads", attr_int(s.hq));
    spec.attrs.set("kv_num_heads", attr_int(s.hkv));
    if (causal) spec.attrs.set("is_causal", attr_int(1));
    const Data mask = tensor<float>(mask_dims(s), in.m);
    OpRun sep = run_op(spec, {tensor<float>({s.batch, s.sq, w}, in.q), tensor<float>({s.batch, s.skv, w}, in.k),
                              tensor<float>({s.batch, s.skv, w}, in.v), mask});
    ASSERT_TRUE(sep.status.ok()) << sep.status.message();
    spec.attrs.set(graph::kPackedQkvAttr, attr_int(1));
    OpRun pk = run_op(spec, {tensor<float>({s.batch, s.sq, 3 * w}, packed), nullptr, nullptr, mask});
    ASSERT_TRUE(pk.status.ok()) << pk.status.message();
    const std::vector<float> a = values<float>(sep.outputs[0]), b = values<float>(pk.outputs[0]);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << (causal ? "causal" : "fast") << " at " << i;
  }
  OpSpec spec;
  spec.op_type = "Attention";
  spec.opset = 23;
  spec.attrs.set("q_num_heads", attr_int(1));
  spec.attrs.set("kv_num_heads", attr_int(1));
  spec.attrs.set(graph::kPackedQkvAttr, attr_int(1));
  OpRun odd = run_op(spec, {tensor<float>({1, 4, 10}, random_floats(40, 3)), nullptr, nullptr});
  ASSERT_FALSE(odd.status.ok());
  EXPECT_NE(odd.status.message().find("divide by 3"), std::string::npos) << odd.status.message();
  OpRun four = run_op(spec, {tensor<float>({1, 1, 4, 6}, random_floats(24, 4)), nullptr, nullptr});
  ASSERT_FALSE(four.status.ok());
  EXPECT_NE(four.status.message().find("packed QKV"), std::string::npos) << four.status.message();
}

}  // namespace
}  // namespace openacl::testing
