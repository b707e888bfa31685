// The CUDA backend's matmuls: the activation quantizer and the dequant-dot over the stored blocks.
//
// One warp per weight row. Lane l takes the row's 32-value chunks l, l + 32, l + 64, ... (so the
// warp reads 32 neighbouring chunks at a time), decodes each once and multiplies it with up to
// kTile tokens' activation chunks; each token's lane sums are then added by one fixed shuffle
// tree. The order of every token's sum depends only on the row's length, never on the batch.
#include <cstdint>

#include "cuda/cuda_check.h"
#include "cuda/device_kernels.h"

namespace wisp::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kRowsPerBlock = 4;  // warps per thread block
constexpr int kTile = 8;          // tokens per pass over a row

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = kWarp / 2; off > 0; off /= 2) v = hd_add(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int off = kWarp / 2; off > 0; off /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

// One warp per 32-value chunk: lane j quantizes value j with the chunk's amax.
__global__ void quantize_act_kernel(const float* x, std::int64_t x_stride, std::int64_t n_tok, std::int64_t n_chunks,
                                    ActChunk* out) {
  const std::int64_t chunk = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (chunk >= n_tok * n_chunks) return;
  const std::int64_t t = chunk / n_chunks, c = chunk % n_chunks;
  const float v = x[t * x_stride + c * kChunk + lane];
  const float amax = warp_max(fabsf(v));
  ActChunk& a = out[chunk];
  quantize_act_value(v, amax, a.q[lane]);
  int s = a.q[lane];
  for (int off = 8; off > 0; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);  // within each half
  if (lane == 0) {
    a.d = act_scale(amax);
    a.sum[0] = s;
  }
  if (lane == 16) a.sum[1] = s;
}

// The chunk products of the two weight kinds: add chunk c of the row times tokens [t0, t0 + nt)
// into acc, in the chunk's own fixed order.
struct QuantizedChunks {
  const ActChunk* act;
  std::int64_t n_chunks;
  __device__ void operator()(const DeviceMatrix& w, const std::uint8_t* row, std::int64_t c, std::int64_t t0, int nt,
                             float* acc) const {
    WeightChunk wc;
    decode_chunk(w.type, row, c, wc);
    for (int t = 0; t < nt; ++t) acc[t] = hd_add(acc[t], chunk_dot(wc, act[(t0 + t) * n_chunks + c]));
  }
};
struct FloatChunks {
  const float* x;
  std::int64_t x_stride;
  __device__ void operator()(const DeviceMatrix& w, const std::uint8_t* row, std::int64_t c, std::int64_t t0, int nt,
                             float* acc) const {
    float wv[kChunk];
    float_chunk(w.type, row, c, wv);
    for (int t = 0; t < nt; ++t) {
      const float* xr = x + (t0 + t) * x_stride + c * kChunk;
      float a = acc[t];
      for (int j = 0; j < kChunk; ++j) a = __fmaf_rn(wv[j], xr[j], a);
      acc[t] = a;
    }
  }
};

template <class Chunks>
__global__ void matmul_kernel(DeviceMatrix w, Chunks chunks, std::int64_t n_tok, float* y, std::int64_t y_stride) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp;
  const int lane = threadIdx.x % kWarp;
  if (row >= w.n_rows) return;
  const std::uint8_t* wr = w.data + row * static_cast<std::int64_t>(w.row_bytes);
  const std::int64_t n_chunks = w.n_cols / kChunk;
  for (std::int64_t t0 = static_cast<std::int64_t>(blockIdx.y) * kTile; t0 < n_tok;
       t0 += std::int64_t{gridDim.y} * kTile) {
    const int nt = n_tok - t0 < kTile ? static_cast<int>(n_tok - t0) : kTile;
    float acc[kTile];
    for (int t = 0; t < kTile; ++t) acc[t] = 0.0f;
    for (std::int64_t c = lane; c < n_chunks; c += kWarp) chunks(w, wr, c, t0, nt, acc);
    for (int t = 0; t < nt; ++t) {
      const float sum = warp_sum(acc[t]);
      if (lane == 0) y[(t0 + t) * y_stride + row] = sum;
    }
  }
}

// One thread per (token, value).
__global__ void embed_kernel(DeviceMatrix table, const std::int32_t* tokens, std::int64_t n_tok, float* out,
                             std::int64_t out_stride) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t n_chunks = table.n_cols / kChunk;
  if (i >= n_tok * n_chunks) return;
  const std::int64_t t = i / n_chunks, c = i % n_chunks;
  const std::uint8_t* row =
      table.data + static_cast<std::int64_t>(tokens[t]) * static_cast<std::int64_t>(table.row_bytes);
  float* o = out + t * out_stride + c * kChunk;
  if (is_float_type(table.type)) {
    float_chunk(table.type, row, c, o);
    return;
  }
  WeightChunk wc;
  decode_chunk(table.type, row, c, wc);
  for (int j = 0; j < kChunk; ++j) o[j] = chunk_value(wc, j);
}

dim3 matmul_grid(std::int64_t n_rows, std::int64_t n_tok) {
  const auto row_blocks = static_cast<unsigned>((n_rows + kRowsPerBlock - 1) / kRowsPerBlock);
  // Token tiles across grid.y (at most 64 of them at once; a block loops over the rest).
  const std::int64_t tiles = (n_tok + kTile - 1) / kTile;
  return dim3(row_blocks, static_cast<unsigned>(tiles < 64 ? tiles : 64));
}

}  // namespace

void launch_quantize_act(const float* x, std::int64_t x_stride, std::int64_t n_tok, std::int64_t n_cols, ActChunk* out,
                         cudaStream_t s) {
  const std::int64_t n_chunks = n_cols / kChunk;
  const std::int64_t threads = n_tok * n_chunks * kWarp;
  const int block = 256;
  quantize_act_kernel<<<static_cast<unsigned>((threads + block - 1) / block), block, 0, s>>>(x, x_stride, n_tok,
                                                                                             n_chunks, out);
  check(cudaGetLastError(), "activation quantizer launch");
}

void launch_matmul_q(const DeviceMatrix& w, const ActChunk* act, std::int64_t n_tok, float* y, std::int64_t y_stride,
                     cudaStream_t s) {
  const QuantizedChunks chunks{act, w.n_cols / kChunk};
  matmul_kernel<<<matmul_grid(w.n_rows, n_tok), kRowsPerBlock * kWarp, 0, s>>>(w, chunks, n_tok, y, y_stride);
  check(cudaGetLastError(), "matmul launch");
}

void launch_matmul_f(const DeviceMatrix& w, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
                     std::int64_t y_stride, cudaStream_t s) {
  const FloatChunks chunks{x, x_stride};
  matmul_kernel<<<matmul_grid(w.n_rows, n_tok), kRowsPerBlock * kWarp, 0, s>>>(w, chunks, n_tok, y, y_stride);
  check(cudaGetLastError(), "float matmul launch");
}

void launch_embed(const DeviceMatrix& table, const std::int32_t* tokens, std::int64_t n_tok, float* out,
                  std::int64_t out_stride, cudaStream_t s) {
  const std::int64_t n = n_tok * (table.n_cols / kChunk);
  const int block = 128;
  embed_kernel<<<static_cast<unsigned>((n + block - 1) / block), block, 0, s>>>(table, tokens, n_tok, out, out_stride);
  check(cudaGetLastError(), "embedding launch");
}

}  // namespace wisp::cuda
