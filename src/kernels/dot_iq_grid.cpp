// Dots of the grid types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) against Q8_K
// activations, in the float orders of llama.cpp's x86-64 CPU backend (see ggml_order.h). Every
// integer part is exact, so only the float steps and which values share an integer lane matter:
//   - one token (ggml_vec_dot_*_q8_K, AVX2): per super-block 8 integer lanes, lane l summing, over
//     the 8 sub-blocks of 32 values, the elements 32 ib + 4l .. 32 ib + 4l + 3, each times its
//     scale multiplier (2 ls + 1, per 32 or per 16 values) and its activation;
//     acc = fma(d_x * d_y, lane, acc); the result is C * hsum8(acc), C = 1/8 (IQ2_*), 1/4
//     (IQ3_XXS), 1 (IQ3_S). IQ1_S and IQ1_M add their +-1/8 shift as a second sum: IQ1_S one
//     integer per super-block (s = d * sum) accumulated in one float, IQ1_M 8 more lanes in a
//     second vector; result hsum8(acc) + 1/8 * (that sum);
//   - batches of 8+ tokens (the tiled GEMM): one exact sum per super-block (IQ1: of the codes
//     8 grid + shift), r = (d_x * C) * sum, acc = fma(r, d_y, acc), C as above (IQ1: 1/8).
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

// One super-block as signed grid values, the shift signs (IQ1 only: +-1 per value, else 0) and the
// scale multiplier 2 ls + 1 of each 16 values.
struct GridBlock {
  float d = 0.0f;  // the half d
  int scale[16] = {};
  int v[kQK_K] = {};
  int shift[kQK_K] = {};
};

inline int signed_value(unsigned magnitude, unsigned signs, int j) {
  return (signs >> j) & 1u ? -static_cast<int>(magnitude) : static_cast<int>(magnitude);
}

// Eight values of a grid row with their sign bits.
inline void put8(int* v, const std::uint8_t* row, unsigned signs) {
  for (int j = 0; j < 8; ++j) v[j] = signed_value(row[j], signs, j);
}

void unpack(const BlockIQ2_XXS& x, GridBlock& g) {
  g.d = f16_to_f32(x.d);
  for (int ib = 0; ib < 8; ++ib) {
    std::uint32_t a[2];
    std::memcpy(a, x.qs + 4 * ib, sizeof a);
    g.scale[2 * ib] = g.scale[2 * ib + 1] = 2 * static_cast<int>(a[1] >> 28) + 1;
    for (int l = 0; l < 4; ++l) {
      put8(g.v + 32 * ib + 8 * l, blocks::kIq2XxsGrid[(a[0] >> (8 * l)) & 0xff],
           iq_sign_pattern((a[1] >> (7 * l)) & 127));
    }
  }
}

void unpack(const BlockIQ2_XS& x, GridBlock& g) {
  g.d = f16_to_f32(x.d);
  for (int k = 0; k < 16; ++k) g.scale[k] = 2 * ((x.scales[k / 2] >> (4 * (k % 2))) & 0x0f) + 1;
  for (int i = 0; i < 32; ++i) put8(g.v + 8 * i, blocks::kIq2XsGrid[x.qs[i] & 511], iq_sign_pattern(x.qs[i] >> 9));
}

void unpack(const BlockIQ2_S& x, GridBlock& g) {
  g.d = f16_to_f32(x.d);
  for (int k = 0; k < 16; ++k) g.scale[k] = 2 * ((x.scales[k / 2] >> (4 * (k % 2))) & 0x0f) + 1;
  for (int i = 0; i < 32; ++i) {
    const unsigned idx = x.qs[i] | (((x.qh[i / 4] >> (2 * (i % 4))) & 3u) << 8);
    put8(g.v + 8 * i, blocks::kIq2SGrid[idx], x.signs[i]);
  }
}

