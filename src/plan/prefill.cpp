#include "plan/prefill.h"

#include <cmath>

#include "wisp/error.h"

namespace wisp::plan {

PrefillCost prefill_cost(double params, std::uint64_t tokens, double flops_per_second) {
  if (!(params > 0) || !std::isfinite(params)) throw Error("parameter count must be positive");
  if (tokens == 0) throw Error("prefill token count must be positive");
  if (!(flops_per_second >= 0) || !std::isfinite(flops_per_second)) {
    throw Error("compute rate must be positive");
  }
  PrefillCost p;
  p.params = params;
  p.tokens = tokens;
  p.flops = kFlopsPerParamPerToken * params * static_cast<double>(tokens);
  p.flops_per_second = flops_per_second;
  if (flops_per_second > 0) {
    p.seconds = p.flops / flops_per_second;
    p.tokens_per_second = static_cast<double>(tokens) / p.seconds;
  }
  return p;
}

}  // namespace wisp::plan
