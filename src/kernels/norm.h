// RMSNorm as ggml computes it: the mean square is summed in double from float squares, then
// y = (x * (1 / sqrt(mean + eps))) * w, every step in float.
#pragma once

#include <cstdint>

namespace wisp::kernels {

// One row of n values; w may be null (no weight). y may alias x.
void rmsnorm(const float* x, const float* w, float* y, std::int64_t n, float eps);

// n_rows rows of n values at the given strides (in floats). y may alias x.
void rmsnorm_rows(const float* x, std::int64_t x_stride, const float* w, float* y, std::int64_t y_stride,
                  std::int64_t n_rows, std::int64_t n, float eps);

}  // namespace wisp::kernels
