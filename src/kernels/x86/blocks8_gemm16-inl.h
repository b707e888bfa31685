// The blocks8 prefill GEMM on AVX-512 with VNNI: 16 weight rows in the 16 int32 lanes of a zmm
// (MultiDot::gemm8 with gemm_rows = 16), each output bit-identical to the one-token kernel
// dot_q*_blocks8 (blocks8_dots-inl.h), as blocks8_gemm-inl.h's 8-row form is.
//
// Why 16 rows: per block and token the 8-row form spends 8 vpdpbusd on 8 rows and about six more
// vector operations (convert, scale product, FMA, Q4_0's offset) on ports 0 and 1, which bound it
// (measured ~36 multiply-adds per cycle on the earlier host, bench/RESULTS.md). Here the same
// instruction count covers 16 rows, the activation dword is a broadcast load, and the float work
// can also run on port 5.
//
// On the Zen 5 class host (cpu family 26; bench/RESULTS.md, note of 2026-12-04) vpdpbusd zmm
// issues 2 per cycle, but on the same two pipes as vmulps and vfmadd231ps (16 vpdpbusd + 2 vmulps
// + 2 FMAs: 10 cycles), while the convert, vpaddd and the broadcasts use other pipes. Per block and
// token the loop needs 8 vpdpbusd + 1 vmulps + 1 FMA there, a bound of 80% of the vpdpbusd peak;
// what is left to save is instructions: the activation dword is vpdpbusd's own {1to16} operand
// (dpbusd_bcast) and 8 tokens share each loaded code vector (kGemm16Tokens).
//
// Same numerics: the tile holds the 8-row form's codes for rows 0..7 and 8..15 side by side
// (Q8_0's offset by 128, Q4_0's 8 and Q5_0's 16 taken out through the activation sums: exact integers in any
// grouping, here the offset is the chain's starting value), and per output lane k = b % 8 of
// blocks8's accumulator is the chain over blocks k, k + 8, ... in order, acc = fma(float(isum_b),
// d_x * d_y, acc) (and macc = fma(m_x, s_y, macc)); hsum8(acc + macc) becomes the same tree of
// vertical adds, ((a4 + a0) + (a6 + a2)) + ((a5 + a1) + (a7 + a3)), built as the chains finish.
#pragma once

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/x86/blocks8_gemm-inl.h"

namespace wisp::kernels::x86 {
namespace {

// Per block b: 8 code vectors (vector c: activation positions 4c .. 4c + 3 of all 16 rows, row r
// in int32 lane r), the 16 rows' d and, for types with a minimum, m as floats.
struct Gemm16Tile {
  __m512i* codes;  // [nb][8]
  float* d;        // [nb][16]
  float* m;        // [nb][16]
};

inline Gemm16Tile gemm16_tile(void* scratch, std::int64_t nb) {
  auto* base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch) + 63) & ~std::uintptr_t{63});
  auto* codes = reinterpret_cast<__m512i*>(base);
  auto* d = reinterpret_cast<float*>(codes + nb * 8);
  return {codes, d, d + nb * 16};
}

template <Gemm8Kind K, class Block>
inline void pack16(const Block* const (&rows)[16], std::int64_t b, const Gemm16Tile& tile) {
  const Block* const(&lo)[8] = *reinterpret_cast<const Block* const(*)[8]>(&rows[0]);
  const Block* const(&hi)[8] = *reinterpret_cast<const Block* const(*)[8]>(&rows[8]);
  alignas(32) __m256i l[8], h[8];
  pack_codes<K>(lo, b, l);
  pack_codes<K>(hi, b, h);
  for (int c = 0; c < 8; ++c)
    _mm512_store_si512(tile.codes + 8 * b + c, _mm512_inserti64x4(_mm512_castsi256_si512(l[c]), h[c], 1));
  halves_of_rows(
      lo, b, [](const Block& v) { return v.d; }, tile.d + 16 * b);
  halves_of_rows(
      hi, b, [](const Block& v) { return v.d; }, tile.d + 16 * b + 8);
  if constexpr (gemm8_has_min(K)) {
    halves_of_rows(
        lo, b, [](const Block& v) { return v.m; }, tile.m + 16 * b);
    halves_of_rows(
        hi, b, [](const Block& v) { return v.m; }, tile.m + 16 * b + 8);
  }
}

