#include "cuda/device_weights.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "core/progress.h"
#include "cuda/cuda_check.h"

namespace wisp::cuda {

DeviceWeights::DeviceWeights(const GgufFile& file, std::size_t reserve_bytes) {
  std::size_t total = 0;
  for (const GgufTensor& t : file.tensors()) {
    if (host_base_ == nullptr) host_base_ = t.data - t.offset;
    total = std::max<std::size_t>(total, t.offset + t.n_bytes);
  }
  std::size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "reading the device's free memory");
  if (total + reserve_bytes > free_b) {
    throw Error(file.path() + ": the model needs " + mib(total) + " of weights plus " + mib(reserve_bytes) +
                " for the KV pool and activations on the device, which has " + mib(free_b) + " free of " +
                mib(total_b) + " (use a smaller --ctx or --kv-mem, a smaller quantization, or --device cpu)");
  }
  buf_ = DeviceBuffer(total, "the weights");
  std::size_t done = 0;
  const std::size_t n = file.tensors().size();
  Progress progress("cuda: weights", "tensors", n);  // drawn only on a terminal
  for (std::size_t i = 0; i < n; ++i) {
    const GgufTensor& t = file.tensors()[i];
    check(cudaMemcpy(buf_.as<std::uint8_t>() + t.offset, t.data, t.n_bytes, cudaMemcpyHostToDevice),
          "copying the weights to the device");
    done += t.n_bytes;
    progress.update(i + 1, 0, mib(done) + " of " + mib(total));
  }
}

const std::uint8_t* DeviceWeights::device(const void* host, const char* what) const {
  const auto* p = static_cast<const std::uint8_t*>(host);
  if (p == nullptr) return nullptr;
  if (p < host_base_ || p >= host_base_ + buf_.size()) {
    throw Error(std::string("cuda: ") + what +
                " is not tensor data of the file (the device has only the file's tensors)");
  }
  return buf_.as<const std::uint8_t>() + (p - host_base_);
}

}  // namespace wisp::cuda
