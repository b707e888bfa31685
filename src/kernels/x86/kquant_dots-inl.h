// SIMD dots of the K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K) against Q8_K activations in the float orders of the scalar
// references (dot_kquant_x86.cpp): the one-token lanes (8 int32 lanes of 4 consecutive products per 32-value chunk,
// scaled by the sub-block scale and summed over the super-block), the tiled GEMM (one exact integer per super-block)
// and, for Q4_K, the repacked GEMV/GEMM. The integer parts are exact in any order; only the float steps are ordered,
// and they follow the references step by step.
//
// Precondition shared with the scalar one-token kernels: the activation's bsums are the sums of its
// codes, as quantize_act_q8_K writes them.
#pragma once

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// ---- Q4_K -----------------------------------------------------------------------------------

// Sub-block scales and mins (6 bits each, block_layouts.h) as int16, ready for madd.
struct Q4KScales {
  __m256i scale;  // the 8 scales as int16, in both 128-bit lanes (q4k_scale picks one)
  __m128i min;    // 8 x int16
};

// The 12 scale bytes hold, for sub-block j < 4: scale j in the low 6 bits of byte j, min j in the
// low 6 bits of byte j + 4; for j >= 4 the low 4 bits of scale j and min j in the nibbles of
// byte j + 4 and the high 2 bits in the top bits of bytes j - 4 and j. Decoded four sub-blocks
// at a time in the 32-bit lanes of an xmm (s is a block's scales field: the 16-byte load ends
// within the block's codes), then widened.
inline Q4KScales q4k_scales(const std::uint8_t* s) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));  // dwords w0 w1 w2 (-)
  // [w0 & k6, w2 & k4, w1 & k6, w2 >> 4 & k4] | [0, (w0 >> 6 & k2) << 4, 0, (w1 >> 6 & k2) << 4]
  const __m128i low =
      _mm_and_si128(_mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0)), _mm_setr_epi32(0, 0, 0, 4)),
                    _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
  const __m128i top = _mm_and_si128(_mm_srli_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0)), 2),
                                    _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
  const __m256i both = _mm256_cvtepu8_epi16(_mm_or_si128(low, top));  // 8 scales, then 8 mins
  const __m128i scales = _mm256_castsi256_si128(both);
  return {_mm256_broadcastsi128_si256(scales), _mm256_extracti128_si256(both, 1)};
}

// Scale j of s in all 16 int16 lanes (one byte shuffle).
inline __m256i q4k_scale(const Q4KScales& s, int j) {
  const short pair = static_cast<short>((2 * j) | ((2 * j + 1) << 8));
  return _mm256_shuffle_epi8(s.scale, _mm256_set1_epi16(pair));
}

// Lanes of scale[2c] * (sub-block 2c products) + scale[2c+1] * (sub-block 2c+1 products): the 64
// values of qs[32c .. 32c+32) (low nibbles first, then high nibbles).
inline __m256i q4k_pair(const std::uint8_t* qs, const std::int8_t* a, __m256i s_lo, __m256i s_hi) {
  const __m256i q = load32(qs);
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const __m256i lo = _mm256_and_si256(q, m4);
  const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
  // Pair sums of 15 * 128 * 2 fit int16; times a 6-bit scale, summed in pairs, fit int32.
  const __m256i plo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load32(a)), s_lo);
  const __m256i phi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load32(a + 32)), s_hi);
  return _mm256_add_epi32(plo, phi);
}

// min[2i] * asum(2i) + min[2i+1] * asum(2i+1) for i < 4, asum(s) = bsums[2s] + bsums[2s+1].
inline __m128i q4k_min_products(const BlockQ8_K& y, __m128i min) {
  const __m128i sums = _mm_hadd_epi16(load16(y.bsums), load16(y.bsums + 8));
  return _mm_madd_epi16(sums, min);
}

float dot_q4_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  __m128 macc = _mm_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Q4KScales s = q4k_scales(x[b].scales);
    const float d = y[b].d * h2f(x[b].d);
    const float dmin = -y[b].d * h2f(x[b].dmin);
    macc = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(q4k_min_products(y[b], s.min)), macc);
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      isum = _mm256_add_epi32(
          isum, q4k_pair(x[b].qs + 32 * c, y[b].qs + 64 * c, q4k_scale(s, 2 * c), q4k_scale(s, 2 * c + 1)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum), acc);
  }
  return hsum8(acc) + hsum4(macc);
}

