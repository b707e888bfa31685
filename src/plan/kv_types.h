// The KV element types the planner prices. They are the runtime's own (src/kv/kv_type.h: the one
// definition of f16, f32, q8_0 and q4 and their group sizes), so `wisp plan`'s bytes per token are
// the bytes the KV pool stores; this header only adds the by-hand "plain" type of the seeds.
#pragma once

#include <cstdint>

#include "kv/kv_type.h"

namespace wisp::plan {

using KvElementType = wisp::KvTypeInfo;
using wisp::kv_type_by_name;
using wisp::kv_type_names;
using wisp::kv_types;

// A plain p-bytes-per-value type with no scales, for hand arithmetic like the seeds'
// "INT8, p = 1" (not a type the runtime stores).
KvElementType kv_plain_type(std::uint32_t bytes_per_value);

}  // namespace wisp::plan
