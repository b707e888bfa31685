// The prefill GEMM of wisp's super8 order on NEON for the types with 32-value sub-blocks (IQ4_XS
// through codebook8_gemm-inl.h; Q4_K, Q5_K through kquant_super8_gemm-inl.h; MultiDot::gemm8): up
// to 8 weight rows against every token of a batch, each output bit-identical to the one-token
// kernel (super8_dot in kquant_super8_dots-inl.h, dot_iq4_xs_super8 in codebook8_dots-inl.h), so
// batch invariance holds. Compiled into the plain and the SDOT bundle.
//
// The order (ActFormat::kQ8_K): per super-block b the exact S_b = sum over sub-blocks j of
// sc_j * sum(q a) (the codes carrying the type's offset) and M_b = sum_j mn_j * asum_j (asum_j the
// activation's code sum of sub-block j, from Q8_K's bsums), then acc[b % 8] = fma(float(S_b),
// float(d_x) * d_y, acc[b % 8]), macc[b % 8] = fma(float(M_b), float(dmin_x) * d_y, macc[b % 8]),
// hsum8(acc - macc) (without a minimum macc stays +0 and acc - (+0) is acc, -0 included).
//
// The tile of one super-block: its 8 sub-blocks as 8 blocks8 tiles (blocks8_gemm-inl.h's layout,
// 256 bytes each), the rows' sub-block scales and minimums as int32 (8 x 8 each) and d_x, dmin_x
// as floats: 2624 bytes per 256 values (gemm8_scratch_bytes allows 3072). Per token each
// sub-block's 4-row sums (blocks8_sums) are multiplied by the scales and added (vmlaq_s32, exact),
// so S_b comes out one per lane; M_b likewise from the minimums and the broadcast asum_j.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/blocks8_gemm-inl.h"

