// The CUDA backend's KV writes and paged attention.
//
// Attention: one warp per (query token, head), in three passes over the token's visible keys, as
// the CPU computes it: the scores (q.k * kq_scale, softcapped if asked), their softmax, then the
// probabilities times the values (probabilities and the query rounded to half with round_f16, as
// llama.cpp does with its F16 cache). Each pass's order depends on the token's position only, so a
// token's output does not depend on the batch.
#include <cstdint>

#include "cuda/cuda_check.h"
#include "cuda/device_kernels.h"

namespace wisp::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 4;
constexpr int kMaxDimsPerLane = 8;  // head_dim <= 256

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = kWarp / 2; off > 0; off /= 2) v = hd_add(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int off = kWarp / 2; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float round_half(float v) { return __half2float(__float2half_rn(v)); }

__device__ __forceinline__ const std::byte* kv_row(const DeviceKv& kv, std::uint32_t block, std::uint32_t layer,
                                                   int kind, int head, std::uint32_t slot) {
  const std::size_t plane = (static_cast<std::size_t>(layer) * 2 + kind) * kv.n_kv_heads + head;
  return kv.pool + block * kv.block_bytes + (plane * kv.block_size + slot) * kv.row_bytes;
}
__device__ __forceinline__ float kv_value(const DeviceKv& kv, const std::byte* row, int d) {
  if (kv.q8_0) return kv_q8_0_value(reinterpret_cast<const std::uint8_t*>(row), d);
  if (kv.f16) return __half2float(reinterpret_cast<const __half*>(row)[d]);
  return reinterpret_cast<const float*>(row)[d];
}

// One thread per (token, K|V, kv head, dimension).
__global__ void store_kv_kernel(DeviceKv kv, std::uint32_t layer, const float* k, std::int64_t k_stride, const float* v,
                                std::int64_t v_stride, std::int64_t n_tok, const std::uint32_t* tok_block,
                                const std::uint32_t* tok_slot, bool round_f16) {
  const std::int64_t per_tok = 2 * static_cast<std::int64_t>(kv.n_kv_heads) * kv.head_dim;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n_tok * per_tok) return;
  const std::int64_t t = i / per_tok;
  const int kind = static_cast<int>((i % per_tok) / (kv.n_kv_heads * kv.head_dim));
  const int head = static_cast<int>((i % (kv.n_kv_heads * kv.head_dim)) / kv.head_dim);
  const int d = static_cast<int>(i % kv.head_dim);
  const float x = kind == 0 ? k[t * k_stride + head * kv.head_dim + d] : v[t * v_stride + head * kv.head_dim + d];
  auto* row = const_cast<std::byte*>(kv_row(kv, tok_block[t], layer, kind, head, tok_slot[t]));
  if (kv.f16) {
    reinterpret_cast<__half*>(row)[d] = __float2half_rn(x);
  } else {
    reinterpret_cast<float*>(row)[d] = round_f16 ? round_half(x) : x;
  }
}

__global__ void attention_kernel(DeviceKv kv, std::uint32_t layer, DeviceAttention p, const float* q,
                                 std::int64_t q_stride, std::int64_t n_tok, const std::int64_t* tok_pos,
                                 const std::uint32_t* tok_table, const std::uint32_t* tables, float* scores,
                                 std::int64_t max_keys, float* out, std::int64_t out_stride) {
  const std::int64_t pair = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (pair >= n_tok * p.n_heads) return;
  const std::int64_t t = pair / p.n_heads;
  const int h = static_cast<int>(pair % p.n_heads);
  const int kvh = h / (p.n_heads / p.n_kv_heads);
  const int hd = static_cast<int>(kv.head_dim);
  const std::int64_t pos = tok_pos[t];
  const std::int64_t lo = p.window > 0 && pos - p.window + 1 > 0 ? pos - p.window + 1 : 0;
  const std::uint32_t* table = tables + tok_table[t];
  float* sc = scores + pair * max_keys;

  float qv[kMaxDimsPerLane];
  for (int i = 0; i < kMaxDimsPerLane; ++i) {
    const int d = lane + i * kWarp;
    const float x = d < hd ? q[t * q_stride + h * hd + d] : 0.0f;
    qv[i] = p.round_f16 ? round_half(x) : x;
  }

  // Pass 1: the scores and their maximum.
  float mx = -INFINITY;
  for (std::int64_t k = lo; k <= pos; ++k) {
    const std::byte* row =
        kv_row(kv, table[k / kv.block_size], layer, 0, kvh, static_cast<std::uint32_t>(k % kv.block_size));
    float part = 0.0f;
    for (int i = 0; i < kMaxDimsPerLane; ++i) {
      const int d = lane + i * kWarp;
      if (d < hd) part = __fmaf_rn(qv[i], kv_value(kv, row, d), part);
    }
    float s = hd_mul(warp_sum(part), p.kq_scale);
    if (p.logit_softcap > 0.0f) s = hd_mul(tanhf(hd_mul(s, 1.0f / p.logit_softcap)), p.logit_softcap);
    if (lane == 0) sc[k] = s;
    mx = fmaxf(mx, s);
  }
  __syncwarp();

  // Pass 2: exponentials and their sum (lanes stride over the keys, then one fixed tree).
  float sum = 0.0f;
  for (std::int64_t k = lo + lane; k <= pos; k += kWarp) {
    const float e = expf(sc[k] - mx);
    sc[k] = e;
    sum = hd_add(sum, e);
  }
  sum = warp_sum(sum);
  __syncwarp();
  const float inv = 1.0f / sum;

  // Pass 3: probabilities times values.
  float acc[kMaxDimsPerLane];
  for (int i = 0; i < kMaxDimsPerLane; ++i) acc[i] = 0.0f;
  for (std::int64_t k = lo; k <= pos; ++k) {
    float w = hd_mul(sc[k], inv);
    if (p.round_f16) w = round_half(w);
    const std::byte* row =
        kv_row(kv, table[k / kv.block_size], layer, 1, kvh, static_cast<std::uint32_t>(k % kv.block_size));
    for (int i = 0; i < kMaxDimsPerLane; ++i) {
      const int d = lane + i * kWarp;
      if (d < hd) acc[i] = __fmaf_rn(w, kv_value(kv, row, d), acc[i]);
    }
  }
  for (int i = 0; i < kMaxDimsPerLane; ++i) {
    const int d = lane + i * kWarp;
    if (d < hd) out[t * out_stride + h * hd + d] = acc[i];
  }
}

