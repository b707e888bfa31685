// Prompt-lookup speculation inside the batched scheduler, on the tiny random model: a speculating
// request's tokens equal its plain decode (greedy against the solo Session run, seeded sampling
// against the scheduler without lookup), next to non-speculating requests in the same steps; its
// rejected guesses leave no blocks behind, under preemption and cancellation too; bad lookup
// parameters are clear errors.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "scheduler_harness.h"
#include "wisp/error.h"

namespace wisp {
namespace {

using namespace test;

// A prompt that repeats a random phrase, so lookup has something to match from the first step;
// a random model's greedy continuation also falls into loops that lookup then follows.
std::vector<TokenId> repetitive(unsigned seed) {
  std::vector<TokenId> phrase = tokens(6 + seed % 5, seed);
  std::vector<TokenId> p = tokens(3, seed + 1000);
  for (int i = 0; i < 3; ++i) p.insert(p.end(), phrase.begin(), phrase.end());
  return p;
}

RequestParams with_lookup(RequestParams p, std::size_t ngram = 3, std::size_t draft_max = 8) {
  p.lookup.ngram_max = ngram;
  p.lookup.ngram_min = 1;
  p.lookup.draft_max = draft_max;
  return p;
}

TEST(SchedulerLookup, GreedyTokensEqualTheSoloRunBesidePlainRequests) {
  Harness h(2048, {.step_tokens = 64, .speculate_max_decodes = 16});
  std::vector<std::pair<RequestId, RequestParams>> sent;
  for (unsigned seed = 1; seed <= 8; ++seed) {
    RequestParams p = req(repetitive(seed), 40);
    if (seed % 2 == 1) p = with_lookup(p);  // every other request speculates, in the same steps
    sent.emplace_back(h.submit(p), p);
  }
  // Random prompts matched on single tokens: guesses that are mostly wrong.
  for (unsigned seed = 1; seed <= 3; ++seed) {
    RequestParams p = with_lookup(req(tokens(60, 500 + seed), 40), 1);
    sent.emplace_back(h.submit(p), p);
  }
  h.sched->run_until_idle();
  for (const auto& [id, p] : sent) {
    EXPECT_EQ(h.out[id].tokens, solo_greedy(h.model, p.prompt, p.max_tokens)) << "request " << id;
    EXPECT_EQ(h.out[id].reason, FinishReason::kLength);
  }
  // The first speculating request got its 40 tokens in fewer steps than tokens.
  const auto& steps = h.out[sent[0].first].token_steps;
  EXPECT_LT(std::set<std::uint64_t>(steps.begin(), steps.end()).size(), 40u);
  const SchedulerStats st = h.sched->stats();
  // Both branches were taken: guesses kept and guesses rejected (else the test proves nothing).
  EXPECT_GT(st.spec_accepted, 0u);
  EXPECT_LT(st.spec_accepted, st.spec_drafted);
  EXPECT_EQ(h.alloc().n_available(), h.alloc().n_blocks());
  EXPECT_EQ(h.alloc().n_sequences(), 0u);
  h.alloc().check_consistency();
}

TEST(SchedulerLookup, EventsCountDraftedAndKeptGuesses) {
  Harness h(1024);
  std::size_t drafted = 0, accepted = 0;
  RequestParams p = with_lookup(req(repetitive(3), 30));
  h.sched->submit(p, [&](const RequestEvent& e) {
    drafted = e.n_drafted;
    accepted = e.n_accepted;
  });
  h.sched->run_until_idle();
  EXPECT_EQ(drafted, h.sched->stats().spec_drafted);
  EXPECT_EQ(accepted, h.sched->stats().spec_accepted);
  EXPECT_GT(drafted, 0u);
}

TEST(SchedulerLookup, SeededSamplingIsThePlainDecodesToo) {
  // The scheduler samples every verified row with the request's own sampler, in order, so a seeded
  // request draws exactly what it draws without speculation.
  for (unsigned seed = 1; seed <= 4; ++seed) {
    RequestParams p = req(repetitive(seed), 32);
    p.sampling.temperature = 0.7f;
    p.sampling.top_k = 5;
    p.sampling.seed = 1000 + seed;
    Harness plain(1024), spec(1024);
    const RequestId a = plain.submit(p);
    const RequestId b = spec.submit(with_lookup(p));
    plain.sched->run_until_idle();
    spec.sched->run_until_idle();
    EXPECT_EQ(spec.out[b].tokens, plain.out[a].tokens) << "seed " << seed;
    EXPECT_EQ(spec.out[b].tokens.size(), 32u);
  }
}

TEST(SchedulerLookup, StopConditionsInsideAGuessRunEndWhereThePlainDecodeEnds) {
  // max_tokens, stop strings and end-of-sequence met in the middle of a kept run of guesses.
  Harness h(2048, {.speculate_max_decodes = 8});
  std::vector<std::pair<RequestId, RequestParams>> sent;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    RequestParams p = req(repetitive(seed), 5 + seed * 3);
    sent.emplace_back(h.submit(with_lookup(p)), p);
  }
  h.sched->run_until_idle();
  for (const auto& [id, p] : sent) {
    EXPECT_EQ(h.out[id].tokens, solo_greedy(h.model, p.prompt, p.max_tokens)) << "request " << id;
  }
  // A stop string taken from the plain answer's text: the speculating answer ends at the same place.
  Harness g(1024, {.speculate_max_decodes = 8});
  RequestParams p = req(repetitive(2), 40);
  const RequestId plain = g.submit(p);
  g.sched->run_until_idle();
  const std::string full = g.out[plain].text;
  ASSERT_GE(full.size(), 12u);
  p.stop = {full.substr(full.size() / 2, 3)};
  const RequestId a = g.submit(p);
  const RequestId b = g.submit(with_lookup(p));
  g.sched->run_until_idle();
  EXPECT_EQ(g.out[b].text, g.out[a].text);
  EXPECT_EQ(g.out[b].tokens, g.out[a].tokens);
  EXPECT_EQ(g.out[b].reason, FinishReason::kStop);
}

// Random speculating and plain requests through a small pool with preemptions and cancellations:
// every block comes back, and the completed greedy requests equal their solo runs.
TEST(SchedulerLookup, SmallPoolLeaksNothingAndMatchesSoloRuns) {
  Harness h(160, {.step_tokens = 40, .max_running = 5, .speculate_max_decodes = 5}, 8);
  std::mt19937 rng(11);
  std::vector<std::pair<RequestId, RequestParams>> sent;
  int n = 0;
  while (n < 80 || h.sched->stats().running + h.sched->stats().waiting > 0) {
    for (int k = static_cast<int>(rng() % 3); k > 0 && n < 80; --k, ++n) {
      RequestParams p = req(repetitive(static_cast<unsigned>(rng() % 1000)), 1 + rng() % 24);
      if (rng() % 3 != 0) p = with_lookup(p, 1 + rng() % 4, 1 + rng() % 10);
      sent.emplace_back(h.submit(p), p);
    }
    if (rng() % 9 == 0) h.sched->cancel(sent[rng() % sent.size()].first);
    h.sched->step();
  }
  std::size_t compared = 0;
  for (const auto& [id, p] : sent) {
    const Outcome& o = h.out[id];
    ASSERT_TRUE(o.finished);
    if (o.reason == FinishReason::kCancelled || compared >= 30) continue;
    ASSERT_EQ(o.tokens, solo_greedy(h.model, p.prompt, p.max_tokens)) << "request " << id;
    ++compared;
  }
  EXPECT_GT(h.sched->stats().preemptions, 0u);
  EXPECT_GT(h.sched->stats().spec_accepted, 0u);
  EXPECT_EQ(h.alloc().n_available(), h.alloc().n_blocks());
  EXPECT_EQ(h.alloc().n_sequences(), 0u);
  h.alloc().check_consistency();
}

TEST(SchedulerLookup, NoGuessesBesideMoreDecodesThanAllowed) {
  Harness h(1024);  // the default: guesses only in a step with one decode
  h.submit(with_lookup(req(repetitive(1), 24)));
  h.submit(req(repetitive(2), 24));
  h.sched->run_until_idle();
  EXPECT_EQ(h.sched->stats().spec_drafted, 0u);
  h.submit(with_lookup(req(repetitive(1), 24)));
  h.sched->run_until_idle();
  EXPECT_GT(h.sched->stats().spec_drafted, 0u) << "alone it speculates";
}

TEST(SchedulerLookup, BadParametersAreClearErrors) {
  Harness h(256);
  auto expect_error = [&](RequestParams p, const std::string& what) {
    try {
      h.sched->submit(std::move(p), {});
      ADD_FAILURE() << "no error for " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error(with_lookup(req(tokens(5, 1), 4), 65), "n-gram of 65");
  expect_error(with_lookup(req(tokens(5, 1), 4), 3, 0), "0 guesses");
  expect_error(with_lookup(req(tokens(5, 1), 4), 3, 100), "100 guesses");
  auto exact = Engine::create(h.model, {.n_threads = 1, .kv_tokens = 64, .exact = true});
  Scheduler s(exact, h.tok);
  try {
    s.submit(with_lookup(req(tokens(5, 1), 4)), {});
    ADD_FAILURE() << "lookup accepted with exact numerics";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("batch-invariant"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wisp
