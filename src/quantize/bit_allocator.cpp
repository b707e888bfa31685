#include "quantize/bit_allocator.h"

#include <algorithm>
#include <limits>

#include "wisp/error.h"

namespace wisp::quantize {

BitAllocation allocate_bits(const std::vector<BitItem>& items, std::uint64_t budget_bytes, std::uint64_t unit) {
  const std::size_t n = items.size();
  // Every item pays at least its cheapest candidate; the DP only distributes the bytes above that.
  std::vector<std::uint64_t> min_bytes(n);
  std::uint64_t floor_bytes = 0, range = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = items[i].candidates;
    if (c.empty()) throw Error("bit allocation: tensor " + items[i].name + " has no candidate type");
    std::uint64_t lo = c[0].bytes, hi = c[0].bytes;
    for (const BitCandidate& k : c) lo = std::min(lo, k.bytes), hi = std::max(hi, k.bytes);
    min_bytes[i] = lo;
    floor_bytes += lo;
    range += hi - lo;
  }
  if (floor_bytes > budget_bytes) {
    throw Error("the smallest choice of types needs " + std::to_string(floor_bytes) + " bytes, over the budget of " +
                std::to_string(budget_bytes));
  }
  if (unit == 0) unit = std::max<std::uint64_t>(1, (range + kBudgetCells - 1) / kBudgetCells);
  // Extra bytes per candidate in units, rounded up (so the true total never exceeds the budget).
  const auto cells = static_cast<std::size_t>(
      std::min<std::uint64_t>((budget_bytes - floor_bytes) / unit, (range + unit - 1) / unit + n));
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // best[c]: least error of the items so far using at most c extra cells; pick[i][c]: the
  // candidate item i takes in that optimum (for the walk back).
  std::vector<double> best(cells + 1, 0.0), next(cells + 1);
  std::vector<std::vector<std::uint8_t>> pick(n, std::vector<std::uint8_t>(cells + 1, 0));
  for (std::size_t i = 0; i < n; ++i) {
    const auto& cand = items[i].candidates;
    if (cand.size() > 255) throw Error("bit allocation: tensor " + items[i].name + " has too many candidates");
    std::fill(next.begin(), next.end(), kInf);
    for (std::size_t k = 0; k < cand.size(); ++k) {
      const std::uint64_t extra = (cand[k].bytes - min_bytes[i] + unit - 1) / unit;
      if (extra > cells) continue;
      for (std::size_t c = extra; c <= cells; ++c) {
        const double e = best[c - extra] + cand[k].error;
        if (e < next[c]) next[c] = e, pick[i][c] = static_cast<std::uint8_t>(k);
      }
    }
    best.swap(next);
  }
  BitAllocation out;
  out.choice.assign(n, 0);
  std::size_t c = cells;
  for (std::size_t i = n; i-- > 0;) {
    const int k = pick[i][c];
    out.choice[i] = k;
    const BitCandidate& chosen = items[i].candidates[static_cast<std::size_t>(k)];
    c -= static_cast<std::size_t>((chosen.bytes - min_bytes[i] + unit - 1) / unit);
    out.bytes += chosen.bytes;
    out.error += chosen.error;
  }
  return out;
}

}  // namespace wisp::quantize
