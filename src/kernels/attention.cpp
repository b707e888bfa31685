#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "formats/half.h"
#include "formats/half_rows.h"
#include "kernels/activations.h"
#include "kernels/ggml_order.h"
#include "kernels/kernel_set.h"
#include "kernels/vec_ops.h"
#include "wisp/error.h"

namespace wisp::kernels {

namespace {

// The two ways ggml multiplies half-precision rows (both operands already half-valued floats), in
// the orders of its AVX-512 build: batched (tinyBLAS, used when the batch has 2+ tokens and
// n % 16 == 0) and one token (ggml_vec_dot_f16). Ggml16Ops (kernel_set.h) says the lanes; the
// running kernel bundle computes them.
//
// The same two products in the AVX2 build of ggml (8-lane vectors), here:
//
// Batched (tinyBLAS<8, __m256>, n % 8 == 0): one 8-lane FMA accumulator, element i in lane i % 8,
// folded by hsum8.
float dot_f16_gemm_avx2(const float* a, const float* b, std::int64_t n) {
  float acc[8] = {};
  for (std::int64_t i = 0; i < n; i += 8) {
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(a[i + l], b[i + l], acc[l]);
  }
  return ggml::hsum8(acc);
}

// One token (ggml_vec_dot_f16 on AVX2/F16C): four 8-lane accumulators over steps of 32, element i
// in accumulator (i / 8) % 4, lane i % 8; folded 0+2, 1+3, then 0+1, reduced by GGML_F32x8_REDUCE
// (hadd8) into a double; the elements past the last whole step are added in double one by one.
float dot_f16_vec_avx2(const float* a, const float* b, std::int64_t n) {
  const std::int64_t np = n - n % 32;
  float acc[4][8] = {};
  for (std::int64_t i = 0; i < np; i += 32) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 8; ++l) {
        const std::int64_t e = i + 8 * j + l;
        acc[j][l] = std::fma(a[e], b[e], acc[j][l]);
      }
    }
  }
  for (int l = 0; l < 8; ++l) {
    acc[0][l] += acc[2][l];
    acc[1][l] += acc[3][l];
  }
  for (int l = 0; l < 8; ++l) acc[0][l] += acc[1][l];
  double sum = ggml::hadd8(acc[0]);
  for (std::int64_t e = np; e < n; ++e) sum += static_cast<double>(a[e] * b[e]);
  return static_cast<float>(sum);
}

// The tree that folds the lane accumulators of one p.v dot into its outputs, as steps over rows
// of d outputs: row x += row x + s for x = k * spacing, k < count. One-token order (64 lanes: 4
// accumulators of 16): 0 += 2, 1 += 3, 0 += 1, then reduce16 (halves of 8, 4, pairs {0,2},{1,3},
// 1); batched (16 lanes): reduce16; AVX2 one-token (32 lanes, 4 x 8): 0 += 2, 1 += 3, 0 += 1,
// then hadd8 (halves of 4, then pairs {0,1},{2,3}, then 0 + 2); AVX2 batched (8): hsum8.
struct FoldStep {
  int s, count, spacing;
};
constexpr FoldStep kFold64[] = {{32, 32, 1}, {16, 16, 1}, {8, 8, 1}, {4, 4, 1}, {2, 2, 1}, {1, 1, 1}};
constexpr FoldStep kFold16[] = {{8, 8, 1}, {4, 4, 1}, {2, 2, 1}, {1, 1, 1}};
constexpr FoldStep kFold32[] = {{16, 16, 1}, {8, 8, 1}, {4, 4, 1}, {1, 2, 2}, {2, 1, 1}};
constexpr FoldStep kFold8[] = {{4, 4, 1}, {2, 2, 1}, {1, 1, 1}};

std::span<const FoldStep> fold_steps(std::int64_t lanes) {
  switch (lanes) {
    case 64: return kFold64;
    case 16: return kFold16;
    case 32: return kFold32;
    default: return kFold8;
  }
}

