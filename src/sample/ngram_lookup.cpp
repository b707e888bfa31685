#include "sample/ngram_lookup.h"

#include <algorithm>

namespace wisp {

std::vector<std::int32_t> ngram_lookup(std::span<const std::int32_t> context, std::size_t max_ngram,
                                       std::size_t min_ngram, std::size_t k) {
  const std::size_t len = context.size();
  if (k == 0 || min_ngram == 0) return {};
  for (std::size_t n = std::min(max_ngram, len > 0 ? len - 1 : 0); n >= min_ngram && n > 0; --n) {
    const std::span<const std::int32_t> suffix = context.subspan(len - n, n);
    // `start` runs over the beginnings of candidate matches, latest first; a match must leave at
    // least one token after it.
    for (std::size_t start = len - n; start-- > 0;) {
      if (!std::equal(suffix.begin(), suffix.end(), context.begin() + static_cast<std::ptrdiff_t>(start))) continue;
      const std::size_t from = start + n;
      const std::size_t take = std::min(k, len - from);
      return {context.begin() + static_cast<std::ptrdiff_t>(from),
              context.begin() + static_cast<std::ptrdiff_t>(from + take)};
    }
  }
  return {};
}

}  // namespace wisp
