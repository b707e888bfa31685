// Rotary position embedding, as ggml_rope_ext computes it:
//   theta_i = pos * base^(-2i/n_dims) (by repeated float multiplication, as ggml does),
//   divided by freq_factors[i] if given, times freq_scale (linear scaling);
//   with YaRN (ext_factor != 0) the scaled and unscaled angles are blended by a ramp over the
//   pairs between corr_dims[0] and corr_dims[1], and cos/sin grow by 1 + 0.1 ln(1 / freq_scale);
//   cos and sin are multiplied by attn_factor (LongRoPE's and YaRN's magnitude correction).
// Two pairings of the rotated values:
//   normal (llama):  (x[2i], x[2i+1])
//   neox (qwen2, gemma3, ...): (x[i], x[i + n_dims/2])
// Only the first n_dims values of each head rotate; the rest pass through.
#pragma once

#include <cstdint>
#include <vector>

namespace wisp::kernels {

enum class RopeStyle : std::uint8_t { kNormal, kNeox };

struct RopeParams {
  int n_dims = 0;  // rotated values per head (even, <= head_dim)
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;  // 1 / linear scaling factor
  RopeStyle style = RopeStyle::kNormal;
  const float* freq_factors = nullptr;  // n_dims/2 divisors of theta (Llama 3 "rope_freqs"), or null
  float ext_factor = 0.0f;              // YaRN's extrapolation mix; 0 = no YaRN
  float attn_factor = 1.0f;             // multiplies cos and sin
  float corr_dims[2] = {0.0f, 0.0f};    // YaRN's ramp, from rope_yarn_corr_dims()
};

// YaRN's correction range: the pairs whose wavelength fits n_ctx_orig beta_fast resp. beta_slow
// times, as ggml_rope_yarn_corr_dims computes it.
void rope_yarn_corr_dims(int n_dims, std::int64_t n_ctx_orig, float freq_base, float beta_fast, float beta_slow,
                         float dims[2]);

// The cos/sin table of one position: n_dims/2 (cos, sin) pairs.
void rope_table(const RopeParams& p, std::int64_t pos, std::vector<float>& cos_sin);

// Rotates n_heads heads of head_dim values (head h at x + h*head_dim) in place with a table from
// rope_table().
void rope_apply(const RopeParams& p, const std::vector<float>& cos_sin, float* x, std::int64_t n_heads,
                std::int64_t head_dim);

// Both steps for one token.
void rope(const RopeParams& p, std::int64_t pos, float* x, std::int64_t n_heads, std::int64_t head_dim);

}  // namespace wisp::kernels
