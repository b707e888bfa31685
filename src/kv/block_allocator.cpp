#include "kv/block_allocator.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "wisp/error.h"

namespace wisp {

namespace {

std::string blocks_word(std::size_t n) { return n == 1 ? "block" : "blocks"; }

std::string hex(BlockHash h) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// splitmix64's finalizer: a bijection on 64 bits with full avalanche (every input bit flips each
// output bit with probability ~1/2).
std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// One step of the hash chain: absorb 64 bits. The added odd constant keeps 0 from being a fixed
// point (mix64(0) == 0), so runs of token 0 still move the state.
std::uint64_t absorb(std::uint64_t state, std::uint64_t word) { return mix64((state ^ word) + 0x9e3779b97f4a7c15ULL); }

}  // namespace

BlockAllocator::BlockAllocator(std::uint32_t n_blocks, std::uint32_t block_size) : block_size_(block_size) {
  if (n_blocks == 0) throw Error("KV pool: the pool needs at least 1 block (got 0)");
  if (block_size == 0) throw Error("KV pool: block_size must be at least 1 token (got 0)");
  blocks_.assign(n_blocks, Block{});
  free_.reserve(n_blocks);
  // Pushed in reverse so block 0 is handed out first: allocation order is deterministic and
  // a fresh pool fills from the low addresses up.
  for (std::uint32_t b = n_blocks; b-- > 0;) free_.push_back(b);
}

BlockAllocator::Sequence& BlockAllocator::get(SeqId seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    throw Error("KV pool: sequence " + std::to_string(seq) + " does not exist (freed or never created)");
  return it->second;
}

const BlockAllocator::Sequence& BlockAllocator::get(SeqId seq) const {
  return const_cast<BlockAllocator*>(this)->get(seq);
}

void BlockAllocator::check_block(BlockId block) const {
  if (block >= blocks_.size()) {
    throw Error("KV pool: block " + std::to_string(block) + " out of range (" + std::to_string(blocks_.size()) +
                " blocks)");
  }
}

SeqId BlockAllocator::create() {
  const SeqId id = next_id_++;
  seqs_.emplace(id, Sequence{});
  return id;
}

SeqId BlockAllocator::fork(SeqId parent) {
  Sequence copy = get(parent);
  // The parent references every block, so none of them is in the cached set: a plain increment.
  for (BlockId b : copy.blocks) ++blocks_[b].refcount;
  const SeqId id = next_id_++;
  seqs_.emplace(id, std::move(copy));
  return id;
}

void BlockAllocator::release(SeqId seq) {
  Sequence& s = get(seq);
  // Tail first: the cached set evicts the least recently released block, and attach_cached stops
  // at the first missing block, so a prompt's later blocks must go before its earlier ones
  // (evicting block 0 would strand all the others).
  for (auto it = s.blocks.rbegin(); it != s.blocks.rend(); ++it) drop_ref(*it);
  seqs_.erase(seq);
}

void BlockAllocator::truncate(SeqId seq, std::size_t n_tokens) {
  Sequence& s = get(seq);
  if (n_tokens > s.n_tokens) {
    throw Error("KV pool: cannot truncate sequence " + std::to_string(seq) + " to " + std::to_string(n_tokens) +
                " tokens, it holds only " + std::to_string(s.n_tokens));
  }
  const std::size_t keep = blocks_for(n_tokens);
  for (std::size_t i = s.blocks.size(); i-- > keep;) drop_ref(s.blocks[i]);  // tail first, as in release
  s.blocks.resize(keep);
  s.n_tokens = n_tokens;
  if (n_tokens % block_size_ == 0) return;
  // The kept tail is partial now and this sequence's next append writes its free slots. Held
  // alone, its cached content is about to be overwritten: unpublish it (no copy needed). Shared,
  // it stays published: the other holders still read it, and the append copies it first.
  const BlockId tail = s.blocks.back();
  if (blocks_[tail].published && blocks_[tail].refcount == 1) unpublish(tail);
}

bool BlockAllocator::tail_needs_copy(const Sequence& s) const {
  if (s.n_tokens % block_size_ == 0) return false;  // a full tail is never written again
  const Block& tail = blocks_[s.blocks.back()];
  // Shared: the other holders read the slots past ours. Published: the cache promises the
  // content never changes (a lone holder only gets here if it did not truncate into the block,
  // e.g. the sequence that filled it was released after this one truncated into it).
  return tail.refcount > 1 || tail.published;
}

std::size_t BlockAllocator::blocks_needed(SeqId seq, std::size_t n_tokens) const {
  const Sequence& s = get(seq);
  if (n_tokens == 0) return 0;
  return blocks_for(s.n_tokens + n_tokens) - s.blocks.size() + (tail_needs_copy(s) ? 1 : 0);
}

bool BlockAllocator::try_append(SeqId seq, std::size_t n_tokens, Growth& out) {
  out = Growth{};
  const std::size_t needed = blocks_needed(seq, n_tokens);  // validates seq
  if (needed > n_available()) return false;
  if (n_tokens == 0) return true;

  Sequence& s = get(seq);
  std::optional<BlockId> old_tail;
  if (tail_needs_copy(s)) {
    // New tokens go into the tail's free slots, which must not change under other readers or
    // the cache: this sequence takes a private copy of the filled part instead.
    old_tail = s.blocks.back();
    const BlockId mine = take_free_block();
    s.blocks.back() = mine;
    out.copy = BlockCopy{*old_tail, mine, static_cast<std::uint32_t>(s.n_tokens % block_size_)};
  }
  const std::size_t total = blocks_for(s.n_tokens + n_tokens);
  while (s.blocks.size() < total) s.blocks.push_back(take_free_block());
  s.n_tokens += n_tokens;
  // Dropped only after every block this append takes is handed out: a published source joins
  // the cached set here, and a later take could otherwise evict it and hand it to this very
  // sequence before the storage has copied from it.
  if (old_tail) drop_ref(*old_tail);
  return true;
}

Growth BlockAllocator::append(SeqId seq, std::size_t n_tokens) {
  Growth g;
  if (!try_append(seq, n_tokens, g)) throw_exhausted(seq, blocks_needed(seq, n_tokens));
  return g;
}

void BlockAllocator::throw_exhausted(SeqId seq, std::size_t needed) const {
  const Sequence& s = get(seq);
  // "need" is what this append takes in total (copy-on-write included), next to what is
  // available: free blocks plus cached ones, which an allocation evicts.
  const std::string cached =
      n_cached() == 0 ? "" : " (" + std::to_string(n_cached()) + " of them holding cached prefixes)";
  std::string msg = "KV pool exhausted: need " + std::to_string(needed) + " more " + blocks_word(needed) + " of " +
                    std::to_string(block_size_) + " tokens, " + std::to_string(n_available()) + " of " +
                    std::to_string(n_blocks()) + " free" + cached + "; sequence " + std::to_string(seq) + " holds " +
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
  check_block(block);
  return blocks_[block].refcount;
}

bool BlockAllocator::is_published(BlockId block) const {
  check_block(block);
  return blocks_[block].published;
}

BlockId BlockAllocator::take_free_block() {
  // Callers check capacity first (n_available), so the free list or the cached set has a block.
  BlockId b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else {
    // Only when nothing is free: cached content is worth keeping until its slot is needed.
    b = lru_head_;
    lru_unlink(b);
    unpublish(b);
    ++n_evictions_;
  }
  blocks_[b].refcount = 1;
  return b;
}

void BlockAllocator::drop_ref(BlockId block) {
  Block& blk = blocks_[block];
  if (--blk.refcount != 0) return;
  if (blk.published) {
    lru_push_back(block);
  } else {
    free_.push_back(block);
  }
}

void BlockAllocator::add_ref(BlockId block) {
  // At refcount 0 a published block sits in the cached set; a reference takes it out.
  if (blocks_[block].refcount++ == 0) lru_unlink(block);
}

void BlockAllocator::unpublish(BlockId block) {
  Block& blk = blocks_[block];
  by_hash_.erase(blk.hash);
  blk.published = false;
  blk.hash = 0;
}

void BlockAllocator::lru_push_back(BlockId block) {
  Block& blk = blocks_[block];
  blk.lru_prev = lru_tail_;
  blk.lru_next = kNoBlock;
  if (lru_tail_ == kNoBlock) {
    lru_head_ = block;
  } else {
    blocks_[lru_tail_].lru_next = block;
  }
  lru_tail_ = block;
  ++lru_size_;
}

void BlockAllocator::lru_unlink(BlockId block) {
  Block& blk = blocks_[block];
  if (blk.lru_prev == kNoBlock) {
    lru_head_ = blk.lru_next;
  } else {
    blocks_[blk.lru_prev].lru_next = blk.lru_next;
  }
  if (blk.lru_next == kNoBlock) {
    lru_tail_ = blk.lru_prev;
  } else {
    blocks_[blk.lru_next].lru_prev = blk.lru_prev;
  }
  blk.lru_prev = blk.lru_next = kNoBlock;
  --lru_size_;
}

BlockHash BlockAllocator::chain_hash(BlockHash parent, std::span<const std::int32_t> tokens) {
  // The length goes in first so blocks of different sizes never share a chain; tokens follow
  // two per 64-bit word. Pure integer arithmetic: the same value on every run and platform.
  std::uint64_t h = absorb(mix64(parent ^ 0xcbf29ce484222325ULL), tokens.size());
  std::size_t i = 0;
  for (; i + 1 < tokens.size(); i += 2) {
    const std::uint64_t lo = static_cast<std::uint32_t>(tokens[i]);
    const std::uint64_t hi = static_cast<std::uint32_t>(tokens[i + 1]);
    h = absorb(h, lo | hi << 32);
  }
  if (i < tokens.size()) h = absorb(h, static_cast<std::uint32_t>(tokens[i]));
  return mix64(h);
}

std::vector<BlockHash> BlockAllocator::block_hashes(std::span<const std::int32_t> tokens) const {
  std::vector<BlockHash> out(tokens.size() / block_size_);
  BlockHash parent = kRootHash;
  for (std::size_t i = 0; i < out.size(); ++i) {
    parent = chain_hash(parent, tokens.subspan(i * block_size_, block_size_));
    out[i] = parent;
  }
  return out;
}

bool BlockAllocator::stored_tokens_equal(BlockId block, std::span<const std::int32_t> tokens) const {
  const auto first = block_tokens_.begin() + static_cast<std::ptrdiff_t>(std::size_t{block} * block_size_);
  return std::equal(tokens.begin(), tokens.end(), first, first + block_size_);
}

bool BlockAllocator::publish(SeqId seq, std::size_t block_index, BlockHash hash, std::span<const std::int32_t> tokens) {
  const Sequence& s = get(seq);
  const std::string what =
      "KV pool: cannot publish block " + std::to_string(block_index) + " of sequence " + std::to_string(seq);
  if (block_index >= s.n_tokens / block_size_) {  // not (i + 1) * block_size: no overflow for a wild index
    throw Error(what + ": only full blocks can be cached, and the sequence holds " + std::to_string(s.n_tokens) +
                " tokens, " + std::to_string(s.n_tokens / block_size_) + " full " +
                blocks_word(s.n_tokens / block_size_) + " of " + std::to_string(block_size_));
  }
  if (tokens.size() != block_size_) {
    throw Error(what + ": got " + std::to_string(tokens.size()) + " tokens, a block holds " +
                std::to_string(block_size_));
  }
  const BlockId b = s.blocks[block_index];
  Block& blk = blocks_[b];
  if (blk.published) {
    // Republishing is harmless, but the same block under another hash or other tokens means the
    // caller's bookkeeping disagrees with what the cache promised earlier.
    if (blk.hash != hash || !stored_tokens_equal(b, tokens)) {
      throw Error(what + " (pool block " + std::to_string(b) + ") under hash " + hex(hash) +
                  ": it is already published under hash " + hex(blk.hash) +
                  (blk.hash == hash ? " with other tokens" : ""));
    }
    return true;
  }
  if (by_hash_.contains(hash)) return false;  // the content is cached in another block already
  if (block_tokens_.empty()) block_tokens_.resize(std::size_t{n_blocks()} * block_size_);
  std::copy(tokens.begin(), tokens.end(),
            block_tokens_.begin() + static_cast<std::ptrdiff_t>(std::size_t{b} * block_size_));
  blk.published = true;
  blk.hash = hash;
  by_hash_.emplace(hash, b);
  return true;
}

std::size_t BlockAllocator::attach_cached(SeqId seq, std::span<const BlockHash> hashes,
                                          std::span<const std::int32_t> tokens) {
  Sequence& s = get(seq);
  if (s.n_tokens != 0) {
    throw Error("KV pool: attach_cached needs an empty sequence, and sequence " + std::to_string(seq) + " holds " +
                std::to_string(s.n_tokens) + " tokens");
  }
  if (tokens.size() / block_size_ < hashes.size()) {
    throw Error("KV pool: attach_cached for sequence " + std::to_string(seq) + " got " + std::to_string(hashes.size()) +
                " block hashes but only " + std::to_string(tokens.size()) + " tokens (" +
                std::to_string(hashes.size() * block_size_) + " needed)");
  }
  prefix_queries_ += hashes.size();
  std::size_t attached = 0;
  for (; attached < hashes.size(); ++attached) {
    const auto it = by_hash_.find(hashes[attached]);
    if (it == by_hash_.end()) break;
    // The tokens, not just the hash, must match: a 64-bit collision must not hand out K/V
    // computed for another prompt.
    if (!stored_tokens_equal(it->second, tokens.subspan(attached * block_size_, block_size_))) break;
    add_ref(it->second);
    s.blocks.push_back(it->second);
  }
  s.n_tokens = attached * block_size_;
  prefix_hits_ += attached;
  return attached;
}

void BlockAllocator::clear_cache() {
  while (lru_head_ != kNoBlock) {
    const BlockId b = lru_head_;
    lru_unlink(b);
    unpublish(b);
    free_.push_back(b);
  }
}

void BlockAllocator::check_lru(std::vector<bool>& in_lru) const {
  auto fail = [](const std::string& what) { throw Error("KV pool inconsistent: cached set " + what); };
  std::uint32_t count = 0;
  BlockId prev = kNoBlock;
  for (BlockId b = lru_head_; b != kNoBlock; b = blocks_[b].lru_next) {
    if (b >= blocks_.size()) fail("links to block " + std::to_string(b) + ", out of range");
    if (in_lru[b]) fail("holds block " + std::to_string(b) + " twice (a cycle)");
    if (blocks_[b].lru_prev != prev) fail("block " + std::to_string(b) + " has a wrong back link");
    in_lru[b] = true;
    prev = b;
    ++count;
  }
  if (prev != lru_tail_)
    fail("ends at block " + std::to_string(prev) + " but its tail is " + std::to_string(lru_tail_));
  if (count != lru_size_) fail("holds " + std::to_string(count) + " blocks but counts " + std::to_string(lru_size_));
}

void BlockAllocator::check_hash_index() const {
  auto fail = [](const std::string& what) { throw Error("KV pool inconsistent: " + what); };
  std::size_t published = 0;
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    if (!blocks_[b].published) continue;
    ++published;
    const auto it = by_hash_.find(blocks_[b].hash);
    if (it == by_hash_.end() || it->second != b) {
      fail("block " + std::to_string(b) + " is published under " + hex(blocks_[b].hash) +
           " but the hash index does not name it");
    }
  }
  if (published != by_hash_.size()) {
    fail("the hash index has " + std::to_string(by_hash_.size()) + " entries for " + std::to_string(published) +
         " published blocks");
  }
}

