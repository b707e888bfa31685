// The whole chain: determinism by seed, greedy = argmax, the seeded draw's empirical distribution
// against softmax probabilities, the chain order, parameter validation and edge cases.
#include "sample/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "sample/draw.h"
#include "wisp/error.h"

namespace wisp {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

SamplerParams plain(float temperature, std::uint64_t seed = 42) {
  SamplerParams p;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.temperature = temperature;
  p.seed = seed;
  return p;
}

std::vector<float> random_logits(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  std::vector<float> l(n);
  for (float& x : l) x = dist(rng);
  return l;
}

// Generates n tokens, feeding each back into the history and varying the logits per step.
std::vector<std::int32_t> run(Sampler& s, std::size_t n) {
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t t = s.sample(random_logits(100 + i, 500));
    s.accept(t);
    out.push_back(t);
  }
  return out;
}

TEST(Sampler, SameSeedSameTokens) {
  SamplerParams p;  // llama.cpp defaults: penalties off, top-k 40, top-p 0.95, min-p 0.05, temp 0.8
  p.seed = 1234;
  p.repeat_penalty = 1.1f;
  Sampler a(p), b(p);
  EXPECT_EQ(run(a, 200), run(b, 200));
}

TEST(Sampler, DifferentSeedsDiffer) {
  SamplerParams p = plain(1.0f, 1);
  SamplerParams q = plain(1.0f, 2);
  Sampler a(p), b(q);
  EXPECT_NE(run(a, 200), run(b, 200));
}

TEST(Sampler, ResetReplaysTheSequence) {
  Sampler s(plain(1.0f, 99));
  const auto first = run(s, 50);
  s.reset();
  EXPECT_EQ(run(s, 50), first);
}

TEST(Sampler, GreedyIsArgmax) {
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const std::vector<float> l = random_logits(seed, 1000);
    const auto best = static_cast<std::int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
    for (float t : {0.0f, -1.0f}) {
      Sampler s(plain(t, seed));
      EXPECT_EQ(s.sample(l), best);
    }
    SamplerParams with_filters;  // filters on, temperature 0: still the argmax
    with_filters.temperature = 0.0f;
    Sampler f(with_filters);
    EXPECT_EQ(f.sample(l), best);
  }
}

TEST(Sampler, GreedyTieGoesToTheLowerId) {
  Sampler s(plain(0.0f));
  EXPECT_EQ(s.sample(std::vector<float>{0.0f, 3.0f, 1.0f, 3.0f}), 1);
  EXPECT_EQ(s.sample(std::vector<float>(16, 0.5f)), 0);
}

TEST(Sampler, GreedyAppliesPenaltiesFirst) {
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  Sampler s(p);
  const std::vector<float> l = {1.0f, 1.5f, 0.0f};
  EXPECT_EQ(s.sample(l), 1);
  s.accept(1);  // 1.5 / 2 = 0.75 < 1.0
  EXPECT_EQ(s.sample(l), 0);
}

// Pearson chi-square of observed counts against expected probabilities.
double chi_square(const std::vector<int>& counts, const std::vector<double>& probs, int n) {
  double chi = 0.0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double e = probs[i] * n;
    if (e == 0.0) {
      EXPECT_EQ(counts[i], 0) << "token " << i << " has probability 0 but was drawn";
      continue;
    }
    chi += (counts[i] - e) * (counts[i] - e) / e;
  }
  return chi;
}

std::vector<double> softmax_ref(const std::vector<float>& l, double t) {
  double m = -INFINITY, z = 0.0;
  for (float x : l) m = std::max(m, static_cast<double>(x));
  std::vector<double> p(l.size());
  for (std::size_t i = 0; i < l.size(); ++i) z += p[i] = std::exp((l[i] - m) / t);
  for (double& x : p) x /= z;
  return p;
}

std::vector<int> histogram(Sampler& s, const std::vector<float>& l, int n) {
  std::vector<int> counts(l.size(), 0);
  for (int i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(s.sample(l))];
  return counts;
}

// 99.9th percentiles of chi-square: df 7 -> 24.3, df 3 -> 16.3. The seeds are fixed, so the test is
// deterministic; the bound only says the fixed outcome is a typical one for a correct sampler.
TEST(Sampler, DrawFollowsSoftmaxProbabilities) {
  const std::vector<float> l = {1.0f, 0.0f, -1.0f, 2.0f, 0.5f, -3.0f, 1.5f, 0.25f};
  const int n = 200000;
  Sampler s(plain(1.0f, 7));
  EXPECT_LT(chi_square(histogram(s, l, n), softmax_ref(l, 1.0), n), 24.3);
  Sampler cold(plain(0.7f, 8));
  EXPECT_LT(chi_square(histogram(cold, l, n), softmax_ref(l, 0.7), n), 24.3);
  Sampler hot(plain(1.8f, 9));
  EXPECT_LT(chi_square(histogram(hot, l, n), softmax_ref(l, 1.8), n), 24.3);
}

