// The model's weights in device memory: the tensors of the mapped GGUF file copied once, each to
// its own offset in one allocation that mirrors the file's data section, so any host pointer into
// the mapping (a matrix, a norm vector, a bias) has its device twin at the same offset.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/device_buffer.h"
#include "formats/gguf_file.h"

namespace wisp::cuda {

class DeviceWeights {
 public:
  // Copies every tensor of `file` (progress on stderr when it is a terminal). `reserve_bytes`:
  // what the backend needs besides the weights (KV pool, activations); a model that does not fit
  // with it is an error naming the sizes, raised before anything is allocated.
  DeviceWeights(const GgufFile& file, std::size_t reserve_bytes);

  // The device address of a host pointer into the mapped tensor data; throws wisp::Error naming
  // `what` for a pointer outside it (a table built at load time, which the device does not have).
  const std::uint8_t* device(const void* host, const char* what) const;
  std::size_t bytes() const { return buf_.size(); }

 private:
  const std::uint8_t* host_base_ = nullptr;
  DeviceBuffer buf_;
};

}  // namespace wisp::cuda
