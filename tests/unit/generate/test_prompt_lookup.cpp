// Prompt lookup: the continuation of the latest earlier occurrence of the longest matching suffix.
// Expected values are worked out by hand from the sequences below.
#include <gtest/gtest.h>

#include <vector>

#include "generate/prompt_lookup.h"
#include "wisp/error.h"

namespace wisp {
namespace {

std::vector<TokenId> propose(PromptLookupDrafter& d, const std::vector<TokenId>& ctx, std::size_t k) {
  return d.propose(ctx, k, true).tokens;
}

TEST(PromptLookup, ContinuesTheLatestEarlierOccurrence) {
  PromptLookupDrafter d(3, 1);
  // suffix [1 2] occurs at 0 (followed by 3 4) and at 4 (followed by 9 8); the latest wins.
  EXPECT_EQ(propose(d, {1, 2, 3, 4, 1, 2, 9, 8, 7, 1, 2}, 2), (std::vector<TokenId>{9, 8}));
  EXPECT_EQ(propose(d, {1, 2, 3, 4, 1, 2, 9, 8, 7, 1, 2}, 5), (std::vector<TokenId>{9, 8, 7, 1, 2}));
}

TEST(PromptLookup, PrefersTheLongestSuffix) {
  PromptLookupDrafter d(3, 1);
  // [5 1 2] matches at 0 (-> 3); the shorter [1 2] would match later at 5 (-> 6).
  EXPECT_EQ(propose(d, {5, 1, 2, 3, 9, 1, 2, 6, 5, 1, 2}, 1), (std::vector<TokenId>{3}));
}

TEST(PromptLookup, StopsAtTheEndOfTheText) {
  PromptLookupDrafter d(2, 1);
  // [7 7] matches at 1 and is followed only by the suffix's own last token.
  EXPECT_EQ(propose(d, {1, 7, 7, 7}, 4), (std::vector<TokenId>{7}));
}

TEST(PromptLookup, NothingWithoutAMatchOfTheShortestLength) {
  PromptLookupDrafter d(3, 2);
  EXPECT_TRUE(propose(d, {1, 2, 3, 4, 5, 3}, 4).empty());  // only the 1-gram [3] repeats
  EXPECT_TRUE(propose(d, {}, 4).empty());
  EXPECT_TRUE(propose(d, {4}, 4).empty());
  EXPECT_TRUE(propose(d, {1, 2, 1, 2}, 0).empty());
  PromptLookupDrafter d1(3, 1);
  EXPECT_EQ(propose(d1, {1, 2, 3, 4, 5, 3}, 4), (std::vector<TokenId>{4, 5, 3}));
}

TEST(PromptLookup, RejectsBadLengths) {
  EXPECT_THROW(PromptLookupDrafter(2, 3), Error);
  EXPECT_THROW(PromptLookupDrafter(2, 0), Error);
}

}  // namespace
}  // namespace wisp
