// Paged KV cache bookkeeping: which fixed-size blocks of the pool each sequence owns.
//
// Pure bookkeeping, no K/V bytes: the same allocator serves host storage today and device storage
// later (KvStorage). A pool holds n_blocks blocks of block_size token slots. A sequence is a block
// table plus a token count; it grows one block at a time, so it wastes at most block_size - 1 slots
// in its tail. Blocks are refcounted so a fork shares its parent's blocks (prefix sharing); the
// first append into a shared, partly filled tail copies that block (copy-on-write) and reports the
// copy so the storage layer can move the bytes.
//
// Automatic prefix caching (as vLLM's): a FULL block whose K/V the engine has computed can be
// published under a content hash that chains the hashes of all blocks before it
// (chain_hash(parent, tokens)), so the hash names the whole prefix up to the block's end. A new
// sequence whose prompt starts with the same tokens attaches those blocks (attach_cached) instead
// of recomputing them. A published block whose last holder lets go keeps its K/V: it is parked in
// an LRU set of cached blocks rather than freed, and is evicted (unpublished and reused) only when
// the free list is empty. Published content is immutable: no append writes into a published block
// (a partly filled published tail is copied first), and truncating into one a sequence holds
// alone unpublishes it. Every block is exactly one of: referenced (refcount > 0), free (refcount 0,
// unpublished) or cached (refcount 0, published).
//
// Not thread-safe: the engine (scheduler) serializes every call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace wisp {

using BlockId = std::uint32_t;
using SeqId = std::uint32_t;
// Content hash of a full block and everything before it (see BlockAllocator::chain_hash).
using BlockHash = std::uint64_t;

// "Copy token slots [0, n_tokens) of block src into block dst": what a copy-on-write asks of the
// storage layer before the appending sequence writes into dst.
struct BlockCopy {
  BlockId src = 0;
  BlockId dst = 0;
  std::uint32_t n_tokens = 0;

  bool operator==(const BlockCopy&) const = default;
};

// What an append changed besides the token count: at most one copy-on-write (only the tail block
// can be both shared and partly filled).
struct Growth {
  std::optional<BlockCopy> copy;
};

// Where token `pos` of a sequence lives: block and slot within it.
struct TokenSlot {
  BlockId block = 0;
  std::uint32_t offset = 0;
};

class BlockAllocator {
 public:
  static constexpr std::uint32_t kDefaultBlockSize = 16;

  // Throws wisp::Error when n_blocks or block_size is 0.
  explicit BlockAllocator(std::uint32_t n_blocks, std::uint32_t block_size = kDefaultBlockSize);

  // A new, empty sequence (holds no blocks until it grows).
  SeqId create();
  // A new sequence sharing every block of `parent` (refcount + 1 each); same token count.
  SeqId fork(SeqId parent);
  // Drops the sequence: each of its blocks loses a reference; at 0 a published block joins the
  // cached set, any other returns to the free list.
  void release(SeqId seq);
  // Keeps the first n_tokens tokens; blocks past them lose a reference. n_tokens > length throws.
  // Cutting into a published block this sequence holds alone unpublishes it (its free slots will
  // be written); a shared one stays published and the next append copies it.
  void truncate(SeqId seq, std::size_t n_tokens);

  // Reserves n_tokens more slots at the end of `seq`, taking free blocks first and evicting cached
  // ones only when none is free. All or nothing: on exhaustion it throws a wisp::Error that says
  // how many blocks were needed and how many are available, and changes nothing.
  [[nodiscard]] Growth append(SeqId seq, std::size_t n_tokens);
  // As append, but returns false (changing nothing) where the pool has too few available blocks.
  [[nodiscard]] bool try_append(SeqId seq, std::size_t n_tokens, Growth& out);
  // Blocks an append of n_tokens would take (counting a copy-on-write) from the available ones
  // (free or cached, see n_available): for admission control.
  std::size_t blocks_needed(SeqId seq, std::size_t n_tokens) const;

