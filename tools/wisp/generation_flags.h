// Flags that `wisp run` and `wisp chat` share: the model, context, threads and the sampler chain,
// spelled as llama.cpp spells them, each bound to a field of ModelFlags / SamplingFlags.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command_line.h"
#include "sample/sampler_params.h"
#include "wisp/session.h"

namespace wisp::cli {

struct ModelFlags {
  std::string model;
  std::optional<std::uint64_t> ctx_size;
  std::optional<int> threads;
  std::string kv_type = "f16";  // checked against the known types as it is parsed
  std::string device = "auto";
  bool exact = false;
};

struct SamplingFlags {
  SamplerParams params;  // every field but the seed comes from its flag, defaults as SamplerParams has them
  std::optional<std::uint64_t> seed;
};

// "ID+B,ID-B,..." (llama.cpp's -l spelling, several comma-separated; "-inf" bans) as logit biases;
// a wisp::Error names the item that is not one.
std::vector<LogitBias> parse_logit_biases(std::string_view text);

// Once the model is known: a --logit-bias token outside its vocabulary is a UsageError naming it
// (before anything is evaluated, not at the first sample).
void check_logit_bias_tokens(const SamplerParams& p, const Model& model);

void add_model_flags(CommandLine& cl, ModelFlags& f);
void add_sampling_flags(CommandLine& cl, SamplingFlags& f);

struct LoadedModel {
  std::shared_ptr<const Model> model;
  SessionOptions session;
};

// Loads the model the flags name (printing what it loaded to stderr).
LoadedModel load_model_from_flags(const ModelFlags& f);
// The checked sampler parameters; a missing --seed draws a random one (reported in `seed_note`).
SamplerParams sampler_params_from_flags(const SamplingFlags& f, std::string* seed_note);

}  // namespace wisp::cli
