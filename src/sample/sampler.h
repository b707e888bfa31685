// The sampler chain: logits in, one token id out. The order is llama.cpp's default chain
// (common_sampler with its default sampler list, minus the filters wisp does not have yet:
// DRY, typical-p, XTC, top-n-sigma):
//
//   penalties -> top-k -> top-p -> min-p -> temperature -> draw
//
// so the same settings truncate the same candidates as llama.cpp. Temperature comes after the
// truncation: it reshapes the distribution among the survivors but does not change which tokens
// survive. With temperature <= 0 the chain is greedy: the argmax after the penalties (the
// truncation filters always keep the argmax, so they are skipped).
//
// Each Sampler owns its RNG (std::mt19937_64 seeded from params.seed) and its penalty history; no
// global state, so two samplers with the same seed, settings and logits return the same tokens.
// The bit-exact draws of llama.cpp's RNG are not reproduced: same distribution, different stream.
#pragma once

#include <cstdint>
#include <random>
#include <span>

#include "sample/candidates.h"
#include "sample/penalties.h"
#include "sample/sampler_params.h"

namespace wisp {

class Sampler {
 public:
  // Throws wisp::Error from params.validate() on a bad setting.
  explicit Sampler(const SamplerParams& params);

  // Runs the chain over `logits` (one per vocabulary entry) and returns the chosen token id.
  // Does not record the token: call accept() with the token actually used (llama.cpp's split, so
  // prompt tokens can be fed to the penalty history too). Throws wisp::Error on empty logits, a NaN
  // or +inf logit, all -inf logits, or a history token outside the vocabulary.
  std::int32_t sample(std::span<const float> logits);
  // Records a token in the penalty history (prompt tokens and generated ones alike).
  void accept(std::int32_t token) { history_.push(token); }
  // Forgets the history and restarts the RNG from the seed: the next samples repeat the first ones.
  void reset();

  // The candidates the last sample() drew from, after every filter and the temperature, sorted
  // (the full vocabulary, unsorted, after a greedy sample). For tests and for logprob reports.
  const Candidates& last_candidates() const { return cand_; }
  const SamplerParams& params() const { return params_; }

 private:
  SamplerParams params_;
  std::mt19937_64 rng_;
  TokenHistory history_;
  Candidates cand_;  // reused across calls: one vocabulary-sized buffer per sampler
};

}  // namespace wisp
