// The prefill GEMMs of wisp's codebook order (MultiDot::gemm8): up to 8 weight rows (AVX2) or 16
// (AVX-512 with VNNI) against every token of a batch, each output bit-identical to the one-token
// kernel of the type (codebook8_dots-inl.h, scalar form dot_codebook8.cpp). Compiled per ISA like
// blocks8_gemm-inl.h and kquant_super8_gemm-inl.h, whose layouts these follow.
//
// The rows' codes go through the codebook once per call, into a scratch tile of signed value bytes
// (`gemm8_scratch_bytes`, freed by the caller after the chunk, so no second resident copy of the
// weights), interleaved so that row r sits in int32 lane r: vector c holds values 4c .. 4c + 3 of
// every row, an activation dword broadcast serves all the rows, and the block sums come out one per
// lane with no horizontal reduction.
//  - IQ4_NL, MXFP4: a block decoded through its codebook is a Q8_0 block with the block's scale, so
//    the tile is blocks8's Q8_0 tile (pack_q8: with VNNI the values stored offset by 128) with the
//    scales as floats, and the token loops are blocks8's Q8_0 ones (gemm8_tokens, gemm16_tokens).
//  - IQ4_XS: per super-block the 8 sub-block scales (sc - 32) sit beside the values. AVX2: each
//    dword's maddubs pair sums (|w| times a with w's sign, <= 2 * 127 * 127: exact for activation
//    codes in [-127, 127], the quantizer's range) go to int32 through one madd by the sub-block's
//    scale pair. AVX-512: the values offset by 128 as unsigned bytes, one vpdpbusd per dword and
//    token into a chain per sub-block, one int32 multiply by the scale per sub-block, and the
//    offset's share (128 times the scale-weighted activation sums, from Q8_K's bsums) taken out
//    once per super-block. Both give S_b exactly.
//
// Same numerics: the integers are exact in any grouping; per output the float operations are the
// one-token kernel's, lane k of its accumulator (blocks or super-blocks k, k + 8, ...) as its own
// register, and hsum8's tree as vertical adds of the 8.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/multi_dots.h"
#include "kernels/x86/blocks8_gemm-inl.h"
#include "kernels/x86/blocks8_gemm16-inl.h"
#include "kernels/x86/nonlinear_dots-inl.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// Row pointers of a chunk: rows past n_rows repeat the last row (their lanes are computed and dropped).
template <class Block, int R>
inline void chunk_rows(const void* w, std::size_t w_stride, int n_rows, const Block* (&rows)[R]) {
  for (int r = 0; r < R; ++r) {
    rows[r] = reinterpret_cast<const Block*>(static_cast<const std::uint8_t*>(w) +
                                             static_cast<std::size_t>(std::min(r, n_rows - 1)) * w_stride);
  }
}

// Block b of R rows of a 32-value codebook type decoded into Q8_0 blocks (the values as codes) and
// their scales as floats.
template <class Block, int R>
inline void decode_codebook_rows(const Block* const (&rows)[R], std::int64_t b, __m256i lut, BlockQ8_0 (&q)[R],
                                 const BlockQ8_0* (&qp)[R], float* d) {
  for (int r = 0; r < R; ++r) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q[r].qs), iq4_values(rows[r][b].qs, lut));
    qp[r] = &q[r];
    d[r] = block_scale(rows[r][b]);
  }
}

template <class Block>
inline void gemm8_codebook(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                           std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / kQK;
  const Block* rows[8];
  chunk_rows(w, w_stride, n_rows, rows);
  const __m256i lut = codebook<Block>();
  const Gemm8Tile tile = gemm8_tile(scratch, nb);
  for (std::int64_t b = 0; b < nb; ++b) {
    BlockQ8_0 q[8];
    const BlockQ8_0* qp[8];
    decode_codebook_rows(rows, b, lut, q, qp, tile.d + 8 * b);
    pack_q8(qp, 0, tile.codes + 8 * b);
  }
  const auto* act = static_cast<const std::uint8_t*>(a);
  const auto group = [&]<int T>(std::int64_t t0) {
    Q8_0SplitRow ys[T];
    for (int t = 0; t < T; ++t) ys[t] = q8_0_split_row(act + static_cast<std::size_t>(t0 + t) * a_stride, n);
    __m256 out[T];
    gemm8_tokens<Gemm8Kind::kQ8_0, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) {
      alignas(32) float o[8];
      _mm256_store_ps(o, out[t]);
      std::memcpy(y + (t0 + t) * y_stride, o, sizeof(float) * static_cast<std::size_t>(n_rows));
    }
  };
  for_token_groups(n_tok, group);
}

