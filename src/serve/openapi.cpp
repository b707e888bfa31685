#include "serve/openapi.h"

namespace wisp::serve {

namespace {

using json = nlohmann::json;

json ref(const char* name) { return json{{"$ref", std::string("#/components/schemas/") + name}}; }

json json_body(const json& schema) { return json{{"required", true}, {"content", {{"application/json", {{"schema", schema}}}}}}; }

json json_response(const char* description, const json& schema) {
  return json{{"description", description}, {"content", {{"application/json", {{"schema", schema}}}}}};
}

json error_response(const char* description) { return json_response(description, ref("Error")); }

// The errors every route may answer, beside its own.
json with_errors(json responses, bool has_body) {
  responses["401"] = error_response("missing or wrong API key (when the server has one)");
  responses["503"] = error_response("the model is loading, or the queue is full (see Retry-After)");
  if (has_body) {
    responses["400"] = error_response("invalid request: malformed JSON, a wrong type or an out-of-range value (param names the field)");
    responses["413"] = error_response("the request body is larger than the limit");
  }
  return responses;
}

json number(double lo, double hi, const char* description) {
  return json{{"type", "number"}, {"minimum", lo}, {"maximum", hi}, {"nullable", true}, {"description", description}};
}

json integer(std::int64_t lo, const char* description) {
  return json{{"type", "integer"}, {"minimum", lo}, {"nullable", true}, {"description", description}};
}

json sampling_properties(bool chat) {
  json p = {
      {"model", {{"type", "string"}, {"description", "any name: the server has one model and names it in answers"}}},
      {"max_tokens", integer(1, chat ? "most tokens to generate (default: until the end of the turn or the context)"
                                      : "most tokens to generate (default 16)")},
      {"temperature", number(0, 2, "0 = greedy; default 1")},
      {"top_p", number(0, 1, "nucleus sampling; default 1 (off)")},
      {"top_k", {{"type", "integer"}, {"minimum", -1}, {"nullable", true}, {"description", "keep the k most likely; 0 or -1 = off (default)"}}},
      {"min_p", number(0, 1, "drop tokens less likely than min_p times the most likely; default 0")},
      {"presence_penalty", number(-2, 2, "default 0")},
      {"frequency_penalty", number(-2, 2, "default 0")},
      {"repeat_penalty", number(1e-6, 100, "llama.cpp's repetition penalty; default 1 (off)")},
      {"repeat_last_n", integer(0, "tokens the penalties look at; default 64")},
      {"seed", {{"type", "integer"}, {"nullable", true}, {"description", "the same seed and settings give the same text; choice i uses seed + i"}}},
      {"stop", {{"nullable", true},
                {"oneOf", json::array({{{"type", "string"}, {"minLength", 1}},
                                       {{"type", "array"}, {"maxItems", 16}, {"items", {{"type", "string"}, {"minLength", 1}}}}})}}},
      {"n", {{"type", "integer"}, {"minimum", 1}, {"maximum", 16}, {"nullable", true}, {"description", "choices per prompt"}}},
      {"stream", {{"type", "boolean"}, {"nullable", true}}},
      {"stream_options", {{"type", "object"}, {"nullable", true}, {"properties", {{"include_usage", {{"type", "boolean"}, {"nullable", true}}}}}}},
      {"ignore_eos", {{"type", "boolean"}, {"nullable", true}}},
      {"user", {{"type", "string"}, {"nullable", true}, {"description", "ignored"}}},
  };
  if (chat) {
    p["max_completion_tokens"] = integer(1, "as max_tokens (wins when both are given)");
    p["logprobs"] = {{"type", "boolean"}, {"nullable", true}, {"description", "each token's log-probability (log-softmax of the raw logits)"}};
    p["top_logprobs"] = {{"type", "integer"}, {"minimum", 0}, {"maximum", 20}, {"nullable", true},
                         {"description", "that many most likely tokens per position (needs logprobs: true)"}};
  } else {
    p["echo"] = {{"type", "boolean"}, {"nullable", true}, {"description", "prefix the prompt to the text"}};
    p["logprobs"] = {{"type", "integer"}, {"minimum", 0}, {"maximum", 20}, {"nullable", true},
                     {"description", "each token's log-probability and that many most likely tokens"}};
  }
  return p;
}

}  // namespace

json openapi_document(const std::string& model_name) {
  json schemas;
  schemas["Error"] = {
      {"type", "object"},
      {"required", json::array({"error"})},
      {"properties",
       {{"error",
         {{"type", "object"},
          {"required", json::array({"message", "type"})},
          {"properties",
           {{"message", {{"type", "string"}}},
            {"type", {{"type", "string"}}},
            {"param", {{"type", "string"}, {"nullable", true}}},
            {"code", {{"type", "string"}, {"nullable", true}}}}}}}}}};
  schemas["Usage"] = {{"type", "object"},
                      {"properties",
                       {{"prompt_tokens", {{"type", "integer"}}},
                        {"completion_tokens", {{"type", "integer"}}},
                        {"total_tokens", {{"type", "integer"}}},
                        {"prompt_tokens_details", {{"type", "object"}, {"properties", {{"cached_tokens", {{"type", "integer"}}}}}}}}}};
  schemas["ChatMessage"] = {
      {"type", "object"},
      {"required", json::array({"role"})},
      {"properties",
       {{"role", {{"type", "string"}, {"enum", json::array({"system", "developer", "user", "assistant"})}}},
        {"content",
         {{"nullable", true},
          {"oneOf", json::array({{{"type", "string"}},
                                 {{"type", "array"},
                                  {"items",
                                   {{"type", "object"},
                                    {"required", json::array({"type", "text"})},
                                    {"properties", {{"type", {{"type", "string"}, {"enum", json::array({"text"})}}}, {"text", {{"type", "string"}}}}}}}}})},
          {"description", "required except for assistant messages"}}},
        {"name", {{"type", "string"}}}}}};
  json chat_props = sampling_properties(true);
  chat_props["messages"] = {{"type", "array"}, {"minItems", 1}, {"items", ref("ChatMessage")}};
  schemas["ChatCompletionRequest"] = {{"type", "object"}, {"required", json::array({"messages"})}, {"properties", chat_props}};
  json completion_props = sampling_properties(false);
  completion_props["prompt"] = {
      {"oneOf", json::array({{{"type", "string"}, {"minLength", 1}},
                             {{"type", "array"}, {"minItems", 1}, {"items", {{"type", "string"}, {"minLength", 1}}}},
                             {{"type", "array"}, {"minItems", 1}, {"items", {{"type", "integer"}, {"minimum", 0}}}},
                             {{"type", "array"},
                              {"minItems", 1},
                              {"items", {{"type", "array"}, {"minItems", 1}, {"items", {{"type", "integer"}, {"minimum", 0}}}}}}})},
      {"description", "text, texts, or token ids; the prompt must leave room for one generated token in the context"}};
  schemas["CompletionRequest"] = {{"type", "object"}, {"required", json::array({"prompt"})}, {"properties", completion_props}};
  schemas["ChatCompletion"] = {
      {"type", "object"},
      {"properties",
       {{"id", {{"type", "string"}}},
        {"object", {{"type", "string"}, {"enum", json::array({"chat.completion"})}}},
        {"created", {{"type", "integer"}}},
        {"model", {{"type", "string"}}},
        {"choices",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"index", {{"type", "integer"}}},
              {"message", {{"type", "object"}, {"properties", {{"role", {{"type", "string"}}}, {"content", {{"type", "string"}}}}}}},
              {"finish_reason", {{"type", "string"}, {"enum", json::array({"stop", "length"})}}}}}}}}},
        {"usage", ref("Usage")}}}};
  schemas["Completion"] = {
      {"type", "object"},
      {"properties",
       {{"id", {{"type", "string"}}},
        {"object", {{"type", "string"}, {"enum", json::array({"text_completion"})}}},
        {"created", {{"type", "integer"}}},
        {"model", {{"type", "string"}}},
        {"choices",
         {{"type", "array"},
          {"items",
           {{"type", "object"},
            {"properties",
             {{"index", {{"type", "integer"}}},
              {"text", {{"type", "string"}}},
              {"finish_reason", {{"type", "string"}, {"enum", json::array({"stop", "length"})}}}}}}}}},
        {"usage", ref("Usage")}}}};

  auto generation = [&](const char* summary, const char* req, const char* resp) {
    json ok = json_response("the answer; with stream=true, server-sent events (data: {chunk}, ending data: [DONE])", ref(resp));
    ok["content"]["text/event-stream"] = {{"schema", {{"type", "string"}}}};
    return json{{"post", {{"summary", summary}, {"requestBody", json_body(ref(req))}, {"responses", with_errors({{"200", ok}}, true)}}}};
  };
  json paths;
  paths["/v1/chat/completions"] = generation("chat completion: the messages rendered with the model's chat template",
                                             "ChatCompletionRequest", "ChatCompletion");
  paths["/v1/completions"] = generation("text completion of a prompt", "CompletionRequest", "Completion");
  paths["/v1/models"] = {{"get",
                          {{"summary", "the served model"},
                           {"responses",
                            with_errors({{"200", json_response("a list of one model",
                                                               {{"type", "object"},
                                                                {"properties", {{"object", {{"type", "string"}}}, {"data", {{"type", "array"}, {"items", {{"type", "object"}}}}}}}})}},
                                        false)}}}};
  paths["/health"] = {{"get",
                       {{"summary", "200 {\"status\":\"ok\"} once the model is loaded, 503 {\"status\":\"loading\"} before"},
                        {"responses",
                         {{"200", json_response("ready", {{"type", "object"}, {"properties", {{"status", {{"type", "string"}}}}}})},
                          {"503", json_response("loading", {{"type", "object"}, {"properties", {{"status", {{"type", "string"}}}}}})}}}}}};
  paths["/metrics"] = {{"get",
                        {{"summary", "Prometheus text format: requests, KV blocks, prefix cache, tokens, latency histograms"},
                         {"responses",
                          with_errors({{"200", {{"description", "metrics"}, {"content", {{"text/plain", {{"schema", {{"type", "string"}}}}}}}}}},
                                      false)}}}};
  paths["/tokenize"] = {
      {"post",
       {{"summary", "text to token ids"},
        {"requestBody",
         json_body({{"type", "object"},
                    {"required", json::array({"content"})},
                    {"properties",
                     {{"content", {{"type", "string"}}},
                      {"add_special", {{"type", "boolean"}, {"description", "add BOS/EOS as the model asks (default false)"}}},
                      {"parse_special", {{"type", "boolean"}, {"description", "match control-token text (default true)"}}},
                      {"with_pieces", {{"type", "boolean"}, {"description", "answer {id, piece} objects (default false)"}}}}}})},
        {"responses",
         with_errors({{"200", json_response("the ids", {{"type", "object"}, {"properties", {{"tokens", {{"type", "array"}}}}}})}}, true)}}}};
  paths["/detokenize"] = {
      {"post",
       {{"summary", "token ids to text"},
        {"requestBody",
         json_body({{"type", "object"},
                    {"required", json::array({"tokens"})},
                    {"properties", {{"tokens", {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}}}}}})},
        {"responses",
         with_errors({{"200", json_response("the text", {{"type", "object"}, {"properties", {{"content", {{"type", "string"}}}}}})}}, true)}}}};
  paths["/openapi.json"] = {{"get", {{"summary", "this document"}, {"responses", {{"200", json_response("OpenAPI 3.0", {{"type", "object"}})}}}}}};

  return json{{"openapi", "3.0.3"},
              {"info",
               {{"title", "wisp serve"},
                {"version", "0.1.0"},
                {"description", "OpenAI-compatible API of wisp (serving " + model_name +
                                    "). Errors: {\"error\": {\"message\", \"type\", \"param\", \"code\"}}. "
                                    "With --api-key every route but /health and /openapi.json needs 'Authorization: Bearer KEY'."}}},
              {"components",
               {{"schemas", schemas},
                {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}},
              {"paths", paths}};
}

}  // namespace wisp::serve
