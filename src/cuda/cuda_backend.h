// The CUDA backend: the whole forward pass on an NVIDIA GPU behind the same Backend seam as the
// CPU (model/backend.h), so the engine's batching, the scheduler and the server run on it
// unchanged. Weights are copied once from the mapped file to device memory; activations and the
// paged KV pool (the same block tables as on the CPU) live in device memory; only the logits the
// step asks for come back. Compiled only with -DWISP_CUDA=ON.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "model/backend.h"
#include "model/model_state.h"

namespace wisp::cuda {

// Uploads the model's weights to `device` (progress on stderr on a terminal). reserve_bytes: the
// device memory the engine needs besides the weights (KV pool, activations), checked before any
// allocation. Throws wisp::Error for a model the backend cannot run (a block type without device
// kernels, sparse outliers) or that does not fit, naming the sizes.
std::unique_ptr<model::Backend> make_cuda_backend(const detail::ModelState& model, int device,
                                                  std::size_t reserve_bytes);

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  std::size_t total_bytes = 0;
  std::size_t free_bytes = 0;
};

// The CUDA devices this process can use; empty (with the reason in *why_none) when there are none.
std::vector<DeviceInfo> list_devices(std::string* why_none);

}  // namespace wisp::cuda
