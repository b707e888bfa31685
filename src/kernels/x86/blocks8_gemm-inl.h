// The prefill GEMM of wisp's blocks8 order (MultiDot::gemm8; Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): up
// to 8 weight rows against every token of a batch, each output bit-identical to the one-token
// kernel dot_q*_blocks8 (blocks8_dots.h, scalar form dot_blocks8.cpp). Compiled per ISA like
// blocks8_dots.h.
//
// Why another layout: the one-token kernel reduces 8 blocks of one row horizontally (a tree of
// hadds, shuffle-port work per block and token), and its activation loads serve one row each.
// Here the 8 rows sit in the 8 int32 lanes of a vector: a vector of weight codes holds 4 values of
// each row, an activation dword broadcast serves all 8 rows, and the block sums come out already
// one per lane, with no horizontal reduction. The rows' blocks are unpacked and interleaved once
// per call into a scratch tile (`gemm8_scratch_bytes`; no second resident copy of the weights)
// and reused by every token.
//
// Same numerics: the integer block sums are exact in any grouping. The float operations per
// output are blocks8's: lane k = b % 8 of its accumulator takes blocks k, k + 8, k + 16, ... in
// order, acc = fma(float(isum_b), d_x * d_y, acc) (and macc = fma(m_x, s_y, macc)), and the result
// is hsum8(acc + macc). Here each of those lanes is its own register, walked over its blocks with
// a stride of 8 (the chains are independent, so their interleaving changes no bits), and hsum8's
// tree becomes vertical adds of the 8 registers: ((a4 + a0) + (a6 + a2)) + ((a5 + a1) + (a7 + a3)).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/multi_dots.h"
#include "kernels/x86/blocks8_dots-inl.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// The GEMMs' token loop: `group.template operator()<T>(t0)` over the call's tokens in groups of
// four, then one group of the one to three left, so every group's T is a compile-time constant.
template <class Group>
inline void for_token_groups(std::int64_t n_tok, const Group& group) {
  std::int64_t t = 0;
  for (; t + 4 <= n_tok; t += 4) group.template operator()<4>(t);
  switch (n_tok - t) {
    case 3: group.template operator()<3>(t); break;
    case 2: group.template operator()<2>(t); break;
    case 1: group.template operator()<1>(t); break;
    default: break;
  }
}

// One dword (4 activation codes) broadcast to the 8 lanes.
inline __m256i bcast4(const std::int8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// The scratch tile of one call: per block b, 8 vectors of codes (vector c: activation positions
// 4c .. 4c + 3 of all 8 rows, row r in int32 lane r), the 8 rows' d and, for types with a minimum,
// m as floats.
struct Gemm8Tile {
  __m256i* codes;  // [nb][8]
  float* d;        // [nb][8]
  float* m;        // [nb][8]
};

inline Gemm8Tile gemm8_tile(void* scratch, std::int64_t nb) {
  auto* base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch) + 31) & ~std::uintptr_t{31});
  auto* codes = reinterpret_cast<__m256i*>(base);
  auto* d = reinterpret_cast<float*>(codes + nb * 8);
  return {codes, d, d + nb * 8};
}

// Rows r0..r3 (low 128-bit halves) and r4..r7 (high halves) given as four vectors
// {r0|r4}, {r1|r5}, {r2|r6}, {r3|r7} of 4 dwords each: out[i] = dword i of every row, row r in
// lane r.
inline void transpose4(__m256i a04, __m256i a15, __m256i a26, __m256i a37, __m256i (&out)[4]) {
  const __m256i t0 = _mm256_unpacklo_epi32(a04, a15), t1 = _mm256_unpacklo_epi32(a26, a37);
  const __m256i t2 = _mm256_unpackhi_epi32(a04, a15), t3 = _mm256_unpackhi_epi32(a26, a37);
  out[0] = _mm256_unpacklo_epi64(t0, t1);
  out[1] = _mm256_unpackhi_epi64(t0, t1);
  out[2] = _mm256_unpacklo_epi64(t2, t3);
  out[3] = _mm256_unpackhi_epi64(t2, t3);
}

