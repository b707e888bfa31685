// Settings of the sampler chain. Defaults are llama.cpp's (common_params_sampling), so a user who
// moves between the two tools gets the same behaviour from the same flags.
#pragma once

#include <cstddef>
#include <cstdint>

namespace wisp {

struct SamplerParams {
  // Penalties over the last `penalty_last_n` accepted tokens (0 turns them off).
  std::size_t penalty_last_n = 64;
  float repeat_penalty = 1.0f;     // > 0; 1 = off. Divides positive logits, multiplies the others
  float frequency_penalty = 0.0f;  // subtracted once per occurrence
  float presence_penalty = 0.0f;   // subtracted once if the token occurred at all

  int top_k = 40;        // keep the k most likely; <= 0 = off
  float top_p = 0.95f;   // keep the smallest prefix whose probability mass reaches p; 1 = off
  float min_p = 0.05f;   // keep tokens with p >= min_p * p_max; 0 = off
  float temperature = 0.8f;  // <= 0 = greedy (argmax after the penalties)

  std::uint64_t seed = 0;  // seeds the sampler's own RNG; same seed + settings + logits = same tokens

  // Throws wisp::Error naming the setting and the accepted range when a value is out of range
  // (NaN, top_p outside (0, 1], min_p outside [0, 1], repeat_penalty <= 0).
  void validate() const;
};

}  // namespace wisp
