// BlockAllocator: growth block by block, fork/prefix sharing, copy-on-write reports, truncate,
// exhaustion, and a randomized interleaving of many sequences checked for consistency and leaks.
#include "kv/block_allocator.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "wisp/error.h"

namespace wisp {
namespace {

TEST(BlockAllocator, GrowsOneBlockAtATime) {
  BlockAllocator a(8, 16);
  const SeqId s = a.create();
  EXPECT_EQ(a.block_table(s).size(), 0u);
  EXPECT_FALSE(a.append(s, 1).copy);
  EXPECT_EQ(a.block_table(s).size(), 1u);
  EXPECT_FALSE(a.append(s, 15).copy);
  EXPECT_EQ(a.block_table(s).size(), 1u);  // 16 tokens fill exactly one block
  EXPECT_FALSE(a.append(s, 1).copy);
  EXPECT_EQ(a.block_table(s).size(), 2u);
  EXPECT_EQ(a.n_tokens(s), 17u);
  EXPECT_EQ(a.n_free(), 6u);
  // A fresh pool hands out blocks from 0 up.
  EXPECT_EQ(a.block_table(s)[0], 0u);
  EXPECT_EQ(a.block_table(s)[1], 1u);
  a.check_consistency();
}

TEST(BlockAllocator, ReleaseReturnsEveryBlock) {
  BlockAllocator a(4, 16);
  const SeqId s = a.create();
  (void)a.append(s, 64);
  EXPECT_EQ(a.n_free(), 0u);
  a.release(s);
  EXPECT_EQ(a.n_free(), 4u);
  EXPECT_FALSE(a.contains(s));
  EXPECT_THROW(a.n_tokens(s), Error);
  // Ids are not reused: a new sequence never answers to the released id.
  EXPECT_NE(a.create(), s);
  a.check_consistency();
}

TEST(BlockAllocator, LocateMapsPositionsThroughTheTable) {
  BlockAllocator a(8, 4);
  const SeqId x = a.create();
  const SeqId y = a.create();
  (void)a.append(x, 4);  // block 0
  (void)a.append(y, 4);  // block 1
  (void)a.append(x, 2);  // block 2
  EXPECT_EQ(a.locate(x, 3).block, 0u);
  EXPECT_EQ(a.locate(x, 3).offset, 3u);
  EXPECT_EQ(a.locate(x, 5).block, 2u);
  EXPECT_EQ(a.locate(x, 5).offset, 1u);
  EXPECT_THROW(a.locate(x, 6), Error);
}

TEST(BlockAllocator, WasteBoundOverManyLengths) {
  for (std::uint32_t bs : {1u, 3u, 16u, 32u}) {
    for (std::size_t n = 0; n <= 700; ++n) {
      BlockAllocator a(1024, bs);
      const SeqId s = a.create();
      (void)a.append(s, n);
      const std::size_t slots = a.block_table(s).size() * bs;
      ASSERT_GE(slots, n);
      ASSERT_LE(slots - n, bs - 1) << "block_size " << bs << " length " << n;
      ASSERT_EQ(a.block_table(s).size(), (n + bs - 1) / bs);
    }
  }
}

TEST(BlockAllocator, WasteBoundHoldsWhenGrowingInRandomChunks) {
  std::mt19937_64 rng(7);
  BlockAllocator a(4096, 16);
  const SeqId s = a.create();
  for (int i = 0; i < 500; ++i) {
    (void)a.append(s, rng() % 40);
    const std::size_t slots = a.block_table(s).size() * 16;
    ASSERT_LE(slots - a.n_tokens(s), 15u);
  }
}

TEST(BlockAllocator, ForkSharesPrefixBlocks) {
  BlockAllocator a(8, 16);
  const SeqId p = a.create();
  (void)a.append(p, 40);  // 3 blocks, tail holds 8
  const SeqId c = a.fork(p);
  EXPECT_EQ(a.n_tokens(c), 40u);
  ASSERT_EQ(a.block_table(c).size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(a.block_table(c)[i], a.block_table(p)[i]);
    EXPECT_EQ(a.refcount(a.block_table(p)[i]), 2u);
  }
  EXPECT_EQ(a.n_free(), 5u);  // a fork costs no blocks
  a.check_consistency();
}

TEST(BlockAllocator, AppendToForkCopiesThePartlyFilledTail) {
  BlockAllocator a(8, 16);
  const SeqId p = a.create();
  (void)a.append(p, 40);
  const BlockId shared_tail = a.block_table(p)[2];
  const SeqId c = a.fork(p);

  EXPECT_EQ(a.blocks_needed(c, 1), 1u);  // the copy
  const Growth g = a.append(c, 1);
  ASSERT_TRUE(g.copy);
  EXPECT_EQ(g.copy->src, shared_tail);
  EXPECT_NE(g.copy->dst, shared_tail);
  EXPECT_EQ(g.copy->n_tokens, 8u);  // only the filled slots move
  EXPECT_EQ(a.block_table(c)[2], g.copy->dst);
  EXPECT_EQ(a.block_table(p)[2], shared_tail);
  EXPECT_EQ(a.refcount(shared_tail), 1u);
  // The full prefix blocks stay shared.
  EXPECT_EQ(a.refcount(a.block_table(p)[0]), 2u);
  EXPECT_EQ(a.refcount(a.block_table(p)[1]), 2u);

  // The parent is now the tail's only owner: appending into it needs no copy.
  EXPECT_FALSE(a.append(p, 3).copy);
  a.check_consistency();
}

TEST(BlockAllocator, ParentAppendAlsoCopiesWhileShared) {
  BlockAllocator a(8, 16);
  const SeqId p = a.create();
  (void)a.append(p, 5);
  const SeqId c = a.fork(p);
  const Growth g = a.append(p, 1);  // either side appending first triggers the copy
  ASSERT_TRUE(g.copy);
  EXPECT_EQ(g.copy->n_tokens, 5u);
  EXPECT_EQ(a.block_table(c)[0], g.copy->src);
  EXPECT_FALSE(a.append(c, 1).copy);
  a.check_consistency();
}

TEST(BlockAllocator, ForkAtBlockBoundaryNeedsNoCopy) {
  BlockAllocator a(8, 16);
  const SeqId p = a.create();
  (void)a.append(p, 32);
  const SeqId c = a.fork(p);
  const Growth g = a.append(c, 1);
  EXPECT_FALSE(g.copy);
  EXPECT_EQ(a.block_table(c).size(), 3u);
  EXPECT_EQ(a.refcount(a.block_table(c)[1]), 2u);
  a.check_consistency();
}

TEST(BlockAllocator, TruncateIntoASharedFullBlockCopiesOnAppend) {
  // After truncation a shared block can be the tail of one sequence but full for the other:
  // appending must still copy, or the write would overwrite the other sequence's tokens.
  BlockAllocator a(8, 16);
  const SeqId p = a.create();
  (void)a.append(p, 40);
  const SeqId c = a.fork(p);
  a.truncate(c, 20);
  EXPECT_EQ(a.block_table(c).size(), 2u);
  EXPECT_EQ(a.refcount(a.block_table(p)[2]), 1u);  // the dropped block went back to p alone
  const Growth g = a.append(c, 1);
  ASSERT_TRUE(g.copy);
  EXPECT_EQ(g.copy->src, a.block_table(p)[1]);
  EXPECT_EQ(g.copy->n_tokens, 4u);
  a.check_consistency();
}

TEST(BlockAllocator, Truncate) {
  BlockAllocator a(8, 16);
  const SeqId s = a.create();
  (void)a.append(s, 50);  // 4 blocks
  a.truncate(s, 33);
  EXPECT_EQ(a.n_tokens(s), 33u);
  EXPECT_EQ(a.block_table(s).size(), 3u);
  EXPECT_EQ(a.n_free(), 5u);
  a.truncate(s, 33);  // same length: no change
  EXPECT_EQ(a.block_table(s).size(), 3u);
  a.truncate(s, 0);
  EXPECT_EQ(a.block_table(s).size(), 0u);
  EXPECT_EQ(a.n_free(), 8u);
  (void)a.append(s, 3);  // a truncated sequence grows again
  EXPECT_EQ(a.n_tokens(s), 3u);
  try {
    a.truncate(s, 4);
    FAIL() << "truncating past the end must throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds only 3"), std::string::npos) << e.what();
  }
  a.check_consistency();
}

