#include "kv/block_allocator.h"

#include <string>

#include "wisp/error.h"

namespace wisp {

namespace {

std::string blocks_word(std::size_t n) { return n == 1 ? "block" : "blocks"; }

}  // namespace

BlockAllocator::BlockAllocator(std::uint32_t n_blocks, std::uint32_t block_size) : block_size_(block_size) {
  if (n_blocks == 0) throw Error("KV pool: the pool needs at least 1 block (got 0)");
  if (block_size == 0) throw Error("KV pool: block_size must be at least 1 token (got 0)");
  refcounts_.assign(n_blocks, 0);
  free_.reserve(n_blocks);
  // Pushed in reverse so block 0 is handed out first: allocation order is deterministic and
  // a fresh pool fills from the low addresses up.
  for (std::uint32_t b = n_blocks; b-- > 0;) free_.push_back(b);
}

BlockAllocator::Sequence& BlockAllocator::get(SeqId seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) throw Error("KV pool: sequence " + std::to_string(seq) + " does not exist (freed or never created)");
  return it->second;
}

const BlockAllocator::Sequence& BlockAllocator::get(SeqId seq) const {
  return const_cast<BlockAllocator*>(this)->get(seq);
}

SeqId BlockAllocator::create() {
  const SeqId id = next_id_++;
  seqs_.emplace(id, Sequence{});
  return id;
}

SeqId BlockAllocator::fork(SeqId parent) {
  Sequence copy = get(parent);
  for (BlockId b : copy.blocks) ++refcounts_[b];
  const SeqId id = next_id_++;
  seqs_.emplace(id, std::move(copy));
  return id;
}

void BlockAllocator::release(SeqId seq) {
  Sequence& s = get(seq);
  for (BlockId b : s.blocks) drop_ref(b);
  seqs_.erase(seq);
}

void BlockAllocator::truncate(SeqId seq, std::size_t n_tokens) {
  Sequence& s = get(seq);
  if (n_tokens > s.n_tokens) {
    throw Error("KV pool: cannot truncate sequence " + std::to_string(seq) + " to " + std::to_string(n_tokens) +
                " tokens, it holds only " + std::to_string(s.n_tokens));
  }
  const std::size_t keep = blocks_for(n_tokens);
  for (std::size_t i = keep; i < s.blocks.size(); ++i) drop_ref(s.blocks[i]);
  s.blocks.resize(keep);
  s.n_tokens = n_tokens;
  // A kept tail that is still shared is left as is: the next append copies it before writing.
}

std::size_t BlockAllocator::blocks_needed(SeqId seq, std::size_t n_tokens) const {
  const Sequence& s = get(seq);
  if (n_tokens == 0) return 0;
  const bool partial_tail = s.n_tokens % block_size_ != 0;
  const bool cow = partial_tail && refcounts_[s.blocks.back()] > 1;
  return blocks_for(s.n_tokens + n_tokens) - s.blocks.size() + (cow ? 1 : 0);
}

bool BlockAllocator::try_append(SeqId seq, std::size_t n_tokens, Growth& out) {
  out = Growth{};
  const std::size_t needed = blocks_needed(seq, n_tokens);  // validates seq
  if (needed > free_.size()) return false;
  if (n_tokens == 0) return true;

  Sequence& s = get(seq);
  const auto filled = static_cast<std::uint32_t>(s.n_tokens % block_size_);
  if (filled != 0 && refcounts_[s.blocks.back()] > 1) {
    // New tokens go into the tail's free slots; another sequence still reads the tail, so this
    // sequence takes a private copy of the filled part and leaves the original to the others.
    const BlockId shared = s.blocks.back();
    const BlockId mine = take_free_block();
    drop_ref(shared);
    s.blocks.back() = mine;
    out.copy = BlockCopy{shared, mine, filled};
  }
  const std::size_t total = blocks_for(s.n_tokens + n_tokens);
  while (s.blocks.size() < total) s.blocks.push_back(take_free_block());
  s.n_tokens += n_tokens;
  return true;
}

