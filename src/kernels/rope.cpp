#include "kernels/rope.h"

#include <cmath>

namespace wisp::kernels {

void rope_table(const RopeParams& p, std::int64_t pos, std::vector<float>& cos_sin) {
  const int half = p.n_dims / 2;
  cos_sin.resize(static_cast<std::size_t>(2 * half));
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_dims));
  // Repeated multiplication rather than pow per pair: ggml's order, so angles agree to the bit.
  float theta = static_cast<float>(pos);
  for (int i = 0; i < half; ++i) {
    const float ff = p.freq_factors ? p.freq_factors[i] : 1.0f;
    const float angle = p.freq_scale * (theta / ff);
    cos_sin[2 * i] = std::cos(angle);
    cos_sin[2 * i + 1] = std::sin(angle);
    theta *= theta_scale;
  }
}

void rope_apply(const RopeParams& p, const std::vector<float>& cos_sin, float* x, std::int64_t n_heads,
                std::int64_t head_dim) {
  const int half = p.n_dims / 2;
  // Normal pairs neighbours (2i, 2i+1); neox pairs the two halves (i, i + n_dims/2).
  const int stride = p.style == RopeStyle::kNormal ? 2 : 1;
  const int offset = p.style == RopeStyle::kNormal ? 1 : half;
  for (std::int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int i = 0; i < half; ++i) {
      const float c = cos_sin[2 * i];
      const float s = cos_sin[2 * i + 1];
      float* a = v + i * stride;
      const float x0 = a[0];
      const float x1 = a[offset];
      a[0] = x0 * c - x1 * s;
      a[offset] = x0 * s + x1 * c;
    }
  }
}

void rope(const RopeParams& p, std::int64_t pos, float* x, std::int64_t n_heads, std::int64_t head_dim) {
  std::vector<float> table;
  rope_table(p, pos, table);
  rope_apply(p, table, x, n_heads, head_dim);
}

}  // namespace wisp::kernels
