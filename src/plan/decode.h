// The memory-bound decode ceiling: one decode step reads every weight byte once (shared by the
// whole batch) plus each stream's own KV cache, so
//   step bytes  = weights + B · KV bytes read per stream
//   per stream  = bandwidth / step bytes   tokens/s
//   aggregate   = B · per stream           tokens/s
// It is a ceiling: compute, activations and imperfect bandwidth use only lower it.
#pragma once

#include <cstdint>

namespace wisp::plan {

struct DecodeCeiling {
  double bandwidth = 0;  // bytes/s
  std::uint64_t batch = 0;
  std::uint64_t weight_bytes = 0;
  std::uint64_t kv_bytes_per_stream = 0;  // cache read per stream per step
  double step_bytes = 0;
  double step_seconds = 0;
  double per_stream_tokens_per_second = 0;
  double aggregate_tokens_per_second = 0;
};

// Throws wisp::Error on a non-positive bandwidth or batch, or zero bytes to read.
DecodeCeiling decode_ceiling(double bandwidth, std::uint64_t weight_bytes, std::uint64_t kv_bytes_per_stream,
                             std::uint64_t batch);

}  // namespace wisp::plan
