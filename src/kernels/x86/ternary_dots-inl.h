// SIMD dots of the ternary types (TQ1_0, TQ2_0) in exactly the float order of their scalar
// references (dot_nonlinear.cpp, where the order is described): per super-block the 256 unsigned
// codes {0, 1, 2} come out as eight 32-byte chunks in element order, each multiplied with its 32
// activation codes into 8 lanes of 4 consecutive products (lane l: values 4l .. 4l + 3 of every
// chunk), less the activation sums bsums[2l] + bsums[2l + 1]; then acc = fma(lane, d_y * d_x, acc),
// folded by hsum8. Compiled into the AVX2 and AVX-512 tables.
#pragma once

#include <cstdint>
#include <type_traits>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// The trits of the bytes of v times pow (per 16-bit lane, both of its bytes): trit p of a byte b
// is ((uint8(b * 3^p) * 3) >> 8). Each byte is moved to the top of a 16-bit lane, so the low 16
// bits of its product with 3^p hold uint8(b * 3^p) << 8, and the high half of that times 3 is the
// trit.
inline __m256i trits(__m256i v, __m256i pow) {
  const __m256i three = _mm256_set1_epi16(3);
  const __m256i lo = _mm256_mulhi_epu16(_mm256_mullo_epi16(_mm256_slli_epi16(v, 8), pow), three);
  const __m256i hi = _mm256_mulhi_epu16(_mm256_mullo_epi16(_mm256_and_si256(v, _mm256_set1_epi16(-256)), pow), three);
  return _mm256_or_si256(lo, _mm256_slli_epi16(hi, 8));
}

inline __m256i pow3(int p) {
  return _mm256_set1_epi16(static_cast<short>(p == 0 ? 1 : p == 1 ? 3 : p == 2 ? 9 : p == 3 ? 27 : 81));
}

// Integer lanes of a chunk of 32 unsigned codes (<= 2) times 32 activation codes, added to acc.
inline __m256i add_chunk(__m256i acc, __m256i codes, const std::int8_t* a) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpbusd_epi32(acc, codes, load32(a));
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(codes, load32(a)), _mm256_set1_epi16(1)));
#endif
}

inline __m256i tq_code_lanes(const BlockTQ1_0& x, const std::int8_t* a) {
  __m256i lanes = _mm256_setzero_si256();
  // qs[0..31]: chunk p is trit p of the 32 bytes.
  const __m256i q32 = load32(x.qs);
  for (int p = 0; p < 5; ++p) lanes = add_chunk(lanes, trits(q32, pow3(p)), a + 32 * p);
  // qs[32..47]: elements 160 + 16p + j, two powers per chunk (p in the low half, p + 1 in the high).
  const __m128i q16 = load16(x.qs + 32);
  const __m256i q16x2 = _mm256_set_m128i(q16, q16);
  lanes = add_chunk(lanes, trits(q16x2, _mm256_set_m128i(_mm_set1_epi16(3), _mm_set1_epi16(1))), a + 160);
  lanes = add_chunk(lanes, trits(q16x2, _mm256_set_m128i(_mm_set1_epi16(27), _mm_set1_epi16(9))), a + 192);
  // Elements 224 .. 239: trit 4 of qs[32..47]; 240 + 4p + j: trit p of qh[j] (byte i of the high
  // half is qh[i % 4] at power i / 4, the same for both bytes of a 16-bit lane).
  std::int32_t qh;
  std::memcpy(&qh, x.qh, sizeof qh);
  const __m256i last = _mm256_set_m128i(_mm_set1_epi32(qh), q16);
  const __m256i pw = _mm256_set_epi16(27, 27, 9, 9, 3, 3, 1, 1, 81, 81, 81, 81, 81, 81, 81, 81);
  return add_chunk(lanes, trits(last, pw), a + 224);
}

inline __m256i tq_code_lanes(const BlockTQ2_0& x, const std::int8_t* a) {
  __m256i lanes = _mm256_setzero_si256();
  const __m256i three = _mm256_set1_epi8(3);
  for (int c = 0; c < 2; ++c) {
    const __m256i q = load32(x.qs + 32 * c);
    lanes = add_chunk(lanes, _mm256_and_si256(q, three), a + 128 * c);
    lanes = add_chunk(lanes, _mm256_and_si256(_mm256_srli_epi16(q, 2), three), a + 128 * c + 32);
    lanes = add_chunk(lanes, _mm256_and_si256(_mm256_srli_epi16(q, 4), three), a + 128 * c + 64);
    lanes = add_chunk(lanes, _mm256_and_si256(_mm256_srli_epi16(q, 6), three), a + 128 * c + 96);
  }
  return lanes;
}

template <typename Block>
float tq_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const __m256i sums = _mm256_madd_epi16(load32(y[b].bsums), _mm256_set1_epi16(1));  // lane l: 32l .. 32l + 31
    const __m256i lanes = _mm256_sub_epi32(tq_code_lanes(x[b], y[b].qs), sums);
    const __m256 d = _mm256_set1_ps(y[b].d * h2f(x[b].d));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(lanes), d, acc);
  }
  return hsum8(acc);
}

float dot_tq1_0(const void* w, const void* a, std::int64_t n) { return tq_dot<BlockTQ1_0>(w, a, n); }
float dot_tq2_0(const void* w, const void* a, std::int64_t n) { return tq_dot<BlockTQ2_0>(w, a, n); }

}  // namespace
}  // namespace wisp::kernels::x86
