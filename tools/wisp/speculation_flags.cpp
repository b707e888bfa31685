#include "speculation_flags.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "generate/draft_model.h"
#include "generate/prompt_lookup.h"
#include "model/model_state.h"
#include "wisp/error.h"

namespace wisp::cli {

void add_speculation_flags(CommandLine& cl, SpeculationFlags& f) {
  cl.option("--lookup", f.lookup)
      .value_name("N")
      .group("speculation")
      .help(
          "speculative decoding by prompt lookup: guess the tokens that followed the last earlier occurrence of "
          "the final N..--lookup-min tokens (pays when the answer quotes the prompt: rewrite, summarize, edit)");
  cl.option("--lookup-min", f.lookup_min).value_name("N").group("speculation").help("shortest n-gram --lookup matches");
  cl.option("--draft", f.draft)
      .value_name("FILE")
      .group("speculation")
      .help("speculative decoding with a draft model (a GGUF with the same vocabulary, e.g. a lower-bit copy)");
  cl.option("--draft-max", f.draft_max)
      .value_name("K")
      .group("speculation")
      .help("most guessed tokens verified per pass (the number adapts to how many are kept)");
  cl.option("--draft-p-min", f.draft_p_min)
      .value_name("P")
      .group("speculation")
      .help("--draft: stop guessing at a token the draft gives probability below P");
}

std::unique_ptr<Speculator> speculator_from_flags(const SpeculationFlags& f, const LoadedModel& target,
                                                  const Tokenizer& tokenizer, const SamplerParams& sampling) {
  const bool lookup = f.lookup.has_value();
  const bool draft = f.draft.has_value();
  if (!lookup && !draft) return nullptr;
  if (lookup && draft) throw UsageError("choose one way to draft: --lookup N or --draft FILE, not both");
  if (target.session.exact) {
    // Verification evaluates several tokens per pass; with --exact the float order depends on the
    // batch, so greedy output would no longer equal plain decoding token for token.
    throw UsageError("--lookup/--draft need the default numerics (batch-invariant); drop --exact");
  }
  const std::int64_t draft_max = f.draft_max;
  if (draft_max < 1 || draft_max > 64) throw UsageError("--draft-max must be 1..64, got " + std::to_string(draft_max));
  SpeculationOptions so;
  so.draft_max = static_cast<std::size_t>(draft_max);
  so.draft_start = std::min<std::size_t>(so.draft_max, 4);
  so.seed = sampling.seed;

  std::unique_ptr<Drafter> drafter;
  if (lookup) {
    const std::int64_t n = *f.lookup;
    const std::int64_t n_min = f.lookup_min;
    if (n < 1 || n > 64) throw UsageError("--lookup must be 1..64, got " + std::to_string(n));
    if (n_min < 1 || n_min > n) {
      throw UsageError("--lookup-min must be 1..--lookup (" + std::to_string(n) + "), got " + std::to_string(n_min));
    }
    drafter = std::make_unique<PromptLookupDrafter>(static_cast<std::size_t>(n), static_cast<std::size_t>(n_min));
  } else {
    const double p_min = f.draft_p_min;
    if (!(p_min >= 0.0 && p_min <= 1.0)) throw UsageError("--draft-p-min must be in [0, 1]");
    const std::string& path = *f.draft;
    auto t0 = std::chrono::steady_clock::now();
    std::shared_ptr<const Model> model = Model::load(path);
    const Tokenizer draft_tokenizer = Tokenizer::from_gguf(detail::model_state(*model).file);
    check_same_vocabulary(tokenizer.vocab(), draft_tokenizer.vocab(), path);
    SessionOptions ds;
    ds.n_ctx = target.session.n_ctx;
    ds.n_threads = target.session.n_threads;
    drafter = std::make_unique<DraftModelDrafter>(model, ds, sampling, static_cast<float>(p_min));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "draft %s: %s, %lld layers, %.1f MiB of weights, in %.0f ms\n", path.c_str(),
                 model->info().architecture.c_str(), static_cast<long long>(model->info().n_layer),
                 model->info().weight_bytes / 1048576.0, ms);
  }
  return std::make_unique<Speculator>(std::move(drafter), so);
}

std::string speculation_summary(const GenerationStats& st) {
  if (st.n_draft_rounds == 0 && st.n_drafted == 0) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf, " | drafted %zu, accepted %zu (%.0f%%), %.2f accepted per pass", st.n_drafted,
                st.n_draft_accepted, 100.0 * st.acceptance_rate(), st.mean_accepted_length());
  return buf;
}

}  // namespace wisp::cli
