// Rotary position embedding, as ggml_rope_ext computes it without YaRN:
//   theta_i = pos * base^(-2i/n_dims) (by repeated float multiplication, as ggml does),
//   divided by freq_factors[i] if given, times freq_scale (linear scaling).
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
  int n_dims = 0;            // rotated values per head (even, <= head_dim)
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;   // 1 / linear scaling factor
  RopeStyle style = RopeStyle::kNormal;
  const float* freq_factors = nullptr;  // n_dims/2 divisors of theta (Llama 3 "rope_freqs"), or null
};

// The cos/sin table of one position: n_dims/2 (cos, sin) pairs.
void rope_table(const RopeParams& p, std::int64_t pos, std::vector<float>& cos_sin);

// Rotates n_heads heads of head_dim values (head h at x + h*head_dim) in place with a table from
// rope_table().
void rope_apply(const RopeParams& p, const std::vector<float>& cos_sin, float* x, std::int64_t n_heads,
                std::int64_t head_dim);

// Both steps for one token.
void rope(const RopeParams& p, std::int64_t pos, float* x, std::int64_t n_heads, std::int64_t head_dim);

}  // namespace wisp::kernels
