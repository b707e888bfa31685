// One allocation of device memory (RAII). reserve() grows it (never shrinks): the per-step
// scratch buffers of the backend reach their largest size in the first long prompt and stay.
#pragma once

#include <cstddef>

namespace wisp::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  // Throws wisp::Error naming `what` and the size when the device has no room.
  DeviceBuffer(std::size_t bytes, const char* what);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr, o.bytes_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Makes the buffer at least `bytes` long (its old contents are not kept when it grows).
  void reserve(std::size_t bytes, const char* what);
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t size() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace wisp::cuda