[[maybe_unused]] void gemm8_iq4_nl_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                           std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                           std::int64_t y_stride, void* scratch) {
  gemm8_codebook<BlockIQ4_NL>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm8_mxfp4_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                          std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                          std::int64_t y_stride, void* scratch) {
  gemm8_codebook<BlockMXFP4>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}

// IQ4_XS sub-block j's scale, without its bias of 32.
inline int iq4_xs_sub_scale(const BlockIQ4_XS& x, int j) {
  return (((x.scales_l[j / 2] >> (4 * (j % 2))) & 0x0f) | (((x.scales_h >> (2 * j)) & 3) << 4)) - 32;
}

// The 256 codebook values of a super-block as signed bytes in value order.
inline void iq4_xs_values(const BlockIQ4_XS& x, __m256i lut, std::int8_t* out) {
  for (int j = 0; j < 8; ++j)
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + 32 * j), iq4_values(x.qs + 16 * j, lut));
}

// The values of super-block b of 8 rows interleaved (vector c: values 4c .. 4c + 3 of each row, row r
// in lane r), each byte XOR `flip`.
inline void pack_xs_codes8(const BlockIQ4_XS* const (&rows)[8], std::int64_t b, __m256i lut, __m256i flip,
                           __m256i* out) {
  alignas(32) std::int8_t v[8][kQK_K];
  for (int r = 0; r < 8; ++r) iq4_xs_values(rows[r][b], lut, v[r]);
  for (int g = 0; g < 16; ++g) {  // 16 bytes (4 dwords) of every row at a time
    __m256i t[4];
    transpose4(pair16(v[0] + 16 * g, v[4] + 16 * g), pair16(v[1] + 16 * g, v[5] + 16 * g),
               pair16(v[2] + 16 * g, v[6] + 16 * g), pair16(v[3] + 16 * g, v[7] + 16 * g), t);
    for (int i = 0; i < 4; ++i) _mm256_store_si256(out + 4 * g + i, _mm256_xor_si256(t[i], flip));
  }
}

// One super-block of 8 rows in the AVX2 tile.
struct XsTile8 {
  __m256i codes[64];  // signed values
  __m256i scales[8];  // sub-block j's scale in both int16 halves of each lane
  float d[8];
};
static_assert(sizeof(XsTile8) <= kQK_K / 32 * 384, "gemm8_scratch_bytes covers an IQ4_XS tile");

inline void pack_xs8(const BlockIQ4_XS* const (&rows)[8], std::int64_t b, __m256i lut, XsTile8& t) {
  pack_xs_codes8(rows, b, lut, _mm256_setzero_si256(), t.codes);
  auto* sc = reinterpret_cast<std::int16_t*>(t.scales);
  for (int r = 0; r < 8; ++r) {
    for (int j = 0; j < 8; ++j)
      sc[16 * j + 2 * r] = sc[16 * j + 2 * r + 1] = static_cast<std::int16_t>(iq4_xs_sub_scale(rows[r][b], j));
    t.d[r] = h2f(rows[r][b].d);
  }
}

// The exact S_b of the tile's 8 rows with T tokens' super-blocks y[t] (one int32 per row).
template <int T>
inline void xs_sums8(const XsTile8& tile, const BlockQ8_K* const (&y)[T], __m256i (&S)[T]) {
  for (int t = 0; t < T; ++t) S[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
  for (int j = 0; j < 8; ++j) {
    const __m256i scj = _mm256_load_si256(tile.scales + j);
    for (int c = 8 * j; c < 8 * j + 8; ++c) {
      const __m256i wv = _mm256_load_si256(tile.codes + c);
      const __m256i aw = _mm256_sign_epi8(wv, wv);
      for (int t = 0; t < T; ++t) {
        const __m256i p = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(bcast4(y[t]->qs + 4 * c), wv));
        S[t] = _mm256_add_epi32(S[t], _mm256_madd_epi16(p, scj));
      }
    }
  }
}

