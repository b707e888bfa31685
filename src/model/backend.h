// The op-level seam between the model and the hardware. The forward pass (transformer.cpp) is
// written as calls on a Backend: it never loops over activation values itself, so a second
// implementation (CUDA) can run the same model code. CpuBackend (cpu_backend.h) implements the ops
// over src/kernels.
//
// Activations are 2-D f32 arrays (rows = tokens or heads, cols = features) in memory the backend
// allocates (ActBuffer) and addresses (Act views); weights are MatrixViews into the mapped file.
// The KV cache is a KvPool whose storage the backend can address.
//
// A forward pass is a step over a StepBatch: the tokens of several sequences, each a run of rows
// of the step's activations with its own positions; every weight matmul runs once over all rows,
// RoPE uses each row's position, and KV writes and attention go to each run's own sequence
// through the pool's block tables. The seam names sequences and positions only (no host pointers
// into the pool), so a device backend resolves the block tables itself.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/rope.h"
#include "kv/host_kv_storage.h"
#include "kv/kv_pool.h"
#include "model/hparams.h"
#include "model/step_batch.h"
#include "wisp/error.h"

namespace wisp::model {

// A view of rows x cols floats, row r at data + r * stride.
struct Act {
  float* data = nullptr;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t stride = 0;

  float* row(std::int64_t r) const { return data + r * stride; }
  // Rows [r0, r0 + n).
  Act rows_from(std::int64_t r0, std::int64_t n) const { return {row(r0), n, cols, stride}; }
  // The same memory as rows of `c` columns (contiguous views only): e.g. [tokens, heads*dim] seen
  // as [tokens*heads, dim] for per-head ops.
  Act reshape_cols(std::int64_t c) const { return {data, rows * cols / c, c, c}; }
};

// Owns the memory of one activation array.
class ActBuffer {
 public:
  using Deleter = void (*)(float*);
  ActBuffer() = default;
  ActBuffer(float* data, Deleter del, std::int64_t rows, std::int64_t cols)
      : mem_(data, del), rows_(rows), cols_(cols) {}
  Act view() const { return {mem_.get(), rows_, cols_, cols_}; }
  std::int64_t rows() const { return rows_; }

 private:
  std::unique_ptr<float, Deleter> mem_{nullptr, nullptr};
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
};

// How K and V are stored and how attention rounds: llama.cpp keeps its cache in F16 by default,
// which also makes its attention matmuls round q and the probabilities to half. batch_invariant:
// attention in one order for every query whatever the batch (kernels/attention.h); the backend's
// matmuls follow the DotOrder it was made with.
struct KvNumerics {
  bool round_f16 = true;
  bool batch_invariant = true;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The storage of the engine's KV pool, where this backend's attention reads it: host memory
  // here (`resident`: committed at once), device memory for a device backend.
  virtual std::unique_ptr<KvStorage> make_kv_storage(const KvLayout& layout, std::uint32_t n_blocks, bool resident) {
    return std::make_unique<HostKvStorage>(layout, n_blocks, resident);
  }

  virtual ActBuffer alloc(std::int64_t rows, std::int64_t cols) = 0;

  // The x86 build of ggml whose float kernels this backend reproduces (ggml_order.h), for the
  // host-side steps the model computes itself (the MoE router's softmax).
  virtual kernels::ggml::Simd ggml_isa() const { return kernels::ggml::Simd::kAvx512; }
  // Copies row r of x to host memory (out.size() == x.cols).
  virtual void read_row(Act x, std::int64_t r, std::span<float> out) = 0;

  // out row t = dequantized row tokens[t] of the embedding table.
  virtual void embed(const kernels::MatrixView& table, std::span<const std::int32_t> tokens, Act out) = 0;
  // y row t = W x row t (+ bias if not null).
  virtual void matmul(const kernels::MatrixView& w, Act x, Act y, const float* bias = nullptr) = 0;
  // Several matmuls that read the same input (q/k/v, gate/up): one call, so a backend can share
  // the input's conversion and run them as one parallel job. Default: one matmul() each.
  struct MatmulTarget {
    const kernels::MatrixView* w = nullptr;
    Act y;
    const float* bias = nullptr;
  };
  virtual void matmul_group(Act x, std::span<const MatmulTarget> targets) {
    for (const MatmulTarget& t : targets) matmul(*t.w, x, t.y, t.bias);
  }
  // y row = rmsnorm(x row) * w (w may be null). y may be x.
  virtual void rmsnorm(Act x, const float* w, float eps, Act y) = 0;
  // dst row i = src row rows[i].
  virtual void gather_rows(Act src, std::span<const std::int64_t> rows, Act dst) = 0;
  // Row t of x holds heads of head_dim values at position positions[t]: rotate them in place.
  virtual void rope(Act x, std::int64_t head_dim, std::span<const std::int64_t> positions,
                    const kernels::RopeParams& p) = 0;
  virtual void scale(Act x, float s) = 0;
  // y += x.
  virtual void add(Act x, Act y) = 0;
  // out = act(gate) * up, element-wise.
  virtual void glu(FfnAct act, Act gate, Act up, Act out) = 0;
  // out row t = sum over s < k of weights[t*k + s] * src row rows[t*k + s], formed in s order
  // (the first product, then each next one added), as llama.cpp sums its experts' outputs.
  // Only mixture-of-experts models need it; a backend without it refuses them when they run.
  virtual void weighted_sum_rows(Act /*src*/, std::span<const std::int64_t> /*rows*/,
                                 std::span<const float> /*weights*/, std::int64_t /*k*/, Act /*out*/) {
    throw Error("this backend does not run mixture-of-experts models yet (weighted_sum_rows)");
  }
  // x = cap * tanh(x / cap).
  virtual void softcap(Act x, float cap) = 0;

  // Stores the K and V rows of each run of the batch at the run's positions of its sequence,
  // layer `layer` (the slots must be reserved with pool.append).
  virtual void store_kv(KvPool& pool, const StepBatch& batch, std::uint32_t layer, Act k, Act v,
                        const KvNumerics& num) = 0;
  // out row t = attention of q row t (at its run's position) over its sequence's cached keys.
  virtual void attention(const KvPool& pool, const StepBatch& batch, std::uint32_t layer, Act q,
                         const kernels::AttentionParams& p, Act out) = 0;
};

}  // namespace wisp::model
