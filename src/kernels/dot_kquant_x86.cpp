// K-quant dots in the float orders of llama.cpp's x86-64 build (see ggml_order.h):
//   - one token, every K-quant: ggml_vec_dot_q*_K_q8_K (AVX2), 8 integer lanes per super-block
//     (lane l: elements 4l..4l+3 of every 32-value chunk, weighted by their sub-block scale), each
//     scaled by d and FMA-accumulated, folded by hsum8; the mins term differs per type (Q2_K:
//     8 more lanes in the same accumulator, Q4_K: 4 lanes of its own, Q5_K: one float);
//   - batches of 8+ tokens, every K-quant: the tiled GEMM (AVX-512 VNNI), one exact integer sum
//     per super-block, r = s1 * d_x (- dmin * s2 fused), then acc += r * d_y;
//   - repacked Q4_K (rows % 8 == 0, any batch): one accumulator per output,
//     acc = fma(s1, d_x * d_y, acc) and macc = fma(s2, dmin * d_y, macc), result acc - macc, where
//     the GEMV (single tokens, batch tails) adds whole super-blocks and the GEMM (groups of 4
//     tokens) adds each 64-value half-pair of sub-blocks separately.
#include <cmath>
#include <cstdint>

#include "formats/block_layouts.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/ggml_order.h"
#include "kernels/kquant_unpack.h"

namespace wisp::kernels::scalar {

namespace {

template <typename Block>
float tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  KBlock k;
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_kblock(x[b], k);
    const KSums s = ksums(k, y[b].qs);
    float r = static_cast<float>(s.s1) * k.d;
    if (k.dmin != 0.0f || s.s2 != 0) r = std::fma(-k.dmin, static_cast<float>(s.s2), r);
    // One rounding, as llama.cpp's build computes it (its compiler fuses this multiply-add): spelled
    // as an FMA so the result does not depend on this compiler's contraction choices.
    acc = std::fma(r, y[b].d, acc);
  }
  return acc;
}

}  // namespace

float dot_q2_k_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockQ2_K>(w, a, n); }
float dot_q3_k_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockQ3_K>(w, a, n); }
float dot_q4_k_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockQ4_K>(w, a, n); }
float dot_q5_k_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockQ5_K>(w, a, n); }
float dot_q6_k_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockQ6_K>(w, a, n); }

namespace {

// Repacked Q4_K with one float update per `step` sub-blocks of 32 (8: GEMV, 2: GEMM).
float q4_k_repacked(const void* w, const void* a, std::int64_t n, int step) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  KBlock k;
  float acc = 0.0f, macc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_kblock(x[b], k);
    const float dd = k.d * y[b].d;
    const float dm = k.dmin * y[b].d;
    for (int s0 = 0; s0 < 8; s0 += step) {
      std::int64_t s1 = 0, s2 = 0;
      for (int s = s0; s < s0 + step; ++s) {
        std::int64_t dot = 0, asum = 0;
        for (int e = 32 * s; e < 32 * s + 32; ++e) {
          dot += k.q[e] * y[b].qs[e];
          asum += y[b].qs[e];
        }
        s1 += k.scale[s] * dot;
        s2 += k.min[s] * asum;
      }
      acc = std::fma(static_cast<float>(s1), dd, acc);
      macc = std::fma(static_cast<float>(s2), dm, macc);
    }
  }
  return acc - macc;
}

}  // namespace

float dot_q4_k_repacked(const void* w, const void* a, std::int64_t n) { return q4_k_repacked(w, a, n, 8); }
float dot_q4_k_repacked_x4(const void* w, const void* a, std::int64_t n) { return q4_k_repacked(w, a, n, 2); }

float dot_q4_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  KBlock k;
  float acc[8] = {};
  float macc[4] = {};
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_kblock(x[b], k);
    const float d = y[b].d * k.d;
    const float dmin = -y[b].d * k.dmin;
    // Mins: lane i pairs sub-blocks 2i and 2i+1, each with its 32-value activation sum.
    for (int i = 0; i < 4; ++i) {
      const int s0 = y[b].bsums[4 * i] + y[b].bsums[4 * i + 1];
      const int s1 = y[b].bsums[4 * i + 2] + y[b].bsums[4 * i + 3];
      const int prod = k.min[2 * i] * s0 + k.min[2 * i + 1] * s1;
      macc[i] = std::fma(dmin, static_cast<float>(prod), macc[i]);
    }
    // Lane l takes elements 4l..4l+3 of every 32-value sub-block, weighted by its scale.
    for (int l = 0; l < 8; ++l) {
      int lane = 0;
      for (int sub = 0; sub < 8; ++sub) {
        int dot = 0;
        for (int e = 32 * sub + 4 * l; e < 32 * sub + 4 * l + 4; ++e) dot += k.q[e] * y[b].qs[e];
        lane += k.scale[sub] * dot;
      }
      acc[l] = std::fma(d, static_cast<float>(lane), acc[l]);
    }
  }
  return ggml::hsum8(acc) + ((macc[0] + macc[2]) + (macc[1] + macc[3]));
}

