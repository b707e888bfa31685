#include "kernels/act_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "formats/block_layouts.h"
#include "formats/half.h"
#include "kernels/kernel_set.h"
#include "wisp/error.h"

namespace wisp::kernels {

namespace {

// Round half to even, as the SIMD round instructions ggml's x86 quantizers use (roundf would
// round half away from zero). |v| <= 127.5 here, so the int conversion is safe.
inline int round_even(float v) { return static_cast<int>(std::nearbyint(v)); }

void require_multiple(const char* what, std::int64_t n, std::int64_t block) {
  if (n % block != 0) {
    throw Error(std::string("activation ") + what + ": row of " + std::to_string(n) +
                " values is not a multiple of the block size " + std::to_string(block));
  }
}

float block_amax(const float* x, int n) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = std::max(amax, std::fabs(x[j]));
  return amax;
}

}  // namespace

const char* act_format_name(ActFormat f) {
  switch (f) {
    case ActFormat::kF32: return "F32";
    case ActFormat::kF16: return "F16";
    case ActFormat::kBF16: return "BF16";
    case ActFormat::kQ8_0: return "Q8_0";
    case ActFormat::kQ8_1: return "Q8_1";
    case ActFormat::kQ8_K: return "Q8_K";
    case ActFormat::kQ8_Kx4: return "Q8_Kx4";
    case ActFormat::kQ8_0Split: return "Q8_0-split";
  }
  return "?";
}

std::int64_t act_block_elems(ActFormat f) {
  switch (f) {
    case ActFormat::kQ8_0:
    case ActFormat::kQ8_1:
    case ActFormat::kQ8_0Split: return kQK;
    case ActFormat::kQ8_K:
    case ActFormat::kQ8_Kx4: return kQK_K;
    default: return 1;
  }
}

std::size_t act_row_bytes(ActFormat f, std::int64_t n) {
  const auto blocks = static_cast<std::size_t>(n / act_block_elems(f));
  switch (f) {
    case ActFormat::kF32: return blocks * sizeof(float);
    case ActFormat::kF16:
    case ActFormat::kBF16: return blocks * sizeof(std::uint16_t);
    case ActFormat::kQ8_0: return blocks * sizeof(BlockQ8_0);
    case ActFormat::kQ8_1: return blocks * sizeof(BlockQ8_1);
    case ActFormat::kQ8_0Split: return blocks * (kQK + 2 * sizeof(float) + sizeof(std::int32_t));
    case ActFormat::kQ8_K:
    case ActFormat::kQ8_Kx4: return blocks * sizeof(BlockQ8_K);
  }
  return 0;
}

namespace {

// The scalar references (the SIMD quantizers in src/kernels/x86/act_quant-inl.h reproduce their bytes).
void scalar_q8_0(const float* x, void* out, std::int64_t n) {
  auto* y = static_cast<BlockQ8_0*>(out);
  for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    const float amax = block_amax(x, kQK);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    y[b].d = f32_to_f16(d);
    for (int j = 0; j < kQK; ++j) y[b].qs[j] = static_cast<std::int8_t>(round_even(x[j] * id));
  }
}

void scalar_q8_1(const float* x, void* out, std::int64_t n) {
  auto* y = static_cast<BlockQ8_1*>(out);
  for (std::int64_t b = 0; b < n / kQK; ++b, x += kQK) {
    const float amax = block_amax(x, kQK);
    const float d = amax / 127.0f;
    const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
    int sum = 0;
    for (int j = 0; j < kQK; ++j) {
      const int q = round_even(x[j] * id);
      y[b].qs[j] = static_cast<std::int8_t>(q);
      sum += q;
    }
    y[b].d = f32_to_f16(d);
    // The float d, not its half rounding, times the code sum: as ggml does.
    y[b].s = f32_to_f16(d * static_cast<float>(sum));
  }
}

// Both Q8_K quantizers; they differ only in which sign wins a tie for the largest magnitude.
void quantize_q8_K(const float* x, void* out, std::int64_t n, bool positive_wins_ties) {
  auto* y = static_cast<BlockQ8_K*>(out);
  for (std::int64_t b = 0; b < n / kQK_K; ++b, x += kQK_K) {
    // The signed value of largest magnitude (the first one on ties, or the positive one).
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < kQK_K; ++j) {
      const float ax = std::fabs(x[j]);
      if (ax > amax || (positive_wins_ties && ax == amax && x[j] > 0.0f)) {
        amax = ax;
        max = x[j];
      }
    }
    BlockQ8_K& blk = y[b];
    if (amax == 0.0f) {
      blk.d = 0.0f;
      std::memset(blk.qs, 0, sizeof blk.qs);
      std::memset(blk.bsums, 0, sizeof blk.bsums);
      continue;
    }
    // Scaling by -127/max maps max itself to -127 and keeps every code in [-127, 127] (+128 can
    // only arise from rounding noise and is clamped), which the SIMD K-quant dots rely on.
    const float iscale = -127.0f / max;
    for (int j = 0; j < kQK_K; ++j) blk.qs[j] = static_cast<std::int8_t>(std::min(127, round_even(iscale * x[j])));
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += blk.qs[16 * g + j];
      blk.bsums[g] = static_cast<std::int16_t>(sum);
    }
    blk.d = 1.0f / iscale;
  }
}

