// NEON dots of the grid types (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) in exactly the
// float orders of their scalar references (dot_iq_grid.cpp, where the orders are described). Per
// sub-block of 32 values the signed grid values are assembled as two int8x16 (grid rows gathered
// by index, signs applied as a byte mask), dotted with the activation codes into 4-value lanes and
// weighted by the two 16-value scales (lanes 0-3: the first 16 values, 4-7: the second), so every
// integer lane is the reference's and every float step too.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "formats/block_layouts.h"
#include "formats/blocks/iq_grids.h"
#include "kernels/act_quant.h"
#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// The 128 sign patterns of IQ2_XXS/IQ2_XS/IQ3_XXS as byte masks (0xff: negative).
struct SignMasks {
  std::uint64_t m[128];
  constexpr SignMasks() : m{} {
    for (unsigned i = 0; i < 128; ++i) {
      const unsigned p = blocks::iq_sign_pattern(i);
      for (int j = 0; j < 8; ++j) m[i] |= (p >> j & 1u ? 0xffULL : 0ULL) << (8 * j);
    }
  }
};
inline constexpr SignMasks kSignMasks{};

inline std::uint64_t row8(const void* row) {
  std::uint64_t v;
  std::memcpy(&v, row, 8);
  return v;
}
inline std::uint32_t row4(const void* row) {
  std::uint32_t v;
  std::memcpy(&v, row, 4);
  return v;
}

inline int8x16_t pair64(std::uint64_t lo, std::uint64_t hi) {
  return vreinterpretq_s8_u64(vcombine_u64(vcreate_u64(lo), vcreate_u64(hi)));
}
inline int8x16_t quad32(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  return pair64(a | static_cast<std::uint64_t>(b) << 32, c | static_cast<std::uint64_t>(d) << 32);
}

// (mag ^ m) - m: negates the bytes where m is 0xff.
inline int8x16_t negate_where(int8x16_t mag, int8x16_t m) { return vsubq_s8(veorq_s8(mag, m), m); }

// Sign masks of two 8-value groups from their pattern indices.
inline int8x16_t patterns(unsigned i0, unsigned i1) { return pair64(kSignMasks.m[i0 & 127], kSignMasks.m[i1 & 127]); }

// Byte masks of 16 sign bits (two bytes of IQ2_S/IQ3_S's sign array).
inline int8x16_t sign_bits(const std::uint8_t* s) {
  static constexpr std::uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
  const uint8x16_t b = vcombine_u8(vdup_n_u8(s[0]), vdup_n_u8(s[1]));
  return vreinterpretq_s8_u8(vtstq_u8(b, vld1q_u8(kBit)));
}

// Sub-block ib of a super-block: its 32 signed values and its two 16-value scale multipliers.
struct Sub32 {
  Codes32 w;
  int s0, s1;
};

inline Sub32 sub32(const BlockIQ2_XXS& x, int ib) {
  std::uint32_t a[2];
  std::memcpy(a, x.qs + 4 * ib, sizeof a);
  const auto& g = blocks::kIq2XxsGrid;
  const int8x16_t lo = pair64(row8(g[a[0] & 0xff]), row8(g[(a[0] >> 8) & 0xff]));
  const int8x16_t hi = pair64(row8(g[(a[0] >> 16) & 0xff]), row8(g[a[0] >> 24]));
  const int s = 2 * static_cast<int>(a[1] >> 28) + 1;
  return {{negate_where(lo, patterns(a[1], a[1] >> 7)), negate_where(hi, patterns(a[1] >> 14, a[1] >> 21))}, s, s};
}

inline Sub32 sub32(const BlockIQ2_XS& x, int ib) {
  const std::uint16_t* q = x.qs + 4 * ib;
  const auto& g = blocks::kIq2XsGrid;
  const int8x16_t lo = pair64(row8(g[q[0] & 511]), row8(g[q[1] & 511]));
  const int8x16_t hi = pair64(row8(g[q[2] & 511]), row8(g[q[3] & 511]));
  return {{negate_where(lo, patterns(q[0] >> 9, q[1] >> 9)), negate_where(hi, patterns(q[2] >> 9, q[3] >> 9))},
          2 * (x.scales[ib] & 0x0f) + 1,
          2 * (x.scales[ib] >> 4) + 1};
}

