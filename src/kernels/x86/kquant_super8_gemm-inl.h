// The prefill GEMM of wisp's K-quant order (MultiDot::gemm8): up to 8 weight rows against every
// token of a batch, each output bit-identical to the one-token kernel dot_q*_k_super8
// (kquant_super8_dots-inl.h, scalar form dot_kquant_super8.cpp). Compiled per ISA like
// blocks8_gemm-inl.h, whose layout this follows.
//
// The 8 rows sit in the 8 int32 lanes of a vector: per super-block their codes are unpacked to
// bytes and interleaved once per call into a scratch tile (vector c: values 4c .. 4c + 3 of every
// row, row r in lane r; `gemm8_scratch_bytes`, freed by the caller after the chunk, so no second
// resident copy of the weights), with each sub-block's scale as an int16 pair per lane. An
// activation dword broadcast serves all 8 rows; maddubs pair sums are added in int16 within a
// sub-block, one madd by the scale pair takes them to int32, and S_b comes out one per lane with
// no horizontal reduction; M_b (and Q6_K's offset term) is one madd per two sub-blocks of the
// minimum (scale) pairs with the activation's code sums.
//
// Same numerics: the integers are exact in any grouping; per output the float operations are
// super8's, lane k of its accumulators (super-blocks k, k + 8, ...) as its own register and
// hsum8's tree as vertical adds of the 8, as in blocks8_gemm-inl.h.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/kquant_unpack.h"
#include "kernels/multi_dots.h"
#include "kernels/x86/blocks8_gemm-inl.h"
#include "kernels/x86/kquant_dots-inl.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// One super-block of the 8 rows in the scratch tile.
struct KTile {
  __m256i codes[64];   // vector c: unsigned codes 4c .. 4c + 3 of each row (row r in lane r)
  __m256i scales[16];  // sub-block j's scale in both int16 halves of each lane
  // int16 pairs (2i, 2i + 1) per lane of the factors of the activation-sum term: the minimums
  // (Q2_K, Q4_K, Q5_K) or, for the types whose codes carry an offset (Q3_K, Q6_K), the scales.
  __m256i pairs[8];
  float d[8];
  float dmin[8];
};
static_assert(sizeof(KTile) <= kQK_K / 32 * 384, "gemm8_scratch_bytes covers a K-quant tile");

// What differs between the K-quants in the GEMM: the sub-block count, how many code dwords are
// added in int16 before the madd by the scale (the int16 bound: dwords x 2 x the largest code x
// 128 < 2^15), and the activation-sum term: per 32 values (4 pairs) or per 16 (8), taken as the
// minimums' M_b (kMin) or as the offset of unsigned codes subtracted from S_b.
template <class Block>
struct KTraits;
template <>
struct KTraits<BlockQ2_K> {
  static constexpr int kSub = 16, kGroup = 4, kPairs = 8, kOffset = 0;  // codes <= 3
  static constexpr bool kMin = true;
};
template <>
struct KTraits<BlockQ3_K> {
  static constexpr int kSub = 16, kGroup = 4, kPairs = 8, kOffset = 4;  // codes + 4 <= 7
  static constexpr bool kMin = false;
};
template <>
struct KTraits<BlockQ4_K> {
  static constexpr int kSub = 8, kGroup = 8, kPairs = 4, kOffset = 0;  // codes <= 15: 8 x 3840
  static constexpr bool kMin = true;
};
template <>
struct KTraits<BlockQ5_K> {
  static constexpr int kSub = 8, kGroup = 4, kPairs = 4, kOffset = 0;  // codes <= 31: 4 x 7936
  static constexpr bool kMin = true;
};
template <>
struct KTraits<BlockQ6_K> {
  static constexpr int kSub = 16, kGroup = 2, kPairs = 8, kOffset = 32;  // codes + 32 <= 63: 2 x 16128
  static constexpr bool kMin = false;
};

inline void store32(std::uint8_t* out, __m256i v) { _mm256_store_si256(reinterpret_cast<__m256i*>(out), v); }

