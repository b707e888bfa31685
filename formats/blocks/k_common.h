// Scale unpacking shared by Q4_K and Q5_K (the 12-byte 6-bit scale/min pairs described in
// formats/block_layouts.h). Integer work only.
#pragma once

#include <cstdint>

#include "formats/block_layouts.h"

namespace wisp::blocks {

struct KScaleMin {
  std::uint8_t scale[8];
  std::uint8_t min[8];
};

inline KScaleMin unpack_k_scales(const std::uint8_t* s) {
  KScaleMin r{};
  for (int j = 0; j < 4; ++j) {
    r.scale[j] = s[j] & 0x3f;
    r.min[j] = s[j + 4] & 0x3f;
    r.scale[j + 4] = static_cast<std::uint8_t>((s[j + 8] & 0x0f) | ((s[j] >> 2) & 0x30));
    r.min[j + 4] = static_cast<std::uint8_t>((s[j + 8] >> 4) | ((s[j + 4] >> 2) & 0x30));
  }
  return r;
}

}  // namespace wisp::blocks
