// Each filter of the chain on its own: top-k keeps exactly k, top-p the smallest prefix reaching p,
// min-p the tokens above p * p_max, temperature sharpens/flattens (entropy), penalties move the
// right logits by the right amounts; plus the edge cases (ties, -inf, k > vocab, p = 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "sample/candidates.h"
#include "sample/filters.h"
#include "sample/penalties.h"
#include "wisp/error.h"

namespace wisp {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

Candidates load(const std::vector<float>& logits) {
  Candidates c;
  c.assign(logits);
  return c;
}

std::vector<int> ids(const Candidates& c) {
  std::vector<int> out;
  for (const Candidate& x : c.items) out.push_back(x.id);
  return out;
}

std::vector<float> random_logits(std::mt19937_64& rng, std::size_t n, float scale = 3.0f) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> l(n);
  for (float& x : l) x = dist(rng);
  return l;
}

double entropy(const std::vector<float>& p) {
  double h = 0.0;
  for (float x : p) {
    if (x > 0.0f) h -= x * std::log(static_cast<double>(x));
  }
  return h;
}

TEST(Candidates, AssignKeepsIdOrderAndRejectsGarbage) {
  const Candidates c = load({0.5f, -1.0f, 2.0f});
  EXPECT_FALSE(c.sorted);
  EXPECT_EQ(ids(c), (std::vector<int>{0, 1, 2}));
  Candidates d;
  EXPECT_THROW(d.assign(std::vector<float>{}), Error);
  EXPECT_THROW(d.assign(std::vector<float>{1.0f, std::nanf("")}), Error);
  EXPECT_THROW(d.assign(std::vector<float>{1.0f, std::numeric_limits<float>::infinity()}), Error);
  EXPECT_THROW(d.assign(std::vector<float>{kNegInf, kNegInf}), Error);
}

TEST(Candidates, SortIsDescendingWithLowerIdFirstOnTies) {
  Candidates c = load({1.0f, 3.0f, 1.0f, 3.0f, kNegInf});
  c.sort();
  EXPECT_EQ(ids(c), (std::vector<int>{1, 3, 0, 2, 4}));
}

TEST(Softmax, MatchesTheDefinitionAndMapsNegInfToZero) {
  const Candidates c = load({1.0f, 2.0f, kNegInf, 0.0f});
  const std::vector<float> p = softmax(c);
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(0.0);
  EXPECT_NEAR(p[0], std::exp(1.0) / z, 1e-6);
  EXPECT_NEAR(p[1], std::exp(2.0) / z, 1e-6);
  EXPECT_EQ(p[2], 0.0f);
  EXPECT_NEAR(p[3], 1.0 / z, 1e-6);
}

TEST(TopK, KeepsExactlyTheKHighest) {
  std::mt19937_64 rng(11);
  for (int k : {1, 2, 5, 40, 99}) {
    const std::vector<float> l = random_logits(rng, 100);
    Candidates c = load(l);
    top_k(c, k);
    ASSERT_EQ(c.size(), static_cast<std::size_t>(k));
    std::vector<float> sorted = l;
    std::sort(sorted.begin(), sorted.end(), std::greater<>());
    for (const Candidate& x : c.items) EXPECT_GE(x.logit, sorted[k - 1]);
    EXPECT_TRUE(std::is_sorted(c.items.begin(), c.items.end(),
                               [](const Candidate& a, const Candidate& b) { return a.logit > b.logit; }));
  }
}

TEST(TopK, TiesAtTheCutGoToLowerIds) {
  Candidates c = load({1.0f, 1.0f, 1.0f, 1.0f, 1.0f});
  top_k(c, 3);
  EXPECT_EQ(ids(c), (std::vector<int>{0, 1, 2}));
}

TEST(TopK, KAtLeastVocabOrNonPositiveIsANoOp) {
  for (int k : {0, -1, 5, 6, 1000}) {
    Candidates c = load({0.1f, 0.2f, 0.3f, 0.4f, 0.5f});
    top_k(c, k);
    EXPECT_EQ(c.size(), 5u) << "k = " << k;
  }
}

TEST(TopP, KeepsTheSmallestPrefixReachingP) {
  // Probabilities 0.5, 0.3, 0.15, 0.05 (logits are their logs).
  const std::vector<float> l = {std::log(0.15f), std::log(0.5f), std::log(0.05f), std::log(0.3f)};
  struct Case {
    float p;
    std::vector<int> kept;
  };
  for (const Case& tc :
       {Case{0.4f, {1}}, Case{0.49f, {1}}, Case{0.75f, {1, 3}}, Case{0.85f, {1, 3, 0}}, Case{0.96f, {1, 3, 0, 2}}}) {
    Candidates c = load(l);
    top_p(c, tc.p);
    EXPECT_EQ(ids(c), tc.kept) << "p = " << tc.p;
  }
}

TEST(TopP, MinimalityOnRandomLogits) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<float> l = random_logits(rng, 50);
    const float p = 0.05f + 0.9f * static_cast<float>(trial) / 200.0f;
    Candidates all = load(l);
    all.sort();
    const std::vector<float> probs = softmax(all);
    Candidates c = load(l);
    top_p(c, p);
    const std::size_t n = c.size();
    double kept = 0.0, without_last = 0.0;
    for (std::size_t i = 0; i < n; ++i) kept += probs[i];
    without_last = kept - probs[n - 1];
    EXPECT_GE(kept, p - 1e-6);          // reaches p
    EXPECT_LT(without_last, p + 1e-6);  // and one fewer would not
  }
}

TEST(TopP, POfOneKeepsEverything) {
  Candidates c = load({0.0f, kNegInf, 5.0f, -30.0f});
  top_p(c, 1.0f);
  EXPECT_EQ(c.size(), 4u);
}

