// wisp's own dot order for the 32-value types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) on x86
// (DotKernel::dot_invariant), compiled per ISA like legacy_dots.h; the scalar form, which these
// reproduce bit for bit, and the order itself are described in dot_blocks8.cpp. Activations in
// ActFormat::kQ8_0Split.
//
// Per group of 8 blocks of one weight row: the 8 blocks' integer dots are reduced to one vector
// of 8 exact block sums by a tree of horizontal adds, then one convert, one multiply by the 8
// scale products and one FMA cover all 8 blocks. The activation's 8 scales and code sums are one
// load each; the weights' 8 half scales are gathered once per group. The row is read in order
// (one row per call, rows in order), so the weight stream is sequential for the prefetcher.
#pragma once

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// The 32 codes of a 4-bit block as bytes (low nibbles, then high nibbles): one broadcast load,
// the upper half shifted by 4, then masked.
inline __m256i nibbles32(const std::uint8_t* qs) {
  const __m256i v = _mm256_broadcastsi128_si256(load16(qs));
  return _mm256_and_si256(_mm256_srlv_epi64(v, _mm256_setr_epi64x(0, 0, 4, 4)), _mm256_set1_epi8(0x0f));
}

// The 32 codes of a 5-bit block as bytes (<= 31): the nibbles as nibbles32's, and bit j of the
// little-endian qh as 0x10 in byte j.
inline __m256i codes5(const std::uint8_t* qs, const std::uint8_t* qh) {
  return _mm256_or_si256(nibbles32(qs), fifth_bits(qh));
}

// The half field `F` of 8 consecutive blocks, as 8 floats (exact).
template <class Block, class Field>
inline __m256 halves8(const Block* x, Field f) {
  return _mm256_cvtph_ps(_mm_setr_epi16(static_cast<short>(f(x[0])), static_cast<short>(f(x[1])),
                                        static_cast<short>(f(x[2])), static_cast<short>(f(x[3])),
                                        static_cast<short>(f(x[4])), static_cast<short>(f(x[5])),
                                        static_cast<short>(f(x[6])), static_cast<short>(f(x[7]))));
}

// Lane k = the sum of all 16 int16 lanes of p[k] (exact when every partial stays within int16:
// the callers' bound). Three levels of hadd within 128-bit halves, then the two halves added.
inline __m256i sum16x8(const __m256i (&p)[8]) {
  const __m256i h01 = _mm256_hadd_epi16(p[0], p[1]), h23 = _mm256_hadd_epi16(p[2], p[3]);
  const __m256i h45 = _mm256_hadd_epi16(p[4], p[5]), h67 = _mm256_hadd_epi16(p[6], p[7]);
  const __m256i h = _mm256_hadd_epi16(_mm256_hadd_epi16(h01, h23), _mm256_hadd_epi16(h45, h67));
  return _mm256_add_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(h)),
                          _mm256_cvtepi16_epi32(_mm256_extracti128_si256(h, 1)));
}

