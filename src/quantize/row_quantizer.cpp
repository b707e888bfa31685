#include "quantize/row_quantizer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "formats/wq_format.h"
#include "wisp/error.h"

namespace wisp::quantize {

void ErrorStats::merge(const ErrorStats& o) {
  sum_sq_err += o.sum_sq_err;
  sum_sq_ref += o.sum_sq_ref;
  max_abs_err = std::max(max_abs_err, o.max_abs_err);
  n += o.n;
}

double ErrorStats::rmse() const { return n == 0 ? 0.0 : std::sqrt(sum_sq_err / static_cast<double>(n)); }
double ErrorStats::relative_rmse() const { return sum_sq_ref == 0 ? 0.0 : std::sqrt(sum_sq_err / sum_sq_ref); }

namespace {

// Weighted squared error of a group encoded with stored parameters p (no packing: the search
// evaluates many candidates).
double group_error(const float* x, const float* w, int group, int bits, const WqParams& p) {
  double e = 0;
  for (int j = 0; j < group; ++j) {
    const double d = x[j] - wq_value(wq_code(x[j], p, bits), p);
    e += (w != nullptr ? w[j] : 1.0) * d * d;
  }
  return e;
}

}  // namespace

WqParams search_group_params(const float* x, const float* w, int bits, int group) {
  const auto [mn_it, mx_it] = std::minmax_element(x, x + group);
  const float mn = *mn_it, mx = *mx_it;
  WqParams best = wq_stored_params(mn, mx, bits);
  if (mn == mx) return best;
  double best_err = group_error(x, w, group, bits, best);
  // Why a search: the min/max range spends codes on the one or two extreme values of a group;
  // clipping them costs their error but shrinks s for every other value. A coarse joint shrink of
  // both ends, then each end alone around the best joint point, finds most of the gain cheaply.
  auto consider = [&](float a, float b) {
    const WqParams p = wq_stored_params(a, b, bits);
    const double e = group_error(x, w, group, bits, p);
    if (e < best_err) best_err = e, best = p;
  };
  constexpr int kSteps = 20;
  constexpr float kStep = 0.025f;  // shrink up to 50%
  float best_lo = 1.0f, best_hi = 1.0f;
  for (int i = 1; i <= kSteps; ++i) {
    const float k = 1.0f - kStep * static_cast<float>(i);
    const double before = best_err;
    consider(mn * k, mx * k);
    if (best_err < before) best_lo = best_hi = k;
  }
  for (int i = -4; i <= 4; ++i) {
    if (i == 0) continue;
    const float klo = std::clamp(best_lo + kStep * 0.5f * static_cast<float>(i), 0.3f, 1.0f);
    const float khi = std::clamp(best_hi + kStep * 0.5f * static_cast<float>(i), 0.3f, 1.0f);
    consider(mn * klo, mx * best_hi);
    consider(mn * best_lo, mx * khi);
  }
  return best;
}

void encode_group_searched(const float* x, const float* w, int bits, int group, std::uint8_t* block) {
  wq_encode_group(x, WqFormat{bits, group}, search_group_params(x, w, bits, group), block);
}

void quantize_row(const BlockTypeInfo& type, const float* x, std::uint8_t* out, std::int64_t n, const RowOptions& opt,
                  ErrorStats* stats) {
  const WqFormat f = wq_format(type.id);
  if (f.bits != 0 && (opt.range_search || !opt.importance.empty())) {
    if (n % f.group != 0)
      throw Error(std::string(type.name) + ": row of " + std::to_string(n) + " values is not whole groups");
    const std::size_t bb = f.block_bytes();
    for (std::int64_t g = 0; g < n / f.group; ++g) {
      const float* w = opt.importance.empty() ? nullptr : opt.importance.data() + g * f.group;
      if (opt.range_search) {
        encode_group_searched(x + g * f.group, w, f.bits, f.group, out + g * static_cast<std::int64_t>(bb));
      } else {
        wq_encode_group_minmax(x + g * f.group, f, out + g * static_cast<std::int64_t>(bb));
      }
    }
  } else {
    if (type.quantize == nullptr) throw Error(std::string("no quantizer for type ") + type.name);
    type.quantize(x, out, n);
  }
  if (stats != nullptr) {
    std::vector<float> y(static_cast<std::size_t>(n));
    type.dequantize(out, y.data(), n);
    for (std::int64_t i = 0; i < n; ++i) {
      const double d = static_cast<double>(x[i]) - y[i];
      stats->sum_sq_err += d * d;
      stats->sum_sq_ref += static_cast<double>(x[i]) * x[i];
      stats->max_abs_err = std::max(stats->max_abs_err, std::fabs(d));
    }
    stats->n += n;
  }
}

}  // namespace wisp::quantize
