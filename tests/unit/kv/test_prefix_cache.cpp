// Automatic prefix caching in BlockAllocator and KvPool: the hash chain, publish / attach_cached
// round trips, partial hits, token verification under an equal hash, the cached (LRU) set and
// its eviction order, immutability of published blocks under truncate and append, counters,
// clear_cache, KvPool's write guard, and a randomized run checked against a shadow model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv/block_allocator.h"
#include "kv/kv_pool.h"
#include "wisp/error.h"

namespace wisp {
namespace {

using Tokens = std::vector<std::int32_t>;

// Tokens first, first + 1, ...: distinct per position, so any two ranges differ.
Tokens iota_tokens(std::size_t n, std::int32_t first = 100) {
  Tokens t(n);
  for (std::size_t i = 0; i < n; ++i) t[i] = first + static_cast<std::int32_t>(i);
  return t;
}

std::span<const std::int32_t> block_of(const Tokens& t, std::size_t i, std::uint32_t bs) {
  return std::span<const std::int32_t>(t).subspan(i * bs, bs);
}

// Appends t to a new sequence and publishes every full block under its chain hash.
SeqId fill_and_publish(BlockAllocator& a, const Tokens& t) {
  const SeqId s = a.create();
  (void)a.append(s, t.size());
  const std::vector<BlockHash> h = a.block_hashes(t);
  for (std::size_t i = 0; i < h.size(); ++i) EXPECT_TRUE(a.publish(s, i, h[i], block_of(t, i, a.block_size())));
  return s;
}

std::string what_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no exception)";
}

TEST(ChainHash, IsDeterministicAndSensitiveToEverything) {
  const Tokens t = {1, 2, 3, 4};
  const BlockHash h = BlockAllocator::chain_hash(BlockAllocator::kRootHash, t);
  // Pinned: the hash must not depend on the run, the build or the platform.
  EXPECT_EQ(h, 0xebfd2cf7f46ce3deULL) << std::hex << h;
  EXPECT_NE(BlockAllocator::chain_hash(BlockAllocator::kRootHash + 1, t), h);                  // the parent
  EXPECT_NE(BlockAllocator::chain_hash(BlockAllocator::kRootHash, Tokens{1, 2, 4, 3}), h);     // the order
  EXPECT_NE(BlockAllocator::chain_hash(BlockAllocator::kRootHash, Tokens{1, 2, 3, 4, 0}), h);  // the length
  EXPECT_NE(BlockAllocator::chain_hash(BlockAllocator::kRootHash, Tokens{1, 2, 3, -4}), h);    // the sign
  // Runs of token 0 still move the state.
  EXPECT_NE(BlockAllocator::chain_hash(0, Tokens{0, 0}), BlockAllocator::chain_hash(0, Tokens{0, 0, 0, 0}));
  EXPECT_NE(BlockAllocator::chain_hash(0, Tokens{0, 0}), 0u);
}

TEST(ChainHash, BlockHashesChainFullBlocksOnly) {
  BlockAllocator a(4, 4);
  const Tokens t = iota_tokens(11);  // 2 full blocks and 3 tokens
  const std::vector<BlockHash> h = a.block_hashes(t);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[0], BlockAllocator::chain_hash(BlockAllocator::kRootHash, block_of(t, 0, 4)));
  EXPECT_EQ(h[1], BlockAllocator::chain_hash(h[0], block_of(t, 1, 4)));
  // Equal blocks at different depths hash differently: the chain carries the prefix.
  const std::vector<BlockHash> same = a.block_hashes(Tokens(8, 7));
  EXPECT_NE(same[0], same[1]);
}

