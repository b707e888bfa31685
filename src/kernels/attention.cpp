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

// row[i] = fma(v[i], w, row[i]) for i < d: one position's term added to one lane of every output.
inline void axpy_lane(const float* v, float w, float* row, std::int64_t d) { vec::fma_scalar(v, w, row, d); }

// out[i] = reduce16 over the 16 lane rows acc[l * d + i] (l < 16), computed for all i at once:
// the same additions as reduce16, each on a whole row.
void reduce16_rows(const float* acc, std::int64_t d, float* out) {
  for (std::int64_t i = 0; i < d; ++i) {
    float t[8];
    for (int l = 0; l < 8; ++l) t[l] = acc[(8 + l) * d + i] + acc[l * d + i];
    const float u0 = t[4] + t[0], u1 = t[5] + t[1], u2 = t[6] + t[2], u3 = t[7] + t[3];
    out[i] = (u0 + u2) + (u1 + u3);
  }
}

// The 8-lane folds of the AVX2 build, row-wise as reduce16_rows: hsum8 (tinyBLAS) and hadd8
// (the one-token dot's GGML_F32x8_REDUCE).
void fold8_rows(const float* acc, std::int64_t d, bool hadd, float* out) {
  for (std::int64_t i = 0; i < d; ++i) {
    float t[8];
    for (int l = 0; l < 8; ++l) t[l] = acc[l * d + i];
    out[i] = hadd ? ggml::hadd8(t) : ggml::hsum8(t);
  }
}

struct Scratch {
  std::vector<float> q, scores, probs, acc, row;
};

// Row access for the two cache forms: f32 planes are read in place; coded rows are decoded into
// the scratch row (one head_dim tile) and read from there.
struct F32Rows {
  const PagedKv& kv;
  const float* key(std::int64_t t, std::int64_t h, float*) const { return at(kv.k_blocks, t, h); }
  const float* value(std::int64_t t, std::int64_t h, float*) const { return at(kv.v_blocks, t, h); }
  const float* at(std::span<const float* const> blocks, std::int64_t t, std::int64_t h) const {
    return blocks[t / kv.block_size] + h * kv.head_stride + (t % kv.block_size) * kv.head_dim;
  }
};

struct CodedRows {
  const PagedKvRows& kv;
  const float* key(std::int64_t t, std::int64_t h, float* buf) const { return at(kv.k_blocks, t, h, buf); }
  const float* value(std::int64_t t, std::int64_t h, float* buf) const { return at(kv.v_blocks, t, h, buf); }
  const float* at(std::span<const std::byte* const> blocks, std::int64_t t, std::int64_t h, float* buf) const {
    kv.decode(blocks[t / kv.block_size] + h * kv.head_stride + (t % kv.block_size) * kv.row_bytes, buf, kv.head_dim);
    return buf;
  }
};

