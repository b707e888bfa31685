// wisp's own dot order for the 32-value types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) on NEON
// (DotKernel::dot_invariant), compiled into the plain and the SDOT bundle like legacy_dots-inl.h;
// the scalar form, which these reproduce bit for bit, and the order itself are described in
// dot_blocks8.cpp. Activations in ActFormat::kQ8_0Split.
//
// Per group of 8 blocks of one weight row: each block's integer dot is exact (in any grouping),
// and the 8 block sums are reduced into two int32x4 (blocks 0-3, 4-7: the scalar form's lanes
// acc[0..3], acc[4..7]) by pairwise adds; then one convert, one multiply of the 8 scale products
// and one fused multiply-add (vfmaq_f32, as the scalar form's std::fma) per half cover the 8
// blocks. The fold is simd-inl.h's hsum8, the scalar form's tree. The x86 kernels
// (x86/blocks8_dots-inl.h) compute the same operations, so an ARM and an x86 host give the same
// bits for the same row.
#pragma once

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/legacy_dots-inl.h"
#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// The half field of 8 consecutive blocks as two float32x4 (blocks 0-3, 4-7), exactly.
template <class Block, class Field>
inline void halves8(const Block* x, Field f, float32x4_t& lo, float32x4_t& hi) {
  alignas(16) std::uint16_t h[8];
  for (int i = 0; i < 8; ++i) h[i] = f(x[i]);
  const float16x8_t v = vreinterpretq_f16_u16(vld1q_u16(h));
  lo = vcvt_f32_f16(vget_low_f16(v));
  hi = vcvt_high_f32_f16(v);
}

// The scales d_x of 8 consecutive blocks of a type with a half field d, as halves8 gives them
// (blocks8_dot's default; the codebook types pass their own, codebook8_dots-inl.h).
struct HalfScales8 {
  template <class Block>
  void operator()(const Block* x, float32x4_t& lo, float32x4_t& hi) const {
    halves8(
        x, [](const Block& v) { return v.d; }, lo, hi);
  }
};

// Lane i = the sum of the 4 lanes of p[i] (exact).
inline int32x4_t sum4x4(int32x4_t p0, int32x4_t p1, int32x4_t p2, int32x4_t p3) {
  return vpaddq_s32(vpaddq_s32(p0, p1), vpaddq_s32(p2, p3));
}

#if defined(__ARM_FEATURE_DOTPROD)

// One 4-bit block's products in 4 int32 lanes (codes 0..15 as signed bytes, SDOT).
inline int32x4_t q4_block_lanes(const std::uint8_t* qs, const std::int8_t* a) {
  const Codes32 c = unpack_nibbles(qs);
  return vdotq_s32(vdotq_s32(vdupq_n_s32(0), c.lo, vld1q_s8(a)), c.hi, vld1q_s8(a + 16));
}

// 4 consecutive 4-bit blocks' exact sums.
inline int32x4_t q4_sums4(const std::uint8_t* const (&qs)[4], const std::int8_t* a) {
  return sum4x4(q4_block_lanes(qs[0], a), q4_block_lanes(qs[1], a + 32), q4_block_lanes(qs[2], a + 64),
                q4_block_lanes(qs[3], a + 96));
}

// One 5-bit block's products in 4 int32 lanes (codes 0..31).
inline int32x4_t q5_block_lanes(const std::uint8_t* qs, const std::uint8_t* qh, const std::int8_t* a) {
  const Codes32 c = q5_codes(qs, qh);
  return vdotq_s32(vdotq_s32(vdupq_n_s32(0), c.lo, vld1q_s8(a)), c.hi, vld1q_s8(a + 16));
}

#else

