// Perplexity and the eval delta against a reference model, with llama.cpp's perplexity method:
// the text is tokenized whole (with BOS when the model adds one), cut into non-overlapping windows
// of n_ctx tokens (as many whole windows as fit, or `max_chunks`), the first token of each window
// replaced by BOS when the model adds one, each window evaluated from an empty cache, and only the
// predictions of its second half scored (positions n_ctx/2 .. n_ctx-2 predicting the next token),
// so every scored token has at least n_ctx/2 tokens of context.
//
// With a base model, both are run on the same windows and each scored position also gives
//   KL(base || model) = sum_v p_base(v) (log p_base(v) - log p_model(v)),
// and whether the two argmax tokens agree (top-1 agreement).
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "wisp/model.h"

namespace wisp::eval {

struct PplOptions {
  std::int64_t n_ctx = 512;
  std::int64_t max_chunks = 0;  // 0: every whole window
  int n_threads = 0;
  // llama.cpp's float orders (EngineOptions::exact) instead of wisp's batch-invariant numerics:
  // the reference run that the default numerics are measured against (save its logits, then
  // score the default run with base_logits).
  bool exact = false;
  std::string exact_isa = "auto";  // which llama.cpp build `exact` follows (EngineOptions::exact_isa)
  std::string device = "auto";     // where the models run (EngineOptions::device)
  std::FILE* log = stderr;         // the device, and a progress line per window when a terminal; nullptr: silence
  // Saved base logits (why: a comparison table scores many models against one base; running the
  // base once and reading its log-probabilities back halves the work of every later row).
  // save_logits: write this model's log-probabilities at the scored positions to this file.
  // base_logits: read the base's from such a file instead of running a base model; the file must
  // come from the same text, tokenizer, -c and at least as many windows (checked token by token).
  std::string save_logits;
  std::string base_logits;
};

struct PplResult {
  std::int64_t n_tokens = 0;  // of the whole text
  std::int64_t n_chunks = 0;
  std::int64_t n_scored = 0;
  double nll = 0;  // summed negative log-likelihood
  double ppl() const;
  // Against a base model (has_base): its perplexity on the same windows, mean KL, top-1 agreement.
  bool has_base = false;
  double base_nll = 0;
  double kl_sum = 0;
  double kl_sq_sum = 0;  // sum of squared per-token KL, for the interval
  std::int64_t top1_same = 0;
  double base_ppl() const;
  double mean_kl() const { return n_scored == 0 ? 0 : kl_sum / static_cast<double>(n_scored); }
  // Half-width of the 95% interval of mean KL: 1.96 standard errors of the per-token mean (the
  // normal approximation llama.cpp's perplexity tool reports as "Mean KLD: m +/- se").
  double mean_kl_ci95() const;
  double top1() const { return n_scored == 0 ? 0 : static_cast<double>(top1_same) / static_cast<double>(n_scored); }
};

// Scores `text` with `model` (and `base` when not null: it must share the vocabulary; or the
// base's saved log-probabilities, opt.base_logits). Throws wisp::Error when the text is shorter
// than two windows, the vocabularies differ or a saved-logits file does not match.
PplResult perplexity(const std::shared_ptr<const Model>& model, const std::shared_ptr<const Model>& base,
                     const std::string& model_path, const std::string& text, const PplOptions& opt);

// Per-position helpers (exposed for tests): log-softmax of n logits in double.
void log_softmax(const float* logits, std::int64_t n, std::vector<double>& out);

}  // namespace wisp::eval
