// CUDA runtime errors as wisp::Error, naming what was being done.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "wisp/error.h"

namespace wisp::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("cuda: ") + what + ": " + cudaGetErrorString(e));
}

inline std::string mib(std::size_t bytes) { return std::to_string((bytes + (1u << 19)) >> 20) + " MiB"; }

}  // namespace wisp::cuda
