// Draft-model drafting: a smaller (or more coarsely quantized) model with the target's vocabulary
// guesses the next tokens one at a time on a session of its own; the target verifies them all in
// one pass (generate/speculative.h).
//
// The draft session follows the target's sequence lazily: each proposal first cuts the draft cache
// back to the longest prefix it shares with the sequence (that drops the draft tokens the target
// rejected last round) and evaluates only what is new there.
#pragma once

#include <cstddef>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "generate/drafter.h"
#include "tokenizer/vocab.h"
#include "wisp/sampler.h"
#include "wisp/session.h"

namespace wisp {

// Throws wisp::Error naming `draft_name` unless the two vocabularies are the same list of token
// texts (a draft token id must mean the same text to the target).
void check_same_vocabulary(const Vocab& target, const Vocab& draft, const std::string& draft_name);

class DraftModelDrafter final : public Drafter {
 public:
  // `session`: options of the draft's own engine (context, threads). `sampling`: the target's
  // chain settings; the draft uses them without the penalties (its history would need rolling back
  // with every rejection, and the rejection rule is exact whatever distribution the draft uses).
  // Drafting stops early at a token the draft gives probability below `p_min`.
  DraftModelDrafter(std::shared_ptr<const Model> draft, const SessionOptions& session, const SamplerParams& sampling,
                    float p_min);
  Draft propose(std::span<const TokenId> context, std::size_t k, bool greedy) override;
  void prefill(std::span<const TokenId> context) override;
  const char* name() const override { return "draft"; }

  // The draft's own sequence, for tests of its rollback.
  const Session& session() const { return session_; }
  const std::vector<TokenId>& held() const { return held_; }

 private:
  // Brings the draft session to `context` and returns the logits after its last token.
  std::span<const float> sync(std::span<const TokenId> context);

  Session session_;
  std::vector<TokenId> held_;  // exactly the tokens session_ holds
  Sampler sampler_;
  std::mt19937_64 rng_;
  float p_min_;
  std::vector<float> probs_;
};

}  // namespace wisp
