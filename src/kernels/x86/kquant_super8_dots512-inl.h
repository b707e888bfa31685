// The one-token Q6_K and Q4_K kernels of wisp's super8 order (decode) with AVX-512 VNNI: the same float
// operations in the same order as kquant_super8_dots-inl.h's super8_dot (per group of 8
// super-blocks one convert and one FMA of the S_b, then hsum8(acc - macc)), so the same bits;
// only the exact integers S_b are formed another way: per super-block four 64-code vectors in
// element order against the activation read in place, one vpdpbusd each, two vectors' partials
// packed to int16 for one vpdpwssd by the sub-blocks' scales, in place of AVX2's maddubs / madd /
// byte-shuffled scales per 32 codes; the 16 partials of
// 8 super-blocks reduced by blocks8_dots512-inl.h's 128-bit tree. Compiled into the AVX-512
// bundle only; included by kquant_super8_dots-inl.h after the helpers it shares.
//
// Q4_K (q4k_partials16 below) in zmm too: its chunks' codes broadcast to both halves of a zmm so
// that the activation is read in place, the scales and mins of four super-blocks unpacked in one
// zmm. An earlier zmm form (the activation halves paired by shuffle_i64x2, a vpdpwssd per chunk)
// measured 0.83x the AVX2-form kernel (Zen 5, 2026-12-02); this one 1.3-1.4x (in L2, Xeon
// Emerald Rapids, 2026-12-03, bench/RESULTS.md).
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

// super8_dot's loop with Group(b, s8, m8, xd, xm) giving a full group's 8 S_b, 8 M_b (kMin only)
// and the blocks' d and dmin as floats, and Sums(b, ps, pm) super-block b's 16 partials of S_b and
// 8 of M_b for the tail; then super8_dot's floats.
template <class Block, bool kMin, class Sums, class Group>
inline float super8_dot_zmm(const void* w, const void* a, std::int64_t n, Sums&& sums, Group&& group) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const std::int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps(), macc = _mm256_setzero_ps();
  const auto d_of = [](const Block& v) { return v.d; };
  std::int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    prefetch_ahead(x + b, sizeof(Block) * 8);
    __m256i s8, m8;
    __m256 xd, xm;
    group(b, s8, m8, xd, xm);
    const __m256 dy =
        _mm256_setr_ps(y[b].d, y[b + 1].d, y[b + 2].d, y[b + 3].d, y[b + 4].d, y[b + 5].d, y[b + 6].d, y[b + 7].d);
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s8), _mm256_mul_ps(xd, dy), acc);
    if constexpr (kMin) macc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(m8), _mm256_mul_ps(xm, dy), macc);
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

// The group of the types without minimums: Sums per super-block, the 8 S_b by the 128-bit tree.
template <class Block, class Sums>
inline float super8_dot_zmm(const void* w, const void* a, std::int64_t n, Sums&& sums) {
  const auto* x = static_cast<const Block*>(w);
  return super8_dot_zmm<Block, false>(w, a, n, sums,
                                      [&](std::int64_t b, __m256i& s8, __m256i& m8, __m256& xd, __m256& xm) {
                                        __m512i ps[8];
                                        __m256i pm;
                                        for (int k = 0; k < 8; ++k) sums(b + k, ps[k], pm);
                                        s8 = block_sums8(fold_pair(ps[0], ps[1]), fold_pair(ps[2], ps[3]),
                                                         fold_pair(ps[4], ps[5]), fold_pair(ps[6], ps[7]));
                                        m8 = _mm256_setzero_si256();
                                        xd = halves8(x + b, [](const Block& v) { return v.d; });
                                        xm = _mm256_setzero_ps();
                                      });
}

