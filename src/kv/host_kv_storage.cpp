#include "kv/host_kv_storage.h"

#include <cstring>
#include <limits>
#include <new>
#include <string>

#include "wisp/error.h"

namespace wisp {

HostKvStorage::HostKvStorage(const KvLayout& layout, std::uint32_t n_blocks, bool resident)
    : layout_(layout), n_blocks_(n_blocks) {
  layout_.validate();
  if (n_blocks == 0) throw Error("KV pool: the pool needs at least 1 block (got 0)");
  const std::size_t per_block = layout_.bytes_per_block();
  const double mib = static_cast<double>(per_block) * n_blocks / (1024.0 * 1024.0);
  if (per_block > std::numeric_limits<std::size_t>::max() / n_blocks) {
    throw Error("KV pool: " + std::to_string(n_blocks) + " blocks of " + std::to_string(per_block) +
                " bytes overflow the address space");
  }
  try {
    data_.reset(static_cast<std::byte*>(::operator new[](per_block* n_blocks, std::align_val_t{kAlignment})));
  } catch (const std::bad_alloc&) {
    throw Error("KV pool: could not allocate " + std::to_string(n_blocks) + " blocks of " + std::to_string(per_block) +
                " bytes (" + std::to_string(mib) + " MiB) of host memory; use a smaller context or fewer blocks");
  }
  if (resident) std::memset(data_.get(), 0, per_block * n_blocks);
}

std::byte* HostKvStorage::host_block(BlockId block) {
  if (block >= n_blocks_) {
    throw Error("KV pool: block " + std::to_string(block) + " out of range (" + std::to_string(n_blocks_) + " blocks)");
  }
  return data_.get() + std::size_t{block} * layout_.bytes_per_block();
}

void HostKvStorage::copy_block(const BlockCopy& copy) {
  if (copy.n_tokens > layout_.block_size) {
    throw Error("KV pool: copy of " + std::to_string(copy.n_tokens) + " tokens exceeds block_size " +
                std::to_string(layout_.block_size));
  }
  if (copy.src == copy.dst) throw Error("KV pool: copy of block " + std::to_string(copy.src) + " onto itself");
  const std::byte* src = host_block(copy.src);
  std::byte* dst = host_block(copy.dst);
  // Each plane's filled slots are one contiguous prefix of the plane.
  const std::size_t planes = std::size_t{layout_.n_layers} * 2 * layout_.n_kv_heads;
  const std::size_t prefix = copy.n_tokens * layout_.row_bytes();
  for (std::size_t p = 0; p < planes; ++p) {
    std::memcpy(dst + p * layout_.plane_bytes(), src + p * layout_.plane_bytes(), prefix);
  }
}

}  // namespace wisp
