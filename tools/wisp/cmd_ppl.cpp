// `wisp ppl -m FILE -f TEXT`: perplexity with llama.cpp's method, and with --kl-base the eval
// delta against a reference model (src/eval/).
#include <cstdio>
#include <cstdint>
#include <optional>
#include <string>

#include "command_line.h"
#include "commands.h"
#include "eval/eval_delta.h"
#include "wisp/error.h"

namespace wisp::cli {

namespace {

struct PplFlags {
  std::string model, file;
  std::int64_t ctx = 512;
  std::optional<std::int64_t> chunks;
  std::optional<int> threads;
  std::optional<std::string> kl_base, kl_base_logits, save_logits;
  bool exact = false;
  std::string device = "auto";
  bool json = false;
};

void declare(CommandLine& cl, PplFlags& f) {
  cl.option("-m,--model", f.model).value_name("FILE").required().help("the GGUF model to score");
  cl.option("-f,--file", f.file).value_name("TEXT").required().help("the evaluation text (UTF-8)");
  cl.positive("-c,--ctx", f.ctx).value_name("CTX").help("window length in tokens");
  cl.positive("--chunks", f.chunks).value_name("N").help("score at most N windows (default: all)");
  cl.option("--kl-base", f.kl_base)
      .value_name("BASE")
      .help("reference GGUF (e.g. the F16 source) for KL, top-1 and delta PPL");
  cl.option("--kl-base-logits", f.kl_base_logits)
      .value_name("FILE")
      .help(
          "instead of --kl-base: the reference's log-probabilities saved by --save-logits (same text, -c, enough "
          "windows)");
  cl.option("--save-logits", f.save_logits)
      .value_name("FILE")
      .help("write this model's log-probabilities at the scored positions (4 bytes x vocabulary per token)");
  cl.positive("-t,--threads", f.threads).value_name("N").help("threads (default: all)");
  cl.flag("--exact", f.exact)
      .help(
          "llama.cpp's float orders (the reference numerics) instead of wisp's own batch-invariant ones; "
          "to measure the default numerics: --exact --save-logits REF, then --kl-base-logits REF");
  cl.option("--device", f.device)
      .value_name("DEV")
      .help(
          "where the models run: cpu, cuda, cuda:N, or auto (the first CUDA device if the build and machine have "
          "one)");
  cl.flag("--json", f.json).help("print the result as one JSON object on stdout");
}

}  // namespace

int cmd_ppl(int argc, char** argv) {
  PplFlags flags;
  CommandLine cl("ppl",
                 "Perplexity of a model on a text, as llama.cpp's perplexity tool computes it: non-overlapping\n"
                 "windows of CTX tokens, each scored on its second half. With --kl-base, also the mean KL\n"
                 "divergence from the base model, top-1 token agreement and the perplexity difference.");
  declare(cl, flags);
  if (!cl.parse(argc, argv)) {
    std::printf("%s", cl.help().c_str());
    return 0;
  }
  eval::EvalRequest req;
  req.ppl.n_ctx = flags.ctx;
  if (flags.chunks) req.ppl.max_chunks = *flags.chunks;
  if (flags.threads) req.ppl.n_threads = *flags.threads;
  req.ppl.exact = flags.exact;
  req.ppl.device = flags.device;
  req.model_path = flags.model;
  req.text_path = flags.file;
  if (flags.kl_base) req.base_path = *flags.kl_base;
  if (flags.kl_base_logits) {
    if (!req.base_path.empty()) throw UsageError("--kl-base and --kl-base-logits: give one of them");
    req.ppl.base_logits = *flags.kl_base_logits;
  }
  if (flags.save_logits) req.ppl.save_logits = *flags.save_logits;
  const eval::PplResult r = eval::run_eval(req);
  eval::print_eval(stdout, r, req.ppl.n_ctx, flags.json);
  return 0;
}

}  // namespace wisp::cli
