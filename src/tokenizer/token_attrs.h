// Effective token attributes: the file's token types, adjusted the way llama.cpp adjusts them so
// that special-token matching and rendering agree with it. A token can carry several attributes:
// llama.cpp marks any end-of-generation-looking token as control even when the file says
// user-defined (Gemma 3's "</s>"), which then stops it from matching when specials are not parsed.
#pragma once

#include <cstdint>
#include <vector>

#include "tokenizer/vocab.h"

namespace wisp {

enum TokenAttr : std::uint8_t {
  kAttrNormal = 1,
  kAttrUnknown = 2,
  kAttrControl = 4,
  kAttrUserDefined = 8,
  kAttrUnused = 16,
  kAttrByte = 32,
};

struct TokenAttributes {
  std::vector<std::uint8_t> attrs;  // one bit set of TokenAttr per token
  std::vector<TokenId> eog;         // end-of-generation tokens, sorted
};

TokenAttributes derive_token_attributes(const Vocab& vocab);

}  // namespace wisp