// Repacked Q4_K: one float update per `step` sub-blocks (8: GEMV, 2: GEMM).
template <int kStep>
float q4_k_repacked(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f, macc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Q4KScales s = q4k_scales(x[b].scales);
    const float kd = h2f(x[b].d), kdmin = h2f(x[b].dmin);
    const float dd = kd * y[b].d;
    const float dm = kdmin * y[b].d;
    const __m128i mins = q4k_min_products(y[b], s.min);
    if constexpr (kStep == 8) {
      __m256i isum = _mm256_setzero_si256();
      for (int c = 0; c < 4; ++c) {
        isum = _mm256_add_epi32(
            isum, q4k_pair(x[b].qs + 32 * c, y[b].qs + 64 * c, q4k_scale(s, 2 * c), q4k_scale(s, 2 * c + 1)));
      }
      acc = __builtin_fmaf(static_cast<float>(hsum_i32(isum)), dd, acc);
      macc = __builtin_fmaf(static_cast<float>(hsum_i32(mins)), dm, macc);
    } else {
      alignas(16) int m[4];
      _mm_store_si128(reinterpret_cast<__m128i*>(m), mins);
      for (int c = 0; c < 4; ++c) {
        const __m256i p = q4k_pair(x[b].qs + 32 * c, y[b].qs + 64 * c, q4k_scale(s, 2 * c), q4k_scale(s, 2 * c + 1));
        acc = __builtin_fmaf(static_cast<float>(hsum_i32(p)), dd, acc);
        macc = __builtin_fmaf(static_cast<float>(m[c]), dm, macc);
      }
    }
  }
  return acc - macc;
}

float dot_q4_k_repacked(const void* w, const void* a, std::int64_t n) { return q4_k_repacked<8>(w, a, n); }
float dot_q4_k_repacked_x4(const void* w, const void* a, std::int64_t n) { return q4_k_repacked<2>(w, a, n); }

// The tiled GEMM's per-super-block float steps (dot_kquant_x86.cpp: tiled()).
inline float tiled_step(float acc, int s1, int s2, float d, float dmin, float yd) {
  float r = static_cast<float>(s1) * d;
  if (dmin != 0.0f || s2 != 0) r = __builtin_fmaf(-dmin, static_cast<float>(s2), r);
  return __builtin_fmaf(r, yd, acc);  // one rounding, as the reference (dot_kquant_x86.cpp)
}

float dot_q4_k_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Q4KScales s = q4k_scales(x[b].scales);
    __m256i isum = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      isum = _mm256_add_epi32(
          isum, q4k_pair(x[b].qs + 32 * c, y[b].qs + 64 * c, q4k_scale(s, 2 * c), q4k_scale(s, 2 * c + 1)));
    }
    acc = tiled_step(acc, hsum_i32(isum), hsum_i32(q4k_min_products(y[b], s.min)), h2f(x[b].d), h2f(x[b].dmin), y[b].d);
  }
  return acc;
}

// ---- Q2_K, Q3_K, Q5_K -------------------------------------------------------------------------

// Scales of two 16-value sub-blocks as int16 for madd: lanes 0-3 of a 32-value chunk lie in the
// first sub-block, lanes 4-7 in the second.
inline __m256i pair_scale(int s_lo, int s_hi) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(s_hi)), _mm_set1_epi16(static_cast<short>(s_lo)));
}

// Q2_K one-token lanes: sum over the 8 chunks of scale * (2-bit codes . a). Chunk 4h + s holds
// (qs[32h + l] >> 2s) & 3 for l < 32; pair sums of 3 * 128 * 2 cannot saturate maddubs.
inline __m256i q2k_lanes(const BlockQ2_K& x, const BlockQ8_K& y) {
  const __m256i m3 = _mm256_set1_epi8(3);
  __m256i isum = _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h) {
    const __m256i bits = load32(x.qs + 32 * h);
    for (int s = 0; s < 4; ++s) {
      const int chunk = 4 * h + s;
      const __m256i q = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * s), m3);
      const __m256i p = _mm256_maddubs_epi16(q, load32(y.qs + 32 * chunk));
      isum = _mm256_add_epi32(
          isum, _mm256_madd_epi16(p, pair_scale(x.scales[2 * chunk] & 0x0f, x.scales[2 * chunk + 1] & 0x0f)));
    }
  }
  return isum;
}

// min[2l] * bsums[2l] + min[2l+1] * bsums[2l+1] in lane l (mins are the scale bytes' high nibbles).
inline __m256i q2k_min_lanes(const BlockQ2_K& x, const BlockQ8_K& y) {
  const __m128i mins8 = _mm_and_si128(_mm_srli_epi16(load16(x.scales), 4), _mm_set1_epi8(0x0f));
  return _mm256_madd_epi16(_mm256_cvtepu8_epi16(mins8), load32(y.bsums));
}

