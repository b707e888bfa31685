// The one-token blocks8 kernels (decode) with AVX-512 VNNI: the same float operations in the same
// order as blocks8_dots-inl.h's (one convert, one multiply by the 8 scale products and one FMA per
// 8 blocks, then hsum8), so the same bits; only the exact integer block sums are formed another
// way. Two blocks per zmm, one vpdpbusd each (the codes as unsigned bytes against the activation
// codes), and the four zmm of a group reduced to the 8 block sums by 128-bit shuffles and adds in
// place of AVX2's maddubs and int16 hadd tree; Q4_0's 8 half scales (18 bytes apart) picked out of
// two 64-byte loads by one word permute in place of 8 scalar loads and inserts. Compiled into the
// AVX-512 bundle only (AVX512F/BW/VL + VNNI). Included by blocks8_dots-inl.h after the helpers
// it shares (nibbles32).
#pragma once

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/simd-inl.h"

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define WISP_BLOCKS8_ZMM 1

namespace wisp::kernels::x86 {
namespace {

// The 32 codes of each of two 4-bit blocks as bytes, block i in the lower 256 bits (low nibbles,
// then high nibbles, as nibbles32): each 16-byte qs broadcast to its two 128-bit lanes, the upper
// lane of each shifted by 4, then masked.
inline __m512i nibbles64(const std::uint8_t* qs0, const std::uint8_t* qs1) {
  const __m512i v = _mm512_mask_broadcast_i32x4(_mm512_broadcast_i32x4(load16(qs0)), 0xff00, load16(qs1));
  return _mm512_and_si512(_mm512_srlv_epi64(v, _mm512_setr_epi64(0, 0, 4, 4, 0, 0, 4, 4)), _mm512_set1_epi8(0x0f));
}

// The 8 block sums of a group from four zmm of int32 partials (zmm j: block 2j in lanes 0-7,
// block 2j + 1 in lanes 8-15), in block order (exact: int32 adds of sums that fit).
inline __m256i block_sums8(__m512i s01, __m512i s23, __m512i s45, __m512i s67) {
  // 128-bit units: [block 0 lo, block 0 hi, block 1 lo, block 1 hi] -> per unit one block's 4 partials.
  const __m512i a = _mm512_add_epi32(_mm512_shuffle_i32x4(s01, s23, _MM_SHUFFLE(2, 0, 2, 0)),
                                     _mm512_shuffle_i32x4(s01, s23, _MM_SHUFFLE(3, 1, 3, 1)));  // blocks 0 1 2 3
  const __m512i b = _mm512_add_epi32(_mm512_shuffle_i32x4(s45, s67, _MM_SHUFFLE(2, 0, 2, 0)),
                                     _mm512_shuffle_i32x4(s45, s67, _MM_SHUFFLE(3, 1, 3, 1)));  // blocks 4 5 6 7
  // Unit k: [a0 + a2, b0 + b2, a1 + a3, b1 + b3], then the two 64-bit halves added: dword 0 is
  // block k, dword 1 block k + 4.
  const __m512i w = _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
  const __m512i z = _mm512_add_epi32(w, _mm512_shuffle_epi32(w, _MM_PERM_BADC));
  return _mm512_castsi512_si256(
      _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0), z));
}

// The half scales d of 8 consecutive Q4_0 blocks (18 bytes each: d at byte 18k, word 9k, all
// within the first 128 bytes of the group), as 8 floats (exact).
inline __m256 q4_0_scales8(const BlockQ4_0* x) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(x);
  const __m512i idx = _mm512_castsi128_si512(_mm_setr_epi16(0, 9, 18, 27, 36, 45, 54, 63));
  const __m512i h = _mm512_permutex2var_epi16(_mm512_loadu_si512(p), idx, _mm512_loadu_si512(p + 64));
  return _mm256_cvtph_ps(_mm512_castsi512_si128(h));
}

// Q4_0 against kQ8_0Split, blocks8_dots<BlockQ4_0, false, 1>'s operations: the offset 8 through
// the activation sums, the tail as zero lanes beyond the row.
inline float dot_q4_0_blocks8_zmm(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const Q8_0SplitRow y = q8_0_split_row(static_cast<const std::uint8_t*>(a), n);
  const std::int64_t nb = n / kQK;
  const __m512i zero = _mm512_setzero_si512();
  __m256 acc = _mm256_setzero_ps();
  std::int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    prefetch_ahead(x + b, sizeof(BlockQ4_0) * 8);
    const std::int8_t* q = y.qs + b * kQK;
    const __m512i s01 = _mm512_dpbusd_epi32(zero, nibbles64(x[b].qs, x[b + 1].qs), _mm512_loadu_si512(q));
    const __m512i s23 = _mm512_dpbusd_epi32(zero, nibbles64(x[b + 2].qs, x[b + 3].qs), _mm512_loadu_si512(q + 64));
    const __m512i s45 = _mm512_dpbusd_epi32(zero, nibbles64(x[b + 4].qs, x[b + 5].qs), _mm512_loadu_si512(q + 128));
    const __m512i s67 = _mm512_dpbusd_epi32(zero, nibbles64(x[b + 6].qs, x[b + 7].qs), _mm512_loadu_si512(q + 192));
    const __m256i isum = _mm256_sub_epi32(block_sums8(s01, s23, s45, s67), _mm256_slli_epi32(load32(y.sum + b), 3));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(q4_0_scales8(x + b), _mm256_loadu_ps(y.d + b)), acc);
  }
  if (b < nb) {
    alignas(32) std::int32_t is[8] = {};
    alignas(32) float yd[8] = {};
    alignas(16) std::uint16_t xd[8] = {};
    for (std::int64_t k = 0; k < nb - b; ++k) {
      const __m256i p =
          _mm256_dpbusd_epi32(_mm256_setzero_si256(), nibbles32(x[b + k].qs), load32(y.qs + (b + k) * kQK));
      is[k] = hsum_i32(p) - 8 * y.sum[b + k];
      yd[k] = y.d[b + k];
      xd[k] = x[b + k].d;
    }
    const __m256 xdv = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(xd)));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(is))),
                          _mm256_mul_ps(xdv, _mm256_load_ps(yd)), acc);
  }
  // blocks8_dots adds the (zero) minimum chain before the fold: acc + 0 is acc, as acc is never -0.
  return hsum8(_mm256_add_ps(acc, _mm256_setzero_ps()));
}

