// SIMD dots of the grid types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) in exactly the
// float orders of their scalar references (dot_iq_grid.cpp, where the orders are described).
// Per sub-block of 32 values the signed grid values are assembled as 32 int8 in one register (grid
// rows gathered by index, signs applied as a byte mask), multiplied with the activation codes by
// pairs_s8s8 (|grid| <= 62, |a| <= 127: pair sums below 2^14) and weighted by the two 16-value
// scales with one madd, which leaves lane l holding elements 4l .. 4l + 3: ggml's integer lanes,
// so every float step matches the reference's and the bits are the same. Compiled into the AVX2
// and AVX-512 tables alike.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "formats/block_layouts.h"
#include "formats/blocks/iq_grids.h"
#include "kernels/act_quant.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// 16 int16 pair sums of w[j] * a[j] (|w| <= 127): |a| unsigned times w with a's sign.
inline __m256i grid_pairs(__m256i w, __m256i a) {
  return _mm256_maddubs_epi16(_mm256_abs_epi8(a), _mm256_sign_epi8(w, a));
}

// Negates the bytes of `mag` whose bit is set in `signs` (byte k of signs: elements 8k .. 8k + 7).
inline __m256i apply_signs(__m256i mag, std::uint32_t signs) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
  // The sign bits are the byte mask itself: one masked subtract from zero.
  return _mm256_mask_sub_epi8(mag, static_cast<__mmask32>(signs), _mm256_setzero_si256(), mag);
#else
  const __m256i spread = _mm256_set_epi64x(0x0303030303030303, 0x0202020202020202, 0x0101010101010101, 0);
  const __m256i bits = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  __m256i m = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(signs)), spread);
  m = _mm256_cmpeq_epi8(_mm256_and_si256(m, bits), bits);
  return _mm256_sub_epi8(_mm256_xor_si256(mag, m), m);
#endif
}

// The 128 sign patterns of IQ2_XXS/IQ2_XS/IQ3_XXS as byte masks (0xff: negative), so a group's
// signs are one table load instead of a parity count and a bit spread.
struct SignMasks {
  std::uint64_t m[128];
  constexpr SignMasks() : m{} {
    for (unsigned i = 0; i < 128; ++i) {
      const unsigned p = blocks::iq_sign_pattern(i);
      for (int j = 0; j < 8; ++j) m[i] |= (p >> j & 1u ? 0xffULL : 0ULL) << (8 * j);
    }
  }
};
inline constexpr SignMasks kSignMasks{};

// Negates the bytes of `mag` in the 8-value groups whose sign pattern indices are i0 .. i3 (< 128).
inline __m256i apply_patterns(__m256i mag, unsigned i0, unsigned i1, unsigned i2, unsigned i3) {
  const auto& t = kSignMasks.m;
  const __m256i m = _mm256_set_epi64x(static_cast<long long>(t[i3]), static_cast<long long>(t[i2]),
                                      static_cast<long long>(t[i1]), static_cast<long long>(t[i0]));
  return _mm256_sub_epi8(_mm256_xor_si256(mag, m), m);
}

inline std::int64_t row8(const std::uint8_t* row) {
  std::int64_t v;
  std::memcpy(&v, row, 8);
  return v;
}
inline int row4(const std::uint8_t* row) {
  int v;
  std::memcpy(&v, row, 4);
  return v;
}

// The packed fields of one super-block unpacked at once with vector shifts (one store per 8 values)
// instead of a scalar shift, mask and or per use: the grid row indices where their bits are split
// between qs and qh, the sign pattern indices, and every sub-block's scale multipliers; the
// sub-block loop then reads them back.
struct Rows {
  alignas(32) std::uint32_t idx[64];
  alignas(32) std::uint32_t pat[32];  // IQ2_XXS, IQ2_XS: the 7-bit sign pattern of each 8 values
  alignas(32) std::uint32_t sc[8];    // sub-block ib's two scale multipliers, s0 | s1 << 16
};

// (2 a + 1) | (2 b + 1) << 16 per lane: the two 16-value scale multipliers of 8 sub-blocks.
inline void put_scales(std::uint32_t* out, __m256i a, __m256i b) {
  const __m256i s0 = _mm256_or_si256(_mm256_slli_epi32(a, 1), _mm256_set1_epi32(1));
  const __m256i s1 = _mm256_or_si256(_mm256_slli_epi32(b, 17), _mm256_set1_epi32(0x10000));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), _mm256_or_si256(s0, s1));
}
// IQ2_XS, IQ2_S: one byte per sub-block, s0 from its low nibble, s1 from its high one.
inline void nibble_scales(const std::uint8_t* scales, Rows& r) {
  const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales)));
  put_scales(r.sc, _mm256_and_si256(v, _mm256_set1_epi32(15)), _mm256_srli_epi32(v, 4));
}

