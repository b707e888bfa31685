// The prefill GEMMs of wisp's WQ integer order (MultiDot::gemm8): 8 weight rows in the int32 lanes
// of a ymm (AVX2: maddubs), 16 rows in a zmm with AVX-512 VNNI (vpdpbusd), each output
// bit-identical to the one-token kernel dot_wq_blocks8 (wq_blocks8_dots-inl.h), so batch invariance
// holds.
//
// Per call the rows' codes are unpacked once (wq_codes32, as the one-token kernel) and transposed
// into a scratch tile (per 32-value block b: vector c holds activation positions 4c .. 4c + 3 of
// every row, row r in int32 lane r), with each row's group scale as a float and its zero-point as
// -z in the low int16 of the row's lane (0 above), so one madd (AVX2) or vpdpwssd (VNNI) by the
// broadcast activation code sum takes z sum(a) out of the chain: the integer isum_b comes out one
// per lane, exact in any grouping. The float steps are the one-token kernel's: lane chain k = b %
// 8 is acc = fma(float(isum_b), s * d_b, acc) over blocks k, k + 8, ... in order, and hsum8's tree
// becomes vertical adds of the 8 chains, ((a4 + a0) + (a6 + a2)) + ((a5 + a1) + (a7 + a3)).
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/x86/blocks8_gemm-inl.h"
#include "kernels/x86/blocks8_gemm16-inl.h"
#include "kernels/x86/wq_blocks8_dots-inl.h"

namespace wisp::kernels::x86 {
namespace {

// How many code dwords' maddubs pair sums add in int16 before widening (AVX2): pairs of b-bit codes
// with activation codes in [-127, 127] are <= 2 (2^b - 1) 127 (b = 8: |q - 128| <= 128), so
// b <= 4: 8 dwords (<= 30480), b = 5: 4 (<= 31496), b = 6: 2 (<= 32004), b = 8: 1 (<= 32512).
template <int B>
constexpr int kWqInt16Dwords = B <= 4   ? 8
                               : B == 5 ? 4
                               : B == 6 ? 2
                                        : 1;

// One row's tile entries of group g: its 32-value blocks' codes (as the one-token kernel unpacks
// them, xor 0x80 where kWqSigned) into v[k] for run k, its scale, its -z' in the low int16.
template <int B, int G>
inline void wq_row_group(const std::uint8_t* row, std::int64_t g, __m256i* v, float* s, std::int32_t* negz) {
  constexpr std::int64_t kBlock = static_cast<std::int64_t>(wq_block_bytes(B, G));
  const std::uint8_t* gb = row + g * kBlock;
  std::uint16_t h;
  std::memcpy(&h, gb, 2);
  *s = _cvtsh_ss(h);
  *negz = static_cast<std::int32_t>(static_cast<std::uint16_t>(static_cast<std::int16_t>(kWqZeroShift<B> - gb[2])));
  wq_static_for<G / 32>([&](auto kc) {
    constexpr int k = decltype(kc)::value;
    const __m256i q = wq_codes32<B, G, k>(gb + kWqHeaderBytes);
    v[k] = kWqSigned<B> ? _mm256_xor_si256(q, _mm256_set1_epi8(static_cast<char>(0x80))) : q;
  });
}

// 8 rows' 32 code bytes (row r in v[r]) transposed into 8 vectors: out[c] dword r = row r's codes
// 4c .. 4c + 3.
inline void wq_transpose8(const __m256i (&v)[8], __m256i* out) {
  __m256i t[4];
  transpose4(_mm256_permute2x128_si256(v[0], v[4], 0x20), _mm256_permute2x128_si256(v[1], v[5], 0x20),
             _mm256_permute2x128_si256(v[2], v[6], 0x20), _mm256_permute2x128_si256(v[3], v[7], 0x20), t);
  for (int i = 0; i < 4; ++i) out[i] = t[i];
  transpose4(_mm256_permute2x128_si256(v[0], v[4], 0x31), _mm256_permute2x128_si256(v[1], v[5], 0x31),
             _mm256_permute2x128_si256(v[2], v[6], 0x31), _mm256_permute2x128_si256(v[3], v[7], 0x31), t);
  for (int i = 0; i < 4; ++i) out[4 + i] = t[i];
}

// The tile of R rows (8 or 16): codes [nb][8] vectors of R dwords, scales [nb][R], -z [nb][R].
struct WqTile {
  std::uint8_t* codes;
  float* s;
  std::int32_t* negz;
};

template <int R>
inline WqTile wq_tile(void* scratch, std::int64_t nb) {
  auto* base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch) + 63) & ~std::uintptr_t{63});
  auto* s = reinterpret_cast<float*>(base + nb * 8 * 4 * R);
  return {base, s, reinterpret_cast<std::int32_t*>(s + nb * R)};
}

