// The precision ladder (seed 004): the same model at 16, 8 and 4 bits per weight. Each step
// halves the weight bytes; the freed memory becomes KV room (more users) and, decode being
// memory-bound, the single-stream ceiling doubles. Bits here are the ideal widths with no scale
// overhead, as the seed's 140 / 70 / 35 GB for 70B.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "plan/capacity.h"
#include "plan/decode.h"
#include "plan/decode_reads.h"

namespace wisp::plan {

inline constexpr std::array<double, 3> kLadderBits = {16.0, 8.0, 4.0};

struct LadderInputs {
  double params = 0;
  std::optional<std::uint64_t> budget;  // memory budget; no capacity columns without it
  std::uint64_t overhead = 0;
  std::uint64_t kv_bytes_per_request = 0;  // at the planned context length and KV type
  std::optional<double> bandwidth;         // bytes/s; no decode columns without it
  // From a file: the parameters a decode step reads (a mixture of experts: the chosen ones);
  // absent, a step reads all `params`.
  std::optional<DecodeReads> reads;
};

struct LadderRow {
  double bits = 0;
  std::uint64_t weight_bytes = 0;
  // With a budget: the batch that fits, or the shortfall when weights + overhead do not fit.
  std::optional<BatchFit> fit;
  std::optional<std::uint64_t> shortfall;
  // With a bandwidth: one stream reading the weights only (the seed's "3.35 TB/s ÷ 140 GB"),
  // and the aggregate when the users that fit decode together, each reading its own KV. Both
  // read the weights a step reads at these bits (LadderInputs::reads).
  std::optional<DecodeCeiling> weights_only;
  std::optional<DecodeCeiling> at_capacity;
};

std::vector<LadderRow> precision_ladder(const LadderInputs& in, std::span<const double> bits = kLadderBits);

}  // namespace wisp::plan
