// wisp's group-wise types (formats/wq_format.h, layout in formats/FORMAT.md): the conventions,
// the plane packing and the registry entries.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "formats/half.h"
#include "formats/wq_format.h"
#include "wisp/error.h"

namespace wisp {

namespace {

inline float round_half_up(float x) { return std::floor(x + 0.5f); }

}  // namespace

WqParams wq_params(float r_min, float r_max, int bits) {
  const int qmax = (1 << bits) - 1;
  WqParams p;
  if (r_min == r_max) {
    // C7: store the constant itself; s = |c| and z = round(-c / s) (1 for c < 0, clipped 0 for
    // c > 0) make q - z = +-1, so c comes back exactly. c == 0 gives s = 0: every code is z.
    p.scale = std::fabs(r_min);
  } else {
    p.scale = (r_max - r_min) / static_cast<float>(qmax);
  }
  if (p.scale > 0.0f) {
    p.zero = static_cast<int>(std::clamp(round_half_up(-r_min / p.scale), 0.0f, static_cast<float>(qmax)));
  }
  return p;
}

int wq_code(float r, const WqParams& p, int bits) {
  const int qmax = (1 << bits) - 1;
  if (!(p.scale > 0.0f)) return p.zero;
  // Clamp in float first so a huge outlier cannot overflow the int conversion (saturate, not wrap).
  const float q = round_half_up(r / p.scale) + static_cast<float>(p.zero);
  return static_cast<int>(std::clamp(q, 0.0f, static_cast<float>(qmax)));
}

WqParams wq_stored_params(float r_min, float r_max, int bits) {
  if (r_min != r_max) {
    r_min = std::min(r_min, 0.0f);
    r_max = std::max(r_max, 0.0f);
  }
  WqParams p = wq_params(r_min, r_max, bits);
  const float s = f16_to_f32(f32_to_f16(std::min(p.scale, 65504.0f)));
  if (s == p.scale) return p;
  if (r_min == r_max) return {s, p.zero};
  WqParams q;
  q.scale = s;
  if (s > 0.0f) {
    const int qmax = (1 << bits) - 1;
    q.zero = static_cast<int>(std::clamp(round_half_up(-r_min / s), 0.0f, static_cast<float>(qmax)));
  }
  return q;
}

void wq_pack_codes(const std::uint8_t* codes, int bits, int group, std::uint8_t* planes) {
  const WqPlaneWidths pl = wq_plane_widths(bits);
  int shift = 0;
  for (int p = 0; p < pl.n; ++p) {
    const int w = pl.width[p];
    const int per_byte = 8 / w;
    const int n_bytes = group / per_byte;  // byte j holds values j, j + n_bytes, j + 2 n_bytes, ...
    const int mask = (1 << w) - 1;
    for (int j = 0; j < n_bytes; ++j) {
      unsigned v = 0;
      for (int k = 0; k < per_byte; ++k)
        v |= static_cast<unsigned>((codes[j + k * n_bytes] >> shift) & mask) << (k * w);
      planes[j] = static_cast<std::uint8_t>(v);
    }
    planes += n_bytes;
    shift += w;
  }
}

void wq_unpack_codes(const std::uint8_t* planes, int bits, int group, std::uint8_t* codes) {
  const WqPlaneWidths pl = wq_plane_widths(bits);
  std::fill(codes, codes + group, std::uint8_t{0});
  int shift = 0;
  for (int p = 0; p < pl.n; ++p) {
    const int w = pl.width[p];
    const int per_byte = 8 / w;
    const int n_bytes = group / per_byte;
    const int mask = (1 << w) - 1;
    for (int k = 0; k < per_byte; ++k) {
      for (int j = 0; j < n_bytes; ++j) {
        codes[j + k * n_bytes] |= static_cast<std::uint8_t>(((planes[j] >> (k * w)) & mask) << shift);
      }
    }
    planes += n_bytes;
    shift += w;
  }
}

void wq_encode_group(const float* x, const WqFormat& f, const WqParams& p, std::uint8_t* block) {
  std::uint8_t codes[128];
  for (int j = 0; j < f.group; ++j) codes[j] = static_cast<std::uint8_t>(wq_code(x[j], p, f.bits));
  const std::uint16_t s16 = f32_to_f16(p.scale);
  block[0] = static_cast<std::uint8_t>(s16 & 0xff);
  block[1] = static_cast<std::uint8_t>(s16 >> 8);
  block[2] = static_cast<std::uint8_t>(p.zero);
  block[3] = 0;
  wq_pack_codes(codes, f.bits, f.group, block + kWqHeaderBytes);
}

void wq_encode_group_minmax(const float* x, const WqFormat& f, std::uint8_t* block) {
  const auto [mn, mx] = std::minmax_element(x, x + f.group);
  wq_encode_group(x, f, wq_stored_params(*mn, *mx, f.bits), block);
}

void wq_decode_group(const std::uint8_t* block, const WqFormat& f, float* out) {
  const float s = f16_to_f32(static_cast<std::uint16_t>(block[0] | (block[1] << 8)));
  const int z = block[2];
  std::uint8_t codes[128];
  wq_unpack_codes(block + kWqHeaderBytes, f.bits, f.group, codes);
  for (int j = 0; j < f.group; ++j) out[j] = s * static_cast<float>(static_cast<int>(codes[j]) - z);
}

std::string wq_type_name(int bits, int group) { return "WQ" + std::to_string(bits) + "_G" + std::to_string(group); }

namespace {

void require_whole_groups(const WqFormat& f, std::int64_t n) {
  if (n < 0 || n % f.group != 0) {
    throw Error(wq_type_name(f.bits, f.group) + ": " + std::to_string(n) + " values is not a whole number of " +
                std::to_string(f.group) + "-value groups");
  }
}

}  // namespace

void wq_quantize_row(const WqFormat& f, const float* x, void* blocks, std::int64_t n) {
  require_whole_groups(f, n);
  auto* out = static_cast<std::uint8_t*>(blocks);
  for (std::int64_t g = 0; g < n / f.group; ++g) {
    wq_encode_group_minmax(x + g * f.group, f, out + g * static_cast<std::int64_t>(f.block_bytes()));
  }
}

void wq_dequantize_row(const WqFormat& f, const void* blocks, float* out, std::int64_t n) {
  require_whole_groups(f, n);
  const auto* in = static_cast<const std::uint8_t*>(blocks);
  const std::size_t bb = f.block_bytes();
  std::uint8_t block[kWqHeaderBytes + 128];
  for (std::int64_t g = 0; g < n / f.group; ++g) {
    std::memcpy(block, in + g * static_cast<std::int64_t>(bb), bb);  // blocks may sit unaligned
    wq_decode_group(block, f, out + g * f.group);
  }
}

namespace {

template <int B, int G>
void dequantize_wq(const void* blocks, float* out, std::int64_t n) {
  wq_dequantize_row(WqFormat{B, G}, blocks, out, n);
}
template <int B, int G>
void quantize_wq(const float* in, void* blocks, std::int64_t n) {
  wq_quantize_row(WqFormat{B, G}, in, blocks, n);
}

template <int B, int G>
constexpr BlockTypeInfo entry(const char* name) {
  return BlockTypeInfo{wq_type_id(B, G), name, G, wq_block_bytes(B, G), dequantize_wq<B, G>, quantize_wq<B, G>};
}

constexpr std::array kWqTypes = {
    entry<2, 32>("WQ2_G32"),   entry<2, 64>("WQ2_G64"),   entry<2, 128>("WQ2_G128"), entry<3, 32>("WQ3_G32"),
    entry<3, 64>("WQ3_G64"),   entry<3, 128>("WQ3_G128"), entry<4, 32>("WQ4_G32"),   entry<4, 64>("WQ4_G64"),
    entry<4, 128>("WQ4_G128"), entry<5, 32>("WQ5_G32"),   entry<5, 64>("WQ5_G64"),   entry<5, 128>("WQ5_G128"),
    entry<6, 32>("WQ6_G32"),   entry<6, 64>("WQ6_G64"),   entry<6, 128>("WQ6_G128"), entry<8, 32>("WQ8_G32"),
    entry<8, 64>("WQ8_G64"),   entry<8, 128>("WQ8_G128"),
};

}  // namespace

std::span<const BlockTypeInfo> all_wq_block_types() { return kWqTypes; }

WqFormat wq_format(std::uint32_t id) {
  if (id < kWqTypeIdBase) return {0, 0};
  const std::uint32_t r = id - kWqTypeIdBase;
  const int bits = static_cast<int>(r / 10), gi = static_cast<int>(r % 10);
  const bool bits_ok = std::find(std::begin(kWqBits), std::end(kWqBits), bits) != std::end(kWqBits);
  if (!bits_ok || gi > 2) return {0, 0};
  return {bits, kWqGroups[gi]};
}

bool is_wq_type(std::uint32_t id) { return wq_format(id).bits != 0; }

}  // namespace wisp
