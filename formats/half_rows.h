// Whole-row conversions between float32 and IEEE binary16, for the hot loops (KV cache rows,
// attention's rounding of queries and probabilities). They give exactly the bits of the scalar
// reference conversions in half.h for every non-NaN input: F16C's conversions round to nearest
// even and handle subnormals and overflow as IEEE says, as half.h does. NaNs differ only in
// quieting (hardware sets the quiet bit), which no model value relies on.
#pragma once

#include <cstddef>
#include <cstdint>

namespace wisp {

void f16_to_f32_row(const std::uint16_t* in, float* out, std::int64_t n);
// The same on a row of bytes holding n halves (2-byte aligned): the KV cache's decoder of f16 rows
// (kv_quant.h). Attention reads rows whose decoder is this one as halves in place.
void f16_bytes_to_f32_row(const std::byte* in, float* out, std::int64_t n);
void f32_to_f16_row(const float* in, std::uint16_t* out, std::int64_t n);
// x[i] = f16_to_f32(f32_to_f16(x[i])): the value a half store and load would give back.
void round_to_f16_row(float* x, std::int64_t n);

}  // namespace wisp