// q8_0 rows: one warp per (token, K|V, kv head, group of 32); lane j quantizes value j of the group
// with the group's amax (a max, exact in any order, so the CPU's loop gives the same).
__global__ void store_kv_q8_0_kernel(DeviceKv kv, std::uint32_t layer, const float* k, std::int64_t k_stride,
                                     const float* v, std::int64_t v_stride, std::int64_t n_tok,
                                     const std::uint32_t* tok_block, const std::uint32_t* tok_slot) {
  const int groups = (static_cast<int>(kv.head_dim) + kChunk - 1) / kChunk;
  const std::int64_t per_tok = 2 * static_cast<std::int64_t>(kv.n_kv_heads) * groups;
  const std::int64_t w = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (w >= n_tok * per_tok) return;  // the whole warp leaves together
  const std::int64_t t = w / per_tok;
  const int kind = static_cast<int>((w % per_tok) / (kv.n_kv_heads * groups));
  const int head = static_cast<int>((w % (kv.n_kv_heads * groups)) / groups);
  const int g = static_cast<int>(w % groups);
  const int d = g * kChunk + lane;
  const float* src = kind == 0 ? k + t * k_stride : v + t * v_stride;
  const float x =
      d < static_cast<int>(kv.head_dim) ? src[head * kv.head_dim + d] : 0.0f;  // a partial group's padding is 0
  const float amax = warp_max(fabsf(x));
  float inv = 0.0f;
  const std::uint16_t dh = kv_q8_0_scale(amax, inv);
  auto* out = reinterpret_cast<std::uint8_t*>(
                  const_cast<std::byte*>(kv_row(kv, tok_block[t], layer, kind, head, tok_slot[t]))) +
              g * kKvQ8Bytes;
  out[2 + lane] = static_cast<std::uint8_t>(kv_q8_0_code(x, inv));
  if (lane == 0) {
    out[0] = static_cast<std::uint8_t>(dh & 0xff);
    out[1] = static_cast<std::uint8_t>(dh >> 8);
  }
}

}  // namespace

void launch_store_kv(const DeviceKv& kv, std::uint32_t layer, const float* k, std::int64_t k_stride, const float* v,
                     std::int64_t v_stride, std::int64_t n_tok, const std::uint32_t* tok_block,
                     const std::uint32_t* tok_slot, bool round_f16, cudaStream_t s) {
  if (kv.q8_0) {
    const std::int64_t groups = (kv.head_dim + kChunk - 1) / kChunk;
    const std::int64_t threads = n_tok * 2 * kv.n_kv_heads * groups * kWarp;
    const int block = 128;
    store_kv_q8_0_kernel<<<static_cast<unsigned>((threads + block - 1) / block), block, 0, s>>>(
        kv, layer, k, k_stride, v, v_stride, n_tok, tok_block, tok_slot);
    check(cudaGetLastError(), "KV store launch");
    return;
  }
  const std::int64_t n = n_tok * 2 * kv.n_kv_heads * kv.head_dim;
  const int block = 256;
  store_kv_kernel<<<static_cast<unsigned>((n + block - 1) / block), block, 0, s>>>(
      kv, layer, k, k_stride, v, v_stride, n_tok, tok_block, tok_slot, round_f16);
  check(cudaGetLastError(), "KV store launch");
}

void launch_attention(const DeviceKv& kv, std::uint32_t layer, const DeviceAttention& p, const float* q,
                      std::int64_t q_stride, std::int64_t n_tok, const std::int64_t* tok_pos,
                      const std::uint32_t* tok_table, const std::uint32_t* tables, float* scores, std::int64_t max_keys,
                      float* out, std::int64_t out_stride, cudaStream_t s) {
  if (kv.head_dim > kWarp * kMaxDimsPerLane) {
    throw Error("cuda: attention heads of " + std::to_string(kv.head_dim) + " dimensions (at most " +
                std::to_string(kWarp * kMaxDimsPerLane) + ")");
  }
  const std::int64_t pairs = n_tok * p.n_heads;
  attention_kernel<<<static_cast<unsigned>((pairs + kWarpsPerBlock - 1) / kWarpsPerBlock), kWarpsPerBlock * kWarp, 0,
                     s>>>(kv, layer, p, q, q_stride, n_tok, tok_pos, tok_table, tables, scores, max_keys, out,
                          out_stride);
  check(cudaGetLastError(), "attention launch");
}

}  // namespace wisp::cuda
