// wisp's own dot order for the K-quants on NEON (DotKernel::dot_invariant), compiled into the
// plain and the SDOT bundle like kquant_dots-inl.h; the order and its scalar form, which these
// reproduce bit for bit, are in dot_kquant_super8.cpp, and x86/kquant_super8_dots-inl.h computes
// the same operations on x86. Activations in ActFormat::kQ8_K.
//
// Per super-block b the exact integers S_b (sub-block scale times the codes' dot with the
// activation codes, the codes carrying the type's offset) and M_b (minimum times the activation's
// sub-block code sum, from bsums: the precondition of kquant_dots-inl.h) come from integer lanes
// (dot4: SDOT or widened products) summed across. Per group of 8 super-blocks the 8 sums are two
// int32x4 (super-blocks 0-3, 4-7: the scalar form's lanes acc[0..3], acc[4..7]); one convert, one
// multiply by the scale products and one fused multiply-add (vfmaq_f32) per half, two with the
// minimums; hsum8(acc - macc) folds them in the scalar form's tree.
#pragma once

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/kquant_dots-inl.h"
#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// One super-block's exact integers.
struct SuperSums {
  std::int32_t s = 0;  // S_b
  std::int32_t m = 0;  // M_b (0 for the types without minimums)
};

// The common loop: sums(x[b], y[b]) gives a super-block's S_b and M_b. Lanes of a group past the
// row's end are zero in every operand, and fma(0, 0, acc) is acc (acc starts at +0 and never
// becomes -0 under round-to-nearest), as in the x86 kernels.
template <class Block, bool kMin, class Sums>
inline float super8_dot(const void* w, const void* a, std::int64_t n, Sums&& sums) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const std::int64_t nb = n / kQK_K;
  Acc8 acc, macc;
  for (std::int64_t b = 0; b < nb; b += 8) {
    const int m = static_cast<int>(nb - b < 8 ? nb - b : 8);
    alignas(16) std::int32_t s[8] = {}, mn[8] = {};
    alignas(16) float dy[8] = {};
    alignas(16) std::uint16_t xd[8] = {}, xm[8] = {};
    for (int k = 0; k < m; ++k) {
      const SuperSums r = sums(x[b + k], y[b + k]);
      s[k] = r.s;
      mn[k] = r.m;
      dy[k] = y[b + k].d;
      xd[k] = x[b + k].d;
      if constexpr (kMin) xm[k] = x[b + k].dmin;
    }
    const float32x4_t dy_lo = vld1q_f32(dy), dy_hi = vld1q_f32(dy + 4);
    const float16x8_t d16 = vreinterpretq_f16_u16(vld1q_u16(xd));
    acc.lo = vfmaq_f32(acc.lo, vcvtq_f32_s32(vld1q_s32(s)), vmulq_f32(vcvt_f32_f16(vget_low_f16(d16)), dy_lo));
    acc.hi = vfmaq_f32(acc.hi, vcvtq_f32_s32(vld1q_s32(s + 4)), vmulq_f32(vcvt_high_f32_f16(d16), dy_hi));
    if constexpr (kMin) {
      const float16x8_t m16 = vreinterpretq_f16_u16(vld1q_u16(xm));
      macc.lo = vfmaq_f32(macc.lo, vcvtq_f32_s32(vld1q_s32(mn)), vmulq_f32(vcvt_f32_f16(vget_low_f16(m16)), dy_lo));
      macc.hi = vfmaq_f32(macc.hi, vcvtq_f32_s32(vld1q_s32(mn + 4)), vmulq_f32(vcvt_high_f32_f16(m16), dy_hi));
    }
  }
  acc.lo = vsubq_f32(acc.lo, macc.lo);
  acc.hi = vsubq_f32(acc.hi, macc.hi);
  return hsum8(acc);
}