float dot_q2_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ2_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = y[b].d * h2f(x[b].d);
    const float dmin = -y[b].d * h2f(x[b].dmin);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(dmin), _mm256_cvtepi32_ps(q2k_min_lanes(x[b], y[b])), acc);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(q2k_lanes(x[b], y[b])), acc);
  }
  return hsum8(acc);
}

float dot_q2_k_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ2_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    acc = tiled_step(acc, hsum_i32(q2k_lanes(x[b], y[b])), hsum_i32(q2k_min_lanes(x[b], y[b])), h2f(x[b].d),
                     h2f(x[b].dmin), y[b].d);
  }
  return acc;
}

// Signed 6-bit scales of a Q3_K super-block (stored biased by 32; layout as kquant_unpack.h).
inline void q3k_scales(const std::uint8_t* s, short out[16]) {
  for (int k = 0; k < 16; ++k) {
    const int low = k < 8 ? (s[k] & 0x0f) : (s[k - 8] >> 4);
    const int high = (s[8 + k % 4] >> (2 * (k / 4))) & 3;
    out[k] = static_cast<short>((low | (high << 4)) - 32);
  }
}

// Q3_K one-token lanes. Code = low 2 bits - 4 where the hmask bit is clear: the two parts go
// through maddubs separately (both unsigned, pair sums within int16) and are subtracted exactly.
inline __m256i q3k_lanes(const BlockQ3_K& x, const BlockQ8_K& y) {
  short sc[16];
  q3k_scales(x.scales, sc);
  const __m256i m3 = _mm256_set1_epi8(3);
  const __m256i four = _mm256_set1_epi8(4);
  const __m256i hbits = load32(x.hmask);
  __m256i isum = _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h) {
    const __m256i bits = load32(x.qs + 32 * h);
    for (int s = 0; s < 4; ++s) {
      const int chunk = 4 * h + s;
      const __m256i bit = _mm256_set1_epi8(static_cast<char>(1u << chunk));
      const __m256i lo = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * s), m3);
      // 4 where the bit is clear: cmpeq gives 0xff where set, andnot keeps 4 elsewhere.
      const __m256i hi = _mm256_andnot_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, bit), bit), four);
      const __m256i av = load32(y.qs + 32 * chunk);
      const __m256i p = _mm256_sub_epi16(_mm256_maddubs_epi16(lo, av), _mm256_maddubs_epi16(hi, av));
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, pair_scale(sc[2 * chunk], sc[2 * chunk + 1])));
    }
  }
  return isum;
}

float dot_q3_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ3_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = y[b].d * h2f(x[b].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(q3k_lanes(x[b], y[b])), acc);
  }
  return hsum8(acc);
}

float dot_q3_k_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ3_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    acc = tiled_step(acc, hsum_i32(q3k_lanes(x[b], y[b])), 0, h2f(x[b].d), 0.0f, y[b].d);
  }
  return acc;
}

// Q5_K one-token lanes: as Q4_K's pairs, with bit 2c (low nibbles) or 2c+1 (high nibbles) of
// qh[l] as the fifth bit of chunk pair c. Codes <= 31: maddubs pair sums stay within int16.
inline __m256i q5k_lanes(const BlockQ5_K& x, const BlockQ8_K& y, const Q4KScales& s) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const __m256i m16 = _mm256_set1_epi8(0x10);
  const __m256i hbits = load32(x.qh);
  __m256i isum = _mm256_setzero_si256();
  for (int c = 0; c < 4; ++c) {
    const __m256i q = load32(x.qs + 32 * c);
    // Bit 2c of each qh byte moved to bit 4 (shifts within 16-bit words; the mask drops spill).
    const __m256i h_lo =
        _mm256_and_si256(c < 2 ? _mm256_slli_epi16(hbits, 4 - 2 * c) : _mm256_srli_epi16(hbits, 2 * c - 4), m16);
    const __m256i h_hi =
        _mm256_and_si256(c < 2 ? _mm256_slli_epi16(hbits, 3 - 2 * c) : _mm256_srli_epi16(hbits, 2 * c - 3), m16);
    const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), h_lo);
    const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), h_hi);
    const __m256i plo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load32(y.qs + 64 * c)), q4k_scale(s, 2 * c));
    const __m256i phi =
        _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load32(y.qs + 64 * c + 32)), q4k_scale(s, 2 * c + 1));
    isum = _mm256_add_epi32(isum, _mm256_add_epi32(plo, phi));
  }
  return isum;
}

