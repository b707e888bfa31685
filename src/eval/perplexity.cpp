#include "eval/perplexity.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/progress.h"
#include "formats/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "wisp/error.h"
#include "wisp/session.h"

namespace wisp::eval {

double PplResult::ppl() const { return n_scored == 0 ? 0 : std::exp(nll / static_cast<double>(n_scored)); }
double PplResult::base_ppl() const { return n_scored == 0 ? 0 : std::exp(base_nll / static_cast<double>(n_scored)); }

double PplResult::mean_kl_ci95() const {
  if (n_scored < 2) return 0;
  const double n = static_cast<double>(n_scored), m = kl_sum / n;
  const double var = std::max(0.0, (kl_sq_sum / n - m * m) * n / (n - 1));  // sample variance
  return 1.96 * std::sqrt(var / n);
}

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

// Saved log-probabilities (PplOptions::save_logits / base_logits). Layout, little-endian:
//   "WISPLOGP", u32 version (1), u32 0, i64 n_ctx, i64 n_chunks, i64 n_vocab, i64 first scored,
//   i32 tokens[n_chunks * n_ctx] (each window as evaluated, BOS already in place),
//   f32 log_probs[n_chunks][n_ctx - 1 - first][n_vocab].
// The tokens are stored so a reader can prove it scores the same windows of the same text.
constexpr char kLogitsMagic[8] = {'W', 'I', 'S', 'P', 'L', 'O', 'G', 'P'};
struct LogitsHeader {
  char magic[8];
  std::uint32_t version, reserved;
  std::int64_t n_ctx, n_chunks, n_vocab, first;
};

class LogitsReader {
 public:
  LogitsReader(const std::string& path, std::int64_t n_ctx, std::int64_t n_chunks, std::int64_t n_vocab)
      : path_(path), in_(path, std::ios::binary) {
    if (!in_) throw Error(path + ": cannot open the saved base logits");
    in_.read(reinterpret_cast<char*>(&h_), sizeof h_);
    if (!in_ || std::memcmp(h_.magic, kLogitsMagic, 8) != 0 || h_.version != 1) {
      throw Error(path + ": not a wisp saved-logits file (written by wisp ppl --save-logits)");
    }
    auto mismatch = [&](const std::string& have, const std::string& want) {
      throw Error(path + ": saved " + have + ", this run needs " + want);
    };
    if (h_.n_ctx != n_ctx) mismatch("with -c " + std::to_string(h_.n_ctx), "-c " + std::to_string(n_ctx));
    if (h_.n_vocab != n_vocab) {
      mismatch("for a vocabulary of " + std::to_string(h_.n_vocab), std::to_string(n_vocab) + " entries");
    }
    if (h_.n_chunks < n_chunks) mismatch(std::to_string(h_.n_chunks) + " windows", std::to_string(n_chunks));
    tokens_.resize(static_cast<std::size_t>(h_.n_chunks * h_.n_ctx));
    in_.read(reinterpret_cast<char*>(tokens_.data()), static_cast<std::streamsize>(tokens_.size() * 4));
    const auto expect = static_cast<std::uintmax_t>(sizeof h_ + tokens_.size() * 4 +
                                                    4 * h_.n_chunks * (h_.n_ctx - 1 - h_.first) * h_.n_vocab);
    std::error_code ec;
    if (!in_ || std::filesystem::file_size(path, ec) != expect) throw Error(path + ": truncated saved-logits file");
  }
  std::int64_t first() const { return h_.first; }
  // Checks window c's tokens, then reads its log-probabilities (row-major, scored positions).
  void read_window(std::int64_t c, std::span<const TokenId> window, std::vector<float>& out) {
    if (!std::equal(window.begin(), window.end(), tokens_.begin() + c * h_.n_ctx)) {
      throw Error(path_ + ": window " + std::to_string(c + 1) +
                  " holds other tokens than this run's: saved from another "
                  "text or tokenizer");
    }
    const std::int64_t per = (h_.n_ctx - 1 - h_.first) * h_.n_vocab;
    out.resize(static_cast<std::size_t>(per));
    in_.seekg(static_cast<std::streamoff>(sizeof h_ + tokens_.size() * 4 + 4 * c * per));
    in_.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(4 * per));
    if (!in_) throw Error(path_ + ": read failed in window " + std::to_string(c + 1));
  }

 private:
  std::string path_;
  std::ifstream in_;
  LogitsHeader h_{};
  std::vector<TokenId> tokens_;
};

