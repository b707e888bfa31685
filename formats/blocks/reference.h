// Scalar reference kernels behind the block-type registry (formats/block_types.h): one
// dequantize per registered type and a quantize for the simple ones. They define what each type
// means; optimized kernels elsewhere are tested against them. Internal to formats/: everyone
// else reaches these through the registry.
//
// Every function takes a count of values that must be a whole number of blocks (a row of a
// GGUF tensor always is) and throws wisp::Error naming the type otherwise.
#pragma once

#include <cstdint>
#include <cstring>

namespace wisp::blocks {

// Throws wisp::Error unless n_elems is a non-negative multiple of block_elems.
void require_whole_blocks(const char* type_name, std::int64_t n_elems, std::int64_t block_elems);

// Block i of a packed array, copied out so an unaligned source is never read through a cast.
template <typename Block>
inline Block load_block(const void* blocks, std::int64_t i) {
  Block b;
  std::memcpy(&b, static_cast<const std::uint8_t*>(blocks) + i * static_cast<std::int64_t>(sizeof(Block)),
              sizeof(Block));
  return b;
}

template <typename Block>
inline void store_block(void* blocks, std::int64_t i, const Block& b) {
  std::memcpy(static_cast<std::uint8_t*>(blocks) + i * static_cast<std::int64_t>(sizeof(Block)), &b, sizeof(Block));
}

// float.cpp
void dequantize_f32(const void* blocks, float* out, std::int64_t n);
void quantize_f32(const float* in, void* blocks, std::int64_t n);
void dequantize_f16(const void* blocks, float* out, std::int64_t n);
void quantize_f16(const float* in, void* blocks, std::int64_t n);
void dequantize_bf16(const void* blocks, float* out, std::int64_t n);
void quantize_bf16(const float* in, void* blocks, std::int64_t n);

// q4_0.cpp, q4_1.cpp, q5_0.cpp, q5_1.cpp, q8_0.cpp
void dequantize_q4_0(const void* blocks, float* out, std::int64_t n);
void quantize_q4_0(const float* in, void* blocks, std::int64_t n);
void dequantize_q4_1(const void* blocks, float* out, std::int64_t n);
void quantize_q4_1(const float* in, void* blocks, std::int64_t n);
void dequantize_q5_0(const void* blocks, float* out, std::int64_t n);
void quantize_q5_0(const float* in, void* blocks, std::int64_t n);
void dequantize_q5_1(const void* blocks, float* out, std::int64_t n);
void quantize_q5_1(const float* in, void* blocks, std::int64_t n);
void dequantize_q8_0(const void* blocks, float* out, std::int64_t n);
void quantize_q8_0(const float* in, void* blocks, std::int64_t n);

// q2_k.cpp .. q6_k.cpp (dequantize only: the K-quant quantizers search for scales and are not
// part of the reference set)
void dequantize_q2_k(const void* blocks, float* out, std::int64_t n);
void dequantize_q3_k(const void* blocks, float* out, std::int64_t n);
void dequantize_q4_k(const void* blocks, float* out, std::int64_t n);
void dequantize_q5_k(const void* blocks, float* out, std::int64_t n);
void dequantize_q6_k(const void* blocks, float* out, std::int64_t n);

// iq4.cpp, ternary.cpp, mxfp4.cpp, nvfp4.cpp (dequantize only: llama.cpp's quantizers for these search
// for scales, or need an importance matrix, and are not part of the reference set)
void dequantize_iq4_nl(const void* blocks, float* out, std::int64_t n);
void dequantize_iq4_xs(const void* blocks, float* out, std::int64_t n);
void dequantize_tq1_0(const void* blocks, float* out, std::int64_t n);
void dequantize_tq2_0(const void* blocks, float* out, std::int64_t n);
void dequantize_mxfp4(const void* blocks, float* out, std::int64_t n);
void dequantize_nvfp4(const void* blocks, float* out, std::int64_t n);

// iq2.cpp, iq3.cpp, iq1.cpp: the grid types (dequantize only: their quantizers need an importance
// matrix and a grid search)
void dequantize_iq2_xxs(const void* blocks, float* out, std::int64_t n);
void dequantize_iq2_xs(const void* blocks, float* out, std::int64_t n);
void dequantize_iq2_s(const void* blocks, float* out, std::int64_t n);
void dequantize_iq3_xxs(const void* blocks, float* out, std::int64_t n);
void dequantize_iq3_s(const void* blocks, float* out, std::int64_t n);
void dequantize_iq1_s(const void* blocks, float* out, std::int64_t n);
void dequantize_iq1_m(const void* blocks, float* out, std::int64_t n);

}  // namespace wisp::blocks
