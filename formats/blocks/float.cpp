// F32, F16 and BF16 "blocks" are single values, so these are plain element-wise conversions.
// They move bits (formats/half.h), never do float arithmetic, so NaN payloads survive as the
// gguf package keeps them.
#include <cstring>

#include "formats/blocks/reference.h"
#include "formats/half.h"

namespace wisp::blocks {

void dequantize_f32(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("F32", n, 1);
  std::memcpy(out, blocks, static_cast<std::size_t>(n) * sizeof(float));
}

void quantize_f32(const float* in, void* blocks, std::int64_t n) {
  require_whole_blocks("F32", n, 1);
  std::memcpy(blocks, in, static_cast<std::size_t>(n) * sizeof(float));
}

void dequantize_f16(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("F16", n, 1);
  for (std::int64_t i = 0; i < n; ++i) out[i] = f16_to_f32(load_block<std::uint16_t>(blocks, i));
}

void quantize_f16(const float* in, void* blocks, std::int64_t n) {
  require_whole_blocks("F16", n, 1);
  for (std::int64_t i = 0; i < n; ++i) store_block<std::uint16_t>(blocks, i, f32_to_f16(in[i]));
}

void dequantize_bf16(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("BF16", n, 1);
  for (std::int64_t i = 0; i < n; ++i) out[i] = bf16_to_f32(load_block<std::uint16_t>(blocks, i));
}

void quantize_bf16(const float* in, void* blocks, std::int64_t n) {
  require_whole_blocks("BF16", n, 1);
  for (std::int64_t i = 0; i < n; ++i) store_block<std::uint16_t>(blocks, i, f32_to_bf16(in[i]));
}

}  // namespace wisp::blocks
