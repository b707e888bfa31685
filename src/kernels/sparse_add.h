// The sparse full-precision outlier correction of a quantized weight matrix (docs/quantization.md,
// "Outlier handling" 3): a few weights per row kept apart from the dense blocks, stored CSR
// (formats/FORMAT.md, "Sparse outlier side tables"). The dense matmul runs first; this adds
//   y[t][r] += sum over k in [rowptr[r], rowptr[r+1]) of val[k] * x[t][idx[k]].
// Kept out of the dense kernels on purpose: files without side tables pay nothing, and the dense
// paths (scalar and SIMD, any ISA) need no change.
#pragma once

#include <cstdint>

namespace wisp::kernels {

// Views into the mapped file. rowptr has n_rows + 1 entries; idx and val have rowptr[n_rows].
struct SparseRows {
  const std::uint32_t* rowptr = nullptr;
  const std::uint16_t* idx16 = nullptr;  // column indices when n_cols <= 65536 ...
  const std::uint32_t* idx32 = nullptr;  // ... else these (exactly one of the two is set)
  const std::uint16_t* val = nullptr;    // IEEE half values
  std::int64_t n_rows = 0;
  std::int64_t n_cols = 0;
  std::int64_t nnz() const { return rowptr == nullptr ? 0 : rowptr[n_rows]; }
};

// y[t * y_stride + r] += sparse row r . x[t * x_stride ...] for r < s.n_rows, t < n_tok.
void sparse_add(const SparseRows& s, const float* x, std::int64_t x_stride, std::int64_t n_tok, float* y,
                std::int64_t y_stride);

}  // namespace wisp::kernels
