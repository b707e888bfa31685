// wisp::Sampler: logits in, one token id out, through llama.cpp's default chain (common_sampler
// with its default sampler list, minus the filters wisp does not have yet: DRY, typical-p, XTC,
// top-n-sigma):
//
//   logit bias -> penalties -> top-k -> top-p -> min-p -> temperature -> draw
//
// so the same settings truncate the same candidates as llama.cpp. Temperature comes after the
// truncation: it reshapes the distribution among the survivors but does not change which tokens
// survive. With temperature <= 0 the chain is greedy: the argmax after the penalties (the
// truncation filters always keep the argmax, so they are skipped).
//
// Each Sampler owns its RNG (std::mt19937_64 seeded from params.seed) and its penalty history; no
// global state, so two samplers with the same seed, settings and logits return the same tokens.
// The bit-exact draws of llama.cpp's RNG are not reproduced: same distribution, different stream.
//
//   wisp::Sampler sampler({.temperature = 0.7f, .seed = 42});
//   wisp::TokenId next = sampler.sample(session.logits());
//   sampler.accept(next);
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace wisp {

struct Candidates;  // sample/candidates.h (internal)

// A bias added to one token's logit before anything else in the chain (OpenAI's and llama.cpp's
// logit_bias); -infinity bans the token.
struct LogitBias {
  std::int32_t token = 0;
  float bias = 0.0f;
};

// Settings of the chain. Defaults are llama.cpp's (common_params_sampling), so a user who moves
// between the two tools gets the same behaviour from the same flags.
struct SamplerParams {
  // Penalties over the last `penalty_last_n` accepted tokens (0 turns them off).
  std::size_t penalty_last_n = 64;
  float repeat_penalty = 1.0f;     // > 0; 1 = off. Divides positive logits, multiplies the others
  float frequency_penalty = 0.0f;  // subtracted once per occurrence
  float presence_penalty = 0.0f;   // subtracted once if the token occurred at all

  int top_k = 40;            // keep the k most likely; <= 0 = off
  float top_p = 0.95f;       // keep the smallest prefix whose probability mass reaches p; 1 = off
  float min_p = 0.05f;       // keep tokens with p >= min_p * p_max; 0 = off
  float temperature = 0.8f;  // <= 0 = greedy (argmax after the penalties)

  std::uint64_t seed = 0;  // seeds the sampler's own RNG; same seed + settings + logits = same tokens

  // Added to the logits first, before the penalties (a token listed twice gets both biases).
  std::vector<LogitBias> logit_bias = {};

  // Throws wisp::Error naming the setting and the accepted range when a value is out of range
  // (NaN, top_p outside (0, 1], min_p outside [0, 1], repeat_penalty <= 0, a logit bias that is
  // NaN or +infinity or names a negative token id).
  void validate() const;
};

class Sampler {
 public:
  // Throws wisp::Error from params.validate() on a bad setting.
  explicit Sampler(const SamplerParams& params = {});
  ~Sampler();
  Sampler(Sampler&&) noexcept;
  Sampler& operator=(Sampler&&) noexcept;

  // Runs the chain over `logits` (one per vocabulary entry) and returns the chosen token id.
  // Does not record the token: call accept() with the token actually used (llama.cpp's split, so
  // prompt tokens can be fed to the penalty history too). Throws wisp::Error on empty logits, a NaN
  // or +inf logit, all -inf logits (before or after the logit biases), or a history or logit-bias
  // token outside the vocabulary.
  std::int32_t sample(std::span<const float> logits);
  // The distribution sample() would draw from, as one probability per vocabulary entry (0 for the
  // filtered-out tokens; greedy puts all the mass on the argmax). Does not draw or record.
  void probabilities(std::span<const float> logits, std::vector<float>& probs);
  // Records a token in the penalty history (prompt tokens and generated ones alike).
  void accept(std::int32_t token);
  // Forgets the history and restarts the RNG from the seed: the next samples repeat the first ones.
  void reset();

  // The candidates the last sample() drew from, after every filter and the temperature, sorted
  // (the full vocabulary, unsorted, after a greedy sample). Its type is internal: for wisp's own
  // logprob reports and tests.
  const Candidates& last_candidates() const;
  const SamplerParams& params() const;

 private:
  void filter(std::span<const float> logits);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wisp
