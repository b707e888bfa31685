// The one-token IQ4_XS kernel of wisp's codebook order (decode) with AVX-512 VNNI: the same float
// operations in the same order as codebook8_dots-inl.h's ymm form (per group of 8 super-blocks one
// convert and one FMA of the 8 exact S_b, the tail's zero lanes, then hsum8), through
// kquant_super8_dots512-inl.h's loop, so the same bits; only the integers S_b are formed another
// way, in zmm. Per half-super-block (4 sub-blocks, 64 bytes of qs in one load) the low nibbles give
// the 4 sub-blocks' first 16 values and the high nibbles their last 16, each through one byte
// shuffle of the codebook offset by 128 (unsigned bytes for vpdpbusd, 1 .. 241); the activation's
// two 64-byte vectors of that half are re-paired to the same order by two vpermt2q, so 128-bit unit
// k of both products is sub-block 4h + k and one int32 multiply by one scale vector covers the
// half. The offset comes out once per super-block: 128 * sum_j sc_j * (the sub-block's activation
// code sum, from Q8_K's bsums). The 8 scales come out of the block's first 8 bytes by vector
// shifts, not per sub-block in scalar code. Compiled into the AVX-512 bundle only; included by
// codebook8_dots-inl.h after the helpers it shares.
#pragma once

#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/kquant_super8_dots-inl.h"
#include "kernels/x86/simd-inl.h"

#if defined(WISP_SUPER8_ZMM)
#define WISP_CODEBOOK8_ZMM 1

namespace wisp::kernels::x86 {
namespace {

// The 8 sub-block scales (6 bits, minus 32) of an IQ4_XS super-block as int32 lanes: lane j's low
// 4 bits are bits 4j .. 4j + 3 of scales_l (bytes 4-7), its high 2 bits bits 2j, 2j + 1 of
// scales_h (bytes 2-3, bits 16 + 2j of the block's first dword, shifted down to bits 4-5).
inline __m256i iq4_xs_scales8(const BlockIQ4_XS& x) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(&x);
  std::uint32_t d0, sl;
  std::memcpy(&d0, p, 4);
  std::memcpy(&sl, p + 4, 4);
  const __m256i lo =
      _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(sl)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
  const __m256i hi =
      _mm256_srlv_epi32(_mm256_set1_epi32(static_cast<int>(d0)), _mm256_setr_epi32(12, 14, 16, 18, 20, 22, 24, 26));
  // (lo & 0x0f) | (hi & ~0x0f), then the 6 bits.
  const __m256i v =
      _mm256_and_si256(_mm256_ternarylogic_epi32(lo, hi, _mm256_set1_epi32(0x0f), 0xe4), _mm256_set1_epi32(0x3f));
  return _mm256_sub_epi32(v, _mm256_set1_epi32(32));
}

// 16 int32 partials of S_b for one IQ4_XS super-block (their sum is S_b, exact: each lane of a
// product is at most 8 * 241 * 128 before its scale).
inline __m512i iq4_xs_partials16(const BlockIQ4_XS& x, const BlockQ8_K& y, __m512i lut128) {
  const __m512i m4 = _mm512_set1_epi8(0x0f), zero = _mm512_setzero_si512();
  const __m512i lo_idx = _mm512_setr_epi64(0, 1, 4, 5, 8, 9, 12, 13),
                hi_idx = _mm512_setr_epi64(2, 3, 6, 7, 10, 11, 14, 15);
  const __m256i s8 = iq4_xs_scales8(x);
  const __m512i s = _mm512_castsi256_si512(s8);
  __m512i h[2];
  for (int c = 0; c < 2; ++c) {
    const __m512i q = _mm512_loadu_si512(x.qs + 64 * c);
    const __m512i vlo = _mm512_shuffle_epi8(lut128, _mm512_and_si512(q, m4));
    const __m512i vhi = _mm512_shuffle_epi8(lut128, _mm512_and_si512(_mm512_srli_epi16(q, 4), m4));
    const __m512i a0 = _mm512_loadu_si512(y.qs + 128 * c), a1 = _mm512_loadu_si512(y.qs + 128 * c + 64);
    const __m512i p = _mm512_dpbusd_epi32(zero, vlo, _mm512_permutex2var_epi64(a0, lo_idx, a1));
    h[c] = _mm512_dpbusd_epi32(p, vhi, _mm512_permutex2var_epi64(a0, hi_idx, a1));
  }
  // Unit k of half c: sub-block 4c + k's scale in all four lanes.
  const __m512i sc0 = _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3), s);
  const __m512i sc1 = _mm512_permutexvar_epi32(_mm512_setr_epi32(4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7), s);
  const __m512i ps = _mm512_add_epi32(_mm512_mullo_epi32(h[0], sc0), _mm512_mullo_epi32(h[1], sc1));
  // The offset's share: 128 * sum_j sc_j * (bsums[2j] + bsums[2j + 1]).
  const __m256i bs = _mm256_madd_epi16(load32(y.bsums), _mm256_set1_epi16(1));
  return _mm512_sub_epi32(ps, _mm512_zextsi256_si512(_mm256_slli_epi32(_mm256_mullo_epi32(bs, s8), 7)));
}

inline float dot_iq4_xs_super8_zmm(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m512i lut128 =
      _mm512_broadcast_i32x4(_mm_xor_si128(load16(kIq4NlValues), _mm_set1_epi8(static_cast<char>(0x80))));
  return super8_dot_zmm<BlockIQ4_XS>(w, a, n, [&](std::int64_t b, __m512i& ps, __m256i& pm) {
    ps = iq4_xs_partials16(x[b], y[b], lut128);
    pm = _mm256_setzero_si256();
  });
}

}  // namespace
}  // namespace wisp::kernels::x86

#endif