template <int T>
inline void xs_gemm8_tokens(const XsTile8* tile, std::int64_t nb, const BlockQ8_K* const (&ys)[T], __m256 (&out)[T]) {
  __m256 v[8][T];
  for (int k = 0; k < 8; ++k) {
    __m256 f[T];
    for (int t = 0; t < T; ++t) f[t] = _mm256_setzero_ps();
    for (std::int64_t b = k; b < nb; b += 8) {
      const BlockQ8_K* y[T];
      for (int t = 0; t < T; ++t) y[t] = ys[t] + b;
      __m256i s[T];
      xs_sums8<T>(tile[b], y, s);
      const __m256 xd = _mm256_load_ps(tile[b].d);
      for (int t = 0; t < T; ++t)
        f[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[t]), _mm256_mul_ps(xd, _mm256_set1_ps(y[t]->d)), f[t]);
    }
    for (int t = 0; t < T; ++t) v[k][t] = f[t];
  }
  for (int t = 0; t < T; ++t) {
    out[t] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(v[4][t], v[0][t]), _mm256_add_ps(v[6][t], v[2][t])),
                           _mm256_add_ps(_mm256_add_ps(v[5][t], v[1][t]), _mm256_add_ps(v[7][t], v[3][t])));
  }
}

[[maybe_unused]] void gemm8_iq4_xs_super8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                          std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                          std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / kQK_K;
  const BlockIQ4_XS* rows[8];
  chunk_rows(w, w_stride, n_rows, rows);
  const __m256i lut = codebook<BlockIQ4_NL>();
  auto* tile = reinterpret_cast<XsTile8*>((reinterpret_cast<std::uintptr_t>(scratch) + 31) & ~std::uintptr_t{31});
  for (std::int64_t b = 0; b < nb; ++b) pack_xs8(rows, b, lut, tile[b]);
  const auto* act = static_cast<const std::uint8_t*>(a);
  const auto group = [&]<int T>(std::int64_t t0) {
    const BlockQ8_K* ys[T];
    for (int t = 0; t < T; ++t)
      ys[t] = reinterpret_cast<const BlockQ8_K*>(act + static_cast<std::size_t>(t0 + t) * a_stride);
    __m256 out[T];
    xs_gemm8_tokens<T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) {
      alignas(32) float o[8];
      _mm256_store_ps(o, out[t]);
      std::memcpy(y + (t0 + t) * y_stride, o, sizeof(float) * static_cast<std::size_t>(n_rows));
    }
  };
  for_token_groups(n_tok, group);
}

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)

// 16 rows: the 8-row tiles of rows 0..7 and 8..15 side by side in the halves of each zmm.
inline __m512i join16(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_zextsi256_si512(lo), hi, 1); }

template <class Block>
inline void gemm16_codebook(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                            std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / kQK;
  const Block* rows[16];
  chunk_rows(w, w_stride, n_rows, rows);
  const __m256i lut = codebook<Block>();
  const Gemm16Tile tile = gemm16_tile(scratch, nb);
  for (std::int64_t b = 0; b < nb; ++b) {
    BlockQ8_0 q[16];
    const BlockQ8_0* qp[16];
    decode_codebook_rows(rows, b, lut, q, qp, tile.d + 16 * b);
    const BlockQ8_0* const(&lo)[8] = *reinterpret_cast<const BlockQ8_0* const(*)[8]>(&qp[0]);
    const BlockQ8_0* const(&hi)[8] = *reinterpret_cast<const BlockQ8_0* const(*)[8]>(&qp[8]);
    alignas(32) __m256i l[8], h[8];
    pack_q8(lo, 0, l);
    pack_q8(hi, 0, h);
    for (int c = 0; c < 8; ++c) _mm512_store_si512(tile.codes + 8 * b + c, join16(l[c], h[c]));
  }
  const auto* act = static_cast<const std::uint8_t*>(a);
  const __mmask16 keep = static_cast<__mmask16>((1u << n_rows) - 1);
  const auto group = [&]<int T>(std::int64_t t0) {
    Q8_0SplitRow ys[T];
    for (int t = 0; t < T; ++t) ys[t] = q8_0_split_row(act + static_cast<std::size_t>(t0 + t) * a_stride, n);
    __m512 out[T];
    gemm16_tokens<Gemm8Kind::kQ8_0, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * y_stride, keep, out[t]);
  };
  for_token_groups(n_tok, group);
}

