// The working set of the sampler chain: (token id, logit) pairs that the filters shrink.
//
// Invariant the filters rely on: while `sorted` is false the entries are the full vocabulary in
// id order (entry i is token i), so the penalties can index by id; every filter that removes
// entries sorts first, so a truncated set is always sorted. Sorted order is logit descending, ties
// broken by the lower id: a total order, so filters and the draw are deterministic.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace wisp {

struct Candidate {
  std::int32_t id;
  float logit;
};

struct Candidates {
  std::vector<Candidate> items;
  bool sorted = false;

  // Loads the full vocabulary. Throws wisp::Error on an empty vector, a NaN or +inf logit (naming
  // the token) or when every logit is -inf (nothing could be sampled).
  void assign(std::span<const float> logits);
  // Sorts by logit descending, lower id first among equals (no-op when already sorted).
  void sort();
  // Sorts only as far as the first `k` entries need (top-k on a large vocabulary), then drops the
  // rest. Leaves the set sorted.
  void keep_top(std::size_t k);
  std::size_t size() const { return items.size(); }
};

// Softmax of the candidates' logits, in their current order (max-subtracted, so -inf maps to 0).
std::vector<float> softmax(const Candidates& c);

}  // namespace wisp
