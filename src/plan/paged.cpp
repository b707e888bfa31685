#include "plan/paged.h"

#include <string>

#include "plan/checked_math.h"
#include "wisp/error.h"

namespace wisp::plan {

std::uint64_t blocks_for(std::uint64_t tokens, std::uint64_t block_size) {
  if (block_size == 0) throw Error("block size must be positive");
  return tokens / block_size + (tokens % block_size != 0 ? 1 : 0);
}

double PagedAllocation::tail_waste_fraction() const {
  return block_size == 0 ? 0.0 : static_cast<double>(waste_tokens) / static_cast<double>(block_size);
}

PagedAllocation paged_allocation(std::uint64_t tokens, std::uint64_t block_size, std::uint64_t bytes_per_token) {
  PagedAllocation a;
  a.tokens = tokens;
  a.block_size = block_size;
  a.blocks = blocks_for(tokens, block_size);
  a.slots = checked_mul(a.blocks, block_size, "paged slots");
  a.bytes_per_block = checked_mul(block_size, bytes_per_token, "KV bytes per block");
  a.bytes = checked_mul(a.blocks, a.bytes_per_block, "paged KV bytes");
  a.used_bytes = checked_mul(tokens, bytes_per_token, "KV bytes");
  a.waste_tokens = a.slots - tokens;
  a.waste_bytes = a.bytes - a.used_bytes;
  return a;
}

NaiveReservation naive_reservation(std::uint64_t tokens, std::uint64_t max_len, std::uint64_t bytes_per_token) {
  if (tokens > max_len) {
    throw Error("a sequence of " + std::to_string(tokens) + " tokens does not fit a naive " + std::to_string(max_len) +
                "-token reservation (max length)");
  }
  NaiveReservation r;
  r.tokens = tokens;
  r.max_len = max_len;
  r.bytes = checked_mul(max_len, bytes_per_token, "naive KV reservation");
  r.waste_tokens = max_len - tokens;
  r.waste_bytes = checked_mul(r.waste_tokens, bytes_per_token, "naive KV waste");
  return r;
}

}  // namespace wisp::plan
