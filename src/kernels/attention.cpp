#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "formats/half.h"
#include "kernels/activations.h"
#include "wisp/error.h"

namespace wisp::kernels {

namespace {

inline float round_half(float x) { return f16_to_f32(f32_to_f16(x)); }

// One query head against keys [lo, hi] of its kv head. `scores` has room for hi - lo + 1 values,
// `acc` for head_dim doubles.
void attend_head(const float* q_in, std::int64_t lo, std::int64_t hi, std::int64_t kv_head, const PagedKv& kv,
                 const AttentionParams& p, float* out, std::vector<float>& q, std::vector<float>& scores,
                 std::vector<double>& acc) {
  const std::int64_t d = kv.head_dim;
  for (std::int64_t i = 0; i < d; ++i) q[i] = p.round_f16 ? round_half(q_in[i]) : q_in[i];

  const std::int64_t bs = kv.block_size;
  for (std::int64_t pos = lo; pos <= hi; ++pos) {
    const float* k = kv.k_blocks[pos / bs] + kv_head * kv.head_stride + (pos % bs) * d;
    double s = 0.0;
    for (std::int64_t i = 0; i < d; ++i) s += static_cast<double>(q[i] * k[i]);
    scores[pos - lo] = static_cast<float>(s) * p.kq_scale;
  }
  const std::int64_t n = hi - lo + 1;
  if (p.logit_softcap > 0.0f) softcap(scores.data(), n, p.logit_softcap);
  softmax(scores.data(), n);

  std::fill(acc.begin(), acc.begin() + d, 0.0);
  for (std::int64_t pos = lo; pos <= hi; ++pos) {
    const float* v = kv.v_blocks[pos / bs] + kv_head * kv.head_stride + (pos % bs) * d;
    const float w = p.round_f16 ? round_half(scores[pos - lo]) : scores[pos - lo];
    for (std::int64_t i = 0; i < d; ++i) acc[i] += static_cast<double>(w * v[i]);
  }
  for (std::int64_t i = 0; i < d; ++i) out[i] = static_cast<float>(acc[i]);
}

}  // namespace

void attention(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const PagedKv& kv,
               const AttentionParams& p, float* out, std::int64_t out_stride, int n_threads) {
  if (p.n_kv_heads <= 0 || p.n_heads % p.n_kv_heads != 0) {
    throw Error("attention: " + std::to_string(p.n_heads) + " query heads do not divide into " +
                std::to_string(p.n_kv_heads) + " kv heads");
  }
  const std::int64_t last = pos0 + n_tok - 1;
  if (n_tok <= 0) return;
  if (static_cast<std::int64_t>(kv.k_blocks.size()) * kv.block_size <= last ||
      kv.v_blocks.size() != kv.k_blocks.size()) {
    throw Error("attention: the KV block table covers " + std::to_string(kv.k_blocks.size() * kv.block_size) +
                " positions, the batch reaches position " + std::to_string(last));
  }
  const int group = p.n_heads / p.n_kv_heads;
  const std::int64_t d = kv.head_dim;
  const std::int64_t n_items = n_tok * p.n_heads;
  const int threads = std::max(1, n_threads);

#pragma omp parallel num_threads(threads) if (threads > 1 && n_items > 1)
  {
    std::vector<float> qbuf(static_cast<std::size_t>(d));
    std::vector<float> scores(static_cast<std::size_t>(last + 1));
    std::vector<double> acc(static_cast<std::size_t>(d));
#pragma omp for schedule(static)
    for (std::int64_t item = 0; item < n_items; ++item) {
      const std::int64_t t = item / p.n_heads;
      const int h = static_cast<int>(item % p.n_heads);
      const std::int64_t pos = pos0 + t;
      const std::int64_t lo = p.window > 0 ? std::max<std::int64_t>(0, pos - p.window + 1) : 0;
      attend_head(q + t * q_stride + h * d, lo, pos, h / group, kv, p, out + t * out_stride + h * d, qbuf, scores,
                  acc);
    }
  }
}

}  // namespace wisp::kernels
