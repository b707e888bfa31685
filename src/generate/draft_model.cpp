#include "generate/draft_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sample/draw.h"
#include "wisp/error.h"

namespace wisp {

void check_same_vocabulary(const Vocab& target, const Vocab& draft, const std::string& draft_name) {
  if (target.size() != draft.size()) {
    throw Error("draft model " + draft_name + " has a vocabulary of " + std::to_string(draft.size()) +
                " tokens but the target's has " + std::to_string(target.size()) +
                ": a draft model must share the target's vocabulary (the same tokenizer)");
  }
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (target.tokens[i] != draft.tokens[i]) {
      throw Error("draft model " + draft_name + ": token " + std::to_string(i) + " is \"" + draft.tokens[i] +
                  "\" in the draft but \"" + target.tokens[i] +
                  "\" in the target: a draft model must share the target's vocabulary (the same tokenizer)");
    }
  }
}

namespace {

SamplerParams without_penalties(SamplerParams p) {
  p.repeat_penalty = 1.0f;
  p.frequency_penalty = 0.0f;
  p.presence_penalty = 0.0f;
  p.penalty_last_n = 0;
  return p;
}

// The largest softmax probability of raw logits: how sure the draft is of its argmax.
float max_probability(std::span<const float> logits, std::size_t* argmax_out) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - logits[best]);
  *argmax_out = best;
  return static_cast<float>(1.0 / sum);
}

}  // namespace

DraftModelDrafter::DraftModelDrafter(std::shared_ptr<const Model> draft, const SessionOptions& session,
                                     const SamplerParams& sampling, float p_min)
    : session_(std::move(draft), session),
      sampler_(without_penalties(sampling)),
      // Its own stream, derived from the seed, so a seeded run drafts the same tokens every time.
      rng_(sampling.seed ^ 0x9e3779b97f4a7c15ull),
      p_min_(p_min) {}

std::span<const float> DraftModelDrafter::sync(std::span<const TokenId> context) {
  std::size_t common = 0;
  while (common < held_.size() && common < context.size() && held_[common] == context[common]) ++common;
  // The logits after the last context token are needed, so at least that token is evaluated again.
  if (common == context.size()) --common;
  session_.truncate(common);
  held_.resize(common);
  std::span<const float> logits = session_.eval(context.subspan(common));
  held_.assign(context.begin(), context.end());
  return logits;
}

void DraftModelDrafter::prefill(std::span<const TokenId> context) {
  if (!context.empty() && context.size() <= session_.n_ctx()) sync(context);
}

Draft DraftModelDrafter::propose(std::span<const TokenId> context, std::size_t k, bool greedy) {
  Draft out;
  if (context.empty() || k == 0) return out;
  // The draft has the target's context at most; near its end there is nothing worth guessing.
  if (context.size() + k > session_.n_ctx()) return out;
  std::span<const float> logits = sync(context);
  for (std::size_t i = 0; i < k; ++i) {
    TokenId tok;
    float confidence;
    if (greedy) {
      std::size_t best = 0;
      confidence = max_probability(logits, &best);
      tok = static_cast<TokenId>(best);
    } else {
      sampler_.probabilities(logits, probs_);
      const double u = uniform01(rng_);
      double cum = 0.0;
      std::size_t pick = 0;
      for (std::size_t j = 0; j < probs_.size(); ++j) {
        if (probs_[j] <= 0.0f) continue;
        cum += probs_[j];
        pick = j;
        if (u < cum) break;
      }
      tok = static_cast<TokenId>(pick);
      confidence = *std::max_element(probs_.begin(), probs_.end());
    }
    // An unsure guess is usually rejected, and each one offered costs the target a row of its
    // verification pass (and the draft another step): stop at the first.
    if (confidence < p_min_) break;
    out.tokens.push_back(tok);
    if (!greedy) out.probs.push_back(probs_);
    if (i + 1 == k) break;  // the last guess need not be evaluated
    const TokenId next[1] = {tok};
    logits = session_.eval(next);
    held_.push_back(tok);
  }
  return out;
}

}  // namespace wisp
