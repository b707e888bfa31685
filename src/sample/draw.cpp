#include "sample/draw.h"

#include <vector>

namespace wisp {

double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::int32_t argmax(const Candidates& c) {
  if (c.sorted) return c.items.front().id;
  const Candidate* best = &c.items.front();
  for (const Candidate& x : c.items) {
    if (x.logit > best->logit) best = &x;  // strict: the first (lowest id) maximum stays
  }
  return best->id;
}

std::int32_t draw(const Candidates& c, std::mt19937_64& rng) {
  const std::vector<float> p = softmax(c);
  const double u = uniform01(rng);
  double cum = 0.0;
  std::size_t last_positive = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0.0f) continue;  // a -inf logit is never drawn
    cum += p[i];
    last_positive = i;
    if (u < cum) return c.items[i].id;
  }
  // The probabilities sum to 1 only up to rounding; a u above the rounded total takes the last
  // token that could be drawn at all.
  return c.items[last_positive].id;
}

}  // namespace wisp
