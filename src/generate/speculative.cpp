#include "generate/speculative.h"

#include <algorithm>
#include <string>

#include "wisp/error.h"

namespace wisp {

RoundDecision decide_round(std::span<const float> rows, std::size_t n_vocab, const Draft& draft,
                           const Tokenizer& tokenizer, Sampler& sampler, AcceptRule rule, std::mt19937_64& rng,
                           std::vector<float>& scratch) {
  const std::size_t nd = draft.tokens.size();
  if (rows.size() != (nd + 1) * n_vocab) {
    throw Error("speculative decoding: " + std::to_string(rows.size()) + " logits for " + std::to_string(nd + 1) +
                " rows of " + std::to_string(n_vocab));
  }
  if (!draft.probs.empty() && draft.probs.size() < nd) {
    throw Error("speculative decoding: the draft gave fewer distributions than tokens");
  }
  const bool greedy = sampler.params().temperature <= 0.0f;
  RoundDecision out;
  for (std::size_t i = 0; i <= nd; ++i) {
    const std::span<const float> row = rows.subspan(i * n_vocab, n_vocab);
    TokenId tok;
    bool accepted = false;
    if (i == nd) {
      tok = sampler.sample(row);  // every guess kept: the target's own next token
    } else if (greedy) {
      tok = sampler.sample(row);
      accepted = tok == draft.tokens[i];
    } else {
      sampler.probabilities(row, scratch);
      const std::span<const float> q =
          draft.probs.empty() ? std::span<const float>() : std::span<const float>(draft.probs[i]);
      const DraftVerdict v = rule(scratch, q, draft.tokens[i], rng);
      tok = v.token;
      accepted = v.accepted;
    }
    sampler.accept(tok);
    out.tokens.push_back(tok);
    if (accepted) ++out.kept;
    if (!accepted || tokenizer.is_eog(tok)) break;
  }
  return out;
}

Speculator::Speculator(std::unique_ptr<Drafter> drafter, const SpeculationOptions& options)
    : drafter_(std::move(drafter)),
      options_(options),
      k_(std::clamp<std::size_t>(options.draft_start, 1, std::max<std::size_t>(options.draft_max, 1))),
      rng_(options.seed) {
  if (!drafter_) throw Error("speculative decoding: no drafter given");
  if (options.draft_max == 0) throw Error("speculative decoding: draft_max must be at least 1");
}

void Speculator::begin(std::size_t n_past, std::span<const TokenId> prompt) {
  // The record's first n_past tokens are the session's when the session was only ever fed through
  // this speculator (a conversation keeps its prefix); otherwise only the guesses suffer.
  if (record_.size() > n_past) record_.resize(n_past);
  record_.insert(record_.end(), prompt.begin(), prompt.end());
}

std::vector<TokenId> Speculator::round(Session& target, const Tokenizer& tokenizer, Sampler& sampler,
                                       std::size_t max_new) {
  if (record_.empty()) throw Error("speculative decoding: no pending token (call begin and push first)");
  if (max_new == 0) throw Error("speculative decoding: a round must be allowed at least one token");
  const std::size_t n0 = target.n_past();
  if (n0 >= target.n_ctx()) throw Error("speculative decoding: the session has no room for the pending token");
  const bool greedy = sampler.params().temperature <= 0.0f;

  // Room for the pending token and k guesses, and no more guesses than tokens still wanted.
  const std::size_t k = std::min({k_, target.n_ctx() - n0 - 1, max_new - 1});
  Draft draft;
  if (k > 0) draft = drafter_->propose(record_, k, greedy);
  if (draft.tokens.size() > k) draft.tokens.resize(k);
  const std::size_t nd = draft.tokens.size();

  std::vector<TokenId> batch;
  batch.reserve(nd + 1);
  batch.push_back(record_.back());
  batch.insert(batch.end(), draft.tokens.begin(), draft.tokens.end());
  const std::span<const float> rows = nd == 0 ? target.eval(batch) : target.eval_all(batch);
  const RoundDecision d = decide_round(rows, static_cast<std::size_t>(target.n_vocab()), draft, tokenizer, sampler,
                                       options_.rule, rng_, p_);
  const std::vector<TokenId>& out = d.tokens;
  const std::size_t kept = d.kept;

  // Keep the pending token and the kept guesses but the last token returned: that one is pending
  // now. The rejected guesses' cache entries go (their blocks return to the pool).
  target.truncate(n0 + out.size());
  record_.insert(record_.end(), out.begin(), out.end());

  if (nd > 0) {
    ++stats_.n_rounds;
    stats_.n_drafted += nd;
    stats_.n_accepted += kept;
    k_ = kept == nd ? std::min(options_.draft_max, k_ + 2) : std::max<std::size_t>(1, k_ - 1);
  }
  return out;
}

}  // namespace wisp
