// SIMD dots of the 32-value block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) in exactly the float order
// of the scalar references in dot_legacy.cpp: per block, 8 int32 lanes of 4 consecutive products
// (exact), then acc = fma(d_x * d_y, lane, acc) per lane, folded by hsum8. Compiled per ISA (see
// simd.h); tests compare every path with the scalar one for equality.
#pragma once

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// Lanes of (q[j] - offset) * a[j] for codes 0 <= q < 32, exactly.
inline __m256i dot4_offset(__m256i q, int offset, __m256i a) {
  const __m256i off = _mm256_set1_epi8(static_cast<char>(offset));
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_sub_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), q, a),
                          _mm256_dpbusd_epi32(_mm256_setzero_si256(), off, a));
#else
  // Both pair sums stay within int16 (31 * 128 * 2), so the difference is exact before widening.
  const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(q, a), _mm256_maddubs_epi16(off, a));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
#endif
}

inline __m256 fma_lanes(float d, __m256i lanes, __m256 acc) {
  return _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lanes), acc);
}

inline __m256i q5_codes(const std::uint8_t* qs, const std::uint8_t* qh) {
  return _mm256_or_si256(unpack_nibbles(qs), fifth_bits(qh));
}

float dot_q4_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const __m256i lanes = dot4_offset(unpack_nibbles(x[b].qs), 8, load32(y[b].qs));
    acc = fma_lanes(h2f(x[b].d) * h2f(y[b].d), lanes, acc);
  }
  return hsum8(acc);
}

// ggml's repacked Q4_0 GEMV/GEMM: one exact block sum, acc = fma(sum, d_x * d_y, acc).
float dot_q4_0_repacked(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const int sum = hsum_i32(dot4_offset(unpack_nibbles(x[b].qs), 8, load32(y[b].qs)));
    acc = __builtin_fmaf(static_cast<float>(sum), h2f(x[b].d) * h2f(y[b].d), acc);
  }
  return acc;
}

float dot_q4_1(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  __m256 acc = _mm256_setzero_ps();
  float summs = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    summs = __builtin_fmaf(h2f(x[b].m), h2f(y[b].s), summs);
    const __m256i lanes = dot4_u8s8(unpack_nibbles(x[b].qs), load32(y[b].qs));
    acc = fma_lanes(h2f(x[b].d) * h2f(y[b].d), lanes, acc);
  }
  return hsum8(acc) + summs;
}

float dot_q5_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const __m256i lanes = dot4_offset(q5_codes(x[b].qs, x[b].qh), 16, load32(y[b].qs));
    acc = fma_lanes(h2f(x[b].d) * h2f(y[b].d), lanes, acc);
  }
  return hsum8(acc);
}

float dot_q5_1(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  __m256 acc = _mm256_setzero_ps();
  float summs = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    summs = __builtin_fmaf(h2f(x[b].m), h2f(y[b].s), summs);
    const __m256i lanes = dot4_u8s8(q5_codes(x[b].qs, x[b].qh), load32(y[b].qs));
    acc = fma_lanes(h2f(x[b].d) * h2f(y[b].d), lanes, acc);
  }
  return hsum8(acc) + summs;
}

float dot_q8_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    acc = fma_lanes(h2f(x[b].d) * h2f(y[b].d), dot4_s8s8(x[b].qs, y[b].qs), acc);
  }
  return hsum8(acc);
}

}  // namespace
}  // namespace wisp::kernels::x86
