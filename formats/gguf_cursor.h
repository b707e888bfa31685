// Bounds-checked little-endian reading over a byte image. Every read names the field it is
// reading so that a truncated or malformed file produces "file: field at byte offset N: problem".
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "wisp/error.h"

namespace wisp {

class ByteCursor {
 public:
  ByteCursor(std::span<const std::uint8_t> bytes, const std::string& file) : bytes_(bytes), file_(file) {}

  std::uint64_t pos() const { return pos_; }
  std::uint64_t remaining() const { return bytes_.size() - pos_; }
  const std::uint8_t* here() const { return bytes_.data() + pos_; }

  [[noreturn]] void fail(std::string_view field, std::uint64_t offset, std::string_view problem) const {
    throw Error(file_ + ": " + std::string(field) + " at byte offset " + std::to_string(offset) + ": " +
                std::string(problem));
  }

  // Ensures `n` more bytes exist; otherwise reports truncation of `field`.
  void need(std::uint64_t n, std::string_view field) const {
    if (n > remaining()) {
      fail(field, pos_,
           "file truncated: need " + std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left of " +
               std::to_string(bytes_.size()));
    }
  }

  template <typename T>
  T read(std::string_view field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, here(), sizeof(T));  // GGUF is little-endian, as are the hosts wisp targets
    pos_ += sizeof(T);
    return v;
  }

  void skip(std::uint64_t n, std::string_view field) {
    need(n, field);
    pos_ += n;
  }

  // A GGUF string: u64 length then that many bytes (no terminator).
  std::string_view read_string(std::string_view field) {
    std::uint64_t start = pos_;
    std::uint64_t len = read<std::uint64_t>(field);
    if (len > remaining()) {
      fail(field, start,
           "string length " + std::to_string(len) + " runs past the end of the file (" + std::to_string(remaining()) +
               " bytes left)");
    }
    std::string_view s(reinterpret_cast<const char*>(here()), static_cast<std::size_t>(len));
    pos_ += len;
    return s;
  }

 private:
  std::span<const std::uint8_t> bytes_;
  const std::string& file_;
  std::uint64_t pos_ = 0;
};

// True when `s` is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view s);

}  // namespace wisp