TEST(PrefixCache, PublishThenAttachRoundTrip) {
  BlockAllocator a(16, 4);
  const Tokens t = iota_tokens(12);
  const SeqId s = fill_and_publish(a, t);
  const std::vector<BlockId> table(a.block_table(s).begin(), a.block_table(s).end());
  for (BlockId b : table) EXPECT_TRUE(a.is_published(b));
  a.release(s);
  EXPECT_EQ(a.n_cached(), 3u);
  EXPECT_EQ(a.n_free(), 13u);
  EXPECT_EQ(a.n_available(), 16u);
  a.check_consistency();

  const SeqId r = a.create();
  EXPECT_EQ(a.attach_cached(r, a.block_hashes(t), t), 3u);
  EXPECT_EQ(a.n_tokens(r), 12u);
  EXPECT_TRUE(std::equal(table.begin(), table.end(), a.block_table(r).begin(), a.block_table(r).end()));
  for (BlockId b : table) EXPECT_EQ(a.refcount(b), 1u);
  EXPECT_EQ(a.n_cached(), 0u);  // attached blocks leave the cached set
  EXPECT_EQ(a.n_free(), 13u);
  // The sequence grows past its cached prefix into a fresh block, no copy.
  EXPECT_FALSE(a.append(r, 1).copy);
  EXPECT_EQ(a.block_table(r).size(), 4u);
  a.check_consistency();
}

TEST(PrefixCache, SecondSequenceAttachesTheSharedPrefixAndNeedsBlocksOnlyForItsSuffix) {
  BlockAllocator a(16, 4);
  Tokens first = iota_tokens(10);  // blocks: 4 + 4 + 2
  const SeqId s = fill_and_publish(a, first);
  Tokens second(first.begin(), first.begin() + 8);
  for (std::int32_t x : {1, 2, 3, 4, 5, 6}) second.push_back(x);  // 14 tokens, 3 full blocks

  const SeqId r = a.create();
  EXPECT_EQ(a.attach_cached(r, a.block_hashes(second), second), 2u);  // block 3 was never published
  EXPECT_EQ(a.n_tokens(r), 8u);
  EXPECT_EQ(a.block_table(r)[0], a.block_table(s)[0]);
  EXPECT_EQ(a.block_table(r)[1], a.block_table(s)[1]);
  EXPECT_EQ(a.refcount(a.block_table(s)[0]), 2u);
  EXPECT_EQ(a.blocks_needed(r, 6), 2u);  // 14 tokens in 4 blocks, 2 of them attached
  const std::uint32_t before = a.n_available();
  EXPECT_FALSE(a.append(r, 6).copy);
  EXPECT_EQ(before - a.n_available(), 2u);
  a.check_consistency();
}

TEST(PrefixCache, DivergenceInsideBlockTwoAttachesOnlyBlockOne) {
  BlockAllocator a(16, 4);
  const Tokens t = iota_tokens(12);
  a.release(fill_and_publish(a, t));
  Tokens other = t;
  other[4 + 2] = -1;  // block 1, slot 2
  const SeqId r = a.create();
  EXPECT_EQ(a.attach_cached(r, a.block_hashes(other), other), 1u);
  EXPECT_EQ(a.n_tokens(r), 4u);
  EXPECT_EQ(a.n_cached(), 2u);  // blocks 1 and 2 stay cached for a prompt that matches them
  a.check_consistency();
}

TEST(PrefixCache, EqualHashWithOtherTokensIsNotAttached) {
  BlockAllocator a(8, 4);
  const Tokens t = iota_tokens(4);
  const SeqId s = a.create();
  (void)a.append(s, 4);
  const BlockHash forged = 42;  // a hand-made "collision"
  EXPECT_TRUE(a.publish(s, 0, forged, t));
  const Tokens other = iota_tokens(4, 500);
  const SeqId r = a.create();
  const std::vector<BlockHash> hashes = {forged};
  EXPECT_EQ(a.attach_cached(r, hashes, other), 0u);
  EXPECT_EQ(a.n_tokens(r), 0u);
  EXPECT_EQ(a.refcount(a.block_table(s)[0]), 1u);
  EXPECT_EQ(a.prefix_queries(), 1u);
  EXPECT_EQ(a.prefix_hits(), 0u);
  // The right tokens under the same hash do attach.
  EXPECT_EQ(a.attach_cached(r, hashes, t), 1u);
  a.check_consistency();
}

