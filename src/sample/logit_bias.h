// The chain's first step: the caller's per-token logit biases (OpenAI's and llama.cpp's
// logit_bias), added before the penalties; a bias of -infinity bans the token.
#pragma once

#include <span>

#include "sample/candidates.h"
#include "wisp/sampler.h"

namespace wisp {

// Adds each bias to its token's logit in `c`, which must be the full vocabulary in id order.
// Throws wisp::Error naming the token when one is outside the vocabulary, and when the biases
// leave every logit at -infinity (nothing could be sampled).
void apply_logit_bias(Candidates& c, std::span<const LogitBias> biases);

}  // namespace wisp