// 16 int32 partials of S_b for one Q6_K super-block. Per 128-value half c, in element order (so
// the activation is read in place): values 0-63 are ql[0, 64)'s low nibbles with qh[0, 32)'s bits
// 0-1 (first 32) and 2-3 (next 32), values 64-127 the high nibbles with bits 4-5 and 6-7; qh's 32
// bytes are broadcast to both halves of a zmm and shifted per half. Each 64-code vector is one
// vpdpbusd of the unsigned codes (q + 32 <= 63: a partial <= 4 * 63 * 128 = 32256), two vectors'
// partials packed to int16 (exact) meet their 16-value sub-blocks' int8 scales in one vpdpwssd;
// the codes' offset 32 out through the activation's block sums, as q6k_lanes.
inline __m512i q6k_partials16(const BlockQ6_K& x, const BlockQ8_K& y) {
  const __m512i m4 = _mm512_set1_epi8(0x0f), m2 = _mm512_set1_epi8(0x30), zero = _mm512_setzero_si512();
  const __m512i up = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);  // qh bits 0-1 | 2-3 to 4-5
  const __m512i down = _mm512_inserti64x4(zero, _mm256_set1_epi16(2), 1);                // qh bits 4-5 | 6-7 to 4-5
  const __m256i scales16 = _mm256_cvtepi8_epi16(load16(x.scales));
  const __m512i sz = _mm512_castsi256_si512(scales16);
  __m512i p = zero;
  for (int c = 0; c < 2; ++c) {
    const __m512i ql = _mm512_loadu_si512(x.ql + 64 * c);
    const __m512i qh = _mm512_broadcast_i64x4(load32(x.qh + 32 * c));
    const __m512i lo = _mm512_ternarylogic_epi32(ql, m4, _mm512_and_si512(_mm512_sllv_epi16(qh, up), m2), 0xea);
    const __m512i hi = _mm512_ternarylogic_epi32(_mm512_srli_epi16(ql, 4), m4,
                                                 _mm512_and_si512(_mm512_srlv_epi16(qh, down), m2), 0xea);
    const __m512i plo = _mm512_dpbusd_epi32(zero, lo, _mm512_loadu_si512(y.qs + 128 * c));
    const __m512i phi = _mm512_dpbusd_epi32(zero, hi, _mm512_loadu_si512(y.qs + 128 * c + 64));
    // packs' unit u: sub-block 8c + u's 4 partials, then 8c + 4 + u's.
    const int j = 8 * c;
    const __m512i idx = _mm512_setr_epi32(j * 0x10001, j * 0x10001, (j + 4) * 0x10001, (j + 4) * 0x10001,
                                          (j + 1) * 0x10001, (j + 1) * 0x10001, (j + 5) * 0x10001, (j + 5) * 0x10001,
                                          (j + 2) * 0x10001, (j + 2) * 0x10001, (j + 6) * 0x10001, (j + 6) * 0x10001,
                                          (j + 3) * 0x10001, (j + 3) * 0x10001, (j + 7) * 0x10001, (j + 7) * 0x10001);
    p = _mm512_dpwssd_epi32(p, _mm512_packs_epi32(plo, phi), _mm512_permutexvar_epi16(idx, sz));
  }
  const __m256i offset = _mm256_madd_epi16(load32(y.bsums), scales16);
  return _mm512_sub_epi32(p, _mm512_zextsi256_si512(_mm256_slli_epi32(offset, 5)));
}

// Q4_K. Super-blocks are read as 16-byte units (d, dmin and the 12 scale bytes), four to a zmm;
// q4k_units4 unpacks the 6-bit scales and mins of all four at once (the q4k_scales layout) to
// unit k = block k's 8 scales in bytes 0-7, 8 mins in bytes 8-15.
inline __m512i q4k_units4(__m512i v) {
  // Unit dwords [dd, w0, w1, w2]: scale j < 4 and min j in the low 6 bits of w0 and w1's bytes,
  // j >= 4 in the nibbles of w2, their high 2 bits in the top bits of w0 / w1.
  const __m512i low = _mm512_and_si512(
      _mm512_srlv_epi32(_mm512_shuffle_epi32(v, static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(3, 2, 3, 1))),
                        _mm512_set4_epi32(4, 0, 0, 0)),
      _mm512_set4_epi32(0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f));  // [sc_lo, w2 & k4, mn_lo, w2 >> 4 & k4]
  const __m512i top =
      _mm512_srli_epi32(_mm512_shuffle_epi32(v, static_cast<_MM_PERM_ENUM>(_MM_SHUFFLE(2, 2, 1, 1))), 2);
  // low | (top & [0, 0x30.., 0, 0x30..]): bits 6-7 of w0 / w1's bytes to bits 4-5 of the high half.
  return _mm512_ternarylogic_epi32(low, top, _mm512_set4_epi32(0x30303030, 0, 0x30303030, 0), 0xf8);
}

