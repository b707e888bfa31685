// --target-bpw: choosing one block type per tensor so the file meets a size budget with the
// least total error (a multiple-choice knapsack).
//
// Each tensor ("item") offers candidates (a type, the bytes it would write, its measured error);
// allocate_bits() picks one per item minimising the summed error subject to summed bytes <= budget.
// Why an exact dynamic programme rather than greedy marginal gains: greedy upgrades on each
// tensor's convex hull of (bytes, error) are only optimal up to the last upgrade that does not fit,
// and with ~200 tensors the DP over a discretised budget costs well under a second. The budget is
// cut into at most kBudgetCells units of `unit` bytes; every candidate's bytes are rounded *up* to
// whole units so the chosen set always meets the real byte budget. The unit depends only on the
// candidates, not on the budget, so the optimum is monotone in the budget (a larger target never
// gives a larger error).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/block_types.h"

namespace wisp::quantize {

struct BitCandidate {
  const BlockTypeInfo* type = nullptr;
  std::uint64_t bytes = 0;  // every byte this choice writes for the tensor
  double error = 0;         // what it costs (e.g. importance-weighted relative squared error)
};

struct BitItem {
  std::string name;
  std::vector<BitCandidate> candidates;  // at least one
};

struct BitAllocation {
  std::vector<int> choice;  // index into items[i].candidates
  std::uint64_t bytes = 0;  // exact sum of the chosen candidates' bytes
  double error = 0;         // sum of their errors
};

inline constexpr std::int64_t kBudgetCells = 1 << 16;

// Throws wisp::Error when even the cheapest choice of every item exceeds `budget_bytes` (the
// message gives the smallest reachable size) or an item has no candidate. `unit` = 0 picks the
// discretisation described above; tests pass 1 for exactness.
BitAllocation allocate_bits(const std::vector<BitItem>& items, std::uint64_t budget_bytes, std::uint64_t unit = 0);

}  // namespace wisp::quantize
