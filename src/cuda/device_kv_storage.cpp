#include "cuda/device_kv_storage.h"

#include "cuda/cuda_check.h"

namespace wisp::cuda {

DeviceKvStorage::DeviceKvStorage(const KvLayout& layout, std::uint32_t n_blocks)
    : layout_(layout), n_blocks_(n_blocks), buf_(std::size_t{n_blocks} * layout.bytes_per_block(), "the KV pool") {
  layout_.validate();
}

void DeviceKvStorage::copy_block(const BlockCopy& copy) {
  // Every (layer, K|V, head) plane: its first n_tokens rows, one strided 2-D copy.
  if (copy.n_tokens == 0) return;
  if (before_copy_) before_copy_();
  const std::size_t planes = 2 * std::size_t{layout_.n_layers} * layout_.n_kv_heads;
  const std::size_t block = layout_.bytes_per_block();
  std::byte* base = buf_.as<std::byte>();
  check(cudaMemcpy2D(base + copy.dst * block, layout_.plane_bytes(), base + copy.src * block, layout_.plane_bytes(),
                     std::size_t{copy.n_tokens} * layout_.row_bytes(), planes, cudaMemcpyDeviceToDevice),
        "copying a KV block");
}

}  // namespace wisp::cuda
