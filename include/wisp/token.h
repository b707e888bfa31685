// wisp::TokenId: a token's index in the model's vocabulary, the unit every other header speaks.
#pragma once

#include <cstdint>

namespace wisp {

using TokenId = std::int32_t;
inline constexpr TokenId kNoToken = -1;  // "no such token" (a model without BOS, a failed lookup)

}  // namespace wisp