void unpack(const BlockIQ3_XXS& x, GridBlock& g) {
  g.d = f16_to_f32(x.d);
  for (int ib = 0; ib < 8; ++ib) {
    std::uint32_t aux;
    std::memcpy(&aux, x.qs + kQK_K / 4 + 4 * ib, sizeof aux);
    g.scale[2 * ib] = g.scale[2 * ib + 1] = 2 * static_cast<int>(aux >> 28) + 1;
    for (int e = 0; e < 32; ++e) {
      const std::uint8_t* row = blocks::kIq3XxsGrid[x.qs[8 * ib + e / 4]];
      const unsigned signs = iq_sign_pattern((aux >> (7 * (e / 8))) & 127);
      g.v[32 * ib + e] = signed_value(row[e % 4], signs, e % 8);
    }
  }
}

void unpack(const BlockIQ3_S& x, GridBlock& g) {
  g.d = f16_to_f32(x.d);
  for (int k = 0; k < 16; ++k) g.scale[k] = 2 * ((x.scales[k / 4] >> (4 * ((k / 2) % 2))) & 0x0f) + 1;
  for (int i = 0; i < 64; ++i) {
    const unsigned idx = x.qs[i] | (((x.qh[i / 8] >> (i % 8)) & 1u) << 8);
    for (int j = 0; j < 4; ++j) {
      const int e = 4 * i + j;
      g.v[e] = signed_value(blocks::kIq3SGrid[idx][j], x.signs[e / 8], e % 8);
    }
  }
}

void unpack(const BlockIQ1_S& x, GridBlock& g) {
  g.d = f16_to_f32(x.d);
  for (int ib = 0; ib < 8; ++ib) {
    const unsigned qh = x.qh[ib];
    g.scale[2 * ib] = g.scale[2 * ib + 1] = static_cast<int>(2 * ((qh >> 12) & 7) + 1);
    const int shift = qh & 0x8000u ? -1 : 1;
    for (int l = 0; l < 4; ++l) {
      const std::int8_t* row = blocks::kIq1SGrid[x.qs[4 * ib + l] | (((qh >> (3 * l)) & 7u) << 8)];
      for (int j = 0; j < 8; ++j) {
        g.v[32 * ib + 8 * l + j] = row[j];
        g.shift[32 * ib + 8 * l + j] = shift;
      }
    }
  }
}

void unpack(const BlockIQ1_M& x, GridBlock& g) {
  const auto* sc = x.scales;
  g.d = f16_to_f32(
      static_cast<std::uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
  for (int k = 0; k < 16; ++k) g.scale[k] = static_cast<int>(2 * ((sc[k / 4] >> (3 * (k % 4))) & 7) + 1);
  for (int i = 0; i < 32; ++i) {
    const unsigned h = (x.qh[i / 2] >> (4 * (i % 2))) & 0x0f;
    const std::int8_t* row = blocks::kIq1SGrid[x.qs[i] | ((h & 7u) << 8)];
    for (int j = 0; j < 8; ++j) {
      g.v[8 * i + j] = row[j];
      g.shift[8 * i + j] = h & 0x08u ? -1 : 1;
    }
  }
}

// The 8 integer lanes of ggml's AVX2 loop over `vals` (the grid values or the shift signs).
void lanes(const GridBlock& g, const int* vals, const std::int8_t* a, int out[8]) {
  for (int l = 0; l < 8; ++l) {
    int lane = 0;
    for (int ib = 0; ib < 8; ++ib) {
      for (int e = 32 * ib + 4 * l; e < 32 * ib + 4 * l + 4; ++e) lane += g.scale[e / 16] * vals[e] * a[e];
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
    lanes(g, g.v, y[b].qs, l8);
    const float d = g.d * y[b].d;
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(l8[l]), acc[l]);
  }
  return c * ggml::hsum8(acc);
}

// IQ1_S: the shift sum is one integer per super-block (ggml adds the Q8_K block sums), in one
// float; the compiler fuses its multiply-add and the final one, spelled as FMAs here.
float iq1_s_one_token(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ1_S*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc[8] = {};
  float acc_shift = 0.0f;
  GridBlock g;
  int l8[8], s8[8];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack(x[b], g);
    lanes(g, g.v, y[b].qs, l8);
    lanes(g, g.shift, y[b].qs, s8);
    const float d = y[b].d * g.d;
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(l8[l]), acc[l]);
    int s = 0;
    for (int l = 0; l < 8; ++l) s += s8[l];
    acc_shift = std::fma(d, static_cast<float>(s), acc_shift);
  }
  return std::fma(0.125f, acc_shift, ggml::hsum8(acc));
}