inline __m256i pair16(const void* lo, const void* hi) {
  return _mm256_inserti128_si256(_mm256_castsi128_si256(load16(lo)), load16(hi), 1);
}

// The 4-bit codes of block b of 8 rows: dword i of a row's 16 bytes holds values 4i .. 4i + 3 in
// its low nibbles and 16 + 4i .. 16 + 4i + 3 in its high nibbles, so after the transpose vector i
// (low nibbles) and vector 4 + i (high nibbles) line up with activation dwords i and 4 + i.
template <class Block>
inline void pack_q4(const Block* const (&rows)[8], std::int64_t b, __m256i* out) {
  __m256i v[4];
  transpose4(pair16(rows[0][b].qs, rows[4][b].qs), pair16(rows[1][b].qs, rows[5][b].qs),
             pair16(rows[2][b].qs, rows[6][b].qs), pair16(rows[3][b].qs, rows[7][b].qs), v);
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  for (int i = 0; i < 4; ++i) {
    _mm256_store_si256(out + i, _mm256_and_si256(v[i], m4));
    _mm256_store_si256(out + 4 + i, _mm256_and_si256(_mm256_srli_epi16(v[i], 4), m4));
  }
}

// Whether the block sums use VNNI's vpdpbusd (unsigned bytes times signed bytes, four products
// added into each int32 lane, exact: no saturation) instead of maddubs and int16 adds.
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
constexpr bool kGemm8Vnni = true;
#else
constexpr bool kGemm8Vnni = false;
#endif

// The 8-bit codes of block b of 8 rows: two transposes of 4 dwords (the block's halves). With
// VNNI the signed codes are stored offset by 128 (x ^ 0x80 = x + 128 as an unsigned byte), the
// unsigned operand vpdpbusd needs; the offset leaves through the activation sums as Q4_0's does:
// sum((x + 128) a) - 128 sum(a) = sum(x a).
inline void pack_q8(const BlockQ8_0* const (&rows)[8], std::int64_t b, __m256i* out) {
  const __m256i flip = _mm256_set1_epi8(kGemm8Vnni ? static_cast<char>(0x80) : 0);
  for (int h = 0; h < 2; ++h) {
    __m256i v[4];
    transpose4(pair16(rows[0][b].qs + 16 * h, rows[4][b].qs + 16 * h),
               pair16(rows[1][b].qs + 16 * h, rows[5][b].qs + 16 * h),
               pair16(rows[2][b].qs + 16 * h, rows[6][b].qs + 16 * h),
               pair16(rows[3][b].qs + 16 * h, rows[7][b].qs + 16 * h), v);
    for (int i = 0; i < 4; ++i) _mm256_store_si256(out + 4 * h + i, _mm256_xor_si256(v[i], flip));
  }
}

// The 5-bit codes of block b of 8 rows: each row's 32 codes as bytes (codes5: value j in byte j),
// then pack_q8's two transposes of 4 dwords, one per 16-value half.
template <class Block>
inline void pack_q5(const Block* const (&rows)[8], std::int64_t b, __m256i* out) {
  __m256i v[8];
  for (int r = 0; r < 8; ++r) v[r] = codes5(rows[r][b].qs, rows[r][b].qh);
  __m256i t[4];
  transpose4(_mm256_permute2x128_si256(v[0], v[4], 0x20), _mm256_permute2x128_si256(v[1], v[5], 0x20),
             _mm256_permute2x128_si256(v[2], v[6], 0x20), _mm256_permute2x128_si256(v[3], v[7], 0x20), t);
  for (int i = 0; i < 4; ++i) _mm256_store_si256(out + i, t[i]);
  transpose4(_mm256_permute2x128_si256(v[0], v[4], 0x31), _mm256_permute2x128_si256(v[1], v[5], 0x31),
             _mm256_permute2x128_si256(v[2], v[6], 0x31), _mm256_permute2x128_si256(v[3], v[7], 0x31), t);
  for (int i = 0; i < 4; ++i) _mm256_store_si256(out + 4 + i, t[i]);
}