inline Sub32 sub32(const BlockIQ2_S& x, int ib) {
  const std::uint8_t* q = x.qs + 4 * ib;
  const unsigned h = x.qh[ib];
  const auto& g = blocks::kIq2SGrid;
  const int8x16_t lo = pair64(row8(g[q[0] | ((h << 8) & 0x300)]), row8(g[q[1] | ((h << 6) & 0x300)]));
  const int8x16_t hi = pair64(row8(g[q[2] | ((h << 4) & 0x300)]), row8(g[q[3] | ((h << 2) & 0x300)]));
  const std::uint8_t* s = x.signs + 4 * ib;
  return {{negate_where(lo, sign_bits(s)), negate_where(hi, sign_bits(s + 2))},
          2 * (x.scales[ib] & 0x0f) + 1,
          2 * (x.scales[ib] >> 4) + 1};
}

inline Sub32 sub32(const BlockIQ3_XXS& x, int ib) {
  const std::uint8_t* q = x.qs + 8 * ib;
  std::uint32_t aux;
  std::memcpy(&aux, x.qs + kQK_K / 4 + 4 * ib, sizeof aux);
  const auto& g = blocks::kIq3XxsGrid;
  const int8x16_t lo = quad32(row4(g[q[0]]), row4(g[q[1]]), row4(g[q[2]]), row4(g[q[3]]));
  const int8x16_t hi = quad32(row4(g[q[4]]), row4(g[q[5]]), row4(g[q[6]]), row4(g[q[7]]));
  const int s = 2 * static_cast<int>(aux >> 28) + 1;
  return {{negate_where(lo, patterns(aux, aux >> 7)), negate_where(hi, patterns(aux >> 14, aux >> 21))}, s, s};
}

inline Sub32 sub32(const BlockIQ3_S& x, int ib) {
  const std::uint8_t* q = x.qs + 8 * ib;
  const unsigned h = x.qh[ib];
  const auto& g = blocks::kIq3SGrid;
  const auto at = [&](int i) { return row4(g[q[i] | (((h >> i) & 1u) << 8)]); };
  const std::uint8_t* s = x.signs + 4 * ib;
  const int sc = 2 * ((x.scales[ib / 2] >> (4 * (ib % 2))) & 0x0f) + 1;
  return {{negate_where(quad32(at(0), at(1), at(2), at(3)), sign_bits(s)),
           negate_where(quad32(at(4), at(5), at(6), at(7)), sign_bits(s + 2))},
          sc,
          sc};
}

// IQ1: the ternary grid values, and the shift signs (+-1 per value) in *shift.
inline Sub32 sub32(const BlockIQ1_S& x, int ib, Codes32* shift) {
  const std::uint8_t* q = x.qs + 4 * ib;
  const unsigned h = x.qh[ib];
  const auto& g = blocks::kIq1SGrid;
  const auto at = [&](int l) { return row8(g[q[l] | (((h >> (3 * l)) & 7u) << 8)]); };
  const int s = static_cast<int>(2 * ((h >> 12) & 7) + 1);
  const int8x16_t sh = vdupq_n_s8(h & 0x8000u ? -1 : 1);
  *shift = {sh, sh};
  return {{pair64(at(0), at(1)), pair64(at(2), at(3))}, s, s};
}

inline Sub32 sub32(const BlockIQ1_M& x, int ib, Codes32* shift) {
  const std::uint8_t* q = x.qs + 4 * ib;
  const std::uint8_t* qh = x.qh + 2 * ib;
  const auto& g = blocks::kIq1SGrid;
  const auto nib = [&](int l) { return static_cast<unsigned>(qh[l / 2] >> (4 * (l % 2))) & 0x0f; };
  const auto at = [&](int l) { return row8(g[q[l] | ((nib(l) & 7u) << 8)]); };
  const auto sh = [&](int l) { return nib(l) & 8u ? ~0ULL : 0x0101010101010101ULL; };  // bytes of -1 or 1
  *shift = {pair64(sh(0), sh(1)), pair64(sh(2), sh(3))};
  const unsigned sc = x.scales[ib / 2] >> (6 * (ib % 2));
  return {{pair64(at(0), at(1)), pair64(at(2), at(3))},
          static_cast<int>(2 * (sc & 7) + 1),
          static_cast<int>(2 * ((sc >> 3) & 7) + 1)};
}

inline float grid_d(const BlockIQ1_M& x) {
  const auto* sc = x.scales;
  return h2f(
      static_cast<std::uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
}
template <typename Block>
inline float grid_d(const Block& x) {
  return h2f(x.d);
}

// The 8 integer lanes of a super-block (lo: lanes 0-3, hi: 4-7).
struct GridLanes {
  int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
  void add(Codes32 w, const std::int8_t* a, int s0, int s1) {
    lo = vmlaq_n_s32(lo, dot4(w.lo, vld1q_s8(a)), s0);
    hi = vmlaq_n_s32(hi, dot4(w.hi, vld1q_s8(a + 16)), s1);
  }
  int sum() const { return vaddvq_s32(vaddq_s32(lo, hi)); }
};

template <typename Block>
float grid_one_token(const void* w, const void* a, std::int64_t n, float c) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  Acc8 acc;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    GridLanes l;
    for (int ib = 0; ib < 8; ++ib) {
      const Sub32 s = sub32(x[b], ib);
      l.add(s.w, y[b].qs + 32 * ib, s.s0, s.s1);
    }
    acc.fma(grid_d(x[b]) * y[b].d, l.lo, l.hi);
  }
  return c * hsum8(acc);
}