// The 256 unsigned codes of super-block x as bytes in value order (the signed code plus the
// type's offset), and its sub-block scales and activation-sum factors (minimums or scales).
inline void codes_of(const BlockQ2_K& x, std::uint8_t* out) {
  const __m256i m3 = _mm256_set1_epi8(3);
  for (int h = 0; h < 2; ++h) {
    const __m256i bits = load32(x.qs + 32 * h);
    for (int s = 0; s < 4; ++s) store32(out + 128 * h + 32 * s, _mm256_and_si256(_mm256_srli_epi16(bits, 2 * s), m3));
  }
}
inline void codes_of(const BlockQ3_K& x, std::uint8_t* out) {
  const __m256i m3 = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
  const __m256i hbits = load32(x.hmask);
  for (int h = 0; h < 2; ++h) {
    const __m256i bits = load32(x.qs + 32 * h);
    for (int s = 0; s < 4; ++s) {
      const int chunk = 4 * h + s;
      const __m256i bit = _mm256_set1_epi8(static_cast<char>(1u << chunk));
      const __m256i lo = _mm256_and_si256(_mm256_srli_epi16(bits, 2 * s), m3);
      // + 4 where the hmask bit is set (the code is then lo; where clear lo - 4).
      const __m256i hi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, bit), bit), four);
      store32(out + 32 * chunk, _mm256_or_si256(lo, hi));
    }
  }
}
inline void codes_of(const BlockQ4_K& x, std::uint8_t* out) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  for (int c = 0; c < 4; ++c) {
    const __m256i q = load32(x.qs + 32 * c);
    store32(out + 64 * c, _mm256_and_si256(q, m4));
    store32(out + 64 * c + 32, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
  }
}
inline void codes_of(const BlockQ5_K& x, std::uint8_t* out) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi8(1);
  const __m256i hv = load32(x.qh);
  for (int c = 0; c < 4; ++c) {
    const __m256i q = load32(x.qs + 32 * c);
    // Bit 2c (low nibbles) and 2c + 1 (high nibbles) of qh[l] as the fifth bit (16-bit shifts:
    // the mask keeps each byte's own bit).
    const __m256i h0 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hv, 2 * c), one), 4);
    const __m256i h1 = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hv, 2 * c + 1), one), 4);
    store32(out + 64 * c, _mm256_or_si256(_mm256_and_si256(q, m4), h0));
    store32(out + 64 * c + 32, _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), h1));
  }
}
inline void codes_of(const BlockQ6_K& x, std::uint8_t* out) {
  const __m256i m4 = _mm256_set1_epi8(0x0f), m2 = _mm256_set1_epi8(0x30);
  for (int h = 0; h < 2; ++h) {
    const __m256i qa = load32(x.ql + 64 * h), qb = load32(x.ql + 64 * h + 32), hv = load32(x.qh + 32 * h);
    const __m256i c[4] = {
        _mm256_or_si256(_mm256_and_si256(qa, m4), _mm256_and_si256(_mm256_slli_epi16(hv, 4), m2)),
        _mm256_or_si256(_mm256_and_si256(qb, m4), _mm256_and_si256(_mm256_slli_epi16(hv, 2), m2)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qa, 4), m4), _mm256_and_si256(hv, m2)),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qb, 4), m4), _mm256_and_si256(_mm256_srli_epi16(hv, 2), m2)),
    };
    for (int k = 0; k < 4; ++k) store32(out + 128 * h + 32 * k, c[k]);
  }
}

// Sub-block scales and the activation-sum factors (minimums, or the scales again), as ints.
inline void factors_of(const BlockQ2_K& x, int* sc, int* f) {
  for (int j = 0; j < 16; ++j) {
    sc[j] = x.scales[j] & 0x0f;
    f[j] = x.scales[j] >> 4;
  }
}
inline void factors_of(const BlockQ3_K& x, int* sc, int* f) {
  short s[16];
  q3k_scales(x.scales, s);
  for (int j = 0; j < 16; ++j) sc[j] = f[j] = s[j];
}
inline void factors_of(const BlockQ4_K& x, int* sc, int* f) { unpack_k_scale_min(x.scales, sc, f); }
inline void factors_of(const BlockQ5_K& x, int* sc, int* f) { unpack_k_scale_min(x.scales, sc, f); }
inline void factors_of(const BlockQ6_K& x, int* sc, int* f) {
  for (int j = 0; j < 16; ++j) sc[j] = f[j] = x.scales[j];
}

