// The prefill GEMM of wisp's blocks8 order on NEON (MultiDot::gemm8; Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// and IQ4_NL, MXFP4 through codebook8_gemm-inl.h): up to 8 weight rows against every token of a
// batch, each output bit-identical to the one-token kernel dot_*_blocks8 (blocks8_dots-inl.h), so
// batch invariance holds. Compiled into the plain and the SDOT bundle.
//
// Why another layout: the one-token kernel unpacks every block of a row once per token and
// reduces each block's 4 int32 lanes horizontally (pairwise adds). Here the rows sit in vector
// lanes: per call each block of the 8 rows is unpacked once (as the one-token kernel unpacks it)
// and interleaved into the scratch tile as 16 vectors, vector (c, h) holding values 4c .. 4c + 3 of
// rows 4h .. 4h + 3 (row 4h + i in int32 lane i). With SDOT one `vdotq_laneq_s32` by activation
// dword c gives 4 rows' partial sums in one vector, so a block's sums of 4 rows come out one per
// lane with no horizontal reduction; without SDOT the same vectors go through `vmlal_s8` by the
// broadcast dword (products added in int16 as far as the type's code range allows), then one or
// two pairwise adds per 4 rows. Every token reuses the tile (gemm8_scratch_bytes bounds it: 320
// bytes per block; no second resident copy of the weights).
//
// Same numerics: the integer block sums are exact in any grouping. The float operations per
// output are the one-token kernel's: lane k = b % 8 of its accumulator takes blocks k, k + 8, ...
// in order, acc = fma(float(isum_b), d_x * d_y, acc) (and macc = fma(m_x, s_y, macc)), then
// hsum8(acc + macc). Here chain k is a vector over 4 rows (the chains are independent, so walking
// them one after another changes no bits), and hsum8's tree becomes vertical adds of the 8 chains
// in its order: ((a4 + a0) + (a6 + a2)) + ((a5 + a1) + (a7 + a3)).
#pragma once

#include <arm_neon.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/blocks8_dots-inl.h"
#include "kernels/neon/legacy_dots-inl.h"
#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

constexpr int kBlocks8GemmRows = 8;

// Tokens per pass over a block's tile (each block's 16 code vectors loaded once per pass). With
// SDOT 4: 16 code vectors, 8 activation vectors and 8 sums fit the 32 registers well enough
// (5.3 instructions per block and token, 5.5 with 2). Without SDOT 2: the int16 product lanes
// of 4 tokens spill (Q4_0 10.1 instructions per block and token with 4, 9.3 with 2; Q8_0 17.4
// and 13.1), counted in objdump -d of the GCC 12 build (src/kernels/README.md).
#if defined(__ARM_FEATURE_DOTPROD)
constexpr int kBlocks8GemmTokens = 4;
#else
constexpr int kBlocks8GemmTokens = 2;
#endif

// How far the products of a type's codes with activation codes (in [-128, 127]) may be added in
// int16 without SDOT, per int16 lane of vmlal_s8 (one product per activation dword of a block, so
// 8 per block).
enum class ProductRange {
  kNibble,  // |code| <= 15: 8 products <= 15360, and two such lanes <= 30720 still fit int16
  kFive,    // |code| <= 31: 8 products <= 31744, widened to int32 before two lanes are added
  kByte,    // any int8 code (products up to 2^14): each product widened at once (vpadal)
};

// The scratch tile of one call: per block b, codes[256 b ..] the 16 interleaved vectors (vector
// 2c + h at byte 16 (2c + h)), d[8 b + r] and m[8 b + r] row r's scale and minimum as floats.
struct Blocks8Tile {
  std::int8_t* codes;
  float* d;
  float* m;
};

inline Blocks8Tile blocks8_tile(void* scratch, std::int64_t nb) {
  auto* base = reinterpret_cast<std::int8_t*>((reinterpret_cast<std::uintptr_t>(scratch) + 15) & ~std::uintptr_t{15});
  auto* d = reinterpret_cast<float*>(base + 256 * nb);
  return {base, d, d + 8 * nb};
}

