// `wisp quantize ... --eval TEXT`: after writing OUT, the eval delta of OUT against its source
// (the same code as `wisp ppl --kl-base`: eval/eval_delta.h). The source has to run: a GGUF that
// loads is used as it is; a Hugging Face folder (or a GGUF wisp cannot run) is first written as a
// temporary F16 GGUF beside OUT and removed afterwards.
#pragma once

#include <cstdint>
#include <string>

#include "quantize/converter.h"

namespace wisp::cli {

struct QuantizeEval {
  std::string text_path;
  std::int64_t n_ctx = 512;
  std::int64_t max_chunks = 0;  // 0: all windows

  // Reads the text once now so a missing or empty file fails before the conversion's work.
  static QuantizeEval from_args(const std::string& text, std::uint64_t n_ctx, std::uint64_t max_chunks);
  // Scores opt.output against opt.input and prints the report on stdout.
  void run(const quantize::ConvertOptions& opt) const;
};

}  // namespace wisp::cli
