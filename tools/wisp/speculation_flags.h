// Flags that `wisp run`, `wisp chat` and `wisp bench` share for speculative decoding: prompt lookup
// (--lookup N) or a draft model (--draft FILE), and the draft length.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "command_line.h"
#include "generate/speculative.h"
#include "generation_flags.h"

namespace wisp::cli {

struct SpeculationFlags {
  std::optional<std::int64_t> lookup;
  std::int64_t lookup_min = 2;
  std::optional<std::string> draft;
  std::int64_t draft_max = 8;
  double draft_p_min = 0.5;
};

void add_speculation_flags(CommandLine& cl, SpeculationFlags& f);

// The Speculator the flags ask for, or null without --lookup/--draft. Loads and checks the draft
// model (same vocabulary as `target`'s tokenizer); prints what it loaded to stderr.
std::unique_ptr<Speculator> speculator_from_flags(const SpeculationFlags& f, const LoadedModel& target,
                                                  const Tokenizer& tokenizer, const SamplerParams& sampling);

// ", drafted D, kept A (R%), M per pass" for a timing line; "" without speculation.
std::string speculation_summary(const GenerationStats& st);

}  // namespace wisp::cli
