#include "serve/openapi.h"

#include <limits>

namespace wisp::serve {

namespace {

using json = nlohmann::json;

constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

json ref(const char* name) { return json{{"$ref", std::string("#/components/schemas/") + name}}; }

json str() { return json{{"type", "string"}}; }
json boolean() { return json{{"type", "boolean"}}; }
json int_any() { return json{{"type", "integer"}}; }
json array_of(json items) { return json{{"type", "array"}, {"items", std::move(items)}}; }

// An object schema; `required` lists the fields every instance has.
json object(json properties, std::initializer_list<const char*> required = {}) {
  json o = {{"type", "object"}, {"properties", std::move(properties)}};
  if (required.size() > 0) o["required"] = json(required);
  return o;
}

// `schema` where null is allowed too and means the default (as the parser reads every field).
json nullable(json schema) {
  schema["nullable"] = true;
  return schema;
}

json json_body(const json& schema) {
  return json{{"required", true}, {"content", {{"application/json", {{"schema", schema}}}}}};
}

json json_response(const char* description, const json& schema) {
  return json{{"description", description}, {"content", {{"application/json", {{"schema", schema}}}}}};
}

json error_response(const char* description) { return json_response(description, ref("Error")); }

// The errors every route may answer, beside its own.
json with_errors(json responses, bool has_body) {
  responses["401"] = error_response("missing or wrong API key (when the server has one)");
  responses["503"] = error_response("the model is loading, or the queue is full (see Retry-After)");
  if (has_body) {
    responses["400"] = error_response(
        "invalid request: malformed JSON, a wrong type or an out-of-range value (param names the field)");
    responses["413"] = error_response("the request body is larger than the limit");
  }
  return responses;
}

json number(double lo, double hi, const char* description) {
  return json{{"type", "number"}, {"minimum", lo}, {"maximum", hi}, {"nullable", true}, {"description", description}};
}

json integer(std::int64_t lo, std::int64_t hi, const char* description) {
  return json{{"type", "integer"}, {"minimum", lo}, {"maximum", hi}, {"nullable", true}, {"description", description}};
}

// A token id: below the vocabulary's size once the model is loaded.
json token_id(const ApiContext* ctx) {
  json t = {{"type", "integer"}, {"minimum", 0}};
  if (ctx && ctx->tokenizer) t["maximum"] = static_cast<std::int64_t>(ctx->tokenizer->n_vocab()) - 1;
  return t;
}

json sampling_properties(bool chat, std::size_t max_n) {
  json p = {
      {"model",
       nullable({{"type", "string"}, {"description", "any name: the server has one model and names it in answers"}})},
      {"max_tokens", integer(1, kInt64Max,
                             chat ? "most tokens to generate (default: until the end of the turn or the context)"
                                  : "most tokens to generate (default 16); the answer is cut at the context")},
      {"temperature", number(0, 2, "0 = greedy; default 1")},
      {"top_p", number(0, 1, "nucleus sampling; default 1 (off)")},
      {"top_k", integer(-1, kMaxTopK, "keep the k most likely; 0 or -1 = off (default)")},
      {"min_p", number(0, 1, "drop tokens less likely than min_p times the most likely; default 0")},
      {"presence_penalty", number(-2, 2, "default 0")},
      {"frequency_penalty", number(-2, 2, "default 0")},
      {"repeat_penalty", number(1e-6, 100, "llama.cpp's repetition penalty; default 1 (off)")},
      {"repeat_last_n", integer(0, kMaxPenaltyWindow, "tokens the penalties look at; default 64")},
      {"seed", integer(kInt64Min, kInt64Max, "the same seed and settings give the same text; choice i uses seed + i")},
      {"logit_bias", nullable({{"type", "object"},
                               {"propertyNames", {{"pattern", "^[0-9]+$"}}},
                               {"additionalProperties", {{"type", "number"}, {"minimum", -100}, {"maximum", 100}}},
                               {"description",
                                "token id -> bias added to its logit before sampling (-100 .. 100; false bans the "
                                "token)"}})},
      {"stop",
       {{"nullable", true},
        {"oneOf", json::array({{{"type", "string"}, {"minLength", 1}},
                               {{"type", "array"},
                                {"maxItems", kMaxStopStrings},
                                {"items", {{"type", "string"}, {"minLength", 1}}}}})}}},
      {"n", integer(1, static_cast<std::int64_t>(max_n),
                    chat ? "choices" : "choices per prompt (prompts times n at most the same limit)")},
      {"stream", nullable(boolean())},
      {"stream_options", nullable(object({{"include_usage", nullable(boolean())}}))},
      {"ignore_eos", nullable(boolean())},
      {"speculative",
       nullable(object({{"lookup", integer(0, static_cast<std::int64_t>(kMaxLookup),
                                           "wisp extension: prompt-lookup speculation, longest n-gram matched; 0 = "
                                           "off (default: the server's --lookup); the answer is unchanged")},
                        {"lookup_min", integer(1, static_cast<std::int64_t>(kMaxLookup), "shortest n-gram; default 2")},
                        {"draft_max", integer(1, static_cast<std::int64_t>(kMaxLookup),
                                              "most guesses verified per step; default the server's --draft-max")},
                        {"draft",
                         {{"type", "boolean"},
                          {"description",
                           "wisp extension: speculation with the server's --draft model (default: on when "
                           "it has one, off when the request asks for lookup); the answer is unchanged"}}}}))},
      {"user", nullable({{"type", "string"}, {"description", "ignored"}})},
  };
  if (chat) {
    p["max_completion_tokens"] = integer(1, kInt64Max, "as max_tokens (wins when both are given)");
    p["logprobs"] = nullable(
        {{"type", "boolean"}, {"description", "each token's log-probability (log-softmax of the raw logits)"}});
    p["top_logprobs"] = integer(0, kMaxTopLogprobs, "that many most likely tokens per position (needs logprobs: true)");
  } else {
    p["echo"] = nullable({{"type", "boolean"}, {"description", "prefix the prompt to the text"}});
    p["logprobs"] = integer(0, kMaxTopLogprobs, "each token's log-probability and that many most likely tokens");
  }
  return p;
}

// A chat message: `content` is required (not null) but for assistant messages.
json chat_message_schema() {
  const json parts = array_of(
      object({{"type", {{"type", "string"}, {"enum", json::array({"text"})}}}, {"text", str()}}, {"type", "text"}));
  const json content = {{"oneOf", json::array({str(), parts})}};
  json with_content = object({{"role", {{"type", "string"}, {"enum", json::array({"system", "developer", "user"})}}},
                              {"content", content},
                              {"name", str()}},
                             {"role", "content"});
  json assistant = object({{"role", {{"type", "string"}, {"enum", json::array({"assistant"})}}},
                           {"content", nullable(content)},
                           {"name", str()}},
                          {"role"});
  return json{{"oneOf", json::array({with_content, assistant})}, {"description", "content: a string or text parts"}};
}

// chat.completion / text_completion (and their streamed chunks): the envelope around the choices.
json completion_schema(const char* object_name, json choice, bool with_usage) {
  json props = {{"id", str()},
                {"object", {{"type", "string"}, {"enum", json::array({object_name})}}},
                {"created", int_any()},
                {"model", str()},
                {"system_fingerprint", str()},
                {"choices", array_of(std::move(choice))}};
  if (!with_usage) return object(std::move(props), {"id", "object", "created", "model", "choices"});
  props["usage"] = ref("Usage");
  return object(std::move(props), {"id", "object", "created", "model", "choices", "usage"});
}

json finish_reason(bool nullable_) {
  json f = {{"type", "string"}, {"enum", json::array({"stop", "length"})}};
  if (nullable_) {
    f["nullable"] = true;
    f["enum"].push_back(nullptr);
  }
  return f;
}

json chat_logprobs_schema() {
  const json alternative = object({{"token", str()}, {"logprob", {{"type", "number"}}}, {"bytes", array_of(int_any())}},
                                  {"token", "logprob", "bytes"});
  json entry = alternative;
  entry["properties"]["top_logprobs"] = array_of(alternative);
  entry["required"].push_back("top_logprobs");
  return nullable(object({{"content", array_of(entry)}, {"refusal", nullable(str())}}, {"content"}));
}

json completion_logprobs_schema() {
  return nullable(
      object({{"tokens", array_of(str())},
              {"token_logprobs", array_of({{"type", "number"}})},
              {"top_logprobs", array_of({{"type", "object"}, {"additionalProperties", {{"type", "number"}}}})},
              {"text_offset", array_of(int_any())}},
             {"tokens", "token_logprobs", "top_logprobs", "text_offset"}));
}

// The answers of one generation route, `name` whole and `name`Chunk streamed: a choice holds its
// index, what it generated (`whole` / `streamed`: field name and schema), its logprobs and its
// finish reason (null in a chunk before the choice's last).
struct Generated {
  const char* field;
  json schema;
};
void add_answer_schemas(json& s, const std::string& name, const char* object_whole, const char* object_chunk,
                        const Generated& whole, const Generated& streamed, const json& logprobs) {
  auto choice = [&](const Generated& g, bool in_stream) {
    return object({{"index", int_any()},
                   {g.field, g.schema},
                   {"logprobs", logprobs},
                   {"finish_reason", finish_reason(in_stream)}},
                  {"index", g.field, "finish_reason"});
  };
  s[name] = completion_schema(object_whole, choice(whole, false), true);
  s[name + "Chunk"] = completion_schema(object_chunk, choice(streamed, true), false);
}

json schemas(const ApiContext* ctx) {
  json s;
  s["Error"] = object(
      {{"error", object({{"message", str()}, {"type", str()}, {"param", nullable(str())}, {"code", nullable(str())}},
                        {"message", "type", "param", "code"})}},
      {"error"});
  s["Usage"] = object({{"prompt_tokens", int_any()},
                       {"completion_tokens", int_any()},
                       {"total_tokens", int_any()},
                       {"prompt_tokens_details", object({{"cached_tokens", int_any()}})},
                       {"speculative", object({{"drafted_tokens", int_any()}, {"accepted_tokens", int_any()}})}},
                      {"prompt_tokens", "completion_tokens", "total_tokens"});
  s["ChatMessage"] = chat_message_schema();

  const std::size_t max_n = ctx ? ctx->max_n : ApiContext{}.max_n;
  json chat = object(sampling_properties(true, max_n), {"messages"});
  chat["properties"]["messages"] = {{"type", "array"}, {"minItems", 1}, {"items", ref("ChatMessage")}};
  // top_logprobs only with logprobs: true.
  chat["anyOf"] = json::array(
      {{{"not", {{"required", json::array({"top_logprobs"})}}}},
       {{"required", json::array({"logprobs"})}, {"properties", {{"logprobs", {{"enum", json::array({true})}}}}}}});
  s["ChatCompletionRequest"] = std::move(chat);

  json completion = object(sampling_properties(false, max_n), {"prompt"});
  const json ids = {{"type", "array"}, {"minItems", 1}, {"items", token_id(ctx)}};
  completion["properties"]["prompt"] = {
      {"oneOf", json::array({{{"type", "string"}, {"minLength", 1}},
                             {{"type", "array"},
                              {"minItems", 1},
                              {"maxItems", max_n},
                              {"items", {{"type", "string"}, {"minLength", 1}}}},
                             ids,
                             {{"type", "array"}, {"minItems", 1}, {"maxItems", max_n}, {"items", ids}}})},
      {"description",
       "text, texts, or token ids (prompts times n at most the choices limit); each prompt must leave room "
       "for one generated token in the context"}};
  s["CompletionRequest"] = std::move(completion);

  const json assistant = {{"type", "string"}, {"enum", json::array({"assistant"})}};
  add_answer_schemas(s, "ChatCompletion", "chat.completion", "chat.completion.chunk",
                     {"message", object({{"role", assistant}, {"content", str()}}, {"role", "content"})},
                     {"delta", object({{"role", assistant}, {"content", str()}})}, chat_logprobs_schema());
  add_answer_schemas(s, "Completion", "text_completion", "text_completion", {"text", str()}, {"text", str()},
                     completion_logprobs_schema());
  // One server-sent event of a streamed answer (OpenAPI 3.0: a text/event-stream schema describes
  // each event): data is one JSON chunk (ChatCompletionChunk / CompletionChunk, a usage chunk with
  // "choices": [] and "usage", or an error) on one line, the last event's data is [DONE].
  s["ServerSentEvent"] = object({{"data", {{"type", "string"}, {"pattern", "^(\\{.*\\}|\\[DONE\\])$"}}},
                                 {"event", str()},
                                 {"id", str()},
                                 {"retry", int_any()}},
                                {"data"});
  s["Model"] = object({{"id", str()},
                       {"object", {{"type", "string"}, {"enum", json::array({"model"})}}},
                       {"created", int_any()},
                       {"owned_by", str()},
                       {"meta", object({{"architecture", str()},
                                        {"n_vocab", int_any()},
                                        {"n_ctx_train", int_any()},
                                        {"n_ctx", int_any()},
                                        {"n_params_bytes", int_any()}})}},
                      {"id", "object", "created", "owned_by"});
  return s;
}

json paths(const ApiContext* ctx) {
  auto generation = [&](const char* summary, const char* req, const char* resp) {
    json ok = json_response("the answer; with stream=true, server-sent events (data: {chunk}, ending data: [DONE])",
                            ref(resp));
    ok["content"]["text/event-stream"] = {{"schema", ref("ServerSentEvent")}};
    return json{{"post",
                 {{"summary", summary},
                  {"requestBody", json_body(ref(req))},
                  {"responses", with_errors({{"200", ok}}, true)}}}};
  };
  const json status = object({{"status", {{"type", "string"}, {"enum", json::array({"ok", "loading"})}}}}, {"status"});
  json p;
  p["/v1/chat/completions"] = generation("chat completion: the messages rendered with the model's chat template",
                                         "ChatCompletionRequest", "ChatCompletion");
  p["/v1/completions"] = generation("text completion of a prompt", "CompletionRequest", "Completion");
  p["/v1/models"] = {
      {"get",
       {{"summary", "the served model"},
        {"responses",
         with_errors(
             {{"200",
               json_response(
                   "a list of one model",
                   object({{"object", {{"type", "string"}, {"enum", json::array({"list"})}}},
                           {"data", {{"type", "array"}, {"minItems", 1}, {"maxItems", 1}, {"items", ref("Model")}}}},
                          {"object", "data"}))}},
             false)}}}};
  p["/health"] = {
      {"get",
       {{"summary", "200 {\"status\":\"ok\"} once the model is loaded, 503 {\"status\":\"loading\"} before"},
        {"responses", {{"200", json_response("ready", status)}, {"503", json_response("loading", status)}}}}}};
  p["/metrics"] = {
      {"get",
       {{"summary", "Prometheus text format: requests, KV blocks, prefix cache, tokens, latency histograms"},
        {"responses",
         with_errors({{"200", {{"description", "metrics"}, {"content", {{"text/plain", {{"schema", str()}}}}}}}},
                     false)}}}};
  const json tokens =
      array_of({{"oneOf", json::array({int_any(), object({{"id", int_any()}, {"piece", str()}}, {"id", "piece"})})},
                {"description", "ids, or {id, piece} objects with with_pieces"}});
  p["/tokenize"] = {
      {"post",
       {{"summary", "text to token ids"},
        {"requestBody",
         json_body(object(
             {{"content", str()},
              {"add_special",
               nullable({{"type", "boolean"}, {"description", "add BOS/EOS as the model asks (default false)"}})},
              {"parse_special",
               nullable({{"type", "boolean"}, {"description", "match control-token text (default true)"}})},
              {"with_pieces",
               nullable({{"type", "boolean"}, {"description", "answer {id, piece} objects (default false)"}})}},
             {"content"}))},
        {"responses",
         with_errors({{"200", json_response("the ids", object({{"tokens", tokens}}, {"tokens"}))}}, true)}}}};
  p["/detokenize"] = {
      {"post",
       {{"summary", "token ids to text"},
        {"requestBody", json_body(object({{"tokens", array_of(token_id(ctx))}}, {"tokens"}))},
        {"responses",
         with_errors({{"200", json_response("the text", object({{"content", str()}}, {"content"}))}}, true)}}}};
  p["/openapi.json"] = {
      {"get",
       {{"summary", "this document"}, {"responses", {{"200", json_response("OpenAPI 3.0", {{"type", "object"}})}}}}}};
  return p;
}

}  // namespace

json openapi_document(const std::string& model_name, const ApiContext* ctx) {
  return json{
      {"openapi", "3.0.3"},
      {"info",
       {{"title", "wisp serve"},
        {"version", "0.1.0"},
        {"description",
         "OpenAI-compatible API of wisp (serving " + model_name +
             "). Errors: {\"error\": {\"message\", \"type\", \"param\", \"code\"}}. "
             "With --api-key every route but /health and /openapi.json needs 'Authorization: Bearer KEY'."}}},
      {"components",
       {{"schemas", schemas(ctx)}, {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}},
      {"paths", paths(ctx)}};
}

}  // namespace wisp::serve
