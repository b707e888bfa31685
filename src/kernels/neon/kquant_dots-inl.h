// NEON dots of Q4_K and Q6_K against Q8_K activations in the float orders of the scalar
// references (dot_kquant_x86.cpp): the one-token lanes (8 int32 lanes of 4 consecutive products
// per 32-value chunk, scaled by the sub-block scale and summed over the super-block), the tiled
// GEMM (one exact integer per super-block) and, for Q4_K, the repacked GEMV/GEMM. The integer
// parts are exact in any order; the float steps follow the references one by one.
//
// Precondition shared with the scalar one-token kernels: the activation's bsums are the sums of
// its codes, as quantize_act_q8_K writes them.
#pragma once

#include <cmath>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// The tiled GEMM's per-super-block float steps (dot_kquant_x86.cpp: tiled()). The last step is
// fused, as in ggml's GEMM: the reference writes `acc + r * y.d` and gets the FMA from GCC's
// default contraction (-ffp-contract=fast with FMA available: -march=native on x86-64, always
// on AArch64), which is why no build of the kernels may pass -ffp-contract=off.
inline float tiled_step(float acc, int s1, int s2, float d, float dmin, float yd) {
  float r = static_cast<float>(s1) * d;
  if (dmin != 0.0f || s2 != 0) r = __builtin_fmaf(-dmin, static_cast<float>(s2), r);
  return __builtin_fmaf(r, yd, acc);
}

// Sum of the 8 lanes (integer: exact in any order).
inline int hsum_i32(int32x4_t lo, int32x4_t hi) { return vaddvq_s32(vaddq_s32(lo, hi)); }

// ---- Q4_K -----------------------------------------------------------------------------------

// Sub-block scales and mins (6 bits each, block_layouts.h).
struct Q4KScales {
  int scale[8];
  int16x8_t min;
};

inline Q4KScales q4k_scales(const std::uint8_t* s) {
  Q4KScales r;
  std::int16_t mn[8];
  for (int j = 0; j < 4; ++j) {
    r.scale[j] = s[j] & 0x3f;
    mn[j] = static_cast<std::int16_t>(s[j + 4] & 0x3f);
    r.scale[j + 4] = (s[j + 8] & 0x0f) | ((s[j] >> 6) << 4);
    mn[j + 4] = static_cast<std::int16_t>((s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4));
  }
  r.min = vld1q_s16(mn);
  return r;
}

// Lane i: min[2i] * asum(2i) + min[2i+1] * asum(2i+1), asum(s) = bsums[2s] + bsums[2s+1] (the
// 32-value activation sum of sub-block s; two bsums of at most 16 * 128 fit int16).
inline int32x4_t q4k_min_products(const BlockQ8_K& y, int16x8_t min) {
  const int16x8_t asum = vpaddq_s16(vld1q_s16(y.bsums), vld1q_s16(y.bsums + 8));
  return vpaddq_s32(vmull_s16(vget_low_s16(asum), vget_low_s16(min)), vmull_high_s16(asum, min));
}

// Lanes (0-3, 4-7) of scale[2c] * (sub-block 2c products) + scale[2c+1] * (sub-block 2c+1
// products): the 64 values of qs[32c .. 32c+32), low nibbles first, then high nibbles.
struct Lanes8 {
  int32x4_t lo, hi;
};

inline Lanes8 q4k_pair(const std::uint8_t* qs, const std::int8_t* a, int s_lo, int s_hi) {
  const uint8x16_t m4 = vdupq_n_u8(0x0f);
  const uint8x16_t q0 = vld1q_u8(qs), q1 = vld1q_u8(qs + 16);
  const int8x16_t l0 = vreinterpretq_s8_u8(vandq_u8(q0, m4)), l1 = vreinterpretq_s8_u8(vandq_u8(q1, m4));
  const int8x16_t h0 = vreinterpretq_s8_u8(vshrq_n_u8(q0, 4)), h1 = vreinterpretq_s8_u8(vshrq_n_u8(q1, 4));
  // Per lane at most 4 * 15 * 128 * 63 * 2: far inside int32.
  const int32x4_t lo = vmlaq_n_s32(vmulq_n_s32(dot4(l0, vld1q_s8(a)), s_lo), dot4(h0, vld1q_s8(a + 32)), s_hi);
  const int32x4_t hi = vmlaq_n_s32(vmulq_n_s32(dot4(l1, vld1q_s8(a + 16)), s_lo), dot4(h1, vld1q_s8(a + 48)), s_hi);
  return {lo, hi};
}