inline std::uint32_t word32(const void* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
// 8 indices: the bytes of q (8 of them) or'ed with 8 bit-fields of h shifted to bit 8.
inline void put_rows(std::uint32_t* out, const std::uint8_t* q, __m256i h, __m256i shifts, int mask) {
  const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)));
  const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(h, shifts), _mm256_set1_epi32(mask));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), _mm256_or_si256(lo, _mm256_slli_epi32(hi, 8)));
}
inline __m256i two_words(unsigned a, unsigned b) {
  return _mm256_set_m128i(_mm_set1_epi32(static_cast<int>(b)), _mm_set1_epi32(static_cast<int>(a)));
}

// IQ3_S: row i of sub-block ib is qs[8 ib + i] | bit i of qh[ib] << 8.
inline void row_indices(const BlockIQ3_S& x, Rows& r) {
  const __m256i shifts = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int ib = 0; ib < 8; ++ib) put_rows(r.idx + 8 * ib, x.qs + 8 * ib, _mm256_set1_epi32(x.qh[ib]), shifts, 1);
  // One 4-bit scale per sub-block: nibble ib % 2 of scales[ib / 2].
  const __m128i b = _mm_shuffle_epi8(_mm_cvtsi32_si128(static_cast<int>(word32(x.scales))),
                                     _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, -1, -1, -1, -1, -1, -1, -1, -1));
  const __m256i v = _mm256_and_si256(
      _mm256_srlv_epi32(_mm256_cvtepu8_epi32(b), _mm256_setr_epi32(0, 4, 0, 4, 0, 4, 0, 4)), _mm256_set1_epi32(15));
  put_scales(r.sc, v, v);
}
// IQ2_S: row l of sub-block ib is qs[4 ib + l] | bits 2l, 2l + 1 of qh[ib] << 8.
inline void row_indices(const BlockIQ2_S& x, Rows& r) {
  const __m256i shifts = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  for (int ib = 0; ib < 8; ib += 2)
    put_rows(r.idx + 4 * ib, x.qs + 4 * ib, two_words(x.qh[ib], x.qh[ib + 1]), shifts, 3);
  nibble_scales(x.scales, r);
}
// IQ1_S: row l of sub-block ib is qs[4 ib + l] | bits 3l .. 3l + 2 of qh[ib] << 8.
inline void row_indices(const BlockIQ1_S& x, Rows& r) {
  const __m256i shifts = _mm256_setr_epi32(0, 3, 6, 9, 0, 3, 6, 9);
  for (int ib = 0; ib < 8; ib += 2)
    put_rows(r.idx + 4 * ib, x.qs + 4 * ib, two_words(x.qh[ib], x.qh[ib + 1]), shifts, 7);
  // One 3-bit scale per sub-block: bits 12-14 of qh[ib].
  const __m256i v = _mm256_and_si256(_mm256_srli_epi32(_mm256_cvtepu16_epi32(load16(x.qh)), 12), _mm256_set1_epi32(7));
  put_scales(r.sc, v, v);
}
// IQ1_M: row l of sub-block ib is qs[4 ib + l] | the low 3 bits of nibble l of qh[2 ib .. 2 ib + 1] << 8.
inline void row_indices(const BlockIQ1_M& x, Rows& r) {
  const __m256i shifts = _mm256_setr_epi32(0, 4, 8, 12, 0, 4, 8, 12);
  const auto qh16 = [&](int ib) { return static_cast<unsigned>(x.qh[2 * ib] | x.qh[2 * ib + 1] << 8); };
  for (int ib = 0; ib < 8; ib += 2)
    put_rows(r.idx + 4 * ib, x.qs + 4 * ib, two_words(qh16(ib), qh16(ib + 1)), shifts, 7);
  // Sub-block ib's two 3-bit scales are bits 6 (ib % 2) .. + 5 of scales[ib / 2].
  const __m128i w = _mm_shuffle_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x.scales)),
                                     _mm_setr_epi8(0, 1, 0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7));
  const __m256i v = _mm256_srlv_epi32(_mm256_cvtepu16_epi32(w), _mm256_setr_epi32(0, 6, 0, 6, 0, 6, 0, 6));
  put_scales(r.sc, _mm256_and_si256(v, _mm256_set1_epi32(7)),
             _mm256_and_si256(_mm256_srli_epi32(v, 3), _mm256_set1_epi32(7)));
}
// IQ2_XXS: the four 7-bit patterns of sub-block ib are bits 0-27 of its 32-bit sign word.
inline void put_patterns(std::uint32_t* out, std::uint32_t w0, std::uint32_t w1) {
  const __m256i shifts = _mm256_setr_epi32(0, 7, 14, 21, 0, 7, 14, 21);
  const __m256i p = _mm256_and_si256(_mm256_srlv_epi32(two_words(w0, w1), shifts), _mm256_set1_epi32(127));
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), p);
}
inline void row_indices(const BlockIQ2_XXS& x, Rows& r) {
  for (int ib = 0; ib < 8; ib += 2) put_patterns(r.pat + 4 * ib, word32(x.qs + 4 * ib + 2), word32(x.qs + 4 * ib + 6));
  // One 4-bit scale per sub-block: the top of its sign word (the high dword of each 64 bits).
  const __m256i odd = _mm256_setr_epi32(1, 3, 5, 7, 1, 3, 5, 7);
  const __m256i lo = _mm256_permutevar8x32_epi32(load32(x.qs), odd);       // sub-blocks 0-3
  const __m256i hi = _mm256_permutevar8x32_epi32(load32(x.qs + 16), odd);  // sub-blocks 4-7
  const __m256i v = _mm256_srli_epi32(_mm256_permute2x128_si256(lo, hi, 0x20), 28);
  put_scales(r.sc, v, v);
}
// IQ3_XXS takes its row indices straight from qs and its patterns inline (measured: a pattern
// array costs it more than it saves); its scale is the top 4 bits of each sign word.
inline void row_indices(const BlockIQ3_XXS& x, Rows& r) {
  const __m256i v = _mm256_srli_epi32(load32(x.qs + kQK_K / 4), 28);
  put_scales(r.sc, v, v);
}
// IQ2_XS: each uint16 is a 9-bit row index and a 7-bit pattern.
inline void row_indices(const BlockIQ2_XS& x, Rows& r) {
  for (int ib = 0; ib < 8; ib += 2) {
    const __m256i q = _mm256_cvtepu16_epi32(load16(x.qs + 4 * ib));
    _mm256_store_si256(reinterpret_cast<__m256i*>(r.idx + 4 * ib), _mm256_and_si256(q, _mm256_set1_epi32(511)));
    _mm256_store_si256(reinterpret_cast<__m256i*>(r.pat + 4 * ib), _mm256_srli_epi32(q, 9));
  }
  nibble_scales(x.scales, r);
}

