// The element types a safetensors header may name ("F16", "BF16", ...), with their bit widths.
// Every name the format defines is recognised, so a file holding, say, an I64 buffer still opens
// and the error comes only when someone asks to use that tensor as weights, naming its dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "formats/block_types.h"

namespace wisp {

enum class SafetensorsDtype : std::uint8_t {
  kBool,
  kU8,
  kI8,
  kF8_E5M2,
  kF8_E4M3,
  kF8_E5M2FNUZ,
  kF8_E4M3FNUZ,
  kF8_E8M0,
  kI16,
  kU16,
  kF16,
  kBF16,
  kI32,
  kU32,
  kF32,
  kF64,
  kI64,
  kU64,
  kC64,
  kF4,
  kF6_E2M3,
  kF6_E3M2,
};

struct SafetensorsDtypeInfo {
  SafetensorsDtype dtype;
  const char* name;  // as the header spells it
  unsigned bits;     // per element; F4/F6 are packed, so sizes are computed in bits
};

// nullptr when `name` is not a dtype the safetensors format defines (names are case-sensitive).
const SafetensorsDtypeInfo* find_safetensors_dtype(std::string_view name);
const SafetensorsDtypeInfo& safetensors_dtype_info(SafetensorsDtype dtype);
inline const char* safetensors_dtype_name(SafetensorsDtype dtype) { return safetensors_dtype_info(dtype).name; }

// The GGML type wisp loads a tensor of this dtype as: F32, F16 and BF16 only; nullopt otherwise.
std::optional<GgmlType> safetensors_to_ggml_type(SafetensorsDtype dtype);

}  // namespace wisp