// Writes to PATH.tmp and renames when complete, so an interrupted run leaves no file that a
// later --kl-base-logits would trust.
class LogitsWriter {
 public:
  LogitsWriter(const std::string& path, std::int64_t n_ctx, std::int64_t n_chunks, std::int64_t n_vocab,
               std::int64_t first, const std::vector<TokenId>& tokens, bool add_bos, TokenId bos)
      : path_(path), tmp_(path + ".tmp"), out_(tmp_, std::ios::binary) {
    if (!out_) throw Error(path + ": cannot write the saved logits");
    LogitsHeader h{};
    std::memcpy(h.magic, kLogitsMagic, 8);
    h.version = 1;
    h.n_ctx = n_ctx, h.n_chunks = n_chunks, h.n_vocab = n_vocab, h.first = first;
    out_.write(reinterpret_cast<const char*>(&h), sizeof h);
    for (std::int64_t c = 0; c < n_chunks; ++c) {
      std::vector<TokenId> w(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx);
      if (add_bos) w[0] = bos;
      out_.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * 4));
    }
  }
  ~LogitsWriter() {
    if (!done_) {
      out_.close();
      std::error_code ec;
      std::filesystem::remove(tmp_, ec);
    }
  }
  void add(const std::vector<double>& lp) {
    row_.assign(lp.begin(), lp.end());
    out_.write(reinterpret_cast<const char*>(row_.data()), static_cast<std::streamsize>(row_.size() * 4));
  }
  void finish() {
    out_.close();
    if (!out_) throw Error(path_ + ": write failed (disk full?)");
    std::filesystem::rename(tmp_, path_);
    done_ = true;
  }

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  std::vector<float> row_;
  bool done_ = false;
};

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
    throw Error("the text has " + std::to_string(res.n_tokens) + " tokens; perplexity with -c " +
                std::to_string(n_ctx) + " needs at least " + std::to_string(2 * n_ctx) +
                " (two windows), as llama.cpp does");
  }
  const std::int64_t n_vocab = model->info().n_vocab;
  if (base && base->info().n_vocab != n_vocab) {
    throw Error("base model has " + std::to_string(base->info().n_vocab) + " vocabulary entries, the model " +
                std::to_string(n_vocab) + ": KL divergence needs the same vocabulary");
  }
  if (base && !opt.base_logits.empty()) throw Error("a base model and saved base logits: give one of them");
  res.has_base = static_cast<bool>(base) || !opt.base_logits.empty();
  res.n_chunks = res.n_tokens / n_ctx;
  if (opt.max_chunks > 0) res.n_chunks = std::min(res.n_chunks, opt.max_chunks);
  const std::int64_t first = n_ctx / 2;
  std::unique_ptr<LogitsReader> saved_base;
  if (!opt.base_logits.empty())
    saved_base = std::make_unique<LogitsReader>(opt.base_logits, n_ctx, res.n_chunks, n_vocab);
  if (saved_base && saved_base->first() != first) throw Error(opt.base_logits + ": saved with another scored range");
  std::unique_ptr<LogitsWriter> save;
  if (!opt.save_logits.empty()) {
    save = std::make_unique<LogitsWriter>(opt.save_logits, n_ctx, res.n_chunks, n_vocab, first, tokens, add_bos,
                                          tok.bos());
  }

  // One engine per model for the whole run; each window is a fresh session on it.
  const EngineOptions eo{.n_threads = opt.n_threads,
                         .kv_tokens = static_cast<std::size_t>(n_ctx),
                         .exact = opt.exact,
                         .exact_isa = opt.exact_isa,
                         .device = opt.device};
  const std::shared_ptr<Engine> engine = Engine::create(model, eo);
  const std::shared_ptr<Engine> base_engine = base ? Engine::create(base, eo) : nullptr;
  if (opt.log) std::fprintf(opt.log, "device: %s\n", engine->device().c_str());
  const SessionOptions so{.n_ctx = static_cast<std::size_t>(n_ctx)};
  std::vector<double> lp, lb;
  std::vector<float> saved;
  // Windows done, tokens evaluated (both models') per second and the time left, on a terminal only.
  Progress progress("ppl", "windows", static_cast<std::uint64_t>(res.n_chunks), opt.log);
  for (std::int64_t c = 0; c < res.n_chunks; ++c) {
    std::vector<TokenId> window(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx);
    if (add_bos) window[0] = tok.bos();  // each window starts as a fresh document
    Session s(engine, so);
    const std::span<const float> logits = s.eval_all(window);
    std::vector<float> base_logits;
    if (base) {
      Session sb(base_engine, so);
      const std::span<const float> bl = sb.eval_all(window);
      base_logits.assign(bl.begin(), bl.end());
    }
    if (saved_base) saved_base->read_window(c, window, saved);
    for (std::int64_t j = first; j < n_ctx - 1; ++j) {
      const TokenId next = tokens[static_cast<std::size_t>(c * n_ctx + j + 1)];
      log_softmax(logits.data() + j * n_vocab, n_vocab, lp);
      res.nll -= lp[static_cast<std::size_t>(next)];
      if (save) save->add(lp);
      if (res.has_base) {
        if (saved_base) {
          const float* row = saved.data() + (j - first) * n_vocab;
          lb.assign(row, row + n_vocab);
        } else {
          log_softmax(base_logits.data() + j * n_vocab, n_vocab, lb);
        }
        res.base_nll -= lb[static_cast<std::size_t>(next)];
        double kl = 0;
        for (std::int64_t v = 0; v < n_vocab; ++v) {
          const double pb = std::exp(lb[static_cast<std::size_t>(v)]);
          kl += pb * (lb[static_cast<std::size_t>(v)] - lp[static_cast<std::size_t>(v)]);
        }
        res.kl_sum += std::max(kl, 0.0);
        res.kl_sq_sum += std::max(kl, 0.0) * std::max(kl, 0.0);
        res.top1_same += argmax(lp) == argmax(lb) ? 1 : 0;
      }
      ++res.n_scored;
    }
    if (progress.enabled()) {
      char note[128];
      int len = std::snprintf(note, sizeof note, "ppl %.4f", res.ppl());
      if (res.has_base && len > 0) {
        std::snprintf(note + len, sizeof note - static_cast<std::size_t>(len), ", KL %.5f, top-1 %.2f%%", res.mean_kl(),
                      100 * res.top1());
      }
      const std::uint64_t evaluated = static_cast<std::uint64_t>((c + 1) * n_ctx) * (base ? 2 : 1);
      progress.update(static_cast<std::uint64_t>(c + 1), evaluated, note);
    }
  }
  progress.finish();
  if (save) save->finish();
  return res;
}

}  // namespace wisp::eval
