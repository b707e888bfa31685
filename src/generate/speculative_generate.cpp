// generate() with a Speculator (GenerationOptions::speculator): the same stop conditions, timings
// and session contract as the plain loop (generator.cpp), over rounds that decide several tokens.
#include <algorithm>
#include <chrono>
#include <deque>
#include <limits>

#include "generate/speculative.h"
#include "wisp/error.h"
#include "wisp/generate.h"
#include "wisp/stream_decoder.h"

namespace wisp {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

GenerationResult generate_speculative(Session& session, const Tokenizer& tokenizer, Sampler& sampler,
                                      std::span<const TokenId> prompt, const GenerationOptions& options,
                                      Speculator& speculator) {
  const std::size_t n_start = session.n_past();
  GenerationResult result;
  for (TokenId t : prompt) sampler.accept(t);
  speculator.begin(n_start, prompt);
  const SpeculationStats before = speculator.stats();

  auto t0 = Clock::now();
  std::span<const float> logits = session.eval(prompt);
  speculator.prefill();
  result.stats.n_prompt = prompt.size();
  result.stats.prompt_seconds = seconds_since(t0);

  TokenStreamDecoder decoder(tokenizer);
  auto emit = [&](const std::string& chunk) {
    if (chunk.empty()) return true;
    result.text += chunk;
    return !options.on_text || options.on_text(chunk);
  };
  // One sampled token to the callbacks: its id and text to on_token, the text to on_text.
  auto deliver = [&](TokenId tok, const std::string& chunk) {
    const bool go_on = !options.on_token || options.on_token(tok, chunk);
    return emit(chunk) && go_on;
  };

  auto t1 = Clock::now();
  std::deque<TokenId> ready;
  {
    const TokenId first = sampler.sample(logits);
    sampler.accept(first);
    speculator.push(first);
    ready.push_back(first);
  }
  for (;;) {
    if (options.cancel != nullptr && options.cancel->load()) {
      result.stop = StopReason::kCancelled;
      break;
    }
    const TokenId tok = ready.front();
    ready.pop_front();
    result.tokens.push_back(tok);
    ++result.stats.n_generated;
    if (tokenizer.is_eog(tok)) {
      if (options.on_token) options.on_token(tok, {});  // the turn ends whatever it returns
      result.stop = StopReason::kEndOfTurn;
      break;
    }
    if (!deliver(tok, decoder.push(tok))) {
      result.stop = StopReason::kCallback;
      break;
    }
    if (options.n_predict != 0 && result.tokens.size() >= options.n_predict) {
      result.stop = StopReason::kLength;
      break;
    }
    if (!ready.empty()) continue;  // decided in the last round, already in the cache
    if (session.n_past() >= session.n_ctx()) {
      result.stop = StopReason::kContextFull;
      break;
    }
    const std::size_t max_new =
        options.n_predict == 0 ? std::numeric_limits<std::size_t>::max() : options.n_predict - result.tokens.size();
    for (TokenId t : speculator.round(session, tokenizer, sampler, max_new)) ready.push_back(t);
  }
  // A stop inside a round leaves decided tokens in the cache: keep the plain loop's contract
  // (prompt + generated tokens but the last).
  // (A cancel before the first token leaves the whole prompt, as there.)
  session.truncate(n_start + prompt.size() + std::max<std::size_t>(result.tokens.size(), 1) - 1);
  result.stats.generate_seconds = seconds_since(t1);
  const SpeculationStats& after = speculator.stats();
  result.stats.n_draft_rounds = after.n_rounds - before.n_rounds;
  result.stats.n_drafted = after.n_drafted - before.n_drafted;
  result.stats.n_draft_accepted = after.n_accepted - before.n_accepted;
  emit(decoder.finish());
  return result;
}

}  // namespace wisp
