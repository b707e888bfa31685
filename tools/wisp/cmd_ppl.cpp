// `wisp ppl -m FILE -f TEXT`: perplexity with llama.cpp's method, and with --kl-base the eval
// delta against a reference model (src/eval/).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "args.h"
#include "commands.h"
#include "eval/perplexity.h"
#include "wisp/error.h"
#include "wisp/model.h"

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
  p.option("threads", ArgKind::kInt).short_name('t').value_name("N").help("threads (default: all)");
  p.flag("json").help("print the result as one JSON object on stdout");
  return p;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the evaluation text");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int cmd_ppl(int argc, char** argv) {
  const ArgParser parser = make_parser();
  const Args args = parser.parse(argc, argv);
  if (args.help_requested()) {
    std::printf("%s", parser.help().c_str());
    return 0;
  }
  eval::PplOptions opt;
  opt.n_ctx = static_cast<std::int64_t>(args.positive("ctx"));
  if (auto n = args.opt_positive("chunks")) opt.max_chunks = static_cast<std::int64_t>(*n);
  if (auto n = args.opt_positive("threads")) opt.n_threads = static_cast<int>(*n);
  const std::string model_path = args.str("model");
  const std::string text = read_text(args.str("file"));
  auto model = Model::load(model_path);
  std::shared_ptr<const Model> base;
  if (auto b = args.value("kl-base")) base = Model::load(*b);
  const eval::PplResult r = eval::perplexity(model, base, model_path, text, opt);
  if (args.flag("json")) {
    std::printf("{\"ppl\": %.6f, \"n_tokens\": %lld, \"n_chunks\": %lld, \"n_scored\": %lld", r.ppl(),
                static_cast<long long>(r.n_tokens), static_cast<long long>(r.n_chunks), static_cast<long long>(r.n_scored));
    if (r.has_base) {
      std::printf(", \"base_ppl\": %.6f, \"delta_ppl\": %.6f, \"mean_kl\": %.6f, \"top1\": %.6f", r.base_ppl(),
                  r.ppl() - r.base_ppl(), r.mean_kl(), r.top1());
    }
    std::printf("}\n");
  } else {
    std::printf("PPL %.4f over %lld windows of %lld tokens (%lld scored)\n", r.ppl(), static_cast<long long>(r.n_chunks),
                static_cast<long long>(opt.n_ctx), static_cast<long long>(r.n_scored));
    if (r.has_base) {
      std::printf("base PPL %.4f  delta PPL %+.4f  mean KL %.6f  top-1 agreement %.2f%%\n", r.base_ppl(),
                  r.ppl() - r.base_ppl(), r.mean_kl(), 100 * r.top1());
    }
  }
  return 0;
}

}  // namespace wisp::cli
