// The --eval step of `wisp quantize` (quantize_eval.h). Named cmd_* so the CLI's source glob
// picks it up; it is part of the quantize subcommand, not a subcommand of its own.
#include <cstdio>
#include <filesystem>

#include "eval/eval_delta.h"
#include "quantize/runnable_source.h"
#include "quantize_eval.h"
#include "wisp/error.h"
#include "wisp/model.h"

namespace wisp::cli {

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
  const fs::path out(opt.output);
  const quantize::RunnableSource source(opt.input, (out.has_parent_path() ? out.parent_path() : fs::path(".")).string(),
                                        "eval", opt.n_threads, opt.log);
  eval::EvalRequest req;
  req.model_path = opt.output;
  req.base_path = source.path();
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
