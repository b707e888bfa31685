// A KV pool's bytes in device memory: the KvStorage of the CUDA backend (kv/kv_storage.h), so the
// pool's allocator, block tables, prefix cache and copy-on-write work on the GPU unchanged.
#pragma once

#include <cstddef>
#include <functional>

#include "cuda/device_buffer.h"
#include "kv/kv_storage.h"

namespace wisp::cuda {

class DeviceKvStorage final : public KvStorage {
 public:
  DeviceKvStorage(const KvLayout& layout, std::uint32_t n_blocks);

  const KvLayout& layout() const override { return layout_; }
  std::uint32_t n_blocks() const override { return n_blocks_; }
  void copy_block(const BlockCopy& copy) override;
  std::byte* host_block(BlockId) override { return nullptr; }  // device memory
  std::byte* device_data() const { return buf_.as<std::byte>(); }
  // Called before a block copy: the backend issues the launches it has recorded (step_graph.h),
  // so the copy sees the KV rows they write.
  void set_before_copy(std::function<void()> f) { before_copy_ = std::move(f); }

 private:
  KvLayout layout_;
  std::uint32_t n_blocks_;
  DeviceBuffer buf_;
  std::function<void()> before_copy_;
};

}  // namespace wisp::cuda
