#include "generate/prompt_lookup.h"

#include <string>

#include "sample/ngram_lookup.h"
#include "wisp/error.h"

namespace wisp {

PromptLookupDrafter::PromptLookupDrafter(std::size_t max_ngram, std::size_t min_ngram)
    : max_ngram_(max_ngram), min_ngram_(min_ngram) {
  if (min_ngram < 1 || min_ngram > max_ngram) {
    throw Error("prompt lookup: the n-gram lengths must satisfy 1 <= min (" + std::to_string(min_ngram) + ") <= max (" +
                std::to_string(max_ngram) + ")");
  }
}

Draft PromptLookupDrafter::propose(std::span<const TokenId> context, std::size_t k, bool /*greedy*/) {
  Draft out;
  out.tokens = ngram_lookup(context, max_ngram_, min_ngram_, k);
  return out;
}

}  // namespace wisp