TEST(PrefixCache, PublishRules) {
  BlockAllocator a(8, 4);
  const Tokens t = iota_tokens(6);
  const SeqId s = a.create();
  (void)a.append(s, 6);
  const std::vector<BlockHash> h = a.block_hashes(t);

  // Block 1 holds 2 of 4 tokens: not full.
  EXPECT_NE(what_of([&] {
              (void)a.publish(s, 1, 7, block_of(iota_tokens(8), 1, 4));
            }).find("cannot publish block 1 of sequence 0: only full blocks"),
            std::string::npos);
  EXPECT_THROW((void)a.publish(s, 99, 7, block_of(t, 0, 4)), Error);
  EXPECT_THROW((void)a.publish(s, SIZE_MAX, 7, block_of(t, 0, 4)), Error);
  EXPECT_NE(what_of([&] {
              (void)a.publish(s, 0, h[0], Tokens{1, 2, 3});
            }).find("got 3 tokens, a block holds 4"),
            std::string::npos);
  EXPECT_THROW((void)a.publish(12345, 0, h[0], block_of(t, 0, 4)), Error);

  EXPECT_TRUE(a.publish(s, 0, h[0], block_of(t, 0, 4)));
  EXPECT_TRUE(a.publish(s, 0, h[0], block_of(t, 0, 4)));  // again: no-op
  // The same block under another hash, or other tokens: the caller's bookkeeping is wrong.
  EXPECT_NE(what_of([&] { (void)a.publish(s, 0, h[0] + 1, block_of(t, 0, 4)); }).find("already published"),
            std::string::npos);
  EXPECT_THROW((void)a.publish(s, 0, h[0], Tokens{9, 9, 9, 9}), Error);

  // Another block with the same content: the cache has it already; nothing changes.
  const SeqId u = a.create();
  (void)a.append(u, 4);
  EXPECT_FALSE(a.publish(u, 0, h[0], block_of(t, 0, 4)));
  EXPECT_FALSE(a.is_published(a.block_table(u)[0]));
  a.release(u);
  EXPECT_EQ(a.n_cached(), 0u);  // unpublished: straight back to the free list
  EXPECT_THROW((void)a.is_published(8), Error);
  a.check_consistency();
}

TEST(PrefixCache, AttachRules) {
  BlockAllocator a(8, 4);
  const Tokens t = iota_tokens(8);
  const SeqId s = fill_and_publish(a, t);
  const std::vector<BlockHash> h = a.block_hashes(t);
  EXPECT_NE(what_of([&] {
              (void)a.attach_cached(s, h, t);
            }).find("attach_cached needs an empty sequence, and sequence 0 holds 8 tokens"),
            std::string::npos);
  const SeqId r = a.create();
  EXPECT_NE(what_of([&] {
              (void)a.attach_cached(r, h, Tokens(t.begin(), t.begin() + 7));
            }).find("got 2 block hashes but only 7 tokens (8 needed)"),
            std::string::npos);
  EXPECT_THROW((void)a.attach_cached(12345, h, t), Error);
  EXPECT_EQ(a.prefix_queries(), 0u);  // refused calls count nothing
  EXPECT_EQ(a.attach_cached(r, {}, {}), 0u);
  // A truncated sequence is empty again and may attach.
  a.truncate(s, 0);
  EXPECT_EQ(a.attach_cached(s, h, t), 2u);
  a.check_consistency();
}

TEST(PrefixCache, ReleasedBlocksAreCachedAndEvictedLeastRecentlyReleasedFirst) {
  BlockAllocator a(6, 4);
  const Tokens ta = iota_tokens(8, 100);
  const Tokens tb = iota_tokens(8, 200);
  const SeqId sa = fill_and_publish(a, ta);  // blocks 0, 1
  const SeqId sb = fill_and_publish(a, tb);  // blocks 2, 3
  ASSERT_EQ(a.block_table(sa)[0], 0u);
  ASSERT_EQ(a.block_table(sb)[0], 2u);
  a.release(sa);  // joins the cached set tail first: 1, 0
  a.release(sb);  // then 3, 2
  EXPECT_EQ(a.n_free(), 2u);
  EXPECT_EQ(a.n_cached(), 4u);

  // The free list goes first: no eviction while it lasts.
  const SeqId c = a.create();
  (void)a.append(c, 8);
  EXPECT_EQ(a.block_table(c)[0], 4u);
  EXPECT_EQ(a.block_table(c)[1], 5u);
  EXPECT_EQ(a.n_evictions(), 0u);
  EXPECT_EQ(a.n_cached(), 4u);

  // Then the least recently released cached block: sa's tail.
  (void)a.append(c, 1);
  EXPECT_EQ(a.block_table(c)[2], 1u);
  EXPECT_FALSE(a.is_published(1));
  EXPECT_EQ(a.n_evictions(), 1u);
  EXPECT_EQ(a.n_cached(), 3u);
  a.check_consistency();

  // sa's first block survived, so its prompt still gets a one-block hit.
  const SeqId r = a.create();
  EXPECT_EQ(a.attach_cached(r, a.block_hashes(ta), ta), 1u);
  EXPECT_EQ(a.block_table(r)[0], 0u);
  // Attaching took block 0 out of the cached set; released again, it rejoins at the back,
  // behind 3 and 2.
  a.release(r);
  (void)a.append(c, 4);
  EXPECT_EQ(a.block_table(c)[3], 3u);
  (void)a.append(c, 4);
  EXPECT_EQ(a.block_table(c)[4], 2u);
  (void)a.append(c, 4);
  EXPECT_EQ(a.block_table(c)[5], 0u);
  EXPECT_EQ(a.n_evictions(), 4u);
  EXPECT_EQ(a.n_available(), 0u);
  a.check_consistency();
}