// The half scales d of 8 consecutive Q8_0 blocks (34 bytes each: d at byte 34k, word 17k; blocks
// 0-3 within the group's first 128 bytes, blocks 4-7 within the next 128), as 8 floats (exact).
inline __m256 q8_0_scales8(const BlockQ8_0* x) {
  const auto* p = reinterpret_cast<const std::uint8_t*>(x);
  const __m512i lo = _mm512_permutex2var_epi16(_mm512_loadu_si512(p),
                                               _mm512_castsi128_si512(_mm_setr_epi16(0, 17, 34, 51, 0, 0, 0, 0)),
                                               _mm512_loadu_si512(p + 64));
  const __m512i hi = _mm512_permutex2var_epi16(_mm512_loadu_si512(p + 128),
                                               _mm512_castsi128_si512(_mm_setr_epi16(0, 0, 0, 0, 4, 21, 38, 55)),
                                               _mm512_loadu_si512(p + 192));
  return _mm256_cvtph_ps(_mm512_castsi512_si128(_mm512_mask_blend_epi16(0xf0, lo, hi)));
}

// The codes of two Q8_0 blocks plus 128 (unsigned bytes for vpdpbusd), block i in the lower 256 bits.
inline __m512i q8_codes64(const std::int8_t* qs0, const std::int8_t* qs1) {
  const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(load32(qs0)), load32(qs1), 1);
  return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
}

// Q8_0 against kQ8_0Split, blocks8_dots<BlockQ8_0, false, 1>'s operations: the codes offset by
// 128 as unsigned bytes, the offset taken out through the activation sums,
// sum(x a) = sum((x + 128) a) - 128 sum(a), exact in int32 for any int8 x.
inline float dot_q8_0_blocks8_zmm(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const Q8_0SplitRow y = q8_0_split_row(static_cast<const std::uint8_t*>(a), n);
  const std::int64_t nb = n / kQK;
  const __m512i zero = _mm512_setzero_si512();
  __m256 acc = _mm256_setzero_ps();
  std::int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    prefetch_ahead(x + b, sizeof(BlockQ8_0) * 8);
    const std::int8_t* q = y.qs + b * kQK;
    const __m512i s01 = _mm512_dpbusd_epi32(zero, q8_codes64(x[b].qs, x[b + 1].qs), _mm512_loadu_si512(q));
    const __m512i s23 = _mm512_dpbusd_epi32(zero, q8_codes64(x[b + 2].qs, x[b + 3].qs), _mm512_loadu_si512(q + 64));
    const __m512i s45 = _mm512_dpbusd_epi32(zero, q8_codes64(x[b + 4].qs, x[b + 5].qs), _mm512_loadu_si512(q + 128));
    const __m512i s67 = _mm512_dpbusd_epi32(zero, q8_codes64(x[b + 6].qs, x[b + 7].qs), _mm512_loadu_si512(q + 192));
    const __m256i isum = _mm256_sub_epi32(block_sums8(s01, s23, s45, s67), _mm256_slli_epi32(load32(y.sum + b), 7));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(q8_0_scales8(x + b), _mm256_loadu_ps(y.d + b)), acc);
  }
  if (b < nb) {
    alignas(32) std::int32_t is[8] = {};
    alignas(32) float yd[8] = {};
    alignas(16) std::uint16_t xd[8] = {};
    for (std::int64_t k = 0; k < nb - b; ++k) {
      is[k] = hsum_i32(dot4_s8s8(x[b + k].qs, y.qs + (b + k) * kQK));
      yd[k] = y.d[b + k];
      xd[k] = x[b + k].d;
    }
    const __m256 xdv = _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(xd)));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(is))),
                          _mm256_mul_ps(xdv, _mm256_load_ps(yd)), acc);
  }
  return hsum8(_mm256_add_ps(acc, _mm256_setzero_ps()));
}

}  // namespace
}  // namespace wisp::kernels::x86

#endif
