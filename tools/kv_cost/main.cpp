// wisp_kv_cost: what a quantized KV cache costs in quality (seed 004: attention scores are small
// inner products, so narrowing K and V shifts them). For each window of the eval text it runs the
// model once per KV type from an empty cache and compares each type's next-token distributions with
// the f16 cache's (llama.cpp's default) at the scored positions: mean KL(f16 || type), top-1
// agreement, and each type's perplexity. Windows and scoring follow llama.cpp's perplexity: non-
// overlapping windows of n_ctx tokens, the first replaced by BOS when the model adds one, only the
// second half scored, so every scored token has at least n_ctx/2 tokens of context.
//
//   wisp_kv_cost MODEL.gguf TEXT_FILE N_CTX MAX_WINDOWS [THREADS]
// prints one markdown table row per type (q8_0, q4; f16's own perplexity on the first row).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/gguf_file.h"
#include "kv/kv_type.h"
#include "tokenizer/tokenizer.h"
#include "wisp/error.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace {

// log-softmax in double: the KL of close distributions is a small difference of large sums.
void log_softmax(const float* x, std::size_t n, std::vector<double>& out) {
  out.resize(n);
  const double mx = *std::max_element(x, x + n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i]) - mx);
  const double lse = mx + std::log(sum);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(x[i]) - lse;
}

struct Score {
  double nll = 0, kl = 0;
  long same = 0, n = 0;
};

int run(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: wisp_kv_cost MODEL.gguf TEXT_FILE N_CTX MAX_WINDOWS [THREADS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const long n_ctx = std::stol(argv[3]);
  const long max_windows = std::stol(argv[4]);
  const int threads = argc > 5 ? std::stoi(argv[5]) : 2;
  if (n_ctx < 4 || max_windows < 1) throw wisp::Error("N_CTX must be >= 4 and MAX_WINDOWS >= 1");

  std::ifstream in(argv[2], std::ios::binary);
  if (!in) throw wisp::Error(std::string("cannot read ") + argv[2]);
  std::stringstream ss;
  ss << in.rdbuf();
  const wisp::Tokenizer tok = wisp::Tokenizer::from_gguf(wisp::GgufFile::open(path));
  const std::vector<wisp::TokenId> ids = tok.tokenize(ss.str(), {.add_special = true});
  const bool bos = tok.vocab().add_bos;
  const long windows = std::min<long>(max_windows, static_cast<long>(ids.size()) / n_ctx);
  if (windows < 1) throw wisp::Error("the text is shorter than one window");

  auto model = wisp::Model::load(path);
  const auto n_vocab = static_cast<std::size_t>(model->info().n_vocab);
  const char* types[] = {"f16", "q8_0", "q4"};
  Score score[3];
  std::vector<double> lp_ref, lp;
  const auto t0 = std::chrono::steady_clock::now();
  for (long w = 0; w < windows; ++w) {
    std::vector<std::int32_t> win(ids.begin() + w * n_ctx, ids.begin() + (w + 1) * n_ctx);
    if (bos) win[0] = tok.bos();
    std::vector<float> ref;
    for (int ti = 0; ti < 3; ++ti) {
      wisp::Session s(model, {.n_ctx = static_cast<std::size_t>(n_ctx), .n_threads = threads, .kv_type = types[ti]});
      const std::span<const float> all = s.eval_all(win);
      if (ti == 0) ref.assign(all.begin(), all.end());
      for (long p = n_ctx / 2; p < n_ctx - 1; ++p) {
        const float* lg = all.data() + static_cast<std::size_t>(p) * n_vocab;
        const float* rg = ref.data() + static_cast<std::size_t>(p) * n_vocab;
        log_softmax(lg, n_vocab, lp);
        log_softmax(rg, n_vocab, lp_ref);
        double kl = 0;
        for (std::size_t v = 0; v < n_vocab; ++v) kl += std::exp(lp_ref[v]) * (lp_ref[v] - lp[v]);
        Score& sc = score[ti];
        sc.kl += kl;
        sc.nll -= lp[static_cast<std::size_t>(win[static_cast<std::size_t>(p) + 1])];
        sc.same += (std::max_element(lg, lg + n_vocab) - lg) == (std::max_element(rg, rg + n_vocab) - rg);
        ++sc.n;
      }
    }
    std::fprintf(stderr, "window %ld/%ld done (%.0f s)\n", w + 1, windows,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("| model | ctx | windows | scored | KV type | bytes/value | PPL | mean KL vs f16 | top-1 vs f16 |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int ti = 0; ti < 3; ++ti) {
    const Score& sc = score[ti];
    const auto& info = wisp::kv_type_by_name(types[ti]);
    std::printf("| %s | %ld | %ld | %ld | %s | %.4g | %.4f | %.6f | %.2f%% |\n", model->info().architecture.c_str(),
                n_ctx, windows, sc.n, types[ti], info.bytes_per_element(), std::exp(sc.nll / static_cast<double>(sc.n)),
                sc.kl / static_cast<double>(sc.n), 100.0 * static_cast<double>(sc.same) / static_cast<double>(sc.n));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wisp_kv_cost: %s\n", e.what());
    return 1;
  }
}
