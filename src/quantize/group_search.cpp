#include "quantize/group_search.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "formats/half.h"
#include "quantize/row_quantizer.h"

namespace wisp::quantize {

double weighted_group_error(const float* x, const float* w, int bits, int group, const WqParams& p) {
  double e = 0;
  for (int j = 0; j < group; ++j) {
    const float d = x[j] - wq_value(wq_code(x[j], p, bits), p);
    e += (w != nullptr ? static_cast<double>(w[j]) : 1.0) * d * d;
  }
  return e;
}

WqParams grid_search_group_params(const float* x, const float* w, int bits, int group) {
  if (bits > kGridMaxBits) return search_group_params(x, w, bits, group);
  const auto [mn_it, mx_it] = std::minmax_element(x, x + group);
  const float mn = *mn_it, mx = *mx_it;
  WqParams best = wq_stored_params(mn, mx, bits);
  if (mn == mx) return best;
  double best_err = weighted_group_error(x, w, bits, group, best);
  const int qmax = (1 << bits) - 1;
  const float step = (std::max(mx, 0.0f) - std::min(mn, 0.0f)) / static_cast<float>(qmax);
  std::vector<float> t(static_cast<std::size_t>(group));
  for (int k = 0; k < kGridScales; ++k) {
    const float raw = step * (static_cast<float>(50 - k) / 50.0f);
    const float s = f16_to_f32(f32_to_f16(std::min(raw, 65504.0f)));
    if (!(s > 0.0f)) continue;
    // wq_code's arithmetic with the division shared by every z: q = clamp(round(x / s) + z).
    for (int j = 0; j < group; ++j) t[static_cast<std::size_t>(j)] = std::floor(x[j] / s + 0.5f);
    for (int z = 0; z <= qmax; ++z) {
      double e = 0;
      for (int j = 0; j < group; ++j) {
        const float q =
            std::clamp(t[static_cast<std::size_t>(j)] + static_cast<float>(z), 0.0f, static_cast<float>(qmax));
        const float d = x[j] - s * static_cast<float>(static_cast<int>(q) - z);
        e += (w != nullptr ? static_cast<double>(w[j]) : 1.0) * d * d;
      }
      if (e < best_err) best_err = e, best = WqParams{s, z};
    }
  }
  // The step that fits the chosen codes best: s = sum w x (q - z) / sum w (q - z)^2.
  double num = 0, den = 0;
  for (int j = 0; j < group; ++j) {
    const double wj = w != nullptr ? static_cast<double>(w[j]) : 1.0;
    const double t = wq_code(x[j], best, bits) - best.zero;
    num += wj * x[j] * t;
    den += wj * t * t;
  }
  if (den > 0 && num > 0) {
    const float s = f16_to_f32(f32_to_f16(std::min(static_cast<float>(num / den), 65504.0f)));
    if (s > 0.0f) {
      const WqParams p{s, best.zero};
      if (weighted_group_error(x, w, bits, group, p) < best_err) best = p;
    }
  }
  return best;
}

}  // namespace wisp::quantize
