#include "sample/speculative_rule.h"

#include <algorithm>
#include <string>

#include "sample/draw.h"
#include "wisp/error.h"

namespace wisp {

DraftVerdict rejection_sample(std::span<const float> p, std::span<const float> q, std::int32_t draft,
                              std::mt19937_64& rng) {
  if (!q.empty() && q.size() != p.size()) {
    throw Error("speculative sampling: the draft's distribution has " + std::to_string(q.size()) +
                " entries, the target's " + std::to_string(p.size()));
  }
  if (draft < 0 || static_cast<std::size_t>(draft) >= p.size()) {
    throw Error("speculative sampling: draft token " + std::to_string(draft) + " is outside the vocabulary of " +
                std::to_string(p.size()));
  }
  const auto d = static_cast<std::size_t>(draft);
  const double qd = q.empty() ? 1.0 : q[d];
  const double pd = p[d];
  // qd == 0 cannot happen for a token drawn from q; treat it as "q knows nothing" and keep the
  // token only if the target could have produced it at all.
  if (pd > 0.0 && (qd <= 0.0 || uniform01(rng) * qd < pd)) return {true, draft};

  auto residual = [&](std::size_t i) {
    const double qi = q.empty() ? (i == d ? 1.0 : 0.0) : q[i];
    return std::max(0.0, static_cast<double>(p[i]) - qi);
  };
  double total = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) total += residual(i);
  // A zero residual means p <= q everywhere, i.e. p == q up to rounding: then rejection had
  // probability ~0 and p itself is the right distribution to draw from.
  const bool use_p = total <= 0.0;
  if (use_p) {
    total = 0.0;
    for (float x : p) total += x;
  }
  const double u = uniform01(rng) * total;
  double cum = 0.0;
  std::size_t last_positive = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double w = use_p ? static_cast<double>(p[i]) : residual(i);
    if (w <= 0.0) continue;
    cum += w;
    last_positive = i;
    if (u < cum) return {false, static_cast<std::int32_t>(i)};
  }
  return {false, static_cast<std::int32_t>(last_positive)};
}

}  // namespace wisp
