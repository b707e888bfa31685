#include "sample/logit_bias.h"

#include <cmath>
#include <string>

#include "wisp/error.h"

namespace wisp {

void apply_logit_bias(Candidates& c, std::span<const LogitBias> biases) {
  if (biases.empty()) return;
  if (c.sorted) throw Error("sampler: logit biases must run on the full vocabulary before any filter");
  for (const LogitBias& b : biases) {
    if (b.token < 0 || static_cast<std::size_t>(b.token) >= c.items.size()) {
      throw Error("sampler: logit_bias names token " + std::to_string(b.token) + " but the vocabulary has " +
                  std::to_string(c.items.size()) + " tokens");
    }
    c.items[static_cast<std::size_t>(b.token)].logit += b.bias;
  }
  for (const Candidate& x : c.items) {
    if (x.logit != -INFINITY) return;
  }
  throw Error("sampler: logit_bias bans every token of the vocabulary; nothing could be sampled");
}

}  // namespace wisp