// M_b of the types with 16-value sub-blocks and 4-bit minimums (Q2_K): min[i] * bsums[i].
inline std::int32_t min_sum16(const std::uint8_t* scales, const BlockQ8_K& y) {
  const uint8x16_t sc = vld1q_u8(scales);
  const int16x8_t mn = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(vshrq_n_u8(sc, 4))));
  const int16x8_t mn_hi = vreinterpretq_s16_u16(vmovl_high_u8(vshrq_n_u8(sc, 4)));
  const int16x8_t b_lo = vld1q_s16(y.bsums), b_hi = vld1q_s16(y.bsums + 8);
  int32x4_t p = vmull_s16(vget_low_s16(b_lo), vget_low_s16(mn));
  p = vmlal_high_s16(p, b_lo, mn);
  p = vmlal_s16(p, vget_low_s16(b_hi), vget_low_s16(mn_hi));
  p = vmlal_high_s16(p, b_hi, mn_hi);
  return vaddvq_s32(p);
}

// Q2_K: codes 0..3, value 32 s + l of chunk c (c < 2, s < 4) is bits 2s, 2s+1 of qs[32 c + l];
// sub-block 8 c + 2 s + l / 16, with its 4-bit scale and minimum.
inline SuperSums q2k_sums(const BlockQ2_K& x, const BlockQ8_K& y) {
  const uint8x16_t m3 = vdupq_n_u8(3);
  int32x4_t lanes = vdupq_n_s32(0);
  for (int c = 0; c < 2; ++c) {
    uint8x16_t q0 = vld1q_u8(x.qs + 32 * c), q1 = vld1q_u8(x.qs + 32 * c + 16);
    for (int s = 0; s < 4; ++s) {
      const int sub = 8 * c + 2 * s;
      const std::int8_t* av = y.qs + 128 * c + 32 * s;
      lanes = vmlaq_n_s32(lanes, dot4(vreinterpretq_s8_u8(vandq_u8(q0, m3)), vld1q_s8(av)), x.scales[sub] & 15);
      lanes =
          vmlaq_n_s32(lanes, dot4(vreinterpretq_s8_u8(vandq_u8(q1, m3)), vld1q_s8(av + 16)), x.scales[sub + 1] & 15);
      q0 = vshrq_n_u8(q0, 2);
      q1 = vshrq_n_u8(q1, 2);
    }
  }
  return {vaddvq_s32(lanes), min_sum16(x.scales, y)};
}

// Q3_K: codes -4..3 (2 low bits as Q2_K's, minus 4 where the hmask bit 4 c + s of byte l is
// clear); 16 signed 6-bit scales (scale - 32), no minimums.
inline SuperSums q3k_sums(const BlockQ3_K& x, const BlockQ8_K& y) {
  int scale[16];
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? (x.scales[i] & 0x0f) : (x.scales[i - 8] >> 4);
    const int high = (x.scales[8 + i % 4] >> (2 * (i / 4))) & 3;
    scale[i] = (low | (high << 4)) - 32;
  }
  const uint8x16_t m3 = vdupq_n_u8(3), four = vdupq_n_u8(4);
  const uint8x16_t h0 = vld1q_u8(x.hmask), h1 = vld1q_u8(x.hmask + 16);
  int32x4_t lanes = vdupq_n_s32(0);
  for (int c = 0; c < 2; ++c) {
    uint8x16_t q0 = vld1q_u8(x.qs + 32 * c), q1 = vld1q_u8(x.qs + 32 * c + 16);
    for (int s = 0; s < 4; ++s) {
      const int sub = 8 * c + 2 * s;
      const uint8x16_t bit = vdupq_n_u8(static_cast<std::uint8_t>(1 << (4 * c + s)));
      // low | 4 where the bit is set, minus 4: -4..3.
      const int8x16_t c0 = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q0, m3), vandq_u8(vtstq_u8(h0, bit), four))),
                                    vreinterpretq_s8_u8(four));
      const int8x16_t c1 = vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q1, m3), vandq_u8(vtstq_u8(h1, bit), four))),
                                    vreinterpretq_s8_u8(four));
      const std::int8_t* av = y.qs + 128 * c + 32 * s;
      lanes = vmlaq_n_s32(lanes, dot4(c0, vld1q_s8(av)), scale[sub]);
      lanes = vmlaq_n_s32(lanes, dot4(c1, vld1q_s8(av + 16)), scale[sub + 1]);
      q0 = vshrq_n_u8(q0, 2);
      q1 = vshrq_n_u8(q1, 2);
    }
  }
  return {vaddvq_s32(lanes), 0};
}