// out = the fold of acc's lanes (rows of d, consumed). Lanes no position reached (clear bits of
// `touched`) hold +0 without being stored: adding one is `x + 0.0f` (which turns -0 into +0, as
// the add of a stored zero would), and two of them give +0 again.
void fold_lanes(float* acc, std::int64_t d, std::int64_t lanes, std::uint64_t touched, float* out) {
  for (const FoldStep& st : fold_steps(lanes)) {
    for (int k = 0; k < st.count; ++k) {
      const int x = k * st.spacing, y = x + st.s;
      float* rx = acc + x * d;
      const float* ry = acc + y * d;
      const bool tx = (touched >> x) & 1, ty = (touched >> y) & 1;
      if (tx && ty) {
        vec::add_to(ry, rx, d);
      } else if (tx) {
        for (std::int64_t i = 0; i < d; ++i) rx[i] += 0.0f;
      } else if (ty) {
        for (std::int64_t i = 0; i < d; ++i) rx[i] = ry[i] + 0.0f;
        touched |= std::uint64_t{1} << x;
      }
    }
  }
  if ((touched & 1) != 0) {
    std::copy_n(acc, d, out);
  } else {
    std::fill_n(out, d, 0.0f);
  }
}

// The lanes that positions [lo, pos] reach.
std::uint64_t lanes_touched(std::int64_t lo, std::int64_t pos, std::int64_t lanes) {
  if (pos - lo + 1 >= lanes) return lanes == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << lanes) - 1;
  std::uint64_t bits = 0;
  for (std::int64_t t = lo; t <= pos; ++t) bits |= std::uint64_t{1} << (t % lanes);
  return bits;
}

struct Scratch {
  std::vector<float> q, scores, acc, rows;  // rows: one chunk of decoded cache rows
  std::vector<const void*> row_ptrs;
  std::vector<const float*> probs, qs;  // per query of the tile: its row of `scores`, its q row
  std::vector<float*> outs, accs;       // per query: where its scores of a run go, its lanes in `acc`
};

// Row access for the two cache forms: f32 planes are read in place; coded rows are decoded into
// the scratch chunk, except f16 rows where the kernel takes halves (`half`), read in place too.
// fill() points ptrs[j] at the row of position t0 + j of kv head h and says whether it is halves.
struct F32Rows {
  const PagedKv& kv;
  bool fill(bool values, std::int64_t t0, std::int64_t n, std::int64_t h, bool, float*, const void** ptrs) const {
    const std::span<const float* const> blocks = values ? kv.v_blocks : kv.k_blocks;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t t = t0 + j;
      ptrs[j] = blocks[t / kv.block_size] + h * kv.head_stride + (t % kv.block_size) * kv.head_dim;
    }
    return false;
  }
};

struct CodedRows {
  const PagedKvRows& kv;
  bool fill(bool values, std::int64_t t0, std::int64_t n, std::int64_t h, bool half, float* buf,
            const void** ptrs) const {
    const std::span<const std::byte* const> blocks = values ? kv.v_blocks : kv.k_blocks;
    half = half && kv.decode == &f16_bytes_to_f32_row;  // the f16 cache's rows are halves
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t t = t0 + j;
      const std::byte* row = blocks[t / kv.block_size] + h * kv.head_stride + (t % kv.block_size) * kv.row_bytes;
      if (half) {
        ptrs[j] = row;
      } else {
        kv.decode(row, buf + j * kv.head_dim, kv.head_dim);
        ptrs[j] = buf + j * kv.head_dim;
      }
    }
    return half;
  }
};

// One query head of one token in a tile: its q row and output, its head (for the sink) and the
// keys it sees, [lo, pos].
struct TileQuery {
  const float* q = nullptr;
  float* out = nullptr;
  int head = 0;
  std::int64_t lo = 0, pos = 0;
};

// The end of the run of queries from m0 that see the same keys (the query heads of one token).
int same_keys_end(std::span<const TileQuery> qs, int m0) {
  int m1 = m0 + 1;
  while (m1 < static_cast<int>(qs.size()) && qs[m1].lo == qs[m0].lo && qs[m1].pos == qs[m0].pos) ++m1;
  return m1;
}

// Cache positions per pass: the decoded rows of one chunk stay in the L2 cache (64K floats).
std::int64_t chunk_positions(std::int64_t d) { return std::max<std::int64_t>(64, 65536 / d / 64 * 64); }

