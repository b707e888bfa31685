#include "eval/perplexity.h"

#include <algorithm>
#include <cmath>

#include "formats/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "wisp/error.h"
#include "wisp/session.h"

namespace wisp::eval {

double PplResult::ppl() const { return n_scored == 0 ? 0 : std::exp(nll / static_cast<double>(n_scored)); }
double PplResult::base_ppl() const { return n_scored == 0 ? 0 : std::exp(base_nll / static_cast<double>(n_scored)); }

void log_softmax(const float* logits, std::int64_t n, std::vector<double>& out) {
  out.resize(static_cast<std::size_t>(n));
  double mx = logits[0];
  for (std::int64_t i = 1; i < n; ++i) mx = std::max(mx, static_cast<double>(logits[i]));
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - mx);
  const double lse = mx + std::log(sum);
  for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = static_cast<double>(logits[i]) - lse;
}

namespace {

std::int64_t argmax(const std::vector<double>& v) {
  return static_cast<std::int64_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

PplResult perplexity(const std::shared_ptr<const Model>& model, const std::shared_ptr<const Model>& base,
                     const std::string& model_path, const std::string& text, const PplOptions& opt) {
  const GgufFile file = GgufFile::open(model_path);
  const Tokenizer tok = Tokenizer::from_gguf(file);
  const bool add_bos = tok.vocab().add_bos;
  std::vector<TokenId> tokens = tok.tokenize(text, {.add_special = true, .parse_special = false});
  const std::int64_t n_ctx = opt.n_ctx;
  PplResult res;
  res.n_tokens = static_cast<std::int64_t>(tokens.size());
  if (n_ctx < 4) throw Error("context " + std::to_string(n_ctx) + " is too small to score (need at least 4)");
  if (res.n_tokens < 2 * n_ctx) {
    throw Error("the text has " + std::to_string(res.n_tokens) + " tokens; perplexity with -c " + std::to_string(n_ctx) +
                " needs at least " + std::to_string(2 * n_ctx) + " (two windows), as llama.cpp does");
  }
  const std::int64_t n_vocab = model->info().n_vocab;
  if (base && base->info().n_vocab != n_vocab) {
    throw Error("base model has " + std::to_string(base->info().n_vocab) + " vocabulary entries, the model " +
                std::to_string(n_vocab) + ": KL divergence needs the same vocabulary");
  }
  res.has_base = static_cast<bool>(base);
  res.n_chunks = res.n_tokens / n_ctx;
  if (opt.max_chunks > 0) res.n_chunks = std::min(res.n_chunks, opt.max_chunks);

  SessionOptions so;
  so.n_ctx = static_cast<std::size_t>(n_ctx);
  so.n_threads = opt.n_threads;
  const std::int64_t first = n_ctx / 2;
  std::vector<double> lp, lb;
  for (std::int64_t c = 0; c < res.n_chunks; ++c) {
    std::vector<TokenId> window(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx);
    if (add_bos) window[0] = tok.bos();  // each window starts as a fresh document
    Session s(model, so);
    const std::span<const float> logits = s.eval_all(window);
    std::vector<float> base_logits;
    if (base) {
      Session sb(base, so);
      const std::span<const float> bl = sb.eval_all(window);
      base_logits.assign(bl.begin(), bl.end());
    }
    for (std::int64_t j = first; j < n_ctx - 1; ++j) {
      const TokenId next = tokens[static_cast<std::size_t>(c * n_ctx + j + 1)];
      log_softmax(logits.data() + j * n_vocab, n_vocab, lp);
      res.nll -= lp[static_cast<std::size_t>(next)];
      if (base) {
        log_softmax(base_logits.data() + j * n_vocab, n_vocab, lb);
        res.base_nll -= lb[static_cast<std::size_t>(next)];
        double kl = 0;
        for (std::int64_t v = 0; v < n_vocab; ++v) {
          const double pb = std::exp(lb[static_cast<std::size_t>(v)]);
          kl += pb * (lb[static_cast<std::size_t>(v)] - lp[static_cast<std::size_t>(v)]);
        }
        res.kl_sum += std::max(kl, 0.0);
        res.top1_same += argmax(lp) == argmax(lb) ? 1 : 0;
      }
      ++res.n_scored;
    }
    if (opt.log) {
      std::fprintf(opt.log, "[%lld/%lld] ppl %.4f", static_cast<long long>(c + 1), static_cast<long long>(res.n_chunks),
                   res.ppl());
      if (base) std::fprintf(opt.log, "  base %.4f  KL %.5f  top-1 %.2f%%", res.base_ppl(), res.mean_kl(), 100 * res.top1());
      std::fprintf(opt.log, "\n");
    }
  }
  return res;
}

}  // namespace wisp::eval
