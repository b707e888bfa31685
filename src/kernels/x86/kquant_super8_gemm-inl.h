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
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// One super-block of the 8 rows in the scratch tile.
struct KTile {
  __m256i codes[64];   // vector c: unsigned codes 4c .. 4c + 3 of each row (row r in lane r)
  __m256i scales[16];  // sub-block j's scale in both int16 halves of each lane
  __m256i pairs[8];    // Q4_K: minimums (2i, 2i + 1) as int16 pairs; Q6_K: scales (2i, 2i + 1)
  float d[8];
  float dmin[8];
};
static_assert(sizeof(KTile) <= kQK_K / 32 * 384, "gemm8_scratch_bytes covers a K-quant tile");

enum class KGemm { kQ4_K, kQ6_K };

// The 256 unsigned codes of super-block x as bytes in value order (Q4_K: 0..15; Q6_K: q + 32, 0..63).
inline void codes_of(const BlockQ4_K& x, std::uint8_t* out) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  for (int c = 0; c < 4; ++c) {
    const __m256i q = load32(x.qs + 32 * c);
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + 64 * c), _mm256_and_si256(q, m4));
    _mm256_store_si256(reinterpret_cast<__m256i*>(out + 64 * c + 32), _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
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
    for (int k = 0; k < 4; ++k) _mm256_store_si256(reinterpret_cast<__m256i*>(out + 128 * h + 32 * k), c[k]);
  }
}

// Super-block b of the 8 rows into the tile.
template <KGemm K, class Block>
inline void pack_k(const Block* const (&rows)[8], std::int64_t b, KTile& t) {
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
    if constexpr (K == KGemm::kQ4_K) {
      int s[8], m[8];
      unpack_k_scale_min(x.scales, s, m);
      for (int j = 0; j < 8; ++j) sc[16 * j + 2 * r] = sc[16 * j + 2 * r + 1] = static_cast<std::int16_t>(s[j]);
      for (int j = 0; j < 8; ++j) pr[16 * (j / 2) + 2 * r + j % 2] = static_cast<std::int16_t>(m[j]);
      t.dmin[r] = h2f(x.dmin);
    } else {
      for (int j = 0; j < 16; ++j) {
        sc[16 * j + 2 * r] = sc[16 * j + 2 * r + 1] = x.scales[j];
        pr[16 * (j / 2) + 2 * r + j % 2] = x.scales[j];
      }
      t.dmin[r] = 0.0f;
    }
    t.d[r] = h2f(x.d);
  }
}

