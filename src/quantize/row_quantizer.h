// Quantizes one row of floats into a target block type and measures what it cost.
//
// Standard GGML types go through the registry's reference quantizers (their output is what
// llama.cpp's own quantizer writes for the same input). WQ types (formats/wq_format.h) go through
// the group encoder, optionally with the outlier handling of docs/quantization.md:
//   - range search: per group, the clipping range [a, b] within [min, max] that minimises the
//     (importance-weighted) squared reconstruction error, instead of plain min/max;
//   - importance: a per-input-channel weight (e.g. mean |activation| from calibration) that
//     weights that error, so salient columns are reconstructed more precisely.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "formats/block_types.h"
#include "formats/wq_format.h"

namespace wisp::quantize {

struct RowOptions {
  bool range_search = false;
  // Per-column importance (ne[0] values), empty for uniform. Only WQ types use it.
  std::span<const float> importance;
};

// Squared-error statistics, summed over rows (merge() combines partial sums from threads).
struct ErrorStats {
  double sum_sq_err = 0;
  double sum_sq_ref = 0;
  double max_abs_err = 0;
  std::int64_t n = 0;
  void merge(const ErrorStats& o);
  double rmse() const;
  double relative_rmse() const;  // rmse / rms of the reference values
};

// Quantizes `n` values of `x` (a multiple of the type's block) into `out` (type.row_bytes(n)).
// When `stats` is given, dequantizes again and adds the error. Throws wisp::Error when the type
// has no quantizer.
void quantize_row(const BlockTypeInfo& type, const float* x, std::uint8_t* out, std::int64_t n, const RowOptions& opt,
                  ErrorStats* stats);

// The WQ group encoder with range search (exposed for tests): writes one block of `group` values.
// `w` is the per-value weight of the squared error (nullptr: uniform).
void encode_group_searched(const float* x, const float* w, int bits, int group, std::uint8_t* block);
// The stored parameters that search picks for one group (GPTQ fixes a group's range with it).
WqParams search_group_params(const float* x, const float* w, int bits, int group);

}  // namespace wisp::quantize
