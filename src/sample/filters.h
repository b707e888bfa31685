// The truncation filters and temperature of the sampler chain, llama.cpp semantics. Each keeps at
// least one candidate (the most likely), so the chain can always draw a token.
#pragma once

#include "sample/candidates.h"

namespace wisp {

// Keeps the k highest logits (ties: lower id). k <= 0 or k >= size: no-op.
void top_k(Candidates& c, int k);
// Keeps the smallest highest-probability prefix whose mass reaches p (softmax over the current
// candidates). p >= 1: no-op.
void top_p(Candidates& c, float p);
// Keeps candidates with probability >= p * (probability of the most likely), i.e.
// logit >= max_logit + ln(p). p <= 0: no-op.
void min_p(Candidates& c, float p);
// Divides every logit by t > 0: t < 1 sharpens the distribution, t > 1 flattens it. The greedy
// case (t <= 0) is the chain's business, not this filter's.
void apply_temperature(Candidates& c, float t);

}  // namespace wisp