// The queries of one tile, all reading kv head `kv_head`: each K and V row is fetched (decoded)
// once per tile and serves every query of it. Per query, exactly the operations of a lone query:
// its own dots, softmax and p.v lanes in position order, so its result does not depend on the
// tile it is in. Scores are laid out by cache position from 0 so ggml's groups of 16 line up
// (masked positions are -inf, then 0).
template <class Rows>
void attend_tile(std::span<const TileQuery> qs, std::int64_t kv_head, const Rows& rows, std::int64_t d,
                 std::int64_t cap, std::int64_t chunk, const AttentionParams& p, bool batched, Scratch& s) {
  const int nq = static_cast<int>(qs.size());
  std::int64_t lo_min = qs[0].lo, hi_max = qs[0].pos;
  for (const TileQuery& tq : qs) {
    lo_min = std::min(lo_min, tq.lo);
    hi_max = std::max(hi_max, tq.pos);
  }
  const bool avx2 = p.isa == ggml::Simd::kAvx2;
  const bool gemm_qk = batched && d % (avx2 ? 8 : 16) == 0;
  const Ggml16Ops& lanes16 = kernel_set().ggml16;
  // The one-token order of the AVX-512 build (the engine's default): whole runs of rows per call.
  const bool vec_rows = !gemm_qk && !avx2;
  const auto qk_dot =
      gemm_qk ? (avx2 ? dot_f16_gemm_avx2 : lanes16.dot_gemm) : (avx2 ? dot_f16_vec_avx2 : lanes16.dot_vec);

  for (int m = 0; m < nq; ++m) {
    float* q = s.q.data() + m * d;
    std::copy_n(qs[m].q, d, q);
    if (p.round_f16) round_to_f16_row(q, d);
    float* sc = s.scores.data() + m * cap;
    s.probs[static_cast<std::size_t>(m)] = sc;
    s.qs[static_cast<std::size_t>(m)] = q;
    std::fill_n(sc, qs[m].lo, -std::numeric_limits<float>::infinity());
  }
  const void** ptrs = s.row_ptrs.data();
  for (std::int64_t c0 = lo_min; c0 <= hi_max; c0 += chunk) {
    const std::int64_t c1 = std::min(c0 + chunk, hi_max + 1);
    const bool half = rows.fill(false, c0, c1 - c0, kv_head, vec_rows, s.rows.data(), ptrs);
    for (std::int64_t b0 = c0; b0 < c1; b0 += 64) {  // 64 K rows, still in L1, for every query
      const std::int64_t b1 = std::min(b0 + 64, c1);
      for (int m0 = 0; m0 < nq;) {
        const int m1 = same_keys_end(qs, m0);  // the query heads of one token: one call
        const std::int64_t a = std::max(b0, qs[m0].lo), b = std::min(b1, qs[m0].pos + 1);
        for (int m = m0; m < m1 && a < b; ++m) {
          float* sc = s.scores.data() + m * cap;
          if (vec_rows) {
            s.outs[static_cast<std::size_t>(m)] = sc + a;
          } else {
            const float* q = s.q.data() + m * d;
            for (std::int64_t t = a; t < b; ++t)
              sc[t] = qk_dot(static_cast<const float*>(ptrs[t - c0]), q, d) * p.kq_scale;
          }
        }
        if (vec_rows && a < b) {
          lanes16.dot_vec_rows(s.qs.data() + m0, m1 - m0, ptrs + (a - c0), half, b - a, d, p.kq_scale,
                               s.outs.data() + m0);
        }
        m0 = m1;
      }
    }
  }
  for (int m = 0; m < nq; ++m) {
    float* sc = s.scores.data() + m * cap;
    const std::int64_t lo = qs[m].lo, pos = qs[m].pos;
    const std::int64_t padded = (pos + 1 + 63) / 64 * 64;
    if (p.logit_softcap > 0.0f) softcap(sc + lo, pos - lo + 1, p.logit_softcap);
    // ggml's KV view is padded (to 256 positions); the padding is masked to -inf and becomes
    // exact zeros, which change no sum, but it puts every valid score in a whole group of 16, all
    // through the vector exp. Padding to 64 reproduces that (and the whole 64-steps of the
    // one-token dot).
    std::fill(sc + pos + 1, sc + padded, -std::numeric_limits<float>::infinity());
    if (p.sinks != nullptr) {
      softmax_with_sink(sc, padded, p.sinks[qs[m].head], p.isa);
    } else {
      softmax(sc, padded, p.isa);
    }
    if (p.round_f16) round_to_f16_row(sc, padded);  // the probabilities, in place
  }

  // out[i] = sum_t probs[t] * v[t][i], in the lanes of the same two dot orders: the batched order
  // puts position t in lane t % 16, the one-token order in accumulator (t / 16) % 4, lane t % 16,
  // i.e. lane t % 64 of 64 (AVX2: lane t % 8, and lane t % 32 of the 4 x 8). Lanes are kept as
  // rows of d outputs (acc[lane * d + i]) so that one position's term is a contiguous FMA over its
  // V row; each lane sees its terms in position order, chunk after chunk. The padding and the
  // masked positions have probability 0 and would add exact zeros: skipped. The query heads of one
  // token (same positions) run together, so each V row load serves all of them.
  const std::int64_t lanes = avx2 ? (batched ? 8 : 32) : (batched ? 16 : 64);
  for (int m = 0; m < nq; ++m) {
    s.accs[static_cast<std::size_t>(m)] = s.acc.data() + m * lanes * d;
    // A first chunk too short to reach every lane of a range that goes on: the others start at 0.
    const std::int64_t first_end = std::min(qs[m].pos + 1, (qs[m].lo - lo_min) / chunk * chunk + lo_min + chunk);
    if (first_end - qs[m].lo < lanes && first_end <= qs[m].pos) std::fill_n(s.accs[m], lanes * d, 0.0f);
  }
  for (std::int64_t c0 = lo_min; c0 <= hi_max; c0 += chunk) {
    const std::int64_t c1 = std::min(c0 + chunk, hi_max + 1);
    const bool half = rows.fill(true, c0, c1 - c0, kv_head, true, s.rows.data(), ptrs);
    for (int m0 = 0; m0 < nq;) {
      const int m1 = same_keys_end(qs, m0);
      const std::int64_t lo = qs[m0].lo, a = std::max(lo, c0), b = std::min(qs[m0].pos + 1, c1);
      if (a < b) {
        const std::int64_t first_end = std::min(qs[m0].pos + 1, (lo - lo_min) / chunk * chunk + lo_min + chunk);
        const bool init = a == lo && !(first_end - lo < lanes && first_end <= qs[m0].pos);
        lanes16.fma_lanes(s.probs.data() + m0, m1 - m0, ptrs + (a - c0), half, a, b - a, d, lanes, init,
                          s.accs.data() + m0);
      }
      m0 = m1;
    }
  }
  for (int m = 0; m < nq; ++m) {
    fold_lanes(s.accs[static_cast<std::size_t>(m)], d, lanes, lanes_touched(qs[m].lo, qs[m].pos, lanes), qs[m].out);
  }
}