inline __m256i bcast_pair(const std::int16_t* p) {
  std::int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// The exact S_b and M_b of the tile's 8 rows with T tokens' super-blocks y[t] (one int32 per row).
// Q4_K: maddubs pairs (<= 2 * 15 * 127) added in int16 over a 32-value sub-block (16 of them,
// <= 30480 < 2^15), then one madd by the scale (<= 63). Q6_K: pairs <= 2 * 63 * 127 = 16002, two
// added in int16 (<= 32004) before each madd by the signed scale; the offset 32 through the
// activation sums: sum(sc (q - 32) a) = sum(sc q a) - 32 sum(sc bsum).
template <KGemm K, int T>
inline void k_block_sums(const KTile& tile, const BlockQ8_K* const (&y)[T], __m256i (&s_out)[T], __m256i (&m_out)[T]) {
  __m256i S[T];
  for (int t = 0; t < T; ++t) S[t] = _mm256_setzero_si256();
  if constexpr (K == KGemm::kQ4_K) {
#pragma GCC unroll 1
    for (int j = 0; j < 8; ++j) {
      __m256i s[T];
      for (int t = 0; t < T; ++t) s[t] = _mm256_setzero_si256();
#pragma GCC unroll 1
      for (int c = 8 * j; c < 8 * j + 8; c += 2) {
        const __m256i w0 = _mm256_load_si256(tile.codes + c), w1 = _mm256_load_si256(tile.codes + c + 1);
        for (int t = 0; t < T; ++t) {
          const __m256i p0 = _mm256_maddubs_epi16(w0, bcast4(y[t]->qs + 4 * c));
          const __m256i p1 = _mm256_maddubs_epi16(w1, bcast4(y[t]->qs + 4 * c + 4));
          s[t] = _mm256_add_epi16(s[t], _mm256_add_epi16(p0, p1));
        }
      }
      const __m256i scj = _mm256_load_si256(tile.scales + j);
      for (int t = 0; t < T; ++t) S[t] = _mm256_add_epi32(S[t], _mm256_madd_epi16(s[t], scj));
    }
    for (int t = 0; t < T; ++t) {
      // The 32-value activation sums: bsums (per 16) added in pairs (<= 32 * 127, exact in int16).
      alignas(16) std::int16_t a32[8];
      _mm_store_si128(reinterpret_cast<__m128i*>(a32), _mm_hadd_epi16(load16(y[t]->bsums), load16(y[t]->bsums + 8)));
      __m256i m = _mm256_setzero_si256();
      for (int i = 0; i < 4; ++i)
        m = _mm256_add_epi32(m, _mm256_madd_epi16(_mm256_load_si256(tile.pairs + i), bcast_pair(a32 + 2 * i)));
      m_out[t] = m;
      s_out[t] = S[t];
    }
  } else {
#pragma GCC unroll 1
    for (int j = 0; j < 16; ++j) {
      const int c = 4 * j;
      const __m256i w0 = _mm256_load_si256(tile.codes + c), w1 = _mm256_load_si256(tile.codes + c + 1);
      const __m256i w2 = _mm256_load_si256(tile.codes + c + 2), w3 = _mm256_load_si256(tile.codes + c + 3);
      const __m256i scj = _mm256_load_si256(tile.scales + j);
      for (int t = 0; t < T; ++t) {
        const std::int8_t* a = y[t]->qs + 4 * c;
        const __m256i s01 =
            _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast4(a)), _mm256_maddubs_epi16(w1, bcast4(a + 4)));
        const __m256i s23 =
            _mm256_add_epi16(_mm256_maddubs_epi16(w2, bcast4(a + 8)), _mm256_maddubs_epi16(w3, bcast4(a + 12)));
        S[t] = _mm256_add_epi32(S[t], _mm256_add_epi32(_mm256_madd_epi16(s01, scj), _mm256_madd_epi16(s23, scj)));
      }
    }
    for (int t = 0; t < T; ++t) {
      __m256i off = _mm256_setzero_si256();
      for (int i = 0; i < 8; ++i)
        off = _mm256_add_epi32(off, _mm256_madd_epi16(_mm256_load_si256(tile.pairs + i), bcast_pair(y[t]->bsums + 2 * i)));
      s_out[t] = _mm256_sub_epi32(S[t], _mm256_slli_epi32(off, 5));
      m_out[t] = _mm256_setzero_si256();
    }
  }
}

// T tokens (ys[t] their activation rows) against the tile's nb super-blocks: out[t] = the 8 rows'
// outputs.
template <KGemm K, int T>
inline void k_gemm8_tokens(const KTile* tile, std::int64_t nb, const BlockQ8_K* const (&ys)[T], __m256 (&out)[T]) {
  constexpr bool kMin = K == KGemm::kQ4_K;
  __m256 v[8][T];
  for (int k = 0; k < 8; ++k) {
    __m256 f[T], fm[T];
    for (int t = 0; t < T; ++t) f[t] = fm[t] = _mm256_setzero_ps();
    for (std::int64_t b = k; b < nb; b += 8) {
      const BlockQ8_K* y[T];
      for (int t = 0; t < T; ++t) y[t] = ys[t] + b;
      __m256i s[T], m[T];
      k_block_sums<K, T>(tile[b], y, s, m);
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

template <KGemm K, class Block>
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
  for (std::int64_t b = 0; b < nb; ++b) pack_k<K>(rows, b, tile[b]);
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
    k_gemm8_tokens<K, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) store(t0 + t, out[t]);
  };
  std::int64_t t = 0;
  for (; t + 4 <= n_tok; t += 4) group.template operator()<4>(t);
  switch (n_tok - t) {
    case 3: group.template operator()<3>(t); break;
    case 2: group.template operator()<2>(t); break;
    case 1: group.template operator()<1>(t); break;
    default: break;
  }
}

[[maybe_unused]] void gemm8_q4_k_super8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                        std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                        std::int64_t y_stride, void* scratch) {
  k_gemm8<KGemm::kQ4_K, BlockQ4_K>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}
[[maybe_unused]] void gemm8_q6_k_super8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                        std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                        std::int64_t y_stride, void* scratch) {
  k_gemm8<KGemm::kQ6_K, BlockQ6_K>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride, scratch);
}

}  // namespace
}  // namespace wisp::kernels::x86
