#include "eval/eval_delta.h"

#include <fstream>
#include <sstream>

#include "wisp/error.h"
#include "wisp/model.h"

namespace wisp::eval {

std::string read_eval_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the evaluation text");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (ss.str().empty()) throw Error(path + ": the evaluation text is empty");
  return ss.str();
}

PplResult run_eval(const EvalRequest& req) {
  const std::string text = read_eval_text(req.text_path);  // before loading anything
  auto model = Model::load(req.model_path);
  std::shared_ptr<const Model> base;
  if (!req.base_path.empty()) base = Model::load(req.base_path);
  return perplexity(model, base, req.model_path, text, req.ppl);
}

void print_eval(std::FILE* out, const PplResult& r, std::int64_t n_ctx, bool json) {
  if (json) {
    std::fprintf(out, "{\"ppl\": %.6f, \"n_tokens\": %lld, \"n_chunks\": %lld, \"n_scored\": %lld", r.ppl(),
                 static_cast<long long>(r.n_tokens), static_cast<long long>(r.n_chunks),
                 static_cast<long long>(r.n_scored));
    if (r.has_base) {
      std::fprintf(
          out, ", \"base_ppl\": %.6f, \"delta_ppl\": %.6f, \"mean_kl\": %.6f, \"mean_kl_ci95\": %.6f, \"top1\": %.6f",
          r.base_ppl(), r.ppl() - r.base_ppl(), r.mean_kl(), r.mean_kl_ci95(), r.top1());
    }
    std::fprintf(out, "}\n");
    return;
  }
  std::fprintf(out, "PPL %.4f over %lld windows of %lld tokens (%lld scored)\n", r.ppl(),
               static_cast<long long>(r.n_chunks), static_cast<long long>(n_ctx), static_cast<long long>(r.n_scored));
  if (r.has_base) {
    std::fprintf(out, "base PPL %.4f  delta PPL %+.4f  mean KL %.6f +/- %.6f (95%%)  top-1 agreement %.2f%%\n",
                 r.base_ppl(), r.ppl() - r.base_ppl(), r.mean_kl(), r.mean_kl_ci95(), 100 * r.top1());
  }
}

}  // namespace wisp::eval