template <class Kv>
void check_segment(const AttentionSegment<Kv>& sg, const AttentionParams& p) {
  if (p.n_kv_heads <= 0 || p.n_heads % p.n_kv_heads != 0) {
    throw Error("attention: " + std::to_string(p.n_heads) + " query heads do not divide into " +
                std::to_string(p.n_kv_heads) + " kv heads");
  }
  if (sg.n_tok <= 0) return;
  const std::int64_t last = sg.pos0 + sg.n_tok - 1;
  if (static_cast<std::int64_t>(sg.kv.k_blocks.size()) * sg.kv.block_size <= last ||
      sg.kv.v_blocks.size() != sg.kv.k_blocks.size()) {
    throw Error("attention: the KV block table covers " + std::to_string(sg.kv.k_blocks.size() * sg.kv.block_size) +
                " positions, the batch reaches position " + std::to_string(last));
  }
}

// A run of consecutive tokens of one segment that share their K/V passes.
struct Tile {
  std::size_t seg = 0;
  std::int64_t t0 = 0, n = 0;
};

// How many tokens a tile takes: up to 32 queries (tokens x the query heads of one kv head),
// within scratch budgets for the lane accumulators (64 lanes of d per query) and the score rows.
std::int64_t tile_tokens(int heads_per_item, std::int64_t d, std::int64_t cap) {
  const std::int64_t by_acc = (std::int64_t{1} << 17) / (64 * d);
  const std::int64_t by_scores = (std::int64_t{1} << 20) / cap;
  const std::int64_t queries = std::min<std::int64_t>({32, by_acc, by_scores});
  return std::max<std::int64_t>(1, queries / heads_per_item);
}