// All 8 lanes of one super-block: the sum of q4k_pair over its 4 pairs of sub-blocks.
inline Lanes8 q4k_lanes(const BlockQ4_K& x, const BlockQ8_K& y, const Q4KScales& s) {
  Lanes8 sum{vdupq_n_s32(0), vdupq_n_s32(0)};
  for (int c = 0; c < 4; ++c) {
    const Lanes8 p = q4k_pair(x.qs + 32 * c, y.qs + 64 * c, s.scale[2 * c], s.scale[2 * c + 1]);
    sum.lo = vaddq_s32(sum.lo, p.lo);
    sum.hi = vaddq_s32(sum.hi, p.hi);
  }
  return sum;
}

float dot_q4_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  Acc8 acc;
  float32x4_t macc = vdupq_n_f32(0.0f);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Q4KScales s = q4k_scales(x[b].scales);
    const float d = y[b].d * h2f(x[b].d);
    const float dmin = -y[b].d * h2f(x[b].dmin);
    macc = vfmaq_f32(macc, vcvtq_f32_s32(q4k_min_products(y[b], s.min)), vdupq_n_f32(dmin));
    const Lanes8 l = q4k_lanes(x[b], y[b], s);
    acc.fma(d, l.lo, l.hi);
  }
  return hsum8(acc) + hsum4(macc);
}

// Repacked Q4_K: one float update per `kStep` sub-blocks (8: GEMV, 2: GEMM).
template <int kStep>
float q4_k_repacked(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f, macc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Q4KScales s = q4k_scales(x[b].scales);
    const float dd = h2f(x[b].d) * y[b].d;
    const float dm = h2f(x[b].dmin) * y[b].d;
    const int32x4_t mins = q4k_min_products(y[b], s.min);
    if constexpr (kStep == 8) {
      const Lanes8 l = q4k_lanes(x[b], y[b], s);
      acc = __builtin_fmaf(static_cast<float>(hsum_i32(l.lo, l.hi)), dd, acc);
      macc = __builtin_fmaf(static_cast<float>(vaddvq_s32(mins)), dm, macc);
    } else {
      std::int32_t m[4];
      vst1q_s32(m, mins);
      for (int c = 0; c < 4; ++c) {
        const Lanes8 p = q4k_pair(x[b].qs + 32 * c, y[b].qs + 64 * c, s.scale[2 * c], s.scale[2 * c + 1]);
        acc = __builtin_fmaf(static_cast<float>(hsum_i32(p.lo, p.hi)), dd, acc);
        macc = __builtin_fmaf(static_cast<float>(m[c]), dm, macc);
      }
    }
  }
  return acc - macc;
}

float dot_q4_k_repacked(const void* w, const void* a, std::int64_t n) { return q4_k_repacked<8>(w, a, n); }
float dot_q4_k_repacked_x4(const void* w, const void* a, std::int64_t n) { return q4_k_repacked<2>(w, a, n); }

float dot_q4_k_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Q4KScales s = q4k_scales(x[b].scales);
    const Lanes8 l = q4k_lanes(x[b], y[b], s);
    acc = tiled_step(acc, hsum_i32(l.lo, l.hi), vaddvq_s32(q4k_min_products(y[b], s.min)), h2f(x[b].d), h2f(x[b].dmin),
                     y[b].d);
  }
  return acc;
}

// ---- Q6_K -----------------------------------------------------------------------------------

