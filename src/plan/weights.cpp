#include "plan/weights.h"

#include <cmath>

#include "plan/units.h"
#include "wisp/error.h"

namespace wisp::plan {

std::uint64_t weight_bytes_at_bits(double params, double bits_per_weight) {
  if (!(params > 0) || !std::isfinite(params)) {
    throw Error("parameter count must be positive, got " + format_number(params));
  }
  if (!(bits_per_weight > 0) || bits_per_weight > 64) {
    throw Error("bits per weight must be in (0, 64], got " + format_number(bits_per_weight));
  }
  const double bytes = params * bits_per_weight / 8.0;
  if (bytes >= 18446744073709551616.0) throw Error("weight bytes overflow 64 bits");
  return static_cast<std::uint64_t>(std::floor(bytes + 0.5));
}

}  // namespace wisp::plan
