// Draft-model speculation inside the batched scheduler, on the tiny random model: a drafting
// request's tokens equal its plain decode (greedy against the solo Session run, seeded sampling
// against the scheduler without a draft) next to plain requests in the same steps; several
// requests draft in shared draft passes; the draft's KV holds only kept tokens after each step and
// every block of both pools comes back, under preemption and cancellation too; misuse is a clear
// error.
//
// Drafts: the target's own weights on an engine with a 4-bit KV cache (its guesses agree with the
// target's), or a model with other random weights (guesses nearly always rejected). A random model is never sure of a
// token, so these tests draft with draft_p_min 0.
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

std::shared_ptr<Engine> draft_engine(std::size_t kv_tokens, const std::string& kv_type = "q4",
                                     std::uint32_t block = 16) {
  return Engine::create(tiny_model(),
                        {.n_threads = 2, .kv_tokens = kv_tokens, .block_size = block, .kv_type = kv_type});
}

std::shared_ptr<Engine> other_weights_engine(std::size_t kv_tokens) {
  TinySpec s;
  s.seed = 7;
  return Engine::create(Model::load(write_tiny_model(s, "sched_draft_other.gguf")),
                        {.n_threads = 2, .kv_tokens = kv_tokens});
}

SchedulerOptions with_draft(std::shared_ptr<Engine> d, SchedulerOptions so = {}) {
  so.draft = std::move(d);
  so.draft_p_min = 0.0f;
  return so;
}

RequestParams drafting(RequestParams p, std::size_t draft_max = 8) {
  p.draft = true;
  p.lookup.draft_max = draft_max;
  return p;
}

const BlockAllocator& alloc_of(const Engine& e) { return detail::engine_state(e).pool.allocator(); }

void expect_pools_empty(const Harness& h) {
  EXPECT_EQ(h.alloc().n_available(), h.alloc().n_blocks());
  EXPECT_EQ(h.alloc().n_sequences(), 0u);
  h.alloc().check_consistency();
  const BlockAllocator& d = alloc_of(*h.sched->draft_engine());
  EXPECT_EQ(d.n_available(), d.n_blocks()) << "draft blocks leaked";
  EXPECT_EQ(d.n_sequences(), 0u) << "draft sequences leaked";
  d.check_consistency();
}

TEST(SchedulerDraft, GreedyTokensEqualTheSoloRunBesidePlainRequests) {
  Harness h(2048, with_draft(draft_engine(2048), {.step_tokens = 64, .speculate_max_decodes = 16}));
  std::vector<std::pair<RequestId, RequestParams>> sent;
  for (unsigned seed = 1; seed <= 8; ++seed) {
    RequestParams p = req(tokens(10 + seed * 3, seed), 32);
    if (seed % 2 == 1) p = drafting(p);  // every other request drafts, in the same steps
    sent.emplace_back(h.submit(p), p);
  }
  h.sched->run_until_idle();
  for (const auto& [id, p] : sent) {
    EXPECT_EQ(h.out[id].tokens, solo_greedy(h.model, p.prompt, p.max_tokens)) << "request " << id;
    EXPECT_EQ(h.out[id].reason, FinishReason::kLength);
  }
  const SchedulerStats st = h.sched->stats();
  // Guesses were kept (the rejected branch is the next test's).
  EXPECT_GT(st.spec_accepted, 0u);
  // Four requests drafted together: a draft pass serves several of them.
  EXPECT_LT(2 * st.draft_steps, st.spec_drafted) << st.draft_steps << " draft passes";
  // The first drafting request got its tokens in fewer steps than tokens.
  const auto& steps = h.out[sent[0].first].token_steps;
  EXPECT_LT(std::set<std::uint64_t>(steps.begin(), steps.end()).size(), 32u);
  expect_pools_empty(h);
}

TEST(SchedulerDraft, RejectedGuessesFromOtherWeightsStillGiveThePlainTokens) {
  Harness h(1024, with_draft(other_weights_engine(1024), {.speculate_max_decodes = 4}));
  std::vector<std::pair<RequestId, RequestParams>> sent;
  for (unsigned seed = 20; seed < 24; ++seed) {
    RequestParams p = drafting(req(tokens(12, seed), 24));
    sent.emplace_back(h.submit(p), p);
  }
  h.sched->run_until_idle();
  for (const auto& [id, p] : sent) {
    EXPECT_EQ(h.out[id].tokens, solo_greedy(h.model, p.prompt, p.max_tokens)) << "request " << id;
  }
  EXPECT_GT(h.sched->stats().spec_drafted, h.sched->stats().spec_accepted);
  expect_pools_empty(h);
}

TEST(SchedulerDraft, SeededSamplingIsThePlainDecodesToo) {
  // Every verified row is sampled with the request's own sampler, in order, so a seeded request
  // draws exactly what it draws without a draft.
  for (unsigned seed = 1; seed <= 3; ++seed) {
    RequestParams p = req(tokens(15, seed + 40), 32);
    p.sampling.temperature = 0.7f;
    p.sampling.top_k = 5;
    p.sampling.seed = 1000 + seed;
    Harness plain(1024), spec(1024, with_draft(draft_engine(1024)));
    const RequestId a = plain.submit(p);
    const RequestId b = spec.submit(drafting(p));
    plain.sched->run_until_idle();
    spec.sched->run_until_idle();
    EXPECT_EQ(spec.out[b].tokens, plain.out[a].tokens) << "seed " << seed;
    EXPECT_EQ(spec.out[b].tokens.size(), 32u);
    EXPECT_GT(spec.sched->stats().spec_drafted, 0u);
    // And again: the same seed, the same tokens.
    const RequestId c = spec.submit(drafting(p));
    spec.sched->run_until_idle();
    EXPECT_EQ(spec.out[c].tokens, plain.out[a].tokens) << "seed " << seed << ", second run";
  }
}

