// The CPU implementation of the Backend ops over src/kernels, with OpenMP row splits.
#pragma once

#include <memory>

#include "model/backend.h"

namespace wisp::model {

// n_threads <= 0 means every hardware thread.
std::unique_ptr<Backend> make_cpu_backend(int n_threads);

}  // namespace wisp::model
