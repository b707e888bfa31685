// The real models the speculative-decoding tests run on, each with a draft: the target's own
// weights requantized to Q4_0 by `wisp quantize` (made once per test process in a scratch folder).
// Skipped, not failed, when scripts/fetch_models has not fetched the model.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>

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

class ScratchDir {
 public:
  ScratchDir() : path_(std::filesystem::temp_directory_path() / ("wisp_spec_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// `file` under models/, with its Q4_0 draft; null when the model is absent.
inline const SpecModel* spec_model(const std::string& file) {
  static ScratchDir scratch;
  static std::map<std::string, std::unique_ptr<SpecModel>> cache;
  if (auto it = cache.find(file); it != cache.end()) return it->second.get();
  const std::filesystem::path src = std::filesystem::path(WISP_MODELS_DIR) / file;
  if (!std::filesystem::exists(src)) return nullptr;
  const std::filesystem::path draft = scratch.path() / (file + ".q4_0.gguf");
  const CommandResult r =
      run_wisp("quantize '" + src.string() + "' '" + draft.string() + "' --type q4_0 --threads 2");
  if (r.status != 0) throw std::runtime_error("wisp quantize failed: " + r.all());
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