// Packs rows [8h, 8h + 8) of R into the tile (their dword lanes 8h .. 8h + 7).
template <int B, int G, int R>
inline void wq_pack8(const std::uint8_t* const* rows, int h, std::int64_t nb, const WqTile& tile) {
  constexpr int kRuns = G / 32;
  for (std::int64_t g = 0; g < nb / kRuns; ++g) {
    __m256i v[kRuns][8];
    for (int r = 0; r < 8; ++r) {
      __m256i vr[kRuns];
      const std::int64_t b = g * kRuns;
      float s;
      std::int32_t nz;
      wq_row_group<B, G>(rows[8 * h + r], g, vr, &s, &nz);
      for (int k = 0; k < kRuns; ++k) {
        v[k][r] = vr[k];
        tile.s[(b + k) * R + 8 * h + r] = s;
        tile.negz[(b + k) * R + 8 * h + r] = nz;
      }
    }
    for (int k = 0; k < kRuns; ++k) {
      __m256i t[8];
      wq_transpose8(v[k], t);
      for (int c = 0; c < 8; ++c) {
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(tile.codes + (((g * kRuns + k) * 8 + c) * R + 8 * h) * 4), t[c]);
      }
    }
  }
}

// T tokens against 8 packed rows (AVX2; VNNI in ymm where the bundle has it).
template <int B, int T>
inline void wq_gemm8_tokens(const WqTile& tile, std::int64_t nb, const Q8_0SplitRow (&y)[T], __m256 (&out)[T]) {
  constexpr int kOrder[8] = {0, 4, 2, 6, 1, 5, 3, 7};
  constexpr int kC = kWqInt16Dwords<B>;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256 pair[T], quad[T], half[T];
  for (int i = 0; i < 8; ++i) {
    const int k = kOrder[i];
    __m256 f[T];
    for (int t = 0; t < T; ++t) f[t] = _mm256_setzero_ps();
    for (std::int64_t b = k; b < nb; b += 8) {
      const auto* codes = reinterpret_cast<const __m256i*>(tile.codes + b * 8 * 32);
      const __m256i negz = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile.negz + b * 8));
      __m256i isum[T];
      for (int t = 0; t < T; ++t) isum[t] = _mm256_madd_epi16(negz, _mm256_set1_epi32(y[t].sum[b]));
      for (int c0 = 0; c0 < 8; c0 += kC) {
        __m256i p16[T];
        for (int c = c0; c < c0 + kC; ++c) {
          const __m256i wv = _mm256_loadu_si256(codes + c);
          for (int t = 0; t < T; ++t) {
            const __m256i av = bcast4(y[t].qs + b * 32 + 4 * c);
            if constexpr (kWqVnni) {
              isum[t] = _mm256_dpbusd_epi32(isum[t], wv, av);
            } else {
              const __m256i pr = kWqSigned<B> ? _mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(av, wv))
                                              : _mm256_maddubs_epi16(wv, av);
              p16[t] = c == c0 ? pr : _mm256_add_epi16(p16[t], pr);
            }
          }
        }
        if constexpr (!kWqVnni) {
          for (int t = 0; t < T; ++t) isum[t] = _mm256_add_epi32(isum[t], _mm256_madd_epi16(p16[t], ones));
        }
      }
      const __m256 xs = _mm256_loadu_ps(tile.s + b * 8);
      for (int t = 0; t < T; ++t)
        f[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[t]), _mm256_mul_ps(xs, _mm256_set1_ps(y[t].d[b])), f[t]);
    }
    for (int t = 0; t < T; ++t) {
      if (i % 2 == 0) {
        pair[t] = f[t];
        continue;
      }
      const __m256 p = _mm256_add_ps(f[t], pair[t]);
      if (i % 4 == 1) {
        quad[t] = p;
      } else {
        const __m256 q = _mm256_add_ps(quad[t], p);
        if (i == 3) {
          half[t] = q;
        } else {
          out[t] = _mm256_add_ps(half[t], q);
        }
      }
    }
  }
}

template <int R>
inline void wq_rows_of(const void* w, std::size_t w_stride, int n_rows, const std::uint8_t* (&rows)[R]) {
  // Rows past n_rows repeat the last row (their lanes are computed and dropped).
  for (int r = 0; r < R; ++r)
    rows[r] = static_cast<const std::uint8_t*>(w) + static_cast<std::size_t>(std::min(r, n_rows - 1)) * w_stride;
}