TEST(SchedulerDraft, TheDraftCacheHoldsOnlyKnownTokensAfterEachStep) {
  Harness h(1024, with_draft(draft_engine(1024, "q4", 4)), 4);
  const BlockAllocator& d = alloc_of(*h.sched->draft_engine());
  const RequestParams p = drafting(req(tokens(9, 5), 40));
  const RequestId id = h.submit(p);
  while (h.sched->step()) {
    const Outcome& o = h.out[id];
    if (o.finished) break;
    // Known tokens: the prompt and what was generated; the draft may hold at most those.
    const std::size_t known = p.prompt.size() + o.tokens.size();
    EXPECT_LE(d.n_blocks() - d.n_available(), d.blocks_for(known)) << "after step " << h.sched->stats().steps;
  }
  EXPECT_EQ(h.out[id].tokens, solo_greedy(h.model, p.prompt, p.max_tokens));
  EXPECT_GT(h.sched->stats().spec_accepted, 0u);
  expect_pools_empty(h);
}

TEST(SchedulerDraft, CancelledDraftingRequestsFreeBothPools) {
  Harness h(1024, with_draft(draft_engine(1024), {.speculate_max_decodes = 8}));
  std::vector<RequestId> ids;
  for (unsigned seed = 1; seed <= 4; ++seed) ids.push_back(h.submit(drafting(req(tokens(20, seed), 200))));
  for (int i = 0; i < 6; ++i) h.sched->step();
  ASSERT_GT(h.sched->stats().draft_steps, 0u);
  const BlockAllocator& d = alloc_of(*h.sched->draft_engine());
  EXPECT_GT(d.n_sequences(), 0u) << "the drafting requests hold draft caches mid-run";
  for (RequestId id : ids) EXPECT_TRUE(h.sched->cancel(id));
  h.sched->run_until_idle();
  for (RequestId id : ids) EXPECT_EQ(h.out[id].reason, FinishReason::kCancelled);
  expect_pools_empty(h);
}

// Random drafting and plain requests through small pools (the draft's smaller still) with
// preemptions and cancellations: every block of both comes back, and the completed greedy
// requests equal their solo runs.
TEST(SchedulerDraft, SmallPoolsLeakNothingAndMatchSoloRuns) {
  Harness h(
      160, with_draft(draft_engine(96, "q4", 8), {.step_tokens = 40, .max_running = 5, .speculate_max_decodes = 5}), 8);
  std::mt19937 rng(13);
  std::vector<std::pair<RequestId, RequestParams>> sent;
  int n = 0;
  while (n < 60 || h.sched->stats().running + h.sched->stats().waiting > 0) {
    for (int k = static_cast<int>(rng() % 3); k > 0 && n < 60; --k, ++n) {
      RequestParams p = req(tokens(4 + rng() % 30, static_cast<unsigned>(rng())), 1 + rng() % 24);
      if (rng() % 3 != 0) p = drafting(p, 1 + rng() % 10);
      sent.emplace_back(h.submit(p), p);
    }
    if (rng() % 9 == 0) h.sched->cancel(sent[rng() % sent.size()].first);
    h.sched->step();
  }
  std::size_t compared = 0;
  for (const auto& [id, p] : sent) {
    const Outcome& o = h.out[id];
    ASSERT_TRUE(o.finished);
    if (o.reason == FinishReason::kCancelled || compared >= 25) continue;
    ASSERT_EQ(o.tokens, solo_greedy(h.model, p.prompt, p.max_tokens)) << "request " << id;
    ++compared;
  }
  EXPECT_GT(h.sched->stats().preemptions, 0u);
  EXPECT_GT(h.sched->stats().spec_accepted, 0u);
  expect_pools_empty(h);
}

TEST(SchedulerDraft, MisuseIsAClearError) {
  auto expect_error = [](auto&& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error for " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  Harness plain(256);
  expect_error([&] { plain.sched->submit(drafting(req(tokens(5, 1), 4)), {}); }, "no draft model is loaded");
  Harness h(256, with_draft(draft_engine(256)));
  RequestParams both = drafting(req(tokens(5, 1), 4));
  both.lookup.ngram_max = 3;
  expect_error([&] { h.sched->submit(both, {}); }, "ask for one");
  expect_error([&] { h.sched->submit(drafting(req(tokens(5, 1), 4), 0), {}); }, "0 guesses");
  TinySpec wide;
  wide.n_vocab = 120;
  auto wide_engine = Engine::create(Model::load(write_tiny_model(wide, "sched_draft_wide.gguf")), {.kv_tokens = 64});
  expect_error([&] { Scheduler s(h.engine, h.tok, with_draft(wide_engine)); }, "vocabulary of 120 tokens");
  auto exact = Engine::create(h.model, {.n_threads = 1, .kv_tokens = 64, .exact = true});
  expect_error([&] { Scheduler s(exact, h.tok, with_draft(draft_engine(64))); }, "batch-invariant");
}

}  // namespace
}  // namespace wisp
