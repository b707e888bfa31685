// wisp's integer order for its WQ types on NEON (DotKernel::dot_invariant), compiled into the plain
// and the SDOT bundle like blocks8_dots-inl.h; the order and its scalar form, which these reproduce
// bit for bit, are in dot_wq_blocks8.cpp (the x86 kernels, x86/wq_blocks8_dots-inl.h, compute the
// same operations). Activations in ActFormat::kQ8_0Split.
//
// Per step of 8 activation blocks (8 / (G / 32) groups): each block's exact integer dot of the
// codes with the activation codes, the 8 sums reduced into two int32x4 (blocks 0-3, 4-7: the scalar
// form's lanes acc[0..3], acc[4..7]) by blocks8_dots-inl.h's sum4x4, the zero-point taken out
// through the activation's code sums (one multiply-subtract per half), then one convert, one
// multiply of the scale products and one vfmaq_f32 per half; simd-inl.h's hsum8 at the end.
//
// Codes and products. The codes are unsigned, q in [0, 2^B - 1]; up to B = 6 (q <= 63) they are
// non-negative int8 values as they are, so SDOT's signed x signed dot, or plain NEON's widening
// multiplies with four products added in int16 (|sum| <= 4 * 63 * 128 = 32256), are exact. The
// 8-bit codes are taken as q - 128 (one XOR with 0x80, every value in int8) and the 128 leaves with
// the zero-point: sum(q a) - z sum(a) = sum((q - 128) a) - (z - 128) sum(a); plain NEON widens
// their products to int32 after two (vpadal), as one product may be 2^14.
//
// Unpacking (formats/FORMAT.md's bit planes): a plane of width w is L = G w / 8 bytes, value i at
// byte i % L, bits [(i / L) w, (i / L) w + w). 16 consecutive values 16 h .. 16 h + 15 are, for
// L >= 16, 16 consecutive bytes shifted by one amount; for L = 8 or 4 the L bytes repeated over the
// vector, each L-byte chunk shifted by its own amount (one vshlq_u8 by a constant vector of
// negative counts). One mask per plane finishes it; the high plane joins with a shift and an OR.
#pragma once

#include <arm_neon.h>

#include <cstdint>
#include <cstring>
#include <utility>

#include "formats/wq_format.h"
#include "kernels/act_quant.h"
#include "kernels/neon/blocks8_dots-inl.h"  // sum4x4
#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// The offset the codes carry into the dot (see the top): 128 for the 8-bit codes, else 0.
template <int B>
constexpr int kWqZeroShift = B == 8 ? 128 : 0;

// Values V .. V + 15 of a group of G values from a plane of width W, as bytes (< 2^W).
template <int W, int G, int V>
inline uint8x16_t wq_plane16(const std::uint8_t* plane) {
  constexpr int kL = G * W / 8;
  uint8x16_t v;
  if constexpr (kL >= 16) {
    constexpr int kShift = V / kL * W;
    v = vld1q_u8(plane + V % kL);
    if constexpr (W == 8) return v;
    if constexpr (kShift != 0) v = vshrq_n_u8(v, kShift);
  } else {
    static_assert(kL == 8 || kL == 4);
    // Byte j of the vector is value V + j: chunk (V + j) / L, byte j % L.
    if constexpr (kL == 8) {
      const uint8x8_t h = vld1_u8(plane);
      v = vcombine_u8(h, h);
    } else {
      std::uint32_t d;
      std::memcpy(&d, plane, 4);
      v = vreinterpretq_u8_u32(vdupq_n_u32(d));
    }
    alignas(16) static constexpr std::int8_t kShifts[16] = {
        -((V + 0) / kL * W),  -((V + 1) / kL * W),  -((V + 2) / kL * W),  -((V + 3) / kL * W),
        -((V + 4) / kL * W),  -((V + 5) / kL * W),  -((V + 6) / kL * W),  -((V + 7) / kL * W),
        -((V + 8) / kL * W),  -((V + 9) / kL * W),  -((V + 10) / kL * W), -((V + 11) / kL * W),
        -((V + 12) / kL * W), -((V + 13) / kL * W), -((V + 14) / kL * W), -((V + 15) / kL * W)};
    v = vshlq_u8(v, vld1q_s8(kShifts));
  }
  return vandq_u8(v, vdupq_n_u8(static_cast<std::uint8_t>((1 << W) - 1)));
}

