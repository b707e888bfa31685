// wisp's own float order for F32, F16 and BF16 weight rows on NEON (DotKernel::dot_invariant,
// activations in f32), compiled into the plain and the SDOT bundle; the scalar form, which these
// reproduce bit for bit, is dot_float.cpp's dot_*_lanes8, and x86/float_tiles-inl.h computes the
// same operations on x86.
//
// The order of one output: the row read as if zero-padded to a multiple of 8; element i goes to
// lane i % 8, acc[i % 8] = fma(w_i, a_i, acc[i % 8]) in order of i (vfmaq_f32: fused, as
// std::fma), and the result is hsum8(acc) (simd-inl.h, the scalar form's tree). The 8 lanes are
// two float32x4 (lanes 0-3, 4-7); F16 (FCVTL) and BF16 (a 16-bit shift) widen to f32 exactly, so
// the weight type only changes the load. The tiled GEMM (float_gemm.h) runs tiles of rows x
// tokens, each output its own pair of accumulators through the one-token kernel's operations, so
// it gives the one-token kernel's bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// Weights i .. i + 7 widened to f32, as lanes 0-3 and 4-7.
struct F32Row {
  using Elem = float;
  static void load8(const Elem* w, float32x4_t& lo, float32x4_t& hi) {
    lo = vld1q_f32(w);
    hi = vld1q_f32(w + 4);
  }
};

struct F16Row {
  using Elem = std::uint16_t;
  static void load8(const Elem* w, float32x4_t& lo, float32x4_t& hi) {
    const float16x8_t v = vreinterpretq_f16_u16(vld1q_u16(w));
    lo = vcvt_f32_f16(vget_low_f16(v));
    hi = vcvt_high_f32_f16(v);
  }
};

struct BF16Row {
  using Elem = std::uint16_t;
  static void load8(const Elem* w, float32x4_t& lo, float32x4_t& hi) {
    const uint16x8_t v = vld1q_u16(w);
    lo = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16));
    hi = vreinterpretq_f32_u32(vshll_high_n_u16(v, 16));
  }
};

// y[t * y_stride + r] for r < R, t < T: weight row w + r * w_stride (bytes) with activation row
// a + t * a_stride (floats), n values each. Every output is its own pair of accumulators going
// through exactly the one-token kernel's operations (which is the 1 x 1 tile), so the tiles of
// the GEMM and the one-token dot give the same bits.
template <class W, int R, int T>
void float_tile(const std::uint8_t* w, std::size_t w_stride, const float* a, std::size_t a_stride, std::int64_t n,
                float* y, std::int64_t y_stride) {
  using E = typename W::Elem;
  const E* wr[R];
  for (int r = 0; r < R; ++r) wr[r] = reinterpret_cast<const E*>(w + r * w_stride);
  Acc8 acc[R][T];
  float32x4_t w_lo, w_hi;
  const std::int64_t n8 = n & ~std::int64_t{7};
  for (std::int64_t i = 0; i < n8; i += 8) {
    float32x4_t a_lo[T], a_hi[T];
    for (int t = 0; t < T; ++t) {
      a_lo[t] = vld1q_f32(a + t * a_stride + i);
      a_hi[t] = vld1q_f32(a + t * a_stride + i + 4);
    }
    for (int r = 0; r < R; ++r) {
      W::load8(wr[r] + i, w_lo, w_hi);
      for (int t = 0; t < T; ++t) {
        acc[r][t].lo = vfmaq_f32(acc[r][t].lo, w_lo, a_lo[t]);
        acc[r][t].hi = vfmaq_f32(acc[r][t].hi, w_hi, a_hi[t]);
      }
    }
  }
  if (n8 < n) {
    // The tail as a zero-padded group: fma(0, 0, acc) leaves acc's value (the scalar form runs
    // the same operations on the padding).
    const auto rest = static_cast<std::size_t>(n - n8);
    float32x4_t a_lo[T], a_hi[T];
    for (int t = 0; t < T; ++t) {
      float pad[8] = {};
      std::memcpy(pad, a + t * a_stride + n8, rest * sizeof(float));
      a_lo[t] = vld1q_f32(pad);
      a_hi[t] = vld1q_f32(pad + 4);
    }
    for (int r = 0; r < R; ++r) {
      E pad[8] = {};
      std::memcpy(pad, wr[r] + n8, rest * sizeof(E));
      W::load8(pad, w_lo, w_hi);
      for (int t = 0; t < T; ++t) {
        acc[r][t].lo = vfmaq_f32(acc[r][t].lo, w_lo, a_lo[t]);
        acc[r][t].hi = vfmaq_f32(acc[r][t].hi, w_hi, a_hi[t]);
      }
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

float dot_f32_lanes8(const void* w, const void* a, std::int64_t n) { return dot_lanes8<F32Row>(w, a, n); }
float dot_f16_lanes8(const void* w, const void* a, std::int64_t n) { return dot_lanes8<F16Row>(w, a, n); }
float dot_bf16_lanes8(const void* w, const void* a, std::int64_t n) { return dot_lanes8<BF16Row>(w, a, n); }

using FloatTileFn = void (*)(const std::uint8_t* w, std::size_t w_stride, const float* a, std::size_t a_stride,
                             std::int64_t n, float* y, std::int64_t y_stride);

// Tiles of up to 4 rows x 2 tokens: 16 accumulator registers, 4 activation and 2 weight ones of
// NEON's 32. kTiles<W>[r - 1][t - 1] is the tile of r x t outputs.
constexpr int kTileRows = 4, kTileToks = 2;
template <class W>
constexpr FloatTileFn kTiles[kTileRows][kTileToks] = {
    {float_tile<W, 1, 1>, float_tile<W, 1, 2>},
    {float_tile<W, 2, 1>, float_tile<W, 2, 2>},
    {float_tile<W, 3, 1>, float_tile<W, 3, 2>},
    {float_tile<W, 4, 1>, float_tile<W, 4, 2>},
};

// The GEMM over rows [0, n_rows) and tokens [0, n_tok) (float_gemm.h): y[t * y_stride + r] = the
// one-token kernel's value for row r and token t. One token (decode): eight rows per tile, eight
// independent pairs of FMA chains instead of the one-token kernel's one.
template <class W>
void float_gemm(const std::uint8_t* w, std::size_t w_stride, std::int64_t n_rows, const float* a, std::size_t a_stride,
                std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride) {
  std::int64_t r0 = 0;
  if (n_tok == 1) {
    for (; r0 + 8 <= n_rows; r0 += 8)
      float_tile<W, 8, 1>(w + r0 * w_stride, w_stride, a, a_stride, n, y + r0, y_stride);
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
}  // namespace wisp::kernels::neon
