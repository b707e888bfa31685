// NVFP4's sub-block scales for the SIMD kernels (x86/ and neon/nonlinear_dots-inl.h): half the
// unsigned E4M3 value of every byte, as the reference computes it (ue4m3_to_f32_half in
// formats/block_layouts.h, whose decoding this repeats at compile time), in a table: decoding the
// four scales of a block with branches and int to float conversions took about half of the dot's
// time. Constant data only, so the ISAs' translation units share it safely (no code built with
// one ISA's flags can be linked into another's callers).
#pragma once

namespace wisp::kernels {

struct Ue4m3Table {
  float v[256];
};

constexpr Ue4m3Table make_ue4m3_half_table() {
  Ue4m3Table t{};
  for (int x = 0; x < 256; ++x) {
    const int exp = (x >> 3) & 0xF, man = x & 0x7;
    const float raw =
        exp == 0 ? static_cast<float>(man) : static_cast<float>(8 + man) * static_cast<float>(1 << (exp - 1));
    t.v[x] = (x == 0 || x == 0x7F) ? 0.0f : raw * (1.0f / 1024.0f);
  }
  return t;
}

inline constexpr Ue4m3Table kUe4m3Half = make_ue4m3_half_table();

}  // namespace wisp::kernels
