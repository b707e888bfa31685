// KV rollback: after every verification round the target's session holds exactly the pending
// token's predecessors that were kept, and the shared pool exactly the blocks those tokens need
// (no block of a rejected guess is left allocated); the draft's session and pool likewise hold
// exactly the tokens it records. Counted against the paged layout: ceil(tokens / block) blocks.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "generate/draft_model.h"
#include "generate/speculative.h"
#include "spec_models.h"

namespace wisp {
namespace {

std::size_t blocks_for(std::size_t tokens, std::size_t block) { return (tokens + block - 1) / block; }

TEST(SpeculativeRollback, PoolsHoldExactlyTheKeptTokens) {
  const test::SpecModel* m = test::spec_model(test::kLlama);
  if (m == nullptr) GTEST_SKIP() << "model not fetched";
  auto target_engine = Engine::create(m->target, {.n_threads = 2, .kv_tokens = 1024, .block_size = 4});
  auto owned = std::make_unique<DraftModelDrafter>(m->draft, SessionOptions{.n_ctx = 512, .n_threads = 2},
                                                   SamplerParams{.temperature = 0.0f}, 0.0f);
  const DraftModelDrafter* drafter = owned.get();
  Speculator spec(std::move(owned), {.draft_max = 7, .draft_start = 7});
  Session s(target_engine, {.n_ctx = 512});
  Sampler greedy({.temperature = 0.0f});
  const std::vector<TokenId> prompt = m->tokenizer->tokenize(
      "List: apple, banana, cherry, apple, banana, cherry. Now a story about a dragon:", {.add_special = true});
  spec.begin(0, prompt);
  const TokenId first = greedy.sample(s.eval(prompt));
  greedy.accept(first);
  spec.push(first);

  const std::size_t bs = target_engine->block_size();
  const std::size_t cap = target_engine->kv_capacity_tokens();
  std::size_t expect = prompt.size();
  std::size_t rejections = 0;
  for (int round = 0; round < 24; ++round) {
    const std::size_t drafted_before = spec.stats().n_drafted, kept_before = spec.stats().n_accepted;
    const std::vector<TokenId> out = spec.round(s, *m->tokenizer, greedy, 100);
    const std::size_t drafted = spec.stats().n_drafted - drafted_before;
    const std::size_t kept = spec.stats().n_accepted - kept_before;
    if (kept < drafted) ++rejections;
    expect += out.size();  // the pending token and the kept guesses but the new pending one
    ASSERT_EQ(s.n_past(), expect) << "round " << round;
    EXPECT_EQ(target_engine->kv_free_tokens(), cap - blocks_for(expect, bs) * bs) << "round " << round;
    const Session& ds = drafter->session();
    EXPECT_EQ(ds.n_past(), drafter->held().size());
    const Engine& de = ds.engine();
    EXPECT_EQ(de.kv_free_tokens(),
              de.kv_capacity_tokens() - blocks_for(ds.n_past(), de.block_size()) * de.block_size());
  }
  EXPECT_GT(rejections, 0u) << "no round rejected a guess: rollback was not exercised";
  s.truncate(0);
  EXPECT_EQ(target_engine->kv_free_tokens(), cap);
}

}  // namespace
}  // namespace wisp
