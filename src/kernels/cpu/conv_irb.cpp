// A fused inverted residual block: see conv_irb.h.
#include "kernels/cpu/conv_irb.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "base/page_alloc.h"
#include "kernels/cpu/cpu_common.h"

namespace openacl::kernels::cpu {
namespace {

// A band's two buffers (the expanded rows its windows read, the depthwise
// output) stay within this many bytes: a third of a Zen 4's 1 MiB L2, the
// rest for X's and Y's rows, the weights and what the next band brings in.
constexpr int64_t kBandBytes = 384 << 10;

// Rows per thread below which the parts run apart, each over the whole
// tensor: a thread's run of rows then expands its first window rows twice
// (two rows at stride 1) and its bands are few. Apart, though, a block is
// three parallel regions, and the expanded tensor goes through L2 whole:
// at 16 (MobileNetV2 at batch 1 on two threads ran its 28x28 and 14x14
// blocks apart) those blocks scaled 1.0-1.3x from one thread to two; at 7
// (runs of 7-14 rows) two threads took the model 1.41-1.52 -> 1.37-1.38 ms
// on a quiet Zen 5 host and 1.97-1.99 -> 1.59-1.67 on a busy one, one
// thread the same or faster (`openacl-run`, alternating). 3 was no better.
constexpr int64_t kMinRowsPerThread = 7;

}  // namespace

std::shared_ptr<const InvertedResidual> InvertedResidual::make(std::shared_ptr<const Conv1x1> expand,
                                                               std::shared_ptr<const ConvDepthwise> dw,
                                                               std::shared_ptr<const Conv1x1> project, int64_t N) {
  if (!dw || !project || N <= 0) return nullptr;
  const int64_t C = dw->channels(), H = dw->in_height(), W = dw->in_width();
  const int64_t OH = dw->out_height(), OW = dw->out_width(), L = dw->lanes();
  if (expand && (expand->out_channels() != C || expand->pixels() != H * W || expand->y_block() != L)) return nullptr;
  if (project->in_channels() != C || project->x_block() != L || project->pixels() != OH * OW) return nullptr;
  std::shared_ptr<InvertedResidual> k(new InvertedResidual());
  k->N_ = N, k->H_ = H, k->W_ = W, k->OH_ = OH, k->OW_ = OW, k->L_ = L, k->Cmb_ = (C + L - 1) / L;
  const int64_t cx = expand ? expand->in_channels() : C, xb = expand ? expand->x_block() : L;
  const int64_t yb = project->y_block();
  k->ximg_ = (cx + xb - 1) / xb * xb * H * W;
  k->yimg_ = (project->out_channels() + yb - 1) / yb * yb * OH * OW;
  // Rows per band: what the buffers hold within kBandBytes (one at least).
  const int64_t in_row = expand ? k->Cmb_ * L * W : 0, out_row = k->Cmb_ * L * OW;
  const int64_t stride_rows = OH > 1 ? (H + OH - 1) / OH : 1;  // input rows per output row, about
  const int64_t per_row = static_cast<int64_t>(sizeof(float)) * (in_row * stride_rows + out_row);
  k->rows_ = std::clamp<int64_t>(kBandBytes / std::max<int64_t>(1, per_row), 1, OH);
  for (int64_t o0 = 0; o0 < OH; ++o0)
    k->e_rows_ = std::max(k->e_rows_, dw->last_in_row(std::min(OH, o0 + k->rows_) - 1) - dw->first_in_row(o0) + 1);
  k->expand_ = std::move(expand);
  k->dw_ = std::move(dw);
  k->project_ = std::move(project);
  return k;
}

float* fused_conv_buffer(int slot, size_t bytes) {
  thread_local PageBuffer buf[2];
  thread_local size_t cap[2] = {0, 0};
  if (cap[slot] < bytes) {
    buf[slot] = alloc_pages(bytes);
    cap[slot] = buf[slot] ? bytes : 0;
  }
  return static_cast<float*>(buf[slot].get());
}

bool InvertedResidual::run(const float* x, float* y, const float* residual) const {
  const int64_t rows = N_ * OH_;
  const int64_t threads = compute_threads();
  if (rows < kMinRowsPerThread * threads) {
    // Too few rows to share: each part over the whole tensor, as apart.
    const size_t mid_floats = static_cast<size_t>(N_ * Cmb_ * L_);
    float* e = expand_ ? fused_conv_buffer(0, mid_floats * static_cast<size_t>(H_ * W_) * sizeof(float)) : nullptr;
    float* d = fused_conv_buffer(1, mid_floats * static_cast<size_t>(OH_ * OW_) * sizeof(float));
    if ((expand_ && !e) || !d) return false;
    if (expand_) expand_->run(x, e, nullptr);
    dw_->run(expand_ ? e : x, d, nullptr);
    project_->run(d, y, residual);
    return true;
  }
  const int64_t e_floats = expand_ ? Cmb_ * L_ * e_rows_ * W_ : 0;
  const int64_t d_floats = Cmb_ * L_ * rows_ * OW_;
  // One contiguous run of rows per thread (more would expand more window
  // rows twice).
  std::atomic<bool> ok{true};
  parallel_for(rows, (rows + threads - 1) / threads, [&](int64_t lo, int64_t hi) {
    float* e = fused_conv_buffer(0, static_cast<size_t>(e_floats + d_floats) * sizeof(float));
    if (!e) {
      ok = false;
      return;
    }
    for (int64_t i = lo; i < hi;) {
      const int64_t n = i / OH_, oa = i % OH_, ob = std::min(OH_, oa + (hi - i));
      run_rows(x + n * ximg_, y + n * yimg_, residual ? residual + n * yimg_ : nullptr, oa, ob, e, e + e_floats);
      i += ob - oa;
    }
  });
  return ok;
}

void InvertedResidual::run_rows(const float* x, float* y, const float* r, int64_t oa, int64_t ob, float* e,
                                float* d) const {
  const int64_t xb = expand_ ? expand_->x_block() : L_, yb = project_->y_block();
  const int64_t e_plane = e_rows_ * W_ * L_, d_plane = rows_ * OW_ * L_, row = W_ * L_;
  int64_t e0 = 0, e1 = 0;  // the input rows expanded into e: [e0, e1)
  for (int64_t o0 = oa; o0 < ob; o0 += rows_) {
    const int64_t o1 = std::min(ob, o0 + rows_);
    const float* dx = x;  // the depthwise's input rows, from row0 on
    int64_t row0 = 0, plane = H_ * row;
    if (expand_) {
      const int64_t a = dw_->first_in_row(o0), b = dw_->last_in_row(o1 - 1) + 1;
      if (a >= e0 && a < e1) {  // the previous band's last rows: move them up
        if (a > e0)
          for (int64_t cb = 0; cb < Cmb_; ++cb)
            std::memmove(e + cb * e_plane, e + cb * e_plane + (a - e0) * row,
                         static_cast<size_t>((e1 - a) * row) * sizeof(float));
      } else {
        e1 = a;
      }
      e0 = a;
      if (b > e1)
        expand_->run_span(x + e1 * W_ * xb, H_ * W_ * xb, e + (e1 - e0) * row, e_plane, nullptr, (b - e1) * W_);
      e1 = b;
      dx = e, row0 = e0, plane = e_plane;
    }
    for (int64_t cb = 0; cb < Cmb_; ++cb) dw_->run_rows(dx + cb * plane, row0, d + cb * d_plane, nullptr, cb, o0, o1);
    const int64_t yoff = o0 * OW_ * yb;
    project_->run_span(d, d_plane, y + yoff, OH_ * OW_ * yb, r ? r + yoff : nullptr, (o1 - o0) * OW_);
  }
}

}  // namespace openacl::kernels::cpu
