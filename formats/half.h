// Exact conversions between float32 and the two 16-bit float formats GGUF stores: IEEE binary16
// ("F16", the scale type of every GGML block) and bfloat16 ("BF16").
//
// These are the reference conversions: bit-exact with the `gguf` Python package, which uses
// numpy's float16 casts and, for BF16, ggml's own rounding. They work on bits only (no float
// arithmetic), so they behave the same on every CPU and in constexpr evaluation; SIMD kernels
// may use hardware conversions and test against these.
#pragma once

#include <bit>
#include <cstdint>

namespace wisp {

static_assert(std::endian::native == std::endian::little, "wisp reads GGUF bytes as little-endian in place");

// binary16 -> binary32. Every half value is exactly representable as a float, so this is exact.
// NaN payloads move to the top of the float mantissa unchanged (numpy does the same and does not
// quiet signaling NaNs).
constexpr float f16_to_f32(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits = 0;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf or NaN
  } else if (exp != 0) {
    bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);  // normal: rebias the exponent
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half (mant * 2^-24) is a normal float: shift the leading 1 up to the implicit
    // bit position, lowering the exponent from that of 2^-14 once per shift.
    std::uint32_t e = 127 - 14;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    bits = sign | (e << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

// binary32 -> binary16 with round-to-nearest-even, like numpy's `astype(np.float16)`:
// overflow goes to +-inf, tiny values round to subnormals or signed zero, and a NaN keeps its
// sign and the top 10 payload bits (forced nonzero so it stays a NaN; no quieting).
constexpr std::uint16_t f32_to_f16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t ax = x & 0x7fffffffu;

  if (ax >= 0x7f800000u) {  // inf or NaN
    if (ax == 0x7f800000u) return sign | 0x7c00u;
    auto payload = static_cast<std::uint16_t>((ax >> 13) & 0x3ffu);
    if (payload == 0) payload = 1;
    return sign | 0x7c00u | payload;
  }
  if (ax >= 0x477ff000u) return sign | 0x7c00u;  // >= 65520 (halfway past 65504): rounds to inf

  if (ax < 0x38800000u) {                // below 2^-14, the smallest normal half: subnormal or zero
    if (ax <= 0x33000000u) return sign;  // <= 2^-25: the tie at 2^-25 rounds to the even 0
    // The value is m * 2^(e-150) = m * 2^(e-126) half-subnormal units (2^-24 each).
    const std::uint32_t e = ax >> 23;
    const std::uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - e;  // 14..24 here
    std::uint32_t q = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1);
    const std::uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;  // may carry into the smallest normal: fine
    return sign | static_cast<std::uint16_t>(q);
  }

  // Normal: rebias the exponent and drop 13 mantissa bits, rounding to nearest even. A carry out
  // of the mantissa correctly increments the exponent.
  std::uint32_t h = (ax - ((127u - 15u) << 23)) >> 13;
  const std::uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return sign | static_cast<std::uint16_t>(h);
}

// bfloat16 -> binary32: bfloat16 is the top half of a float, so this is a shift.
constexpr float bf16_to_f32(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// binary32 -> bfloat16 as ggml (and the gguf package) do it: a NaN keeps its top bits and gets
// the quiet bit set (so truncation cannot turn it into inf); everything else rounds to nearest
// even, overflowing to inf.
constexpr std::uint16_t f32_to_bf16(float f) {
  std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) x = (x & 0xffff0000u) | 0x00400000u;
  const std::uint64_t rounded = static_cast<std::uint64_t>(x) + 0x7fffu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

}  // namespace wisp
