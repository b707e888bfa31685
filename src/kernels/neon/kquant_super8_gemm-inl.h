// The prefill GEMMs of wisp's K-quant order on NEON for the types with 32-value sub-blocks, Q4_K
// and Q5_K (MultiDot::gemm8): super8_gemm-inl.h's GEMM with each type's codes, its 6-bit sub-block
// scales and minimums, d and dmin; every output bit-identical to dot_q{4,5}_k_super8
// (kquant_super8_dots-inl.h). Q2_K, Q3_K and Q6_K (16-value sub-blocks) have no NEON GEMM yet.
#pragma once

#include <cstdint>

#include "formats/block_layouts.h"
#include "kernels/neon/kquant_dots-inl.h"
#include "kernels/neon/super8_gemm-inl.h"

namespace wisp::kernels::neon {
namespace {

// The 6-bit scales and minimums of a Q4_K / Q5_K super-block (q4k_scales' unpacking).
inline void k4_scales(const std::uint8_t* s, int (&sc)[8], int (&mn)[8]) {
  for (int j = 0; j < 4; ++j) {
    sc[j] = s[j] & 0x3f;
    mn[j] = s[j + 4] & 0x3f;
    sc[j + 4] = (s[j + 8] & 0x0f) | ((s[j] >> 6) << 4);
    mn[j + 4] = (s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4);
  }
}

// Sub-block j of a Q4_K / Q5_K super-block: values 64 (j / 2) + 32 (j % 2) + l, the low nibbles
// of qs[32 (j / 2) + l] for even j, the high ones for odd j.
inline Codes32 k4_nibbles(const std::uint8_t* qs, int j) {
  const uint8x16_t q0 = vld1q_u8(qs + 32 * (j / 2)), q1 = vld1q_u8(qs + 32 * (j / 2) + 16);
  if (j % 2 == 0) {
    const uint8x16_t m4 = vdupq_n_u8(0x0f);
    return {vreinterpretq_s8_u8(vandq_u8(q0, m4)), vreinterpretq_s8_u8(vandq_u8(q1, m4))};
  }
  return {vreinterpretq_s8_u8(vshrq_n_u8(q0, 4)), vreinterpretq_s8_u8(vshrq_n_u8(q1, 4))};
}

template <class B, ProductRange R>
struct K4Traits {
  using Block = B;
  static constexpr bool kMin = true;
  static constexpr ProductRange kRange = R;
  void scales(const Block& x, int (&sc)[8], int (&mn)[8]) const { k4_scales(x.scales, sc, mn); }
  float d(const Block& x) const { return h2f(x.d); }
  float dmin(const Block& x) const { return h2f(x.dmin); }
};

struct Q4_KTraits : K4Traits<BlockQ4_K, ProductRange::kNibble> {
  Codes32 codes(const BlockQ4_K& x, int j) const { return k4_nibbles(x.qs, j); }
};

// Q5_K: the fifth bit of value 32 j + l is bit j of qh[l] (q5k_sums' planes).
struct Q5_KTraits : K4Traits<BlockQ5_K, ProductRange::kFive> {
  Codes32 codes(const BlockQ5_K& x, int j) const {
    const Codes32 n = k4_nibbles(x.qs, j);
    const int8x16_t sh = vdupq_n_s8(static_cast<std::int8_t>(4 - j));  // bit j to bit 4
    const uint8x16_t b5 = vdupq_n_u8(0x10);
    const uint8x16_t h0 = vandq_u8(vshlq_u8(vld1q_u8(x.qh), sh), b5),
                     h1 = vandq_u8(vshlq_u8(vld1q_u8(x.qh + 16), sh), b5);
    return {vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(n.lo), h0)),
            vreinterpretq_s8_u8(vorrq_u8(vreinterpretq_u8_s8(n.hi), h1))};
  }
};

}  // namespace
}  // namespace wisp::kernels::neon
