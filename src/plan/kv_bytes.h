// KV cache bytes: the one formula of DESIGN.md,
//   KV bytes = 2 (K and V) · B · S · L · n_kv_heads · head_dim · bytes_per_element,
// computed exactly in integers (group-wise types via KvElementType::bytes_for).
// The runtime KV pool sizes its blocks with kv_bytes_per_token() so plan and pool agree.
#pragma once

#include <cstdint>

#include "plan/kv_types.h"

namespace wisp::plan {

// The attention shape that decides cache size. For a model described only by d_model (plain
// multi-head attention) kv_heads · head_dim = d_model; any split gives the same bytes for
// unquantized types, so by-hand plans use kv_heads = 1, head_dim = d_model.
struct KvGeometry {
  std::uint64_t layers = 0;
  std::uint64_t kv_heads = 0;
  std::uint64_t head_dim = 0;

  std::uint64_t kv_width() const { return kv_heads * head_dim; }  // values per token per layer
};

// Throws wisp::Error naming the field when any size is zero.
void validate(const KvGeometry& g);

// Bytes one token occupies in the cache: K and V, every layer, every KV head.
std::uint64_t kv_bytes_per_token(std::uint64_t layers, std::uint64_t kv_heads, std::uint64_t head_dim,
                                 const KvElementType& type);
std::uint64_t kv_bytes_per_token(const KvGeometry& g, const KvElementType& type);

// Exact (unpaged) bytes for `sequences` sequences of `tokens` tokens each.
std::uint64_t kv_bytes(const KvGeometry& g, const KvElementType& type, std::uint64_t tokens,
                       std::uint64_t sequences = 1);

}  // namespace wisp::plan
