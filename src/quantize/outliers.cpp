#include "quantize/outliers.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "formats/half.h"
#include "wisp/error.h"

namespace wisp::quantize {

std::int64_t outliers_per_row(double fraction, std::int64_t n_cols) {
  return std::max<std::int64_t>(1, std::llround(fraction * static_cast<double>(n_cols)));
}

bool outlier_eligible(const std::string& name, std::int64_t n_rows, const BlockTypeInfo& type) {
  return n_rows > 1 && name != "token_embd.weight" && type.block_elems > 1;
}

void OutlierTable::write_rowptr(std::uint8_t* out) const {
  for (std::int64_t r = 0; r <= n_rows; ++r) {
    const auto v = static_cast<std::uint32_t>(r * per_row);
    std::memcpy(out + 4 * r, &v, 4);
  }
}

void OutlierTable::write_idx(std::uint8_t* out) const {
  for (std::int64_t i = 0; i < nnz(); ++i) {
    if (narrow_idx()) {
      const auto v = static_cast<std::uint16_t>(idx[static_cast<std::size_t>(i)]);
      std::memcpy(out + 2 * i, &v, 2);
    } else {
      std::memcpy(out + 4 * i, &idx[static_cast<std::size_t>(i)], 4);
    }
  }
}

void OutlierTable::write_val(std::uint8_t* out) const { std::memcpy(out, val.data(), val.size() * 2); }

void quantize_row_with_outliers(const BlockTypeInfo& type, const float* x, std::uint8_t* out, std::int64_t n,
                                const RowOptions& ro, std::int64_t k, std::uint32_t* idx, std::uint16_t* val,
                                ErrorStats* stats) {
  if (k <= 0 || k > n) throw Error("outliers: " + std::to_string(k) + " per row of " + std::to_string(n) + " values");
  // The k largest |x|, in column order.
  std::vector<std::uint32_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0u);
  std::nth_element(order.begin(), order.begin() + (k - 1), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return std::fabs(x[a]) > std::fabs(x[b]); });
  std::sort(order.begin(), order.begin() + k);
  std::vector<bool> kept(static_cast<std::size_t>(n), false);
  for (std::int64_t i = 0; i < k; ++i) kept[order[static_cast<std::size_t>(i)]] = true;

  // Each kept slot becomes 0 clamped into the range of the rest of its block: it then neither
  // widens the block's range nor is clipped, and it costs the range search little.
  std::vector<float> y(x, x + n);
  const std::int64_t blk = std::max<std::int64_t>(1, type.block_elems);
  for (std::int64_t b = 0; b < n; b += blk) {
    float lo = INFINITY, hi = -INFINITY;
    for (std::int64_t j = b; j < b + blk; ++j) {
      if (!kept[static_cast<std::size_t>(j)]) lo = std::min(lo, x[j]), hi = std::max(hi, x[j]);
    }
    for (std::int64_t j = b; j < b + blk; ++j) {
      if (kept[static_cast<std::size_t>(j)]) y[static_cast<std::size_t>(j)] = lo > hi ? 0.0f : std::clamp(0.0f, lo, hi);
    }
  }
  quantize_row(type, y.data(), out, n, ro, nullptr);
  std::vector<float> dq(static_cast<std::size_t>(n));
  type.dequantize(out, dq.data(), n);
  for (std::int64_t i = 0; i < k; ++i) {
    const std::uint32_t c = order[static_cast<std::size_t>(i)];
    idx[i] = c;
    val[i] = f32_to_f16(x[c] - dq[c]);
    dq[c] += f16_to_f32(val[i]);  // the reconstruction the model computes: dense + sparse
  }
  if (stats != nullptr) {
    for (std::int64_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(x[i]) - dq[static_cast<std::size_t>(i)];
      stats->sum_sq_err += d * d;
      stats->sum_sq_ref += static_cast<double>(x[i]) * x[i];
      stats->max_abs_err = std::max(stats->max_abs_err, std::fabs(d));
    }
    stats->n += n;
  }
}

}  // namespace wisp::quantize
