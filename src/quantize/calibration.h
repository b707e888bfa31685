// `wisp quantize --calib FILE`: runs the *source* model over a calibration text and collects the
// per-input-channel activation statistics of every weight matmul (model/activation_stats.h).
// The source must be runnable: a GGUF source wisp can load is run as it is; a Hugging Face folder
// (or a GGUF wisp cannot run, e.g. BF16) is first converted to a temporary F16 GGUF beside the
// output with the converter itself, run, and removed.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "model/activation_stats.h"

namespace wisp::quantize {

struct CalibOptions {
  std::string text_path;           // --calib
  std::int64_t max_tokens = 4096;  // --calib-tokens (the text's first tokens)
  std::int64_t n_ctx = 512;        // window length
  std::string temp_dir = ".";      // where a temporary F16 GGUF may be written (the output's folder)
  // --gptq: keep every activation row (a Hessian per input needs them all, not a sample).
  bool keep_all_rows = false;
  int n_threads = 0;
  std::FILE* log = stderr;
};

// Throws wisp::Error naming the flag and file for an unreadable or empty text, and whatever
// loading or running the source raises.
std::shared_ptr<const model::ActivationStats> calibrate(const std::string& input, const CalibOptions& opt);

// The tokens calibrate() runs through a GGUF wisp can run (the text's first opt.max_tokens, BOS
// first), and in *bos the token each window starts with (-1: none). The same errors.
std::vector<std::int32_t> calibration_tokens(const std::string& runnable_gguf, const CalibOptions& opt,
                                             std::int32_t* bos);

}  // namespace wisp::quantize
