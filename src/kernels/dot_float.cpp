// Scalar dots of float weight rows (F32, F16, BF16) with activations in the same format.
// Products are formed in float and summed in double, as ggml's scalar vec_dot_f32/f16/bf16 do.
#include <cstdint>

#include "formats/half.h"
#include "kernels/dot.h"

namespace wisp::kernels::scalar {

float dot_f32(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * y[i]);
  return static_cast<float>(sum);
}

float dot_f16(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const std::uint16_t*>(a);
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(f16_to_f32(x[i]) * f16_to_f32(y[i]));
  return static_cast<float>(sum);
}

float dot_bf16(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const std::uint16_t*>(a);
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(bf16_to_f32(x[i]) * bf16_to_f32(y[i]));
  return static_cast<float>(sum);
}

}  // namespace wisp::kernels::scalar
