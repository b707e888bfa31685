#include "kernels/attention.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "formats/half.h"
#include "kernels/activations.h"
#include "kernels/ggml_order.h"
#include "wisp/error.h"

namespace wisp::kernels {

namespace {

inline float round_half(float x) { return f16_to_f32(f32_to_f16(x)); }

// The two ways ggml multiplies half-precision rows (both operands already half-valued floats):
//
// Batched (tinyBLAS on AVX-512, used when the batch has 2+ tokens and n % 16 == 0): one 16-lane
// FMA accumulator, element i in lane i % 16, folded by reduce16.
float dot_f16_gemm(const float* a, const float* b, std::int64_t n) {
  float acc[16] = {};
  for (std::int64_t i = 0; i < n; i += 16) {
    for (int l = 0; l < 16; ++l) acc[l] = std::fma(a[i + l], b[i + l], acc[l]);
  }
  return ggml::reduce16(acc);
}

// One token (ggml_vec_dot_f16 on AVX-512): four 16-lane accumulators over steps of 64, element i
// in accumulator (i / 16) % 4, lane i % 16; folded 0+2, 1+3, then 0+1, reduced by reduce16 into
// a double; the elements past the last whole step are added in double one by one.
float dot_f16_vec(const float* a, const float* b, std::int64_t n) {
  float acc[4][16] = {};
  const std::int64_t np = n - n % 64;
  for (std::int64_t i = 0; i < np; i += 64) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 16; ++l) {
        const std::int64_t e = i + 16 * j + l;
        acc[j][l] = std::fma(a[e], b[e], acc[j][l]);
      }
    }
  }
  for (int l = 0; l < 16; ++l) {
    acc[0][l] += acc[2][l];
    acc[1][l] += acc[3][l];
  }
  for (int l = 0; l < 16; ++l) acc[0][l] += acc[1][l];
  double sum = ggml::reduce16(acc[0]);
  for (std::int64_t e = np; e < n; ++e) sum += static_cast<double>(a[e] * b[e]);
  return static_cast<float>(sum);
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

// One query head at position `pos` against the keys [lo, pos] of its kv head. Scores are laid out
// by cache position from 0 so ggml's groups of 16 line up (masked positions are -inf, then 0).
template <class Rows>
void attend_head(const float* q_in, std::int64_t lo, std::int64_t pos, std::int64_t kv_head, const Rows& rows,
                 std::int64_t d, const AttentionParams& p, bool batched, float* out, Scratch& s) {
  const std::int64_t n = pos + 1;
  for (std::int64_t i = 0; i < d; ++i) s.q[i] = p.round_f16 ? round_half(q_in[i]) : q_in[i];
  const bool gemm_qk = batched && d % 16 == 0;

  std::fill(s.scores.begin(), s.scores.begin() + lo, -std::numeric_limits<float>::infinity());
  for (std::int64_t t = lo; t <= pos; ++t) {
    const float* k = rows.key(t, kv_head, s.row.data());
    const float dot = gemm_qk ? dot_f16_gemm(k, s.q.data(), d) : dot_f16_vec(k, s.q.data(), d);
    s.scores[t] = dot * p.kq_scale;
  }
  if (p.logit_softcap > 0.0f) softcap(s.scores.data() + lo, pos - lo + 1, p.logit_softcap);
  // ggml's KV view is padded (to 256 positions); the padding is masked to -inf and becomes exact
  // zeros, which change no sum, but it puts every valid score in a whole group of 16, all through
  // the vector exp. Padding to 64 reproduces that (and the whole 64-steps of the one-token dot).
  const std::int64_t padded = (n + 63) / 64 * 64;
  std::fill(s.scores.begin() + n, s.scores.begin() + padded, -std::numeric_limits<float>::infinity());
  softmax(s.scores.data(), padded);
  for (std::int64_t t = 0; t < padded; ++t) s.probs[t] = p.round_f16 ? round_half(s.scores[t]) : s.scores[t];

  // out[i] = sum_t probs[t] * v[t][i], in the lanes of the same two dot orders, walking the V rows
  // in position order (each accumulator sees its terms in the order the column dot would). The
  // padding and the masked positions have probability 0 and would add exact zeros: skipped.
  if (batched) {
    std::fill(s.acc.begin(), s.acc.begin() + d * 16, 0.0f);
    for (std::int64_t t = lo; t <= pos; ++t) {
      const float* v = rows.value(t, kv_head, s.row.data());
      const float w = s.probs[t];
      float* lane = s.acc.data() + (t % 16);
      for (std::int64_t i = 0; i < d; ++i) lane[16 * i] = std::fma(v[i], w, lane[16 * i]);
    }
    for (std::int64_t i = 0; i < d; ++i) out[i] = ggml::reduce16(s.acc.data() + 16 * i);
  } else {
    std::fill(s.acc.begin(), s.acc.begin() + d * 64, 0.0f);
    for (std::int64_t t = lo; t <= pos; ++t) {
      const float* v = rows.value(t, kv_head, s.row.data());
      const float w = s.probs[t];
      float* lane = s.acc.data() + (t % 64);  // accumulator (t / 16) % 4, lane t % 16
      for (std::int64_t i = 0; i < d; ++i) lane[64 * i] = std::fma(v[i], w, lane[64 * i]);
    }
    for (std::int64_t i = 0; i < d; ++i) {
      float* a = s.acc.data() + 64 * i;  // [4][16]
      for (int l = 0; l < 16; ++l) {
        a[l] += a[32 + l];
        a[16 + l] += a[48 + l];
      }
      for (int l = 0; l < 16; ++l) a[l] += a[16 + l];
      out[i] = static_cast<float>(static_cast<double>(ggml::reduce16(a)));
    }
  }
}

