#include "kv/kv_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "formats/half.h"
#include "formats/half_rows.h"
#include "formats/wq_format.h"
#include "wisp/error.h"

namespace wisp {
namespace {

constexpr int kGroup = 32;

std::uint16_t load_u16(const std::byte* p) {
  std::uint16_t v;
  std::memcpy(&v, p, sizeof v);  // rows of q4/q8_0 are only 2-byte aligned at best
  return v;
}

void store_u16(std::byte* p, std::uint16_t v) { std::memcpy(p, &v, sizeof v); }

// ---- f32 / f16 ----

void encode_f32(const float* x, std::int64_t n, std::byte* out) {
  std::memcpy(out, x, static_cast<std::size_t>(n) * 4);
}
void decode_f32(const std::byte* row, float* out, std::int64_t n) {
  std::memcpy(out, row, static_cast<std::size_t>(n) * 4);
}

// f16 rows start at multiples of 2 bytes (whole rows of halves), so they are read as halves.
void encode_f16(const float* x, std::int64_t n, std::byte* out) {
  f32_to_f16_row(x, reinterpret_cast<std::uint16_t*>(out), n);
}

// ---- q8_0 (GGML's reference quantize_row_q8_0) ----

void encode_q8_0(const float* x, std::int64_t n, std::byte* out) {
  for (std::int64_t g0 = 0; g0 < n; g0 += kGroup, out += 34) {
    float v[kGroup] = {};
    std::copy_n(x + g0, std::min<std::int64_t>(kGroup, n - g0), v);
    float amax = 0.0f;
    for (float a : v) amax = std::max(amax, std::fabs(a));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    store_u16(out, f32_to_f16(d));
    for (int j = 0; j < kGroup; ++j) {
      out[2 + j] = static_cast<std::byte>(static_cast<std::int8_t>(std::lround(v[j] * id)));
    }
  }
}

void decode_q8_0(const std::byte* row, float* out, std::int64_t n) {
  for (std::int64_t g0 = 0; g0 < n; g0 += kGroup, row += 34) {
    const float d = f16_to_f32(load_u16(row));
    const std::int64_t m = std::min<std::int64_t>(kGroup, n - g0);
    for (std::int64_t j = 0; j < m; ++j) out[g0 + j] = d * static_cast<float>(static_cast<std::int8_t>(row[2 + j]));
  }
}

// ---- q4 (DESIGN.md's asymmetric 4-bit convention) ----

void encode_q4(const float* x, std::int64_t n, std::byte* out) {
  for (std::int64_t g0 = 0; g0 < n; g0 += kGroup, out += 20) {
    const std::int64_t m = std::min<std::int64_t>(kGroup, n - g0);
    float r_min = x[g0], r_max = x[g0];
    for (std::int64_t j = 1; j < m; ++j) {
      r_min = std::min(r_min, x[g0 + j]);
      r_max = std::max(r_max, x[g0 + j]);
    }
    const WqParams p = wq_stored_params(r_min, r_max, 4);  // f16-exact scale; z recomputed from it
    store_u16(out, f32_to_f16(p.scale));
    store_u16(out + 2, f32_to_f16(static_cast<float>(p.zero)));
    std::uint8_t codes[kGroup];
    for (int j = 0; j < kGroup; ++j) {
      // The padding of a partial group takes the code of 0 (z), so it holds no stray values.
      codes[j] = static_cast<std::uint8_t>(j < m ? wq_code(x[g0 + j], p, 4) : p.zero);
    }
    for (int j = 0; j < 16; ++j) out[4 + j] = static_cast<std::byte>(codes[j] | (codes[j + 16] << 4));
  }
}

void decode_q4(const std::byte* row, float* out, std::int64_t n) {
  for (std::int64_t g0 = 0; g0 < n; g0 += kGroup, row += 20) {
    const float s = f16_to_f32(load_u16(row));
    const float z = f16_to_f32(load_u16(row + 2));
    float vals[kGroup];
    for (int j = 0; j < 16; ++j) {
      const auto b = static_cast<std::uint8_t>(row[4 + j]);
      vals[j] = s * (static_cast<float>(b & 0x0f) - z);
      vals[j + 16] = s * (static_cast<float>(b >> 4) - z);
    }
    std::copy_n(vals, std::min<std::int64_t>(kGroup, n - g0), out + g0);
  }
}

}  // namespace

KvRowDecoder kv_row_decoder(KvType t) {
  switch (t) {
    case KvType::kF32: return decode_f32;
    case KvType::kF16: return f16_bytes_to_f32_row;  // attention reads these rows in place
    case KvType::kQ8_0: return decode_q8_0;
    case KvType::kQ4: return decode_q4;
  }
  throw Error("KV: no decoder for element type " + std::to_string(static_cast<int>(t)));
}

void kv_encode_row(KvType t, const float* x, std::int64_t n, std::byte* out) {
  switch (t) {
    case KvType::kF32: return encode_f32(x, n, out);
    case KvType::kF16: return encode_f16(x, n, out);
    case KvType::kQ8_0: return encode_q8_0(x, n, out);
    case KvType::kQ4: return encode_q4(x, n, out);
  }
  throw Error("KV: no encoder for element type " + std::to_string(static_cast<int>(t)));
}

void kv_decode_row(KvType t, const std::byte* row, std::int64_t n, float* out) { kv_row_decoder(t)(row, out, n); }

}  // namespace wisp
