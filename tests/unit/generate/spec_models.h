// The real models the speculative-decoding tests run on, each with a draft: the target's own
// weights requantized to Q4_0 by `wisp quantize` (made once per build: see spec_model).
// Skipped, not failed, when scripts/fetch_models has not fetched the model.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "../../support/run_command.h"
#include "model/model_state.h"
#include "wisp/engine.h"
#include "wisp/model.h"
#include "wisp/tokenizer.h"

namespace wisp::test {

struct SpecModel {
  std::shared_ptr<const Model> target;
  std::shared_ptr<const Model> draft;
  std::unique_ptr<Tokenizer> tokenizer;
  std::shared_ptr<Engine> engine;  // the target's, two threads
};

// `file` under models/, with its Q4_0 draft; null when the model is absent. The drafts are kept
// in the build directory (test-cache/, beside the wisp binary) and made again only when the source
// is newer: ctest runs every test case in a process of its own, and each would otherwise requantize.
// `wisp quantize` writes OUT.tmp-* and renames it, so processes making the same draft at once are safe.
inline const SpecModel* spec_model(const std::string& file) {
  static std::map<std::string, std::unique_ptr<SpecModel>> cache;
  if (auto it = cache.find(file); it != cache.end()) return it->second.get();
  const std::filesystem::path src = std::filesystem::path(WISP_MODELS_DIR) / file;
  if (!std::filesystem::exists(src)) return nullptr;
  const std::filesystem::path dir = std::filesystem::path(WISP_BINARY).parent_path() / "test-cache";
  std::filesystem::create_directories(dir);
  const std::filesystem::path draft = dir / (file + ".q4_0.gguf");
  if (!std::filesystem::exists(draft) ||
      std::filesystem::last_write_time(draft) < std::filesystem::last_write_time(src)) {
    const CommandResult r =
        run_wisp("quantize '" + src.string() + "' '" + draft.string() + "' --type q4_0 --threads 2");
    if (r.status != 0) throw std::runtime_error("wisp quantize failed: " + r.all());
  }
  auto m = std::make_unique<SpecModel>();
  m->target = Model::load(src.string());
  m->draft = Model::load(draft.string());
  m->tokenizer = std::make_unique<Tokenizer>(Tokenizer::from_gguf(detail::model_state(*m->target).file));
  m->engine = Engine::create(m->target, {.n_threads = 2, .kv_tokens = 2048});
  return (cache[file] = std::move(m)).get();
}

inline constexpr const char* kLlama = "SmolLM2-135M-Instruct.Q4_1.gguf";
inline constexpr const char* kGemma = "gemma-3-270m-q4_k_m.gguf";

}  // namespace wisp::test