// The tiled GEMM's order: one exact sum per super-block. IQ1's codes are 8 grid + shift.
template <typename Block, bool kShift>
float grid_tiled(const void* w, const void* a, std::int64_t n, float c) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    GridLanes l;
    for (int ib = 0; ib < 8; ++ib) {
      if constexpr (kShift) {
        Codes32 shift;
        const Sub32 s = sub32(x[b], ib, &shift);
        const int8x16_t eight = vdupq_n_s8(8);
        const Codes32 code = {vmlaq_s8(shift.lo, s.w.lo, eight), vmlaq_s8(shift.hi, s.w.hi, eight)};  // 8 grid + shift
        l.add(code, y[b].qs + 32 * ib, s.s0, s.s1);
      } else {
        const Sub32 s = sub32(x[b], ib);
        l.add(s.w, y[b].qs + 32 * ib, s.s0, s.s1);
      }
    }
    const float r = (grid_d(x[b]) * c) * static_cast<float>(l.sum());
    acc = __builtin_fmaf(r, y[b].d, acc);
  }
  return acc;
}

// IQ1_S and IQ1_M one token: the shift's sums beside the grid's (see dot_iq_grid.cpp).
template <typename Block>
float iq1_one_token(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  Acc8 acc, acc_shift;
  float acc_shift1 = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    GridLanes l, sl;
    for (int ib = 0; ib < 8; ++ib) {
      Codes32 shift;
      const Sub32 s = sub32(x[b], ib, &shift);
      l.add(s.w, y[b].qs + 32 * ib, s.s0, s.s1);
      sl.add(shift, y[b].qs + 32 * ib, s.s0, s.s1);
    }
    const float d = y[b].d * grid_d(x[b]);
    acc.fma(d, l.lo, l.hi);
    if constexpr (std::is_same_v<Block, BlockIQ1_S>) {
      acc_shift1 = __builtin_fmaf(d, static_cast<float>(sl.sum()), acc_shift1);
    } else {
      acc_shift.fma(d, sl.lo, sl.hi);
    }
  }
  if constexpr (std::is_same_v<Block, BlockIQ1_S>) return __builtin_fmaf(0.125f, acc_shift1, hsum8(acc));
  return __builtin_fmaf(0.125f, hsum8(acc_shift), hsum8(acc));
}

float dot_iq2_xxs(const void* w, const void* a, std::int64_t n) {
  return grid_one_token<BlockIQ2_XXS>(w, a, n, 0.125f);
}
float dot_iq2_xs(const void* w, const void* a, std::int64_t n) { return grid_one_token<BlockIQ2_XS>(w, a, n, 0.125f); }
float dot_iq2_s(const void* w, const void* a, std::int64_t n) { return grid_one_token<BlockIQ2_S>(w, a, n, 0.125f); }
float dot_iq3_xxs(const void* w, const void* a, std::int64_t n) { return grid_one_token<BlockIQ3_XXS>(w, a, n, 0.25f); }
float dot_iq3_s(const void* w, const void* a, std::int64_t n) { return grid_one_token<BlockIQ3_S>(w, a, n, 1.0f); }
float dot_iq1_s(const void* w, const void* a, std::int64_t n) { return iq1_one_token<BlockIQ1_S>(w, a, n); }
float dot_iq1_m(const void* w, const void* a, std::int64_t n) { return iq1_one_token<BlockIQ1_M>(w, a, n); }
float dot_iq2_xxs_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ2_XXS, false>(w, a, n, 0.125f);
}
float dot_iq2_xs_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ2_XS, false>(w, a, n, 0.125f);
}
float dot_iq2_s_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ2_S, false>(w, a, n, 0.125f);
}
float dot_iq3_xxs_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ3_XXS, false>(w, a, n, 0.25f);
}
float dot_iq3_s_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ3_S, false>(w, a, n, 1.0f);
}
float dot_iq1_s_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ1_S, true>(w, a, n, 0.125f);
}
float dot_iq1_m_tiled(const void* w, const void* a, std::int64_t n) {
  return grid_tiled<BlockIQ1_M, true>(w, a, n, 0.125f);
}

}  // namespace
}  // namespace wisp::kernels::neon
