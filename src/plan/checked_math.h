// Byte counts are products of several user-given sizes; a silent wrap-around would turn an
// absurd request into a plausible-looking answer, so every product is checked.
#pragma once

#include <cstdint>
#include <string>

#include "wisp/error.h"

namespace wisp::plan {

inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(std::string(what) + " overflows 64 bits");
  return r;
}

inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw Error(std::string(what) + " overflows 64 bits");
  return r;
}

}  // namespace wisp::plan