// One 5-bit block's products in 4 int32 lanes: 8 int16 lanes of 4 products of a code <= 31 with
// an activation code in [-128, 127] (<= 15872 in magnitude), widened in pairs.
inline int32x4_t q5_block_lanes(const std::uint8_t* qs, const std::uint8_t* qh, const std::int8_t* a) {
  const Codes32 c = q5_codes(qs, qh);
  const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
  const int16x8_t p = vaddq_s16(vmull_s8(vget_low_s8(c.lo), vget_low_s8(a0)), vmull_high_s8(c.lo, a0));
  return vpaddlq_s16(vaddq_s16(p, vaddq_s16(vmull_s8(vget_low_s8(c.hi), vget_low_s8(a1)), vmull_high_s8(c.hi, a1))));
}

// One 4-bit block's 32 products added in int16: 8 lanes of 4 products, each product of a code
// <= 15 with an activation code in [-127, 127] at most 1905 in magnitude.
inline int16x8_t q4_block_lanes16(const std::uint8_t* qs, const std::int8_t* a) {
  const Codes32 c = unpack_nibbles(qs);
  const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
  const int16x8_t p = vaddq_s16(vmull_s8(vget_low_s8(c.lo), vget_low_s8(a0)), vmull_high_s8(c.lo, a0));
  return vaddq_s16(p, vaddq_s16(vmull_s8(vget_low_s8(c.hi), vget_low_s8(a1)), vmull_high_s8(c.hi, a1)));
}

// 4 consecutive 4-bit blocks' exact sums: two levels of int16 pairwise adds (16 products,
// <= 30480 < 2^15), then pairs widened to int32.
inline int32x4_t q4_sums4(const std::uint8_t* const (&qs)[4], const std::int8_t* a) {
  const int16x8_t b01 = vpaddq_s16(q4_block_lanes16(qs[0], a), q4_block_lanes16(qs[1], a + 32));
  const int16x8_t b23 = vpaddq_s16(q4_block_lanes16(qs[2], a + 64), q4_block_lanes16(qs[3], a + 96));
  return vpaddlq_s16(vpaddq_s16(b01, b23));
}

#endif

// One Q8_0 block's products in 4 int32 lanes (dot4: SDOT, or products widened in pairs; exact for
// any int8 weight code).
inline int32x4_t q8_block_lanes(const std::int8_t* qs, const std::int8_t* a) {
  return dot4(dot4(vld1q_s8(qs), vld1q_s8(a)), vld1q_s8(qs + 16), vld1q_s8(a + 16));
}

// The common loop. Sums4(x + b, qs + 32 b, sum + b) gives 4 consecutive blocks' exact integer
// sums, scales8(x + b, lo, hi) 8 consecutive blocks' scales d_x exactly; the minimum chain only
// for blocks with a field m.
template <class Block, bool kMin, class Sums4, class Scales8 = HalfScales8>
inline float blocks8_dot(const void* w, const void* a, std::int64_t n, Sums4&& sums4, Scales8 scales8 = {}) {
  const auto* x = static_cast<const Block*>(w);
  const Q8_0SplitRow y = q8_0_split_row(a, n);
  const std::int64_t nb = n / kQK;
  Acc8 acc, macc;
  const auto step = [&](const Block* xb, int32x4_t is_lo, int32x4_t is_hi, const float* yd, const float* ys) {
    float32x4_t xd_lo, xd_hi;
    scales8(xb, xd_lo, xd_hi);
    acc.lo = vfmaq_f32(acc.lo, vcvtq_f32_s32(is_lo), vmulq_f32(xd_lo, vld1q_f32(yd)));
    acc.hi = vfmaq_f32(acc.hi, vcvtq_f32_s32(is_hi), vmulq_f32(xd_hi, vld1q_f32(yd + 4)));
    if constexpr (kMin) {
      float32x4_t xm_lo, xm_hi;
      halves8(
          xb, [](const Block& v) { return v.m; }, xm_lo, xm_hi);
      macc.lo = vfmaq_f32(macc.lo, xm_lo, vld1q_f32(ys));
      macc.hi = vfmaq_f32(macc.hi, xm_hi, vld1q_f32(ys + 4));
    }
  };
  std::int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    __builtin_prefetch(x + b + 64);
    const int32x4_t lo = sums4(x + b, y.qs + b * kQK, y.sum + b);
    const int32x4_t hi = sums4(x + b + 4, y.qs + (b + 4) * kQK, y.sum + b + 4);
    step(x + b, lo, hi, y.d + b, kMin ? y.s + b : nullptr);
  }
  if (b < nb) {
    // The tail: the same operations on zero lanes beyond the row (fma(0, 0, acc) is acc: acc
    // starts at +0 and never becomes -0 under round-to-nearest). The row's last blocks and
    // activation planes are copied into zero-padded groups of 8.
    const std::int64_t left = nb - b;
    Block xb[8] = {};
    alignas(16) std::int8_t qs[8 * kQK] = {};
    alignas(16) std::int32_t sum[8] = {};
    alignas(16) float yd[8] = {}, ys[8] = {};
    for (std::int64_t k = 0; k < left; ++k) {
      xb[k] = x[b + k];
      std::memcpy(qs + k * kQK, y.qs + (b + k) * kQK, kQK);
      sum[k] = y.sum[b + k];
      yd[k] = y.d[b + k];
      ys[k] = y.s[b + k];
    }
    step(xb, sums4(xb, qs, sum), sums4(xb + 4, qs + 4 * kQK, sum + 4), yd, ys);
  }
  // hsum8(acc + macc) for every type, as the scalar form (macc is +0 without a minimum; adding it
  // still turns a -0 lane into +0).
  acc.lo = vaddq_f32(acc.lo, macc.lo);
  acc.hi = vaddq_f32(acc.hi, macc.hi);
  return hsum8(acc);
}

