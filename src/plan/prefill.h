// Prefill is compute-bound: a forward pass costs about 2 FLOPs per parameter per token (one
// multiply and one add per weight). Attention's own S² term is left out, as in the seeds; it
// matters only for contexts long against d_model.
#pragma once

#include <cstdint>

namespace wisp::plan {

inline constexpr double kFlopsPerParamPerToken = 2.0;

struct PrefillCost {
  double params = 0;
  std::uint64_t tokens = 0;
  double flops = 0;             // 2 · params · tokens
  double flops_per_second = 0;  // the compute rate given; 0 when unknown
  double seconds = 0;           // flops / rate; 0 when the rate is unknown
  double tokens_per_second = 0;
};

// Throws wisp::Error on non-positive params or tokens or a negative rate. A rate of 0 means
// "unknown": only the FLOP count is filled in.
PrefillCost prefill_cost(double params, std::uint64_t tokens, double flops_per_second);

}  // namespace wisp::plan
