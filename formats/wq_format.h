// wisp's own group-wise quantized types ("WQ"): b-bit codes (b = 2, 3, 4, 5, 6, 8) in groups of
// g = 32, 64 or 128 consecutive values of a row (along ne[0]), each group with its own half-float
// scale s and integer zero-point z:  r_hat = s * (q - z). Byte layout: formats/FORMAT.md.
//
// The arithmetic follows the project's quantization conventions (DESIGN.md, shared/seeds C5-C10):
//   s = (r_max - r_min) / (2^b - 1)
//   z = clip(round(-r_min / s), 0, 2^b - 1)
//   q = clip(round(r / s) + z, 0, 2^b - 1)      round = round half up (floor(x + 0.5)), saturating
// and a constant group (r_min == r_max) is stored so that it decodes exactly (s = |c|, q - z = +-1).
//
// These types live in GGUF under ids >= 1000, which GGML does not use, so llama.cpp refuses a file
// holding them ("invalid ggml type") instead of misreading the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "formats/block_types.h"

namespace wisp {

inline constexpr std::uint32_t kWqTypeIdBase = 1000;
inline constexpr int kWqBits[] = {2, 3, 4, 5, 6, 8};
inline constexpr int kWqGroups[] = {32, 64, 128};
inline constexpr std::size_t kWqHeaderBytes = 4;  // f16 scale, u8 zero-point, u8 reserved (0)

// id = 1000 + 10 * bits + {0, 1, 2} for groups {32, 64, 128}: WQ4_G64 is 1041.
constexpr std::uint32_t wq_type_id(int bits, int group) {
  return kWqTypeIdBase + 10u * static_cast<std::uint32_t>(bits) + (group == 32 ? 0u : group == 64 ? 1u : 2u);
}
constexpr std::size_t wq_block_bytes(int bits, int group) {
  return kWqHeaderBytes + static_cast<std::size_t>(bits * group / 8);
}

// The code planes of a b-bit code (FORMAT.md, "Code planes"): 8 stays whole, else a low plane of
// 4 or 2 bits and at most one high plane of 2 or 1, low bits first; width[1] = 0 when there is one
// plane. Every packer, unpacker and kernel takes the widths from here.
struct WqPlaneWidths {
  int n = 0;
  int width[2] = {0, 0};
};
constexpr WqPlaneWidths wq_plane_widths(int bits) {
  switch (bits) {
    case 2: return {1, {2, 0}};
    case 3: return {2, {2, 1}};
    case 4: return {1, {4, 0}};
    case 5: return {2, {4, 1}};
    case 6: return {2, {4, 2}};
    default: return {1, {8, 0}};
  }
}
// The same as constants of the code width, for the kernels' templates.
template <int B>
struct WqPlanes {
  static constexpr int W0 = wq_plane_widths(B).width[0];
  static constexpr int W1 = wq_plane_widths(B).width[1];
};

struct WqFormat {
  int bits = 4;
  int group = 32;
  std::uint32_t id() const { return wq_type_id(bits, group); }
  std::size_t block_bytes() const { return wq_block_bytes(bits, group); }
  int max_code() const { return (1 << bits) - 1; }
};

// The WQ format of a registered type id, or bits = 0 when `id` is not a WQ type.
WqFormat wq_format(std::uint32_t id);
bool is_wq_type(std::uint32_t id);

// The WQ entries of the block-type registry (find_block_type() finds them too), in id order.
std::span<const BlockTypeInfo> all_wq_block_types();

// ---- the conventions as plain functions (the seeds' worked examples test these) -----------------

struct WqParams {
  float scale = 0;  // s
  int zero = 0;     // z
};

// s and z for the range [r_min, r_max] at `bits`, in float, exactly as the formulas read.
// A degenerate range (r_min == r_max == c) gives s = |c| so that one code step reconstructs c.
WqParams wq_params(float r_min, float r_max, int bits);
// q = clip(floor(r / s + 0.5) + z, 0, 2^b - 1); with s == 0 every value maps to z.
int wq_code(float r, const WqParams& p, int bits);
inline float wq_value(int q, const WqParams& p) { return p.scale * static_cast<float>(q - p.zero); }

// The parameters as a block stores them for the range [r_min, r_max]: the range is first widened
// to contain 0 (so z is always inside [0, 2^b - 1] and 0 is a code; see FORMAT.md), s is rounded to
// half precision (saturating at 65504) and z is computed from that rounded s, so encoder and decoder
// agree. A constant range keeps its value (s = |c|).
WqParams wq_stored_params(float r_min, float r_max, int bits);

// ---- one group <-> one block --------------------------------------------------------------------

// Packs `group` codes (each < 2^bits) into the code planes of a block (after the header).
void wq_pack_codes(const std::uint8_t* codes, int bits, int group, std::uint8_t* planes);
void wq_unpack_codes(const std::uint8_t* planes, int bits, int group, std::uint8_t* codes);

// Encodes `group` values with stored parameters `p` (from wq_stored_params) into one block.
void wq_encode_group(const float* x, const WqFormat& f, const WqParams& p, std::uint8_t* block);
// Encodes with the plain min/max range of the group (the registry's reference quantizer).
void wq_encode_group_minmax(const float* x, const WqFormat& f, std::uint8_t* block);
// Decodes one block into `group` floats.
void wq_decode_group(const std::uint8_t* block, const WqFormat& f, float* out);

// Row helpers over n values (a multiple of the group); throw wisp::Error naming the type otherwise.
void wq_quantize_row(const WqFormat& f, const float* x, void* blocks, std::int64_t n);
void wq_dequantize_row(const WqFormat& f, const void* blocks, float* out, std::int64_t n);

std::string wq_type_name(int bits, int group);  // "WQ4_G32"

}  // namespace wisp