// Lane k = the sum of all 16 int16 lanes of p[k] for the 5-bit codes' pair sums (each <= 2 * 31 *
// 127 = 7874, so sum16x8's eight in int16 could overflow): two levels of hadd in int16 (four pair
// sums, <= 31496 < 2^15), one madd to int32, then the two halves added (exact).
inline __m256i sum16x8_wide(const __m256i (&p)[8]) {
  const __m256i h01 = _mm256_hadd_epi16(p[0], p[1]), h23 = _mm256_hadd_epi16(p[2], p[3]);
  const __m256i h45 = _mm256_hadd_epi16(p[4], p[5]), h67 = _mm256_hadd_epi16(p[6], p[7]);
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i a = _mm256_madd_epi16(_mm256_hadd_epi16(h01, h23), ones);
  const __m256i b = _mm256_madd_epi16(_mm256_hadd_epi16(h45, h67), ones);
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

// Lane k = the sum of the 8 int32 lanes of p[k] (exact).
inline __m256i sum32x8(const __m256i (&p)[8]) {
  const __m256i h01 = _mm256_hadd_epi32(p[0], p[1]), h23 = _mm256_hadd_epi32(p[2], p[3]);
  const __m256i h45 = _mm256_hadd_epi32(p[4], p[5]), h67 = _mm256_hadd_epi32(p[6], p[7]);
  const __m256i a = _mm256_hadd_epi32(h01, h23), b = _mm256_hadd_epi32(h45, h67);
  return _mm256_add_epi32(_mm256_permute2x128_si256(a, b, 0x20), _mm256_permute2x128_si256(a, b, 0x31));
}

// The 16 int16 pair sums of a 4-bit block's unsigned codes (<= 15) with int8 activation codes in
// [-127, 127]: each <= 2 * 15 * 127, and the tree of sum16x8 adds 8 of them, <= 30480 < 2^15.
inline __m256i q4_pairs(const std::uint8_t* qs, const std::int8_t* a) {
  return _mm256_maddubs_epi16(nibbles32(qs), load32(a));
}

// One block of a 4-bit type, as an exact int (the tails of rows whose block count is not a
// multiple of 8).
inline int q4_block_sum(const std::uint8_t* qs, const std::int8_t* a) {
  return hsum_i32(_mm256_madd_epi16(q4_pairs(qs, a), _mm256_set1_epi16(1)));
}

// The 8 int32 lanes of a Q8_0 block xv with activation codes in [-127, 127]: |x| times a with x's
// sign, exact for any int8 x (pair sums <= 2 * 128 * 127 < 2^15).
inline __m256i q8_lanes_of(__m256i xv, const std::int8_t* a) {
  const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(xv, xv), _mm256_sign_epi8(load32(a), xv));
  return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

// The common loop, for T activation rows against one weight row (T = 1: the one-token kernel;
// T = 4: the prefill variant, DotTok4Fn). Prep(x + b, pw) loads the 8 weight blocks of a group
// once for every token (the 4-bit codes unpacked to bytes); Sums(pw, qs + 32 b, sums) gives one
// token's 8 exact block sums of the group; Sum1(x[b], qs + 32 b, sum) one block's (the tail); the
// minimum chain only for blocks with a field m. Every token's outputs go through exactly the
// float operations, in the order, of T = 1, so the variants equal the one-token kernel bit for bit.
template <class Block, bool kMin, int T, class Prep, class Sums, class Sum1>
inline void blocks8_dots(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out, Prep&& prep,
                         Sums&& sums, Sum1&& sum1) {
  const auto* x = static_cast<const Block*>(w);
  Q8_0SplitRow y[T];
  for (int k = 0; k < T; ++k) y[k] = q8_0_split_row(static_cast<const std::uint8_t*>(a) + k * a_stride, n);
  const std::int64_t nb = n / kQK;
  __m256 acc[T], macc[T];
  for (int k = 0; k < T; ++k) acc[k] = macc[k] = _mm256_setzero_ps();
  const auto step = [&](int k, const __m256 xd, const __m256 xm, __m256i isum, __m256 dy, __m256 sy) {
    acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(xd, dy), acc[k]);
    if constexpr (kMin) macc[k] = _mm256_fmadd_ps(xm, sy, macc[k]);
  };
  const auto d_of = [](const Block& v) { return v.d; };
  std::int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    // Software prefetch a few KiB ahead of the weight stream (the next rows of a matrix follow in
    // memory; a hint past the end never faults): measured +16% single-thread DRAM bandwidth on
    // the AVX2 EPYC over the hardware prefetcher alone.
    prefetch_ahead(x + b, sizeof(Block) * 8);
    const __m256 xd = halves8(x + b, d_of);
    __m256 xm = _mm256_setzero_ps();
    if constexpr (kMin) xm = halves8(x + b, [](const Block& v) { return v.m; });
    __m256i pw[8];
    prep(x + b, pw);
    for (int k = 0; k < T; ++k) {
      const __m256 dy = _mm256_loadu_ps(y[k].d + b);
      const __m256 sy = kMin ? _mm256_loadu_ps(y[k].s + b) : _mm256_setzero_ps();
      step(k, xd, xm, sums(pw, y[k].qs + b * kQK, load32(y[k].sum + b)), dy, sy);
    }
  }
  if (b < nb) {
    // The tail: the same operations on zero lanes beyond the row (fma(0, 0, acc) is acc: acc
    // starts at +0 and never becomes -0 under round-to-nearest).
    Block xb[8] = {};
    for (std::int64_t k = 0; k < nb - b; ++k) xb[k] = x[b + k];
    const __m256 xd = halves8(xb, d_of);
    __m256 xm = _mm256_setzero_ps();
    if constexpr (kMin) xm = halves8(xb, [](const Block& v) { return v.m; });
    for (int t = 0; t < T; ++t) {
      alignas(32) std::int32_t is[8] = {};
      alignas(32) float yd[8] = {}, ys[8] = {};
      for (std::int64_t k = 0; k < nb - b; ++k) {
        is[k] = sum1(x[b + k], y[t].qs + (b + k) * kQK, y[t].sum[b + k]);
        yd[k] = y[t].d[b + k];
        ys[k] = y[t].s[b + k];
      }
      step(t, xd, xm, _mm256_load_si256(reinterpret_cast<const __m256i*>(is)), _mm256_load_ps(yd), _mm256_load_ps(ys));
    }
  }
  for (int k = 0; k < T; ++k) out[k] = hsum8(_mm256_add_ps(acc[k], macc[k]));
}