// for_ranges(n, body) calls body(begin, end) over disjoint ranges covering [0, n), in parallel.
template <class Kv, class Rows, class ForRanges>
void attention_over(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const Kv& kv,
                    const Rows& rows, const AttentionParams& p, float* out, std::int64_t out_stride,
                    ForRanges&& for_ranges) {
  if (p.n_kv_heads <= 0 || p.n_heads % p.n_kv_heads != 0) {
    throw Error("attention: " + std::to_string(p.n_heads) + " query heads do not divide into " +
                std::to_string(p.n_kv_heads) + " kv heads");
  }
  if (n_tok <= 0) return;
  const std::int64_t last = pos0 + n_tok - 1;
  if (static_cast<std::int64_t>(kv.k_blocks.size()) * kv.block_size <= last ||
      kv.v_blocks.size() != kv.k_blocks.size()) {
    throw Error("attention: the KV block table covers " + std::to_string(kv.k_blocks.size() * kv.block_size) +
                " positions, the batch reaches position " + std::to_string(last));
  }
  const int group = p.n_heads / p.n_kv_heads;
  const std::int64_t d = kv.head_dim;
  const std::int64_t n_items = n_tok * p.n_heads;
  // ggml multiplies a batch of 2+ tokens with tinyBLAS and a single token with vec_dot: different
  // float orders, reproduced as such (see ggml_order.h).
  const bool batched = n_tok >= 2;
  const std::size_t cap = static_cast<std::size_t>((last + 1 + 63) / 64 * 64);

  for_ranges(n_items, [&](std::int64_t begin, std::int64_t end) {
    Scratch s{std::vector<float>(static_cast<std::size_t>(d)), std::vector<float>(cap), std::vector<float>(cap),
              std::vector<float>(static_cast<std::size_t>(64 * d)), std::vector<float>(static_cast<std::size_t>(d))};
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t t = item / p.n_heads;
      const int h = static_cast<int>(item % p.n_heads);
      const std::int64_t pos = pos0 + t;
      const std::int64_t lo = p.window > 0 ? std::max<std::int64_t>(0, pos - p.window + 1) : 0;
      attend_head(q + t * q_stride + h * d, lo, pos, h / group, rows, d, p, batched, out + t * out_stride + h * d, s);
    }
  });
}

// OpenMP: one contiguous range of items per thread (as schedule(static)).
auto omp_ranges(int n_threads) {
  return [threads = std::max(1, n_threads)](std::int64_t n, auto&& body) {
#pragma omp parallel num_threads(threads) if (threads > 1 && n > 1)
    {
      const std::int64_t nt = omp_get_num_threads(), id = omp_get_thread_num();
      body(n * id / nt, n * (id + 1) / nt);
    }
  };
}

auto pool_ranges(ThreadPool& pool) {
  return [&pool](std::int64_t n, auto&& body) { pool.parallel_for(n, body); };
}

}  // namespace

void attention(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const PagedKv& kv,
               const AttentionParams& p, float* out, std::int64_t out_stride, int n_threads) {
  attention_over(q, q_stride, n_tok, pos0, kv, F32Rows{kv}, p, out, out_stride, omp_ranges(n_threads));
}

void attention(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const PagedKvRows& kv,
               const AttentionParams& p, float* out, std::int64_t out_stride, int n_threads) {
  if (kv.decode == nullptr) throw Error("attention: coded KV rows given without a decoder");
  attention_over(q, q_stride, n_tok, pos0, kv, CodedRows{kv}, p, out, out_stride, omp_ranges(n_threads));
}

void attention(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const PagedKv& kv,
               const AttentionParams& p, float* out, std::int64_t out_stride, ThreadPool& pool) {
  attention_over(q, q_stride, n_tok, pos0, kv, F32Rows{kv}, p, out, out_stride, pool_ranges(pool));
}

void attention(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const PagedKvRows& kv,
               const AttentionParams& p, float* out, std::int64_t out_stride, ThreadPool& pool) {
  attention_over(q, q_stride, n_tok, pos0, kv, CodedRows{kv}, p, out, out_stride, pool_ranges(pool));
}

}  // namespace wisp::kernels
