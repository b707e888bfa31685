#include "sample/filters.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace wisp {

void top_k(Candidates& c, int k) {
  if (k <= 0 || static_cast<std::size_t>(k) >= c.size()) return;
  c.keep_top(static_cast<std::size_t>(k));
}

void top_p(Candidates& c, float p) {
  if (p >= 1.0f) return;
  c.sort();
  const std::vector<float> probs = softmax(c);
  double mass = 0.0;
  std::size_t keep = c.size();
  for (std::size_t i = 0; i < probs.size(); ++i) {
    mass += probs[i];
    if (mass >= p) {
      keep = i + 1;
      break;
    }
  }
  c.items.resize(keep);
}

void min_p(Candidates& c, float p) {
  if (p <= 0.0f) return;
  c.sort();
  // Compared in logit space: p_i >= p * p_max  <=>  l_i - l_max >= ln p, with no softmax needed.
  const float threshold = c.items.front().logit + std::log(p);
  std::size_t keep = 1;
  while (keep < c.size() && c.items[keep].logit >= threshold) ++keep;
  c.items.resize(keep);
}

void apply_temperature(Candidates& c, float t) {
  if (t <= 0.0f || t == 1.0f) return;
  for (Candidate& x : c.items) x.logit /= t;
}

}  // namespace wisp
