// wisp's own order for the 32-value types Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 (the scalar form of the
// x86 dot_invariant kernels in x86/blocks8_dots-inl.h): not llama.cpp's, so not pinned to its bits,
// but to these functions, which the SIMD kernels reproduce exactly; the accuracy of the order
// against the reference is bounded by tests (src/kernels/README.md).
//
// Why this order is fast: the SIMD kernel reduces the integer dots of 8 consecutive blocks of one
// row to one vector of 8 block sums (lane k = block 8 g + k), so each block costs one lane of a
// convert, a multiply and an FMA instead of a full 8-lane convert + FMA per block (ggml's order),
// and the activation scales and code sums of 8 blocks are one contiguous load (Q8_0Split). One
// row is read start to end, rows in order, so the weight stream is sequential.
//
// Per row: for each block b, isum_b is the exact integer dot of its codes with the activation's
// (the codes' offset, Q4_0's 8 or Q5_0's 16, taken out through the activation's code sum), lane
// k = b % 8 takes acc[k] = fma(float(isum_b), d_x * d_y, acc[k]); the types with a minimum add
// macc[k] = fma(m_x, s_y, macc[k]) (s_y: Q8_1's half d * sum). The result is hsum8(acc + macc)
// in simd.h's hsum8 order.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"

namespace wisp::kernels::scalar {

namespace {

// x86::hsum8's order: lanes 4..7 onto 0..3, then {0,2} and {1,3}, then the last pair.
float hsum8(const float (&v)[8]) {
  const float r0 = v[4] + v[0], r1 = v[5] + v[1], r2 = v[6] + v[2], r3 = v[7] + v[3];
  return (r0 + r2) + (r1 + r3);
}

inline int nibble(const std::uint8_t* qs, int j) { return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4; }

// Value j of a 5-bit block: its nibble, and bit j of the 32-bit little-endian qh as the fifth bit.
inline int code5(const std::uint8_t* qs, const std::uint8_t* qh, int j) {
  return nibble(qs, j) | ((qh[j / 8] >> (j % 8)) & 1) << 4;
}

template <class Block, class BlockDot>
float blocks8(const void* w, const void* a, std::int64_t n, bool with_min, BlockDot&& block_dot) {
  const auto* x = static_cast<const Block*>(w);
  const Q8_0SplitRow y = q8_0_split_row(a, n);
  float acc[8] = {}, macc[8] = {};
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const int k = static_cast<int>(b % 8);
    const std::int32_t isum = block_dot(x[b], y.qs + b * kQK, y.sum[b]);
    acc[k] = std::fma(static_cast<float>(isum), f16_to_f32(x[b].d) * y.d[b], acc[k]);
    if (with_min) {
      if constexpr (requires { x[b].m; }) {
        macc[k] = std::fma(f16_to_f32(x[b].m), y.s[b], macc[k]);
      }
    }
  }
  float t[8];
  for (int k = 0; k < 8; ++k) t[k] = acc[k] + macc[k];
  return hsum8(t);
}

}  // namespace

float dot_q4_0_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8<BlockQ4_0>(w, a, n, false, [](const BlockQ4_0& x, const std::int8_t* qs, std::int32_t sum) {
    std::int32_t s = 0;
    for (int j = 0; j < kQK; ++j) s += nibble(x.qs, j) * qs[j];
    return s - 8 * sum;
  });
}

float dot_q4_1_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8<BlockQ4_1>(w, a, n, true, [](const BlockQ4_1& x, const std::int8_t* qs, std::int32_t) {
    std::int32_t s = 0;
    for (int j = 0; j < kQK; ++j) s += nibble(x.qs, j) * qs[j];
    return s;
  });
}

float dot_q5_0_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8<BlockQ5_0>(w, a, n, false, [](const BlockQ5_0& x, const std::int8_t* qs, std::int32_t sum) {
    std::int32_t s = 0;
    for (int j = 0; j < kQK; ++j) s += code5(x.qs, x.qh, j) * qs[j];
    return s - 16 * sum;
  });
}

float dot_q5_1_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8<BlockQ5_1>(w, a, n, true, [](const BlockQ5_1& x, const std::int8_t* qs, std::int32_t) {
    std::int32_t s = 0;
    for (int j = 0; j < kQK; ++j) s += code5(x.qs, x.qh, j) * qs[j];
    return s;
  });
}

float dot_q8_0_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8<BlockQ8_0>(w, a, n, false, [](const BlockQ8_0& x, const std::int8_t* qs, std::int32_t) {
    std::int32_t s = 0;
    for (int j = 0; j < kQK; ++j) s += x.qs[j] * qs[j];
    return s;
  });
}

}  // namespace wisp::kernels::scalar