// Super-block b of the 8 rows into the tile.
template <class Block>
inline void pack_k(const Block* const (&rows)[8], std::int64_t b, KTile& t) {
  using Tr = KTraits<Block>;
  alignas(32) std::uint8_t codes[8][kQK_K];
  for (int r = 0; r < 8; ++r) codes_of(rows[r][b], codes[r]);
  for (int g = 0; g < 16; ++g) {  // 16 bytes (4 dwords) of every row at a time
    __m256i v[4];
    transpose4(pair16(codes[0] + 16 * g, codes[4] + 16 * g), pair16(codes[1] + 16 * g, codes[5] + 16 * g),
               pair16(codes[2] + 16 * g, codes[6] + 16 * g), pair16(codes[3] + 16 * g, codes[7] + 16 * g), v);
    for (int i = 0; i < 4; ++i) _mm256_store_si256(t.codes + 4 * g + i, v[i]);
  }
  auto* sc = reinterpret_cast<std::int16_t*>(t.scales);
  auto* pr = reinterpret_cast<std::int16_t*>(t.pairs);
  for (int r = 0; r < 8; ++r) {
    const Block& x = rows[r][b];
    int s[16], f[16];
    factors_of(x, s, f);
    for (int j = 0; j < Tr::kSub; ++j) sc[16 * j + 2 * r] = sc[16 * j + 2 * r + 1] = static_cast<std::int16_t>(s[j]);
    for (int j = 0; j < 2 * Tr::kPairs; ++j) pr[16 * (j / 2) + 2 * r + j % 2] = static_cast<std::int16_t>(f[j]);
    t.d[r] = h2f(x.d);
    if constexpr (Tr::kMin) {
      t.dmin[r] = h2f(x.dmin);
    } else {
      t.dmin[r] = 0.0f;
    }
  }
}

inline __m256i bcast_pair(const std::int16_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// The exact S_b and M_b of the tile's 8 rows with T tokens' super-blocks y[t] (one int32 per row):
// per sub-block, maddubs pair sums of kGroup code dwords added in int16 (within 2^15: KTraits),
// then madd by the scale pair to int32; the activation-sum term as one madd per factor pair with
// the activation's code sums (per 32 values: bsums added in pairs, <= 32 * 128, exact in int16).
// The offset of the unsigned codes leaves through it: sum(sc (q - o) a) = sum(sc q a) - o sum(sc bsum).
template <class Block, int T>
inline void k_block_sums(const KTile& tile, const BlockQ8_K* const (&y)[T], __m256i (&s_out)[T], __m256i (&m_out)[T]) {
  using Tr = KTraits<Block>;
  constexpr int kDw = 64 / Tr::kSub;  // code dwords per sub-block
  __m256i S[T];
  for (int t = 0; t < T; ++t) S[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
  for (int j = 0; j < Tr::kSub; ++j) {
    const __m256i scj = _mm256_load_si256(tile.scales + j);
    for (int g = kDw * j; g < kDw * j + kDw; g += Tr::kGroup) {
      // Two dwords per step, each step's pair added before it joins the int16 chain.
      __m256i s[T];
      for (int t = 0; t < T; ++t) s[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
      for (int c = g; c < g + Tr::kGroup; c += 2) {
        const __m256i w0 = _mm256_load_si256(tile.codes + c), w1 = _mm256_load_si256(tile.codes + c + 1);
        for (int t = 0; t < T; ++t) {
          const __m256i p0 = _mm256_maddubs_epi16(w0, bcast4(y[t]->qs + 4 * c));
          const __m256i p1 = _mm256_maddubs_epi16(w1, bcast4(y[t]->qs + 4 * c + 4));
          s[t] = _mm256_add_epi16(s[t], _mm256_add_epi16(p0, p1));
        }
      }
      for (int t = 0; t < T; ++t) S[t] = _mm256_add_epi32(S[t], _mm256_madd_epi16(s[t], scj));
    }
  }
  for (int t = 0; t < T; ++t) {
    alignas(16) std::int16_t a32[8];
    const std::int16_t* asum = y[t]->bsums;
    if constexpr (Tr::kPairs == 4) {
      _mm_store_si128(reinterpret_cast<__m128i*>(a32), _mm_hadd_epi16(load16(y[t]->bsums), load16(y[t]->bsums + 8)));
      asum = a32;
    }
    __m256i p = _mm256_setzero_si256();
    for (int i = 0; i < Tr::kPairs; ++i)
      p = _mm256_add_epi32(p, _mm256_madd_epi16(_mm256_load_si256(tile.pairs + i), bcast_pair(asum + 2 * i)));
    if constexpr (Tr::kMin) {
      s_out[t] = S[t];
      m_out[t] = p;
    } else {
      s_out[t] = _mm256_sub_epi32(S[t], _mm256_mullo_epi32(p, _mm256_set1_epi32(Tr::kOffset)));
      m_out[t] = _mm256_setzero_si256();
    }
  }
}

// T tokens (ys[t] their activation rows) against the tile's nb super-blocks: out[t] = the 8 rows'
// outputs.
template <class Block, int T>
inline void k_gemm8_tokens(const KTile* tile, std::int64_t nb, const BlockQ8_K* const (&ys)[T], __m256 (&out)[T]) {
  constexpr bool kMin = KTraits<Block>::kMin;
  __m256 v[8][T];
  for (int k = 0; k < 8; ++k) {
    __m256 f[T], fm[T];
    for (int t = 0; t < T; ++t) f[t] = fm[t] = _mm256_setzero_ps();
    for (std::int64_t b = k; b < nb; b += 8) {
      const BlockQ8_K* y[T];
      for (int t = 0; t < T; ++t) y[t] = ys[t] + b;
      __m256i s[T], m[T];
      k_block_sums<Block, T>(tile[b], y, s, m);
      const __m256 xd = _mm256_load_ps(tile[b].d);
      for (int t = 0; t < T; ++t)
        f[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[t]), _mm256_mul_ps(xd, _mm256_set1_ps(y[t]->d)), f[t]);
      if constexpr (kMin) {
        const __m256 xm = _mm256_load_ps(tile[b].dmin);
        for (int t = 0; t < T; ++t)
          fm[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(m[t]), _mm256_mul_ps(xm, _mm256_set1_ps(y[t]->d)), fm[t]);
      }
    }
    for (int t = 0; t < T; ++t) v[k][t] = _mm256_sub_ps(f[t], fm[t]);
  }
  for (int t = 0; t < T; ++t) {
    out[t] = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(v[4][t], v[0][t]), _mm256_add_ps(v[6][t], v[2][t])),
                           _mm256_add_ps(_mm256_add_ps(v[5][t], v[1][t]), _mm256_add_ps(v[7][t], v[3][t])));
  }
}

