// Random weight rows of any block type for the kernel tests: random code bytes with the half
// scale fields overwritten by moderate values (random bytes there would give infinities and NaNs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "kernels/act_quant.h"

namespace wisp::test {

// Offsets of the half-float scale fields inside one block of `type`.
inline std::vector<std::size_t> half_fields(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: return {offsetof(BlockQ4_0, d)};
    case GgmlType::kQ4_1: return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case GgmlType::kQ5_0: return {offsetof(BlockQ5_0, d)};
    case GgmlType::kQ5_1: return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case GgmlType::kQ8_0: return {offsetof(BlockQ8_0, d)};
    case GgmlType::kQ2_K: return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case GgmlType::kQ3_K: return {offsetof(BlockQ3_K, d)};
    case GgmlType::kQ4_K: return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case GgmlType::kQ5_K: return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case GgmlType::kQ6_K: return {offsetof(BlockQ6_K, d)};
    case GgmlType::kIQ4_NL: return {offsetof(BlockIQ4_NL, d)};
    case GgmlType::kIQ4_XS: return {offsetof(BlockIQ4_XS, d)};
    case GgmlType::kTQ1_0: return {offsetof(BlockTQ1_0, d)};
    case GgmlType::kTQ2_0: return {offsetof(BlockTQ2_0, d)};
    case GgmlType::kIQ2_XXS: return {offsetof(BlockIQ2_XXS, d)};
    case GgmlType::kIQ2_XS: return {offsetof(BlockIQ2_XS, d)};
    case GgmlType::kIQ2_S: return {offsetof(BlockIQ2_S, d)};
    case GgmlType::kIQ3_XXS: return {offsetof(BlockIQ3_XXS, d)};
    case GgmlType::kIQ3_S: return {offsetof(BlockIQ3_S, d)};
    case GgmlType::kIQ1_S: return {offsetof(BlockIQ1_S, d)};
    default: return {};
  }
}

// n_rows rows of n_cols values of `type`, row-major.
inline std::vector<std::uint8_t> random_matrix(GgmlType type, std::int64_t n_rows, std::int64_t n_cols,
                                               std::mt19937& rng) {
  const BlockTypeInfo& info = block_type(type);
  const std::size_t row_bytes = info.row_bytes(n_cols);
  std::vector<std::uint8_t> out(row_bytes * static_cast<std::size_t>(n_rows));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.001f, 0.05f);
  switch (type) {
    case GgmlType::kF32: {
      auto* f = reinterpret_cast<float*>(out.data());
      for (std::size_t i = 0; i < out.size() / 4; ++i) f[i] = normal(rng);
      return out;
    }
    case GgmlType::kF16:
    case GgmlType::kBF16: {
      auto* h = reinterpret_cast<std::uint16_t*>(out.data());
      for (std::size_t i = 0; i < out.size() / 2; ++i) {
        h[i] = type == GgmlType::kF16 ? f32_to_f16(normal(rng)) : f32_to_bf16(normal(rng));
      }
      return out;
    }
    default: break;
  }
  for (auto& b : out) b = static_cast<std::uint8_t>(byte(rng));
  const auto fields = half_fields(type);
  for (std::size_t blk = 0; blk < out.size() / info.block_bytes; ++blk) {
    for (std::size_t off : fields) {
      const std::uint16_t h = f32_to_f16(scale(rng));
      std::uint8_t* p = out.data() + blk * info.block_bytes + off;
      p[0] = static_cast<std::uint8_t>(h & 0xff);
      p[1] = static_cast<std::uint8_t>(h >> 8);
    }
  }
  return out;
}

// Edge half scales: zero, the smallest subnormal, the largest subnormal, the largest finite value,
// their negatives, one, negative zero.
inline constexpr std::uint16_t kEdgeHalves[] = {0x0000, 0x0001, 0x03ff, 0x7bff, 0x8001, 0xfbff, 0x3c00, 0x8000};

// Every half scale field of the blocks in `w` (rows of `type`) set from kEdgeHalves in turn.
inline void set_edge_scales(GgmlType type, std::vector<std::uint8_t>& w) {
  const BlockTypeInfo& info = block_type(type);
  std::size_t e = 0;
  for (std::size_t blk = 0; blk < w.size() / info.block_bytes; ++blk) {
    for (std::size_t off : half_fields(type))
      std::memcpy(w.data() + blk * info.block_bytes + off, &kEdgeHalves[e++ % 8], 2);
  }
}

// Every code byte of the blocks in `w` set to `fill`; the scale fields are kept.
inline void fill_codes(GgmlType type, std::vector<std::uint8_t>& w, std::uint8_t fill) {
  const BlockTypeInfo& info = block_type(type);
  for (std::size_t blk = 0; blk < w.size() / info.block_bytes; ++blk) {
    std::uint8_t* p = w.data() + blk * info.block_bytes;
    const std::vector<std::uint8_t> keep(p, p + info.block_bytes);
    std::memset(p, fill, info.block_bytes);
    for (std::size_t off : half_fields(type)) std::memcpy(p + off, keep.data() + off, 2);
  }
}