[[maybe_unused]] void gemm16_iq4_nl_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                            std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                            std::int64_t y_stride, void* scratch) {
  gemm16_codebook<BlockIQ4_NL>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm16_mxfp4_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                           std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                           std::int64_t y_stride, void* scratch) {
  gemm16_codebook<BlockMXFP4>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}

// One super-block of 16 rows in the AVX-512 tile.
struct XsTile16 {
  __m512i codes[64];  // values + 128, unsigned
  __m512i scales[8];  // sub-block j's scale as int32 per lane
  __m512i pairs[4];   // sub-blocks 2i, 2i + 1's scales as the int16 pair of each lane
  float d[16];
};
static_assert(sizeof(XsTile16) <= 2 * (kQK_K / 32 * 384), "gemm8_scratch_bytes(n, 16) covers an IQ4_XS tile");

inline void pack_xs16(const BlockIQ4_XS* const (&rows)[16], std::int64_t b, __m256i lut, XsTile16& t) {
  const BlockIQ4_XS* const(&lo)[8] = *reinterpret_cast<const BlockIQ4_XS* const(*)[8]>(&rows[0]);
  const BlockIQ4_XS* const(&hi)[8] = *reinterpret_cast<const BlockIQ4_XS* const(*)[8]>(&rows[8]);
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80));
  alignas(32) __m256i l[64], h[64];
  pack_xs_codes8(lo, b, lut, flip, l);
  pack_xs_codes8(hi, b, lut, flip, h);
  for (int c = 0; c < 64; ++c) _mm512_store_si512(t.codes + c, join16(l[c], h[c]));
  auto* sc = reinterpret_cast<std::int32_t*>(t.scales);
  auto* pr = reinterpret_cast<std::int16_t*>(t.pairs);
  for (int r = 0; r < 16; ++r) {
    for (int j = 0; j < 8; ++j) {
      sc[16 * j + r] = iq4_xs_sub_scale(rows[r][b], j);
      pr[32 * (j / 2) + 2 * r + j % 2] = static_cast<std::int16_t>(sc[16 * j + r]);
    }
    t.d[r] = h2f(rows[r][b].d);
  }
}

// The exact S_b of the tile's 16 rows with T tokens' super-blocks. With the values offset by 128,
// S_b = sum_j sc_j P_j - 128 sum_j sc_j A_j, P_j sub-block j's vpdpbusd sum of (w + 128) a and A_j
// its activation sum (Q8_K's bsums). Two sub-blocks at a time, each one chain of 8 vpdpbusd per
// token (16 chains for 8 tokens, gemm16_token_groups: each code vector loaded once for all of
// them, the activation dword as vpdpbusd's broadcast operand, dpbusd_bcast), then one int32
// multiply by its scale into one sum per token; the second term once per super-block: 4 vpdpwssd
// of the scale pairs by the pairs of A_j. Every intermediate is within int32 (|P_j| <= 32 x 255 x
// 128, |sc_j| <= 32), and the integers are exact in any grouping.
template <int T>
inline void xs_sums16(const XsTile16& tile, const BlockQ8_K* const (&y)[T], __m512i (&S)[T]) {
  for (int t = 0; t < T; ++t) S[t] = _mm512_setzero_si512();
#pragma GCC unroll 1
  for (int j = 0; j < 8; j += 2) {
    const __m512i* codes = tile.codes + 8 * j;
    __m512i p0[T], p1[T];
    for (int t = 0; t < T; ++t) p0[t] = p1[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int c = 0; c < 8; ++c) {
      const __m512i w0 = _mm512_load_si512(codes + c), w1 = _mm512_load_si512(codes + 8 + c);
      for (int t = 0; t < T; ++t) {
        const std::int8_t* a = y[t]->qs + 32 * j + 4 * c;
        p0[t] = dpbusd_bcast(p0[t], w0, a);
        p1[t] = dpbusd_bcast(p1[t], w1, a + 32);
      }
    }
    const __m512i sc0 = _mm512_load_si512(tile.scales + j), sc1 = _mm512_load_si512(tile.scales + j + 1);
    for (int t = 0; t < T; ++t)
      S[t] = _mm512_add_epi32(S[t], _mm512_add_epi32(_mm512_mullo_epi32(p0[t], sc0), _mm512_mullo_epi32(p1[t], sc1)));
  }
  for (int t = 0; t < T; ++t) {
    // A_j = bsums[2j] + bsums[2j + 1] (|A_j| <= 32 x 128: int16); dword i holds A_2i, A_2i+1.
    alignas(16) std::int32_t apair[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(apair), _mm_hadd_epi16(load16(y[t]->bsums), load16(y[t]->bsums + 8)));
    __m512i m = _mm512_setzero_si512();
    for (int i = 0; i < 4; ++i)
      m = _mm512_dpwssd_epi32(m, _mm512_load_si512(tile.pairs + i), _mm512_set1_epi32(apair[i]));
    S[t] = _mm512_sub_epi32(S[t], _mm512_slli_epi32(m, 7));
  }
}