// IQ1_M: the shift sums in 8 lanes of their own, folded separately.
float iq1_m_one_token(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ1_M*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc[8] = {}, acc_shift[8] = {};
  GridBlock g;
  int l8[8], s8[8];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack(x[b], g);
    lanes(g, g.v, y[b].qs, l8);
    lanes(g, g.shift, y[b].qs, s8);
    const float d = y[b].d * g.d;
    for (int l = 0; l < 8; ++l) {
      acc[l] = std::fma(d, static_cast<float>(l8[l]), acc[l]);
      acc_shift[l] = std::fma(d, static_cast<float>(s8[l]), acc_shift[l]);
    }
  }
  return std::fma(0.125f, ggml::hsum8(acc_shift), ggml::hsum8(acc));
}

// `grid_weight`: 8 for IQ1 (codes 8 grid + shift), 1 for the others (their shifts are 0).
template <typename Block>
float tiled(const void* w, const void* a, std::int64_t n, float c, int grid_weight) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  GridBlock g;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack(x[b], g);
    int s = 0;
    for (int e = 0; e < kQK_K; ++e) s += g.scale[e / 16] * (grid_weight * g.v[e] + g.shift[e]) * y[b].qs[e];
    const float d0 = g.d * c;
    const float r = d0 * static_cast<float>(s);
    acc = std::fma(r, y[b].d, acc);
  }
  return acc;
}

}  // namespace

float dot_iq2_xxs(const void* w, const void* a, std::int64_t n) { return one_token<BlockIQ2_XXS>(w, a, n, 0.125f); }
float dot_iq2_xxs_tiled(const void* w, const void* a, std::int64_t n) {
  return tiled<BlockIQ2_XXS>(w, a, n, 0.125f, 1);
}
float dot_iq2_xs(const void* w, const void* a, std::int64_t n) { return one_token<BlockIQ2_XS>(w, a, n, 0.125f); }
float dot_iq2_xs_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockIQ2_XS>(w, a, n, 0.125f, 1); }
float dot_iq2_s(const void* w, const void* a, std::int64_t n) { return one_token<BlockIQ2_S>(w, a, n, 0.125f); }
float dot_iq2_s_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockIQ2_S>(w, a, n, 0.125f, 1); }
float dot_iq3_xxs(const void* w, const void* a, std::int64_t n) { return one_token<BlockIQ3_XXS>(w, a, n, 0.25f); }
float dot_iq3_xxs_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockIQ3_XXS>(w, a, n, 0.25f, 1); }
float dot_iq3_s(const void* w, const void* a, std::int64_t n) { return one_token<BlockIQ3_S>(w, a, n, 1.0f); }
float dot_iq3_s_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockIQ3_S>(w, a, n, 1.0f, 1); }
float dot_iq1_s(const void* w, const void* a, std::int64_t n) { return iq1_s_one_token(w, a, n); }
float dot_iq1_s_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockIQ1_S>(w, a, n, 0.125f, 8); }
float dot_iq1_m(const void* w, const void* a, std::int64_t n) { return iq1_m_one_token(w, a, n); }
float dot_iq1_m_tiled(const void* w, const void* a, std::int64_t n) { return tiled<BlockIQ1_M>(w, a, n, 0.125f, 8); }

}  // namespace wisp::kernels::scalar
