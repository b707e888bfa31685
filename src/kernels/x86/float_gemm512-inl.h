// wisp's float order (float_tiles-inl.h: element i of a row in lane i % 8 of one 8-lane
// accumulator per output, hsum8 at the end) as AVX-512 register tiles: one zmm holds the
// accumulators of two outputs, rows 2p and 2p + 1 of the same token, in its two 256-bit halves.
// Every lane goes through the one-token kernel's FMAs in its order, and each half is folded by
// the same hsum8, so each output is bit-equal to dot_*_lanes8 (and so batch invariant).
//
// Why a packed tile: a zmm of two rows needs 8 values of each row side by side, and converting
// F16/BF16 costs shuffle-port work per vector that would compete with the FMAs (ports 0 and 5 on
// Sapphire Rapids carry both). The call's rows are converted to f32 and interleaved once per
// pair (16 floats per 8 columns, zero-padded to a multiple of 8 columns and to an even row
// count), so the inner loop is P weight loads, T broadcast loads of 8 activations and P x T FMAs.
// Used for calls of kPackedMinTokens tokens or more (the packing is then a small share); fewer
// tokens run the 256-bit tiles, which give the same bits.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <utility>

#include "kernels/x86/float_tiles-inl.h"

namespace wisp::kernels::x86 {
namespace {

constexpr std::int64_t kPackedMinTokens = 4;

// 8 activations at p in both halves (a pure load).
inline __m512 bcast8(const float* p) {
  return _mm512_castpd_ps(_mm512_broadcast_f64x4(_mm256_loadu_pd(reinterpret_cast<const double*>(p))));
}

// Row pairs [0, P) of a packed tile (pair p at w + p * pair_stride, 16 floats per step) times
// tokens [0, T) (a + t * a_stride), `steps` whole steps of 8 columns, then, when `tail` is not
// null, one more step whose activations are tail[t] (8 zero-padded floats per token). The
// accumulators start from zero, or with `resume` from `state` (16 floats each, in p * T + t
// order), where the rows' earlier column block left them; they go back there unless `last`, else
// each half is folded by hsum8 into y[t * y_stride + 2p + h] for 2p + h < rows. Parking an
// accumulator in memory between blocks keeps its value and so the one-token kernel's order.
template <int P, int T>
void packed_tile(const float* w, std::size_t pair_stride, const float* a, std::size_t a_stride, std::int64_t steps,
                 const float (*tail)[8], float* state, bool resume, bool last, int rows, float* y,
                 std::int64_t y_stride) {
  __m512 acc[P][T];
  for (int p = 0; p < P; ++p) {
    for (int t = 0; t < T; ++t) acc[p][t] = resume ? _mm512_load_ps(state + 16 * (p * T + t)) : _mm512_setzero_ps();
  }
  const auto step = [&](std::int64_t s, const __m512(&av)[T]) {
    for (int p = 0; p < P; ++p) {
      const __m512 wv = _mm512_load_ps(w + p * pair_stride + 16 * s);
      for (int t = 0; t < T; ++t) acc[p][t] = _mm512_fmadd_ps(wv, av[t], acc[p][t]);
    }
  };
  for (std::int64_t s = 0; s < steps; ++s) {
    __m512 av[T];
    for (int t = 0; t < T; ++t) av[t] = bcast8(a + t * a_stride + 8 * s);
    step(s, av);
  }
  if (tail != nullptr) {
    __m512 av[T];
    for (int t = 0; t < T; ++t) av[t] = bcast8(tail[t]);
    step(steps, av);
  }
  for (int p = 0; p < P; ++p) {
    for (int t = 0; t < T; ++t) {
      if (!last) {
        _mm512_store_ps(state + 16 * (p * T + t), acc[p][t]);
        continue;
      }
      float* dst = y + t * y_stride + 2 * p;
      if (2 * p < rows) dst[0] = hsum8(_mm512_castps512_ps256(acc[p][t]));
      if (2 * p + 1 < rows) dst[1] = hsum8(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[p][t]), 1)));
    }
  }
}

using PackedTileFn = void (*)(const float* w, std::size_t pair_stride, const float* a, std::size_t a_stride,
                              std::int64_t steps, const float (*tail)[8], float* state, bool resume, bool last,
                              int rows, float* y, std::int64_t y_stride);

// 4 pairs x 5 tokens: 20 accumulators, 5 activation vectors and a weight vector of the 32 zmm
// registers; 20 FMAs per 4 + 5 loads.
constexpr int kPackedPairs = 4, kPackedToks = 5;
template <int... I>
constexpr auto packed_tiles(std::integer_sequence<int, I...>) {
  return std::array<PackedTileFn, sizeof...(I)>{packed_tile<I / kPackedToks + 1, I % kPackedToks + 1>...};
}
// The tile of p pairs by t tokens: kPackedTiles[(p - 1) * kPackedToks + t - 1].
constexpr auto kPackedTiles = packed_tiles(std::make_integer_sequence<int, kPackedPairs * kPackedToks>{});

// Steps of 8 columns per column block: 2048 columns, so a block of a 64-row call packs to 512 KiB
// (L2) and a token group's 5 activation slices (40 KiB) stay in L1 while the pair groups pass.
// Longer rows (8192 columns: ffn_down) ran ~1.6x faster blocked than whole (bench_float_gemm).
constexpr std::int64_t kPackedBlockSteps = 256;