void scalar_q8_K(const float* x, void* out, std::int64_t n) { quantize_q8_K(x, out, n, false); }
void scalar_q8_Kx4(const float* x, void* out, std::int64_t n) { quantize_q8_K(x, out, n, true); }

// The quantizers of the dot kernels' ISA (the running bundle, chosen once).
const IsaActQuant& active_quantizers() { return kernel_set().act_quant; }

}  // namespace

IsaActQuant scalar_act_quant() { return {scalar_q8_0, scalar_q8_1, scalar_q8_K, scalar_q8_Kx4}; }

ActQuantFn find_act_quantizer(ActFormat f, Isa isa) {
  const KernelSet* k = kernel_set_for(isa);
  if (k == nullptr) return nullptr;
  const IsaActQuant& q = k->act_quant;
  switch (f) {
    case ActFormat::kQ8_0: return q.q8_0;
    case ActFormat::kQ8_1: return q.q8_1;
    case ActFormat::kQ8_K: return q.q8_K;
    case ActFormat::kQ8_Kx4: return q.q8_Kx4;
    default: return nullptr;
  }
}

void quantize_act_q8_0(const float* x, void* out, std::int64_t n) {
  require_multiple("Q8_0", n, kQK);
  active_quantizers().q8_0(x, out, n);
}
void quantize_act_q8_1(const float* x, void* out, std::int64_t n) {
  require_multiple("Q8_1", n, kQK);
  active_quantizers().q8_1(x, out, n);
}
void quantize_act_q8_K(const float* x, void* out, std::int64_t n) {
  require_multiple("Q8_K", n, kQK_K);
  active_quantizers().q8_K(x, out, n);
}
void quantize_act_q8_Kx4(const float* x, void* out, std::int64_t n) {
  require_multiple("Q8_K", n, kQK_K);
  active_quantizers().q8_Kx4(x, out, n);
}

void quantize_act_q8_0_split(const float* x, void* out, std::int64_t n) {
  require_multiple("Q8_0", n, kQK);
  const ActQuantFn q8_1 = active_quantizers().q8_1;  // Q8_0's codes and d, and s
  auto* qs = static_cast<std::int8_t*>(out);
  auto* d = reinterpret_cast<float*>(qs + n);
  auto* sum = reinterpret_cast<std::int32_t*>(d + n / kQK);
  auto* s = reinterpret_cast<float*>(sum + n / kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    BlockQ8_1 blk;
    q8_1(x + b * kQK, &blk, kQK);
    std::memcpy(qs + b * kQK, blk.qs, kQK);
    d[b] = f16_to_f32(blk.d);
    s[b] = f16_to_f32(blk.s);
    std::int32_t total = 0;
    for (int j = 0; j < kQK; ++j) total += blk.qs[j];
    sum[b] = total;
  }
}

void convert_act_row(ActFormat f, const float* x, void* out, std::int64_t n) {
  switch (f) {
    case ActFormat::kF32: std::memcpy(out, x, static_cast<std::size_t>(n) * sizeof(float)); return;
    case ActFormat::kF16: {
      auto* y = static_cast<std::uint16_t*>(out);
      for (std::int64_t i = 0; i < n; ++i) y[i] = f32_to_f16(x[i]);
      return;
    }
    case ActFormat::kBF16: {
      auto* y = static_cast<std::uint16_t*>(out);
      for (std::int64_t i = 0; i < n; ++i) y[i] = f32_to_bf16(x[i]);
      return;
    }
    case ActFormat::kQ8_0: quantize_act_q8_0(x, out, n); return;
    case ActFormat::kQ8_1: quantize_act_q8_1(x, out, n); return;
    case ActFormat::kQ8_K: quantize_act_q8_K(x, out, n); return;
    case ActFormat::kQ8_Kx4: quantize_act_q8_Kx4(x, out, n); return;
    case ActFormat::kQ8_0Split: quantize_act_q8_0_split(x, out, n); return;
  }
}

}  // namespace wisp::kernels