template <class Block>
inline void k_gemm8(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                    std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / kQK_K;
  // Rows past n_rows repeat the last row (their lanes are computed and dropped).
  const Block* rows[8];
  for (int r = 0; r < 8; ++r) {
    rows[r] = reinterpret_cast<const Block*>(static_cast<const std::uint8_t*>(w) +
                                             static_cast<std::size_t>(std::min(r, n_rows - 1)) * w_stride);
  }
  auto* tile = reinterpret_cast<KTile*>((reinterpret_cast<std::uintptr_t>(scratch) + 31) & ~std::uintptr_t{31});
  for (std::int64_t b = 0; b < nb; ++b) pack_k(rows, b, tile[b]);
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
    const BlockQ8_K* ys[T];
    for (int t = 0; t < T; ++t)
      ys[t] = reinterpret_cast<const BlockQ8_K*>(act + static_cast<std::size_t>(t0 + t) * a_stride);
    __m256 out[T];
    k_gemm8_tokens<Block, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) store(t0 + t, out[t]);
  };
  for_token_groups(n_tok, group);
}

}  // namespace
}  // namespace wisp::kernels::x86

// The 16-row form, where this ISA has it.
#include "kernels/x86/kquant_super8_gemm16-inl.h"

namespace wisp::kernels::x86 {
namespace {

// The K-quant GEMM this ISA's table lists (MultiDot::gemm8, gemm_rows = kKQuantGemmRows): 16 rows
// in zmm lanes with VNNI on AVX-512 (kquant_super8_gemm16-inl.h), else the 8-row form above.
#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
constexpr int kKQuantGemmRows = 16;
#else
constexpr int kKQuantGemmRows = 8;
#endif

template <class Block>
[[maybe_unused]] void gemm_k_super8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                    std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                    std::int64_t y_stride, void* scratch) {
#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
  k_gemm16<Block>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
#else
  k_gemm8<Block>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
#endif
}

}  // namespace
}  // namespace wisp::kernels::x86
