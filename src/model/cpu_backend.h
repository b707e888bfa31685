// The CPU implementation of the Backend ops over src/kernels, on a persistent thread pool of its own.
#pragma once

#include <memory>

#include "kernels/dot.h"
#include "model/backend.h"

namespace wisp::model {

// n_threads <= 0 means every hardware thread. `order` is the matmuls' float order
// (kernels/dot.h): kBatchInvariant for the engine, kGgml to reproduce llama.cpp's logits.
std::unique_ptr<Backend> make_cpu_backend(int n_threads, kernels::DotOrder order);

}  // namespace wisp::model