// The reference's lanes: lane l sums, over the 8 chunks of 32 values, scale(sub) times the
// products of the unsigned codes (q + 32, 0..63) with elements 4l..4l+3 of the chunk (lanes 0-3
// lie in sub-block 2*chunk, lanes 4-7 in 2*chunk + 1), minus
// 32 * (bsums[2l] * scale[2l] + bsums[2l+1] * scale[2l+1]) -- ggml subtracts the offset lane by
// lane in that layout, so the lanes (not only their sum) must match.
inline Lanes8 q6k_lanes(const BlockQ6_K& x, const BlockQ8_K& y) {
  const uint8x16_t m4 = vdupq_n_u8(0x0f);
  const uint8x16_t m2 = vdupq_n_u8(0x30);
  int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
  for (int h = 0; h < 2; ++h) {
    const std::uint8_t* ql = x.ql + 64 * h;
    const std::uint8_t* qh = x.qh + 32 * h;
    for (int half = 0; half < 2; ++half) {  // bytes 0-15, then 16-31 of each 32-value chunk
      const int o = 16 * half;
      const uint8x16_t qa = vld1q_u8(ql + o), qb = vld1q_u8(ql + 32 + o), hv = vld1q_u8(qh + o);
      // Chunk k of this half: low or high nibble of ql[l] / ql[l + 32], with bits 2k, 2k+1 of qh[l].
      const uint8x16_t codes[4] = {
          vorrq_u8(vandq_u8(qa, m4), vandq_u8(vshlq_n_u8(hv, 4), m2)),
          vorrq_u8(vandq_u8(qb, m4), vandq_u8(vshlq_n_u8(hv, 2), m2)),
          vorrq_u8(vshrq_n_u8(qa, 4), vandq_u8(hv, m2)),
          vorrq_u8(vshrq_n_u8(qb, 4), vandq_u8(vshrq_n_u8(hv, 2), m2)),
      };
      for (int k = 0; k < 4; ++k) {
        const int chunk = 4 * h + k;
        const int8x16_t av = vld1q_s8(y.qs + 32 * chunk + o);
        const int32x4_t p = dot4(vreinterpretq_s8_u8(codes[k]), av);
        if (half == 0) {
          lo = vmlaq_n_s32(lo, p, x.scales[2 * chunk]);
        } else {
          hi = vmlaq_n_s32(hi, p, x.scales[2 * chunk + 1]);
        }
      }
    }
  }
  // Lane l of the offset: bsums[2l] * scale[2l] + bsums[2l+1] * scale[2l+1].
  const int8x16_t sc = vld1q_s8(x.scales);
  const int16x8_t s_lo = vmovl_s8(vget_low_s8(sc)), s_hi = vmovl_high_s8(sc);
  const int16x8_t b_lo = vld1q_s16(y.bsums), b_hi = vld1q_s16(y.bsums + 8);
  const int32x4_t off_lo = vpaddq_s32(vmull_s16(vget_low_s16(b_lo), vget_low_s16(s_lo)), vmull_high_s16(b_lo, s_lo));
  const int32x4_t off_hi = vpaddq_s32(vmull_s16(vget_low_s16(b_hi), vget_low_s16(s_hi)), vmull_high_s16(b_hi, s_hi));
  return {vsubq_s32(lo, vshlq_n_s32(off_lo, 5)), vsubq_s32(hi, vshlq_n_s32(off_hi, 5))};
}

float dot_q6_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  Acc8 acc;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Lanes8 l = q6k_lanes(x[b], y[b]);
    acc.fma(y[b].d * h2f(x[b].d), l.lo, l.hi);
  }
  return hsum8(acc);
}

float dot_q6_k_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Lanes8 l = q6k_lanes(x[b], y[b]);
    acc = tiled_step(acc, hsum_i32(l.lo, l.hi), 0, h2f(x[b].d), 0.0f, y[b].d);
  }
  return acc;
}

}  // namespace
}  // namespace wisp::kernels::neon
