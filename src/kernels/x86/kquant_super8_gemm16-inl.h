// The K-quant prefill GEMM on AVX-512 with VNNI: 16 weight rows in the 16 int32 lanes of a zmm
// (MultiDot::gemm8 with gemm_rows = 16), each output bit-identical to the one-token kernel
// dot_q*_k_super8 (kquant_super8_dots-inl.h), as kquant_super8_gemm-inl.h's 8-row form is.
// Included by that file when the AVX-512 flags are on.
//
// Why 16 rows and VNNI: per code dword and token the 8-row form spends a broadcast, a maddubs
// and an int16 add on 8 rows, and a madd per sub-block to apply its scale. Here one broadcast
// serves 16 rows, and the products go through vpdpbusd (4 products added into each int32 lane)
// over as many code dwords as keep the partial sum within int16 (`Gemm16Traits::kUnit`: Q4_K 4
// dwords, <= 4 x 4 x 15 x 128 = 30720; Q5_K 2, <= 31744; Q2_K, Q3_K a 16-value sub-block, <= 6144
// / 14336). One vpdpwssd then multiplies the unit's partial by its sub-block's scale, held as the
// low int16 of the lane with 0 above it (the partial's high int16 is its sign, times 0), and adds
// it to S_b in int32: one instruction per unit, no packing. Q6_K's codes (<= 63) leave a single
// dword in int16, so it keeps maddubs: two dwords' pair sums added in int16 (<= 2 x 2 x 63 x 128 =
// 32256), then one vpdpwssd by the scale pair.
//
// Same numerics: the integers are exact in any grouping (vpdpbusd and vpdpwssd do not
// saturate); per output lane k of super8's accumulators (super-blocks k, k + 8, ...) is its own
// chain, acc = fma(float(S_b), d_x * d_y, acc), macc = fma(float(M_b), dmin_x * d_y, macc), and
// hsum8(acc - macc)'s tree ((v4 + v0) + (v6 + v2)) + ((v5 + v1) + (v7 + v3)) is vertical adds
// of the 8 chains, as in kquant_super8_gemm-inl.h.
#pragma once

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/x86/blocks8_gemm16-inl.h"
#include "kernels/x86/kquant_super8_gemm-inl.h"

