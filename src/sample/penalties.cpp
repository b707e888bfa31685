#include "sample/penalties.h"

#include <algorithm>
#include <string>
#include <vector>

#include "wisp/error.h"

namespace wisp {

void TokenHistory::push(std::int32_t token) {
  if (capacity_ == 0) return;
  if (tokens_.size() == capacity_) tokens_.pop_front();
  tokens_.push_back(token);
}

void apply_penalties(Candidates& c, const TokenHistory& history, const PenaltyParams& p) {
  if (history.tokens().empty() || (p.repeat == 1.0f && p.frequency == 0.0f && p.presence == 0.0f)) return;
  if (c.sorted) throw Error("sampler: penalties must run on the full vocabulary before any filter");

  // Count occurrences: sort a copy of the (short) history and walk runs of equal ids.
  std::vector<std::int32_t> seen(history.tokens().begin(), history.tokens().end());
  std::sort(seen.begin(), seen.end());
  for (std::size_t i = 0; i < seen.size();) {
    std::size_t j = i;
    while (j < seen.size() && seen[j] == seen[i]) ++j;
    const std::int32_t id = seen[i];
    const auto count = static_cast<float>(j - i);
    i = j;
    if (id < 0 || static_cast<std::size_t>(id) >= c.items.size()) {
      throw Error("sampler: penalty history holds token " + std::to_string(id) + " but the logits have only " +
                  std::to_string(c.items.size()) + " entries (sampler shared across models?)");
    }
    float& logit = c.items[static_cast<std::size_t>(id)].logit;
    logit = logit <= 0.0f ? logit * p.repeat : logit / p.repeat;
    logit -= count * p.frequency + p.presence;
  }
}

}  // namespace wisp