// Q4_0: the offset 8 of the codes through the activation sums, sum((q - 8) a) = sum(q a) - 8 sum(a).
float dot_q4_0_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8_dot<BlockQ4_0, false>(w, a, n, [](const BlockQ4_0* x, const std::int8_t* qs, const std::int32_t* sum) {
    const std::uint8_t* const q[4] = {x[0].qs, x[1].qs, x[2].qs, x[3].qs};
    return vsubq_s32(q4_sums4(q, qs), vshlq_n_s32(vld1q_s32(sum), 3));
  });
}

float dot_q4_1_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8_dot<BlockQ4_1, true>(w, a, n, [](const BlockQ4_1* x, const std::int8_t* qs, const std::int32_t*) {
    const std::uint8_t* const q[4] = {x[0].qs, x[1].qs, x[2].qs, x[3].qs};
    return q4_sums4(q, qs);
  });
}

// 4 consecutive 5-bit blocks' exact sums.
template <class Block>
inline int32x4_t q5_sums4(const Block* x, const std::int8_t* a) {
  return sum4x4(q5_block_lanes(x[0].qs, x[0].qh, a), q5_block_lanes(x[1].qs, x[1].qh, a + 32),
                q5_block_lanes(x[2].qs, x[2].qh, a + 64), q5_block_lanes(x[3].qs, x[3].qh, a + 96));
}

// Q5_0: the offset 16 through the activation sums, as Q4_0's 8.
float dot_q5_0_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8_dot<BlockQ5_0, false>(w, a, n, [](const BlockQ5_0* x, const std::int8_t* qs, const std::int32_t* sum) {
    return vsubq_s32(q5_sums4(x, qs), vshlq_n_s32(vld1q_s32(sum), 4));
  });
}

float dot_q5_1_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8_dot<BlockQ5_1, true>(
      w, a, n, [](const BlockQ5_1* x, const std::int8_t* qs, const std::int32_t*) { return q5_sums4(x, qs); });
}

float dot_q8_0_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8_dot<BlockQ8_0, false>(w, a, n, [](const BlockQ8_0* x, const std::int8_t* qs, const std::int32_t*) {
    return sum4x4(q8_block_lanes(x[0].qs, qs), q8_block_lanes(x[1].qs, qs + 32), q8_block_lanes(x[2].qs, qs + 64),
                  q8_block_lanes(x[3].qs, qs + 96));
  });
}

}  // namespace
}  // namespace wisp::kernels::neon
