// How one cached K or V value is stored, in bytes. This is the single definition the planner and
// the runtime KV pool (src/kv/, later) share, so that `wisp plan`'s predicted bytes are the bytes
// the pool really holds.
//
// Quantized types are group-wise along head_dim, within one head of one token: a group of
// `group_elems` consecutive values of one K (or V) head vector is stored in `group_bytes` bytes,
// codes plus that group's scale metadata. A head vector whose length is not a multiple of the group
// is padded to whole groups (its last group is partly empty), which bytes_for() counts.
//
//   f16   1 value in 2 bytes                                                    2     bytes/value
//   f32   1 value in 4 bytes (what src/kv stores today)                         4     bytes/value
//   q8_0  32 int8 codes + one f16 scale (the GGML Q8_0 block): 34 bytes / 32  = 1.0625 bytes/value
//   q4    32 4-bit codes (16 bytes) + one f16 scale + one f16 zero-point
//         (asymmetric, as DESIGN.md's conventions; the Q4_1 block shape): 20 bytes / 32
//                                                                             = 0.625 bytes/value
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace wisp::plan {

struct KvElementType {
  std::string_view name;     // "f16", "q8_0", "q4": the spelling of --kv-type
  std::uint32_t group_elems;  // values per group (1 for unquantized types)
  std::uint32_t group_bytes;  // bytes per group, scales included
  std::string_view layout;    // one line for --help and reports

  double bytes_per_element() const {
    return static_cast<double>(group_bytes) / static_cast<double>(group_elems);
  }
  // Bytes for `values` consecutive values of one head vector: whole groups.
  std::uint64_t bytes_for(std::uint64_t values) const {
    return (values + group_elems - 1) / group_elems * group_bytes;
  }
};

// The KV types --kv-type accepts: the runtime's (src/kv/kv_layout.h) and the quantized ones it
// is to store with exactly these group sizes.
std::span<const KvElementType> kv_types();
// Case-insensitive lookup; throws wisp::Error listing the known names when `name` is unknown.
const KvElementType& kv_type_by_name(std::string_view name);
// "f16, q8_0, q4": for help text and messages.
std::string kv_type_names();
// A plain p-bytes-per-value type with no scales, for hand arithmetic like the seeds'
// "INT8, p = 1" (not a type the runtime stores).
KvElementType kv_plain_type(std::uint32_t bytes_per_value);

}  // namespace wisp::plan
