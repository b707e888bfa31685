// Where the K/V bytes of a pool live. The allocator decides which blocks a sequence owns; a
// KvStorage holds the bytes of those blocks and carries out the copies a copy-on-write asks for.
// HostKvStorage keeps them in CPU memory; a CUDA backend implements the same interface over
// device memory, so KvPool and the allocator stay the same for both.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kv/block_allocator.h"
#include "kv/kv_layout.h"

namespace wisp {

class KvStorage {
 public:
  virtual ~KvStorage() = default;

  virtual const KvLayout& layout() const = 0;
  virtual std::uint32_t n_blocks() const = 0;

  // Copies token slots [0, copy.n_tokens) of every (layer, K|V, head) plane from copy.src to
  // copy.dst. The slots after n_tokens in dst are left as they were (the sequence writes them next).
  virtual void copy_block(const BlockCopy& copy) = 0;

  // Address of the first byte of `block` if the CPU can read and write it, else nullptr
  // (device memory). Blocks are layout().bytes_per_block() bytes each.
  virtual std::byte* host_block(BlockId block) = 0;
  const std::byte* host_block(BlockId block) const { return const_cast<KvStorage*>(this)->host_block(block); }

  std::size_t bytes_total() const { return std::size_t{n_blocks()} * layout().bytes_per_block(); }
};

}  // namespace wisp