// 16 int32 partials of S_b and 8 of M_b for one Q4_K super-block, its unit (q4k_units4) in all
// four 128-bit lanes of u. Chunk c (qs[32c, 32c + 32), sub-blocks 2c and 2c + 1) is its 32 bytes
// broadcast to both halves of a zmm, the high half shifted by 4, so the codes sit in element order
// against one 64-byte load of the activation (no shuffle of either): one vpdpbusd per chunk (a
// partial <= 4 * 15 * 128 = 7680), two chunks' partials packed to int16 (exact, < 2^15) meet their
// sub-blocks' scales in one vpdpwssd. M_b's partials: one madd of the 16 block sums by the mins,
// each twice.
inline void q4k_partials16(const BlockQ4_K& x, const BlockQ8_K& y, __m512i u, __m512i& ps, __m256i& pm) {
  // packs(P_2p, P_2p+1)'s int16 units: 0-1 hold sub-blocks 4p, 4p + 2 (4 lanes each), 2-3 4p + 1, 4p + 3;
  // the scale bytes widened to int16 by vpshufb (0x80: zero).
  const auto word = [](int j) { return static_cast<int>(0x80008000u | (j << 16) | j); };
  const auto sidx = [&](int p) {
    const int a = 4 * p, c = 4 * p + 2, b = 4 * p + 1, d = 4 * p + 3;
    return _mm512_setr_epi32(word(a), word(a), word(c), word(c), word(a), word(a), word(c), word(c), word(b), word(b),
                             word(d), word(d), word(b), word(b), word(d), word(d));
  };
  const __m512i shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  const __m512i m4 = _mm512_set1_epi8(0x0f);
  __m512i p[4];
  for (int c = 0; c < 4; ++c) {
    const __m512i q = _mm512_broadcast_i64x4(load32(x.qs + 32 * c));
    const __m512i codes = _mm512_and_si512(_mm512_srlv_epi16(q, shift), m4);
    p[c] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes, _mm512_loadu_si512(y.qs + 64 * c));
  }
  ps = _mm512_dpwssd_epi32(_mm512_setzero_si512(), _mm512_packs_epi32(p[0], p[1]), _mm512_shuffle_epi8(u, sidx(0)));
  ps = _mm512_dpwssd_epi32(ps, _mm512_packs_epi32(p[2], p[3]), _mm512_shuffle_epi8(u, sidx(1)));
  // Mins: lane 0 words m0 m0 m1 m1 .. m3 m3 (bytes 8-11), lane 1 m4 m4 .. m7 m7 (bytes 12-15).
  const __m256i midx = _mm256_setr_epi32(word(8), word(9), word(10), word(11), word(12), word(13), word(14), word(15));
  pm = _mm256_madd_epi16(load32(y.bsums), _mm256_shuffle_epi8(_mm512_castsi512_si256(u), midx));
}

// Four consecutive Q4_K super-blocks' first 16 bytes as the four units of a zmm.
inline __m512i q4k_load_units4(const BlockQ4_K* x) {
  const auto unit = [&](int k) { return load16(x + k); };
  const __m512i lo = _mm512_castsi256_si512(_mm256_inserti128_si256(_mm256_castsi128_si256(unit(0)), unit(1), 1));
  return _mm512_inserti64x4(lo, _mm256_inserti128_si256(_mm256_castsi128_si256(unit(2)), unit(3), 1), 1);
}

inline float dot_q4_k_super8_zmm(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const auto sums = [&](std::int64_t b, __m512i& ps, __m256i& pm) {
    const __m512i u = q4k_units4(_mm512_broadcast_i32x4(load16(x + b)));
    q4k_partials16(x[b], y[b], u, ps, pm);
  };
  return super8_dot_zmm<BlockQ4_K, true>(
      w, a, n, sums, [&](std::int64_t b, __m256i& s8, __m256i& m8, __m256& xd, __m256& xm) {
        const __m512i v0 = q4k_load_units4(x + b), v1 = q4k_load_units4(x + b + 4);
        const __m512i u0 = q4k_units4(v0), u1 = q4k_units4(v1);
        __m512i ps[8];
        __m256i pm[8];
        const auto two = [&]<int k>() {  // unit k of u0 and of u1 in all four lanes
          q4k_partials16(x[b + k], y[b + k], _mm512_shuffle_i32x4(u0, u0, 0x55 * k), ps[k], pm[k]);
          q4k_partials16(x[b + 4 + k], y[b + 4 + k], _mm512_shuffle_i32x4(u1, u1, 0x55 * k), ps[4 + k], pm[4 + k]);
        };
        two.template operator()<0>();
        two.template operator()<1>();
        two.template operator()<2>();
        two.template operator()<3>();
        s8 = block_sums8(fold_pair(ps[0], ps[1]), fold_pair(ps[2], ps[3]), fold_pair(ps[4], ps[5]),
                         fold_pair(ps[6], ps[7]));
        m8 = sum32x8(pm);
        // d (word 0 of each unit) and dmin (word 1) of the 8 super-blocks.
        const __m512i idx =
            _mm512_castsi256_si512(_mm256_setr_epi16(0, 8, 16, 24, 32, 40, 48, 56, 1, 9, 17, 25, 33, 41, 49, 57));
        const __m256i h = _mm512_castsi512_si256(_mm512_permutex2var_epi16(v0, idx, v1));
        xd = _mm256_cvtph_ps(_mm256_castsi256_si128(h));
        xm = _mm256_cvtph_ps(_mm256_extracti128_si256(h, 1));
      });
}

inline float dot_q6_k_super8_zmm(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  return super8_dot_zmm<BlockQ6_K>(w, a, n, [&](std::int64_t b, __m512i& ps, __m256i& pm) {
    ps = q6k_partials16(x[b], y[b]);
    pm = _mm256_setzero_si256();
  });
}

}  // namespace
}  // namespace wisp::kernels::x86

#endif
