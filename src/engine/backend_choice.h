// Which backend an engine runs on (EngineOptions::device): the CPU, or a CUDA device in a build
// with -DWISP_CUDA=ON. One place parses the device name and says why a choice cannot be had.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "kernels/ggml_order.h"
#include "model/backend.h"
#include "model/model_state.h"
#include "wisp/engine.h"

namespace wisp::detail {

struct BackendChoice {
  std::unique_ptr<model::Backend> backend;
  std::string device;  // "cpu" or "cuda:N (NAME)"
};

// Throws wisp::Error for an unknown device name, "cuda" in a build without CUDA or on a machine
// without a device, --exact on a device (llama.cpp's float orders exist on the CPU only), or a
// model the device cannot hold. reserve_bytes: what the engine needs besides the weights.
BackendChoice choose_backend(const ModelState& model, const EngineOptions& opts, std::size_t reserve_bytes);

// The ggml build whose float order the exact numerics follow (EngineOptions::exact_isa; "auto":
// this CPU's). Throws wisp::Error for another name.
kernels::ggml::Simd exact_simd(const EngineOptions& opts);

// The devices this build can run on, one line each ("cpu: 16 hardware threads", "cuda:0: NVIDIA
// H200, compute 9.0, 139.8 GiB (139.1 GiB free)"), and why there is no CUDA device when there is none.
std::string device_report();

}  // namespace wisp::detail