// Weight rows of n values for the kernel tests: three random (moderate scales), random codes under
// edge scales, code bytes all 0x00 and all 0xff with the scales kept.
inline std::vector<std::vector<std::uint8_t>> adversarial_weights(GgmlType type, std::int64_t n, std::mt19937& rng) {
  std::vector<std::vector<std::uint8_t>> out;
  for (int i = 0; i < 3; ++i) out.push_back(random_matrix(type, 1, n, rng));
  out.push_back(random_matrix(type, 1, n, rng));
  set_edge_scales(type, out.back());
  for (std::uint8_t fill : {std::uint8_t{0x00}, std::uint8_t{0xff}}) {
    out.push_back(random_matrix(type, 1, n, rng));
    fill_codes(type, out.back(), fill);
  }
  return out;
}

// Activation rows of n values in format f: quantized from floats (normal, all-equal, tiny values
// with one huge outlier) and raw codes over the whole int8 range (-128 too) with moderate scales
// and, for Q8_K, consistent block sums.
inline std::vector<std::vector<std::uint8_t>> activation_rows(kernels::ActFormat f, std::int64_t n, std::mt19937& rng) {
  using kernels::ActFormat;
  std::vector<std::vector<std::uint8_t>> out;
  const std::size_t bytes = kernels::act_row_bytes(f, n);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> floats(3, std::vector<float>(static_cast<std::size_t>(n)));
  for (auto& v : floats[0]) v = normal(rng);
  for (auto& v : floats[1]) v = -0.75f;
  for (auto& v : floats[2]) v = normal(rng) * 1e-3f;
  floats[2][static_cast<std::size_t>(n / 2)] = 1e4f;
  for (const auto& x : floats) {
    out.emplace_back(bytes);
    kernels::convert_act_row(f, x.data(), out.back().data(), n);
  }
  if (f != ActFormat::kQ8_0 && f != ActFormat::kQ8_1 && f != ActFormat::kQ8_K) return out;
  std::vector<std::uint8_t> raw(bytes);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : raw) b = static_cast<std::uint8_t>(byte(rng));
  if (f == ActFormat::kQ8_0 || f == ActFormat::kQ8_1) {
    const std::size_t block = f == ActFormat::kQ8_0 ? sizeof(BlockQ8_0) : sizeof(kernels::BlockQ8_1);
    const int halves = f == ActFormat::kQ8_0 ? 1 : 2;
    for (std::size_t b = 0; b < bytes / block; ++b) {
      for (int h = 0; h < halves; ++h) {
        const std::uint16_t v = f32_to_f16(0.01f * static_cast<float>(h + 1));
        std::memcpy(raw.data() + b * block + 2 * h, &v, 2);
      }
    }
  } else {
    auto* y = reinterpret_cast<kernels::BlockQ8_K*>(raw.data());
    for (std::int64_t b = 0; b < n / kQK_K; ++b) {
      y[b].d = 0.02f;
      for (int g = 0; g < 16; ++g) {
        int s = 0;
        for (int j = 0; j < 16; ++j) s += y[b].qs[16 * g + j];
        y[b].bsums[g] = static_cast<std::int16_t>(s);
      }
    }
  }
  out.push_back(std::move(raw));
  return out;
}

// kQ8_0Split rows of raw codes the quantizer reaches only at its bounds, appended to `out`: random
// in [code_min, 127], all +127, all -127, each with random f16-exact block scales and the code
// sums and Q8_1 sums (s = d * sum, rounded through f16) that belong to those codes.
inline void append_raw_split_rows(std::vector<std::vector<std::uint8_t>>& out, std::int64_t n, std::mt19937& rng,
                                  int code_min = -127) {
  const std::size_t bytes = kernels::act_row_bytes(kernels::ActFormat::kQ8_0Split, n);
  std::uniform_int_distribution<int> code(code_min, 127);
  std::uniform_real_distribution<float> scale(1e-4f, 1.0f);
  for (int kind = 0; kind < 3; ++kind) {
    out.emplace_back(bytes);
    auto* qs = reinterpret_cast<std::int8_t*>(out.back().data());
    auto* d = reinterpret_cast<float*>(qs + n);
    auto* sum = reinterpret_cast<std::int32_t*>(d + n / 32);
    auto* s = reinterpret_cast<float*>(sum + n / 32);
    for (std::int64_t i = 0; i < n; ++i)
      qs[i] = static_cast<std::int8_t>(kind == 0 ? code(rng) : kind == 1 ? 127 : -127);
    for (std::int64_t b = 0; b < n / 32; ++b) {
      d[b] = f16_to_f32(f32_to_f16(scale(rng)));
      sum[b] = 0;
      for (int j = 0; j < 32; ++j) sum[b] += qs[b * 32 + j];
      s[b] = f16_to_f32(f32_to_f16(d[b] * static_cast<float>(sum[b])));
    }
  }
}

}  // namespace wisp::test