// Values V .. V + 15 of a group's codes (planes: the block after its header), as the int8 values
// the dot multiplies: q, or q - 128 for the 8-bit codes.
template <int B, int G, int V>
inline int8x16_t wq_codes16(const std::uint8_t* planes) {
  using P = WqPlanes<B>;
  uint8x16_t q = wq_plane16<P::W0, G, V>(planes);
  if constexpr (P::W1 != 0) {
    const uint8x16_t hi = wq_plane16<P::W1, G, V>(planes + G * P::W0 / 8);  // (not inside a NEON macro's arguments)
    q = vorrq_u8(q, vshlq_n_u8(hi, P::W0));
  }
  if constexpr (B == 8) q = veorq_u8(q, vdupq_n_u8(0x80));
  return vreinterpretq_s8_u8(q);
}

// One 32-value block's products (codes c0: values 0-15, c1: 16-31) in 4 int32 lanes, exactly.
template <int B>
inline int32x4_t wq_block_lanes(int8x16_t c0, int8x16_t c1, const std::int8_t* a) {
  const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(vdotq_s32(vdupq_n_s32(0), c0, a0), c1, a1);
#else
  if constexpr (B == 8) {
    int32x4_t s = vpaddlq_s16(vmull_s8(vget_low_s8(c0), vget_low_s8(a0)));
    s = vpadalq_s16(s, vmull_high_s8(c0, a0));
    s = vpadalq_s16(s, vmull_s8(vget_low_s8(c1), vget_low_s8(a1)));
    return vpadalq_s16(s, vmull_high_s8(c1, a1));
  } else {
    int16x8_t p = vmull_s8(vget_low_s8(c0), vget_low_s8(a0));
    p = vmlal_high_s8(p, c0, a0);
    p = vmlal_s8(p, vget_low_s8(c1), vget_low_s8(a1));
    p = vmlal_high_s8(p, c1, a1);
    return vpaddlq_s16(p);
  }
#endif
}

template <int N, class F>
inline void wq_static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }
  (std::make_integer_sequence<int, N>{});
}

// The float work of one step, shared with the GEMM (wq_blocks8_gemm-inl.h): p[k] holds block k's
// products in 4 lanes, h[k] and z[k] its group's half scale and zero-point (less the codes' offset),
// sum[k] and yd[k] the activation block's code sum and scale.
inline void wq_finish(const int32x4_t (&p)[8], const std::uint16_t* h, const std::int32_t* z, const std::int32_t* sum,
                      const float* yd, Acc8& acc) {
  // isum = sum(q a) - z sum(a), exact in int32 (|isum| <= 32 * 255 * 127 * 2).
  const int32x4_t is_lo = vmlsq_s32(sum4x4(p[0], p[1], p[2], p[3]), vld1q_s32(z), vld1q_s32(sum));
  const int32x4_t is_hi = vmlsq_s32(sum4x4(p[4], p[5], p[6], p[7]), vld1q_s32(z + 4), vld1q_s32(sum + 4));
  const float16x8_t hv = vreinterpretq_f16_u16(vld1q_u16(h));
  const float32x4_t s_lo = vcvt_f32_f16(vget_low_f16(hv)), s_hi = vcvt_high_f32_f16(hv);
  acc.lo = vfmaq_f32(acc.lo, vcvtq_f32_s32(is_lo), vmulq_f32(s_lo, vld1q_f32(yd)));
  acc.hi = vfmaq_f32(acc.hi, vcvtq_f32_s32(is_hi), vmulq_f32(s_hi, vld1q_f32(yd + 4)));
}

