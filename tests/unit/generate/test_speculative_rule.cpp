// The rejection rule on small made-up distributions, where the output distribution is known in
// closed form: whatever q, the token that comes out must follow p (chi-square at alpha = 1e-3 on
// fixed seeds), and with q = p nothing is ever rejected.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sample/draw.h"
#include "sample/speculative_rule.h"
#include "spec_stats.h"
#include "wisp/error.h"

namespace wisp {
namespace {

std::int32_t draw_from(const std::vector<float>& q, std::mt19937_64& rng) {
  const double u = uniform01(rng);
  double cum = 0.0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    cum += q[i];
    if (u < cum) return static_cast<std::int32_t>(i);
  }
  return static_cast<std::int32_t>(q.size() - 1);
}

std::vector<std::size_t> run(const std::vector<float>& p, const std::vector<float>& q, bool deterministic,
                             std::int32_t fixed, AcceptRule rule, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::size_t> counts(p.size(), 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t d = deterministic ? fixed : draw_from(q, rng);
    const DraftVerdict v = rule(p, deterministic ? std::span<const float>() : std::span<const float>(q), d, rng);
    ++counts[static_cast<std::size_t>(v.token)];
  }
  return counts;
}

DraftVerdict accept_always(std::span<const float>, std::span<const float>, std::int32_t d, std::mt19937_64&) {
  return {true, d};
}

const std::vector<float> kP = {0.5f, 0.2f, 0.15f, 0.1f, 0.05f, 0.0f};
const std::vector<float> kQ = {0.1f, 0.3f, 0.1f, 0.2f, 0.2f, 0.1f};  // mass on a token p excludes, too

TEST(SpeculativeRule, OutputFollowsTheTargetForAnyDraft) {
  const auto counts = run(kP, kQ, false, 0, rejection_sample, 40000, 1);
  EXPECT_EQ(counts[5], 0u) << "a token the target excludes came out";
  const ChiSquare c = chi_square(counts, kP);
  EXPECT_LT(c.statistic, c.critical) << "df " << c.df;
}

TEST(SpeculativeRule, DeterministicDraftFollowsTheTarget) {
  for (std::int32_t d : {0, 3, 5}) {
    const auto counts = run(kP, {}, true, d, rejection_sample, 40000, 2 + static_cast<std::uint64_t>(d));
    const ChiSquare c = chi_square(counts, kP);
    EXPECT_LT(c.statistic, c.critical) << "draft token " << d;
  }
}

TEST(SpeculativeRule, AcceptAlwaysFailsTheSameTest) {
  const auto counts = run(kP, kQ, false, 0, accept_always, 40000, 1);
  const ChiSquare c = chi_square(counts, kP);
  EXPECT_GT(c.statistic, c.critical);
}

TEST(SpeculativeRule, IdenticalDistributionsNeverReject) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    const std::int32_t d = draw_from(kQ, rng);
    EXPECT_TRUE(rejection_sample(kQ, kQ, d, rng).accepted);
  }
}

TEST(SpeculativeRule, GreedyTargetKeepsOnlyItsArgmax) {
  const std::vector<float> onehot = {0, 0, 1, 0};
  std::mt19937_64 rng(4);
  EXPECT_TRUE(rejection_sample(onehot, {}, 2, rng).accepted);
  const DraftVerdict v = rejection_sample(onehot, {}, 1, rng);
  EXPECT_FALSE(v.accepted);
  EXPECT_EQ(v.token, 2);
}

TEST(SpeculativeRule, RejectsMismatchedInput) {
  std::mt19937_64 rng(5);
  EXPECT_THROW(rejection_sample(kP, std::vector<float>{0.5f, 0.5f}, 0, rng), Error);
  EXPECT_THROW(rejection_sample(kP, {}, 6, rng), Error);
  EXPECT_THROW(rejection_sample(kP, {}, -1, rng), Error);
}

}  // namespace
}  // namespace wisp
