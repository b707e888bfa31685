// How one cached K or V value is stored: the single definition of the KV element types, used by
// the pool (src/kv), the attention kernels (through kv_quant.h's row decoders) and the planner
// (src/plan), so that `wisp plan`'s predicted bytes are the bytes the pool really holds.
//
// Quantized types are group-wise along head_dim, within one head of one token: a group of
// `group_elems` consecutive values of one K (or V) head vector is stored in `group_bytes` bytes,
// codes plus that group's scale metadata. A head vector whose length is not a multiple of the group
// is padded to whole groups (its last group is partly empty), which bytes_for() counts.
//
//   f16   1 value in 2 bytes (IEEE half)                                        2     bytes/value
//   f32   1 value in 4 bytes                                                    4     bytes/value
//   q8_0  f16 scale + 32 int8 codes (the GGML Q8_0 block): 34 bytes / 32      = 1.0625 bytes/value
//   q4    f16 scale + f16 zero-point + 32 4-bit codes (16 bytes), asymmetric as DESIGN.md's
//         conventions: 20 bytes / 32                                          = 0.625 bytes/value
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace wisp {

enum class KvType : std::uint8_t {
  kF32,
  kF16,
  kQ8_0,
  kQ4,
};

struct KvTypeInfo {
  std::string_view name;      // "f16", "q8_0", "q4": the spelling of --kv-type
  std::uint32_t group_elems;  // values per group (1 for unquantized types)
  std::uint32_t group_bytes;  // bytes per group, scales included
  std::string_view layout;    // one line for --help and reports

  double bytes_per_element() const { return static_cast<double>(group_bytes) / static_cast<double>(group_elems); }
  // Bytes for `values` consecutive values of one head vector: whole groups.
  std::uint64_t bytes_for(std::uint64_t values) const { return (values + group_elems - 1) / group_elems * group_bytes; }
};

// The types the runtime stores, in the order help text lists them (f16, the default, first).
std::span<const KvTypeInfo> kv_types();
const KvTypeInfo& kv_type_info(KvType t);
std::string_view kv_type_name(KvType t);  // "f32", "f16", "q8_0", "q4"
// Case-insensitive lookups; throw wisp::Error listing the known names when `name` is unknown.
const KvTypeInfo& kv_type_by_name(std::string_view name);
KvType kv_type_from_name(std::string_view name);
// "f16, f32, q8_0, q4": for help text and messages.
std::string kv_type_names();

}  // namespace wisp
