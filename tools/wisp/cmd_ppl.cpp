// `wisp ppl -m FILE -f TEXT`: perplexity with llama.cpp's method, and with --kl-base the eval
// delta against a reference model (src/eval/).
#include <cstdio>
#include <string>

#include "args.h"
#include "commands.h"
#include "eval/eval_delta.h"
#include "wisp/error.h"

namespace wisp::cli {

namespace {

ArgParser make_parser() {
  ArgParser p("ppl",
              "Perplexity of a model on a text, as llama.cpp's perplexity tool computes it: non-overlapping\n"
              "windows of CTX tokens, each scored on its second half. With --kl-base, also the mean KL\n"
              "divergence from the base model, top-1 token agreement and the perplexity difference.");
  p.option("model").short_name('m').value_name("FILE").required().help("the GGUF model to score");
  p.option("file").short_name('f').value_name("TEXT").required().help("the evaluation text (UTF-8)");
  p.option("ctx", ArgKind::kInt).short_name('c').value_name("CTX").default_value("512").help("window length in tokens");
  p.option("chunks", ArgKind::kInt).value_name("N").help("score at most N windows (default: all)");
  p.option("kl-base").value_name("BASE").help("reference GGUF (e.g. the F16 source) for KL, top-1 and delta PPL");
  p.option("kl-base-logits")
      .value_name("FILE")
      .help(
          "instead of --kl-base: the reference's log-probabilities saved by --save-logits (same text, -c, enough "
          "windows)");
  p.option("save-logits")
      .value_name("FILE")
      .help("write this model's log-probabilities at the scored positions (4 bytes x vocabulary per token)");
  p.option("threads", ArgKind::kInt).short_name('t').value_name("N").help("threads (default: all)");
  p.flag("exact").help(
      "llama.cpp's float orders (the reference numerics) instead of wisp's own batch-invariant ones; "
      "to measure the default numerics: --exact --save-logits REF, then --kl-base-logits REF");
  p.option("device").value_name("DEV").default_value("auto").help(
      "where the models run: cpu, cuda, cuda:N, or auto (the first CUDA device if the build and machine have one)");
  p.flag("json").help("print the result as one JSON object on stdout");
  return p;
}

}  // namespace

int cmd_ppl(int argc, char** argv) {
  const ArgParser parser = make_parser();
  const Args args = parser.parse(argc, argv);
  if (args.help_requested()) {
    std::printf("%s", parser.help().c_str());
    return 0;
  }
  eval::EvalRequest req;
  req.ppl.n_ctx = static_cast<std::int64_t>(args.positive("ctx"));
  if (auto n = args.opt_positive("chunks")) req.ppl.max_chunks = static_cast<std::int64_t>(*n);
  if (auto n = args.opt_positive("threads")) req.ppl.n_threads = static_cast<int>(*n);
  req.ppl.exact = args.flag("exact");
  req.ppl.device = args.str("device");
  req.model_path = args.str("model");
  req.text_path = args.str("file");
  if (auto b = args.value("kl-base")) req.base_path = *b;
  if (auto b = args.value("kl-base-logits")) {
    if (!req.base_path.empty()) throw UsageError("--kl-base and --kl-base-logits: give one of them");
    req.ppl.base_logits = *b;
  }
  if (auto s = args.value("save-logits")) req.ppl.save_logits = *s;
  const eval::PplResult r = eval::run_eval(req);
  eval::print_eval(stdout, r, req.ppl.n_ctx, args.flag("json"));
  return 0;
}

}  // namespace wisp::cli