inline SuperSums q4k_sums(const BlockQ4_K& x, const BlockQ8_K& y) {
  const Q4KScales s = q4k_scales(x.scales);
  const Lanes8 l = q4k_lanes(x, y, s);
  return {hsum_i32(l.lo, l.hi), vaddvq_s32(q4k_min_products(y, s.min))};
}

// Q5_K: Q4_K's nibbles with a fifth bit: for chunk c, bit 2 c of qh[l] for value 64 c + l, bit
// 2 c + 1 for value 64 c + 32 + l.
inline SuperSums q5k_sums(const BlockQ5_K& x, const BlockQ8_K& y) {
  const Q4KScales s = q4k_scales(x.scales);
  const uint8x16_t m4 = vdupq_n_u8(0x0f), b5 = vdupq_n_u8(0x10);
  uint8x16_t h0 = vld1q_u8(x.qh), h1 = vld1q_u8(x.qh + 16);
  int32x4_t lanes = vdupq_n_s32(0);
  for (int c = 0; c < 4; ++c) {
    const uint8x16_t q0 = vld1q_u8(x.qs + 32 * c), q1 = vld1q_u8(x.qs + 32 * c + 16);
    const int8x16_t l0 = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q0, m4), vandq_u8(vshlq_n_u8(h0, 4), b5)));
    const int8x16_t l1 = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q1, m4), vandq_u8(vshlq_n_u8(h1, 4), b5)));
    const int8x16_t u0 = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q0, 4), vandq_u8(vshlq_n_u8(h0, 3), b5)));
    const int8x16_t u1 = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q1, 4), vandq_u8(vshlq_n_u8(h1, 3), b5)));
    const std::int8_t* av = y.qs + 64 * c;
    lanes = vmlaq_n_s32(lanes, dot4(dot4(l0, vld1q_s8(av)), l1, vld1q_s8(av + 16)), s.scale[2 * c]);
    lanes = vmlaq_n_s32(lanes, dot4(dot4(u0, vld1q_s8(av + 32)), u1, vld1q_s8(av + 48)), s.scale[2 * c + 1]);
    h0 = vshrq_n_u8(h0, 2);
    h1 = vshrq_n_u8(h1, 2);
  }
  return {vaddvq_s32(lanes), vaddvq_s32(q4k_min_products(y, s.min))};
}

inline SuperSums q6k_sums(const BlockQ6_K& x, const BlockQ8_K& y) {
  const Lanes8 l = q6k_lanes(x, y);
  return {hsum_i32(l.lo, l.hi), 0};
}

float dot_q2_k_super8(const void* w, const void* a, std::int64_t n) {
  return super8_dot<BlockQ2_K, true>(w, a, n, q2k_sums);
}
float dot_q3_k_super8(const void* w, const void* a, std::int64_t n) {
  return super8_dot<BlockQ3_K, false>(w, a, n, q3k_sums);
}
float dot_q4_k_super8(const void* w, const void* a, std::int64_t n) {
  return super8_dot<BlockQ4_K, true>(w, a, n, q4k_sums);
}
float dot_q5_k_super8(const void* w, const void* a, std::int64_t n) {
  return super8_dot<BlockQ5_K, true>(w, a, n, q5k_sums);
}
float dot_q6_k_super8(const void* w, const void* a, std::int64_t n) {
  return super8_dot<BlockQ6_K, false>(w, a, n, q6k_sums);
}

}  // namespace
}  // namespace wisp::kernels::neon