TEST(Sampler, DrawRenormalizesOverTheTopK) {
  const std::vector<float> l = {1.0f, 0.0f, -1.0f, 2.0f, 0.5f, -3.0f, 1.5f, 0.25f};
  SamplerParams p = plain(1.0f, 21);
  p.top_k = 4;  // keeps ids 3, 6, 0, 4
  Sampler s(p);
  const int n = 100000;
  const std::vector<int> counts = histogram(s, l, n);
  const std::vector<float> top = {l[3], l[6], l[0], l[4]};
  const std::vector<double> probs = softmax_ref(top, 1.0);
  const std::vector<int> top_counts = {counts[3], counts[6], counts[0], counts[4]};
  EXPECT_EQ(top_counts[0] + top_counts[1] + top_counts[2] + top_counts[3], n);
  EXPECT_LT(chi_square(top_counts, probs, n), 16.3);
}

TEST(Sampler, TemperatureAppliesAfterTruncation) {
  // llama.cpp order: min-p judges the untempered probabilities. p = 0.6, 0.3, 0.1 before temperature:
  // min_p 0.2 cuts token 2 (0.1 < 0.12) even though a hot temperature would have lifted it above.
  const std::vector<float> l = {std::log(0.6f), std::log(0.3f), std::log(0.1f)};
  SamplerParams p = plain(5.0f, 3);
  p.min_p = 0.2f;
  Sampler s(p);
  const std::vector<int> counts = histogram(s, l, 5000);
  EXPECT_EQ(counts[2], 0);
  EXPECT_GT(counts[1], 0);
}

TEST(Sampler, AllEqualLogitsDrawUniformly) {
  const std::vector<float> l(8, 1.25f);
  Sampler s(plain(1.0f, 5));
  const int n = 80000;
  EXPECT_LT(chi_square(histogram(s, l, n), std::vector<double>(8, 0.125), n), 24.3);
}

TEST(Sampler, NegInfLogitsAreNeverDrawn) {
  const std::vector<float> l = {kNegInf, 0.0f, kNegInf, 0.0f, kNegInf};
  Sampler s(plain(1.0f, 6));
  const std::vector<int> counts = histogram(s, l, 10000);
  EXPECT_EQ(counts[0] + counts[2] + counts[4], 0);
  EXPECT_GT(counts[1], 4000);
  EXPECT_GT(counts[3], 4000);
}

TEST(Sampler, EdgeCases) {
  SamplerParams p;
  p.top_k = 1000000;  // k > vocab
  p.top_p = 1.0f;
  Sampler s(p);
  EXPECT_EQ(s.sample(std::vector<float>{0.3f}), 0);  // a one-token vocabulary
  EXPECT_THROW(s.sample(std::vector<float>{}), Error);
  EXPECT_THROW(s.sample(std::vector<float>{kNegInf, kNegInf}), Error);
  EXPECT_THROW(s.sample(std::vector<float>{0.0f, std::nanf("")}), Error);
  s.accept(5);
  SamplerParams pen = p;
  pen.repeat_penalty = 1.3f;
  Sampler t(pen);
  t.accept(5);
  EXPECT_THROW(t.sample(std::vector<float>{0.0f, 1.0f}), Error);  // history token outside vocabulary
}

TEST(Sampler, LastCandidatesShowTheFilteredSet) {
  SamplerParams p = plain(1.0f);
  p.top_k = 3;
  Sampler s(p);
  (void)s.sample(random_logits(4, 100));
  EXPECT_EQ(s.last_candidates().size(), 3u);
  EXPECT_TRUE(s.last_candidates().sorted);
}

TEST(SamplerParams, RejectsOutOfRangeSettings) {
  auto bad = [](auto mutate) {
    SamplerParams p;
    mutate(p);
    EXPECT_THROW(Sampler{p}, Error);
  };
  bad([](SamplerParams& p) { p.top_p = 0.0f; });
  bad([](SamplerParams& p) { p.top_p = 1.5f; });
  bad([](SamplerParams& p) { p.min_p = -0.1f; });
  bad([](SamplerParams& p) { p.min_p = 2.0f; });
  bad([](SamplerParams& p) { p.repeat_penalty = 0.0f; });
  bad([](SamplerParams& p) { p.temperature = std::nanf(""); });
  bad([](SamplerParams& p) { p.frequency_penalty = INFINITY; });
  SamplerParams ok;
  EXPECT_NO_THROW(ok.validate());
}

TEST(Draw, UniformIsInUnitIntervalAndPortable) {
  std::mt19937_64 rng(0);
  // std::mt19937_64's 10000th output is fixed by the standard; the draw builds on raw outputs only.
  std::mt19937_64 check(5489u);
  check.discard(9999);
  EXPECT_EQ(check(), 9981545732273789042ull);
  for (int i = 0; i < 10000; ++i) {
    const double u = uniform01(rng);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace wisp
