#include "generate/prompt_lookup.h"

#include <algorithm>
#include <string>

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
  const std::size_t len = context.size();
  if (k == 0) return out;
  for (std::size_t n = std::min(max_ngram_, len > 0 ? len - 1 : 0); n >= min_ngram_ && n > 0; --n) {
    const std::span<const TokenId> suffix = context.subspan(len - n, n);
    // The most recent earlier occurrence: recent text is the likeliest to be continued the same
    // way. `start` runs over the beginnings of candidate matches, latest first; a match must leave
    // at least one token after it.
    for (std::size_t start = len - n; start-- > 0;) {
      if (!std::equal(suffix.begin(), suffix.end(), context.begin() + static_cast<std::ptrdiff_t>(start))) continue;
      const std::size_t from = start + n;
      const std::size_t take = std::min(k, len - from);
      out.tokens.assign(context.begin() + static_cast<std::ptrdiff_t>(from),
                        context.begin() + static_cast<std::ptrdiff_t>(from + take));
      return out;
    }
  }
  return out;
}

}  // namespace wisp
