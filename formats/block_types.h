// The registry of tensor block types: the GGML standard types (ids as GGUF stores them) and,
// later, wisp's own group-wise types under ids of their own (formats/FORMAT.md).
// Each type has a scalar reference dequantize (bit-exact with the `gguf` Python package's numpy
// implementation) and, where the type is simple, a reference quantize.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace wisp {

// GGML type ids as stored in GGUF tensor infos.
enum class GgmlType : std::uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
  kNVFP4 = 40,
};

// Dequantize `n_elems` values (a whole number of blocks) from packed blocks into `out`.
using DequantizeFn = void (*)(const void* blocks, float* out, std::int64_t n_elems);
// Quantize `n_elems` values (a whole number of blocks) into packed blocks.
using QuantizeFn = void (*)(const float* in, void* blocks, std::int64_t n_elems);

struct BlockTypeInfo {
  std::uint32_t id;
  const char* name;          // "Q4_1", "F16", ... as GGUF tools spell it
  std::int64_t block_elems;  // values per block (1 for F32/F16/BF16)
  std::size_t block_bytes;   // bytes per block
  DequantizeFn dequantize;   // never null for a registered type
  QuantizeFn quantize;       // null where no reference quantizer exists

  double bits_per_weight() const { return 8.0 * static_cast<double>(block_bytes) / static_cast<double>(block_elems); }
  // Bytes for a row of `n` values; `n` must be a multiple of block_elems.
  std::size_t row_bytes(std::int64_t n) const { return static_cast<std::size_t>(n / block_elems) * block_bytes; }
};

// nullptr when `id` is not a type wisp can load.
const BlockTypeInfo* find_block_type(std::uint32_t id);
// Case-insensitive lookup by name ("q4_1", "Q4_K"); nullptr when unknown.
const BlockTypeInfo* find_block_type(std::string_view name);
// The registered entry for a known type (never null).
const BlockTypeInfo& block_type(GgmlType t);
// Every registered GGML type, in id order (wisp's own WQ types: all_wq_block_types() in
// formats/wq_format.h; find_block_type() finds both).
std::span<const BlockTypeInfo> all_block_types();
// GGML's name for a type id GGUF files may carry, whether or not wisp implements it ("IQ2_XXS"
// for 16); nullptr for an id GGML does not define. For error messages.
const char* ggml_type_name(std::uint32_t id);
// The names of every type wisp reads ("F32, F16, Q4_0, ..."), GGML's and its own, in id order.
std::string supported_block_type_names();

}  // namespace wisp
