// Speculative sampling keeps the target's distribution: at a fixed context of a real model
// (SmolLM2), the first token decided by the production decision code (decide_round: the target's
// chain, the rejection rule, a guess drawn from the Q4_0 draft's own chain at the same context)
// over 4000 seeded runs matches the target's top-20 softmax, computed here straight from its
// logits (chi-square, alpha = 1e-3). The same harness with a deliberately wrong rule (keep every
// guess) must fail, which shows the test can tell the difference at this sample size. The forward
// passes are done once (the logits at a fixed context do not change); the runs redo the rest.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "generate/speculative.h"
#include "sample/draw.h"
#include "spec_models.h"
#include "spec_stats.h"

namespace wisp {
namespace {

constexpr int kTopK = 20;
constexpr std::size_t kRuns = 4000;

// Softmax over the kTopK largest logits (ties to the lower id), zero elsewhere: what the chain
// with top-k = 20, temperature 1 and no other filter draws from.
std::vector<float> top_k_softmax(std::span<const float> logits) {
  std::vector<std::int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + kTopK, ids.end(), [&](std::int32_t a, std::int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  });
  std::vector<float> p(logits.size(), 0.0f);
  double sum = 0.0;
  for (int i = 0; i < kTopK; ++i) sum += std::exp(static_cast<double>(logits[ids[i]]) - logits[ids[0]]);
  for (int i = 0; i < kTopK; ++i) {
    p[ids[i]] = static_cast<float>(std::exp(static_cast<double>(logits[ids[i]]) - logits[ids[0]]) / sum);
  }
  return p;
}

DraftVerdict accept_always(std::span<const float>, std::span<const float>, std::int32_t d, std::mt19937_64&) {
  return {true, d};
}

struct Fixture {
  std::vector<float> target_row, draft_row;
};

const Fixture* fixture() {
  static std::unique_ptr<Fixture> f;
  if (f) return f.get();
  const test::SpecModel* m = test::spec_model(test::kLlama);
  if (m == nullptr) return nullptr;
  const std::vector<TokenId> ctx =
      m->tokenizer->tokenize("The weather today is", {.add_special = true, .parse_special = false});
  f = std::make_unique<Fixture>();
  Session t(m->engine, {.n_ctx = 64});
  std::span<const float> l = t.eval(ctx);
  f->target_row.assign(l.begin(), l.end());
  Session d(m->draft, {.n_ctx = 64, .n_threads = 2});
  l = d.eval(ctx);
  f->draft_row.assign(l.begin(), l.end());
  return f.get();
}

std::vector<std::size_t> first_tokens(const Fixture& f, const test::SpecModel& m, AcceptRule rule) {
  const SamplerParams sp{.top_k = kTopK, .top_p = 1.0f, .min_p = 0.0f, .temperature = 1.0f};
  const std::size_t n_vocab = f.target_row.size();
  // One guess: rows = after the context (judges the guess) and after the guess (only reached
  // when it is kept; its token is not the first one, so the same row does).
  std::vector<float> rows(f.target_row);
  rows.insert(rows.end(), f.target_row.begin(), f.target_row.end());
  std::vector<std::size_t> counts(n_vocab, 0);
  std::vector<float> scratch;
  for (std::size_t run = 0; run < kRuns; ++run) {
    SamplerParams seeded = sp;
    seeded.seed = run;
    Sampler target(seeded), draft(seeded);
    std::mt19937_64 rng(run), draft_rng(run ^ 0x5bd1e995u);
    Draft g;
    g.probs.emplace_back();
    draft.probabilities(f.draft_row, g.probs[0]);
    const double u = uniform01(draft_rng);
    double cum = 0.0;
    std::int32_t pick = 0;
    for (std::size_t i = 0; i < n_vocab; ++i) {
      if (g.probs[0][i] <= 0.0f) continue;
      cum += g.probs[0][i];
      pick = static_cast<std::int32_t>(i);
      if (u < cum) break;
    }
    g.tokens.push_back(pick);
    const RoundDecision d = decide_round(rows, n_vocab, g, *m.tokenizer, target, rule, rng, scratch);
    ++counts[static_cast<std::size_t>(d.tokens.front())];
  }
  return counts;
}

TEST(SpeculativeDistribution, FirstTokenFollowsTheTargetSoftmax) {
  const Fixture* f = fixture();
  if (f == nullptr) GTEST_SKIP() << "model not fetched";
  const test::SpecModel& m = *test::spec_model(test::kLlama);
  const std::vector<float> p = top_k_softmax(f->target_row);
  const std::vector<float> q = top_k_softmax(f->draft_row);
  // The draft must disagree enough for the wrong rule to show: its top-20 is not the target's.
  double tv = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) tv += std::abs(p[i] - q[i]) / 2;
  std::printf("total variation between target and draft: %.4f\n", tv);

  const auto right = first_tokens(*f, m, rejection_sample);
  const ChiSquare c = chi_square(right, p);
  EXPECT_LT(c.statistic, c.critical) << "df " << c.df;

  const auto wrong = first_tokens(*f, m, accept_always);
  const ChiSquare w = chi_square(wrong, p);
  EXPECT_GT(w.statistic, w.critical) << "df " << w.df << ": the test cannot tell a wrong rule from the right one";
  std::printf("chi-square: rejection rule %.1f, accept-always %.1f, critical %.1f (df %zu)\n", c.statistic, w.statistic,
              c.critical, c.df);
}

}  // namespace
}  // namespace wisp
