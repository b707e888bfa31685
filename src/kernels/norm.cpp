#include "kernels/norm.h"

#include <cmath>

#include "kernels/vec_ops.h"

namespace wisp::kernels {

void rmsnorm(const float* x, const float* w, float* y, std::int64_t n, float eps) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const auto mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  if (w != nullptr) {
    vec::mul_scale_mul(x, scale, w, y, n);
  } else {
    vec::mul_scale(x, scale, y, n);
  }
}

void rmsnorm_rows(const float* x, std::int64_t x_stride, const float* w, float* y, std::int64_t y_stride,
                  std::int64_t n_rows, std::int64_t n, float eps) {
  for (std::int64_t r = 0; r < n_rows; ++r) rmsnorm(x + r * x_stride, w, y + r * y_stride, n, eps);
}

}  // namespace wisp::kernels
