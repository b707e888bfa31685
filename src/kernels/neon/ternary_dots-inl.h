// NEON dots of the ternary types (TQ1_0, TQ2_0) in exactly the float order of their scalar
// references (dot_nonlinear.cpp): per super-block the 256 unsigned codes {0, 1, 2} as eight chunks
// of 32 in element order, each dotted with its 32 activation codes into 8 lanes of 4 consecutive
// products (lane l: values 4l .. 4l + 3 of every chunk), less the activation sums
// bsums[2l] + bsums[2l + 1]; then acc = fma(lane, d_y * d_x, acc), folded by hsum8.
#pragma once

#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// Trit p of each byte b, ((uint8(b * 3^p) * 3) >> 8), with 3^p per byte in `pow`.
inline int8x16_t trits(uint8x16_t b, uint8x16_t pow) {
  const uint8x16_t u = vmulq_u8(b, pow);
  const uint8x8_t three = vdup_n_u8(3);
  const uint8x8_t lo = vshrn_n_u16(vmull_u8(vget_low_u8(u), three), 8);
  return vreinterpretq_s8_u8(vshrn_high_n_u16(lo, vmull_high_u8(u, vdupq_n_u8(3)), 8));
}

struct TqLanes {
  int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
  // One chunk of 32 codes (elements 0-15 in c0, 16-31 in c1) times a[0..31].
  void add(int8x16_t c0, int8x16_t c1, const std::int8_t* a) {
    lo = dot4(lo, c0, vld1q_s8(a));
    hi = dot4(hi, c1, vld1q_s8(a + 16));
  }
};

inline TqLanes tq_code_lanes(const BlockTQ1_0& x, const std::int8_t* a) {
  TqLanes l;
  static constexpr std::uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  // qs[0..31]: chunk p is trit p of the 32 bytes.
  const uint8x16_t q0 = vld1q_u8(x.qs), q1 = vld1q_u8(x.qs + 16);
  for (int p = 0; p < 5; ++p) {
    const uint8x16_t pw = vdupq_n_u8(kPow3[p]);
    l.add(trits(q0, pw), trits(q1, pw), a + 32 * p);
  }
  // qs[32..47]: elements 160 + 16p + j.
  const uint8x16_t q2 = vld1q_u8(x.qs + 32);
  l.add(trits(q2, vdupq_n_u8(1)), trits(q2, vdupq_n_u8(3)), a + 160);
  l.add(trits(q2, vdupq_n_u8(9)), trits(q2, vdupq_n_u8(27)), a + 192);
  // Elements 224 .. 239: trit 4 of qs[32..47]; 240 + 4p + j: trit p of qh[j].
  static constexpr std::uint8_t kQhPow[16] = {1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27};
  std::uint32_t qh;
  std::memcpy(&qh, x.qh, sizeof qh);
  const uint8x16_t h = vreinterpretq_u8_u32(vdupq_n_u32(qh));
  l.add(trits(q2, vdupq_n_u8(81)), trits(h, vld1q_u8(kQhPow)), a + 224);
  return l;
}

inline TqLanes tq_code_lanes(const BlockTQ2_0& x, const std::int8_t* a) {
  TqLanes l;
  const uint8x16_t three = vdupq_n_u8(3);
  for (int c = 0; c < 2; ++c) {
    const uint8x16_t q0 = vld1q_u8(x.qs + 32 * c), q1 = vld1q_u8(x.qs + 32 * c + 16);
    const auto code = [&](uint8x16_t q, int s) {
      return vreinterpretq_s8_u8(vandq_u8(vshlq_u8(q, vdupq_n_s8(static_cast<std::int8_t>(-2 * s))), three));
    };
    for (int s = 0; s < 4; ++s) l.add(code(q0, s), code(q1, s), a + 128 * c + 32 * s);
  }
  return l;
}

template <typename Block>
float tq_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  Acc8 acc;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const TqLanes l = tq_code_lanes(x[b], y[b].qs);
    // Lane l's activation sum: bsums[2l] + bsums[2l + 1].
    const int32x4_t s_lo = vpaddlq_s16(vld1q_s16(y[b].bsums));
    const int32x4_t s_hi = vpaddlq_s16(vld1q_s16(y[b].bsums + 8));
    acc.fma(y[b].d * h2f(x[b].d), vsubq_s32(l.lo, s_lo), vsubq_s32(l.hi, s_hi));
  }
  return hsum8(acc);
}

float dot_tq1_0(const void* w, const void* a, std::int64_t n) { return tq_dot<BlockTQ1_0>(w, a, n); }
float dot_tq2_0(const void* w, const void* a, std::int64_t n) { return tq_dot<BlockTQ2_0>(w, a, n); }

}  // namespace
}  // namespace wisp::kernels::neon
