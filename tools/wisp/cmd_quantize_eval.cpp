// The --eval step of `wisp quantize` (quantize_eval.h). Named cmd_* so the CLI's source glob
// picks it up; it is part of the quantize subcommand, not a subcommand of its own.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "eval/eval_delta.h"
#include "quantize_eval.h"
#include "wisp/error.h"
#include "wisp/model.h"

namespace wisp::cli {

namespace {

// Removes a temporary file when the scope ends, also when scoring throws.
struct TempFile {
  std::string path;
  ~TempFile() {
    if (!path.empty()) {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  }
};

}  // namespace

QuantizeEval QuantizeEval::from_args(const std::string& text, std::uint64_t n_ctx, std::uint64_t max_chunks) {
  try {
    eval::read_eval_text(text);
  } catch (const Error& e) {
    throw Error(std::string("--eval ") + e.what());
  }
  return {text, static_cast<std::int64_t>(n_ctx), static_cast<std::int64_t>(max_chunks)};
}

void QuantizeEval::run(const quantize::ConvertOptions& opt) const {
  namespace fs = std::filesystem;
  std::string base = opt.input;
  TempFile temp;
  bool runnable = false;
  if (!fs::is_directory(opt.input)) {
    try {
      Model::load(opt.input);
      runnable = true;
    } catch (const Error& e) {
      if (opt.log) std::fprintf(opt.log, "eval: cannot run the source %s as it is (%s)\n", opt.input.c_str(), e.what());
    }
  }
  if (!runnable) {
    const fs::path out(opt.output);
    temp.path = ((out.has_parent_path() ? out.parent_path() : fs::path(".")) /
                 (".wisp-eval-f16-" + std::to_string(::getpid()) + ".gguf")).string();
    if (opt.log) std::fprintf(opt.log, "eval: writing the source as a temporary F16 GGUF to run it\n");
    quantize::ConvertOptions c;
    c.input = opt.input;
    c.output = temp.path;
    c.policy.base = &quantize::parse_target_type("f16");
    c.n_threads = opt.n_threads;
    c.log = nullptr;
    quantize::convert(c);
    base = temp.path;
  }
  eval::EvalRequest req;
  req.model_path = opt.output;
  req.base_path = base;
  req.text_path = text_path;
  req.ppl.n_ctx = n_ctx;
  req.ppl.max_chunks = max_chunks;
  req.ppl.n_threads = opt.n_threads;
  req.ppl.log = opt.log;
  if (opt.log) std::fprintf(opt.log, "eval: %s against its source on %s\n", opt.output.c_str(), text_path.c_str());
  const eval::PplResult r = eval::run_eval(req);
  eval::print_eval(stdout, r, n_ctx, false);
}

}  // namespace wisp::cli
