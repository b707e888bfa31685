// Which block type each tensor gets.
//
// Defaults (why): 1-D tensors (norms, biases) stay F32: they are tiny and every token reads them
// whole. The token embedding and the output projection stay at Q8_0 when the requested type has
// fewer than 8 bits: they are the most sensitive tensors (every logit goes through the output
// projection; a tied embedding is both) and llama.cpp keeps them higher too (Q6_K in its mixes).
// A row length that the chosen type's block does not divide falls back to Q8_0 (or F16 when 32
// does not divide it either). --type-override REGEX=TYPE rules come first, in order given.
#pragma once

#include <regex>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "quantize/source.h"

namespace wisp::quantize {

struct TypeRule {
  std::string pattern;  // as the user wrote it
  std::regex regex;
  const BlockTypeInfo* type = nullptr;
};

// Parses "REGEX=TYPE"; throws wisp::Error naming the rule.
TypeRule parse_type_rule(const std::string& text);
// A quantization target by name (case-insensitive: "wq4_g32", "q8_0", "f16"); throws naming the
// name and listing the choices when unknown or when the type cannot be written.
const BlockTypeInfo& parse_target_type(const std::string& name);

struct TypePolicy {
  const BlockTypeInfo* base = nullptr;
  std::vector<TypeRule> rules;
  bool keep_embeddings_high = true;

  // The type for `t`, and why ("override", "1-D", "embedding/output", "fallback", "base").
  const BlockTypeInfo& choose(const SourceTensor& t, std::string* reason = nullptr) const;
};

// True for the tensors the default policy protects.
bool is_embedding_or_output(const std::string& name);

}  // namespace wisp::quantize