namespace {

// The one-token integer lanes: lane l sums, over the 8 chunks of 32 values, scale(sub) times the
// products of elements 32c + 4l .. 32c + 4l + 3 (exact; any summation order gives these values).
void chunk_lanes(const KBlock& k, const std::int8_t* a, int lanes[8]) {
  for (int l = 0; l < 8; ++l) {
    int lane = 0;
    for (int chunk = 0; chunk < 8; ++chunk) {
      const int e0 = 32 * chunk + 4 * l;
      int dot = 0;
      for (int e = e0; e < e0 + 4; ++e) dot += k.q[e] * a[e];
      lane += k.scale[e0 / k.sub_len] * dot;
    }
    lanes[l] = lane;
  }
}

}  // namespace

// Q2_K: the mins go into the same 8 float lanes first, lane l taking sub-blocks 2l and 2l+1:
// acc = fma(-d_y * dmin, min . bsums, acc), then acc = fma(d_y * d, lanes, acc).
float dot_q2_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ2_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  KBlock k;
  float acc[8] = {};
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_kblock(x[b], k);
    const float d = y[b].d * k.d;
    const float dmin = -y[b].d * k.dmin;
    int lanes[8];
    chunk_lanes(k, y[b].qs, lanes);
    for (int l = 0; l < 8; ++l) {
      const int prod = k.min[2 * l] * y[b].bsums[2 * l] + k.min[2 * l + 1] * y[b].bsums[2 * l + 1];
      acc[l] = std::fma(dmin, static_cast<float>(prod), acc[l]);
      acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
    }
  }
  return ggml::hsum8(acc);
}

// Q3_K: no mins; the codes' -4 offset is inside the integer lanes.
float dot_q3_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ3_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  KBlock k;
  float acc[8] = {};
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_kblock(x[b], k);
    const float d = y[b].d * k.d;
    int lanes[8];
    chunk_lanes(k, y[b].qs, lanes);
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return ggml::hsum8(acc);
}

// Q5_K: the mins term is one exact integer per super-block, added into a float with one FMA
// (ggml writes summs += dmin * int; its C build contracts that to an FMA), added after hsum8.
float dot_q5_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  KBlock k;
  float acc[8] = {};
  float summs = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_kblock(x[b], k);
    const float d = y[b].d * k.d;
    const float dmin = -y[b].d * k.dmin;
    int summ = 0;
    for (int s = 0; s < 8; ++s) summ += k.min[s] * (y[b].bsums[2 * s] + y[b].bsums[2 * s + 1]);
    summs = std::fma(dmin, static_cast<float>(summ), summs);
    int lanes[8];
    chunk_lanes(k, y[b].qs, lanes);
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return ggml::hsum8(acc) + summs;
}

float dot_q6_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  KBlock k;
  float acc[8] = {};
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_kblock(x[b], k);
    const float d = y[b].d * k.d;
    // Lane l: the unsigned codes (q + 32) of elements 4l..4l+3 of every 32-value chunk, weighted
    // by their 16-value sub-block's scale, minus 32 * scale * (activation sum) for sub-blocks
    // 2l and 2l+1 -- ggml subtracts the offset lane by lane in that layout.
    for (int l = 0; l < 8; ++l) {
      int lane = 0;
      for (int chunk = 0; chunk < 8; ++chunk) {
        int dot = 0;
        for (int e = 32 * chunk + 4 * l; e < 32 * chunk + 4 * l + 4; ++e) dot += (k.q[e] + 32) * y[b].qs[e];
        lane += k.scale[(32 * chunk + 4 * l) / 16] * dot;
      }
      lane -= 32 * (y[b].bsums[2 * l] * k.scale[2 * l] + y[b].bsums[2 * l + 1] * k.scale[2 * l + 1]);
      acc[l] = std::fma(d, static_cast<float>(lane), acc[l]);
    }
  }
  return ggml::hsum8(acc);
}

}  // namespace wisp::kernels::scalar
