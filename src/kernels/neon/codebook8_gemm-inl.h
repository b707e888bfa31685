// The prefill GEMMs of wisp's codebook order on NEON for IQ4_NL, MXFP4 and IQ4_XS
// (MultiDot::gemm8): up to 8 weight rows against every token of a batch, each output
// bit-identical to the one-token kernel dot_{iq4_nl,mxfp4}_blocks8 / dot_iq4_xs_super8
// (codebook8_dots-inl.h, scalar form dot_codebook8.cpp), so batch invariance holds. Compiled into
// the plain and the SDOT bundle.
//
// IQ4_NL, MXFP4: a block decoded through its codebook (one TBL per 16 values, as the one-token kernel decodes it)
// is a Q8_0 block with the block's scale, so these are blocks8_gemm-inl.h's GEMM with the codebook
// values as the codes: the values are decoded once per call into the same scratch tile (320 bytes
// per block) and every token runs blocks8's loop on it. The one-token kernel's float steps are
// blocks8_dot's with the scale d_x = block_scale (IQ4_NL's half, MXFP4's 2^(e - 128), exact), no
// offset and no minimum; the tile holds the same d_x as floats, so the products d_x * d_y and the
// chains are the same. Without SDOT the int16 bound is the values': IQ4_NL's reach -127, so each
// product is widened at once (Q8_0's path); MXFP4's are at most 12 in magnitude (the doubled E2M1
// values), so 8 products per int16 lane (<= 12288) and two such lanes still fit, the 4-bit path.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/blocks8_gemm-inl.h"
#include "kernels/neon/nonlinear_dots-inl.h"

namespace wisp::kernels::neon {
namespace {

template <class B, ProductRange R>
struct CodebookTraits {
  using Block = B;
  static constexpr bool kMin = false;
  static constexpr int kOffsetShift = 0;
  static constexpr ProductRange kRange = R;
  int8x16_t lut = codebook<B>();
  Codes32 codes(const Block& x) const { return lut_values(x.qs, lut); }
  float d(const Block& x) const { return block_scale(x); }
};

struct IQ4_NLTraits : CodebookTraits<BlockIQ4_NL, ProductRange::kByte> {};
struct MXFP4Traits : CodebookTraits<BlockMXFP4, ProductRange::kNibble> {};

// IQ4_XS (ActFormat::kQ8_K), the super8 order of dot_iq4_xs_super8: per super-block b the exact
// S_b = sum over sub-blocks j of (sc_j - 32) * sum(v a), then acc[b % 8] = fma(float(S_b),
// float(d_x) * d_y, acc[b % 8]), hsum8(acc) (the one-token kernel's acc - macc with macc = +0 is
// acc, -0 included). The tile of one super-block: its 8 sub-blocks as 8 blocks8 tiles of the
// codebook values (256 bytes each), the rows' sub-block scales as int32 (8 x 8) and d_x as
// floats: 2336 bytes per 256 values (gemm8_scratch_bytes allows 3072).
struct Iq4XsTile {
  std::int8_t* codes;  // super-block b, sub-block j: codes + 2048 b + 256 j
  std::int32_t* sc;    // sc[64 b + 8 j + r]
  float* d;            // d[8 b + r]
};

inline Iq4XsTile iq4_xs_tile(void* scratch, std::int64_t nb) {
  auto* base = reinterpret_cast<std::int8_t*>((reinterpret_cast<std::uintptr_t>(scratch) + 15) & ~std::uintptr_t{15});
  auto* sc = reinterpret_cast<std::int32_t*>(base + 2048 * nb);
  return {base, sc, reinterpret_cast<float*>(sc + 64 * nb)};
}

// T tokens against the tile: out[t][h] = rows 4h .. 4h + 3's outputs.
template <int T>
inline void iq4_xs_tokens(const Iq4XsTile& tile, std::int64_t nb, const BlockQ8_K* const (&y)[T],
                          float32x4_t (&out)[T][2]) {
  float32x4_t acc[8][T][2];
  for (int k = 0; k < 8; ++k) {
    float32x4_t f[T][2];
    for (int t = 0; t < T; ++t) f[t][0] = f[t][1] = vdupq_n_f32(0.0f);
    for (std::int64_t b = k; b < nb; b += 8) {
      int32x4_t S[T][2];
      for (int t = 0; t < T; ++t) S[t][0] = S[t][1] = vdupq_n_s32(0);
      for (int j = 0; j < 8; ++j) {
        const std::int8_t* a[T];
        for (int t = 0; t < T; ++t) a[t] = y[t][b].qs + 32 * j;
        int32x4_t s[T][2];
        blocks8_sums<ProductRange::kByte, T>(tile.codes + 2048 * b + 256 * j, a, s);
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
    }
    for (int t = 0; t < T; ++t) {
      acc[k][t][0] = f[t][0];
      acc[k][t][1] = f[t][1];
    }
  }
  for (int t = 0; t < T; ++t) {
    for (int h = 0; h < 2; ++h) {
      const float32x4_t x0 = vaddq_f32(acc[4][t][h], acc[0][t][h]), x1 = vaddq_f32(acc[5][t][h], acc[1][t][h]);
      const float32x4_t x2 = vaddq_f32(acc[6][t][h], acc[2][t][h]), x3 = vaddq_f32(acc[7][t][h], acc[3][t][h]);
      out[t][h] = vaddq_f32(vaddq_f32(x0, x2), vaddq_f32(x1, x3));
    }
  }
}

void gemm8_iq4_xs_super8(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                         std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / kQK_K;
  const BlockIQ4_XS* rows[8];
  for (int r = 0; r < 8; ++r) {
    rows[r] = reinterpret_cast<const BlockIQ4_XS*>(static_cast<const std::uint8_t*>(w) +
                                                   static_cast<std::size_t>(std::min(r, n_rows - 1)) * w_stride);
  }
  const Iq4XsTile tile = iq4_xs_tile(scratch, nb);
  const int8x16_t lut = codebook<BlockIQ4_NL>();
  for (std::int64_t b = 0; b < nb; ++b) {
    for (int j = 0; j < 8; ++j) {
      std::int8_t* out = tile.codes + 2048 * b + 256 * j;
      for (int h = 0; h < 2; ++h) {
        Codes32 c[4];
        for (int i = 0; i < 4; ++i) c[i] = lut_values(rows[4 * h + i][b].qs + 16 * j, lut);
        transpose4(c[0].lo, c[1].lo, c[2].lo, c[3].lo, out + 16 * h, 32);
        transpose4(c[0].hi, c[1].hi, c[2].hi, c[3].hi, out + 16 * (8 + h), 32);
      }
      for (int r = 0; r < 8; ++r) {
        const BlockIQ4_XS& x = rows[r][b];
        tile.sc[64 * b + 8 * j + r] =
            (((x.scales_l[j / 2] >> (4 * (j % 2))) & 0x0f) | (((x.scales_h >> (2 * j)) & 3) << 4)) - 32;
      }
    }
    for (int r = 0; r < 8; ++r) tile.d[8 * b + r] = h2f(rows[r][b].d);
  }
  const auto* act = static_cast<const std::uint8_t*>(a);
  const auto group = [&]<int T>(std::int64_t t0) {
    const BlockQ8_K* ys[T];
    for (int t = 0; t < T; ++t)
      ys[t] = reinterpret_cast<const BlockQ8_K*>(act + static_cast<std::size_t>(t0 + t) * a_stride);
    float32x4_t out[T][2];
    iq4_xs_tokens<T>(tile, nb, ys, out);
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
