// Paged KV allocation (vLLM's PagedAttention, wisp's kv/ pool): a sequence owns whole blocks of
// `block_size` token slots, so its allocation rounds up and wastes at most block_size − 1 slots,
// against a naive allocator that reserves max_len slots for every sequence up front.
#pragma once

#include <cstdint>

namespace wisp::plan {

inline constexpr std::uint64_t kDefaultBlockSize = 16;

// ceil(tokens / block_size); an empty sequence holds no block. Throws on block_size 0.
std::uint64_t blocks_for(std::uint64_t tokens, std::uint64_t block_size);

struct PagedAllocation {
  std::uint64_t tokens = 0;
  std::uint64_t block_size = 0;
  std::uint64_t blocks = 0;
  std::uint64_t slots = 0;  // blocks · block_size
  std::uint64_t bytes_per_block = 0;
  std::uint64_t bytes = 0;         // allocated: blocks · bytes_per_block
  std::uint64_t used_bytes = 0;    // tokens · bytes_per_token
  std::uint64_t waste_tokens = 0;  // slots − tokens, at most block_size − 1
  std::uint64_t waste_bytes = 0;
  // Share of the last block left empty (C3: 15 of 16 slots = 0.9375); 0 when it is full.
  double tail_waste_fraction() const;
};

// What a sequence of `tokens` tokens holds in a pool of `block_size`-token blocks.
PagedAllocation paged_allocation(std::uint64_t tokens, std::uint64_t block_size, std::uint64_t bytes_per_token);

struct NaiveReservation {
  std::uint64_t tokens = 0;
  std::uint64_t max_len = 0;
  std::uint64_t bytes = 0;         // max_len · bytes_per_token
  std::uint64_t waste_tokens = 0;  // max_len − tokens
  std::uint64_t waste_bytes = 0;
};

// A contiguous max_len reservation for a sequence that uses `tokens`. Throws when
// tokens > max_len (the naive allocator could not hold it).
NaiveReservation naive_reservation(std::uint64_t tokens, std::uint64_t max_len, std::uint64_t bytes_per_token);

}  // namespace wisp::plan