// Sub-block ib of a super-block: its 32 signed values and its two 16-value scale multipliers.
struct Sub32 {
  __m256i w;
  __m256i scale;  // int16 multipliers: s0 in the low 128 bits (lanes 0-3), s1 in the high
};

// From a precomputed s0 | s1 << 16: one broadcast and one byte shuffle.
inline __m256i scale16(std::uint32_t s01) {
  const __m256i spread =
      _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
  return _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(s01)), spread);
}

inline Sub32 sub32(const BlockIQ2_XXS& x, int ib, const Rows& r) {
  const auto* q = reinterpret_cast<const std::uint8_t*>(x.qs + 4 * ib);  // four row indices, then the sign word
  const auto& g = blocks::kIq2XxsGrid;
  const __m256i mag = _mm256_set_epi64x(row8(g[q[3]]), row8(g[q[2]]), row8(g[q[1]]), row8(g[q[0]]));
  return {apply_patterns(mag, r.pat[4 * ib], r.pat[4 * ib + 1], r.pat[4 * ib + 2], r.pat[4 * ib + 3]),
          scale16(r.sc[ib])};
}

inline Sub32 sub32(const BlockIQ2_XS& x, int ib, const Rows& r) {
  const std::uint32_t* i = r.idx + 4 * ib;
  const auto& g = blocks::kIq2XsGrid;
  const __m256i mag = _mm256_set_epi64x(row8(g[i[3]]), row8(g[i[2]]), row8(g[i[1]]), row8(g[i[0]]));
  return {apply_patterns(mag, r.pat[4 * ib], r.pat[4 * ib + 1], r.pat[4 * ib + 2], r.pat[4 * ib + 3]),
          scale16(r.sc[ib])};
}

inline Sub32 sub32(const BlockIQ2_S& x, int ib, const Rows& r) {
  const std::uint32_t* i = r.idx + 4 * ib;
  const auto& g = blocks::kIq2SGrid;
  const __m256i mag = _mm256_set_epi64x(row8(g[i[3]]), row8(g[i[2]]), row8(g[i[1]]), row8(g[i[0]]));
  std::uint32_t signs;
  std::memcpy(&signs, x.signs + 4 * ib, 4);
  return {apply_signs(mag, signs), scale16(r.sc[ib])};
}