namespace wisp::kernels::x86 {
namespace {

// One super-block of the 16 rows in the scratch tile (rows 0..7 in the low 256 bits, as the
// 8-row KTile holds them, rows 8..15 in the high).
struct KTile16 {
  __m512i codes[64];   // vector c: unsigned codes 4c .. 4c + 3 of each row (row r in lane r)
  __m512i scales[16];  // sub-block j's scale per lane: an int32 (VNNI units) or an int16 pair (maddubs)
  __m512i pairs[8];    // the activation-sum factors as in KTile
  float d[16];
  float dmin[16];
};
static_assert(sizeof(KTile16) % 64 == 0);
static_assert(sizeof(KTile16) + 64 <= gemm8_scratch_bytes(kQK_K, 16), "gemm8_scratch_bytes covers a 16-row tile");

// kUnit: code dwords whose vpdpbusd sum stays within int16 (0: none, the maddubs form).
template <class Block>
struct Gemm16Traits;
template <>
struct Gemm16Traits<BlockQ2_K> {
  static constexpr int kUnit = 4;
};
template <>
struct Gemm16Traits<BlockQ3_K> {
  static constexpr int kUnit = 4;
};
template <>
struct Gemm16Traits<BlockQ4_K> {
  static constexpr int kUnit = 4;
};
template <>
struct Gemm16Traits<BlockQ5_K> {
  static constexpr int kUnit = 2;
};
template <>
struct Gemm16Traits<BlockQ6_K> {
  static constexpr int kUnit = 0;
};

inline __m512i join(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }

// Super-block b of the 16 rows into the tile: the 8-row form's packing of each half, joined.
template <class Block>
inline void pack_k16(const Block* const (&rows)[16], std::int64_t b, KTile16& t) {
  using G = Gemm16Traits<Block>;
  const Block* const(&lo)[8] = *reinterpret_cast<const Block* const(*)[8]>(&rows[0]);
  const Block* const(&hi)[8] = *reinterpret_cast<const Block* const(*)[8]>(&rows[8]);
  alignas(32) KTile h[2];
  pack_k(lo, b, h[0]);
  pack_k(hi, b, h[1]);
  for (int c = 0; c < 64; ++c) _mm512_store_si512(t.codes + c, join(h[0].codes[c], h[1].codes[c]));
  for (int i = 0; i < 8; ++i) _mm512_store_si512(t.pairs + i, join(h[0].pairs[i], h[1].pairs[i]));
  // Sub-block j's scale: with VNNI units as an int32 lane (the scale's int16 with 0 above it, so
  // vpdpwssd multiplies it by a partial that lies within int16 and adds nothing more), for the
  // maddubs form as KTile's pair.
  const __m256i low16 = _mm256_set1_epi32(G::kUnit > 0 ? 0xffff : -1);
  for (int j = 0; j < KTraits<Block>::kSub; ++j) {
    _mm512_store_si512(t.scales + j,
                       join(_mm256_and_si256(h[0].scales[j], low16), _mm256_and_si256(h[1].scales[j], low16)));
  }
  std::memcpy(t.d, h[0].d, sizeof h[0].d);
  std::memcpy(t.d + 8, h[1].d, sizeof h[1].d);
  std::memcpy(t.dmin, h[0].dmin, sizeof h[0].dmin);
  std::memcpy(t.dmin + 8, h[1].dmin, sizeof h[1].dmin);
}

inline __m512i bcast_pair16(const std::int16_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_set1_epi32(v);
}

// The exact S_b and M_b of the tile's 16 rows with T tokens' super-blocks y[t].
template <class Block, int T>
inline void k16_block_sums(const KTile16& tile, const BlockQ8_K* const (&y)[T], __m512i (&s_out)[T],
                           __m512i (&m_out)[T]) {
  using Tr = KTraits<Block>;
  using G = Gemm16Traits<Block>;
  __m512i S[T];
  for (int t = 0; t < T; ++t) S[t] = _mm512_setzero_si512();
  if constexpr (G::kUnit > 0) {
    constexpr int kU = G::kUnit;
    constexpr int kUnitsPerSub = 64 / Tr::kSub / kU;
    __m512i S1[T];
    for (int t = 0; t < T; ++t) S1[t] = _mm512_setzero_si512();
#pragma GCC unroll 1
    for (int u = 0; u < 64 / kU; u += 2) {  // two units per step, into the chains S and S1
      const __m512i sc0 = _mm512_load_si512(tile.scales + u / kUnitsPerSub);
      const __m512i sc1 = _mm512_load_si512(tile.scales + (u + 1) / kUnitsPerSub);
      const __m512i* codes = tile.codes + kU * u;
      __m512i p0[T], p1[T];
      for (int t = 0; t < T; ++t) p0[t] = p1[t] = _mm512_setzero_si512();
      for (int c = 0; c < kU; ++c) {
        const __m512i w0 = _mm512_load_si512(codes + c), w1 = _mm512_load_si512(codes + kU + c);
        for (int t = 0; t < T; ++t) {
          const std::int8_t* a = y[t]->qs + 4 * (kU * u + c);
          p0[t] = _mm512_dpbusd_epi32(p0[t], w0, bcast4x16(a));
          p1[t] = _mm512_dpbusd_epi32(p1[t], w1, bcast4x16(a + 4 * kU));
        }
      }
      for (int t = 0; t < T; ++t) {
        S[t] = _mm512_dpwssd_epi32(S[t], p0[t], sc0);
        S1[t] = _mm512_dpwssd_epi32(S1[t], p1[t], sc1);
      }
    }
    for (int t = 0; t < T; ++t) S[t] = _mm512_add_epi32(S[t], S1[t]);
  } else {
#pragma GCC unroll 1
    for (int j = 0; j < Tr::kSub; ++j) {
      const __m512i sc = _mm512_load_si512(tile.scales + j);
      const __m512i* codes = tile.codes + 4 * j;
      for (int c = 0; c < 4; c += 2) {
        const __m512i w0 = _mm512_load_si512(codes + c), w1 = _mm512_load_si512(codes + c + 1);
        for (int t = 0; t < T; ++t) {
          const std::int8_t* a = y[t]->qs + 16 * j + 4 * c;
          const __m512i p =
              _mm512_add_epi16(_mm512_maddubs_epi16(w0, bcast4x16(a)), _mm512_maddubs_epi16(w1, bcast4x16(a + 4)));
          S[t] = _mm512_dpwssd_epi32(S[t], p, sc);
        }
      }
    }
  }
  for (int t = 0; t < T; ++t) {
    alignas(16) std::int16_t a32[8];
    const std::int16_t* asum = y[t]->bsums;
    if constexpr (Tr::kPairs == 4) {
      _mm_store_si128(reinterpret_cast<__m128i*>(a32), _mm_hadd_epi16(load16(y[t]->bsums), load16(y[t]->bsums + 8)));
      asum = a32;
    }
    __m512i p = _mm512_setzero_si512();
    for (int i = 0; i < Tr::kPairs; ++i)
      p = _mm512_dpwssd_epi32(p, _mm512_load_si512(tile.pairs + i), bcast_pair16(asum + 2 * i));
    if constexpr (Tr::kMin) {
      s_out[t] = S[t];
      m_out[t] = p;
    } else {
      static_assert(Tr::kOffset == 4 || Tr::kOffset == 32);
      s_out[t] = _mm512_sub_epi32(S[t], _mm512_slli_epi32(p, Tr::kOffset == 4 ? 2 : 5));
      m_out[t] = _mm512_setzero_si512();
    }
  }
}

// T tokens (ys[t] their activation rows) against the tile's nb super-blocks: out[t] = the 16 rows'
// outputs. The tile is walked in order; super-block b's sums join chain b % 8, whose accumulators
// stay in memory (8 x T of each: the registers are the block sums').
template <class Block, int T>
inline void k_gemm16_tokens(const KTile16* tile, std::int64_t nb, const BlockQ8_K* const (&ys)[T], __m512 (&out)[T]) {
  constexpr bool kMin = KTraits<Block>::kMin;
  __m512 f[8][T], fm[8][T];
  for (int k = 0; k < 8; ++k) {
    for (int t = 0; t < T; ++t) f[k][t] = fm[k][t] = _mm512_setzero_ps();
  }
#pragma GCC unroll 1
  for (std::int64_t b = 0; b < nb; ++b) {
    const int k = static_cast<int>(b % 8);
    const BlockQ8_K* y[T];
    for (int t = 0; t < T; ++t) y[t] = ys[t] + b;
    __m512i s[T], m[T];
    k16_block_sums<Block, T>(tile[b], y, s, m);
    const __m512 xd = _mm512_load_ps(tile[b].d);
    for (int t = 0; t < T; ++t)
      f[k][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[t]), _mm512_mul_ps(xd, _mm512_set1_ps(y[t]->d)), f[k][t]);
    if constexpr (kMin) {
      const __m512 xm = _mm512_load_ps(tile[b].dmin);
      for (int t = 0; t < T; ++t)
        fm[k][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(m[t]), _mm512_mul_ps(xm, _mm512_set1_ps(y[t]->d)), fm[k][t]);
    }
  }
  // hsum8(acc - macc)'s tree: ((v4 + v0) + (v6 + v2)) + ((v5 + v1) + (v7 + v3)).
  for (int t = 0; t < T; ++t) {
    __m512 v[8];
    for (int k = 0; k < 8; ++k) v[k] = _mm512_sub_ps(f[k][t], fm[k][t]);
    out[t] = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(v[4], v[0]), _mm512_add_ps(v[6], v[2])),
                           _mm512_add_ps(_mm512_add_ps(v[5], v[1]), _mm512_add_ps(v[7], v[3])));
  }
}

