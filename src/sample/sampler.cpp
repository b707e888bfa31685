#include "sample/sampler.h"

#include <random>
#include <vector>

#include "sample/draw.h"
#include "sample/filters.h"
#include "sample/logit_bias.h"
#include "sample/penalties.h"

namespace wisp {

struct Sampler::Impl {
  SamplerParams params;
  std::mt19937_64 rng;
  TokenHistory history;
  Candidates cand;  // reused across calls: one vocabulary-sized buffer per sampler
};

namespace {

const SamplerParams& validated(const SamplerParams& p) {
  p.validate();
  return p;
}

}  // namespace

Sampler::Sampler(const SamplerParams& params)
    : impl_(std::make_unique<Impl>(
          Impl{validated(params), std::mt19937_64(params.seed), TokenHistory(params.penalty_last_n), {}})) {}
Sampler::~Sampler() = default;
Sampler::Sampler(Sampler&&) noexcept = default;
Sampler& Sampler::operator=(Sampler&&) noexcept = default;

// The chain up to the draw: the logit biases, the penalties, then (unless greedy) the truncation
// filters and the temperature, leaving the survivors in s.cand.
void Sampler::filter(std::span<const float> logits) {
  Impl& s = *impl_;
  s.cand.assign(logits);
  if (!s.params.logit_bias.empty()) apply_logit_bias(s.cand, s.params.logit_bias);
  apply_penalties(s.cand, s.history,
                  PenaltyParams{s.params.repeat_penalty, s.params.frequency_penalty, s.params.presence_penalty});
  if (s.params.temperature <= 0.0f) return;
  top_k(s.cand, s.params.top_k);
  top_p(s.cand, s.params.top_p);
  min_p(s.cand, s.params.min_p);
  apply_temperature(s.cand, s.params.temperature);
}

std::int32_t Sampler::sample(std::span<const float> logits) {
  filter(logits);
  if (impl_->params.temperature <= 0.0f) return argmax(impl_->cand);
  return draw(impl_->cand, impl_->rng);
}

void Sampler::probabilities(std::span<const float> logits, std::vector<float>& probs) {
  filter(logits);
  const Candidates& c = impl_->cand;
  probs.assign(logits.size(), 0.0f);
  if (impl_->params.temperature <= 0.0f) {
    probs[static_cast<std::size_t>(argmax(c))] = 1.0f;  // greedy: all the mass on the argmax
    return;
  }
  const std::vector<float> p = softmax(c);
  for (std::size_t i = 0; i < c.items.size(); ++i) probs[static_cast<std::size_t>(c.items[i].id)] = p[i];
}

void Sampler::accept(std::int32_t token) { impl_->history.push(token); }

void Sampler::reset() {
  impl_->history.clear();
  impl_->rng.seed(impl_->params.seed);
}

const Candidates& Sampler::last_candidates() const { return impl_->cand; }
const SamplerParams& Sampler::params() const { return impl_->params; }

}  // namespace wisp
