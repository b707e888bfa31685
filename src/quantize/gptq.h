// GPTQ error compensation for the WQ types (`wisp quantize --gptq`, docs/quantization.md).
//
// For a weight W (rows x n, n = input channels = ne[0]) multiplied with calibration activations
// X (N x n), the output error of a quantized W^ is tr((W - W^) H (W - W^)^T) / 2 with the Hessian
// H = 2/N X^T X. GPTQ quantizes one input column at a time and moves each column's rounding error
// onto the columns not quantized yet, weighted by the inverse Hessian, so the error that reaches
// the output is what no later column can absorb:
//   H += damp * mean(diag H) * I;  U = upper Cholesky factor of H^-1 (H^-1 = U^T U), in the
//   processing order (input order, or descending diag(H) with act_order);
//   for column i: q_i = Q(w_i); e_i = (w_i - q_i) / U_ii; w_k -= e_i U_ik for every later k,
// the updates of a block of columns applied to the rest at once ("lazy batch"; the same numbers
// as updating after every column, in a cache-friendly order).
//
// WQ groups are consecutive input columns; each group's scale and zero-point (min/max of the
// group's current values, or the range search weighted by diag H) are fixed when the first of its
// columns comes up in the processing order, from the values as all earlier columns left them.
// That is plain GPTQ with groups in input order and a consistent rule under act_order (whose
// groups stay the format's consecutive columns, so nothing else has to be stored).
//
// Scale re-fit (--gptq-refit): a group's scale is fixed before its later columns move, so at 2-3
// bits the step chosen then is rarely the best for the codes GPTQ ends with. With the codes and
// zero-points kept, the reconstruction of a row is linear in its groups' scales, and the output
// error (w - w^) H (w - w^)^T is a quadratic in them: its minimiser solves the normal equations
// (A^T H A) s = A^T H w of one small system per row (A: each group's q - z on its columns), the
// cross-group terms of H included. The new scales (rounded to half precision) replace the old
// ones only where they lower that error, so the layer's output error never grows.
//
// Sparse outliers (--outliers): a row's kept positions are left out of its groups' ranges; their
// slot takes the code nearest their value inside the range and the side table stores the f16
// residual, so the error they leave to propagate is only that rounding.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "formats/wq_format.h"

namespace wisp::quantize {

struct GptqOptions {
  double damp = 0.01;         // --gptq-damp: fraction of mean(diag H) added to the diagonal
  bool act_order = false;     // --act-order: columns by descending diag H
  int block_size = 128;       // --gptq-block: columns per lazy update
  bool range_search = false;  // group ranges by the weighted range search instead of min/max
  bool refit_scales = false;  // --gptq-refit: each row's scales re-fitted to the codes (above)
  int n_threads = 1;
};

// Sums X^T X over activation rows fed in any number of chunks (each chunk's products summed in
// float, the running total in double; the same total in any chunking up to float rounding).
class HessianAccumulator {
 public:
  explicit HessianAccumulator(std::int64_t n);
  // m rows of n values, row-major.
  void add(const float* rows, std::int64_t m, int n_threads = 1);
  std::int64_t n() const { return n_; }
  std::int64_t rows_seen() const { return rows_; }
  // H = 2 / N * X^T X, the full symmetric n x n matrix, row-major.
  std::vector<double> hessian() const;

 private:
  std::int64_t n_ = 0, rows_ = 0;
  std::vector<double> upper_;  // n x n, the upper triangle (incl. diagonal) filled
};

// What every row of a tensor (and every tensor sharing the Hessian) reuses: the processing order
// and the factor U.
struct GptqFactor {
  std::int64_t n = 0;
  std::vector<std::int64_t> perm;  // processing position -> input column
  std::vector<std::int64_t> pos;   // input column -> processing position
  std::vector<double> u;           // n x n upper triangular, rows/cols in processing order
  std::vector<bool> dead;          // input columns that never saw a nonzero activation
  std::vector<double> diag;        // damped diag H by input column (the range search's weights)
  std::vector<double> h;           // the damped H, n x n in input order: kept only for refit_scales
};

// Dampens h (n x n, symmetric; taken by value: it is overwritten), marks dead columns (diag 0:
// set to 1, their weights to 0, as the GPTQ paper does), orders and factors. `what` names the
// tensor for errors. Throws wisp::Error when the damped H is not positive definite.
GptqFactor gptq_factor(std::vector<double> h, std::int64_t n, const GptqOptions& opt, const std::string& what);

// Quantizes `rows` rows of w (row-major, rows x n, n = fac.n) into WQ blocks of format f
// (rows x f.row_bytes(n) bytes, each row its blocks in input order). With k > 0, each row's k
// largest-|w| entries are kept apart: idx/val get rows * k entries (columns ascending per row,
// f16 residuals), the layout of OutlierTable (outliers.h).
void gptq_quantize_rows(const GptqFactor& fac, const WqFormat& f, const float* w, std::int64_t rows,
                        std::uint8_t* blocks, const GptqOptions& opt, std::int64_t k = 0, std::uint32_t* idx = nullptr,
                        std::uint16_t* val = nullptr);

// The output error proxy sum_r e_r H e_r^T / sum_r w_r H w_r^T of a reconstruction (rows x n;
// e = w - w_hat) under a Hessian h (n x n): how much of the layer's output energy the rounding
// costs on the calibration activations.
double hessian_relative_error(std::span<const double> h, const float* w, const float* w_hat, std::int64_t rows,
                              std::int64_t n);

}  // namespace wisp::quantize