// out[i] = dword i of each of the 4 rows v[0..3] (row r in int32 lane r).
inline void transpose4(int8x16_t v0, int8x16_t v1, int8x16_t v2, int8x16_t v3, std::int8_t* out, std::size_t step) {
  const int32x4_t r0 = vreinterpretq_s32_s8(v0), r1 = vreinterpretq_s32_s8(v1);
  const int32x4_t r2 = vreinterpretq_s32_s8(v2), r3 = vreinterpretq_s32_s8(v3);
  const int64x2_t t0 = vreinterpretq_s64_s32(vtrn1q_s32(r0, r1)), t1 = vreinterpretq_s64_s32(vtrn2q_s32(r0, r1));
  const int64x2_t t2 = vreinterpretq_s64_s32(vtrn1q_s32(r2, r3)), t3 = vreinterpretq_s64_s32(vtrn2q_s32(r2, r3));
  vst1q_s8(out, vreinterpretq_s8_s64(vtrn1q_s64(t0, t2)));
  vst1q_s8(out + step, vreinterpretq_s8_s64(vtrn1q_s64(t1, t3)));
  vst1q_s8(out + 2 * step, vreinterpretq_s8_s64(vtrn2q_s64(t0, t2)));
  vst1q_s8(out + 3 * step, vreinterpretq_s8_s64(vtrn2q_s64(t1, t3)));
}

// Block b of the 8 rows into the tile: each row's 32 codes as the one-token kernel forms them
// (Traits::codes: values 0-15 in lo, 16-31 in hi), transposed in 4-row halves.
template <class Traits, class Block>
inline void blocks8_pack(const Traits& tr, const Block* const (&rows)[8], std::int64_t b, const Blocks8Tile& tile) {
  std::int8_t* out = tile.codes + 256 * b;
  for (int h = 0; h < 2; ++h) {
    Codes32 c[4];
    for (int i = 0; i < 4; ++i) c[i] = tr.codes(rows[4 * h + i][b]);
    // Vector 2c + h: dwords c = 0..3 from lo, 4..7 from hi.
    transpose4(c[0].lo, c[1].lo, c[2].lo, c[3].lo, out + 16 * h, 32);
    transpose4(c[0].hi, c[1].hi, c[2].hi, c[3].hi, out + 16 * (8 + h), 32);
  }
  for (int r = 0; r < 8; ++r) tile.d[8 * b + r] = tr.d(rows[r][b]);
  if constexpr (Traits::kMin)
    for (int r = 0; r < 8; ++r) tile.m[8 * b + r] = tr.m(rows[r][b]);
}

// f(std::integral_constant<int, C>) for C = 0 .. 7: the activation dword's lane index must be a
// constant of the instruction. Forced inline, with the callers' lambdas and blocks8_sums: GCC
// otherwise keeps the plain bundle's step as a call per block, its sums passed through memory.
template <class F>
[[gnu::always_inline]] inline void for_dwords(F&& f) {
  [&]<int... C>(std::integer_sequence<int, C...>) __attribute__((always_inline)) {
    (f(std::integral_constant<int, C>{}), ...);
  }
  (std::make_integer_sequence<int, 8>{});
}