template <class Block>
inline void k_gemm16(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                     std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / kQK_K;
  // Rows past n_rows repeat the last row (their lanes are computed and dropped).
  const Block* rows[16];
  for (int r = 0; r < 16; ++r) {
    rows[r] = reinterpret_cast<const Block*>(static_cast<const std::uint8_t*>(w) +
                                             static_cast<std::size_t>(std::min(r, n_rows - 1)) * w_stride);
  }
  auto* tile = reinterpret_cast<KTile16*>((reinterpret_cast<std::uintptr_t>(scratch) + 63) & ~std::uintptr_t{63});
  for (std::int64_t b = 0; b < nb; ++b) pack_k16(rows, b, tile[b]);
  const auto* act = static_cast<const std::uint8_t*>(a);
  const __mmask16 keep = static_cast<__mmask16>((1u << n_rows) - 1);
  const auto group = [&]<int T>(std::int64_t t0) {
    const BlockQ8_K* ys[T];
    for (int t = 0; t < T; ++t)
      ys[t] = reinterpret_cast<const BlockQ8_K*>(act + static_cast<std::size_t>(t0 + t) * a_stride);
    __m512 out[T];
    k_gemm16_tokens<Block, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * y_stride, keep, out[t]);
  };
  for_token_groups(n_tok, group);
}

}  // namespace
}  // namespace wisp::kernels::x86

#endif