inline Sub32 sub32(const BlockIQ3_XXS& x, int ib, const Rows& r) {
  const std::uint8_t* q = x.qs + 8 * ib;
  const std::uint32_t aux = word32(x.qs + kQK_K / 4 + 4 * ib);
  const auto& g = blocks::kIq3XxsGrid;
  const __m256i mag = _mm256_set_epi32(row4(g[q[7]]), row4(g[q[6]]), row4(g[q[5]]), row4(g[q[4]]), row4(g[q[3]]),
                                       row4(g[q[2]]), row4(g[q[1]]), row4(g[q[0]]));
  return {apply_patterns(mag, aux & 127, (aux >> 7) & 127, (aux >> 14) & 127, (aux >> 21) & 127), scale16(r.sc[ib])};
}

inline Sub32 sub32(const BlockIQ3_S& x, int ib, const Rows& r) {
  const std::uint32_t* idx = r.idx + 8 * ib;
  const auto& g = blocks::kIq3SGrid;
  const auto at = [&](int i) { return row4(g[idx[i]]); };
  const __m256i mag = _mm256_set_epi32(at(7), at(6), at(5), at(4), at(3), at(2), at(1), at(0));
  std::uint32_t signs;
  std::memcpy(&signs, x.signs + 4 * ib, 4);
  return {apply_signs(mag, signs), scale16(r.sc[ib])};
}

// IQ1: the ternary grid values; shift signs (+-1) per 8 values in *shift when asked.
inline Sub32 sub32(const BlockIQ1_S& x, int ib, const Rows& r, __m256i* shift = nullptr) {
  const std::uint32_t* i = r.idx + 4 * ib;
  const unsigned h = x.qh[ib];
  const auto& g = blocks::kIq1SGrid;
  const auto at = [&](int l) { return row8(reinterpret_cast<const std::uint8_t*>(g[i[l]])); };
  if (shift) *shift = _mm256_set1_epi8(h & 0x8000u ? -1 : 1);
  return {_mm256_set_epi64x(at(3), at(2), at(1), at(0)), scale16(r.sc[ib])};
}

inline Sub32 sub32(const BlockIQ1_M& x, int ib, const Rows& r, __m256i* shift = nullptr) {
  const std::uint32_t* i = r.idx + 4 * ib;
  const std::uint8_t* qh = x.qh + 2 * ib;
  const auto& g = blocks::kIq1SGrid;
  const auto at = [&](int l) { return row8(reinterpret_cast<const std::uint8_t*>(g[i[l]])); };
  if (shift) {
    // Group l's shift sign is bit 3 of nibble l of the 16-bit qh: all-ones bytes (-1) where set,
    // else 1, one 64-bit lane per group.
    const __m256i bit = _mm256_setr_epi64x(0x8, 0x80, 0x800, 0x8000);
    const __m256i set = _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x(qh[0] | qh[1] << 8), bit), bit);
    *shift = _mm256_or_si256(set, _mm256_set1_epi8(1));
  }
  return {_mm256_set_epi64x(at(3), at(2), at(1), at(0)), scale16(r.sc[ib])};
}

inline float grid_d(const BlockIQ1_M& x) {
  const auto* sc = x.scales;
  return h2f(
      static_cast<std::uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
}
template <typename Block>
inline float grid_d(const Block& x) {
  return h2f(x.d);
}

// The 8 lanes of one sub-block: pair sums weighted by the first scale (lanes 0-3) and the second.
// Added to `lanes` (VNNI: one vpdpwssd, the same exact int32 sums as madd then add).
inline __m256i add_scaled(__m256i lanes, __m256i w, const std::int8_t* a, __m256i sc) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpwssd_epi32(lanes, grid_pairs(w, load32(a)), sc);
#else
  return _mm256_add_epi32(lanes, _mm256_madd_epi16(grid_pairs(w, load32(a)), sc));
#endif
}

// Always inlined: as a call (GCC's choice once the Rows array is in it) IQ2_XXS measured ~5% slower.
template <typename Block>
[[gnu::always_inline]] inline __m256i grid_lanes(const Block& x, const std::int8_t* a) {
  Rows r;
  row_indices(x, r);
  __m256i lanes = _mm256_setzero_si256();
  for (int ib = 0; ib < 8; ++ib) {
    const Sub32 s = sub32(x, ib, r);
    lanes = add_scaled(lanes, s.w, a + 32 * ib, s.scale);
  }
  return lanes;
}