// The exact sums of block `codes` (tile) with T tokens' activation blocks a[t]: s[t][h] = rows
// 4h .. 4h + 3, one per lane.
template <ProductRange R, int T>
[[gnu::always_inline]] inline void blocks8_sums(const std::int8_t* codes, const std::int8_t* const (&a)[T],
                                                int32x4_t (&s)[T][2]) {
  int8x16_t a0[T], a1[T];
  for (int t = 0; t < T; ++t) {
    a0[t] = vld1q_s8(a[t]);
    a1[t] = vld1q_s8(a[t] + 16);
  }
#if defined(__ARM_FEATURE_DOTPROD)
  for (int t = 0; t < T; ++t) s[t][0] = s[t][1] = vdupq_n_s32(0);
  for_dwords([&](auto c) __attribute__((always_inline)) {
    constexpr int kC = decltype(c)::value;
    const int8x16_t w0 = vld1q_s8(codes + 32 * kC), w1 = vld1q_s8(codes + 32 * kC + 16);
    for (int t = 0; t < T; ++t) {
      const int8x16_t av = kC < 4 ? a0[t] : a1[t];
      s[t][0] = vdotq_laneq_s32(s[t][0], w0, av, kC % 4);
      s[t][1] = vdotq_laneq_s32(s[t][1], w1, av, kC % 4);
    }
  });
#else
  if constexpr (R == ProductRange::kByte) {
    // q[t][j]: rows 2j, 2j + 1 as two int32 lanes each (products widened in pairs).
    int32x4_t q[T][4];
    for (int t = 0; t < T; ++t) q[t][0] = q[t][1] = q[t][2] = q[t][3] = vdupq_n_s32(0);
    for_dwords([&](auto c) __attribute__((always_inline)) {
      constexpr int kC = decltype(c)::value;
      const int8x16_t w0 = vld1q_s8(codes + 32 * kC), w1 = vld1q_s8(codes + 32 * kC + 16);
      for (int t = 0; t < T; ++t) {
        const int8x16_t ab =
            vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(kC < 4 ? a0[t] : a1[t]), kC % 4));
        q[t][0] = vpadalq_s16(q[t][0], vmull_s8(vget_low_s8(w0), vget_low_s8(ab)));
        q[t][1] = vpadalq_s16(q[t][1], vmull_high_s8(w0, ab));
        q[t][2] = vpadalq_s16(q[t][2], vmull_s8(vget_low_s8(w1), vget_low_s8(ab)));
        q[t][3] = vpadalq_s16(q[t][3], vmull_high_s8(w1, ab));
      }
    });
    for (int t = 0; t < T; ++t) {
      s[t][0] = vpaddq_s32(q[t][0], q[t][1]);
      s[t][1] = vpaddq_s32(q[t][2], q[t][3]);
    }
  } else {
    // p[t][j]: rows 2j, 2j + 1 as 4 int16 lanes each, one product per dword added to each lane.
    int16x8_t p[T][4];
    for (int t = 0; t < T; ++t) p[t][0] = p[t][1] = p[t][2] = p[t][3] = vdupq_n_s16(0);
    for_dwords([&](auto c) __attribute__((always_inline)) {
      constexpr int kC = decltype(c)::value;
      const int8x16_t w0 = vld1q_s8(codes + 32 * kC), w1 = vld1q_s8(codes + 32 * kC + 16);
      for (int t = 0; t < T; ++t) {
        const int8x16_t ab =
            vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(kC < 4 ? a0[t] : a1[t]), kC % 4));
        p[t][0] = vmlal_s8(p[t][0], vget_low_s8(w0), vget_low_s8(ab));
        p[t][1] = vmlal_high_s8(p[t][1], w0, ab);
        p[t][2] = vmlal_s8(p[t][2], vget_low_s8(w1), vget_low_s8(ab));
        p[t][3] = vmlal_high_s8(p[t][3], w1, ab);
      }
    });
    for (int t = 0; t < T; ++t) {
      for (int h = 0; h < 2; ++h) {
        if constexpr (R == ProductRange::kNibble) {
          s[t][h] = vpaddlq_s16(vpaddq_s16(p[t][2 * h], p[t][2 * h + 1]));
        } else {
          s[t][h] = vpaddq_s32(vpaddlq_s16(p[t][2 * h]), vpaddlq_s16(p[t][2 * h + 1]));
        }
      }
    }
  }
#endif
}

