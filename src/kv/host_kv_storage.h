// KV bytes in CPU memory: one aligned allocation of n_blocks * bytes_per_block bytes.
#pragma once

#include <cstddef>
#include <memory>

#include "kv/kv_storage.h"

namespace wisp {

class HostKvStorage final : public KvStorage {
 public:
  // Cache-line/AVX-512 alignment: every block starts on a 64-byte boundary when bytes_per_block is
  // a multiple of 64 (true for head_dim a multiple of 16 in f32), so rows load without splits.
  // Quantized rows (34 or 20 bytes per group) are not aligned; their decoders load unaligned.
  static constexpr std::size_t kAlignment = 64;

  // Throws wisp::Error (with the size in MiB) if the memory cannot be allocated. `resident`: write
  // the whole pool once here, so all of its memory is committed (and counted) from the start.
  HostKvStorage(const KvLayout& layout, std::uint32_t n_blocks, bool resident = false);

  const KvLayout& layout() const override { return layout_; }
  std::uint32_t n_blocks() const override { return n_blocks_; }
  void copy_block(const BlockCopy& copy) override;
  std::byte* host_block(BlockId block) override;
  using KvStorage::host_block;  // keep the const overload visible

 private:
  struct AlignedFree {
    void operator()(std::byte* p) const { ::operator delete[](p, std::align_val_t{kAlignment}); }
  };

  KvLayout layout_;
  std::uint32_t n_blocks_;
  // Left uninitialized unless `resident`: the OS commits pages on first write, so a large pool
  // costs memory only as sequences fill it. Every slot is written before it is read (positions <
  // n_tokens).
  std::unique_ptr<std::byte[], AlignedFree> data_;
};

}  // namespace wisp
