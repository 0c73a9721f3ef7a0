// One softmax row, shared by Softmax/LogSoftmax and the fused attention.
#pragma once

#include <cstdint>

namespace openacl::kernels::cpu {

// One contiguous float32 row of Softmax (log_mode false) or LogSoftmax,
// 8 lanes at a time (AVX2 where the CPU has it). y may be x. A row that is
// -inf everywhere comes out NaN: callers that can meet one check first.
void softmax_row_f32(const float* x, float* y, int64_t n, bool log_mode);

}  // namespace openacl::kernels::cpu