// The half field f of block b of 8 rows as 8 floats (exact), stored at out.
template <class Block, class Field>
inline void halves_of_rows(const Block* const (&rows)[8], std::int64_t b, Field f, float* out) {
  _mm256_store_ps(
      out, _mm256_cvtph_ps(_mm_setr_epi16(static_cast<short>(f(rows[0][b])), static_cast<short>(f(rows[1][b])),
                                          static_cast<short>(f(rows[2][b])), static_cast<short>(f(rows[3][b])),
                                          static_cast<short>(f(rows[4][b])), static_cast<short>(f(rows[5][b])),
                                          static_cast<short>(f(rows[6][b])), static_cast<short>(f(rows[7][b])))));
}

enum class Gemm8Kind { kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0 };

// Whether the type has a minimum (the second float chain, m_x * s_y).
constexpr bool gemm8_has_min(Gemm8Kind k) { return k == Gemm8Kind::kQ4_1 || k == Gemm8Kind::kQ5_1; }
constexpr bool gemm8_five_bit(Gemm8Kind k) { return k == Gemm8Kind::kQ5_0 || k == Gemm8Kind::kQ5_1; }

// Block b of 8 rows in the tile's layout, for each type.
template <Gemm8Kind K, class Block>
inline void pack_codes(const Block* const (&rows)[8], std::int64_t b, __m256i* out) {
  if constexpr (K == Gemm8Kind::kQ8_0) {
    pack_q8(rows, b, out);
  } else if constexpr (gemm8_five_bit(K)) {
    pack_q5(rows, b, out);
  } else {
    pack_q4(rows, b, out);
  }
}

// The exact block sums of block b of the 8 rows with T tokens (one int32 per row and token).
// 4-bit: maddubs pairs (<= 2 * 15 * 127) added in int16 over the block's 8 dwords (16 products,
// <= 30480 < 2^15: the bound of blocks8's tree), then one madd to int32. 5-bit: pairs <= 2 * 31 *
// 127 = 7874, added in int16 over 4 dwords (<= 31496), so two madds per block. 8-bit: |w| times a with
// w's sign (pairs <= 2 * 128 * 127), to int32 per dword.
// With VNNI: one vpdpbusd per dword of the block and token (the stored codes are unsigned for
// every type, Q8_0's offset by 128), two chains per token (even and odd dwords) for latency; the
// products are exact in int32 whatever the grouping.
template <Gemm8Kind K, int T>
inline void block_sums(const __m256i* codes, const std::int8_t* const (&a)[T], __m256i (&isum)[T]) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  __m256i s0[T], s1[T];
  for (int t = 0; t < T; ++t) s0[t] = s1[t] = _mm256_setzero_si256();
  for (int c = 0; c < 8; c += 2) {
    const __m256i w0 = _mm256_load_si256(codes + c), w1 = _mm256_load_si256(codes + c + 1);
    for (int t = 0; t < T; ++t) {
      s0[t] = _mm256_dpbusd_epi32(s0[t], w0, bcast4(a[t] + 4 * c));
      s1[t] = _mm256_dpbusd_epi32(s1[t], w1, bcast4(a[t] + 4 * c + 4));
    }
  }
  for (int t = 0; t < T; ++t) isum[t] = _mm256_add_epi32(s0[t], s1[t]);
  return;
