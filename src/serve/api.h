// The OpenAI-compatible request and response shapes of `wisp serve`, kept apart from the HTTP layer
// (src/serve/server.cpp): parsing a request body into what the scheduler runs, with every client
// mistake an ApiError that names the field, and building the JSON answers.
//
// Parsing never throws anything but ApiError for client input: wrong types, out-of-range values,
// invalid UTF-8, a chat template that rejects the conversation, a prompt longer than the context.
// Unknown fields are ignored, as OpenAI does; fields that are known but not supported yet
// (tools, logit_bias, response_format other than text, best_of > n) are a 400 that says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "engine/scheduler.h"
#include "tokenizer/tokenizer.h"

namespace wisp::serve {

using json = nlohmann::json;

// An error answer in OpenAI's shape: {"error": {"message", "type", "param", "code"}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // empty: null
  std::string code;   // empty: null
};

ApiError invalid_request(std::string param, std::string message, std::string code = {});
json error_body(const ApiError& e);

// Serialises for the wire: invalid UTF-8 in generated text (a model can emit any bytes) becomes
// U+FFFD instead of an exception.
std::string dump_json(const json& j);

// What the parser needs to know about the served model.
struct ApiContext {
  const Tokenizer* tokenizer = nullptr;
  const ChatTemplate* chat_template = nullptr;
  ChatRenderOptions render_options;  // bos/eos text for the template
  std::string model_name;
  std::size_t n_ctx = 0;         // tokens per request (prompt + generated)
  std::size_t max_n = 16;        // most choices per request
  RequestParams::Lookup lookup;  // the server's prompt-lookup default (ngram_max 0: off)
  bool draft = false;            // the server has a draft model (--draft): drafting is the default
  bool exact = false;            // the engine's batch-dependent numerics (no speculation then)
};

// Limits the parser enforces beyond what the scheduler checks (the OpenAPI document states them).
inline constexpr std::int64_t kMaxTopK = 1 << 30;
inline constexpr std::int64_t kMaxPenaltyWindow = 1 << 30;  // repeat_last_n
inline constexpr std::size_t kMaxStopStrings = 16;

enum class Endpoint { kChat, kCompletion };

// One parsed generation request: one or more prompts, each generated n times.
struct GenerationSpec {
  Endpoint endpoint = Endpoint::kChat;
  std::vector<std::vector<TokenId>> prompts;  // chat: exactly one
  std::vector<std::string> prompt_texts;      // for echo (completions)
  std::size_t n = 1;                          // choices per prompt
  RequestParams params;                       // prompt left empty; seed of choice i is seed + i
  bool stream = false;
  bool include_usage = false;
  bool echo = false;
};

// Parses a request body (the raw bytes: invalid JSON or UTF-8 is a 400).
json parse_body(std::string_view body);
GenerationSpec parse_chat_request(const json& body, const ApiContext& ctx);
GenerationSpec parse_completion_request(const json& body, const ApiContext& ctx);

// POST /tokenize {"content": str, "add_special": bool=false, "parse_special": bool=true,
// "with_pieces": bool=false}; POST /detokenize {"tokens": [int]}.
json tokenize_response(const json& body, const ApiContext& ctx);
json detokenize_response(const json& body, const ApiContext& ctx);

// "stop", "length" (context_full maps to length, as OpenAI reports a cut answer).
const char* openai_finish_reason(FinishReason r);

// A generated token's log-probability and its most likely alternatives (RequestParams::logprobs).
struct TokenLogprobEntry {
  TokenId token = -1;
  float logprob = 0.0f;
  std::vector<TokenLogprob> top;
};

// OpenAI's chat shape: {"content": [{"token", "logprob", "bytes", "top_logprobs": [...]}], "refusal": null}.
json chat_logprobs_json(const Tokenizer& tok, std::span<const TokenLogprobEntry> entries);
// The completions shape: {"tokens", "token_logprobs", "top_logprobs": [{piece: logprob}], "text_offset"};
// `offset` is the text offset of the first token, advanced past the entries' pieces.
json completion_logprobs_json(const Tokenizer& tok, std::span<const TokenLogprobEntry> entries, std::size_t& offset);

// A finished choice, for the non-streamed answers.
struct ChoiceResult {
  std::string text;
  FinishReason reason = FinishReason::kLength;
  std::size_t n_generated = 0;
  json logprobs = nullptr;  // chat_logprobs_json / completion_logprobs_json, or null
  std::string reasoning;    // "reasoning_content" of a chat answer, when not empty
};

struct Usage {
  std::size_t prompt_tokens = 0;
  std::size_t completion_tokens = 0;
  std::size_t cached_tokens = 0;
  // Prompt-lookup guesses verified and kept ("usage.speculative", only when some were drafted).
  std::size_t drafted_tokens = 0;
  std::size_t accepted_tokens = 0;
};
json usage_json(const Usage& u);

json chat_completion_json(const std::string& id, std::int64_t created, const std::string& model,
                          const std::vector<ChoiceResult>& choices, const Usage& usage);
json text_completion_json(const std::string& id, std::int64_t created, const std::string& model,
                          const std::vector<ChoiceResult>& choices, const Usage& usage);

// Streamed chunks. `delta_role` adds "role":"assistant" (the first chunk of a chat choice);
// `finish` adds the finish reason (and an empty delta for chat); a non-empty `reasoning` adds
// "reasoning_content" to the delta.
json chat_chunk_json(const std::string& id, std::int64_t created, const std::string& model, std::size_t index,
                     std::optional<std::string_view> content, bool delta_role, std::optional<FinishReason> finish,
                     const json& logprobs = nullptr, std::string_view reasoning = {});
json text_chunk_json(const std::string& id, std::int64_t created, const std::string& model, std::size_t index,
                     std::string_view text, std::optional<FinishReason> finish, const json& logprobs = nullptr);
// The usage chunk of stream_options.include_usage: "choices": [] and the usage.
json usage_chunk_json(const std::string& id, std::int64_t created, const std::string& model, bool chat,
                      const Usage& usage);

json models_json(const std::string& model, std::int64_t created, std::size_t n_ctx, const ModelInfo& info);

}  // namespace wisp::serve
