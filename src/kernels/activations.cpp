#include "kernels/activations.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "formats/half.h"
#include "kernels/ggml_order.h"

namespace wisp::kernels {

float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoef = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

void silu_mul(const float* gate, const float* up, float* out, std::int64_t n) {
  // ggml's AVX-512 swiglu: its vector exp for whole groups of 16, libm's for the tail.
  const std::int64_t simd = n - n % 16;
  for (std::int64_t i = 0; i < simd; ++i) out[i] = ggml::silu(gate[i]) * up[i];
  for (std::int64_t i = simd; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void gelu_tanh_mul(const float* gate, const float* up, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    float act;
    if (g <= -10.0f) {
      act = 0.0f;
    } else if (g >= 10.0f) {
      act = g;
    } else {
      // The table entry for half(g): gelu of the half value, rounded to half.
      act = f16_to_f32(f32_to_f16(gelu_tanh(f16_to_f32(f32_to_f16(g)))));
    }
    out[i] = act * up[i];
  }
}

void softcap(float* x, std::int64_t n, float cap) {
  const float inv = 1.0f / cap;
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i] * inv) * cap;
}

void scale(float* x, std::int64_t n, float s) {
  for (std::int64_t i = 0; i < n; ++i) x[i] *= s;
}

void add(const float* x, float* y, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] += x[i];
}

void softmax(float* x, std::int64_t n) {
  float max = -std::numeric_limits<float>::infinity();
  for (std::int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  // ggml_vec_soft_max_f32 (AVX-512): groups of 16 through the vector exp, each group summed by
  // the 16-lane reduction and added to a double; the tail through libm's expf.
  double sum = 0.0;
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int l = 0; l < 16; ++l) x[i + l] = ggml::expf(x[i + l] - max);
    sum += static_cast<double>(ggml::reduce16(x + i));
  }
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += static_cast<double>(x[i]);
  }
  const auto inv = static_cast<float>(1.0 / sum);
  for (std::int64_t k = 0; k < n; ++k) x[k] *= inv;
}

}  // namespace wisp::kernels
