// Causal multi-head attention of a batch of query tokens over a paged KV cache.
//
// The cache is seen through a block table: block i holds the K (and V) rows of token positions
// [i*block_size, (i+1)*block_size), one contiguous plane of block_size rows of head_dim floats per
// kv head (the layout of src/kv). The kernel knows nothing of the pool; the caller gathers, for one
// layer, each block's plane pointer for kv head 0 and the stride between heads.
//
// Numerics follow llama.cpp's default (non-flash) attention on x86 (see ggml_order.h): with
// round_f16 set, as with its F16 KV cache, the query and the softmax probabilities are rounded to
// half before their matmuls (the caller stores K and V rounded to half); scores are scaled by
// kq_scale, soft-maxed over the positions padded to a multiple of 64 (masked entries are exact
// zeros); the q.k and p.v dots use tinyBLAS's lane order for batches of 2+ tokens and vec_dot_f16's
// for a single token, as ggml does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/thread_pool.h"
#include "kernels/ggml_order.h"

namespace wisp::kernels {

struct PagedKv {
  std::span<const float* const> k_blocks;  // per block: the plane of kv head 0
  std::span<const float* const> v_blocks;
  std::int64_t head_stride = 0;  // floats from one kv head's plane to the next
  std::int64_t block_size = 0;   // token slots per block
  std::int64_t head_dim = 0;
};

// The same cache in a storage format the kernel decodes as it reads (f16, q8_0, q4: src/kv's
// kv_quant.h): each row of head_dim values is row_bytes bytes, turned into floats by `decode` a
// chunk of rows at a time into a scratch, once per tile of queries passing over them, so no f32
// copy of the cache is ever made. Rows whose decoder is f16_bytes_to_f32_row (the f16 cache's) are
// not decoded but read in place as halves. The arithmetic after decoding is the f32 path's, so an
// f16 cache gives exactly what f32 rows holding the same half values give.
using KvRowDecoder = void (*)(const std::byte* row, float* out, std::int64_t n);

struct PagedKvRows {
  std::span<const std::byte* const> k_blocks;  // per block: the plane of kv head 0
  std::span<const std::byte* const> v_blocks;
  std::int64_t head_stride = 0;  // bytes from one kv head's plane to the next
  std::int64_t row_bytes = 0;    // bytes of one token's row
  std::int64_t block_size = 0;
  std::int64_t head_dim = 0;
  KvRowDecoder decode = nullptr;
};

struct AttentionParams {
  int n_heads = 0;
  int n_kv_heads = 0;  // query head h reads kv head h / (n_heads / n_kv_heads) (GQA)
  float kq_scale = 1.0f;
  std::int64_t window = 0;     // sliding window: key p is visible from query q iff q - p < window; 0 = all
  float logit_softcap = 0.0f;  // cap * tanh(score / cap) before the softmax; 0 = none
  // Attention sinks (gpt-oss): sinks[h] is query head h's extra logit, counted in its softmax's
  // max and denominator but attached to no value (ggml_soft_max_add_sinks). Null = none.
  const float* sinks = nullptr;
  bool round_f16 = true;
  // Every query in the one-token (vec_dot) order, whatever the batch: its output then depends only
  // on its own row and cache. False: ggml's choice (tinyBLAS's order for batches of 2+ tokens).
  bool batch_invariant = false;
  // Which x86 build of ggml the dot lanes, softmax and exp follow (ggml_order.h).
  ggml::Simd isa = ggml::Simd::kAvx512;
};

// One sequence's run of query tokens in a batched call: token t (t < n_tok) at position
// pos0 + t reads the sequence's cache `kv`; its q row is q + t * q_stride, its output out + t * out_stride.
template <class Kv>
struct AttentionSegment {
  const float* q = nullptr;
  std::int64_t q_stride = 0;
  std::int64_t n_tok = 0;
  std::int64_t pos0 = 0;
  Kv kv;
  float* out = nullptr;
  std::int64_t out_stride = 0;
};

// For query token t (t < n_tok) at position pos0 + t, whose keys at positions [0, pos0 + t] are in
// kv: out[t * out_stride + h * head_dim + d]. q rows hold n_heads * head_dim values at q_stride.
// The work is split over the threads of `pool` (core/thread_pool.h; a pool of one runs inline).
void attention(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const PagedKv& kv,
               const AttentionParams& p, float* out, std::int64_t out_stride, ThreadPool& pool);
void attention(const float* q, std::int64_t q_stride, std::int64_t n_tok, std::int64_t pos0, const PagedKvRows& kv,
               const AttentionParams& p, float* out, std::int64_t out_stride, ThreadPool& pool);
// Several sequences' queries (a batched step) as one parallel job on the pool; each segment's
// results are those of its own call above.
void attention(std::span<const AttentionSegment<PagedKv>> segs, const AttentionParams& p, ThreadPool& pool);
void attention(std::span<const AttentionSegment<PagedKvRows>> segs, const AttentionParams& p, ThreadPool& pool);

}  // namespace wisp::kernels
