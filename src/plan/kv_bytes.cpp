#include "plan/kv_bytes.h"

#include "plan/checked_math.h"
#include "wisp/error.h"

namespace wisp::plan {

void validate(const KvGeometry& g) {
  if (g.layers == 0) throw Error("layer count must be positive");
  if (g.kv_heads == 0) throw Error("KV head count must be positive");
  if (g.head_dim == 0) throw Error("head size must be positive");
}

std::uint64_t kv_bytes_per_token(std::uint64_t layers, std::uint64_t kv_heads, std::uint64_t head_dim,
                                 const KvElementType& type) {
  validate(KvGeometry{layers, kv_heads, head_dim});
  // Groups never straddle heads, so one head vector is the unit that rounds to whole groups.
  const std::uint64_t per_head = type.bytes_for(head_dim);
  const std::uint64_t per_layer = checked_mul(kv_heads, per_head, "KV bytes per layer");
  return checked_mul(2 * layers, per_layer, "KV bytes per token");
}

std::uint64_t kv_bytes_per_token(const KvGeometry& g, const KvElementType& type) {
  return kv_bytes_per_token(g.layers, g.kv_heads, g.head_dim, type);
}

std::uint64_t kv_bytes(const KvGeometry& g, const KvElementType& type, std::uint64_t tokens, std::uint64_t sequences) {
  const std::uint64_t per_sequence = checked_mul(tokens, kv_bytes_per_token(g, type), "KV bytes per sequence");
  return checked_mul(sequences, per_sequence, "KV bytes for the batch");
}

}  // namespace wisp::plan
