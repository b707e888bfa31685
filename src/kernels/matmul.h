// The dequant-matmul: y = W x for a weight matrix kept in its stored block type (a view into the
// mapped model file) and a batch of f32 activation rows.
//
// The activations are converted once per call to the weight type's ActFormat (act_quant.h), then
// every (row, token) output is one DotKernel call straight on the stored blocks: no weight is ever
// expanded to f32. Which dot function (float order) runs follows ggml: it can depend on the batch
// size, the matrix's row count and the token's place in the batch (DotKernel::select), unless the
// caller asks for DotOrder::kBatchInvariant (one order for every token, whatever the batch). Rows are
// split across the threads of a ThreadPool (core/thread_pool.h, the forward pass's pool); each output
// is computed by exactly one thread in a fixed order, so results do not depend on the thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/dot.h"

namespace wisp::kernels {

struct SparseRows;  // kernels/sparse_add.h

// A row-major matrix of n_rows rows, each n_cols values in block type `type_id` (row_bytes bytes).
// GGUF's ne[0] is n_cols (the input dimension), ne[1] is n_rows (the output dimension).
struct MatrixView {
  const std::uint8_t* data = nullptr;
  std::uint32_t type_id = 0;
  std::int64_t n_cols = 0;
  std::int64_t n_rows = 0;
  std::size_t row_bytes = 0;
  // Sparse full-precision outliers to add after the dense product (null: none). matmul() itself
  // ignores them; the model's backend adds them (kernels/sparse_add.h).
  const SparseRows* outliers = nullptr;
  // A converted checkpoint's second-level factors on the product (`<name>.scale`: one per tensor,
  // or one per expert of a merged expert tensor): output row r is multiplied by
  // out_scale[r / rows_per_scale] after the dense product and the outliers, before any bias
  // (null: none). matmul() itself ignores them; the model's backend applies them.
  const float* out_scale = nullptr;
  std::int64_t rows_per_scale = 0;

  const std::uint8_t* row(std::int64_t r) const { return data + static_cast<std::size_t>(r) * row_bytes; }
};

// Reusable memory for the converted activations (grows to the largest call, never shrinks),
// 64-byte aligned: a vector's own data is 16-aligned, and the float GEMM's 32-byte activation
// loads then split a cache line every other step (~5-15% of its time in bench_float_gemm).
class MatmulScratch {
 public:
  std::uint8_t* reserve(std::size_t bytes) {
    if (buf_.size() < bytes + kAlign - 1) buf_.resize(bytes + kAlign - 1);
    const auto at = reinterpret_cast<std::uintptr_t>(buf_.data());
    return buf_.data() + ((kAlign - at % kAlign) % kAlign);
  }

 private:
  static constexpr std::size_t kAlign = 64;
  std::vector<std::uint8_t> buf_;
};

// y[t * y_stride + r] = dot(row r of w, x[t * x_stride ...]) for r < w.n_rows, t < n_tok, on the
// threads of `pool` (a pool of one runs on the calling thread). Throws wisp::Error when w's type
// has no dot kernel or n_cols is not a multiple of its activation block size.
void matmul(const MatrixView& w, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
            std::int64_t y_stride, MatmulScratch& scratch, ThreadPool& pool, DotOrder order = DotOrder::kGgml);

// One output of a group of matmuls that read the same input (q/k/v, gate/up).
struct MatmulOutput {
  const MatrixView* w = nullptr;
  float* y = nullptr;
  std::int64_t y_stride = 0;
};

// outs[i].y = outs[i].w x for every i, as one parallel job on the pool (a forward pass has a few
// hundred matmuls per token, each a pool handshake; grouping those that share an input removes a
// third of them) and with one activation conversion per distinct format. The same results as
// separate matmul() calls. Every weight is checked before any output is written.
void matmul_group(std::span<const MatmulOutput> outs, const float* x, std::int64_t x_stride, std::int64_t n_tok,
                  MatmulScratch& scratch, ThreadPool& pool, DotOrder order = DotOrder::kGgml);

// Dequantizes row r of w into out[0 .. n_cols) (embedding lookup) with the block type's
// reference dequantizer.
void dequantize_row(const MatrixView& w, std::int64_t r, float* out);

}  // namespace wisp::kernels