TEST(PrefixCache, CapacityCountsCachedBlocks) {
  BlockAllocator a(4, 4);
  const SeqId s = fill_and_publish(a, iota_tokens(12));
  a.release(s);
  EXPECT_EQ(a.n_free(), 1u);
  EXPECT_EQ(a.n_available(), 4u);
  const SeqId r = a.create();
  Growth g;
  EXPECT_TRUE(a.try_append(r, 16, g));  // takes the free block and evicts all three
  EXPECT_EQ(a.n_evictions(), 3u);
  a.release(r);
  const SeqId p = fill_and_publish(a, iota_tokens(8));
  a.release(p);
  const SeqId q = a.create();
  (void)a.append(q, 4);
  const std::string msg = what_of([&] { (void)a.append(q, 13); });
  EXPECT_NE(msg.find("need 4 more blocks of 4 tokens, 3 of 4 free (2 of them holding cached prefixes); sequence"),
            std::string::npos)
      << msg;
  EXPECT_EQ(a.n_cached(), 2u);  // a refused append evicts nothing
  a.check_consistency();
}

TEST(PrefixCache, TruncatingIntoAPublishedBlockHeldAloneUnpublishesIt) {
  BlockAllocator a(8, 4);
  const Tokens t = iota_tokens(8);
  const SeqId s = fill_and_publish(a, t);
  const BlockId b1 = a.block_table(s)[1];
  a.truncate(s, 8);  // no cut: nothing changes
  EXPECT_TRUE(a.is_published(b1));
  a.truncate(s, 6);
  EXPECT_FALSE(a.is_published(b1));  // its slots 2 and 3 are about to be overwritten
  EXPECT_TRUE(a.is_published(a.block_table(s)[0]));
  EXPECT_FALSE(a.append(s, 1).copy);  // written in place
  const SeqId r = a.create();
  EXPECT_EQ(a.attach_cached(r, a.block_hashes(t), t), 1u);
  // Truncating a whole published block away just releases it to the cache.
  a.release(r);
  a.truncate(s, 0);
  EXPECT_EQ(a.n_cached(), 1u);
  a.check_consistency();
}

TEST(PrefixCache, TruncatingIntoASharedPublishedBlockKeepsItAndCopiesOnAppend) {
  BlockAllocator a(8, 4);
  const Tokens t = iota_tokens(8);
  const SeqId s = fill_and_publish(a, t);
  const SeqId f = a.fork(s);
  const BlockId b1 = a.block_table(s)[1];
  a.truncate(f, 6);
  EXPECT_TRUE(a.is_published(b1));  // s still reads all of it
  EXPECT_EQ(a.refcount(b1), 2u);
  EXPECT_EQ(a.blocks_needed(f, 1), 1u);
  const Growth g = a.append(f, 1);
  ASSERT_TRUE(g.copy);
  EXPECT_EQ(g.copy->src, b1);
  EXPECT_EQ(g.copy->n_tokens, 2u);
  EXPECT_FALSE(a.is_published(g.copy->dst));
  EXPECT_TRUE(a.is_published(b1));
  EXPECT_EQ(a.refcount(b1), 1u);
  a.check_consistency();
}

