// Choosing the token at the end of the chain: greedy argmax, or a draw from the softmax with the
// sampler's own RNG. The uniform variate is built from the raw 64-bit output of std::mt19937_64
// (whose sequence the standard fixes) instead of std::uniform_real_distribution (whose algorithm
// it leaves to the library), so a seed gives the same tokens with libstdc++, libc++ and MSVC.
#pragma once

#include <cstdint>
#include <random>

#include "sample/candidates.h"

namespace wisp {

// A uniform double in [0, 1) from the top 53 bits of one RNG output.
double uniform01(std::mt19937_64& rng);
// The id of the highest logit; the lower id wins a tie.
std::int32_t argmax(const Candidates& c);
// Draws one id with probability softmax(logits) over the candidates.
std::int32_t draw(const Candidates& c, std::mt19937_64& rng);

}  // namespace wisp