TEST(MinP, ThresholdIsRelativeToTheMostLikely) {
  std::mt19937_64 rng(9);
  for (float mp : {0.01f, 0.05f, 0.1f, 0.3f, 0.9f, 1.0f}) {
    const std::vector<float> l = random_logits(rng, 200, 2.0f);
    Candidates all = load(l);
    const std::vector<float> probs = softmax(all);  // id order
    const float pmax = *std::max_element(probs.begin(), probs.end());
    Candidates c = load(l);
    min_p(c, mp);
    std::vector<int> kept = ids(c);
    std::sort(kept.begin(), kept.end());
    std::vector<int> expected;
    for (int i = 0; i < 200; ++i) {
      // Exclude values within rounding of the threshold from the comparison.
      if (std::fabs(probs[i] - mp * pmax) < 1e-6f * pmax) continue;
      if (probs[i] >= mp * pmax) expected.push_back(i);
    }
    std::vector<int> kept_clear;
    for (int i : kept) {
      if (std::fabs(probs[i] - mp * pmax) >= 1e-6f * pmax) kept_clear.push_back(i);
    }
    EXPECT_EQ(kept_clear, expected) << "min_p = " << mp;
  }
}

TEST(MinP, ExactCase) {
  // p = 0.5, 0.3, 0.15, 0.05; min_p 0.3 -> threshold 0.15: keeps 0.5, 0.3, 0.15.
  Candidates c = load({std::log(0.5f), std::log(0.05f), std::log(0.3f), std::log(0.15f)});
  min_p(c, 0.29f);
  EXPECT_EQ(ids(c), (std::vector<int>{0, 2, 3}));
  Candidates off = load({1.0f, 2.0f});
  min_p(off, 0.0f);
  EXPECT_EQ(off.size(), 2u);
}

TEST(Temperature, SharpensBelowOneAndFlattensAboveByEntropy) {
  std::mt19937_64 rng(1);
  const std::vector<float> l = random_logits(rng, 64, 1.5f);
  auto h = [&](float t) {
    Candidates c = load(l);
    apply_temperature(c, t);
    return entropy(softmax(c));
  };
  const double h_cold = h(0.5f), h_one = h(1.0f), h_hot = h(2.0f);
  EXPECT_LT(h_cold, h_one);
  EXPECT_LT(h_one, h_hot);
  EXPECT_LE(h_hot, std::log(64.0) + 1e-9);
  // Divides logits exactly.
  Candidates c = load({1.0f, -2.0f});
  apply_temperature(c, 0.5f);
  EXPECT_EQ(c.items[0].logit, 2.0f);
  EXPECT_EQ(c.items[1].logit, -4.0f);
}

TEST(Filters, AllEqualLogitsKeepEverythingUnderPAndMinP) {
  Candidates c = load(std::vector<float>(10, 0.25f));
  min_p(c, 0.9f);
  EXPECT_EQ(c.size(), 10u);  // every token is as likely as the best
  Candidates d = load(std::vector<float>(10, 0.25f));
  top_p(d, 0.45f);
  EXPECT_EQ(d.size(), 5u);  // 5 * 0.1 reaches 0.45 only at the 5th
}

TEST(Filters, NegInfLogitsAreCutFirst) {
  Candidates c = load({kNegInf, 1.0f, kNegInf, 0.0f});
  top_p(c, 0.999f);
  EXPECT_EQ(ids(c), (std::vector<int>{1, 3}));
  Candidates d = load({kNegInf, 1.0f, kNegInf, 0.0f});
  min_p(d, 0.001f);
  EXPECT_EQ(ids(d), (std::vector<int>{1, 3}));
}

TEST(Penalties, ChangeTheRightLogitsByTheRightAmounts) {
  Candidates c = load({2.0f, -2.0f, 1.0f, 0.0f, 3.0f});
  TokenHistory h(8);
  for (int t : {0, 1, 1, 3}) h.push(t);
  apply_penalties(c, h, PenaltyParams{2.0f, 0.5f, 0.25f});
  EXPECT_FLOAT_EQ(c.items[0].logit, 2.0f / 2.0f - 1 * 0.5f - 0.25f);   // positive: divided
  EXPECT_FLOAT_EQ(c.items[1].logit, -2.0f * 2.0f - 2 * 0.5f - 0.25f);  // negative: multiplied, seen twice
  EXPECT_FLOAT_EQ(c.items[2].logit, 1.0f);                             // never seen: untouched
  EXPECT_FLOAT_EQ(c.items[3].logit, 0.0f * 2.0f - 0.5f - 0.25f);       // zero counts as "not positive"
  EXPECT_FLOAT_EQ(c.items[4].logit, 3.0f);
}

TEST(Penalties, OnlyTheLastNTokensCount) {
  TokenHistory h(2);
  for (int t : {0, 1, 2}) h.push(t);  // 0 falls out of the window
  Candidates c = load({1.0f, 1.0f, 1.0f});
  apply_penalties(c, h, PenaltyParams{2.0f, 0.0f, 0.0f});
  EXPECT_FLOAT_EQ(c.items[0].logit, 1.0f);
  EXPECT_FLOAT_EQ(c.items[1].logit, 0.5f);
  EXPECT_FLOAT_EQ(c.items[2].logit, 0.5f);
  TokenHistory off(0);
  off.push(1);
  EXPECT_TRUE(off.tokens().empty());
}

TEST(Penalties, TokenOutsideTheVocabularyIsAnError) {
  TokenHistory h(4);
  h.push(7);
  Candidates c = load({1.0f, 2.0f});
  EXPECT_THROW(apply_penalties(c, h, PenaltyParams{1.1f, 0.0f, 0.0f}), Error);
}

}  // namespace
}  // namespace wisp
