// Flags that `wisp run`, `wisp chat` and `wisp bench` share for speculative decoding: prompt lookup
// (--lookup N) or a draft model (--draft FILE), and the draft length.
#pragma once

#include <memory>
#include <string>

#include "args.h"
#include "generate/speculative.h"
#include "generation_flags.h"

namespace wisp::cli {

void add_speculation_flags(ArgParser& p);

// The Speculator the flags ask for, or null without --lookup/--draft. Loads and checks the draft
// model (same vocabulary as `target`'s tokenizer); prints what it loaded to stderr.
std::unique_ptr<Speculator> speculator_from_flags(const Args& a, const LoadedModel& target, const Tokenizer& tokenizer,
                                                  const SamplerParams& sampling);

// ", drafted D, kept A (R%), M per pass" for a timing line; "" without speculation.
std::string speculation_summary(const GenerationStats& st);

}  // namespace wisp::cli
