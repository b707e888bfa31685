// Pearson's chi-square goodness of fit for the speculative-sampling distribution tests: counts
// against expected probabilities, cells with an expected count under 5 pooled into one, and the
// critical value at alpha = 1e-3 by the Wilson-Hilferty approximation (within about 1% of the
// exact value for 5 or more degrees of freedom).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace wisp {

struct ChiSquare {
  double statistic = 0;
  double critical = 0;
  std::size_t df = 0;
};

inline ChiSquare chi_square(const std::vector<std::size_t>& counts, const std::vector<float>& p) {
  double n = 0;
  for (std::size_t c : counts) n += static_cast<double>(c);
  double stat = 0, pooled_e = 0, pooled_o = 0;
  std::size_t cells = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double e = n * p[i];
    if (e < 5.0) {
      pooled_e += e;
      pooled_o += static_cast<double>(counts[i]);
      continue;
    }
    const double d = static_cast<double>(counts[i]) - e;
    stat += d * d / e;
    ++cells;
  }
  if (pooled_e > 0) {
    // A pooled cell with almost nothing expected would blow the statistic up for one stray count;
    // below 1 expected it is still counted, as |O - E| beyond 5 means real mass where p has none.
    const double d = pooled_o - pooled_e;
    stat += d * d / std::max(pooled_e, 1.0);
    ++cells;
  }
  ChiSquare out;
  out.statistic = stat;
  out.df = cells > 1 ? cells - 1 : 1;
  const double k = static_cast<double>(out.df);
  const double z = 3.090232;  // the standard normal's 0.999 quantile
  const double h = 2.0 / (9.0 * k);
  out.critical = k * std::pow(1.0 - h + z * std::sqrt(h), 3.0);
  return out;
}

}  // namespace wisp
