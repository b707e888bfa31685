// What the planner needs to know about a model: its parameter count, its KV geometry and, when
// read from a file, the bytes its weights really take there and the share a decode step reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/decode_reads.h"
#include "plan/kv_bytes.h"

namespace wisp::plan {

struct ModelShape {
  std::string source;        // the file path, or "by hand"
  std::string architecture;  // "llama", "gemma3", ... ("" by hand)
  double params = 0;         // 0 when not known
  KvGeometry kv;
  // True when kv_heads · head_dim came from d_model alone (plain multi-head attention, the head
  // split unknown): reports then speak of the K/V width rather than of heads.
  bool kv_width_from_d_model = false;
  std::optional<std::uint64_t> file_weight_bytes;  // sum of the file's tensor bytes
  // What a decode step reads of those weights (from a file): all but the unchosen experts and,
  // with an untied output, all but one embedding row. Absent by hand: a step reads every weight.
  std::optional<DecodeReads> reads;
  std::optional<std::uint64_t> context_length;  // the model's trained context, when stored
  // Sliding-window attention (gemma3): the window in tokens, when the file stores one. wisp's KV
  // pool still caches every layer at full length (one block table for all layers), so the KV
  // bytes do not depend on it; reports say so.
  std::optional<std::uint64_t> sliding_window;
};

}  // namespace wisp::plan
