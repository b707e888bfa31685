// Attention over a quantized paged KV cache (f16, q8_0, q4 rows decoded as they are read) against
// the f32 kernel over a pool holding the dequantized values: the same arithmetic runs after
// decoding, so the outputs must be identical, for single tokens and batches, GQA and windows.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/attention.h"
#include "kv/kv_pool.h"
#include "kv/kv_quant.h"
#include "wisp/error.h"

namespace wisp {
namespace {

constexpr std::uint32_t kHeadDim = 64;
constexpr std::uint32_t kKvHeads = 2;
constexpr int kHeads = 6;

std::vector<float> random_values(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.5f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// Output of attention for n_tok queries after pos0 cached tokens, over the pool of type t, and
// over an f32 pool whose rows are the decoded rows of the first.
void compare(KvType t, std::int64_t n_past, std::int64_t n_tok, std::int64_t window, unsigned seed) {
  KvLayout lq;
  lq.n_layers = 1;
  lq.n_kv_heads = kKvHeads;
  lq.head_dim = kHeadDim;
  lq.block_size = 16;
  lq.type = t;
  KvLayout lf = lq;
  lf.type = KvType::kF32;
  const std::int64_t n = n_past + n_tok;
  const auto blocks = static_cast<std::uint32_t>((n + 15) / 16 + 2);
  KvPool pq(lq, blocks), pf(lf, blocks);
  const SeqId sq = pq.create_sequence(), sf = pf.create_sequence();
  pq.append(sq, 3);  // misalign: the pools hand out different blocks for the same positions
  pq.free_sequence(sq);
  const SeqId sq2 = pq.create_sequence();
  pq.append(sq2, static_cast<std::size_t>(n));
  pf.append(sf, static_cast<std::size_t>(n));

  std::mt19937 rng(seed);
  std::vector<float> row(kHeadDim);
  for (std::int64_t pos = 0; pos < n; ++pos) {
    const auto k = random_values(kKvHeads * kHeadDim, rng);
    const auto v = random_values(kKvHeads * kHeadDim, rng);
    pq.write(sq2, 0, static_cast<std::size_t>(pos), k, v);
    // The f32 pool gets what the coded pool decodes to.
    std::vector<float> kd(k.size()), vd(v.size());
    const KvLayout& l = pq.layout();
    const BlockId b = pq.block_table(sq2)[static_cast<std::size_t>(pos) / 16];
    for (std::uint32_t h = 0; h < kKvHeads; ++h) {
      const std::size_t off = (static_cast<std::size_t>(pos) % 16) * l.row_bytes();
      kv_decode_row(t, pq.plane_data(b, 0, KvKind::kKey, h) + off, kHeadDim, kd.data() + h * kHeadDim);
      kv_decode_row(t, pq.plane_data(b, 0, KvKind::kValue, h) + off, kHeadDim, vd.data() + h * kHeadDim);
    }
    pf.write(sf, 0, static_cast<std::size_t>(pos), kd, vd);
  }

  const auto q = random_values(static_cast<std::size_t>(n_tok * kHeads * kHeadDim), rng);
  kernels::AttentionParams p;
  p.n_heads = kHeads;
  p.n_kv_heads = kKvHeads;
  p.kq_scale = 0.125f;
  p.window = window;
  p.round_f16 = true;

  std::vector<const std::byte*> kb, vb;
  for (BlockId b : pq.block_table(sq2)) {
    kb.push_back(pq.plane_data(b, 0, KvKind::kKey, 0));
    vb.push_back(pq.plane_data(b, 0, KvKind::kValue, 0));
  }
  kernels::PagedKvRows coded;
  coded.k_blocks = kb;
  coded.v_blocks = vb;
  coded.head_stride = static_cast<std::int64_t>(lq.plane_bytes());
  coded.row_bytes = static_cast<std::int64_t>(lq.row_bytes());
  coded.block_size = 16;
  coded.head_dim = kHeadDim;
  coded.decode = kv_row_decoder(t);

  std::vector<const float*> kf, vf;
  for (BlockId b : pf.block_table(sf)) {
    kf.push_back(pf.keys(b, 0, 0));
    vf.push_back(pf.values(b, 0, 0));
  }
  kernels::PagedKv plain;
  plain.k_blocks = kf;
  plain.v_blocks = vf;
  plain.head_stride = 16 * kHeadDim;
  plain.block_size = 16;
  plain.head_dim = kHeadDim;

  const std::int64_t width = kHeads * kHeadDim;
  std::vector<float> out_q(static_cast<std::size_t>(n_tok * width)), out_f(out_q.size());
  ThreadPool two(2), one(1);
  kernels::attention(q.data(), width, n_tok, n_past, coded, p, out_q.data(), width, two);
  kernels::attention(q.data(), width, n_tok, n_past, plain, p, out_f.data(), width, one);
  for (std::size_t i = 0; i < out_q.size(); ++i) {
    ASSERT_EQ(out_q[i], out_f[i]) << kv_type_name(t) << " n_past " << n_past << " n_tok " << n_tok << " at " << i;
  }
}

TEST(QuantizedAttention, EqualsF32AttentionOverTheDecodedValues) {
  unsigned seed = 1;
  for (KvType t : {KvType::kF16, KvType::kQ8_0, KvType::kQ4}) {
    compare(t, 0, 1, 0, seed++);    // first token
    compare(t, 40, 1, 0, seed++);   // one decode step over 2.5 blocks
    compare(t, 0, 37, 0, seed++);   // a batched prompt
    compare(t, 70, 5, 0, seed++);   // a batch after a prefix
    compare(t, 90, 3, 24, seed++);  // sliding window
  }
}

TEST(QuantizedAttention, MissingDecoderIsAnError) {
  kernels::PagedKvRows kv;
  kernels::AttentionParams p;
  p.n_heads = 1;
  p.n_kv_heads = 1;
  float q = 0, out = 0;
  ThreadPool pool(1);
  EXPECT_THROW(kernels::attention(&q, 1, 1, 0, kv, p, &out, 1, pool), Error);
}

}  // namespace
}  // namespace wisp
