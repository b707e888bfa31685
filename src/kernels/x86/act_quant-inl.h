// x86 bodies of the activation quantizers (f32 rows -> Q8_0, Q8_1, Q8_K), compiled per ISA like
// the dot kernels (simd.h). Each produces the bytes of the scalar quantizer in act_quant.cpp:
//   - the block maximum of |x| is a max (exact in any order);
//   - codes are x * id (or iscale * x) rounded by cvtps_epi32 under the default rounding mode,
//     round half to even, as the scalar nearbyint;
//   - half scales go through F16C (round to nearest even, as f32_to_f16) -- not through
//     formats/half.h, whose inline functions compiled here could be the copy a scalar caller gets;
//   - Q8_K picks the signed value of largest magnitude by the scalar's tie rule (the first one, or
//     the positive one for the interleaving quantizer).
// Inputs must be NaN-free (the scalar and SIMD conversions of NaN differ).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

inline std::uint16_t f2h(float f) { return static_cast<std::uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }

inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

inline float hmax8(__m256 v) {
  __m128 r = _mm_max_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  r = _mm_max_ps(r, _mm_movehl_ps(r, r));
  r = _mm_max_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

// 32 int32 codes (4 vectors, element order) -> 32 int8 in order (pack saturation never bites:
// the codes lie in [-127, 127]).
inline __m256i pack32(__m256i i0, __m256i i1, __m256i i2, __m256i i3) {
  const __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
  // The packs work per 128-bit half: dwords come out as 0 2 4 6 1 3 5 7 of the wanted order.
  return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// One 32-value block: amax, codes round(x * id), and (for Q8_1) their sum.
template <bool kSum>
inline void q8_block(const float* x, std::int8_t* qs, std::uint16_t* d_out, std::uint16_t* s_out) {
  __m256 v[4];
  for (int i = 0; i < 4; ++i) v[i] = _mm256_loadu_ps(x + 8 * i);
  const __m256 m = _mm256_max_ps(_mm256_max_ps(abs_ps(v[0]), abs_ps(v[1])), _mm256_max_ps(abs_ps(v[2]), abs_ps(v[3])));
  const float amax = hmax8(m);
  const float d = amax / 127.0f;
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  const __m256 mul = _mm256_set1_ps(id);
  __m256i q[4];
  for (int i = 0; i < 4; ++i) q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(v[i], mul));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), pack32(q[0], q[1], q[2], q[3]));
  *d_out = f2h(d);
  if constexpr (kSum) {
    const int sum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
    *s_out = f2h(d * static_cast<float>(sum));
  }
}

void quantize_q8_0(const float* x, void* out, std::int64_t n) {
  auto* y = static_cast<BlockQ8_0*>(out);
  for (std::int64_t b = 0; b < n / kQK; ++b) q8_block<false>(x + b * kQK, y[b].qs, &y[b].d, nullptr);
}

void quantize_q8_1(const float* x, void* out, std::int64_t n) {
  auto* y = static_cast<BlockQ8_1*>(out);
  for (std::int64_t b = 0; b < n / kQK; ++b) q8_block<true>(x + b * kQK, y[b].qs, &y[b].d, &y[b].s);
}

// Q8_K: see act_quant.cpp for the scaling by -127/max.
template <bool kPositiveWinsTies>
void quantize_q8_k(const float* x, void* out, std::int64_t n) {
  auto* y = static_cast<BlockQ8_K*>(out);
  for (std::int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    BlockQ8_K& blk = y[b];
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < kQK_K; i += 8) m = _mm256_max_ps(m, abs_ps(_mm256_loadu_ps(x + i)));
    const float amax = hmax8(m);
    if (amax == 0.0f) {
      blk.d = 0.0f;
      const __m256i z = _mm256_setzero_si256();
      for (int i = 0; i < kQK_K; i += 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(blk.qs + i), z);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(blk.bsums), z);
      continue;
    }
    // The signed maximum: +amax if present and positive wins ties, else the first |x| == amax.
    const __m256 va = _mm256_set1_ps(amax);
    float max = 0.0f;
    bool found = false;
    if constexpr (kPositiveWinsTies) {
      for (int i = 0; i < kQK_K && !found; i += 8) {
        if (_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), va, _CMP_EQ_OQ)) != 0) max = amax, found = true;
      }
    }
    for (int i = 0; i < kQK_K && !found; i += 8) {
      const int mask = _mm256_movemask_ps(_mm256_cmp_ps(abs_ps(_mm256_loadu_ps(x + i)), va, _CMP_EQ_OQ));
      if (mask != 0) max = x[i + __builtin_ctz(static_cast<unsigned>(mask))], found = true;
    }
    const float iscale = -127.0f / max;
    const __m256 mul = _mm256_set1_ps(iscale);
    const __m256i top = _mm256_set1_epi32(127);
    alignas(32) std::int16_t bsums[16];
    for (int g = 0; g < kQK_K; g += 32) {
      __m256i q[4];
      for (int i = 0; i < 4; ++i) {
        q[i] = _mm256_min_epi32(top, _mm256_cvtps_epi32(_mm256_mul_ps(mul, _mm256_loadu_ps(x + g + 8 * i))));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(blk.qs + g), pack32(q[0], q[1], q[2], q[3]));
      bsums[g / 16] = static_cast<std::int16_t>(hsum_i32(_mm256_add_epi32(q[0], q[1])));
      bsums[g / 16 + 1] = static_cast<std::int16_t>(hsum_i32(_mm256_add_epi32(q[2], q[3])));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(blk.bsums),
                        _mm256_load_si256(reinterpret_cast<const __m256i*>(bsums)));
    blk.d = 1.0f / iscale;
  }
}

}  // namespace
}  // namespace wisp::kernels::x86
