// Host-callable launchers of the CUDA backend's device kernels (matmul.cu, ops.cu, attention.cu).
// Every pointer is device memory; activations are rows of floats at a stride (in floats). The
// per-block math the kernels use is block_math.h's, so it is tested on the host.
//
// Batch invariance, as on the CPU: a token's outputs are computed by the same threads in the same
// order whatever the batch (the matmul's lanes split a row's chunks by index only, and each
// token's sum is reduced by the same fixed shuffle tree), so a request's logits do not depend on
// what it is batched with.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/block_math.h"

namespace wisp::cuda {

// out[t * (n_cols / 32) + c] = the 8-bit form of values [32 c, 32 c + 32) of row t of x.
void launch_quantize_act(const float* x, std::int64_t x_stride, std::int64_t n_tok, std::int64_t n_cols, ActChunk* out,
                         cudaStream_t s);

struct DeviceMatrix {
  const std::uint8_t* data = nullptr;
  std::uint32_t type = 0;
  std::int64_t n_cols = 0;
  std::int64_t n_rows = 0;
  std::size_t row_bytes = 0;
};

// y[t * y_stride + r] = row r of w . activation row t, for a quantized w (act from
// launch_quantize_act) ...
void launch_matmul_q(const DeviceMatrix& w, const ActChunk* act, std::int64_t n_tok, float* y, std::int64_t y_stride,
                     cudaStream_t s);
// The same products on int8 tensor cores (matmul_mma.cu; every quantized type, sm_80 and newer
// only: mma_supported), the same bits as launch_matmul_q for every token. The backend takes it for
// steps of at least kMmaMinTokens tokens: below that the decode kernel's 8-token passes read a
// weight row at most twice and the tensor-core tile (16 tokens) would be partly padding. A first
// guess, not yet measured on a device.
inline constexpr std::int64_t kMmaMinTokens = 16;
bool mma_supported(int device);
void launch_matmul_q_mma(const DeviceMatrix& w, const ActChunk* act, std::int64_t n_tok, float* y,
                         std::int64_t y_stride, cudaStream_t s);
// ... or a float w (F32, F16, BF16) on the f32 activations.
void launch_matmul_f(const DeviceMatrix& w, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
                     std::int64_t y_stride, cudaStream_t s);

// out row t = the dequantized row tokens[t] of the table (the reference dequantizer's values).
void launch_embed(const DeviceMatrix& table, const std::int32_t* tokens, std::int64_t n_tok, float* out,
                  std::int64_t out_stride, cudaStream_t s);

// Row-wise and element-wise ops over n_rows rows of n_cols values.
void launch_rmsnorm(const float* x, std::int64_t x_stride, const float* w, float eps, float* y, std::int64_t y_stride,
                    std::int64_t n_rows, std::int64_t n_cols, cudaStream_t s);
void launch_add_rows(const float* bias, float* y, std::int64_t y_stride, std::int64_t n_rows, std::int64_t n_cols,
                     cudaStream_t s);  // y row += bias
void launch_add(const float* x, std::int64_t x_stride, float* y, std::int64_t y_stride, std::int64_t n_rows,
                std::int64_t n_cols, cudaStream_t s);  // y += x
void launch_scale(float* x, std::int64_t stride, std::int64_t n_rows, std::int64_t n_cols, float v, cudaStream_t s);
void launch_softcap(float* x, std::int64_t stride, std::int64_t n_rows, std::int64_t n_cols, float cap, cudaStream_t s);
// out = act(gate) * up; gelu = false: SiLU.
void launch_glu(bool gelu, const float* gate, std::int64_t g_stride, const float* up, std::int64_t u_stride, float* out,
                std::int64_t o_stride, std::int64_t n_rows, std::int64_t n_cols, cudaStream_t s);
// dst row i = src row rows[i].
void launch_gather_rows(const float* src, std::int64_t s_stride, const std::int64_t* rows, std::int64_t n, float* dst,
                        std::int64_t d_stride, std::int64_t n_cols, cudaStream_t s);
// out row t = sum over s < k of weights[t k + s] * src row rows[t k + s], added in s order (the
// routed experts' outputs of an MoE layer).
void launch_weighted_sum_rows(const float* src, std::int64_t s_stride, const std::int64_t* rows, const float* weights,
                              std::int64_t k, float* out, std::int64_t o_stride, std::int64_t n_rows,
                              std::int64_t n_cols, cudaStream_t s);
// Rotates the first n_dims values of each of n_heads heads of row t with the (cos, sin) pairs
// cos_sin[t * n_dims ...] (computed on the host by the CPU's rope_table, so angles are the CPU's).
void launch_rope(float* x, std::int64_t stride, std::int64_t n_tok, std::int64_t n_heads, std::int64_t head_dim,
                 int n_dims, bool neox, const float* cos_sin, cudaStream_t s);

// The paged KV pool on the device: block b's bytes at pool + b * block_bytes, laid out as
// src/kv/kv_layout.h says ([layer][K|V][kv_head][slot][head_dim] rows of row_bytes).
struct DeviceKv {
  std::byte* pool = nullptr;
  std::size_t block_bytes = 0;
  std::size_t row_bytes = 0;
  std::uint32_t n_kv_heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t block_size = 0;
  bool f16 = true;    // rows of halves; else f32 ...
  bool q8_0 = false;  // ... or q8_0 groups of 32 (block_math.h's kv_q8_0_*)
};

// Per token of a step, where its K/V rows go: block id and slot (host-computed from the block tables).
void launch_store_kv(const DeviceKv& kv, std::uint32_t layer, const float* k, std::int64_t k_stride, const float* v,
                     std::int64_t v_stride, std::int64_t n_tok, const std::uint32_t* tok_block,
                     const std::uint32_t* tok_slot, bool round_f16, cudaStream_t s);

struct DeviceAttention {
  int n_heads = 0;
  int n_kv_heads = 0;
  float kq_scale = 1.0f;
  std::int64_t window = 0;
  float logit_softcap = 0.0f;
  bool round_f16 = true;
};

// out row t = attention of q row t at position tok_pos[t] over its sequence's keys [0, tok_pos[t]]:
// block i of the sequence is tables[tok_table[t] + i]. scores: n_tok * n_heads * max_keys floats of
// scratch (max_keys >= every tok_pos[t] + 1).
void launch_attention(const DeviceKv& kv, std::uint32_t layer, const DeviceAttention& p, const float* q,
                      std::int64_t q_stride, std::int64_t n_tok, const std::int64_t* tok_pos,
                      const std::uint32_t* tok_table, const std::uint32_t* tables, float* scores, std::int64_t max_keys,
                      float* out, std::int64_t out_stride, cudaStream_t s);

}  // namespace wisp::cuda