void BlockAllocator::check_consistency() const {
  auto fail = [](const std::string& what) { throw Error("KV pool inconsistent: " + what); };
  std::vector<std::uint32_t> counted(blocks_.size(), 0);
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
  std::vector<bool> on_free_list(blocks_.size(), false);
  for (BlockId b : free_) {
    if (b >= blocks_.size() || on_free_list[b])
      fail("free list holds block " + std::to_string(b) + " twice or out of range");
    on_free_list[b] = true;
  }
  std::vector<bool> in_lru(blocks_.size(), false);
  check_lru(in_lru);
  for (std::size_t b = 0; b < blocks_.size(); ++b) {
    const Block& blk = blocks_[b];
    const std::string name = "block " + std::to_string(b);
    if (counted[b] != blk.refcount) {
      fail(name + " has refcount " + std::to_string(blk.refcount) + " but " + std::to_string(counted[b]) +
           " table entries");
    }
    const int states = (blk.refcount > 0 ? 1 : 0) + (on_free_list[b] ? 1 : 0) + (in_lru[b] ? 1 : 0);
    if (states != 1) {
      fail(name + " (refcount " + std::to_string(blk.refcount) + ") is " + (on_free_list[b] ? "on" : "not on") +
           " the free list and " + (in_lru[b] ? "in" : "not in") +
           " the cached set; it must be exactly one of referenced, free, cached");
    }
    if (on_free_list[b] && blk.published) fail(name + " is on the free list but published");
    if (in_lru[b] && !blk.published) fail(name + " is in the cached set but not published");
    if (!in_lru[b] && (blk.lru_prev != kNoBlock || blk.lru_next != kNoBlock)) {
      fail(name + " is outside the cached set but still linked into it");
    }
  }
  check_hash_index();
}

}  // namespace wisp
