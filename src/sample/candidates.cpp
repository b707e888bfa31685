#include "sample/candidates.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "wisp/error.h"

namespace wisp {

namespace {

bool before(const Candidate& a, const Candidate& b) { return a.logit > b.logit || (a.logit == b.logit && a.id < b.id); }

}  // namespace

void Candidates::assign(std::span<const float> logits) {
  if (logits.empty()) throw Error("sampler: the logits vector is empty");
  items.resize(logits.size());
  bool any_finite = false;
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const float l = logits[i];
    if (std::isnan(l) || l == std::numeric_limits<float>::infinity()) {
      throw Error("sampler: logit of token " + std::to_string(i) + " is " + (std::isnan(l) ? "NaN" : "+inf") +
                  "; the model produced garbage");
    }
    any_finite |= l != -std::numeric_limits<float>::infinity();
    items[i] = Candidate{static_cast<std::int32_t>(i), l};
  }
  if (!any_finite) throw Error("sampler: every logit is -inf, no token can be sampled");
  sorted = false;
}

void Candidates::sort() {
  if (sorted) return;
  std::sort(items.begin(), items.end(), before);
  sorted = true;
}

void Candidates::keep_top(std::size_t k) {
  k = std::min(k, items.size());
  if (!sorted) {
    std::partial_sort(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(k), items.end(), before);
    sorted = true;
  }
  items.resize(k);
}

std::vector<float> softmax(const Candidates& c) {
  float max_logit = -std::numeric_limits<float>::infinity();
  for (const Candidate& x : c.items) max_logit = std::max(max_logit, x.logit);
  std::vector<float> p(c.items.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    p[i] = std::exp(c.items[i].logit - max_logit);
    sum += p[i];
  }
  for (float& x : p) x = static_cast<float>(x / sum);
  return p;
}

}  // namespace wisp
