// Helpers shared by the 32-value "legacy" block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): the block
// statistics their quantizers start from and the nibble/bit packing they share. No float
// arithmetic lives here on purpose: every multiply and add of a reference kernel sits in its own
// .cpp, after formats/blocks/exact_float.h, so none can be fused into an FMA.
#pragma once

#include <cmath>
#include <cstdint>

#include "formats/block_layouts.h"

namespace wisp::blocks {

// The value of largest magnitude, keeping its sign; the first one on ties (numpy's argmax).
inline float signed_absmax(const float* x) {
  int best = 0;
  for (int j = 1; j < kQK; ++j) {
    if (std::fabs(x[j]) > std::fabs(x[best])) best = j;
  }
  return x[best];
}

inline float block_max(const float* x) {
  float m = x[0];
  for (int j = 1; j < kQK; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

inline float block_min(const float* x) {
  float m = x[0];
  for (int j = 1; j < kQK; ++j) m = x[j] < m ? x[j] : m;
  return m;
}

// A code from a value the quantizer has already shifted to [0, max + 1): truncate toward zero and
// saturate at `max`, as numpy's trunc().astype(uint8).clip(0, max) does for in-range inputs.
inline std::uint8_t truncate_code(float shifted, int max) {
  const float t = std::trunc(shifted);
  if (!(t > 0.0f)) return 0;  // also maps NaN (from NaN inputs) to 0 instead of undefined behaviour
  return t >= static_cast<float>(max) ? static_cast<std::uint8_t>(max) : static_cast<std::uint8_t>(t);
}

// Element j < 16 goes to the low nibble of byte j, element j + 16 to its high nibble.
inline void pack_nibbles(const std::uint8_t* q, std::uint8_t* qs) {
  for (int j = 0; j < kQK / 2; ++j) qs[j] = static_cast<std::uint8_t>((q[j] & 0x0f) | ((q[j + kQK / 2] & 0x0f) << 4));
}

inline std::uint8_t nibble(const std::uint8_t* qs, int j) {
  return j < kQK / 2 ? (qs[j] & 0x0f) : (qs[j - kQK / 2] >> 4);
}

// Bit 4 of each 5-bit code, as a little-endian 32-bit mask stored in 4 bytes.
inline void pack_high_bits(const std::uint8_t* q, std::uint8_t* qh) {
  std::uint32_t h = 0;
  for (int j = 0; j < kQK; ++j) h |= static_cast<std::uint32_t>((q[j] >> 4) & 1) << j;
  for (int b = 0; b < 4; ++b) qh[b] = static_cast<std::uint8_t>(h >> (8 * b));
}

inline std::uint8_t high_bit(const std::uint8_t* qh, int j) { return (qh[j / 8] >> (j % 8)) & 1; }

}  // namespace wisp::blocks