float dot_q5_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  float summs = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Q4KScales s = q4k_scales(x[b].scales);
    const float d = y[b].d * h2f(x[b].d);
    const float dmin = -y[b].d * h2f(x[b].dmin);
    summs = __builtin_fmaf(dmin, static_cast<float>(hsum_i32(q4k_min_products(y[b], s.min))), summs);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(q5k_lanes(x[b], y[b], s)), acc);
  }
  return hsum8(acc) + summs;
}

float dot_q5_k_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Q4KScales s = q4k_scales(x[b].scales);
    acc = tiled_step(acc, hsum_i32(q5k_lanes(x[b], y[b], s)), hsum_i32(q4k_min_products(y[b], s.min)), h2f(x[b].d),
                     h2f(x[b].dmin), y[b].d);
  }
  return acc;
}

// ---- Q6_K -----------------------------------------------------------------------------------

// Lanes of sum over the 8 chunks of 32 values of scale(sub) * (q + 32) * a, minus
// 32 * (bsums[2l] * scale[2l] + bsums[2l+1] * scale[2l+1]) in lane l: the reference's lanes.
// The madd multipliers of chunk c (32 codes: sub-blocks 2c and 2c + 1) from the 16 int16 scales:
// [s(2c) x 8 | s(2c+1) x 8]. `half` holds s(8h) .. s(8h+7) in both 128-bit lanes (h = c / 4), and
// one byte shuffle per chunk picks the pair (instead of two broadcasts and an insert).
inline __m256i q6k_chunk_scale(__m256i half, int c) {
  const char lo = static_cast<char>(4 * (c % 4)), hi = static_cast<char>(4 * (c % 4) + 2);
  return _mm256_shuffle_epi8(half, _mm256_setr_epi8(lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo, lo + 1, lo,
                                                    lo + 1, lo, lo + 1, lo, lo + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1,
                                                    hi, hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1, hi, hi + 1));
}

inline __m256i q6k_lanes(const BlockQ6_K& x, const BlockQ8_K& y) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const __m256i m2 = _mm256_set1_epi8(0x30);
  const __m256i scales16 = _mm256_cvtepi8_epi16(load16(x.scales));
  const __m256i halves[2] = {_mm256_permute4x64_epi64(scales16, 0x44), _mm256_permute4x64_epi64(scales16, 0xee)};
  __m256i isum = _mm256_setzero_si256();
  for (int h = 0; h < 2; ++h) {
    const __m256i qa = load32(x.ql + 64 * h);
    const __m256i qb = load32(x.ql + 64 * h + 32);
    const __m256i hv = load32(x.qh + 32 * h);
    // Unsigned 6-bit codes of the four chunks of this half; shifts of 16-bit words spill bits into
    // the neighbouring byte only where the masks clear them.
    const __m256i codes[4] = {
        _mm256_or_si256(_mm256_and_si256(qa, m4), _mm256_and_si256(_mm256_slli_epi16(hv, 4), m2)),
        _mm256_or_si256(_mm256_and_si256(qb, m4), _mm256_and_si256(_mm256_slli_epi16(hv, 2), m2)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qa, 4), m4), _mm256_and_si256(hv, m2)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qb, 4), m4), _mm256_and_si256(_mm256_srli_epi16(hv, 2), m2)),
    };
    for (int k = 0; k < 4; ++k) {
      const int chunk = 4 * h + k;
      // Lanes 0-3 lie in sub-block 2*chunk, lanes 4-7 in 2*chunk + 1.
      const __m256i scale = q6k_chunk_scale(halves[h], chunk);
      const __m256i p = _mm256_maddubs_epi16(codes[k], load32(y.qs + 128 * h + 32 * k));
      isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale));
    }
  }
  const __m256i offset = _mm256_madd_epi16(load32(y.bsums), scales16);
  return _mm256_sub_epi32(isum, _mm256_slli_epi32(offset, 5));
}

float dot_q6_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = y[b].d * h2f(x[b].d);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(q6k_lanes(x[b], y[b])), acc);
  }
  return hsum8(acc);
}

float dot_q6_k_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    acc = tiled_step(acc, hsum_i32(q6k_lanes(x[b], y[b])), 0, h2f(x[b].d), 0.0f, y[b].d);
  }
  return acc;
}

}  // namespace
}  // namespace wisp::kernels::x86
