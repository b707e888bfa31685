// Weight bytes at a precision: params · bits_per_weight / 8. "4 bits" is the ideal the seeds use
// (70B → 35 GB); a real block type carries its scales in its bits per weight (Q4_K: 4.5, Q8_0: 8.5).
#pragma once

#include <cstdint>

namespace wisp::plan {

// Rounded to the nearest byte. Throws wisp::Error on a non-positive count or bit-width.
std::uint64_t weight_bytes_at_bits(double params, double bits_per_weight);

}  // namespace wisp::plan
