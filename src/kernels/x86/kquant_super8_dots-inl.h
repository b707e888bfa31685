// wisp's own dot order for the K-quants on x86 (DotKernel::dot_invariant), compiled per ISA like
// kquant_dots-inl.h; the order and its scalar form, which these reproduce bit for bit, are in
// dot_kquant_super8.cpp. Activations in ActFormat::kQ8_K.
//
// Per super-block the exact integer parts come from kquant_dots-inl.h's lanes (8 int32 partials of
// S_b, 4 of M_b). Per group of 8 super-blocks the partials are reduced to one vector of 8 exact
// sums (lane k = super-block 8 g + k) by a tree of horizontal adds, then one convert and one FMA
// (two with the minimums) cover all 8. The row is read in order, so the weight stream is
// sequential for the prefetcher.
#pragma once

#include <algorithm>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/blocks8_dots-inl.h"
#include "kernels/x86/kquant_dots-inl.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// The half field f of the first m (<= 8) blocks at x as 8 floats, zero beyond m (exact).
template <class Block, class Field>
inline __m256 halves_upto8(const Block* x, int m, Field f) {
  alignas(16) std::uint16_t h[8] = {};
  for (int k = 0; k < m; ++k) h[k] = f(x[k]);
  return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
}

// The common loop: Sums(x[b], y[b], ps, pm) gives a super-block's partials of S_b (8 int32 lanes)
// and M_b (kMin only). Lanes of a group past the row's end are zero in every operand, and
// fma(0, 0, acc) is acc (acc starts at +0 and never becomes -0 under round-to-nearest).
template <class Block, bool kMin, class Sums>
inline float super8_dot(const void* w, const void* a, std::int64_t n, Sums&& sums) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const std::int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
  const auto step = [&](const __m256i(&ps)[8], const __m256i(&pm)[8], __m256 xd, __m256 xm, __m256 dy) {
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum32x8(ps)), _mm256_mul_ps(xd, dy), acc);
    if constexpr (kMin) macc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum32x8(pm)), _mm256_mul_ps(xm, dy), macc);
  };
  const auto d_of = [](const Block& v) { return v.d; };
  std::int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    prefetch_ahead(x + b, sizeof(Block) * 8);
    __m256i ps[8], pm[8];
    for (int k = 0; k < 8; ++k) sums(x[b + k], y[b + k], ps[k], pm[k]);
    const __m256 dy =
        _mm256_setr_ps(y[b].d, y[b + 1].d, y[b + 2].d, y[b + 3].d, y[b + 4].d, y[b + 5].d, y[b + 6].d, y[b + 7].d);
    __m256 xm = _mm256_setzero_ps();
    if constexpr (kMin) xm = halves8(x + b, [](const Block& v) { return v.dmin; });
    step(ps, pm, halves8(x + b, d_of), xm, dy);
  }
  if (b < nb) {
    const int m = static_cast<int>(nb - b);
    __m256i ps[8], pm[8];
    alignas(32) float dy[8] = {};
    for (int k = 0; k < 8; ++k) {
      if (k < m) {
        sums(x[b + k], y[b + k], ps[k], pm[k]);
        dy[k] = y[b + k].d;
      } else {
        ps[k] = pm[k] = _mm256_setzero_si256();
      }
    }
    __m256 xm = _mm256_setzero_ps();
    if constexpr (kMin) xm = halves_upto8(x + b, m, [](const Block& v) { return v.dmin; });
    step(ps, pm, halves_upto8(x + b, m, d_of), xm, _mm256_load_ps(dy));
  }
  return hsum8(_mm256_sub_ps(acc, macc));
}

}  // namespace
}  // namespace wisp::kernels::x86

// Q4_K's and Q6_K's one-token kernels in AVX-512 VNNI form (the same bits), after the helpers they use.
#include "kernels/x86/kquant_super8_dots512-inl.h"

namespace wisp::kernels::x86 {
namespace {

float dot_q4_k_super8(const void* w, const void* a, std::int64_t n) {
#if defined(WISP_SUPER8_ZMM)
  return dot_q4_k_super8_zmm(w, a, n);
#else
  return super8_dot<BlockQ4_K, true>(w, a, n, [](const BlockQ4_K& x, const BlockQ8_K& y, __m256i& ps, __m256i& pm) {
    const Q4KScales s = q4k_scales(x.scales);
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      isum =
          _mm256_add_epi32(isum, q4k_pair(x.qs + 32 * c, y.qs + 64 * c, q4k_scale(s, 2 * c), q4k_scale(s, 2 * c + 1)));
    }
    ps = isum;
    pm = _mm256_zextsi128_si256(q4k_min_products(y, s.min));
  });
#endif
}

float dot_q2_k_super8(const void* w, const void* a, std::int64_t n) {
  return super8_dot<BlockQ2_K, true>(w, a, n, [](const BlockQ2_K& x, const BlockQ8_K& y, __m256i& ps, __m256i& pm) {
    ps = q2k_lanes(x, y);
    pm = q2k_min_lanes(x, y);
  });
}

float dot_q3_k_super8(const void* w, const void* a, std::int64_t n) {
  return super8_dot<BlockQ3_K, false>(w, a, n, [](const BlockQ3_K& x, const BlockQ8_K& y, __m256i& ps, __m256i& pm) {
    ps = q3k_lanes(x, y);
    pm = _mm256_setzero_si256();
  });
}

float dot_q5_k_super8(const void* w, const void* a, std::int64_t n) {
  return super8_dot<BlockQ5_K, true>(w, a, n, [](const BlockQ5_K& x, const BlockQ8_K& y, __m256i& ps, __m256i& pm) {
    const Q4KScales s = q4k_scales(x.scales);
    ps = q5k_lanes(x, y, s);
    pm = _mm256_zextsi128_si256(q4k_min_products(y, s.min));
  });
}

float dot_q6_k_super8(const void* w, const void* a, std::int64_t n) {
#if defined(WISP_SUPER8_ZMM)
  return dot_q6_k_super8_zmm(w, a, n);
#else
  return super8_dot<BlockQ6_K, false>(w, a, n, [](const BlockQ6_K& x, const BlockQ8_K& y, __m256i& ps, __m256i& pm) {
    ps = q6k_lanes(x, y);
    pm = _mm256_setzero_si256();
  });
#endif
}

}  // namespace
}  // namespace wisp::kernels::x86