#endif
  const __m256i ones = _mm256_set1_epi16(1);
  if constexpr (K == Gemm8Kind::kQ8_0) {
    for (int t = 0; t < T; ++t) isum[t] = _mm256_setzero_si256();
    for (int c = 0; c < 8; ++c) {
      const __m256i w = _mm256_load_si256(codes + c);
      const __m256i aw = _mm256_sign_epi8(w, w);
      for (int t = 0; t < T; ++t) {
        const __m256i p = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(bcast4(a[t] + 4 * c), w));
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p, ones));
      }
    }
  } else if constexpr (gemm8_five_bit(K)) {
    for (int t = 0; t < T; ++t) isum[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int c = 0; c < 8; c += 4) {
      const __m256i w0 = _mm256_load_si256(codes + c), w1 = _mm256_load_si256(codes + c + 1);
      const __m256i w2 = _mm256_load_si256(codes + c + 2), w3 = _mm256_load_si256(codes + c + 3);
      for (int t = 0; t < T; ++t) {
        const __m256i p01 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast4(a[t] + 4 * c)),
                                             _mm256_maddubs_epi16(w1, bcast4(a[t] + 4 * c + 4)));
        const __m256i p23 = _mm256_add_epi16(_mm256_maddubs_epi16(w2, bcast4(a[t] + 4 * c + 8)),
                                             _mm256_maddubs_epi16(w3, bcast4(a[t] + 4 * c + 12)));
        isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(_mm256_add_epi16(p01, p23), ones));
      }
    }
  } else {
    // Two dwords per step, each step's pair added before it joins the chain. Fully unrolled, the
    // compiler re-associates the int16 chains into trees of all 32 products at once and spills
    // them (measured: 199 instructions per block and 4 tokens); one dword per step it copies
    // registers around the loop.
    __m256i s[T];
    for (int t = 0; t < T; ++t) s[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
    for (int c = 0; c < 8; c += 2) {
      const __m256i w0 = _mm256_load_si256(codes + c), w1 = _mm256_load_si256(codes + c + 1);
      for (int t = 0; t < T; ++t) {
        const __m256i p0 = _mm256_maddubs_epi16(w0, bcast4(a[t] + 4 * c));
        const __m256i p1 = _mm256_maddubs_epi16(w1, bcast4(a[t] + 4 * c + 4));
        s[t] = _mm256_add_epi16(s[t], _mm256_add_epi16(p0, p1));
      }
    }
    for (int t = 0; t < T; ++t) isum[t] = _mm256_madd_epi16(s[t], ones);
  }
}

// T tokens (y[t] their split rows) against the packed 8 rows: out[t] = the 8 rows' outputs.
template <Gemm8Kind K, int T>
inline void gemm8_tokens(const Gemm8Tile& tile, std::int64_t nb, const Q8_0SplitRow (&y)[T], __m256 (&out)[T]) {
  constexpr bool kMin = gemm8_has_min(K);
  __m256 acc[8][T], macc[8][T];
  for (int k = 0; k < 8; ++k) {
    __m256 f[T], fm[T];
    for (int t = 0; t < T; ++t) f[t] = fm[t] = _mm256_setzero_ps();
    for (std::int64_t b = k; b < nb; b += 8) {
      const std::int8_t* a[T];
      for (int t = 0; t < T; ++t) a[t] = y[t].qs + b * kQK;
      __m256i isum[T];
      block_sums<K, T>(tile.codes + 8 * b, a, isum);
      const __m256 xd = _mm256_load_ps(tile.d + 8 * b);
      for (int t = 0; t < T; ++t) {
        // Q4_0's offset 8 through the activation sums, as in blocks8: sum((q - 8) a) = sum(q a) - 8 sum(a);
        // with VNNI Q8_0's 128 (pack_q8) the same way.
        if constexpr (K == Gemm8Kind::kQ4_0)
          isum[t] = _mm256_sub_epi32(isum[t], _mm256_slli_epi32(_mm256_set1_epi32(y[t].sum[b]), 3));
        if constexpr (K == Gemm8Kind::kQ5_0)  // Q5_0's 16 the same way
          isum[t] = _mm256_sub_epi32(isum[t], _mm256_slli_epi32(_mm256_set1_epi32(y[t].sum[b]), 4));
        if constexpr (K == Gemm8Kind::kQ8_0 && kGemm8Vnni)
          isum[t] = _mm256_sub_epi32(isum[t], _mm256_slli_epi32(_mm256_set1_epi32(y[t].sum[b]), 7));
        f[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(xd, _mm256_set1_ps(y[t].d[b])), f[t]);
      }
      if constexpr (kMin) {
        const __m256 xm = _mm256_load_ps(tile.m + 8 * b);
        for (int t = 0; t < T; ++t) fm[t] = _mm256_fmadd_ps(xm, _mm256_set1_ps(y[t].s[b]), fm[t]);
      }
    }
    for (int t = 0; t < T; ++t) {
      acc[k][t] = f[t];
      macc[k][t] = fm[t];
    }
  }
  for (int t = 0; t < T; ++t) {
    __m256 v[8];
    for (int k = 0; k < 8; ++k) v[k] = _mm256_add_ps(acc[k][t], macc[k][t]);
    out[t] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(v[4], v[0]), _mm256_add_ps(v[6], v[2])),
                           _mm256_add_ps(_mm256_add_ps(v[5], v[1]), _mm256_add_ps(v[7], v[3])));
  }
}

