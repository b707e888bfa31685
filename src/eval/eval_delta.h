// The eval delta as the CLI runs it, shared by `wisp ppl` and `wisp quantize --eval` so the two
// report the same numbers the same way: load the model (and the base), read the text, score,
// print.
#pragma once

#include <cstdio>
#include <string>

#include "eval/perplexity.h"

namespace wisp::eval {

struct EvalRequest {
  std::string model_path;  // GGUF to score
  std::string base_path;   // reference GGUF for KL, top-1 and delta PPL; empty for none
  std::string text_path;   // evaluation text (UTF-8)
  PplOptions ppl;          // -c, --chunks, threads, saved logits
};

// The whole file; throws wisp::Error naming the path when it cannot be read or is empty.
std::string read_eval_text(const std::string& path);

// Loads the models, reads the text and runs perplexity().
PplResult run_eval(const EvalRequest& req);

// The report: two human lines, or one JSON object when `json`.
void print_eval(std::FILE* out, const PplResult& r, std::int64_t n_ctx, bool json);

}  // namespace wisp::eval