// One dword of activation codes broadcast to the 16 lanes.
inline __m512i bcast4x16(const std::int8_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// acc + the 4-byte products of w's 16 lanes (unsigned) with the dword at p (signed) broadcast.
// g++ 12 does not fold _mm512_set1_epi32 of a load into vpdpbusd's {1to16} memory operand and
// issues a vpbroadcastd per dword; that one costs no multiply-pipe slot on the Zen 5 class host,
// but one more instruction per vpdpbusd (measured with 6 tokens: 2-6% slower through the
// intrinsic).
inline __m512i dpbusd_bcast(__m512i acc, __m512i w, const std::int8_t* p) {
#if defined(__GNUC__) && !defined(__clang__)
  using Dword = std::int32_t __attribute__((may_alias));
  __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*reinterpret_cast<const Dword*>(p)));
  return acc;
#else
  return _mm512_dpbusd_epi32(acc, w, bcast4x16(p));
#endif
}

// The most tokens one gemm16_tokens call takes (gemm16_token_groups). Measured on the Zen 5 class
// host (bench_blocks8_gemm, Q4_0, 1B shape): 8 tokens with two chains each beat 4 by ~5%; 6 and 5
// fall between; one chain per token (latency 4 x 8 vpdpbusd per block) is a little slower.
constexpr int kGemm16Tokens = 8;

// T tokens against the packed 16 rows: out[t] = the 16 rows' outputs. The code vectors of a block
// are loaded once and used by all T tokens (c outer, t inner); two vpdpbusd chains per token and
// block (even and odd dwords) keep 2T chains in flight against vpdpbusd's latency of 4 cycles.
template <Gemm8Kind K, int T>
inline void gemm16_tokens(const Gemm16Tile& tile, std::int64_t nb, const Q8_0SplitRow (&y)[T], __m512 (&out)[T]) {
  constexpr bool kMin = gemm8_has_min(K);
  // The offset the stored codes carry (Q4_0: 8, Q5_0: 16, Q8_0: 128 as 1 << shift), or none.
  constexpr int kShift = K == Gemm8Kind::kQ4_0 ? 3 : K == Gemm8Kind::kQ5_0 ? 4 : K == Gemm8Kind::kQ8_0 ? 7 : -1;
  // v[k][t]: lane chain k's value for token t (acc + macc of blocks8's lane k).
  __m512 v[8][T];
  for (int k = 0; k < 8; ++k) {
    __m512 f[T], fm[T];
    for (int t = 0; t < T; ++t) f[t] = fm[t] = _mm512_setzero_ps();
    for (std::int64_t b = k; b < nb; b += 8) {
      __m512i s[2][T];
      for (int t = 0; t < T; ++t) {
        s[0][t] = kShift >= 0 ? _mm512_set1_epi32(-(y[t].sum[b] << (kShift < 0 ? 0 : kShift))) : _mm512_setzero_si512();
        s[1][t] = _mm512_setzero_si512();
      }
      const __m512i* codes = tile.codes + 8 * b;
      for (int c = 0; c < 8; ++c) {
        const __m512i wc = _mm512_load_si512(codes + c);
        for (int t = 0; t < T; ++t) s[c % 2][t] = dpbusd_bcast(s[c % 2][t], wc, y[t].qs + b * kQK + 4 * c);
      }
      const __m512 xd = _mm512_load_ps(tile.d + 16 * b);
      for (int t = 0; t < T; ++t) {
        const __m512 isum = _mm512_cvtepi32_ps(_mm512_add_epi32(s[0][t], s[1][t]));
        f[t] = _mm512_fmadd_ps(isum, _mm512_mul_ps(xd, _mm512_set1_ps(y[t].d[b])), f[t]);
      }
      if constexpr (kMin) {
        const __m512 xm = _mm512_load_ps(tile.m + 16 * b);
        for (int t = 0; t < T; ++t) fm[t] = _mm512_fmadd_ps(xm, _mm512_set1_ps(y[t].s[b]), fm[t]);
      }
    }
    for (int t = 0; t < T; ++t) v[k][t] = _mm512_add_ps(f[t], fm[t]);
  }
  for (int t = 0; t < T; ++t)
    out[t] = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(v[4][t], v[0][t]), _mm512_add_ps(v[6][t], v[2][t])),
                           _mm512_add_ps(_mm512_add_ps(v[5][t], v[1][t]), _mm512_add_ps(v[7][t], v[3][t])));
}

