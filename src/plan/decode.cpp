#include "plan/decode.h"

#include <cmath>

#include "wisp/error.h"

namespace wisp::plan {

DecodeCeiling decode_ceiling(double bandwidth, std::uint64_t weight_bytes, std::uint64_t kv_bytes_per_stream,
                             std::uint64_t batch) {
  if (!(bandwidth > 0) || !std::isfinite(bandwidth)) {
    throw Error("memory bandwidth must be positive");
  }
  if (batch == 0) throw Error("batch size must be positive");
  DecodeCeiling d;
  d.bandwidth = bandwidth;
  d.batch = batch;
  d.weight_bytes = weight_bytes;
  d.kv_bytes_per_stream = kv_bytes_per_stream;
  // In floating point: the step's byte count is only an input to a rate.
  d.step_bytes =
      static_cast<double>(weight_bytes) + static_cast<double>(batch) * static_cast<double>(kv_bytes_per_stream);
  if (!(d.step_bytes > 0)) throw Error("a decode step must read some bytes (weights are zero)");
  d.step_seconds = d.step_bytes / bandwidth;
  d.per_stream_tokens_per_second = 1.0 / d.step_seconds;
  d.aggregate_tokens_per_second = static_cast<double>(batch) * d.per_stream_tokens_per_second;
  return d;
}

}  // namespace wisp::plan
