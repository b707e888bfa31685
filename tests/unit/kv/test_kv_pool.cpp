// KvPool: byte arithmetic (against the seeds' worked numbers), the block layout, K/V round trips
// through the block table for interleaved sequences, copy-on-write keeping forks' data apart,
// the storage seam, exhaustion, and the RAII sequence handle.
#include "kv/kv_pool.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kv/kv_sequence.h"
#include "wisp/error.h"

namespace wisp {
namespace {

KvLayout small_layout(std::uint32_t block_size = 4) {
  KvLayout l;
  l.n_layers = 3;
  l.n_kv_heads = 2;
  l.head_dim = 8;
  l.block_size = block_size;
  return l;
}

// A value unique to (sequence tag, layer, K|V, head, position, dim), exactly representable.
float tagged(int tag, std::uint32_t layer, int kind, std::uint32_t head, std::size_t pos, std::uint32_t d) {
  return static_cast<float>(
      ((((tag * 8 + static_cast<int>(layer)) * 2 + kind) * 4 + static_cast<int>(head)) * 512 + static_cast<int>(pos)) *
          16 +
      static_cast<int>(d));
}

// Appends one token to `seq` and writes its tagged K/V for every layer.
void append_token(KvPool& pool, SeqId seq, int tag) {
  const KvLayout& l = pool.layout();
  const std::size_t pos = pool.n_tokens(seq);
  pool.append(seq, 1);
  std::vector<float> k(l.n_kv_heads * l.head_dim), v(k.size());
  for (std::uint32_t layer = 0; layer < l.n_layers; ++layer) {
    for (std::uint32_t h = 0; h < l.n_kv_heads; ++h) {
      for (std::uint32_t d = 0; d < l.head_dim; ++d) {
        k[h * l.head_dim + d] = tagged(tag, layer, 0, h, pos, d);
        v[h * l.head_dim + d] = tagged(tag, layer, 1, h, pos, d);
      }
    }
    pool.write(seq, layer, pos, k, v);
  }
}

// Checks positions [from, to) of `seq` hold `tag`'s values.
void expect_tokens(const KvPool& pool, SeqId seq, int tag, std::size_t from, std::size_t to) {
  const KvLayout& l = pool.layout();
  for (std::size_t pos = from; pos < to; ++pos) {
    for (std::uint32_t layer = 0; layer < l.n_layers; ++layer) {
      for (std::uint32_t h = 0; h < l.n_kv_heads; ++h) {
        const float* k = pool.k(seq, layer, h, pos);
        const float* v = pool.v(seq, layer, h, pos);
        for (std::uint32_t d = 0; d < l.head_dim; ++d) {
          ASSERT_EQ(k[d], tagged(tag, layer, 0, h, pos, d)) << "seq " << seq << " pos " << pos << " layer " << layer;
          ASSERT_EQ(v[d], tagged(tag, layer, 1, h, pos, d)) << "seq " << seq << " pos " << pos << " layer " << layer;
        }
      }
    }
  }
}

TEST(KvLayout, BytesPerTokenMatchesTheSeedExample) {
  // shared/seeds: a 70B model with GQA, 80 layers, 8 KV heads, 128 per head, 2 bytes each:
  // 327,680 bytes per token; an 8,000-token conversation takes 2.6 GB.
  KvLayout l;
  l.n_layers = 80;
  l.n_kv_heads = 8;
  l.head_dim = 128;
  l.type = KvType::kF16;
  EXPECT_EQ(l.bytes_per_token(), 327680u);
  EXPECT_EQ(l.bytes_per_token() * 8000, 2621440000u);
  EXPECT_EQ(l.bytes_per_block(), 327680u * 16);
  l.type = KvType::kF32;
  EXPECT_EQ(l.bytes_per_token(), 655360u);
}

TEST(KvLayout, RowsOfOneHeadAreContiguousTokens) {
  const KvLayout l = small_layout();
  EXPECT_EQ(l.row_offset(0, KvKind::kKey, 0, 1) - l.row_offset(0, KvKind::kKey, 0, 0), l.row_bytes());
  EXPECT_EQ(l.row_offset(0, KvKind::kKey, 1, 0), l.plane_bytes());
  EXPECT_EQ(l.row_offset(0, KvKind::kValue, 0, 0), 2 * l.plane_bytes());
  EXPECT_EQ(l.row_offset(1, KvKind::kKey, 0, 0), 4 * l.plane_bytes());
  // The last row ends exactly at the end of the block.
  EXPECT_EQ(l.row_offset(l.n_layers - 1, KvKind::kValue, l.n_kv_heads - 1, l.block_size - 1) + l.row_bytes(),
            l.bytes_per_block());
}

TEST(KvLayout, RejectsZeroDimensions) {
  KvLayout l = small_layout();
  l.head_dim = 0;
  EXPECT_THROW(l.validate(), Error);
  EXPECT_THROW(KvPool(l, 4), Error);
  EXPECT_THROW(KvPool(small_layout(), 0), Error);
}

TEST(KvPool, AccountingInBytes) {
  KvPool pool(small_layout(4), 16);
  const std::size_t per_token = 2 * 3 * 2 * 8 * 4;
  EXPECT_EQ(pool.bytes_per_token(), per_token);
  EXPECT_EQ(pool.bytes_total(), 16 * 4 * per_token);
  const SeqId s = pool.create_sequence();
  pool.append(s, 5);  // 2 blocks: 3 slots of tail waste
  EXPECT_EQ(pool.bytes_held(s), 2 * 4 * per_token);
  const SeqId f = pool.fork(s);
  EXPECT_EQ(pool.bytes_held(f), 2 * 4 * per_token);   // each holder counts shared blocks
  EXPECT_EQ(pool.bytes_in_use(), 2 * 4 * per_token);  // the pool counts them once
  pool.free_sequence(s);
  pool.free_sequence(f);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

TEST(KvPool, WriteReadRoundTripForInterleavedSequences) {
  KvPool pool(small_layout(4), 64);
  std::vector<SeqId> seqs;
  for (int i = 0; i < 5; ++i) seqs.push_back(pool.create_sequence());
  // Sequences grow in turn, so their blocks interleave in the pool.
  std::mt19937_64 rng(3);
  for (int step = 0; step < 120; ++step) {
    const int i = static_cast<int>(rng() % seqs.size());
    append_token(pool, seqs[i], i);
  }
  for (int i = 0; i < 5; ++i) expect_tokens(pool, seqs[i], i, 0, pool.n_tokens(seqs[i]));
  for (SeqId s : seqs) pool.free_sequence(s);
  EXPECT_EQ(pool.allocator().n_free(), 64u);
}

TEST(KvPool, BlockPlanesMatchPerTokenAccess) {
  KvPool pool(small_layout(4), 8);
  const SeqId s = pool.create_sequence();
  for (int t = 0; t < 10; ++t) append_token(pool, s, 1);
  const auto table = pool.block_table(s);
  ASSERT_EQ(table.size(), 3u);
  for (std::size_t b = 0; b < table.size(); ++b) {
    for (std::uint32_t slot = 0; slot < 4 && b * 4 + slot < 10; ++slot) {
      EXPECT_EQ(pool.keys(table[b], 2, 1) + slot * 8, pool.k(s, 2, 1, b * 4 + slot));
      EXPECT_EQ(pool.values(table[b], 0, 0) + slot * 8, pool.v(s, 0, 0, b * 4 + slot));
    }
  }
}

TEST(KvPool, ForksDivergeWithoutCorruptingEachOther) {
  KvPool pool(small_layout(4), 32);
  const SeqId a = pool.create_sequence();
  for (int t = 0; t < 10; ++t) append_token(pool, a, 1);  // blocks: 4 + 4 + 2 (shared tail partly filled)
  const SeqId b = pool.fork(a);
  const SeqId c = pool.fork(a);
  for (int t = 0; t < 7; ++t) append_token(pool, b, 2);
  for (int t = 0; t < 3; ++t) append_token(pool, a, 3);
  for (int t = 0; t < 5; ++t) append_token(pool, c, 4);

  // Each side sees the common prefix, then only its own continuation.
  expect_tokens(pool, a, 1, 0, 10);
  expect_tokens(pool, a, 3, 10, 13);
  expect_tokens(pool, b, 1, 0, 10);
  expect_tokens(pool, b, 2, 10, 17);
  expect_tokens(pool, c, 1, 0, 10);
  expect_tokens(pool, c, 4, 10, 15);
  // The two full prefix blocks are still shared by all three.
  EXPECT_EQ(pool.block_table(a)[0], pool.block_table(b)[0]);
  EXPECT_EQ(pool.allocator().refcount(pool.block_table(a)[1]), 3u);

  pool.free_sequence(a);
  expect_tokens(pool, b, 1, 0, 10);
  pool.free_sequence(b);
  pool.free_sequence(c);
  EXPECT_EQ(pool.allocator().n_free(), 32u);
}

TEST(KvPool, TruncateThenRegrowOverwritesOnlyOwnTokens) {
  KvPool pool(small_layout(4), 16);
  const SeqId a = pool.create_sequence();
  for (int t = 0; t < 12; ++t) append_token(pool, a, 1);
  const SeqId b = pool.fork(a);
  pool.truncate(b, 6);  // b's tail is a's full block 1
  for (int t = 0; t < 4; ++t) append_token(pool, b, 2);
  expect_tokens(pool, a, 1, 0, 12);
  expect_tokens(pool, b, 1, 0, 6);
  expect_tokens(pool, b, 2, 6, 10);
}

TEST(KvPool, WritingIntoASharedBlockThrows) {
  KvPool pool(small_layout(4), 8);
  const SeqId a = pool.create_sequence();
  for (int t = 0; t < 3; ++t) append_token(pool, a, 1);
  const SeqId b = pool.fork(a);
  std::vector<float> row(2 * 8, 0.0f);
  EXPECT_THROW(pool.write(b, 0, 1, row, row), Error);
  EXPECT_THROW(pool.write(a, 0, 3, row, row), Error);  // not reserved yet
  std::vector<float> short_row(5);
  pool.append(b, 1);
  EXPECT_THROW(pool.write(b, 0, 3, short_row, short_row), Error);
  EXPECT_THROW(pool.write(b, 3, 3, row, row), Error);  // layer out of range
  expect_tokens(pool, a, 1, 0, 3);
}

TEST(KvPool, ExhaustionThrowsOrReturnsFalse) {
  KvPool pool(small_layout(16), 2);
  const SeqId s = pool.create_sequence();
  pool.append(s, 32);
  try {
    pool.append(s, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("KV pool exhausted: need 1 more block of 16 tokens, 0 of 2 free"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(pool.try_append(s, 1));
  EXPECT_EQ(pool.n_tokens(s), 32u);
  pool.truncate(s, 16);
  EXPECT_TRUE(pool.try_append(s, 16));
}

TEST(KvPool, FloatAccessorsNeedF32Storage) {
  // Every type has host storage; the float accessors, which hand out rows in place, only for f32
  // (coded rows are read through plane_data and kv_quant.h's decoders).
  KvLayout l = small_layout();
  l.type = KvType::kF16;
  KvPool pool(l, 4);
  const SeqId s = pool.create_sequence();
  pool.append(s, 1);
  EXPECT_NE(pool.plane_data(pool.block_table(s)[0], 0, KvKind::kKey, 0), nullptr);
  try {
    (void)pool.k(s, 0, 0, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f16"), std::string::npos) << e.what();
  }
}

// A storage that lives "elsewhere" (as device memory would): no host addresses, copies recorded.
class RecordingStorage final : public KvStorage {
 public:
  explicit RecordingStorage(KvLayout l) : layout_(l) {}
  const KvLayout& layout() const override { return layout_; }
  std::uint32_t n_blocks() const override { return 8; }
  void copy_block(const BlockCopy& c) override { copies.push_back(c); }
  std::byte* host_block(BlockId) override { return nullptr; }
  std::vector<BlockCopy> copies;

 private:
  KvLayout layout_;
};

TEST(KvPool, StorageSeamReceivesCopiesAndRefusesHostAccess) {
  auto storage = std::make_unique<RecordingStorage>(small_layout(4));
  RecordingStorage* rec = storage.get();
  KvPool pool(std::move(storage));
  const SeqId a = pool.create_sequence();
  pool.append(a, 6);
  const SeqId b = pool.fork(a);
  pool.append(b, 1);
  ASSERT_EQ(rec->copies.size(), 1u);
  EXPECT_EQ(rec->copies[0].src, pool.block_table(a)[1]);
  EXPECT_EQ(rec->copies[0].dst, pool.block_table(b)[1]);
  EXPECT_EQ(rec->copies[0].n_tokens, 2u);
  try {
    (void)pool.k(a, 0, 0, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device memory"), std::string::npos) << e.what();
  }
}

TEST(KvSequence, HandleFreesItsBlocks) {
  KvPool pool(small_layout(4), 8);
  {
    KvSequence s(pool);
    append_token(pool, s.id(), 1);
    append_token(pool, s.id(), 1);
    KvSequence f = s.fork();
    EXPECT_EQ(f.n_tokens(), 2u);
    append_token(pool, f.id(), 2);  // copy-on-write: 2 blocks in use
    EXPECT_EQ(pool.allocator().n_free(), 6u);
    KvSequence moved = std::move(f);
    EXPECT_FALSE(f.valid());  // NOLINT(bugprone-use-after-move): checking the moved-from state
    expect_tokens(pool, moved.id(), 2, 2, 3);
  }
  EXPECT_EQ(pool.allocator().n_free(), 8u);
  EXPECT_EQ(pool.allocator().n_sequences(), 0u);
}

}  // namespace
}  // namespace wisp
