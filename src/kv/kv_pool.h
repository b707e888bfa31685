// The paged KV cache: a BlockAllocator (which blocks each sequence owns) over a KvStorage (the
// bytes), shared by every sequence of a model: a chat session, or many requests of a server.
//
// The model's use per eval of n tokens at positions [p, p + n):
//   pool.append(seq, n);                                   // reserve slots, copy-on-write if needed
//   for each layer l, token t: pool.write(seq, l, p + t, k_row_t, v_row_t);  // encoded to the type
//   attention over positions [0, p + t]: walk pool.block_table(seq); for block i, head h the
//   keys are pool.plane_data(block, l, kKey, h): block_size rows of layout().row_bytes() bytes,
//   tokens i*block_size ... (only the first n_tokens - i*block_size rows of the last block are
//   valid), which the attention kernel decodes row by row (kv_quant.h). The element type is f16
//   by default (EngineOptions::kv_type), q8_0 or q4 when asked; an f32 pool (calibration, tests)
//   can also be read in place as floats through keys()/values().
// Not thread-safe for bookkeeping calls; writes to distinct sequences' own blocks and reads may
// run in parallel once the appends of a step are done.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "kv/block_allocator.h"
#include "kv/kv_layout.h"
#include "kv/kv_storage.h"

namespace wisp {

class KvPool {
 public:
  // A pool of n_blocks blocks in host memory (layout.block_size tokens each); `resident`: its
  // memory committed at once (HostKvStorage).
  KvPool(const KvLayout& layout, std::uint32_t n_blocks, bool resident = false);
  // A pool over storage supplied by a backend (device memory, a test double, ...).
  explicit KvPool(std::unique_ptr<KvStorage> storage);

  // Sequences (see BlockAllocator for the semantics).
  SeqId create_sequence() { return alloc_.create(); }
  SeqId fork(SeqId parent) { return alloc_.fork(parent); }
  void free_sequence(SeqId seq) { alloc_.release(seq); }
  void truncate(SeqId seq, std::size_t n_tokens) { alloc_.truncate(seq, n_tokens); }
  // Reserves n_tokens slots after the sequence's current end and performs any copy-on-write in
  // storage. Throws wisp::Error "KV pool exhausted: ..." (and changes nothing) when out of blocks.
  void append(SeqId seq, std::size_t n_tokens);
  // As append, but returns false and changes nothing when the pool is out of blocks.
  [[nodiscard]] bool try_append(SeqId seq, std::size_t n_tokens);
  std::size_t n_tokens(SeqId seq) const { return alloc_.n_tokens(seq); }
  std::span<const BlockId> block_table(SeqId seq) const { return alloc_.block_table(seq); }

  // Prefix cache (see BlockAllocator). Bookkeeping only: a cached block keeps its K/V bytes in
  // storage, so attaching one moves nothing. Publish a block only after writing all its K/V:
  // write() refuses published blocks.
  bool publish(SeqId seq, std::size_t block_index, BlockHash hash, std::span<const std::int32_t> tokens) {
    return alloc_.publish(seq, block_index, hash, tokens);
  }
  std::size_t attach_cached(SeqId seq, std::span<const BlockHash> hashes, std::span<const std::int32_t> tokens) {
    return alloc_.attach_cached(seq, hashes, tokens);
  }
  void clear_cache() { alloc_.clear_cache(); }
  std::size_t prefix_queries() const { return alloc_.prefix_queries(); }
  std::size_t prefix_hits() const { return alloc_.prefix_hits(); }
  std::size_t n_evictions() const { return alloc_.n_evictions(); }
  std::uint32_t n_cached() const { return alloc_.n_cached(); }
  // Blocks an append can take, free or cached: what capacity checks should use.
  std::uint32_t n_available() const { return alloc_.n_available(); }

  // F32 host access by token position, f32 pools only (goes through the block table; for tests:
  // attention walks block_table() with plane_data(), or keys()/values()). pos < n_tokens(seq).
  float* k(SeqId seq, std::uint32_t layer, std::uint32_t head, std::size_t pos);
  float* v(SeqId seq, std::uint32_t layer, std::uint32_t head, std::size_t pos);
  const float* k(SeqId seq, std::uint32_t layer, std::uint32_t head, std::size_t pos) const;
  const float* v(SeqId seq, std::uint32_t layer, std::uint32_t head, std::size_t pos) const;

  // Stores one token's K and V for one layer, all kv heads: k_row and v_row are
  // [n_kv_heads][head_dim] as the projections produce them, encoded into the pool's element type
  // (rounded to half for f16, quantized per group of 32 for q8_0 and q4). The slot must be reserved (append)
  // and owned by this sequence alone; writing into a block another sequence shares, or into a
  // published (cached) block, throws rather than corrupting the other sequence or the cache.
  void write(SeqId seq, std::uint32_t layer, std::size_t pos, std::span<const float> k_row,
             std::span<const float> v_row);

  // One block's plane for (layer, head): block_size rows of head_dim floats, token slot order.
  // f32 pools only (see check_f32_host); other types read plane_data().
  const float* keys(BlockId block, std::uint32_t layer, std::uint32_t head) const;
  const float* values(BlockId block, std::uint32_t layer, std::uint32_t head) const;
  // The same plane as bytes, for any element type in host memory: block_size rows of
  // layout().row_bytes() bytes each (kv_quant.h decodes them).
  const std::byte* plane_data(BlockId block, std::uint32_t layer, KvKind kind, std::uint32_t head) const;

  // Accounting, in bytes, for `wisp plan` to check its predictions against.
  std::size_t bytes_per_token() const { return layout().bytes_per_token(); }
  // Bytes of the blocks in seq's table: blocks_for(n_tokens) * bytes_per_block. A block shared
  // with a fork counts in full for each sequence holding it; bytes_in_use() counts it once.
  std::size_t bytes_held(SeqId seq) const { return alloc_.block_table(seq).size() * layout().bytes_per_block(); }
  // Blocks some sequence references. Cached blocks are not in use: an allocation takes them.
  std::size_t bytes_in_use() const {
    return std::size_t{alloc_.n_blocks() - alloc_.n_available()} * layout().bytes_per_block();
  }
  // Blocks held only by the prefix cache (unreferenced, kept until evicted).
  std::size_t bytes_cached() const { return std::size_t{alloc_.n_cached()} * layout().bytes_per_block(); }
  std::size_t bytes_total() const { return storage_->bytes_total(); }

  const KvLayout& layout() const { return storage_->layout(); }
  const BlockAllocator& allocator() const { return alloc_; }
  KvStorage& storage() { return *storage_; }

 private:
  float* row(SeqId seq, std::uint32_t layer, KvKind kind, std::uint32_t head, std::size_t pos) const;
  // Mutable rows from const methods: the pool's constness guards bookkeeping, not the K/V bytes.
  float* plane(BlockId block, std::uint32_t layer, KvKind kind, std::uint32_t head) const;
  std::byte* plane_bytes(BlockId block, std::uint32_t layer, KvKind kind, std::uint32_t head) const;
  void check_head(std::uint32_t layer, std::uint32_t head) const;
  void check_f32_host() const;

  std::unique_ptr<KvStorage> storage_;
  BlockAllocator alloc_;
  bool host_f32_ = false;  // float accessors work only on f32 bytes the CPU can address
};

}  // namespace wisp