// The 8 rows of a chunk; rows past n_rows repeat the last row (their lanes are computed and dropped).
template <class Block>
inline void chunk_rows8(const void* w, std::size_t w_stride, int n_rows, const Block* (&rows)[8]) {
  for (int r = 0; r < 8; ++r) {
    rows[r] = reinterpret_cast<const Block*>(static_cast<const std::uint8_t*>(w) +
                                             static_cast<std::size_t>(std::min(r, n_rows - 1)) * w_stride);
  }
}

// The one-token kernels' hsum8 over the 8 lane chains acc[k] (k = block or super-block index mod 8)
// of T tokens and 2 row halves: x_i = a_{4+i} + a_i, then (x0 + x2) + (x1 + x3).
template <int T>
inline void hsum8_chains(const float32x4_t (&acc)[8][T][2], float32x4_t (&out)[T][2]) {
  for (int t = 0; t < T; ++t) {
    for (int h = 0; h < 2; ++h) {
      const float32x4_t x0 = vaddq_f32(acc[4][t][h], acc[0][t][h]), x1 = vaddq_f32(acc[5][t][h], acc[1][t][h]);
      const float32x4_t x2 = vaddq_f32(acc[6][t][h], acc[2][t][h]), x3 = vaddq_f32(acc[7][t][h], acc[3][t][h]);
      out[t][h] = vaddq_f32(vaddq_f32(x0, x2), vaddq_f32(x1, x3));
    }
  }
}

// T tokens (y[t] their split rows) against the tile: out[t][h] = rows 4h .. 4h + 3's outputs.
template <class Traits, int T>
inline void blocks8_tokens(const Blocks8Tile& tile, std::int64_t nb, const Q8_0SplitRow (&y)[T],
                           float32x4_t (&out)[T][2]) {
  float32x4_t acc[8][T][2];
  for (int k = 0; k < 8; ++k) {
    float32x4_t f[T][2];
    for (int t = 0; t < T; ++t) f[t][0] = f[t][1] = vdupq_n_f32(0.0f);
    for (std::int64_t b = k; b < nb; b += 8) {
      const std::int8_t* a[T];
      for (int t = 0; t < T; ++t) a[t] = y[t].qs + b * kQK;
      int32x4_t s[T][2];
      blocks8_sums<Traits::kRange, T>(tile.codes + 256 * b, a, s);
      const float32x4_t xd0 = vld1q_f32(tile.d + 8 * b), xd1 = vld1q_f32(tile.d + 8 * b + 4);
      for (int t = 0; t < T; ++t) {
        if constexpr (Traits::kOffsetShift > 0) {
          // The codes' offset through the activation sums, as the one-token kernel:
          // sum((q - 2^k) a) = sum(q a) - (sum(a) << k).
          const int32x4_t off = vshlq_n_s32(vdupq_n_s32(y[t].sum[b]), Traits::kOffsetShift);
          s[t][0] = vsubq_s32(s[t][0], off);
          s[t][1] = vsubq_s32(s[t][1], off);
        }
        const float32x4_t yd = vdupq_n_f32(y[t].d[b]);
        f[t][0] = vfmaq_f32(f[t][0], vcvtq_f32_s32(s[t][0]), vmulq_f32(xd0, yd));
        f[t][1] = vfmaq_f32(f[t][1], vcvtq_f32_s32(s[t][1]), vmulq_f32(xd1, yd));
      }
    }
    // The minimum's chain k in a pass of its own (fewer live registers; the chains are
    // independent), then acc + macc as the one-token kernel adds them (macc = +0 without a
    // minimum: the add still turns a -0 lane into +0).
    float32x4_t fm[T][2];
    for (int t = 0; t < T; ++t) fm[t][0] = fm[t][1] = vdupq_n_f32(0.0f);
    if constexpr (Traits::kMin) {
      for (std::int64_t b = k; b < nb; b += 8) {
        const float32x4_t xm0 = vld1q_f32(tile.m + 8 * b), xm1 = vld1q_f32(tile.m + 8 * b + 4);
        for (int t = 0; t < T; ++t) {
          const float32x4_t ys = vdupq_n_f32(y[t].s[b]);
          fm[t][0] = vfmaq_f32(fm[t][0], xm0, ys);
          fm[t][1] = vfmaq_f32(fm[t][1], xm1, ys);
        }
      }
    }
    for (int t = 0; t < T; ++t) {
      acc[k][t][0] = vaddq_f32(f[t][0], fm[t][0]);
      acc[k][t][1] = vaddq_f32(f[t][1], fm[t][1]);
    }
  }
  hsum8_chains(acc, out);
}

