// The CPU implementation of the Backend ops over src/kernels, on a persistent thread pool of its own.
#pragma once

#include <memory>

#include "kernels/dot.h"
#include "kernels/ggml_order.h"
#include "model/backend.h"

namespace wisp::model {

// n_threads <= 0 means every hardware thread. `order` is the matmuls' float order
// (kernels/dot.h): kBatchInvariant for the engine, kGgml to reproduce llama.cpp's logits.
// `isa`: the ggml build whose element-wise float kernels (the GLU's exp) are reproduced.
std::unique_ptr<Backend> make_cpu_backend(int n_threads, kernels::DotOrder order,
                                          kernels::ggml::Simd isa = kernels::ggml::Simd::kAvx512);

}  // namespace wisp::model
