#include "sample/sampler.h"

#include "sample/draw.h"
#include "sample/filters.h"

namespace wisp {

namespace {

const SamplerParams& validated(const SamplerParams& p) {
  p.validate();
  return p;
}

}  // namespace

Sampler::Sampler(const SamplerParams& params)
    : params_(validated(params)), rng_(params.seed), history_(params.penalty_last_n) {}

std::int32_t Sampler::sample(std::span<const float> logits) {
  cand_.assign(logits);
  apply_penalties(cand_, history_,
                  PenaltyParams{params_.repeat_penalty, params_.frequency_penalty, params_.presence_penalty});
  if (params_.temperature <= 0.0f) return argmax(cand_);
  top_k(cand_, params_.top_k);
  top_p(cand_, params_.top_p);
  min_p(cand_, params_.min_p);
  apply_temperature(cand_, params_.temperature);
  return draw(cand_, rng_);
}

void Sampler::reset() {
  history_.clear();
  rng_.seed(params_.seed);
}

}  // namespace wisp
