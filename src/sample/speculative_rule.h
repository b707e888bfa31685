// The acceptance rule of speculative sampling (Leviathan et al. 2023, Chen et al. 2023): a draft
// token d drawn from the draft's distribution q is kept with probability min(1, p(d) / q(d)), where
// p is the target's distribution at the same position; otherwise the token is drawn from the
// normalized residual max(0, p - q). The token that comes out is then distributed exactly as p,
// whatever q is, so the draft only changes how fast, never what.
//
// A deterministic draft (prompt lookup: no distribution) is the case q = one-hot at d: kept with
// probability p(d), else drawn from p with d removed, renormalized.
#pragma once

#include <cstdint>
#include <random>
#include <span>

namespace wisp {

struct DraftVerdict {
  bool accepted = false;
  std::int32_t token = -1;  // the draft token if accepted, else the token drawn in its place
};

// p: the target's probabilities over the vocabulary; q: the draft's (empty = one-hot at `draft`);
// both from Sampler::probabilities. Uses one uniform draw for the test and, on rejection, one for
// the residual. Throws wisp::Error on mismatched sizes or a draft token outside the vocabulary.
DraftVerdict rejection_sample(std::span<const float> p, std::span<const float> q, std::int32_t draft,
                              std::mt19937_64& rng);

// The signature of an acceptance rule, so tests can substitute a deliberately wrong one and see the
// distribution test catch it.
using AcceptRule = DraftVerdict (*)(std::span<const float> p, std::span<const float> q, std::int32_t draft,
                                    std::mt19937_64& rng);

}  // namespace wisp