Growth BlockAllocator::append(SeqId seq, std::size_t n_tokens) {
  Growth g;
  if (!try_append(seq, n_tokens, g)) throw_exhausted(seq, blocks_needed(seq, n_tokens));
  return g;
}

void BlockAllocator::throw_exhausted(SeqId seq, std::size_t needed) const {
  const Sequence& s = get(seq);
  // "need" is what this append takes in total (copy-on-write included), next to what is free.
  std::string msg = "KV pool exhausted: need " + std::to_string(needed) + " more " + blocks_word(needed) + " of " +
                    std::to_string(block_size_) + " tokens, " + std::to_string(free_.size()) + " of " +
                    std::to_string(n_blocks()) + " free; sequence " + std::to_string(seq) + " holds " +
                    std::to_string(s.n_tokens) + " tokens in " + std::to_string(s.blocks.size()) + " " +
                    blocks_word(s.blocks.size()) + ", " + std::to_string(seqs_.size()) +
                    " sequences live. Free finished sequences, shorten the context, or give the pool more blocks.";
  throw Error(msg);
}

std::size_t BlockAllocator::n_tokens(SeqId seq) const { return get(seq).n_tokens; }

std::span<const BlockId> BlockAllocator::block_table(SeqId seq) const { return get(seq).blocks; }

TokenSlot BlockAllocator::locate(SeqId seq, std::size_t pos) const {
  const Sequence& s = get(seq);
  if (pos >= s.n_tokens) {
    throw Error("KV pool: token position " + std::to_string(pos) + " is past the end of sequence " +
                std::to_string(seq) + " (" + std::to_string(s.n_tokens) + " tokens)");
  }
  return TokenSlot{s.blocks[pos / block_size_], static_cast<std::uint32_t>(pos % block_size_)};
}

std::uint32_t BlockAllocator::refcount(BlockId block) const {
  if (block >= refcounts_.size()) {
    throw Error("KV pool: block " + std::to_string(block) + " out of range (" + std::to_string(refcounts_.size()) +
                " blocks)");
  }
  return refcounts_[block];
}

BlockId BlockAllocator::take_free_block() {
  // Callers check capacity first (try_append), so the list is never empty here.
  const BlockId b = free_.back();
  free_.pop_back();
  refcounts_[b] = 1;
  return b;
}

void BlockAllocator::drop_ref(BlockId block) {
  if (--refcounts_[block] == 0) free_.push_back(block);
}

void BlockAllocator::check_consistency() const {
  auto fail = [](const std::string& what) { throw Error("KV pool inconsistent: " + what); };
  std::vector<std::uint32_t> counted(refcounts_.size(), 0);
  for (const auto& [id, s] : seqs_) {
    if (s.blocks.size() != blocks_for(s.n_tokens)) {
      fail("sequence " + std::to_string(id) + " has " + std::to_string(s.n_tokens) + " tokens in " +
           std::to_string(s.blocks.size()) + " blocks");
    }
    for (BlockId b : s.blocks) {
      if (b >= counted.size()) fail("sequence " + std::to_string(id) + " names block " + std::to_string(b));
      ++counted[b];
    }
  }
  std::vector<bool> on_free_list(refcounts_.size(), false);
  for (BlockId b : free_) {
    if (b >= refcounts_.size() || on_free_list[b]) fail("free list holds block " + std::to_string(b) + " twice or out of range");
    on_free_list[b] = true;
  }
  for (std::size_t b = 0; b < refcounts_.size(); ++b) {
    if (counted[b] != refcounts_[b]) {
      fail("block " + std::to_string(b) + " has refcount " + std::to_string(refcounts_[b]) + " but " +
           std::to_string(counted[b]) + " table entries");
    }
    if ((refcounts_[b] == 0) != on_free_list[b]) {
      fail("block " + std::to_string(b) + " refcount " + std::to_string(refcounts_[b]) +
           (on_free_list[b] ? " yet on" : " yet not on") + " the free list");
    }
  }
}

}  // namespace wisp