template <typename Block>
float grid_one_token(const void* w, const void* a, std::int64_t n, float c) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const __m256i lanes = grid_lanes(x[b], y[b].qs);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(grid_d(x[b]) * y[b].d), _mm256_cvtepi32_ps(lanes), acc);
  }
  return c * hsum8(acc);
}

// The tiled GEMM's order: one exact sum per super-block. IQ1's codes are 8 grid + shift.
template <typename Block, bool kShift>
float grid_tiled(const void* w, const void* a, std::int64_t n, float c) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    Rows r;
    row_indices(x[b], r);
    __m256i lanes = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
      if constexpr (kShift) {
        __m256i shift;
        const Sub32 s = sub32(x[b], ib, r, &shift);
        const __m256i code = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), s.w), shift);  // 8 grid + shift
        lanes = add_scaled(lanes, code, y[b].qs + 32 * ib, s.scale);
      } else {
        const Sub32 s = sub32(x[b], ib, r);
        lanes = add_scaled(lanes, s.w, y[b].qs + 32 * ib, s.scale);
      }
    }
    const float t = (grid_d(x[b]) * c) * static_cast<float>(hsum_i32(lanes));
    acc = __builtin_fmaf(t, y[b].d, acc);
  }
  return acc;
}

// IQ1_S and IQ1_M one token: the shift's sums beside the grid's (see dot_iq_grid.cpp).
template <typename Block>
float iq1_one_token(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  __m256 acc = _mm256_setzero_ps(), acc_shift = _mm256_setzero_ps();
  float acc_shift1 = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    Rows r;
    row_indices(x[b], r);
    __m256i lanes = _mm256_setzero_si256(), shift_lanes = _mm256_setzero_si256();
    for (int ib = 0; ib < 8; ++ib) {
      __m256i shift;
      const Sub32 s = sub32(x[b], ib, r, &shift);
      lanes = add_scaled(lanes, s.w, y[b].qs + 32 * ib, s.scale);
      shift_lanes = add_scaled(shift_lanes, shift, y[b].qs + 32 * ib, s.scale);
    }
    const float d = y[b].d * grid_d(x[b]);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lanes), acc);
    if constexpr (std::is_same_v<Block, BlockIQ1_S>) {
      acc_shift1 = __builtin_fmaf(d, static_cast<float>(hsum_i32(shift_lanes)), acc_shift1);
    } else {
      acc_shift = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(shift_lanes), acc_shift);
    }
  }
  if constexpr (std::is_same_v<Block, BlockIQ1_S>) return __builtin_fmaf(0.125f, acc_shift1, hsum8(acc));
  return __builtin_fmaf(0.125f, hsum8(acc_shift), hsum8(acc));
}

float dot_iq2_xxs(const void* w, const void* a, std::int64_t n) {
  return grid_one_token<BlockIQ2_XXS>(w, a, n, 0.125f);
}
float dot_iq2_xs(const void* w, const void* a, std::int64_t n) { return grid_one_token<BlockIQ2_XS>(w, a, n, 0.125f); }
float dot_iq2_s(const void* w, const void* a, std::int64_t n) { return grid_one_token<BlockIQ2_S>(w, a, n, 0.125f); }
float dot_iq3_xxs(const void* w, const void* a, std::int64_t n) { return grid_one_token<BlockIQ3_XXS>(w, a, n, 0.25f); }
float dot_iq3_s(const void* w, const void* a, std::int64_t n) { return grid_one_token<BlockIQ3_S>(w, a, n, 1.0f); }
float dot_iq1_s(const void* w, const void* a, std::int64_t n) { return iq1_one_token<BlockIQ1_S>(w, a, n); }
float dot_iq1_m(const void* w, const void* a, std::int64_t n) { return iq1_one_token<BlockIQ1_M>(w, a, n); }
float dot_iq2_xxs_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ2_XXS, false>(w, a, n, 0.125f);
}
float dot_iq2_xs_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ2_XS, false>(w, a, n, 0.125f);
}
float dot_iq2_s_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ2_S, false>(w, a, n, 0.125f);
}
float dot_iq3_xxs_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ3_XXS, false>(w, a, n, 0.25f);
}
float dot_iq3_s_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ3_S, false>(w, a, n, 1.0f);
}
float dot_iq1_s_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ1_S, true>(w, a, n, 0.125f);
}
float dot_iq1_m_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ1_M, true>(w, a, n, 0.125f);
}

}  // namespace
}  // namespace wisp::kernels::x86
