// The shape and byte arithmetic of a KV pool: how many layers, heads and dimensions one token
// stores, in which element type, and where each row sits inside a block.
//
// Block layout: [layer][K|V][kv_head][token][head_dim]. One block is one contiguous range of
// bytes_per_block() bytes, so a copy-on-write, an offload or a host<->device transfer moves whole
// blocks as single ranges. Inside it, the rows of one (layer, K|V, head) are adjacent token after
// token: attention for one head walks a block as block_size contiguous rows of head_dim values,
// which streams through the cache and vectorizes over tokens, and the model's write of a new token
// touches one row per (layer, K|V, head).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kv/kv_type.h"

namespace wisp {

enum class KvKind : std::uint32_t { kKey = 0, kValue = 1 };

struct KvLayout {
  std::uint32_t n_layers = 0;
  std::uint32_t n_kv_heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t block_size = 16;
  KvType type = KvType::kF32;

  // Throws wisp::Error naming the field when a dimension is 0.
  void validate() const;

  // One token's K (or V) for one head: head_dim values in whole groups of the element type.
  std::size_t row_bytes() const { return kv_type_info(type).bytes_for(head_dim); }
  // 2 (K and V) * n_layers * n_kv_heads * row_bytes: DESIGN.md's formula per token (group-wise types
  // round each head vector up to whole groups, as the planner does).
  std::size_t bytes_per_token() const { return 2 * std::size_t{n_layers} * n_kv_heads * row_bytes(); }
  std::size_t bytes_per_block() const { return bytes_per_token() * block_size; }
  // Byte offset, inside a block, of the row of token slot `slot` for (layer, kind, head).
  std::size_t row_offset(std::uint32_t layer, KvKind kind, std::uint32_t head, std::uint32_t slot) const {
    const std::size_t plane = (std::size_t{layer} * 2 + static_cast<std::uint32_t>(kind)) * n_kv_heads + head;
    return (plane * block_size + slot) * row_bytes();
  }
  // Bytes from one (layer, kind, head) plane to the next inside a block.
  std::size_t plane_bytes() const { return std::size_t{block_size} * row_bytes(); }
};

}  // namespace wisp
