// The search behind prompt-lookup drafting: the tokens that followed the most recent earlier
// occurrence of the sequence's final n tokens. A pure function on token ids, kept below the engine
// so that both the single-sequence Speculator (generate/prompt_lookup.h) and the batched scheduler
// (engine/scheduler.h) draft with the same rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace wisp {

// Up to `k` tokens to follow `context`: tries the final max_ngram tokens first, then shorter
// suffixes down to min_ngram; the latest earlier match wins (recent text is the likeliest to be
// continued the same way). Empty when nothing matches. Expects 1 <= min_ngram <= max_ngram.
std::vector<std::int32_t> ngram_lookup(std::span<const std::int32_t> context, std::size_t max_ngram,
                                       std::size_t min_ngram, std::size_t k);

}  // namespace wisp
