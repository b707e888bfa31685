// Prompt-lookup drafting: the text so far often repeats itself (a rewrite or summary quotes its
// passage, an edit copies most of the code), so the tokens that followed the last earlier
// occurrence of the sequence's final n tokens are a free guess at what comes next. No model: the
// draft is deterministic, and when nothing matches it proposes nothing (a plain decode step).
#pragma once

#include <cstddef>

#include "generate/drafter.h"

namespace wisp {

class PromptLookupDrafter final : public Drafter {
 public:
  // Matches the final max_ngram tokens first, then shorter suffixes down to min_ngram
  // (1 <= min_ngram <= max_ngram). Throws wisp::Error otherwise.
  PromptLookupDrafter(std::size_t max_ngram, std::size_t min_ngram);
  Draft propose(std::span<const TokenId> context, std::size_t k, bool greedy) override;
  const char* name() const override { return "lookup"; }

 private:
  std::size_t max_ngram_;
  std::size_t min_ngram_;
};

}  // namespace wisp
