// wisp's own float order for F32, F16 and BF16 weight rows (the batch-invariant numerics, see
// src/kernels/README.md), as register tiles of R weight rows by T tokens; compiled once per x86
// ISA like the other kernel headers here. The scalar form is dot_float.cpp's dot_*_lanes8.
//
// The order of one output (n values, activation in f32): the row is read as if zero-padded to a
// multiple of 8; element i goes to lane i % 8, acc[i % 8] = fma(w_i, a_i, acc[i % 8]) in order of
// i, and the result is hsum8(acc) (simd.h). F16 and BF16 widen to f32 exactly, so the weight type
// only changes the load. One output is one 8-lane accumulator whatever the tile: a tile of R x T
// outputs holds R * T independent accumulators, each going through exactly the operations of the
// one-token kernel (tile<1, 1>), so the tiled GEMM and the one-token dot return the same bits and
// a token's outputs never depend on the batch.
//
// Why 8 lanes: AVX2 has 16 ymm registers, and a 4 x 3 tile of 8-lane accumulators (12 registers,
// three activation vectors, one widened weight vector) does 12 FMAs per 4 weight loads and 3
// activation loads; a 16-lane order (ggml's) would halve the outputs per tile. AVX-512 builds keep
// the order and put two outputs in each zmm (float_gemm512-inl.h) from kPackedMinTokens tokens on;
// fewer tokens and the one-token kernel run this 256-bit code.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// 8 consecutive weights widened to f32 (exact for every type).
struct F32Row {
  using Elem = float;
  static __m256 load8(const Elem* p) { return _mm256_loadu_ps(p); }
};
struct F16Row {
  using Elem = std::uint16_t;
  static __m256 load8(const Elem* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
};
struct BF16Row {
  using Elem = std::uint16_t;
  static __m256 load8(const Elem* p) {
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  }
};

// y[t * y_stride + r] for r < R, t < T: weight row w + r * w_stride (bytes) with activation row
// a + t * a_stride (floats), n values each.
template <class W, int R, int T>
void float_tile(const std::uint8_t* w, std::size_t w_stride, const float* a, std::size_t a_stride, std::int64_t n,
                float* y, std::int64_t y_stride) {
  using E = typename W::Elem;
  const E* wr[R];
  for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const E*>(w + r * w_stride);
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  }
  const std::int64_t n8 = n & ~std::int64_t{7};
  for (std::int64_t i = 0; i < n8; i += 8) {
    __m256 av[T];
    for (int t = 0; t < T; ++t) av[t] = _mm256_loadu_ps(a + t * a_stride + i);
    for (int r = 0; r < R; ++r) {
      const __m256 wv = W::load8(wr[r] + i);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, av[t], acc[r][t]);
    }
  }
  if (n8 < n) {
    // The last n % 8 values, zero-padded to a whole vector (fma(0, 0, acc) leaves acc's value).
    const auto rest = static_cast<std::size_t>(n - n8);
    __m256 av[T];
    for (int t = 0; t < T; ++t) {
      alignas(32) float pad[8] = {};
      std::memcpy(pad, a + t * a_stride + n8, rest * sizeof(float));
      av[t] = _mm256_load_ps(pad);
    }
    for (int r = 0; r < R; ++r) {
      E pad[8] = {};
      std::memcpy(pad, wr[r] + n8, rest * sizeof(E));
      const __m256 wv = W::load8(pad);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, av[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < T; ++t) y[t * y_stride + r] = hsum8(acc[r][t]);
  }
}

// The one-token kernels (DotKernel::dot_invariant for the float types): a 1 x 1 tile.
template <class W>
float dot_lanes8(const void* w, const void* a, std::int64_t n) {
  float y;
  float_tile<W, 1, 1>(static_cast<const std::uint8_t*>(w), 0, static_cast<const float*>(a), 0, n, &y, 0);
  return y;
}

inline float dot_f32_lanes8(const void* w, const void* a, std::int64_t n) { return dot_lanes8<F32Row>(w, a, n); }
inline float dot_f16_lanes8(const void* w, const void* a, std::int64_t n) { return dot_lanes8<F16Row>(w, a, n); }
inline float dot_bf16_lanes8(const void* w, const void* a, std::int64_t n) { return dot_lanes8<BF16Row>(w, a, n); }

using FloatTileFn = void (*)(const std::uint8_t* w, std::size_t w_stride, const float* a, std::size_t a_stride,
                             std::int64_t n, float* y, std::int64_t y_stride);

// The tile of r x t outputs is kTiles<W>[r - 1][t - 1], 1 <= r <= kTileRows, 1 <= t <= kTileToks.
constexpr int kTileRows = 4, kTileToks = 3;
template <class W>
constexpr FloatTileFn kTiles[kTileRows][kTileToks] = {
    {float_tile<W, 1, 1>, float_tile<W, 1, 2>, float_tile<W, 1, 3>},
    {float_tile<W, 2, 1>, float_tile<W, 2, 2>, float_tile<W, 2, 3>},
    {float_tile<W, 3, 1>, float_tile<W, 3, 2>, float_tile<W, 3, 3>},
    {float_tile<W, 4, 1>, float_tile<W, 4, 2>, float_tile<W, 4, 3>},
};

// The GEMM over rows [0, n_rows) and tokens [0, n_tok): y[t * y_stride + r] = the one-token
// kernel's value for row r and token t. Token groups outside, row groups inside, so a group's
// activation rows stay in L1 while the weight rows of the matmul's row chunk pass over them.
// One token (decode): eight rows per tile, eight independent FMA chains.
template <class W>
void float_gemm(const std::uint8_t* w, std::size_t w_stride, std::int64_t n_rows, const float* a, std::size_t a_stride,
                std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride) {
  std::int64_t r0 = 0;
  if (n_tok == 1) {
    for (; r0 + 8 <= n_rows; r0 += 8) {
      float_tile<W, 8, 1>(w + r0 * w_stride, w_stride, a, a_stride, n, y + r0, y_stride);
    }
  }
  for (std::int64_t t = 0; t < n_tok; t += kTileToks) {
    const int tt = static_cast<int>(n_tok - t < kTileToks ? n_tok - t : kTileToks);
    for (std::int64_t r = r0; r < n_rows; r += kTileRows) {
      const int rr = static_cast<int>(n_rows - r < kTileRows ? n_rows - r : kTileRows);
      kTiles<W>[rr - 1][tt - 1](w + r * w_stride, w_stride, a + t * a_stride, a_stride, n, y + t * y_stride + r,
                                y_stride);
    }
  }
}

}  // namespace
}  // namespace wisp::kernels::x86
