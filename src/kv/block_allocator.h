// Paged KV cache bookkeeping: which fixed-size blocks of the pool each sequence owns.
//
// Pure bookkeeping, no K/V bytes: the same allocator serves host storage today and device storage
// later (KvStorage). A pool holds n_blocks blocks of block_size token slots. A sequence is a block
// table plus a token count; it grows one block at a time, so it wastes at most block_size - 1 slots
// in its tail. Blocks are refcounted so a fork shares its parent's blocks (prefix sharing); the
// first append into a shared, partly filled tail copies that block (copy-on-write) and reports the
// copy so the storage layer can move the bytes. Not thread-safe: a scheduler serializes calls.
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
  // Drops the sequence: each of its blocks loses a reference and returns to the free list at 0.
  void release(SeqId seq);
  // Keeps the first n_tokens tokens; blocks past them lose a reference. n_tokens > length throws.
  void truncate(SeqId seq, std::size_t n_tokens);

  // Reserves n_tokens more slots at the end of `seq`. All or nothing: on exhaustion it throws a
  // wisp::Error that says how many blocks were needed and how many are free, and changes nothing.
  [[nodiscard]] Growth append(SeqId seq, std::size_t n_tokens);
  // As append, but returns false (changing nothing) where the pool has too few free blocks.
  [[nodiscard]] bool try_append(SeqId seq, std::size_t n_tokens, Growth& out);
  // Free blocks an append of n_tokens would take (counting a copy-on-write): for admission control.
  std::size_t blocks_needed(SeqId seq, std::size_t n_tokens) const;

  // Queries.
  bool contains(SeqId seq) const { return seqs_.contains(seq); }
  std::size_t n_tokens(SeqId seq) const;
  std::span<const BlockId> block_table(SeqId seq) const;
  TokenSlot locate(SeqId seq, std::size_t pos) const;  // pos < n_tokens(seq), else throws
  std::uint32_t refcount(BlockId block) const;
  std::uint32_t block_size() const { return block_size_; }
  std::uint32_t n_blocks() const { return static_cast<std::uint32_t>(refcounts_.size()); }
  std::uint32_t n_free() const { return static_cast<std::uint32_t>(free_.size()); }
  std::size_t n_sequences() const { return seqs_.size(); }
  // Blocks needed to hold n tokens: ceil(n / block_size).
  std::size_t blocks_for(std::size_t n_tokens) const { return (n_tokens + block_size_ - 1) / block_size_; }

  // Recomputes every refcount from the block tables and checks them, the free list and each
  // table's length against the stored state; throws wisp::Error naming the first inconsistency.
  // For tests and debug builds: O(blocks + table entries).
  void check_consistency() const;

 private:
  struct Sequence {
    std::vector<BlockId> blocks;
    std::size_t n_tokens = 0;
  };

  Sequence& get(SeqId seq);
  const Sequence& get(SeqId seq) const;
  BlockId take_free_block();
  void drop_ref(BlockId block);
  [[noreturn]] void throw_exhausted(SeqId seq, std::size_t needed) const;

  std::uint32_t block_size_;
  std::vector<std::uint32_t> refcounts_;  // per block; 0 = on the free list
  std::vector<BlockId> free_;             // stack; the back is handed out next
  std::unordered_map<SeqId, Sequence> seqs_;
  SeqId next_id_ = 0;  // ids are never reused, so a stale id cannot name a newer sequence
};

}  // namespace wisp
