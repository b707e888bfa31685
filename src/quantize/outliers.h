// Sparse full-precision outliers (`wisp quantize --outliers FRACTION`, docs/quantization.md):
// per row, the k largest-|w| weights are kept apart in a side table (f16 values + column indices,
// CSR; formats/FORMAT.md "Sparse outlier side tables"), the rest of the row is quantized with a
// range they no longer stretch, and the model adds the table's product after the dense matmul
// (kernels/sparse_add.h).
//
// What is stored (why): each kept position's slot in the dense row is set to a value inside the
// range of the other values of its block (so it neither widens the block's range nor gets
// clipped), the row is quantized, and the table stores the *residual* w - dequant(slot). Dense +
// sparse then reproduces the outlier exactly up to the f16 rounding of the residual, which beats
// both storing w with a zeroed slot (the zero is still quantized with error) and leaving the
// outlier in the range (it widens the scale for its whole block).
#pragma once

#include <cstdint>
#include <vector>

#include "formats/block_types.h"
#include "quantize/row_quantizer.h"

namespace wisp::quantize {

// Entries kept per row of n_cols values for a fraction (> 0): round(fraction * n_cols), at least 1.
std::int64_t outliers_per_row(double fraction, std::int64_t n_cols);

// Whether a tensor can get a side table: a multiplied 2-D weight (never token_embd, which the
// embedding lookup dequantizes row by row without the table) in a lossy block type.
bool outlier_eligible(const std::string& name, std::int64_t n_rows, const BlockTypeInfo& type);

// The side table of one tensor, filled row by row (rows are independent: threads may fill
// different rows at once).
struct OutlierTable {
  std::int64_t n_rows = 0, n_cols = 0, per_row = 0;
  std::vector<std::uint32_t> idx;  // n_rows * per_row, ascending within a row
  std::vector<std::uint16_t> val;  // f16 residuals

  OutlierTable(std::int64_t rows, std::int64_t cols, std::int64_t k)
      : n_rows(rows),
        n_cols(cols),
        per_row(k),
        idx(static_cast<std::size_t>(rows * k)),
        val(static_cast<std::size_t>(rows * k)) {}
  std::int64_t nnz() const { return n_rows * per_row; }
  // The side-table tensors' bytes as written (FORMAT.md): rowptr as u32 bit patterns in an F32
  // tensor, idx as u16 in an F16 tensor (u32 in F32 when n_cols > 65536), val as F16.
  bool narrow_idx() const { return n_cols <= 65536; }
  void write_rowptr(std::uint8_t* out) const;
  void write_idx(std::uint8_t* out) const;
  void write_val(std::uint8_t* out) const;
};

// Quantizes row `x` (n values) into `out` with its k largest-|x| entries kept apart: writes their
// columns to idx and the f16 residuals to val (k entries each). `stats` (optional) gets the error
// of dense + sparse against x.
void quantize_row_with_outliers(const BlockTypeInfo& type, const float* x, std::uint8_t* out, std::int64_t n,
                                const RowOptions& ro, std::int64_t k, std::uint32_t* idx, std::uint16_t* val,
                                ErrorStats* stats);

}  // namespace wisp::quantize
