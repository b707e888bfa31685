// Dots of the grid types IQ2_XXS and IQ3_XXS against Q8_K activations, in the float orders of
// llama.cpp's x86-64 CPU backend (see ggml_order.h):
//   - one token (ggml_vec_dot_*_q8_K, AVX2): per super-block 8 integer lanes, lane l summing over
//     the 8 sub-blocks of 32 values (2 ls + 1) times the signed grid values of elements
//     32 ib + 4l .. 32 ib + 4l + 3 times their activations (exact); acc = fma(d_x * d_y, lane, acc);
//     the result is C * hsum8(acc), C = 1/8 (IQ2_XXS) or 1/4 (IQ3_XXS);
//   - batches of 8+ tokens (the tiled GEMM): one exact sum per super-block, r = (d_x * C) * sum,
//     acc = fma(r, d_y, acc).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "formats/blocks/iq_grids.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/ggml_order.h"

namespace wisp::kernels::scalar {

namespace {

using blocks::iq_sign_pattern;

// One super-block as signed grid values and the 8 sub-block multipliers 2 ls + 1.
struct GridBlock {
  float d = 0.0f;  // the half d
  int scale[8] = {};
  int v[kQK_K] = {};
};

inline int signed_value(unsigned magnitude, unsigned signs, int j) {
  return (signs >> j) & 1u ? -static_cast<int>(magnitude) : static_cast<int>(magnitude);
}

void unpack(const BlockIQ2_XXS& x, GridBlock& g) {
  g.d = f16_to_f32(x.d);
  for (int ib = 0; ib < 8; ++ib) {
    std::uint32_t a[2];
    std::memcpy(a, x.qs + 4 * ib, sizeof a);
    g.scale[ib] = 2 * static_cast<int>(a[1] >> 28) + 1;
    for (int l = 0; l < 4; ++l) {
      const std::uint8_t* row = blocks::kIq2XxsGrid[(a[0] >> (8 * l)) & 0xff];
      const unsigned signs = iq_sign_pattern((a[1] >> (7 * l)) & 127);
      for (int j = 0; j < 8; ++j) g.v[32 * ib + 8 * l + j] = signed_value(row[j], signs, j);
    }
  }
}

void unpack(const BlockIQ3_XXS& x, GridBlock& g) {
  g.d = f16_to_f32(x.d);
  for (int ib = 0; ib < 8; ++ib) {
    std::uint32_t aux;
    std::memcpy(&aux, x.qs + kQK_K / 4 + 4 * ib, sizeof aux);
    g.scale[ib] = 2 * static_cast<int>(aux >> 28) + 1;
    for (int e = 0; e < 32; ++e) {
      const std::uint8_t* row = blocks::kIq3XxsGrid[x.qs[8 * ib + e / 4]];
      const unsigned signs = iq_sign_pattern((aux >> (7 * (e / 8))) & 127);
      g.v[32 * ib + e] = signed_value(row[e % 4], signs, e % 8);
    }
  }
}

void lanes(const GridBlock& g, const std::int8_t* a, int out[8]) {
  for (int l = 0; l < 8; ++l) {
    int lane = 0;
    for (int ib = 0; ib < 8; ++ib) {
      int s = 0;
      for (int e = 32 * ib + 4 * l; e < 32 * ib + 4 * l + 4; ++e) s += g.v[e] * a[e];
      lane += g.scale[ib] * s;
    }
    out[l] = lane;
  }
}

template <typename Block>
float one_token(const void* w, const void* a, std::int64_t n, float c) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc[8] = {};
  GridBlock g;
  int l8[8];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack(x[b], g);
    lanes(g, y[b].qs, l8);
    const float d = g.d * y[b].d;
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(l8[l]), acc[l]);
  }
  return c * ggml::hsum8(acc);
}

template <typename Block>
float tiled(const void* w, const void* a, std::int64_t n, float c) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  GridBlock g;
  int l8[8];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack(x[b], g);
    lanes(g, y[b].qs, l8);
    int s = 0;
    for (int l = 0; l < 8; ++l) s += l8[l];
    const float d0 = g.d * c;
    const float r = d0 * static_cast<float>(s);
    acc = std::fma(r, y[b].d, acc);
  }
  return acc;
}

}  // namespace

float dot_iq2_xxs(const void* w, const void* a, std::int64_t n) { return one_token<BlockIQ2_XXS>(w, a, n, 0.125f); }
float dot_iq2_xxs_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockIQ2_XXS>(w, a, n, 0.125f); }
float dot_iq3_xxs(const void* w, const void* a, std::int64_t n) { return one_token<BlockIQ3_XXS>(w, a, n, 0.25f); }
float dot_iq3_xxs_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockIQ3_XXS>(w, a, n, 0.25f); }

}  // namespace wisp::kernels::scalar