// The 4-bit codes of 8 blocks unpacked to bytes.
template <class Block>
inline void prep_q4(const Block* x, __m256i (&pw)[8]) {
  for (int i = 0; i < 8; ++i) pw[i] = nibbles32(x[i].qs);
}

// One token's 8 block sums against unpacked 4-bit codes (<= 15) with int8 activation codes in
// [-127, 127]: each pair sum <= 2 * 15 * 127, and sum16x8 adds 8 of them, <= 30480 < 2^15.
inline __m256i q4_sums(const __m256i (&pw)[8], const std::int8_t* qs) {
  const __m256i p[8] = {_mm256_maddubs_epi16(pw[0], load32(qs)),       _mm256_maddubs_epi16(pw[1], load32(qs + 32)),
                        _mm256_maddubs_epi16(pw[2], load32(qs + 64)),  _mm256_maddubs_epi16(pw[3], load32(qs + 96)),
                        _mm256_maddubs_epi16(pw[4], load32(qs + 128)), _mm256_maddubs_epi16(pw[5], load32(qs + 160)),
                        _mm256_maddubs_epi16(pw[6], load32(qs + 192)), _mm256_maddubs_epi16(pw[7], load32(qs + 224))};
  return sum16x8(p);
}

// The 5-bit codes of 8 blocks unpacked to bytes.
template <class Block>
inline void prep_q5(const Block* x, __m256i (&pw)[8]) {
  for (int i = 0; i < 8; ++i) pw[i] = codes5(x[i].qs, x[i].qh);
}

// One token's 8 block sums against unpacked 5-bit codes (<= 31): maddubs pairs <= 7874, summed by
// sum16x8_wide.
inline __m256i q5_sums(const __m256i (&pw)[8], const std::int8_t* qs) {
  const __m256i p[8] = {_mm256_maddubs_epi16(pw[0], load32(qs)),       _mm256_maddubs_epi16(pw[1], load32(qs + 32)),
                        _mm256_maddubs_epi16(pw[2], load32(qs + 64)),  _mm256_maddubs_epi16(pw[3], load32(qs + 96)),
                        _mm256_maddubs_epi16(pw[4], load32(qs + 128)), _mm256_maddubs_epi16(pw[5], load32(qs + 160)),
                        _mm256_maddubs_epi16(pw[6], load32(qs + 192)), _mm256_maddubs_epi16(pw[7], load32(qs + 224))};
  return sum16x8_wide(p);
}

// One 5-bit block as an exact int (the tails): the pair sums widened to int32 at once.
inline int q5_block_sum(const std::uint8_t* qs, const std::uint8_t* qh, const std::int8_t* a) {
  return hsum_i32(_mm256_madd_epi16(_mm256_maddubs_epi16(codes5(qs, qh), load32(a)), _mm256_set1_epi16(1)));
}

}  // namespace
}  // namespace wisp::kernels::x86

// The one-token kernels' AVX-512 VNNI forms (the same bits), after the helpers they use.
#include "kernels/x86/blocks8_dots512-inl.h"