template <int B, int G>
[[maybe_unused]] void gemm8_wq_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                       std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                       std::int64_t y_stride, void* scratch) {
  const std::int64_t nb = n / 32;
  const std::uint8_t* rows[8];
  wq_rows_of<8>(w, w_stride, n_rows, rows);
  const WqTile tile = wq_tile<8>(scratch, nb);
  wq_pack8<B, G, 8>(rows, 0, nb, tile);
  const auto* act = static_cast<const std::uint8_t*>(a);
  const auto group = [&]<int T>(std::int64_t t0) {
    Q8_0SplitRow ys[T];
    for (int t = 0; t < T; ++t) ys[t] = q8_0_split_row(act + static_cast<std::size_t>(t0 + t) * a_stride, n);
    __m256 out[T];
    wq_gemm8_tokens<B, T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) {
      alignas(32) float o[8];
      _mm256_store_ps(o, out[t]);
      std::copy(o, o + n_rows, y + (t0 + t) * y_stride);
    }
  };
  for_token_groups(n_tok, group);
}

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)

// T tokens against 16 packed rows with VNNI: vpdpbusd per code dword, vpdpwssd for -z sum(a).
// The loop of gemm16_tokens (blocks8_gemm16-inl.h): up to kGemm16Tokens tokens share each loaded
// code vector, and the activation dword is vpdpbusd's {1to16} operand.
template <int T>
inline void wq_gemm16_tokens(const WqTile& tile, std::int64_t nb, const Q8_0SplitRow (&y)[T], __m512 (&out)[T]) {
  __m512 v[8][T];
  for (int k = 0; k < 8; ++k) {
    __m512 f[T];
    for (int t = 0; t < T; ++t) f[t] = _mm512_setzero_ps();
    for (std::int64_t b = k; b < nb; b += 8) {
      const auto* codes = reinterpret_cast<const __m512i*>(tile.codes + b * 8 * 64);
      const __m512i negz = _mm512_load_si512(tile.negz + b * 16);
      __m512i s[2][T];
      for (int t = 0; t < T; ++t) {
        s[0][t] = _mm512_dpwssd_epi32(_mm512_setzero_si512(), negz, _mm512_set1_epi32(y[t].sum[b]));
        s[1][t] = _mm512_setzero_si512();
      }
      for (int c = 0; c < 8; ++c) {
        const __m512i wc = _mm512_load_si512(codes + c);
        for (int t = 0; t < T; ++t) s[c % 2][t] = dpbusd_bcast(s[c % 2][t], wc, y[t].qs + b * 32 + 4 * c);
      }
      const __m512 xs = _mm512_load_ps(tile.s + b * 16);
      for (int t = 0; t < T; ++t) {
        const __m512 isum = _mm512_cvtepi32_ps(_mm512_add_epi32(s[0][t], s[1][t]));
        f[t] = _mm512_fmadd_ps(isum, _mm512_mul_ps(xs, _mm512_set1_ps(y[t].d[b])), f[t]);
      }
    }
    for (int t = 0; t < T; ++t) v[k][t] = f[t];
  }
  for (int t = 0; t < T; ++t)
    out[t] = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(v[4][t], v[0][t]), _mm512_add_ps(v[6][t], v[2][t])),
                           _mm512_add_ps(_mm512_add_ps(v[5][t], v[1][t]), _mm512_add_ps(v[7][t], v[3][t])));
}

template <int B, int G>
[[maybe_unused]] void gemm16_wq_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a,
                                        std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y,
                                        std::int64_t y_stride, void* scratch) {
  static_assert(kWqVnni && !kWqSigned<B>);
  const std::int64_t nb = n / 32;
  const std::uint8_t* rows[16];
  wq_rows_of<16>(w, w_stride, n_rows, rows);
  const WqTile tile = wq_tile<16>(scratch, nb);
  wq_pack8<B, G, 16>(rows, 0, nb, tile);
  wq_pack8<B, G, 16>(rows, 1, nb, tile);
  const auto* act = static_cast<const std::uint8_t*>(a);
  const __mmask16 keep = static_cast<__mmask16>((1u << n_rows) - 1);
  const auto group = [&]<int T>(std::int64_t t0) {
    Q8_0SplitRow ys[T];
    for (int t = 0; t < T; ++t) ys[t] = q8_0_split_row(act + static_cast<std::size_t>(t0 + t) * a_stride, n);
    __m512 out[T];
    wq_gemm16_tokens<T>(tile, nb, ys, out);
    for (int t = 0; t < T; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * y_stride, keep, out[t]);
  };
  gemm16_token_groups(n_tok, group);
}

#endif

}  // namespace
}  // namespace wisp::kernels::x86