TEST(BlockAllocator, ExhaustionIsAClearErrorAndChangesNothing) {
  BlockAllocator a(256, 16);
  const SeqId s = a.create();
  (void)a.append(s, 256 * 16);
  EXPECT_EQ(a.n_free(), 0u);
  try {
    (void)a.append(s, 1);
    FAIL() << "append on a full pool must throw";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind("KV pool exhausted: need 1 more block of 16 tokens, 0 of 256 free; sequence 0 holds 4096 "
                        "tokens in 256 blocks",
                        0),
              0u)
        << msg;
  }
  EXPECT_EQ(a.n_tokens(s), 4096u);
  Growth g;
  EXPECT_FALSE(a.try_append(s, 1, g));
  EXPECT_EQ(a.n_tokens(s), 4096u);
  a.check_consistency();
}

TEST(BlockAllocator, ExhaustionCountsTheMissingBlocks) {
  BlockAllocator a(4, 16);
  const SeqId s = a.create();
  (void)a.append(s, 17);  // 2 blocks
  try {
    (void)a.append(s, 48);  // 65 tokens take 5 blocks: 3 more, 2 free
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("need 3 more blocks of 16 tokens, 2 of 4 free"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(a.n_tokens(s), 17u);
  EXPECT_EQ(a.n_free(), 2u);
}

TEST(BlockAllocator, CopyOnWriteCountsAgainstCapacity) {
  BlockAllocator a(1, 16);
  const SeqId p = a.create();
  (void)a.append(p, 3);
  const SeqId c = a.fork(p);
  Growth g;
  EXPECT_FALSE(a.try_append(c, 1, g));  // the copy needs a free block, there is none
  EXPECT_FALSE(g.copy);
  a.release(p);
  EXPECT_TRUE(a.try_append(c, 1, g));  // c owns the block alone now: no copy
  EXPECT_FALSE(g.copy);
  a.check_consistency();
}

TEST(BlockAllocator, RejectsBadConstructionAndUnknownSequences) {
  EXPECT_THROW(BlockAllocator(0, 16), Error);
  EXPECT_THROW(BlockAllocator(4, 0), Error);
  BlockAllocator a(4, 16);
  EXPECT_THROW((void)a.append(12345, 1), Error);
  EXPECT_THROW(a.fork(12345), Error);
  EXPECT_THROW(a.release(12345), Error);
  EXPECT_THROW(a.refcount(4), Error);
}

// Many sequences sharing one pool, as a server would: random create / fork / append / truncate /
// release, consistency checked after every step, blocks_needed checked against what an append
// really took, and the pool entirely free once everything is released.
TEST(BlockAllocator, RandomInterleavingKeepsConsistencyAndLeaksNothing) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    BlockAllocator a(64, 4);
    std::vector<SeqId> live;
    int exhausted = 0;
    for (int step = 0; step < 3000; ++step) {
      const int op = static_cast<int>(rng() % 10);
      if (live.empty() || op == 0) {
        live.push_back(a.create());
      } else {
        const SeqId s = live[rng() % live.size()];
        if (op == 1) {
          live.push_back(a.fork(s));
        } else if (op <= 6) {
          const std::size_t n = rng() % 9;
          const std::size_t need = a.blocks_needed(s, n);
          const std::uint32_t free_before = a.n_free();
          const std::size_t len_before = a.n_tokens(s);
          Growth g;
          if (a.try_append(s, n, g)) {
            ASSERT_EQ(free_before - a.n_free(), need);
            ASSERT_EQ(a.n_tokens(s), len_before + n);
            if (g.copy) {
              ASSERT_EQ(g.copy->n_tokens, len_before % 4);
            }
          } else {
            ++exhausted;
            ASSERT_GT(need, free_before);
            ASSERT_EQ(a.n_free(), free_before);
            ASSERT_EQ(a.n_tokens(s), len_before);
          }
        } else if (op <= 8) {
          const std::size_t len = a.n_tokens(s);
          a.truncate(s, len == 0 ? 0 : rng() % (len + 1));
        } else {
          a.release(s);
          std::erase(live, s);
        }
      }
      ASSERT_NO_THROW(a.check_consistency()) << "seed " << seed << " step " << step;
    }
    EXPECT_GT(exhausted, 0) << "the test should reach exhaustion";
    for (SeqId s : live) a.release(s);
    EXPECT_EQ(a.n_free(), a.n_blocks()) << "blocks leaked";
    EXPECT_EQ(a.n_sequences(), 0u);
    a.check_consistency();
  }
}

}  // namespace
}  // namespace wisp