namespace wisp::kernels::x86 {
namespace {

template <int T>
inline void q4_0_dots(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  blocks8_dots<BlockQ4_0, false, T>(
      w, a, a_stride, n, out, prep_q4<BlockQ4_0>,
      // The offset 8 of the codes, through the activation sums: sum((q - 8) a) = sum(q a) - 8 sum(a).
      [](const __m256i(&pw)[8], const std::int8_t* qs, __m256i sum) {
        return _mm256_sub_epi32(q4_sums(pw, qs), _mm256_slli_epi32(sum, 3));
      },
      [](const BlockQ4_0& x, const std::int8_t* qs, std::int32_t sum) { return q4_block_sum(x.qs, qs) - 8 * sum; });
}

template <int T>
inline void q4_1_dots(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  blocks8_dots<BlockQ4_1, true, T>(
      w, a, a_stride, n, out, prep_q4<BlockQ4_1>,
      [](const __m256i(&pw)[8], const std::int8_t* qs, __m256i) { return q4_sums(pw, qs); },
      [](const BlockQ4_1& x, const std::int8_t* qs, std::int32_t) { return q4_block_sum(x.qs, qs); });
}

template <int T>
inline void q5_0_dots(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  blocks8_dots<BlockQ5_0, false, T>(
      w, a, a_stride, n, out, prep_q5<BlockQ5_0>,
      // The offset 16 of the codes, through the activation sums: sum((q - 16) a) = sum(q a) - 16 sum(a).
      [](const __m256i(&pw)[8], const std::int8_t* qs, __m256i sum) {
        return _mm256_sub_epi32(q5_sums(pw, qs), _mm256_slli_epi32(sum, 4));
      },
      [](const BlockQ5_0& x, const std::int8_t* qs, std::int32_t sum) {
        return q5_block_sum(x.qs, x.qh, qs) - 16 * sum;
      });
}

template <int T>
inline void q5_1_dots(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  blocks8_dots<BlockQ5_1, true, T>(
      w, a, a_stride, n, out, prep_q5<BlockQ5_1>,
      [](const __m256i(&pw)[8], const std::int8_t* qs, __m256i) { return q5_sums(pw, qs); },
      [](const BlockQ5_1& x, const std::int8_t* qs, std::int32_t) { return q5_block_sum(x.qs, x.qh, qs); });
}

template <int T>
inline void q8_0_dots(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  blocks8_dots<BlockQ8_0, false, T>(
      w, a, a_stride, n, out,
      [](const BlockQ8_0* x, __m256i(&pw)[8]) {
        for (int i = 0; i < 8; ++i) pw[i] = load32(x[i].qs);
      },
      [](const __m256i(&pw)[8], const std::int8_t* qs, __m256i) {
        const __m256i p[8] = {q8_lanes_of(pw[0], qs),       q8_lanes_of(pw[1], qs + 32),  q8_lanes_of(pw[2], qs + 64),
                              q8_lanes_of(pw[3], qs + 96),  q8_lanes_of(pw[4], qs + 128), q8_lanes_of(pw[5], qs + 160),
                              q8_lanes_of(pw[6], qs + 192), q8_lanes_of(pw[7], qs + 224)};
        return sum32x8(p);
      },
      [](const BlockQ8_0& x, const std::int8_t* qs, std::int32_t) { return hsum_i32(q8_lanes_of(load32(x.qs), qs)); });
}

float dot_q4_0_blocks8(const void* w, const void* a, std::int64_t n) {
#if defined(WISP_BLOCKS8_ZMM)
  return dot_q4_0_blocks8_zmm(w, a, n);
#else
  float out;
  q4_0_dots<1>(w, a, 0, n, &out);
  return out;
#endif
}
float dot_q4_1_blocks8(const void* w, const void* a, std::int64_t n) {
  float out;
  q4_1_dots<1>(w, a, 0, n, &out);
  return out;
}
float dot_q5_0_blocks8(const void* w, const void* a, std::int64_t n) {
  float out;
  q5_0_dots<1>(w, a, 0, n, &out);
  return out;
}
float dot_q5_1_blocks8(const void* w, const void* a, std::int64_t n) {
  float out;
  q5_1_dots<1>(w, a, 0, n, &out);
  return out;
}
float dot_q8_0_blocks8(const void* w, const void* a, std::int64_t n) {
#if defined(WISP_BLOCKS8_ZMM)
  return dot_q8_0_blocks8_zmm(w, a, n);
#else
  float out;
  q8_0_dots<1>(w, a, 0, n, &out);
  return out;
#endif
}

// The prefill variants (DotTok4Fn): four activation rows, each weight group loaded and unpacked
// once for the four.
void tok4_q4_0_blocks8(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  q4_0_dots<4>(w, a, a_stride, n, out);
}
void tok4_q4_1_blocks8(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  q4_1_dots<4>(w, a, a_stride, n, out);
}
void tok4_q5_0_blocks8(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  q5_0_dots<4>(w, a, a_stride, n, out);
}
void tok4_q5_1_blocks8(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  q5_1_dots<4>(w, a, a_stride, n, out);
}
void tok4_q8_0_blocks8(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  q8_0_dots<4>(w, a, a_stride, n, out);
}

}  // namespace
}  // namespace wisp::kernels::x86
