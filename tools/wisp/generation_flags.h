// Flags that `wisp run` and `wisp chat` share: the model, context, threads and the sampler chain,
// spelled as llama.cpp spells them.
#pragma once

#include <memory>
#include <string>

#include "args.h"
#include "sample/sampler_params.h"
#include "wisp/session.h"

namespace wisp::cli {

void add_model_flags(ArgParser& p);
void add_sampling_flags(ArgParser& p);

struct LoadedModel {
  std::shared_ptr<const Model> model;
  SessionOptions session;
};

// Reads -m/-c/-t; loads the model (printing what it loaded to stderr).
LoadedModel load_model_from_flags(const Args& a);
// Reads the sampling flags; a missing --seed draws a random one (reported in `seed_note`).
SamplerParams sampler_params_from_flags(const Args& a, std::string* seed_note);

}  // namespace wisp::cli