TEST(PrefixCache, APublishedPartialTailHeldAloneIsCopiedNotWritten) {
  // f truncates into a block s shares and has published; then s goes away. f is now the block's
  // only holder, but the cache still promises its full content to other prompts.
  BlockAllocator a(8, 4);
  const Tokens t = iota_tokens(8);
  const SeqId s = fill_and_publish(a, t);
  const SeqId f = a.fork(s);
  a.truncate(f, 6);
  const BlockId b1 = a.block_table(f)[1];
  a.release(s);
  EXPECT_EQ(a.refcount(b1), 1u);
  EXPECT_TRUE(a.is_published(b1));
  EXPECT_EQ(a.blocks_needed(f, 1), 1u);
  const std::uint32_t before = a.n_available();
  const Growth g = a.append(f, 1);
  ASSERT_TRUE(g.copy);
  EXPECT_EQ(g.copy->src, b1);
  EXPECT_EQ(g.copy->n_tokens, 2u);
  EXPECT_EQ(a.refcount(b1), 0u);
  EXPECT_EQ(a.n_cached(), 1u);         // the original now waits in the cache
  EXPECT_EQ(a.n_available(), before);  // one block taken, one released to the cache
  const SeqId r = a.create();
  EXPECT_EQ(a.attach_cached(r, a.block_hashes(t), t), 2u);
  EXPECT_EQ(a.block_table(r)[1], b1);
  a.check_consistency();
}

TEST(PrefixCache, CopyOfAPublishedTailCountsItsBlockAndKeepsTheSourceCached) {
  // The copy's source joins the cached set during the append; it must not count as room for the
  // append itself, nor be evicted by it (the storage copies from it afterwards).
  BlockAllocator a(3, 4);
  const Tokens t = iota_tokens(8);
  const SeqId s = fill_and_publish(a, t);  // blocks 0, 1
  const SeqId f = a.fork(s);
  a.truncate(f, 6);
  a.release(s);  // block 0 and 1 held by f, block 1 published partial tail
  EXPECT_EQ(a.n_available(), 1u);
  Growth g;
  EXPECT_FALSE(a.try_append(f, 3, g));  // copy + one more block: 2 needed, 1 available
  EXPECT_TRUE(a.try_append(f, 2, g));
  ASSERT_TRUE(g.copy);
  EXPECT_EQ(g.copy->src, 1u);
  EXPECT_EQ(g.copy->dst, 2u);
  EXPECT_TRUE(a.is_published(1));
  EXPECT_EQ(a.n_evictions(), 0u);
  a.check_consistency();
}

TEST(PrefixCache, CountersAreCumulativeInBlocks) {
  BlockAllocator a(16, 4);
  const Tokens t = iota_tokens(12);
  a.release(fill_and_publish(a, t));
  const std::vector<BlockHash> h = a.block_hashes(t);
  const SeqId r1 = a.create();
  EXPECT_EQ(a.attach_cached(r1, h, t), 3u);
  const SeqId r2 = a.create();
  Tokens other = t;
  other[9] = 0;
  EXPECT_EQ(a.attach_cached(r2, a.block_hashes(other), other), 2u);
  const SeqId r3 = a.create();
  EXPECT_EQ(a.attach_cached(r3, std::span(h).first(1), t), 1u);
  EXPECT_EQ(a.prefix_queries(), 7u);
  EXPECT_EQ(a.prefix_hits(), 6u);
  EXPECT_EQ(a.n_evictions(), 0u);
}

TEST(PrefixCache, ClearCacheFreesCachedBlocksOnly) {
  BlockAllocator a(16, 4);
  const Tokens ta = iota_tokens(8, 100);
  const Tokens tb = iota_tokens(8, 200);
  const SeqId sa = fill_and_publish(a, ta);
  a.release(fill_and_publish(a, tb));
  EXPECT_EQ(a.n_cached(), 2u);
  a.clear_cache();
  EXPECT_EQ(a.n_cached(), 0u);
  EXPECT_EQ(a.n_free(), 14u);
  const SeqId r = a.create();
  EXPECT_EQ(a.attach_cached(r, a.block_hashes(tb), tb), 0u);
  // sa's blocks were referenced: still published, and cached once released.
  EXPECT_TRUE(a.is_published(a.block_table(sa)[0]));
  a.release(sa);
  EXPECT_EQ(a.n_cached(), 2u);
  EXPECT_EQ(a.attach_cached(r, a.block_hashes(ta), ta), 2u);
  a.check_consistency();
}