// Rows [0, n_rows) of columns [8 * s0, 8 * (s0 + steps)) widened and interleaved in pairs at
// `packed` (pair p at packed + p * pair_stride): 16 floats per step, the two rows' 8 values side
// by side, columns past n and the odd row count's missing partner zero.
template <class W>
void pack_pairs(const std::uint8_t* w, std::size_t w_stride, std::int64_t n_rows, std::int64_t n, std::int64_t s0,
                std::int64_t steps, float* packed, std::size_t pair_stride) {
  using E = typename W::Elem;
  const std::int64_t pairs = (n_rows + 1) / 2;
  const std::int64_t whole = std::min(steps, n / 8 - s0);  // steps with 8 real columns
  for (std::int64_t p = 0; p < pairs; ++p) {
    float* dst = packed + p * pair_stride;
    for (int h = 0; h < 2; ++h) {
      const std::int64_t r = 2 * p + h;
      if (r >= n_rows) {  // computed and dropped
        for (std::int64_t s = 0; s < steps; ++s) _mm256_store_ps(dst + 16 * s + 8 * h, _mm256_setzero_ps());
        continue;
      }
      const E* row = reinterpret_cast<const E*>(w + r * w_stride) + 8 * s0;
      for (std::int64_t s = 0; s < whole; ++s) _mm256_store_ps(dst + 16 * s + 8 * h, W::load8(row + 8 * s));
      if (whole < steps) {
        E pad[8] = {};
        std::memcpy(pad, row + 8 * whole, static_cast<std::size_t>(n - 8 * (s0 + whole)) * sizeof(E));
        _mm256_store_ps(dst + 16 * whole + 8 * h, W::load8(pad));
      }
    }
  }
}

// float_gemm's contract (float_gemm.h) on AVX-512, per column block: the block's rows packed in
// pairs, then token groups outside and pair groups inside, so a group's activation slices stay
// in L1 while the packed rows (L2) pass over them; between blocks the accumulators wait in a
// per-tile state array.
template <class W>
void float_gemm512(const std::uint8_t* w, std::size_t w_stride, std::int64_t n_rows, const float* a,
                   std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride) {
  if (n_tok < kPackedMinTokens || n_rows < 2)
    return float_gemm<W>(w, w_stride, n_rows, a, a_stride, n_tok, n, y, y_stride);
  const std::int64_t n8 = n / 8, steps = (n + 7) / 8, pairs = (n_rows + 1) / 2;
  const std::int64_t block = std::min(steps, kPackedBlockSteps);
  const auto pair_stride = static_cast<std::size_t>(block * 16);
  const auto buf = std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(pairs) * pair_stride + 16);
  float* packed = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(buf.get()) + 63) & ~std::uintptr_t{63});
  const std::int64_t groups = (n_tok + kPackedToks - 1) / kPackedToks;
  const std::int64_t pair_groups = (pairs + kPackedPairs - 1) / kPackedPairs;
  constexpr std::size_t kTileFloats = 16 * kPackedPairs * kPackedToks;  // a tile's accumulators
  std::unique_ptr<float[]> state_buf;                                   // only with more than one block
  float* state = nullptr;
  if (block < steps) {
    state_buf =
        std::make_unique_for_overwrite<float[]>(static_cast<std::size_t>(groups * pair_groups) * kTileFloats + 16);
    state = reinterpret_cast<float*>((reinterpret_cast<std::uintptr_t>(state_buf.get()) + 63) & ~std::uintptr_t{63});
  }
  for (std::int64_t s0 = 0; s0 < steps; s0 += block) {
    const std::int64_t bs = std::min(block, steps - s0);
    const bool first = s0 == 0, last = s0 + bs == steps;
    const std::int64_t whole = std::min(bs, n8 - s0);  // the tile's whole steps; a tail step after them
    pack_pairs<W>(w, w_stride, n_rows, n, s0, bs, packed, pair_stride);
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::int64_t t = g * kPackedToks;
      const int tt = static_cast<int>(n_tok - t < kPackedToks ? n_tok - t : kPackedToks);
      alignas(32) float tail[kPackedToks][8] = {};
      if (whole < bs) {
        for (int k = 0; k < tt; ++k)
          std::memcpy(tail[k], a + (t + k) * a_stride + 8 * n8, static_cast<std::size_t>(n - 8 * n8) * sizeof(float));
      }
      for (std::int64_t q = 0; q < pair_groups; ++q) {
        const std::int64_t p = q * kPackedPairs;
        const int pp = static_cast<int>(pairs - p < kPackedPairs ? pairs - p : kPackedPairs);
        float* st = state == nullptr ? nullptr : state + static_cast<std::size_t>(g * pair_groups + q) * kTileFloats;
        kPackedTiles[(pp - 1) * kPackedToks + tt - 1](packed + p * pair_stride, pair_stride, a + t * a_stride + 8 * s0,
                                                      a_stride, whole, whole < bs ? tail : nullptr, st, !first, last,
                                                      static_cast<int>(n_rows - 2 * p), y + t * y_stride + 2 * p,
                                                      y_stride);
      }
    }
  }
}

}  // namespace
}  // namespace wisp::kernels::x86