  // Prefix cache.
  // The hash chain's seed: the parent of a sequence's first block.
  static constexpr BlockHash kRootHash = 0x6a09e667f3bcc908ULL;
  // Hash of a block holding `tokens` whose predecessor hashed to `parent` (kRootHash for block 0).
  // Deterministic across runs and platforms (no std::hash): a 64-bit mix of the parent and every
  // token, so the hash of block i stands for all tokens [0, (i + 1) * block_size).
  static BlockHash chain_hash(BlockHash parent, std::span<const std::int32_t> tokens);
  // chain_hash of every full block of `tokens` (tokens.size() / block_size hashes): what
  // attach_cached takes for a prompt, and publish takes for block i.
  std::vector<BlockHash> block_hashes(std::span<const std::int32_t> tokens) const;
  // Marks block `block_index` of seq's table, which must be full and hold `tokens`
  // (block_size of them), as cached content under `hash`; call it once the block's K/V are
  // written, since the block can never be written again while published. Returns false and
  // changes nothing when another block already holds `hash` (the content is cached already);
  // true when the block is now (or already was) published under `hash`. Throws wisp::Error for an
  // unknown sequence, a block that is not full or not in the table, a token count that is not
  // block_size, or a block already published under another hash or other tokens.
  bool publish(SeqId seq, std::size_t block_index, BlockHash hash, std::span<const std::int32_t> tokens);
  // Fills the empty sequence `seq` with cached blocks: block i is attached while hashes[i] is
  // published with exactly the tokens [i * block_size, (i + 1) * block_size) of `tokens`; the
  // first miss stops the walk. Comparing the tokens makes a collision between blocks of different
  // tokens harmless. Block i's K/V also depend on the blocks before it, which only the chain hash
  // covers: two prefixes that differ before block i, agree in it and collide in all 64 bits would
  // still share it (odds about 2^-64 per pair of prefixes).
  // Attached blocks gain a reference (leaving the cached set if they had none) and the sequence
  // holds block_size tokens more for each. Returns the number of blocks attached; the caller
  // computes the rest of the prompt. It should pass hashes only for blocks before the one holding
  // the prompt's last token, whose logits it needs anyway. Throws wisp::Error when seq is unknown
  // or not empty, or when tokens holds fewer than hashes.size() * block_size tokens.
  std::size_t attach_cached(SeqId seq, std::span<const BlockHash> hashes, std::span<const std::int32_t> tokens);
  // Moves every cached block to the free list (unpublishing it); referenced blocks keep their
  // publication, so they are cached again when released.
  void clear_cache();
  bool is_published(BlockId block) const;  // throws for an out-of-range block
  // Cumulative counters, in blocks: hashes offered to attach_cached, blocks it attached, and cached
  // blocks evicted to serve an allocation.
  std::size_t prefix_queries() const { return prefix_queries_; }
  std::size_t prefix_hits() const { return prefix_hits_; }
  std::size_t n_evictions() const { return n_evictions_; }

  // Queries.
  bool contains(SeqId seq) const { return seqs_.contains(seq); }
  std::size_t n_tokens(SeqId seq) const;
  std::span<const BlockId> block_table(SeqId seq) const;
  TokenSlot locate(SeqId seq, std::size_t pos) const;  // pos < n_tokens(seq), else throws
  std::uint32_t refcount(BlockId block) const;
  std::uint32_t block_size() const { return block_size_; }
  std::uint32_t n_blocks() const { return static_cast<std::uint32_t>(blocks_.size()); }
  // Blocks on the plain free list (unreferenced, holding nothing worth keeping).
  std::uint32_t n_free() const { return static_cast<std::uint32_t>(free_.size()); }
  // Unreferenced published blocks: cached K/V, evicted (least recently released first) on demand.
  std::uint32_t n_cached() const { return lru_size_; }
  // What an allocation can take: n_free() + n_cached(). Every capacity check uses this.
  std::uint32_t n_available() const { return n_free() + n_cached(); }
  std::size_t n_sequences() const { return seqs_.size(); }
  // Blocks needed to hold n tokens: ceil(n / block_size).
  std::size_t blocks_for(std::size_t n_tokens) const { return (n_tokens + block_size_ - 1) / block_size_; }

  // Recomputes every refcount from the block tables and checks them, the free list, the cached
  // (LRU) set, the hash index and each table's length against the stored state: every block is
  // exactly one of referenced, free, cached; cached blocks are unreferenced and published; the
  // hash index and the blocks' hashes agree. Throws wisp::Error naming the first inconsistency.
  // For tests and debug builds: O(blocks + table entries).
  void check_consistency() const;

 private:
  static constexpr BlockId kNoBlock = UINT32_MAX;

  struct Sequence {
    std::vector<BlockId> blocks;
    std::size_t n_tokens = 0;
  };

  // Per-block state. lru_prev/lru_next link the cached blocks (intrusive, so joining, leaving and
  // evicting are O(1) without allocating); they are kNoBlock for blocks not in the cached set.
  struct Block {
    std::uint32_t refcount = 0;
    bool published = false;
    BlockHash hash = 0;  // meaningful only while published
    BlockId lru_prev = kNoBlock;
    BlockId lru_next = kNoBlock;
  };

  Sequence& get(SeqId seq);
  const Sequence& get(SeqId seq) const;
  void check_block(BlockId block) const;
  BlockId take_free_block();
  void drop_ref(BlockId block);
  void add_ref(BlockId block);
  bool tail_needs_copy(const Sequence& s) const;
  void unpublish(BlockId block);
  bool stored_tokens_equal(BlockId block, std::span<const std::int32_t> tokens) const;
  void lru_push_back(BlockId block);
  void lru_unlink(BlockId block);
  [[noreturn]] void throw_exhausted(SeqId seq, std::size_t needed) const;
  void check_lru(std::vector<bool>& in_lru) const;
  void check_hash_index() const;

  std::uint32_t block_size_;
  std::vector<Block> blocks_;
  std::vector<BlockId> free_;  // stack; the back is handed out next
  // Cached set: unreferenced published blocks, least recently released at the head (evicted first).
  BlockId lru_head_ = kNoBlock;
  BlockId lru_tail_ = kNoBlock;
  std::uint32_t lru_size_ = 0;
  std::unordered_map<BlockHash, BlockId> by_hash_;  // published blocks only
  // Tokens of published blocks, block_size per block, indexed by block id. Sized on the first
  // publish, so a pool that never caches prefixes pays nothing for it.
  std::vector<std::int32_t> block_tokens_;
  std::unordered_map<SeqId, Sequence> seqs_;
  SeqId next_id_ = 0;  // ids are never reused, so a stale id cannot name a newer sequence
  std::size_t prefix_queries_ = 0;
  std::size_t prefix_hits_ = 0;
  std::size_t n_evictions_ = 0;
};

}  // namespace wisp