KvLayout small_layout() {
  KvLayout l;
  l.n_layers = 2;
  l.n_kv_heads = 1;
  l.head_dim = 4;
  l.block_size = 4;
  return l;
}

void write_token(KvPool& pool, SeqId seq, std::size_t pos, float value) {
  const std::vector<float> row(4, value);
  for (std::uint32_t layer = 0; layer < 2; ++layer) pool.write(seq, layer, pos, row, row);
}

TEST(KvPoolPrefixCache, CachedBlocksKeepTheirBytesAndRefuseWrites) {
  KvPool pool(small_layout(), 4);
  const Tokens t = iota_tokens(6);
  const SeqId s = pool.create_sequence();
  pool.append(s, 6);
  for (std::size_t pos = 0; pos < 6; ++pos) write_token(pool, s, pos, static_cast<float>(pos));
  const std::vector<BlockHash> h = pool.allocator().block_hashes(t);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_TRUE(pool.publish(s, 0, h[0], block_of(t, 0, 4)));
  const std::string msg = what_of([&] { write_token(pool, s, 2, -1.0f); });
  EXPECT_NE(msg.find("position 2 of sequence 0 lies in block 0, published in the prefix cache"), std::string::npos)
      << msg;
  write_token(pool, s, 5, 5.0f);  // the unpublished tail is still writable

  pool.free_sequence(s);
  EXPECT_EQ(pool.n_cached(), 1u);
  EXPECT_EQ(pool.n_available(), 4u);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
  EXPECT_EQ(pool.bytes_cached(), pool.layout().bytes_per_block());

  const SeqId r = pool.create_sequence();
  EXPECT_EQ(pool.attach_cached(r, h, t), 1u);
  EXPECT_EQ(pool.prefix_queries(), 1u);
  EXPECT_EQ(pool.prefix_hits(), 1u);
  EXPECT_EQ(pool.bytes_in_use(), pool.layout().bytes_per_block());
  for (std::size_t pos = 0; pos < 4; ++pos) EXPECT_EQ(*pool.k(r, 1, 0, pos), static_cast<float>(pos));
  EXPECT_THROW(write_token(pool, r, 0, 9.0f), Error);
  pool.append(r, 1);
  write_token(pool, r, 4, 4.0f);  // past the attached prefix: a fresh block
  pool.free_sequence(r);
  pool.clear_cache();
  EXPECT_EQ(pool.n_cached(), 0u);
  EXPECT_EQ(pool.n_evictions(), 0u);
  EXPECT_EQ(pool.allocator().n_free(), 4u);
}

// A server's worth of random traffic over one small pool, with a small vocabulary so prompts share
// prefixes often, against a shadow model: each sequence's tokens, and for each block the prompt
// prefix its K/V were computed under (through the end of its written slots). Checked after every
// step: consistency; every written slot lies in a block held alone and unpublished; every attached
// block was computed under exactly the attaching prompt's prefix; publish's answers; capacity
// accounting; counters.
class PrefixCacheRandom {
 public:
  explicit PrefixCacheRandom(std::uint64_t seed)
      : rng_(seed), a_(kBlocks, kBs), content_(kBlocks), pub_hash_(kBlocks) {}

  void run(int steps) {
    for (int step = 0; step < steps; ++step) {
      this->step();
      if (::testing::Test::HasFatalFailure()) return;
      ASSERT_NO_THROW(a_.check_consistency()) << "step " << step;
    }
    ASSERT_GT(exhausted_, 0) << "the run should reach exhaustion";
    ASSERT_GT(a_.prefix_hits(), 0u);
    ASSERT_GT(a_.n_evictions(), 0u);
    ASSERT_GT(rejected_, 0) << "some publishes should find their content cached already";
    ASSERT_GT(forged_, 0);
    ASSERT_GT(token_misses_, 0) << "some lookups should meet a forged hash and be refused on the tokens";
    for (const auto& [s, t] : seqs_) a_.release(s);
    ASSERT_EQ(a_.n_available(), a_.n_blocks()) << "blocks leaked";
    a_.clear_cache();
    ASSERT_EQ(a_.n_free(), a_.n_blocks());
    a_.check_consistency();
  }

