// A source of draft tokens for speculative decoding (generate/speculative.h): given the sequence
// so far, it guesses the next few tokens; the target model then checks all of them in one pass.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace wisp {

struct Draft {
  std::vector<TokenId> tokens;
  // The distribution each token was drawn from (n_vocab probabilities per token), for the
  // rejection rule; empty when the drafter is deterministic (q = one-hot at the token).
  std::vector<std::vector<float>> probs;
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Up to `k` tokens (k >= 1) to follow `context` (every token of the sequence, the last one
  // included even though the target has not evaluated it yet); fewer or none when it has no guess.
  // `greedy`: the target decodes greedily, so only the most likely continuation matters.
  virtual Draft propose(std::span<const TokenId> context, std::size_t k, bool greedy) = 0;
  // The target has just evaluated `context` (a prompt): a drafter with a model of its own can
  // bring its cache up to date now, inside the prompt's time, instead of in the first proposal.
  virtual void prefill(std::span<const TokenId> context) {}
  virtual const char* name() const = 0;
};

}  // namespace wisp
