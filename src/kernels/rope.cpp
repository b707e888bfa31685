#include "kernels/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace wisp::kernels {

namespace {

float yarn_corr_dim(int n_dims, std::int64_t n_ctx_orig, float n_rot, float base) {
  return static_cast<float>(n_dims) *
         std::log(static_cast<float>(n_ctx_orig) / (n_rot * 2 * std::numbers::pi_v<float>)) / (2 * std::log(base));
}

}  // namespace

void rope_yarn_corr_dims(int n_dims, std::int64_t n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                         float dims[2]) {
  const float start = std::floor(yarn_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
  const float end = std::ceil(yarn_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
  dims[0] = std::max(0.0f, start);
  dims[1] = std::min(static_cast<float>(n_dims - 1), end);
}

void rope_table(const RopeParams& p, std::int64_t pos, std::vector<float>& cos_sin) {
  const int half = p.n_dims / 2;
  cos_sin.resize(static_cast<std::size_t>(2 * half));
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_dims));
  // Repeated multiplication rather than pow per pair: ggml's order, so angles agree to the bit.
  float theta = static_cast<float>(pos);
  float mscale = p.attn_factor;
  if (p.ext_factor != 0.0f) mscale *= 1.0f + 0.1f * std::log(1.0f / p.freq_scale);
  for (int i = 0; i < half; ++i) {
    const float ff = p.freq_factors ? p.freq_factors[i] : 1.0f;
    const float extrap = theta / ff;
    float angle = p.freq_scale * extrap;
    if (p.ext_factor != 0.0f) {
      const float y = (static_cast<float>(i) - p.corr_dims[0]) / std::max(0.001f, p.corr_dims[1] - p.corr_dims[0]);
      const float mix = (1.0f - std::min(1.0f, std::max(0.0f, y))) * p.ext_factor;
      angle = angle * (1 - mix) + extrap * mix;
    }
    // cos * 1.0f is cos: without a magnitude correction the table is the plain one, to the bit.
    cos_sin[2 * i] = std::cos(angle) * mscale;
    cos_sin[2 * i + 1] = std::sin(angle) * mscale;
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