// Group g's 32-value blocks k (the block after its header at hdr): f(k, c0, c1) with the codes of
// values 32 k .. 32 k + 15 and 32 k + 16 .. 32 k + 31 as wq_codes16 gives them.
template <int B, int G, class F>
inline void wq_group_codes(const std::uint8_t* hdr, F&& f) {
  const std::uint8_t* planes = hdr + kWqHeaderBytes;
  wq_static_for<G / 32>([&](auto kc) {
    constexpr int k = decltype(kc)::value;
    f(k, wq_codes16<B, G, 32 * k>(planes), wq_codes16<B, G, 32 * k + 16>(planes));
  });
}

// A group's half scale, and its zero-point less the codes' offset.
inline std::uint16_t wq_scale_bits(const std::uint8_t* hdr) {
  std::uint16_t s;
  std::memcpy(&s, hdr, 2);
  return s;
}
template <int B>
inline std::int32_t wq_zero(const std::uint8_t* hdr) {
  return hdr[2] - kWqZeroShift<B>;
}

// One full step: activation blocks b0 .. b0 + 7 (blk: the first of their 8 / (G / 32) groups).
template <int B, int G>
inline void wq_step(const std::uint8_t* blk, const std::int8_t* qs, const std::int32_t* sum, const float* yd,
                    Acc8& acc) {
  constexpr int kRuns = G / 32;  // activation blocks per group
  constexpr int kBlock = static_cast<int>(wq_block_bytes(B, G));
  int32x4_t p[8];
  alignas(16) std::uint16_t h[8];
  alignas(16) std::int32_t z[8];
  for (int g = 0; g < 8 / kRuns; ++g) {
    const std::uint8_t* hdr = blk + g * kBlock;
    const std::uint16_t s = wq_scale_bits(hdr);
    const std::int32_t zg = wq_zero<B>(hdr);
    wq_group_codes<B, G>(hdr, [&](int k, int8x16_t c0, int8x16_t c1) {
      const int b = g * kRuns + k;
      p[b] = wq_block_lanes<B>(c0, c1, qs + 32 * b);
      h[b] = s;
      z[b] = zg;
    });
  }
  wq_finish(p, h, z, sum, yd, acc);
}

template <int B, int G>
float dot_wq_blocks8(const void* w, const void* a, std::int64_t n) {
  constexpr int kRuns = G / 32;
  constexpr std::int64_t kStep = static_cast<std::int64_t>(wq_block_bytes(B, G)) * (8 / kRuns);  // 8 blocks' bytes
  const auto* blocks = static_cast<const std::uint8_t*>(w);
  const Q8_0SplitRow y = q8_0_split_row(a, n);
  const std::int64_t nb = n / 32;
  Acc8 acc;
  std::int64_t b0 = 0;
  for (; b0 + 8 <= nb; b0 += 8) {
    const std::uint8_t* blk = blocks + b0 / 8 * kStep;
    __builtin_prefetch(blk + 4 * kStep);
    wq_step<B, G>(blk, y.qs + b0 * 32, y.sum + b0, y.d + b0, acc);
  }
  if (b0 < nb) {
    // The tail (whole groups): the same operations on zero-padded copies. A zero header and zero
    // activation codes give isum = 0 and a scale product of 0 in the lanes past the row, and
    // fma(0, 0, acc) is acc (acc starts at +0 and never becomes -0 under round-to-nearest).
    const std::int64_t left = nb - b0;
    alignas(16) std::uint8_t blk[kStep] = {};
    alignas(16) std::int8_t qs[8 * 32] = {};
    alignas(16) std::int32_t sum[8] = {};
    alignas(16) float yd[8] = {};
    std::memcpy(blk, blocks + b0 / 8 * kStep, static_cast<std::size_t>(left / kRuns) * wq_block_bytes(B, G));
    std::memcpy(qs, y.qs + b0 * 32, static_cast<std::size_t>(left * 32));
    std::memcpy(sum, y.sum + b0, static_cast<std::size_t>(left) * sizeof(std::int32_t));
    std::memcpy(yd, y.d + b0, static_cast<std::size_t>(left) * sizeof(float));
    wq_step<B, G>(blk, qs, sum, yd, acc);
  }
  return hsum8(acc);
}

}  // namespace
}  // namespace wisp::kernels::neon
