#include "quantize/type_policy.h"

#include "formats/wq_format.h"
#include "wisp/error.h"

namespace wisp::quantize {

TypeRule parse_type_rule(const std::string& text) {
  const auto eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw Error("--type-override '" + text + "': expected REGEX=TYPE");
  }
  TypeRule r;
  r.pattern = text.substr(0, eq);
  try {
    r.regex = std::regex(r.pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw Error("--type-override '" + text + "': bad regular expression: " + e.what());
  }
  r.type = &parse_target_type(text.substr(eq + 1));
  return r;
}

const BlockTypeInfo& parse_target_type(const std::string& name) {
  const BlockTypeInfo* t = find_block_type(name);
  if (t == nullptr || t->quantize == nullptr) {
    std::string known;
    for (const BlockTypeInfo& b : all_block_types()) {
      if (b.quantize != nullptr) known += std::string(known.empty() ? "" : ", ") + b.name;
    }
    known += ", WQ{2,3,4,5,6,8}_G{32,64,128}";
    throw Error("type '" + name + "' " + (t == nullptr ? "is unknown" : "has no quantizer in wisp") +
                " (writable: " + known + ")");
  }
  return *t;
}

bool is_embedding_or_output(const std::string& name) { return name == "token_embd.weight" || name == "output.weight"; }

const BlockTypeInfo& TypePolicy::choose(const SourceTensor& t, std::string* reason) const {
  auto say = [&](const char* why) {
    if (reason != nullptr) *reason = why;
  };
  const BlockTypeInfo* pick = base;
  bool overridden = false;
  for (const TypeRule& r : rules) {
    if (std::regex_search(t.name, r.regex)) {
      pick = r.type;
      overridden = true;
      say("override");
      break;
    }
  }
  const bool one_d = t.ne.size() < 2 || t.n_rows() == 1;
  if (!overridden) {
    if (one_d) {
      say("1-D");
      return block_type(GgmlType::kF32);
    }
    say("base");
    const bool below_8_bits = pick->bits_per_weight() < 8.0 && pick->block_elems > 1;
    if (keep_embeddings_high && below_8_bits && is_embedding_or_output(t.name)) {
      say("embedding/output");
      pick = &block_type(GgmlType::kQ8_0);
    }
  }
  if (t.ne[0] % pick->block_elems != 0) {
    say("fallback");
    return t.ne[0] % 32 == 0 ? block_type(GgmlType::kQ8_0) : block_type(GgmlType::kF16);
  }
  return *pick;
}

}  // namespace wisp::quantize
