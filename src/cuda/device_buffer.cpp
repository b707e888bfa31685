#include "cuda/device_buffer.h"

#include <string>

#include "cuda/cuda_check.h"

namespace wisp::cuda {

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t e = cudaMalloc(&ptr_, bytes);
  if (e != cudaSuccess) {
    ptr_ = nullptr;
    bytes_ = 0;
    throw Error(std::string("cuda: cannot allocate ") + mib(bytes) + " of device memory for " + what + ": " +
                cudaGetErrorString(e));
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void DeviceBuffer::reserve(std::size_t bytes, const char* what) {
  if (bytes <= bytes_) return;
  *this = DeviceBuffer();  // free first: the old contents are not kept
  *this = DeviceBuffer(bytes, what);
}

}  // namespace wisp::cuda