 private:
  static constexpr std::uint32_t kBlocks = 48;
  static constexpr std::uint32_t kBs = 4;

  std::size_t pick(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  static void bump(std::int32_t& token) { token = (token + 1) % 3; }  // another token of the vocabulary
  Tokens random_tokens(std::size_t n) {
    Tokens t(n);
    for (auto& x : t) x = static_cast<std::int32_t>(pick(3));
    return t;
  }
  SeqId random_seq() {
    auto it = seqs_.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(pick(seqs_.size())));
    return it->first;
  }

  void step() {
    const std::size_t op = pick(100);
    if (seqs_.empty() || op < 8) return attach(random_prompt());
    const SeqId s = random_seq();
    if (op < 14) return fork(s);
    if (op < 50) return append(s, random_tokens(pick(9)));
    if (op < 62) return truncate(s);
    if (op < 85) return publish(s);
    if (op < 99) return release(s);
    a_.clear_cache();
  }

  Tokens random_prompt() {
    Tokens p;
    if (!forged_prompts_.empty() && pick(8) == 0) {
      p = forged_prompts_[pick(forged_prompts_.size())];
    } else if (!history_.empty() && pick(4) != 0) {
      p = history_[pick(history_.size())];
      p.resize(pick(p.size() + 1));
      if (!p.empty() && pick(3) == 0) bump(p[pick(p.size())]);  // diverge somewhere
    }
    const Tokens more = random_tokens(pick(6));
    p.insert(p.end(), more.begin(), more.end());
    return p;
  }

  static void remember(std::vector<Tokens>& list, Tokens t) {
    list.push_back(std::move(t));
    if (list.size() > 32) list.erase(list.begin());
  }

  void fork(SeqId s) { seqs_[a_.fork(s)] = seqs_[s]; }

  void release(SeqId s) {
    remember(history_, seqs_[s]);
    a_.release(s);
    seqs_.erase(s);
  }

  void truncate(SeqId s) {
    Tokens& t = seqs_[s];
    t.resize(pick(t.size() + 1));
    a_.truncate(s, t.size());
  }

  void attach(const Tokens& prompt) {
    const SeqId s = a_.create();
    seqs_[s] = {};
    const std::vector<BlockHash> hashes = a_.block_hashes(prompt);
    const std::size_t queries = a_.prefix_queries(), hits = a_.prefix_hits();
    const std::size_t n = a_.attach_cached(s, hashes, prompt);
    ASSERT_LE(n, hashes.size());
    ASSERT_EQ(a_.prefix_queries(), queries + hashes.size());
    ASSERT_EQ(a_.prefix_hits(), hits + n);
    ASSERT_EQ(a_.n_tokens(s), n * kBs);
    for (std::size_t i = 0; i < n; ++i) {
      const BlockId b = a_.block_table(s)[i];
      ASSERT_TRUE(a_.is_published(b));
      ASSERT_TRUE(std::equal(content_[b].begin(), content_[b].end(), prompt.begin(), prompt.begin() + (i + 1) * kBs) &&
                  content_[b].size() == (i + 1) * kBs)
          << "attached block " << b << " holds K/V of another prefix";
    }
    if (n < hashes.size()) {
      // The walk stopped at block n: no block is published under its hash with the prompt's
      // prefix (a forged publish may hold the hash with other tokens).
      for (BlockId o = 0; o < kBlocks; ++o) {
        if (!a_.is_published(o) || pub_hash_[o] != hashes[n]) continue;
        ASSERT_FALSE(std::equal(content_[o].begin(), content_[o].end(), prompt.begin(), prompt.begin() + (n + 1) * kBs))
            << "attach missed cached block " << o;
        ++token_misses_;
      }
    }
    seqs_[s].assign(prompt.begin(), prompt.begin() + n * kBs);
    append(s, Tokens(prompt.begin() + n * kBs, prompt.end()));  // compute the rest, if it fits
  }

