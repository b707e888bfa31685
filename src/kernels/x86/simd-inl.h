// x86 building blocks of the dot kernels, written once and compiled per ISA: every file under
// src/kernels/avx2/ and src/kernels/avx512/ includes this with its own -m flags, and the
// preprocessor picks the instructions (AVX-512 VNNI/BW in 256-bit registers where the flags allow,
// AVX2 otherwise). Everything here has internal linkage (anonymous namespace) so no copy compiled
// for one ISA can be linked into another's caller.
//
// The float work keeps ggml's layout: 8 float lanes (one __m256), each lane the exact integer sum
// of 4 consecutive products, accumulated with FMA and folded by hsum8. So the AVX-512 path also
// works in 256-bit registers: wider vectors would need a different float order (different bits).
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace wisp::kernels::x86 {
namespace {

// Half to float (F16C; exact, as the scalar conversion).
inline float h2f(std::uint16_t h) { return _cvtsh_ss(h); }

inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// 8 lanes of 4 consecutive products q[j] * a[j] summed exactly, for unsigned q with
// q[2i] * a[2i] + q[2i+1] * a[2i+1] within int16 (q <= 127 for any int8 a): maddubs cannot
// saturate then. VNNI does it in one instruction, and exactly for any u8 q.
inline __m256i dot4_u8s8(__m256i q, __m256i a) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), q, a);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(q, a), _mm256_set1_epi16(1));
#endif
}

// Same lanes for two signed operands (any int8 values, -128 included). VNNI: x + 128 is a u8, and
// (x + 128) . y - 128 * sum(y) is exact in int32. AVX2: widened to int16 first, because the sign
// trick of maddubs (|x| times sign-adjusted y) breaks on -128 * -128.
inline __m256i dot4_s8s8(const std::int8_t* x, const std::int8_t* y) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  const __m256i bias = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i yv = load32(y);
  return _mm256_sub_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_xor_si256(load32(x), bias), yv),
                          _mm256_dpbusd_epi32(_mm256_setzero_si256(), bias, yv));
#else
  const __m256i p0 = _mm256_madd_epi16(_mm256_cvtepi8_epi16(load16(x)), _mm256_cvtepi8_epi16(load16(y)));
  const __m256i p1 = _mm256_madd_epi16(_mm256_cvtepi8_epi16(load16(x + 16)), _mm256_cvtepi8_epi16(load16(y + 16)));
  // hadd works within 128-bit halves: lanes come out as 0 1 4 5 | 2 3 6 7; the permute restores order.
  return _mm256_permute4x64_epi64(_mm256_hadd_epi32(p0, p1), 0xd8);
#endif
}

// The 32 codes of a 4-bit block as bytes: qs[j] & 15 for j < 16, qs[j - 16] >> 4 above.
inline __m256i unpack_nibbles(const std::uint8_t* qs) {
  const __m128i x = load16(qs);
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(x, 4), x), _mm256_set1_epi8(0x0f));
}

// 0x10 in byte j where bit j of the 32-bit little-endian qh is set (the fifth bit of Q5 codes).
inline __m256i fifth_bits(const std::uint8_t* qh_bytes) {
  std::uint32_t qh;
  std::memcpy(&qh, qh_bytes, sizeof qh);
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  return _mm256_maskz_mov_epi8(qh, _mm256_set1_epi8(0x10));
#else
  // Byte j takes qh byte j / 8, then tests its bit j % 8.
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(qh)),
      _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0x0000000000000000));
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
#endif
}

// Software prefetch of the `bytes` that start `ahead` bytes past p (a weight stream read in order:
// the hint runs that far ahead of the loads; a hint past the end of the data never faults).
inline void prefetch_ahead(const void* p, std::size_t bytes, std::size_t ahead = 2048) {
  const char* q = static_cast<const char*>(p) + ahead;
  for (std::size_t o = 0; o < bytes; o += 64) _mm_prefetch(q + o, _MM_HINT_T0);
}

// hsum_float_8: upper 128 bits onto the lower, then lanes {0,2} and {1,3}, then the last pair.
inline float hsum8(__m256 x) {
  __m128 r = _mm_add_ps(_mm256_extractf128_ps(x, 1), _mm256_castps256_ps128(x));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

// (x0 + x2) + (x1 + x3) of a float4.
inline float hsum4(__m128 x) {
  __m128 r = _mm_add_ps(x, _mm_movehl_ps(x, x));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

// Exact sum of 8 int32 lanes (integer addition: any order gives the same value).
inline int hsum_i32(__m256i x) {
  __m128i r = _mm_add_epi32(_mm256_extracti128_si256(x, 1), _mm256_castsi256_si128(x));
  r = _mm_add_epi32(r, _mm_shuffle_epi32(r, 0x4e));
  r = _mm_add_epi32(r, _mm_shuffle_epi32(r, 0xb1));
  return _mm_cvtsi128_si32(r);
}

inline int hsum_i32(__m128i r) {
  r = _mm_add_epi32(r, _mm_shuffle_epi32(r, 0x4e));
  r = _mm_add_epi32(r, _mm_shuffle_epi32(r, 0xb1));
  return _mm_cvtsi128_si32(r);
}

}  // namespace
}  // namespace wisp::kernels::x86