template <int T>
inline void xs_gemm16_tokens(const XsTile16* tile, std::int64_t nb, const BlockQ8_K* const (&ys)[T], __m512 (&out)[T]) {
  // Lane chain k's value per token goes to memory as it finishes, and hsum8's tree is built from
  // there at the end: kept in registers beside the chains (12 more zmm for 4 tokens, 24 for 8), g++ spilled
  // the vpdpbusd chains instead, a store per multiply-add.
  alignas(64) float v[8][T][16];
  for (int k = 0; k < 8; ++k) {
    __m512 f[T];
    for (int t = 0; t < T; ++t) f[t] = _mm512_setzero_ps();
    for (std::int64_t b = k; b < nb; b += 8) {
      const BlockQ8_K* y[T];
      for (int t = 0; t < T; ++t) y[t] = ys[t] + b;
      __m512i s[T];
      xs_sums16<T>(tile[b], y, s);
      const __m512 xd = _mm512_load_ps(tile[b].d);
      for (int t = 0; t < T; ++t)
        f[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s[t]), _mm512_mul_ps(xd, _mm512_set1_ps(y[t]->d)), f[t]);
    }
    for (int t = 0; t < T; ++t) _mm512_store_ps(v[k][t], f[t]);
  }
  for (int t = 0; t < T; ++t) {
    const auto at = [&](int k) { return _mm512_load_ps(v[k][t]); };
    out[t] = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(at(4), at(0)), _mm512_add_ps(at(6), at(2))),
                           _mm512_add_ps(_mm512_add_ps(at(5), at(1)), _mm512_add_ps(at(7), at(3))));
  }
}

[[maybe_unused]] void gemm16_iq4_xs_super8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                           std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                           std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / kQK_K;
  const BlockIQ4_XS* rows[16];
  chunk_rows(w, w_stride, n_rows, rows);
  const __m256i lut = codebook<BlockIQ4_NL>();
  auto* tile = reinterpret_cast<XsTile16*>((reinterpret_cast<std::uintptr_t>(scratch) + 63) & ~std::uintptr_t{63});
  for (std::int64_t b = 0; b < nb; ++b) pack_xs16(rows, b, lut, tile[b]);
  const auto* act = static_cast<const std::uint8_t*>(a);
  const __mmask16 keep = static_cast<__mmask16>((1u << n_rows) - 1);
  const auto group = [&]<int T>(std::int64_t t0) {
    const BlockQ8_K* ys[T];
    for (int t = 0; t < T; ++t)
      ys[t] = reinterpret_cast<const BlockQ8_K*>(act + static_cast<std::size_t>(t0 + t) * a_stride);
    __m512 out[T];
    xs_gemm16_tokens<T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * y_stride, keep, out[t]);
  };
  gemm16_token_groups(n_tok, group);
}

#endif

}  // namespace
}  // namespace wisp::kernels::x86
