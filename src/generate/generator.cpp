#include "generate/generator.h"

#include <chrono>

#include "generate/speculative.h"
#include "tokenizer/stream_decoder.h"
#include "wisp/error.h"

namespace wisp {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::kLength: return "length";
    case StopReason::kEndOfTurn: return "end of turn";
    case StopReason::kCancelled: return "cancelled";
    case StopReason::kContextFull: return "context full";
    case StopReason::kCallback: return "stopped";
  }
  return "?";
}

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

GenerationResult generate(Session& session, const Tokenizer& tokenizer, Sampler& sampler,
                          std::span<const TokenId> prompt, const GenerationOptions& options) {
  if (prompt.empty()) throw Error("generate: the prompt has no tokens");
  if (session.n_past() + prompt.size() > session.n_ctx()) {
    throw Error("the prompt has " + std::to_string(prompt.size()) + " tokens but the context has room for " +
                std::to_string(session.n_ctx() - session.n_past()) + " more (context size " +
                std::to_string(session.n_ctx()) + "; raise it with -c)");
  }
  if (options.speculator != nullptr) {
    return generate_speculative(session, tokenizer, sampler, prompt, options, *options.speculator);
  }
  GenerationResult result;
  for (TokenId t : prompt) sampler.accept(t);

  auto t0 = Clock::now();
  std::span<const float> logits = session.eval(prompt);
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
  for (;;) {
    if (options.cancel != nullptr && options.cancel->load()) {
      result.stop = StopReason::kCancelled;
      break;
    }
    TokenId tok = sampler.sample(logits);
    sampler.accept(tok);
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
    if (session.n_past() >= session.n_ctx()) {
      result.stop = StopReason::kContextFull;
      break;
    }
    const TokenId next[1] = {tok};
    logits = session.eval(next);
  }
  result.stats.generate_seconds = seconds_since(t1);
  emit(decoder.finish());
  return result;
}

}  // namespace wisp