template <class Traits>
inline void blocks8_gemm(const Traits& tr, const void* w, std::size_t w_stride, int n_rows, const void* a,
                         std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride,
                         void* scratch) {
  using Block = typename Traits::Block;
  const std::int64_t nb = n / kQK;
  const Block* rows[8];
  chunk_rows8(w, w_stride, n_rows, rows);
  const Blocks8Tile tile = blocks8_tile(scratch, nb);
  for (std::int64_t b = 0; b < nb; ++b) blocks8_pack(tr, rows, b, tile);
  const auto* act = static_cast<const std::uint8_t*>(a);
  const auto group = [&]<int T>(std::int64_t t0) {
    Q8_0SplitRow ys[T];
    for (int t = 0; t < T; ++t) ys[t] = q8_0_split_row(act + static_cast<std::size_t>(t0 + t) * a_stride, n);
    float32x4_t out[T][2];
    blocks8_tokens<Traits, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) {
      float* dst = y + (t0 + t) * y_stride;
      if (n_rows == 8) {
        vst1q_f32(dst, out[t][0]);
        vst1q_f32(dst + 4, out[t][1]);
      } else {
        alignas(16) float o[8];
        vst1q_f32(o, out[t][0]);
        vst1q_f32(o + 4, out[t][1]);
        std::copy_n(o, n_rows, dst);
      }
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

// Each type's codes as the one-token kernel forms them, its scale (and minimum) and offset.
template <class B, bool Min, int Shift, ProductRange R>
struct LegacyTraits {
  using Block = B;
  static constexpr bool kMin = Min;
  static constexpr int kOffsetShift = Shift;
  static constexpr ProductRange kRange = R;
  float d(const Block& x) const { return h2f(x.d); }
  float m(const Block& x) const {
    if constexpr (Min) return h2f(x.m);
    return 0.0f;
  }
};

struct Q4_0Traits : LegacyTraits<BlockQ4_0, false, 3, ProductRange::kNibble> {
  Codes32 codes(const BlockQ4_0& x) const { return unpack_nibbles(x.qs); }
};
struct Q4_1Traits : LegacyTraits<BlockQ4_1, true, 0, ProductRange::kNibble> {
  Codes32 codes(const BlockQ4_1& x) const { return unpack_nibbles(x.qs); }
};
struct Q5_0Traits : LegacyTraits<BlockQ5_0, false, 4, ProductRange::kFive> {
  Codes32 codes(const BlockQ5_0& x) const { return q5_codes(x.qs, x.qh); }
};
struct Q5_1Traits : LegacyTraits<BlockQ5_1, true, 0, ProductRange::kFive> {
  Codes32 codes(const BlockQ5_1& x) const { return q5_codes(x.qs, x.qh); }
};
struct Q8_0Traits : LegacyTraits<BlockQ8_0, false, 0, ProductRange::kByte> {
  Codes32 codes(const BlockQ8_0& x) const { return {vld1q_s8(x.qs), vld1q_s8(x.qs + 16)}; }
};

// MultiDot::gemm8 of a type (Traits above, or codebook8_gemm-inl.h's).
template <class Traits>
void gemm8_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                   std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  blocks8_gemm(Traits{}, w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}

}  // namespace
}  // namespace wisp::kernels::neon