  void append(SeqId s, const Tokens& more) {
    Tokens& t = seqs_[s];
    const std::size_t before = t.size();
    const std::size_t need = a_.blocks_needed(s, more.size());
    const std::uint32_t avail = a_.n_available();
    Growth g;
    if (!a_.try_append(s, more.size(), g)) {
      ++exhausted_;
      ASSERT_GT(need, avail);
      ASSERT_EQ(a_.n_available(), avail);
      ASSERT_EQ(a_.n_tokens(s), before);
      return;
    }
    t.insert(t.end(), more.begin(), more.end());
    // A copy whose source was held alone (a published partial tail) hands that source to the cache.
    const bool source_cached = g.copy && a_.refcount(g.copy->src) == 0;
    ASSERT_EQ(avail - a_.n_available(), need - (source_cached ? 1 : 0));
    const std::span<const BlockId> table = a_.block_table(s);
    if (g.copy) {
      const std::size_t start = (before / kBs) * kBs;
      ASSERT_EQ(g.copy->n_tokens, before % kBs);
      const Tokens& src = content_[g.copy->src];
      ASSERT_GE(src.size(), before);
      ASSERT_TRUE(std::equal(t.begin(), t.begin() + before, src.begin())) << "copy from a block of another prefix";
      content_[g.copy->dst].assign(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(start + g.copy->n_tokens));
    }
    // The model writes every new slot: each must lie in a block this sequence holds alone and
    // that the cache does not promise to anyone.
    for (std::size_t i = before / kBs; i < table.size() && more.size() > 0; ++i) {
      const BlockId b = table[i];
      ASSERT_EQ(a_.refcount(b), 1u) << "write into shared block " << b;
      ASSERT_FALSE(a_.is_published(b)) << "write into published block " << b;
      content_[b].assign(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(std::min(t.size(), (i + 1) * kBs)));
    }
  }

  void publish(SeqId s) {
    const Tokens& t = seqs_[s];
    const std::size_t full = t.size() / kBs;
    if (full == 0) return;
    const std::size_t i = pick(full);
    const BlockId b = a_.block_table(s)[i];
    const std::span<const std::int32_t> tokens(t.data() + i * kBs, kBs);
    const std::vector<BlockHash> chain = a_.block_hashes(t);
    BlockHash h = chain[i];
    if (pick(5) == 0) {
      // Forged: the hash of this prefix with the block's last token changed. A prompt with that
      // prefix finds the hash but not the tokens, and must not attach.
      Tokens other(tokens.begin(), tokens.end());
      bump(other.back());
      h = BlockAllocator::chain_hash(i == 0 ? BlockAllocator::kRootHash : chain[i - 1], other);
      ++forged_;
      Tokens prompt(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(i * kBs));
      prompt.insert(prompt.end(), other.begin(), other.end());
      remember(forged_prompts_, std::move(prompt));
    }
    if (a_.is_published(b)) {
      if (pub_hash_[b] == h) {
        ASSERT_TRUE(a_.publish(s, i, h, tokens));
      } else {
        ASSERT_THROW((void)a_.publish(s, i, h, tokens), Error);
      }
      return;
    }
    bool taken = false;
    for (BlockId o = 0; o < kBlocks; ++o) taken = taken || (a_.is_published(o) && pub_hash_[o] == h);
    ASSERT_EQ(a_.publish(s, i, h, tokens), !taken);
    if (taken) {
      ++rejected_;
      ASSERT_FALSE(a_.is_published(b));
    } else {
      pub_hash_[b] = h;
    }
  }

  std::mt19937_64 rng_;
  BlockAllocator a_;
  std::unordered_map<SeqId, Tokens> seqs_;
  std::vector<Tokens> history_;         // prompts of released sequences, to come back as new prompts
  std::vector<Tokens> forged_prompts_;  // prefixes whose hash a forged publish took
  std::vector<Tokens> content_;         // per block: the prefix its K/V were computed under
  std::vector<BlockHash> pub_hash_;     // per block: the hash of its last successful publish
  int exhausted_ = 0;
  int rejected_ = 0;
  int forged_ = 0;
  int token_misses_ = 0;  // lookups that found the hash but not the tokens
};

TEST(PrefixCache, RandomTrafficKeepsConsistencyAndNeverHandsOutWrongContent) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    PrefixCacheRandom(seed).run(4000);
  }
}

}  // namespace
}  // namespace wisp