template <Gemm8Kind K, class Block>
inline void gemm8_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                          std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / kQK;
  // Rows past n_rows repeat the last row (their lanes are computed and dropped).
  const Block* rows[8];
  for (int r = 0; r < 8; ++r) {
    rows[r] = reinterpret_cast<const Block*>(static_cast<const std::uint8_t*>(w) +
                                             static_cast<std::size_t>(std::min(r, n_rows - 1)) * w_stride);
  }
  const Gemm8Tile tile = gemm8_tile(scratch, nb);
  for (std::int64_t b = 0; b < nb; ++b) {
    pack_codes<K>(rows, b, tile.codes + 8 * b);
    halves_of_rows(
        rows, b, [](const Block& v) { return v.d; }, tile.d + 8 * b);
    if constexpr (gemm8_has_min(K))
      halves_of_rows(
          rows, b, [](const Block& v) { return v.m; }, tile.m + 8 * b);
  }
  const auto* act = static_cast<const std::uint8_t*>(a);
  const auto store = [&](std::int64_t t, __m256 v) {
    float* dst = y + t * y_stride;
    if (n_rows == 8) {
      _mm256_storeu_ps(dst, v);
    } else {
      alignas(32) float o[8];
      _mm256_store_ps(o, v);
      for (int r = 0; r < n_rows; ++r) dst[r] = o[r];
    }
  };
  const auto group = [&]<int T>(std::int64_t t0) {
    Q8_0SplitRow ys[T];
    for (int t = 0; t < T; ++t) ys[t] = q8_0_split_row(act + static_cast<std::size_t>(t0 + t) * a_stride, n);
    __m256 out[T];
    gemm8_tokens<K, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) store(t0 + t, out[t]);
  };
  for_token_groups(n_tok, group);
}

[[maybe_unused]] void gemm8_q4_0_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                         std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                         std::int64_t y_stride, void* scratch) {
  gemm8_blocks8<Gemm8Kind::kQ4_0, BlockQ4_0>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm8_q4_1_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                         std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                         std::int64_t y_stride, void* scratch) {
  gemm8_blocks8<Gemm8Kind::kQ4_1, BlockQ4_1>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm8_q5_0_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                         std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                         std::int64_t y_stride, void* scratch) {
  gemm8_blocks8<Gemm8Kind::kQ5_0, BlockQ5_0>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm8_q5_1_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                         std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                         std::int64_t y_stride, void* scratch) {
  gemm8_blocks8<Gemm8Kind::kQ5_1, BlockQ5_1>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm8_q8_0_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                         std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                         std::int64_t y_stride, void* scratch) {
  gemm8_blocks8<Gemm8Kind::kQ8_0, BlockQ8_0>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}

}  // namespace
}  // namespace wisp::kernels::x86
