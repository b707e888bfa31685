// FNV-1a 64-bit: the small hash the golden-data scripts (Python) and the tests (C++) both compute,
// so large tensors and arrays are compared through a 16-hex-digit digest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace wisp::test {

class Fnv1a {
 public:
  void update(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      h_ ^= p[i];
      h_ *= 0x100000001B3ull;
    }
  }
  std::uint64_t value() const { return h_; }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
    return buf;
  }

 private:
  std::uint64_t h_ = 0xCBF29CE484222325ull;
};

inline std::string fnv1a_hex(const void* data, std::size_t n) {
  Fnv1a h;
  h.update(data, n);
  return h.hex();
}

}  // namespace wisp::test
