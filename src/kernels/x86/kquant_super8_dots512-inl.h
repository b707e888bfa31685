// The one-token Q6_K kernel of wisp's super8 order (decode) with AVX-512 VNNI: the same float
// operations in the same order as kquant_super8_dots-inl.h's super8_dot (per group of 8
// super-blocks one convert and one FMA of the S_b, then hsum8(acc - macc)), so the same bits;
// only the exact integers S_b are formed another way: per super-block its two 128-value halves
// side by side in zmm (four code vectors, each one vpdpbusd and one vpdpwssd by the sub-blocks'
// scales) in place of AVX2's eight maddubs / madd / byte-shuffled scales, and the 16 partials of
// 8 super-blocks reduced by blocks8_dots512-inl.h's 128-bit tree. Compiled into the AVX-512
// bundle only; included by kquant_super8_dots-inl.h after the helpers it shares.
//
// Q4_K in the same form (two sub-blocks per zmm, vpdpbusd then vpdpwssd by the scale, the
// activation halves paired by shuffle_i64x2) measured 0.83x the AVX2-form kernel (2048 x 8192 in
// L3, one thread, 2026-12-02, Zen 5), so Q4_K keeps super8_dot's ymm lanes.
#pragma once

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/blocks8_dots-inl.h"
#include "kernels/x86/kquant_dots-inl.h"
#include "kernels/x86/simd-inl.h"

#if defined(WISP_BLOCKS8_ZMM)
#define WISP_SUPER8_ZMM 1

namespace wisp::kernels::x86 {
namespace {

// Two super-blocks' 16 partials folded to 8 each, super-block k in lanes 0-7, k + 1 in 8-15
// (block_sums8's operand).
inline __m512i fold_pair(__m512i pk, __m512i pk1) {
  return _mm512_add_epi32(_mm512_shuffle_i32x4(pk, pk1, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_i32x4(pk, pk1, _MM_SHUFFLE(3, 1, 3, 1)));
}

// super8_dot's loop with Sums(b, ps, pm) giving super-block b's 16 partials of S_b and 8 of M_b
// (kMin only): per group the 8 S_b by the 128-bit tree, M_b by sum32x8, then super8_dot's floats.
template <class Block, bool kMin, class Sums>
inline float super8_dot_zmm(const void* w, const void* a, std::int64_t n, Sums&& sums) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const std::int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
  const auto d_of = [](const Block& v) { return v.d; };
  std::int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    prefetch_ahead(x + b, sizeof(Block) * 8);
    __m512i ps[8];
    __m256i pm[8];
    for (int k = 0; k < 8; ++k) sums(b + k, ps[k], pm[k]);
    const __m256i s8 =
        block_sums8(fold_pair(ps[0], ps[1]), fold_pair(ps[2], ps[3]), fold_pair(ps[4], ps[5]), fold_pair(ps[6], ps[7]));
    const __m256 dy =
        _mm256_setr_ps(y[b].d, y[b + 1].d, y[b + 2].d, y[b + 3].d, y[b + 4].d, y[b + 5].d, y[b + 6].d, y[b + 7].d);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s8), _mm256_mul_ps(halves8(x + b, d_of), dy), acc);
    if constexpr (kMin) {
      const __m256 xm = halves8(x + b, [](const Block& v) { return v.dmin; });
      macc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum32x8(pm)), _mm256_mul_ps(xm, dy), macc);
    }
  }
  if (b < nb) {
    // The tail: super8_dot's zero lanes beyond the row.
    const int m = static_cast<int>(nb - b);
    alignas(32) std::int32_t s8[8] = {};
    alignas(32) float dy[8] = {};
    __m256i pm[8];
    for (int k = 0; k < 8; ++k) {
      pm[k] = _mm256_setzero_si256();
      if (k < m) {
        __m512i ps;
        sums(b + k, ps, pm[k]);
        s8[k] = _mm512_reduce_add_epi32(ps);
        dy[k] = y[b + k].d;
      }
    }
    const __m256 dyv = _mm256_load_ps(dy);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(s8))),
                          _mm256_mul_ps(halves_upto8(x + b, m, d_of), dyv), acc);
    if constexpr (kMin) {
      const __m256 xm = halves_upto8(x + b, m, [](const Block& v) { return v.dmin; });
      macc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum32x8(pm)), _mm256_mul_ps(xm, dyv), macc);
    }
  }
  return hsum8(_mm256_sub_ps(acc, macc));
}

// 16 int32 partials of S_b for one Q6_K super-block: the codes of ql/qh's first 128 values in the
// lower 256 bits, the second 128 in the upper (q6k_lanes' chunks k and 4 + k side by side), each
// chunk pair one vpdpbusd of the unsigned codes (q + 32 <= 63: a partial <= 4 * 63 * 128 = 32256
// is its own low int16) and one vpdpwssd by the sub-blocks' int8 scales as low int16s (0 above);
// the codes' offset 32 out through the activation's block sums, as q6k_lanes.
inline __m512i q6k_partials16(const BlockQ6_K& x, const BlockQ8_K& y) {
  const __m512i m4 = _mm512_set1_epi8(0x0f), m2 = _mm512_set1_epi8(0x30), zero = _mm512_setzero_si512();
  const auto pair = [](const void* lo, const void* hi) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(load32(lo)), load32(hi), 1);
  };
  const __m512i qa = pair(x.ql, x.ql + 64), qb = pair(x.ql + 32, x.ql + 96);
  const __m512i hv = _mm512_loadu_si512(x.qh);
  const __m512i codes[4] = {
      _mm512_or_si512(_mm512_and_si512(qa, m4), _mm512_and_si512(_mm512_slli_epi16(hv, 4), m2)),
      _mm512_or_si512(_mm512_and_si512(qb, m4), _mm512_and_si512(_mm512_slli_epi16(hv, 2), m2)),
      _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qa, 4), m4), _mm512_and_si512(hv, m2)),
      _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(qb, 4), m4), _mm512_and_si512(_mm512_srli_epi16(hv, 2), m2)),
  };
  const __m256i scales16 = _mm256_cvtepi8_epi16(load16(x.scales));
  const __m512i sc = _mm512_cvtepu16_epi32(scales16);  // int16 scale low, 0 above
  __m512i p = zero;
  for (int k = 0; k < 4; ++k) {
    const int j = 2 * k;
    const __m512i idx = _mm512_setr_epi32(j, j, j, j, j + 1, j + 1, j + 1, j + 1, j + 8, j + 8, j + 8, j + 8, j + 9,
                                          j + 9, j + 9, j + 9);
    const __m512i act = pair(y.qs + 32 * k, y.qs + 128 + 32 * k);
    p = _mm512_dpwssd_epi32(p, _mm512_dpbusd_epi32(zero, codes[k], act), _mm512_permutexvar_epi32(idx, sc));
  }
  const __m256i offset = _mm256_madd_epi16(load32(y.bsums), scales16);
  return _mm512_sub_epi32(p, _mm512_zextsi256_si512(_mm256_slli_epi32(offset, 5)));
}

inline float dot_q6_k_super8_zmm(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  return super8_dot_zmm<BlockQ6_K, false>(w, a, n, [&](std::int64_t b, __m512i& ps, __m256i& pm) {
    ps = q6k_partials16(x[b], y[b]);
    pm = _mm256_setzero_si256();
  });
}

}  // namespace
}  // namespace wisp::kernels::x86

#endif