// All segments' tokens form one parallel job on the pool.
template <class Kv, class MakeRows>
void attention_over(std::span<const AttentionSegment<Kv>> segs, const AttentionParams& p, MakeRows&& make_rows,
                    ThreadPool& pool) {
  std::int64_t n_tok = 0;
  std::int64_t max_last = 0;
  std::int64_t d = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    check_segment(segs[i], p);
    const std::int64_t n = std::max<std::int64_t>(0, segs[i].n_tok);
    n_tok += n;
    if (n > 0) {
      max_last = std::max(max_last, segs[i].pos0 + n - 1);
      d = segs[i].kv.head_dim;
    }
  }
  if (n_tok <= 0) return;
  const int group = p.n_heads / p.n_kv_heads;
  // ggml multiplies a batch of 2+ tokens with tinyBLAS and a single token with vec_dot: different
  // float orders, reproduced as such (see ggml_order.h). Batch-invariant attention keeps the
  // one-token order for every query.
  const auto batched = [&](const AttentionSegment<Kv>& sg) { return !p.batch_invariant && sg.n_tok >= 2; };
  const std::int64_t cap = (max_last + 1 + 63) / 64 * 64;

  // A batch shares each K/V row among the query heads of its kv head and the tokens of a tile
  // (one work item per tile and kv head: plenty of items); a single token keeps one item per
  // query head, so its few items still spread over the threads. Per query the operations are the
  // same either way.
  const int per_item = n_tok >= 2 ? group : 1;
  const std::int64_t heads_per_token = p.n_heads / per_item;
  const std::int64_t per_tile = n_tok >= 2 ? tile_tokens(per_item, d, cap) : 1;
  std::vector<Tile> tiles;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    for (std::int64_t t = 0; t < segs[i].n_tok; t += per_tile)
      tiles.push_back({i, t, std::min(per_tile, segs[i].n_tok - t)});
  }
  const auto n_tiles = static_cast<std::int64_t>(tiles.size());
  const std::int64_t n_items = n_tiles * heads_per_token;
  const std::int64_t max_q = per_tile * per_item;
  const std::int64_t chunk = std::min(chunk_positions(d), cap);
  pool.parallel_for(n_items, [&](std::int64_t begin, std::int64_t end) {
    const auto mq = static_cast<std::size_t>(max_q);
    const auto ud = static_cast<std::size_t>(d);
    Scratch s{std::vector<float>(mq * ud),
              std::vector<float>(mq * static_cast<std::size_t>(cap)),
              std::vector<float>(mq * 64 * ud),
              std::vector<float>(static_cast<std::size_t>(chunk) * ud),
              std::vector<const void*>(static_cast<std::size_t>(chunk)),
              std::vector<const float*>(mq),
              std::vector<const float*>(mq),
              std::vector<float*>(mq),
              std::vector<float*>(mq)};
    std::vector<TileQuery> qs;
    for (std::int64_t item = begin; item < end; ++item) {
      // Tiles in zig-zag order (0, n-1, 1, n-2, ...) over the whole batch: a causal query's cost
      // grows with its position, so contiguous ranges of this order carry similar work.
      const std::int64_t k = item / heads_per_token;
      const Tile& tile = tiles[static_cast<std::size_t>(k % 2 == 0 ? k / 2 : n_tiles - 1 - k / 2)];
      const AttentionSegment<Kv>& sg = segs[tile.seg];
      const int h0 = static_cast<int>(item % heads_per_token) * per_item;
      qs.clear();
      for (std::int64_t t = tile.t0; t < tile.t0 + tile.n; ++t) {
        const std::int64_t pos = sg.pos0 + t;
        const std::int64_t lo = p.window > 0 ? std::max<std::int64_t>(0, pos - p.window + 1) : 0;
        for (int h = h0; h < h0 + per_item; ++h) {
          qs.push_back({sg.q + t * sg.q_stride + h * d, sg.out + t * sg.out_stride + h * d, h, lo, pos});
        }
      }
      attend_tile(std::span<const TileQuery>(qs), h0 / group, make_rows(sg.kv), d, cap, chunk, p, batched(sg), s);
    }
  });
}

}  // namespace

namespace {

template <class Kv>
AttentionSegment<Kv> one_segment(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0,
                                 const Kv& kv, float* out, std::int64_t out_stride) {
  return {q, q_stride, n_tok, pos0, kv, out, out_stride};
}

constexpr auto f32_rows = [](const PagedKv& kv) { return F32Rows{kv}; };
constexpr auto coded_rows = [](const PagedKvRows& kv) { return CodedRows{kv}; };

}  // namespace

void attention(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const PagedKv& kv,
               const AttentionParams& p, float* out, std::int64_t out_stride, ThreadPool& pool) {
  const auto sg = one_segment(q, q_stride, n_tok, pos0, kv, out, out_stride);
  attention_over(std::span(&sg, 1), p, f32_rows, pool);
}

void attention(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const PagedKvRows& kv,
               const AttentionParams& p, float* out, std::int64_t out_stride, ThreadPool& pool) {
  const auto sg = one_segment(q, q_stride, n_tok, pos0, kv, out, out_stride);
  attention_over(std::span(&sg, 1), p, coded_rows, pool);
}

void attention(std::span<const AttentionSegment<PagedKv>> segs, const AttentionParams& p, ThreadPool& pool) {
  attention_over(segs, p, f32_rows, pool);
}

void attention(std::span<const AttentionSegment<PagedKvRows>> segs, const AttentionParams& p, ThreadPool& pool) {
  attention_over(segs, p, coded_rows, pool);
}

}  // namespace wisp::kernels