// Query heads head0 .. head0 + nh - 1 of one token at position `pos`, all reading kv head `kv_head`,
// against the keys [lo, pos]: each K and V row is fetched (decoded) once for the nh heads. Per
// head, exactly the operations of a lone head. Scores are laid out by cache position from 0 so
// ggml's groups of 16 line up (masked positions are -inf, then 0).
template <class Rows>
void attend_heads(const float* q_in, int head0, int nh, std::int64_t lo, std::int64_t pos, std::int64_t kv_head,
                  const Rows& rows, std::int64_t d, const AttentionParams& p, bool batched, float* out, Scratch& s) {
  const std::int64_t n = pos + 1;
  const std::int64_t padded = (n + 63) / 64 * 64;
  const std::int64_t cap = static_cast<std::int64_t>(s.scores.size()) / nh;
  std::copy_n(q_in, nh * d, s.q.data());
  if (p.round_f16) round_to_f16_row(s.q.data(), nh * d);
  const bool avx2 = p.isa == ggml::Simd::kAvx2;
  const bool gemm_qk = batched && d % (avx2 ? 8 : 16) == 0;
  const Ggml16Ops& lanes16 = kernel_set().ggml16;
  const auto qk_dot =
      gemm_qk ? (avx2 ? dot_f16_gemm_avx2 : lanes16.dot_gemm) : (avx2 ? dot_f16_vec_avx2 : lanes16.dot_vec);

  for (int g = 0; g < nh; ++g) std::fill_n(s.scores.data() + g * cap, lo, -std::numeric_limits<float>::infinity());
  for (std::int64_t t = lo; t <= pos; ++t) {
    const float* k = rows.key(t, kv_head, s.row.data());
    for (int g = 0; g < nh; ++g) {
      const float* qg = s.q.data() + g * d;
      const float dot = qk_dot(k, qg, d);
      s.scores[static_cast<std::size_t>(g * cap + t)] = dot * p.kq_scale;
    }
  }
  for (int g = 0; g < nh; ++g) {
    float* sc = s.scores.data() + g * cap;
    if (p.logit_softcap > 0.0f) softcap(sc + lo, pos - lo + 1, p.logit_softcap);
    // ggml's KV view is padded (to 256 positions); the padding is masked to -inf and becomes
    // exact zeros, which change no sum, but it puts every valid score in a whole group of 16, all
    // through the vector exp. Padding to 64 reproduces that (and the whole 64-steps of the
    // one-token dot).
    std::fill(sc + n, sc + padded, -std::numeric_limits<float>::infinity());
    if (p.sinks != nullptr) {
      softmax_with_sink(sc, padded, p.sinks[head0 + g], p.isa);
    } else {
      softmax(sc, padded, p.isa);
    }
    float* pr = s.probs.data() + g * cap;
    std::copy_n(sc, padded, pr);
    if (p.round_f16) round_to_f16_row(pr, padded);
  }

  // out[i] = sum_t probs[t] * v[t][i], in the lanes of the same two dot orders: the batched order
  // puts position t in lane t % 16, the one-token order in accumulator (t / 16) % 4, lane t % 16,
  // i.e. lane t % 64 of 64 (AVX2: lane t % 8, and lane t % 32 of the 4 x 8). Lanes are kept as
  // rows of d outputs (acc[lane * d + i]) so that one position's term is a contiguous FMA over its
  // V row; each lane still sees its terms in position order. The padding and the masked positions
  // have probability 0 and would add exact zeros: skipped.
  const std::int64_t lanes = avx2 ? (batched ? 8 : 32) : (batched ? 16 : 64);
  std::fill_n(s.acc.data(), nh * lanes * d, 0.0f);
  for (std::int64_t t = lo; t <= pos; ++t) {
    const float* v = rows.value(t, kv_head, s.row.data());
    for (int g = 0; g < nh; ++g) {
      axpy_lane(v, s.probs[static_cast<std::size_t>(g * cap + t)], s.acc.data() + (g * lanes + t % lanes) * d, d);
    }
  }
  for (int g = 0; g < nh; ++g) {
    float* a = s.acc.data() + g * lanes * d;
    if (avx2) {
      if (!batched) {
        // Fold the four accumulators of 8 lanes: 0 += 2, 1 += 3, then 0 += 1.
        for (std::int64_t i = 0; i < 8 * d; ++i) {
          a[i] += a[16 * d + i];
          a[8 * d + i] += a[24 * d + i];
        }
        for (std::int64_t i = 0; i < 8 * d; ++i) a[i] += a[8 * d + i];
      }
      fold8_rows(a, d, !batched, out + g * d);
      continue;
    }
    if (!batched) {
      // Fold the four accumulators of 16 lanes: 0 += 2, 1 += 3, then 0 += 1.
      for (std::int64_t i = 0; i < 16 * d; ++i) {
        a[i] += a[32 * d + i];
        a[16 * d + i] += a[48 * d + i];
      }
      for (std::int64_t i = 0; i < 16 * d; ++i) a[i] += a[16 * d + i];
    }
    reduce16_rows(a, d, out + g * d);  // the one-token path's float -> double -> float is exact
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

// All segments' tokens form one parallel job on the pool.
template <class Kv, class MakeRows>
void attention_over(std::span<const AttentionSegment<Kv>> segs, const AttentionParams& p, MakeRows&& make_rows,
                    ThreadPool& pool) {
  std::int64_t n_tok = 0;
  std::int64_t max_last = 0;
  std::int64_t d = 0;
  std::vector<std::int64_t> first(segs.size() + 1, 0);  // segment i's tokens: [first[i], first[i + 1])
  for (std::size_t i = 0; i < segs.size(); ++i) {
    check_segment(segs[i], p);
    const std::int64_t n = std::max<std::int64_t>(0, segs[i].n_tok);
    first[i + 1] = first[i] + n;
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
  const std::size_t cap = static_cast<std::size_t>((max_last + 1 + 63) / 64 * 64);

  // A batch shares each K/V row among the query heads of its kv head (one work item per token and
  // kv head: plenty of items); a single token keeps one item per query head, so its few items
  // still spread over the threads. Per head the operations are the same either way.
  const int per_item = n_tok >= 2 ? group : 1;
  const std::int64_t heads_per_token = p.n_heads / per_item;
  const std::int64_t n_items = n_tok * heads_per_token;
  pool.parallel_for(n_items, [&](std::int64_t begin, std::int64_t end) {
    const auto per = static_cast<std::size_t>(per_item);
    Scratch s{std::vector<float>(per * static_cast<std::size_t>(d)), std::vector<float>(per * cap),
              std::vector<float>(per * cap), std::vector<float>(per * static_cast<std::size_t>(64 * d)),
              std::vector<float>(static_cast<std::size_t>(d))};
    for (std::int64_t item = begin; item < end; ++item) {
      // Tokens in zig-zag order (0, n-1, 1, n-2, ...) over the whole batch: a causal query's cost
      // grows with its position, so contiguous ranges of this order carry similar work.
      const std::int64_t k = item / heads_per_token;
      const std::int64_t g = k % 2 == 0 ? k / 2 : n_tok - 1 - k / 2;
      const auto si = static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), g) - first.begin() - 1);
      const AttentionSegment<Kv>& sg = segs[si];
      const std::int64_t t = g - first[si];
      const int h0 = static_cast<int>(item % heads_per_token) * per_item;
      const std::int64_t pos = sg.pos0 + t;
      const std::int64_t lo = p.window > 0 ? std::max<std::int64_t>(0, pos - p.window + 1) : 0;
      attend_heads(sg.q + t * sg.q_stride + h0 * d, h0, per_item, lo, pos, h0 / group, make_rows(sg.kv), d, p,
                   batched(sg), sg.out + t * sg.out_stride + h0 * d, s);
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
