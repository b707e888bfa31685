// The prefill matmul on int8 tensor cores (sm_80+), bit-identical to the decode kernel (matmul.cu).
//
// A warp computes a tile of 16 weight rows times 16 tokens. For each 32-value chunk, lanes 0..15
// decode one row's chunk each (block_math.h's decoders, as the decode kernel) into int8 codes
// (mma_math.h) in shared memory; then one m16n8k16 s8 mma per 16-value half and 8 tokens gives
// every (row, token) half dot as an exact int32, the integer the decode kernel computes. The float
// part is the decode kernel's, operation for operation: chunk_dot_isums per chunk, the chunks of
// decode lane l (l, l + 32, ...) added in turn, the 32 lane sums added in the shuffle tree's shape
// (SlotTreeSum). So a token's output has the same bits whichever kernel a step's size picks.
//
// What it saves: the decode kernel decodes a row's chunk once per 8 tokens and multiplies on the
// CUDA cores; here a chunk is decoded once per 16 tokens and the integer products run on the
// tensor cores. The per-(row, token, chunk) float work (two scale products and adds) stays, since
// it is what batch invariance pins. Not yet tuned on a device (no shared-memory staging of the
// activations, no double buffering): docs/cuda.md.
#include <cstdint>

#include "cuda/cuda_check.h"
#include "cuda/device_kernels.h"
#include "cuda/mma_math.h"

namespace wisp::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kWarps = 4;   // warps per thread block, each its own 16 rows
constexpr int kRows = 16;   // rows per warp: the mma's M
constexpr int kNTiles = 2;  // 8-token mma tiles per warp (4 spills registers: 255 + 268 bytes on sm_90)
constexpr int kTokens = 8 * kNTiles;

// One decoded row chunk in shared memory: the int8 codes (q = code + bias) and the float scales.
struct RowChunk {
  std::int8_t code[kChunk];
  std::int32_t bias;
  float scale[2];
  float min[2];
  bool has_min;
};

// D = A * B for one 16 x 8 x 16 int8 tile (A: 16 rows x 16 codes, row-major fragments; B: 16
// codes x 8 tokens). Fragment layout (PTX ISA, mma.m16n8k16 with .s8): lane = 4 g + t holds
// A rows g and g + 8, codes 4t..4t+3; B token g, codes 4t..4t+3; D rows g (d0, d1) and g + 8
// (d2, d3), tokens 2t and 2t + 1.
__device__ __forceinline__ void mma_s8(const int a[2], int b, int d[4]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%7, %8, %9, %10};"
               : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(b), "r"(0), "r"(0), "r"(0), "r"(0));
#else
  // The host never launches this kernel below sm_80 (mma_supported); trap rather than compute wrong.
  (void)a;
  (void)b;
  d[0] = d[1] = d[2] = d[3] = 0;
  __trap();
#endif
}

__device__ __forceinline__ int load_i32(const std::int8_t* p) { return *reinterpret_cast<const int*>(p); }

__global__ void __launch_bounds__(kWarps* kWarp)
    matmul_mma_kernel(DeviceMatrix w, const ActChunk* act, std::int64_t n_tok, float* y, std::int64_t y_stride) {
  __shared__ RowChunk tile[kWarps][kRows];
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  const int g = lane / 4, t4 = lane % 4;
  const std::int64_t row0 = (static_cast<std::int64_t>(blockIdx.x) * kWarps + warp) * kRows;
  if (row0 >= w.n_rows) return;  // the whole warp leaves together
  const std::int64_t n_chunks = w.n_cols / kChunk;
  RowChunk* rc = tile[warp];

  for (std::int64_t t0 = static_cast<std::int64_t>(blockIdx.y) * kTokens; t0 < n_tok;
       t0 += std::int64_t{gridDim.y} * kTokens) {
    SlotTreeSum tree[kNTiles][4];
    for (int slot = 0; slot < kLanes; ++slot) {
      // Decode lane slot_lane(slot)'s chunks, in its order.
      float part[kNTiles][4];
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int i = 0; i < 4; ++i) part[n][i] = 0.0f;
      }
      for (std::int64_t c = slot_lane(slot); c < n_chunks; c += kLanes) {
        __syncwarp();  // the previous chunk's codes have been read
        if (lane < kRows) {
          const std::int64_t r = row0 + lane;
          WeightChunk wc{};  // a padding row past the matrix stays zero (and is never written)
          if (r < w.n_rows) decode_chunk(w.type, w.data + r * static_cast<std::int64_t>(w.row_bytes), c, wc);
          MmaCodes mc;
          mma_codes(wc, mc);
          RowChunk& dst = rc[lane];
          for (int j = 0; j < kChunk; ++j) dst.code[j] = mc.q[j];
          dst.bias = mc.bias;
          dst.scale[0] = wc.scale[0];
          dst.scale[1] = wc.scale[1];
          dst.min[0] = wc.min[0];
          dst.min[1] = wc.min[1];
          dst.has_min = wc.has_min;
        }
        __syncwarp();
        int a[2][2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          a[h][0] = load_i32(rc[g].code + 16 * h + 4 * t4);
          a[h][1] = load_i32(rc[g + 8].code + 16 * h + 4 * t4);
        }
#pragma unroll
        for (int n = 0; n < kNTiles; ++n) {
          const std::int64_t tb = t0 + 8 * n + g;  // this lane's B token
          int d[2][4];
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int b = tb < n_tok ? load_i32(act[tb * n_chunks + c].q + 16 * h + 4 * t4) : 0;
            mma_s8(a[h], b, d[h]);
          }
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const std::int64_t tt = t0 + 8 * n + 2 * t4 + (i & 1);
            if (tt >= n_tok) continue;
            const RowChunk& wr = rc[i < 2 ? g : g + 8];
            const ActChunk& ac = act[tt * n_chunks + c];
            const std::int32_t isum[2] = {biased_isum(d[0][i], wr.bias, ac.sum[0]),
                                          biased_isum(d[1][i], wr.bias, ac.sum[1])};
            part[n][i] = hd_add(part[n][i], chunk_dot_isums(wr, ac.d, ac.sum, isum));
          }
        }
      }
#pragma unroll
      for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
        for (int i = 0; i < 4; ++i) tree[n][i].add(slot, part[n][i]);
      }
    }
#pragma unroll
    for (int n = 0; n < kNTiles; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const std::int64_t r = row0 + (i < 2 ? g : g + 8);
        const std::int64_t tt = t0 + 8 * n + 2 * t4 + (i & 1);
        if (r < w.n_rows && tt < n_tok) y[tt * y_stride + r] = tree[n][i].total;
      }
    }
  }
}

}  // namespace

bool mma_supported(int device) {
  int major = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
  return major >= 8;
}

void launch_matmul_q_mma(const DeviceMatrix& w, const ActChunk* act, std::int64_t n_tok, float* y,
                         std::int64_t y_stride, cudaStream_t s) {
  const auto row_blocks = static_cast<unsigned>((w.n_rows + kWarps * kRows - 1) / (kWarps * kRows));
  const std::int64_t tiles = (n_tok + kTokens - 1) / kTokens;
  const dim3 grid(row_blocks, static_cast<unsigned>(tiles < 64 ? tiles : 64));  // a block loops over the rest
  matmul_mma_kernel<<<grid, kWarps * kWarp, 0, s>>>(w, act, n_tok, y, y_stride);
  check(cudaGetLastError(), "tensor-core matmul launch");
}

}  // namespace wisp::cuda
