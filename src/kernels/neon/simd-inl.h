// AArch64 Advanced SIMD building blocks of the dot kernels, written once and compiled twice:
// kernels.cpp builds them for plain ARMv8.0 NEON, kernels_dotprod.cpp with +dotprod (SDOT), and
// the preprocessor (__ARM_FEATURE_DOTPROD) picks the integer dot. Everything here has internal
// linkage (anonymous namespace) so the dotprod copy can never be linked into a plain-NEON caller.
//
// The float work keeps the scalar references' layout (kernels/ggml_order.h): 8 float lanes held
// as two float32x4 (lanes 0-3 and 4-7), each lane the exact integer sum of 4 consecutive products,
// accumulated with a fused multiply-add and folded as hsum8 does. Integer sums are exact in any
// order and every float operation is the one the reference performs, so results are bit-equal.
// Fused multiply-adds are written out (vfmaq, __builtin_fmaf) wherever ggml fuses, never left to
// the compiler's contraction.
#pragma once

#include <arm_neon.h>

#include <bit>
#include <cstdint>
#include <cstring>

namespace wisp::kernels::neon {
namespace {

// Half to float with the FCVT instruction: exact, as the scalar conversion.
inline float h2f(std::uint16_t h) { return static_cast<float>(std::bit_cast<__fp16>(h)); }

// acc + the 4 lanes of 4 consecutive products a[4l..4l+3] . b[4l..4l+3], exactly, for any int8
// values (-128 included: one product is at most 2^14, which int16 holds).
inline int32x4_t dot4(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
  return vdotq_s32(acc, a, b);
#else
  const int16x8_t lo = vmull_s8(vget_low_s8(a), vget_low_s8(b));
  const int16x8_t hi = vmull_high_s8(a, b);
  // Pairs widen to int32, then neighbouring pairs add: lanes are products 0-3, 4-7, 8-11, 12-15.
  return vaddq_s32(acc, vpaddq_s32(vpaddlq_s16(lo), vpaddlq_s16(hi)));
#endif
}

inline int32x4_t dot4(int8x16_t a, int8x16_t b) { return dot4(vdupq_n_s32(0), a, b); }

// The 32 codes of a 4-bit block: [0] holds elements 0-15 (low nibbles of qs), [1] elements 16-31
// (high nibbles).
struct Codes32 {
  int8x16_t lo, hi;
};

inline Codes32 unpack_nibbles(const std::uint8_t* qs) {
  const uint8x16_t v = vld1q_u8(qs);
  return {vreinterpretq_s8_u8(vandq_u8(v, vdupq_n_u8(0x0f))), vreinterpretq_s8_u8(vshrq_n_u8(v, 4))};
}

// 0x10 in byte j of the 32 where bit j of the little-endian 32-bit qh is set (Q5's fifth bit).
inline Codes32 fifth_bits(const std::uint8_t* qh) {
  // Byte j takes qh byte j / 8 and tests its bit j % 8.
  static constexpr std::uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t bit = vld1q_u8(kBit);
  const uint8x16_t b01 = vcombine_u8(vdup_n_u8(qh[0]), vdup_n_u8(qh[1]));
  const uint8x16_t b23 = vcombine_u8(vdup_n_u8(qh[2]), vdup_n_u8(qh[3]));
  const uint8x16_t ten = vdupq_n_u8(0x10);
  return {vreinterpretq_s8_u8(vandq_u8(vtstq_u8(b01, bit), ten)),
          vreinterpretq_s8_u8(vandq_u8(vtstq_u8(b23, bit), ten))};
}

// 8 float lanes as two halves, updated as acc[l] = fma(d, lane[l], acc[l]), with one d for all 8
// lanes or one per half (d_lo for lanes 0-3, d_hi for 4-7).
struct Acc8 {
  float32x4_t lo = vdupq_n_f32(0.0f);
  float32x4_t hi = vdupq_n_f32(0.0f);

  void fma(float d_lo, float d_hi, int32x4_t lanes_lo, int32x4_t lanes_hi) {
    lo = vfmaq_f32(lo, vcvtq_f32_s32(lanes_lo), vdupq_n_f32(d_lo));
    hi = vfmaq_f32(hi, vcvtq_f32_s32(lanes_hi), vdupq_n_f32(d_hi));
  }
  void fma(float d, int32x4_t lanes_lo, int32x4_t lanes_hi) { fma(d, d, lanes_lo, lanes_hi); }
};

// (x0 + x2) + (x1 + x3), as the second half of hsum_float_8.
inline float hsum4(float32x4_t x) {
  const float32x4_t t = vaddq_f32(x, vextq_f32(x, x, 2));
  return vgetq_lane_f32(t, 0) + vgetq_lane_f32(t, 1);
}

// hsum_float_8: lanes 4-7 onto 0-3, then {0,2} and {1,3}, then the last pair.
inline float hsum8(const Acc8& a) { return hsum4(vaddq_f32(a.hi, a.lo)); }

}  // namespace
}  // namespace wisp::kernels::neon
