// Repetition, frequency and presence penalties over the recently accepted tokens, with llama.cpp's
// semantics (llama_sampler_penalties): for a token seen c > 0 times in the last N,
//   logit = logit <= 0 ? logit * repeat_penalty : logit / repeat_penalty
//   logit -= c * frequency_penalty + presence_penalty
// Dividing a positive logit and multiplying a negative one both make the token less likely for a
// penalty > 1 (a plain division would make a negative logit *more* likely).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "sample/candidates.h"

namespace wisp {

// The last `capacity` accepted tokens, oldest first.
class TokenHistory {
 public:
  explicit TokenHistory(std::size_t capacity) : capacity_(capacity) {}
  void push(std::int32_t token);
  void clear() { tokens_.clear(); }
  const std::deque<std::int32_t>& tokens() const { return tokens_; }
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::deque<std::int32_t> tokens_;
};

struct PenaltyParams {
  float repeat = 1.0f;
  float frequency = 0.0f;
  float presence = 0.0f;
};

// Applies the penalties to `c`, which must be the full vocabulary in id order (not yet sorted or
// truncated: penalties come first in the chain). Throws wisp::Error if the history holds a token
// id outside the vocabulary (a model/sampler mismatch), or if `c` is already sorted.
void apply_penalties(Candidates& c, const TokenHistory& history, const PenaltyParams& p);

}  // namespace wisp
