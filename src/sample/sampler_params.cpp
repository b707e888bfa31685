#include "sample/sampler_params.h"

#include <cmath>
#include <limits>
#include <string>

#include "wisp/error.h"

namespace wisp {

void SamplerParams::validate() const {
  auto bad = [](const char* name, float v, const char* range) {
    throw Error(std::string("sampler: ") + name + " = " + std::to_string(v) + " is out of range; expected " + range);
  };
  if (!(repeat_penalty > 0.0f) || !std::isfinite(repeat_penalty))
    bad("repeat_penalty", repeat_penalty, "a finite value > 0 (1 = off)");
  if (!std::isfinite(frequency_penalty)) bad("frequency_penalty", frequency_penalty, "a finite value (0 = off)");
  if (!std::isfinite(presence_penalty)) bad("presence_penalty", presence_penalty, "a finite value (0 = off)");
  if (!(top_p > 0.0f && top_p <= 1.0f)) bad("top_p", top_p, "0 < top_p <= 1 (1 = off)");
  if (!(min_p >= 0.0f && min_p <= 1.0f)) bad("min_p", min_p, "0 <= min_p <= 1 (0 = off)");
  if (!std::isfinite(temperature)) bad("temperature", temperature, "a finite number (<= 0 = greedy)");
  for (const LogitBias& b : logit_bias) {
    if (b.token < 0) throw Error("sampler: logit_bias names token " + std::to_string(b.token) + ", not a token id");
    if (std::isnan(b.bias) || b.bias == std::numeric_limits<float>::infinity())
      bad("logit_bias", b.bias, "a number or -infinity (a ban)");
  }
}

}  // namespace wisp