// The 16-row GEMMs' token loop: for_token_groups's, in groups of kGemm16Tokens, then one group of
// the 1 .. kGemm16Tokens - 1 left.
template <int T, class Group>
inline void gemm16_last_group(std::int64_t left, std::int64_t t0, const Group& group) {
  if constexpr (T > 0) {
    if (left == T) {
      group.template operator()<T>(t0);
    } else {
      gemm16_last_group<T - 1>(left, t0, group);
    }
  }
}
template <class Group>
inline void gemm16_token_groups(std::int64_t n_tok, const Group& group) {
  std::int64_t t = 0;
  for (; t + kGemm16Tokens <= n_tok; t += kGemm16Tokens) group.template operator()<kGemm16Tokens>(t);
  gemm16_last_group<kGemm16Tokens - 1>(n_tok - t, t, group);
}

template <Gemm8Kind K, class Block>
inline void gemm16_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                           std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / kQK;
  // Rows past n_rows repeat the last row (their lanes are computed and dropped).
  const Block* rows[16];
  for (int r = 0; r < 16; ++r) {
    rows[r] = reinterpret_cast<const Block*>(static_cast<const std::uint8_t*>(w) +
                                             static_cast<std::size_t>(std::min(r, n_rows - 1)) * w_stride);
  }
  const Gemm16Tile tile = gemm16_tile(scratch, nb);
  for (std::int64_t b = 0; b < nb; ++b) pack16<K>(rows, b, tile);
  const auto* act = static_cast<const std::uint8_t*>(a);
  const __mmask16 keep = static_cast<__mmask16>((1u << n_rows) - 1);
  const auto group = [&]<int T>(std::int64_t t0) {
    Q8_0SplitRow ys[T];
    for (int t = 0; t < T; ++t) ys[t] = q8_0_split_row(act + static_cast<std::size_t>(t0 + t) * a_stride, n);
    __m512 out[T];
    gemm16_tokens<K, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * y_stride, keep, out[t]);
  };
  gemm16_token_groups(n_tok, group);
}

[[maybe_unused]] void gemm16_q4_0_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                          std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                          std::int64_t y_stride, void* scratch) {
  gemm16_blocks8<Gemm8Kind::kQ4_0, BlockQ4_0>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm16_q4_1_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                          std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                          std::int64_t y_stride, void* scratch) {
  gemm16_blocks8<Gemm8Kind::kQ4_1, BlockQ4_1>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm16_q5_0_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                          std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                          std::int64_t y_stride, void* scratch) {
  gemm16_blocks8<Gemm8Kind::kQ5_0, BlockQ5_0>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm16_q5_1_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                          std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                          std::int64_t y_stride, void* scratch) {
  gemm16_blocks8<Gemm8Kind::kQ5_1, BlockQ5_1>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm16_q8_0_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                          std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                          std::int64_t y_stride, void* scratch) {
  gemm16_blocks8<Gemm8Kind::kQ8_0, BlockQ8_0>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}

}  // namespace
}  // namespace wisp::kernels::x86

#endif
