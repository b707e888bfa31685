// Speculative decoding: a Drafter (prompt lookup or a draft model) guesses the next k tokens, the
// target evaluates the pending token and all k guesses in one forward pass (the weights are read
// once for the k + 1 tokens), keeps the longest prefix of guesses its own sampling agrees with plus
// one token of its own, and cuts the rejected rest out of its paged KV cache.
//
// Exactness. Greedy: a guess is kept only if it is the target's argmax at that position, and the
// default numerics are batch-invariant (include/wisp/engine.h), so the k + 1 logits rows of the
// verification pass are bit for bit those of k + 1 one-token passes: the output is the plain
// decode's, token for token. Sampling: the rejection rule (sample/speculative_rule.h) keeps each
// token distributed as the target's chain gives it. With the engine's `exact` numerics the float
// order depends on the batch, so this holds only up to rounding; the CLI refuses the combination.
//
// The Speculator remembers the tokens it has seen (prompts and generated), so a drafter can match
// or follow the whole sequence: each generate() call first cuts that record back to the tokens the
// session holds. (A session fed elsewhere than through it only makes the guesses worse, never the
// output different.)
#pragma once

#include <cstddef>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "generate/drafter.h"
#include "sample/speculative_rule.h"
#include "wisp/generate.h"
#include "wisp/sampler.h"
#include "wisp/session.h"
#include "wisp/tokenizer.h"

namespace wisp {

struct SpeculationOptions {
  std::size_t draft_max = 8;  // most guesses per verification pass (k's ceiling)
  // k starts here and adapts to the recent acceptance: +2 after a round whose guesses were all
  // kept, -1 after one with a rejection, within [1, draft_max].
  std::size_t draft_start = 4;
  AcceptRule rule = rejection_sample;  // tests substitute a wrong rule to see the checks catch it
  std::uint64_t seed = 0;              // the acceptance draws' own stream
};

struct SpeculationStats {
  std::size_t n_rounds = 0;    // verification passes that checked at least one guess
  std::size_t n_drafted = 0;   // guesses checked
  std::size_t n_accepted = 0;  // guesses kept
};

// The decision of one verification pass: `rows` holds the target's logits after the pending token
// and after each guess (draft.tokens.size() + 1 rows of n_vocab). Walks the guesses in order, each
// judged by `sampler` (greedy: kept if it is the argmax; sampling: by `rule` with `rng`), recording
// every decided token in the sampler's history, and stops at the first rejection (its replacement
// is the last token) or at an end-of-generation token; after the last guess the target's own next
// token follows. `scratch` is reused for the target's distribution.
struct RoundDecision {
  std::vector<TokenId> tokens;  // the kept guesses, then the target's token
  std::size_t kept = 0;         // how many of `tokens` are kept guesses
};
RoundDecision decide_round(std::span<const float> rows, std::size_t n_vocab, const Draft& draft,
                           const Tokenizer& tokenizer, Sampler& sampler, AcceptRule rule, std::mt19937_64& rng,
                           std::vector<float>& scratch);

class Speculator {
 public:
  // Throws wisp::Error for a null drafter or draft_max == 0.
  Speculator(std::unique_ptr<Drafter> drafter, const SpeculationOptions& options);

  // Starts a generation: `n_past` tokens are already in the session; `prompt` follows them.
  void begin(std::size_t n_past, std::span<const TokenId> prompt);
  // The target has evaluated the prompt: lets the drafter catch up (Drafter::prefill).
  void prefill() { drafter_->prefill(record_); }
  // Records the first token sampled from the prompt's logits (not yet evaluated).
  void push(TokenId token) { record_.push_back(token); }

  // One step: the pending token (the last recorded, not yet evaluated) and up to k guesses are
  // evaluated in one pass; returns the tokens decided, in order: the kept guesses and then one token
  // of the target's own (fewer when an end-of-generation token is kept early). The session ends
  // holding every returned token but the last, which becomes the pending one. `max_new` >= 1 bounds
  // the number returned; the session must have room for the pending token.
  std::vector<TokenId> round(Session& target, const Tokenizer& tokenizer, Sampler& sampler, std::size_t max_new);

  const SpeculationStats& stats() const { return stats_; }
  std::size_t current_k() const { return k_; }
  const Drafter& drafter() const { return *drafter_; }

 private:
  std::unique_ptr<Drafter> drafter_;
  SpeculationOptions options_;
  std::size_t k_;
  std::mt19937_64 rng_;
  std::vector<TokenId> record_;  // the session's tokens, then the pending one
  SpeculationStats stats_;
  std::vector<float> p_;
};

// generate() with `speculator` (what GenerationOptions::speculator selects; generate() has checked
// the prompt against the context): the same stop conditions, session contract and timings, and the
// speculation counts in the stats.
GenerationResult generate_speculative(Session& session, const Tokenizer& tokenizer, Sampler& sampler,
                                      std::span<const TokenId> prompt, const GenerationOptions& options,
                                      Speculator& speculator);

}  // namespace wisp
