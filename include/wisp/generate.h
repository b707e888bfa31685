// wisp::generate: the token loop shared by `wisp run`, `wisp chat` and the library: evaluate a
// prompt in one batch, then sample, stream and evaluate one token at a time until a stop condition
// (n_predict, an end-of-generation token, the context, a cancel flag, or the callback saying stop).
//
//   wisp::Sampler sampler({.temperature = 0});
//   wisp::GenerationOptions opts{.n_predict = 32, .on_text = [](std::string_view s) { print(s); return true; }};
//   wisp::GenerationResult r = wisp::generate(session, tokenizer, sampler, tokenizer.tokenize(prompt), opts);
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wisp/sampler.h"
#include "wisp/session.h"
#include "wisp/tokenizer.h"

namespace wisp {

class Speculator;

enum class StopReason {
  kLength,       // n_predict tokens were generated
  kEndOfTurn,    // the model produced an end-of-generation token
  kCancelled,    // the caller's cancel flag was raised (Ctrl-C)
  kContextFull,  // the session has no room for another token
  kCallback,     // the text callback asked to stop
};

const char* stop_reason_name(StopReason r);

struct GenerationStats {
  std::size_t n_prompt = 0;       // prompt tokens evaluated (after any reuse of cached tokens)
  double prompt_seconds = 0.0;    // wall time of the prompt's batched evaluation
  std::size_t n_generated = 0;    // tokens sampled (the end-of-turn token included)
  double generate_seconds = 0.0;  // wall time from the first sample to the last

  double prompt_tokens_per_second() const { return prompt_seconds > 0 ? n_prompt / prompt_seconds : 0.0; }
  // Decode speed counts the tokens whose evaluation was timed: each generated token but the last
  // is fed back through the model.
  double decode_tokens_per_second() const {
    return generate_seconds > 0 && n_generated > 1 ? (n_generated - 1) / generate_seconds : 0.0;
  }

  // Speculative decoding (GenerationOptions::speculator; 0 without): verification passes that
  // checked guesses, the guesses checked, and those kept.
  std::size_t n_draft_rounds = 0;
  std::size_t n_drafted = 0;
  std::size_t n_draft_accepted = 0;
  double acceptance_rate() const { return n_drafted > 0 ? static_cast<double>(n_draft_accepted) / n_drafted : 0.0; }
  // Guesses kept per verification pass.
  double mean_accepted_length() const {
    return n_draft_rounds > 0 ? static_cast<double>(n_draft_accepted) / n_draft_rounds : 0.0;
  }
};

struct GenerationResult {
  std::vector<TokenId> tokens;  // sampled tokens, in order (an end-of-turn token included)
  std::string text;             // their text as streamed (end-of-turn tokens render as "")
  StopReason stop = StopReason::kLength;
  GenerationStats stats;
};

struct GenerationOptions {
  std::size_t n_predict = 128;  // most tokens to sample; 0 = until end of turn or context full
  // Called with each printable chunk of text (complete UTF-8); return false to stop.
  std::function<bool(std::string_view)> on_text;
  // Called once per sampled token, in order, with its id and the text it completes: "" while a
  // character's bytes are incomplete, and for an end-of-turn token. Return false to stop. (Text
  // that only the end of generation flushes, an incomplete character's bytes, reaches on_text alone.)
  std::function<bool(TokenId, std::string_view)> on_token;
  // Checked before each token; raised from a signal handler to stop an answer (may be null).
  const std::atomic<bool>* cancel = nullptr;
  // Speculative decoding (src/generate/speculative.h): guesses verified several per pass. Null =
  // one token per pass. Greedy output is the same either way.
  Speculator* speculator = nullptr;
};

// Evaluates `prompt` (at least one token) at the end of `session` in one batch, then samples up to
// n_predict tokens with `sampler`. Every generated token except the last is evaluated, so the
// session ends holding prompt + generated tokens minus the last one; the caller decides whether the
// last (usually an end-of-turn token) is worth feeding back.
GenerationResult generate(Session& session, const Tokenizer& tokenizer, Sampler& sampler,
                          std::span<const TokenId> prompt, const GenerationOptions& options);

}  // namespace wisp