namespace wisp::kernels::neon {
namespace {

struct Super8Tile {
  std::int8_t* codes;  // super-block b, sub-block j: codes + 2048 b + 256 j
  std::int32_t* sc;    // sc[64 b + 8 j + r]
  std::int32_t* mn;    // mn[64 b + 8 j + r]
  float* d;            // d[8 b + r]
  float* dmin;         // dmin[8 b + r]
};

inline Super8Tile super8_tile(void* scratch, std::int64_t nb) {
  auto* base = reinterpret_cast<std::int8_t*>((reinterpret_cast<std::uintptr_t>(scratch) + 15) & ~std::uintptr_t{15});
  auto* sc = reinterpret_cast<std::int32_t*>(base + 2048 * nb);
  auto* d = reinterpret_cast<float*>(sc + 128 * nb);
  return {base, sc, sc + 64 * nb, d, d + 8 * nb};
}

// T tokens against the tile: out[t][h] = rows 4h .. 4h + 3's outputs.
template <class Traits, int T>
inline void super8_tokens(const Super8Tile& tile, std::int64_t nb, const BlockQ8_K* const (&y)[T],
                          float32x4_t (&out)[T][2]) {
  float32x4_t acc[8][T][2];
  for (int k = 0; k < 8; ++k) {
    float32x4_t f[T][2], fm[T][2];
    for (int t = 0; t < T; ++t) f[t][0] = f[t][1] = fm[t][0] = fm[t][1] = vdupq_n_f32(0.0f);
    for (std::int64_t b = k; b < nb; b += 8) {
      int32x4_t S[T][2];
      for (int t = 0; t < T; ++t) S[t][0] = S[t][1] = vdupq_n_s32(0);
      for (int j = 0; j < 8; ++j) {
        const std::int8_t* a[T];
        for (int t = 0; t < T; ++t) a[t] = y[t][b].qs + 32 * j;
        int32x4_t s[T][2];
        blocks8_sums<Traits::kRange, T>(tile.codes + 2048 * b + 256 * j, a, s);
        const int32x4_t sc0 = vld1q_s32(tile.sc + 64 * b + 8 * j), sc1 = vld1q_s32(tile.sc + 64 * b + 8 * j + 4);
        for (int t = 0; t < T; ++t) {
          S[t][0] = vmlaq_s32(S[t][0], s[t][0], sc0);
          S[t][1] = vmlaq_s32(S[t][1], s[t][1], sc1);
        }
      }
      const float32x4_t xd0 = vld1q_f32(tile.d + 8 * b), xd1 = vld1q_f32(tile.d + 8 * b + 4);
      for (int t = 0; t < T; ++t) {
        const float32x4_t yd = vdupq_n_f32(y[t][b].d);
        f[t][0] = vfmaq_f32(f[t][0], vcvtq_f32_s32(S[t][0]), vmulq_f32(xd0, yd));
        f[t][1] = vfmaq_f32(f[t][1], vcvtq_f32_s32(S[t][1]), vmulq_f32(xd1, yd));
      }
      if constexpr (Traits::kMin) {
        const float32x4_t xm0 = vld1q_f32(tile.dmin + 8 * b), xm1 = vld1q_f32(tile.dmin + 8 * b + 4);
        for (int t = 0; t < T; ++t) {
          int32x4_t M0 = vdupq_n_s32(0), M1 = vdupq_n_s32(0);
          for (int j = 0; j < 8; ++j) {
            const std::int32_t asum = y[t][b].bsums[2 * j] + y[t][b].bsums[2 * j + 1];
            M0 = vmlaq_n_s32(M0, vld1q_s32(tile.mn + 64 * b + 8 * j), asum);
            M1 = vmlaq_n_s32(M1, vld1q_s32(tile.mn + 64 * b + 8 * j + 4), asum);
          }
          const float32x4_t yd = vdupq_n_f32(y[t][b].d);
          fm[t][0] = vfmaq_f32(fm[t][0], vcvtq_f32_s32(M0), vmulq_f32(xm0, yd));
          fm[t][1] = vfmaq_f32(fm[t][1], vcvtq_f32_s32(M1), vmulq_f32(xm1, yd));
        }
      }
    }
    for (int t = 0; t < T; ++t) {
      acc[k][t][0] = vsubq_f32(f[t][0], fm[t][0]);
      acc[k][t][1] = vsubq_f32(f[t][1], fm[t][1]);
    }
  }
  hsum8_chains(acc, out);
}

// MultiDot::gemm8 of a super8 type. Traits: Block, kMin, kRange (blocks8_gemm-inl.h's int16
// bound of the codes), codes(x, j) (sub-block j's 32 codes as the one-token kernel forms them:
// values 0-15 in lo, 16-31 in hi), scales(x, sc, mn) (the 8 sub-blocks' integer scales and
// minimums), d(x) and dmin(x) as floats.
template <class Traits>
void gemm8_super8(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                  std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  using Block = typename Traits::Block;
  const Traits tr{};
  const std::int64_t nb = n / kQK_K;
  const Block* rows[8];
  chunk_rows8(w, w_stride, n_rows, rows);
  const Super8Tile tile = super8_tile(scratch, nb);
  for (std::int64_t b = 0; b < nb; ++b) {
    for (int j = 0; j < 8; ++j) {
      std::int8_t* out = tile.codes + 2048 * b + 256 * j;
      for (int h = 0; h < 2; ++h) {
        Codes32 c[4];
        for (int i = 0; i < 4; ++i) c[i] = tr.codes(rows[4 * h + i][b], j);
        transpose4(c[0].lo, c[1].lo, c[2].lo, c[3].lo, out + 16 * h, 32);
        transpose4(c[0].hi, c[1].hi, c[2].hi, c[3].hi, out + 16 * (8 + h), 32);
      }
    }
    for (int r = 0; r < 8; ++r) {
      int sc[8], mn[8] = {};
      tr.scales(rows[r][b], sc, mn);
      for (int j = 0; j < 8; ++j) {
        tile.sc[64 * b + 8 * j + r] = sc[j];
        tile.mn[64 * b + 8 * j + r] = mn[j];
      }
      tile.d[8 * b + r] = tr.d(rows[r][b]);
      tile.dmin[8 * b + r] = Traits::kMin ? tr.dmin(rows[r][b]) : 0.0f;
    }
  }
  const auto* act = static_cast<const std::uint8_t*>(a);
  const auto group = [&]<int T>(std::int64_t t0) {
    const BlockQ8_K* ys[T];
    for (int t = 0; t < T; ++t)
      ys[t] = reinterpret_cast<const BlockQ8_K*>(act + static_cast<std::size_t>(t0 + t) * a_stride);
    float32x4_t out[T][2];
    super8_tokens<Traits, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) {
      alignas(16) float o[8];
      vst1q_f32(o, out[t][0]);
      vst1q_f32(o + 4, out[t][1]);
      std::copy_n(o, n_rows, y + (t0 + t) * y_stride);
    }
  };
  std::int64_t t = 0;
  for (; t + kBlocks8GemmTokens <= n_tok; t += kBlocks8GemmTokens) group.template operator()<kBlocks8GemmTokens>(t);
  const std::int64_t left = n_tok - t;
  if constexpr (kBlocks8GemmTokens == 4) {
    if (left == 3) group.template operator()<3>(t);
    if (left == 2) group.template operator()<2>(t);
  }
  if (left == 1) group.template operator()<1>(t);
}

}  // namespace
}  // namespace wisp::kernels::neon
