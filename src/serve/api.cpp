#include "serve/api.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <random>

#include "chat/template_error.h"
#include "wisp/error.h"

namespace wisp::serve {

ApiError invalid_request(std::string param, std::string message, std::string code) {
  ApiError e;
  e.status = 400;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

json error_body(const ApiError& e) {
  json err = {{"message", e.message}, {"type", e.type}};
  err["param"] = e.param.empty() ? json(nullptr) : json(e.param);
  err["code"] = e.code.empty() ? json(nullptr) : json(e.code);
  return json{{"error", err}};
}

std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

namespace {

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    case json::value_t::string: return "a string";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "something else";
  }
}

std::string num_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Typed access to one JSON object's optional fields; every mistake names the field. A null value
// counts as absent (the openai client sends none, but other clients send null for "default").
class Fields {
 public:
  Fields(const json& obj, std::string prefix = {}) : obj_(obj), prefix_(std::move(prefix)) {}

  const json* get(const char* name) const {
    auto it = obj_.find(name);
    if (it == obj_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  std::string path(const char* name) const { return prefix_.empty() ? name : prefix_ + "." + name; }

  [[noreturn]] void wrong_type(const char* name, const char* want, const json& v) const {
    throw invalid_request(path(name), "'" + path(name) + "' must be " + want + ", got " + type_name(v));
  }

  std::optional<double> number(const char* name, double lo, double hi) const {
    const json* v = get(name);
    if (!v) return std::nullopt;
    if (!v->is_number()) wrong_type(name, "a number", *v);
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi) {
      throw invalid_request(path(name), "'" + path(name) + "' must be between " + num_text(lo) + " and " +
                                            num_text(hi) + ", got " + num_text(d));
    }
    return d;
  }

  std::optional<std::int64_t> integer(const char* name, std::int64_t lo, std::int64_t hi) const {
    const json* v = get(name);
    if (!v) return std::nullopt;
    auto out_of_range = [&](const std::string& got, bool above) {
      std::string range = hi == std::numeric_limits<std::int64_t>::max() && !above
                              ? "at least " + std::to_string(lo)
                              : "between " + std::to_string(lo) + " and " + std::to_string(hi);
      return invalid_request(path(name), "'" + path(name) + "' must be " + range + ", got " + got);
    };
    std::int64_t i = 0;
    if (v->is_number_integer()) {
      if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(hi)) {
        throw out_of_range(std::to_string(v->get<std::uint64_t>()), true);
      }
      i = v->get<std::int64_t>();
    } else if (v->is_number_float() && std::isfinite(v->get<double>()) &&
               std::floor(v->get<double>()) == v->get<double>()) {
      // 5.0 is an integer, as pydantic reads it; so is 1e19 (JSON has no integer limit), past 64 bits.
      const double d = v->get<double>();
      if (d < -0x1p63 || d >= 0x1p63) throw out_of_range(num_text(d), d > 0);
      i = static_cast<std::int64_t>(d);
    } else {
      wrong_type(name, "an integer", *v);
    }
    if (i < lo || i > hi) throw out_of_range(std::to_string(i), i > hi);
    return i;
  }

  std::optional<bool> boolean(const char* name) const {
    const json* v = get(name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) wrong_type(name, "a boolean", *v);
    return v->get<bool>();
  }

  std::optional<std::string> string(const char* name) const {
    const json* v = get(name);
    if (!v) return std::nullopt;
    if (!v->is_string()) wrong_type(name, "a string", *v);
    return v->get<std::string>();
  }

 private:
  const json& obj_;
  std::string prefix_;
};

void require_object(const json& body) {
  if (!body.is_object())
    throw invalid_request("", std::string("the request body must be a JSON object, got ") + type_name(body));
}

std::vector<TokenId> tokenize_or_400(const Tokenizer& tok, std::string_view text, TokenizeOptions opts,
                                     const std::string& param) {
  try {
    return tok.tokenize(text, opts);
  } catch (const Error& e) {
    throw invalid_request(param, std::string("'") + param + "' cannot be tokenized: " + e.what());
  }
}

// The fields /v1/chat/completions and /v1/completions share; the rest of the spec is the caller's.
GenerationSpec parse_common(const json& body, const ApiContext& ctx, Endpoint endpoint) {
  require_object(body);
  GenerationSpec spec;
  spec.endpoint = endpoint;
  const bool chat = endpoint == Endpoint::kChat;
  Fields f(body);
  // Every known field is read (and so type-checked) even where the value is the default.
  f.string("model");  // any name is accepted: one model per server
  f.string("user");   // ignored
  RequestParams& p = spec.params;
  p.max_tokens = chat ? 0 : 16;  // OpenAI's defaults: chat until the end of the turn, completions 16
  if (auto v = f.integer("max_tokens", 1, std::numeric_limits<std::int64_t>::max()))
    p.max_tokens = static_cast<std::size_t>(*v);
  if (chat) {
    if (auto v = f.integer("max_completion_tokens", 1, std::numeric_limits<std::int64_t>::max())) {
      p.max_tokens = static_cast<std::size_t>(*v);
    }
  }
  SamplerParams& s = p.sampling;
  // OpenAI's defaults: temperature 1, top_p 1 and no other filter; penalties over llama.cpp's
  // default window of the last 64 tokens.
  s.temperature = 1.0f;
  s.top_p = 1.0f;
  s.top_k = 0;
  s.min_p = 0.0f;
  s.repeat_penalty = 1.0f;
  s.presence_penalty = 0.0f;
  s.frequency_penalty = 0.0f;
  if (auto v = f.number("temperature", 0.0, 2.0)) s.temperature = static_cast<float>(*v);
  bool top_p_zero = false;
  if (auto v = f.number("top_p", 0.0, 1.0)) {
    // In float: a value below float's smallest (1e-300) is 0 there too, which the sampler refuses.
    const float top_p = static_cast<float>(*v);
    top_p_zero = top_p == 0.0f;
    if (!top_p_zero) s.top_p = top_p;
  }
  if (auto v = f.integer("top_k", -1, kMaxTopK)) s.top_k = *v > 0 ? static_cast<int>(*v) : 0;  // 0 and -1: off
  if (top_p_zero) s.top_k = 1;  // the smallest set reaching probability 0: the most likely token
  if (auto v = f.number("min_p", 0.0, 1.0)) s.min_p = static_cast<float>(*v);
  if (auto v = f.number("presence_penalty", -2.0, 2.0)) s.presence_penalty = static_cast<float>(*v);
  if (auto v = f.number("frequency_penalty", -2.0, 2.0)) s.frequency_penalty = static_cast<float>(*v);
  if (auto v = f.number("repeat_penalty", 1e-6, 100.0)) s.repeat_penalty = static_cast<float>(*v);
  if (auto v = f.integer("repeat_last_n", 0, kMaxPenaltyWindow)) s.penalty_last_n = static_cast<std::size_t>(*v);
  if (auto v = f.integer("seed", std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max())) {
    s.seed = static_cast<std::uint64_t>(*v);
  } else {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    s.seed = rng() & 0xffffffffu;
  }
  if (auto v = f.boolean("ignore_eos")) p.ignore_eos = *v;

  if (const json* stop = f.get("stop")) {
    if (stop->is_string()) {
      p.stop.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      if (stop->size() > kMaxStopStrings) {
        throw invalid_request("stop", "'stop' may hold at most " + std::to_string(kMaxStopStrings) + " strings, got " +
                                          std::to_string(stop->size()));
      }
      for (std::size_t i = 0; i < stop->size(); ++i) {
        const json& s_i = (*stop)[i];
        if (!s_i.is_string()) {
          throw invalid_request("stop", "'stop[" + std::to_string(i) + "]' must be a string, got " + type_name(s_i));
        }
        p.stop.push_back(s_i.get<std::string>());
      }
    } else {
      f.wrong_type("stop", "a string or an array of strings", *stop);
    }
    for (const std::string& s_i : p.stop) {
      if (s_i.empty()) throw invalid_request("stop", "'stop' strings must not be empty");
    }
  }

  // wisp's extension: "speculative": {"lookup": N, "lookup_min": M, "draft_max": K, "draft": B}
  // (prompt-lookup drafting, or the server's draft model; lookup 0 or draft false turns off a
  // server default). Unset fields keep the server's defaults; asking for lookup turns off the
  // default draft.
  p.lookup = ctx.lookup;
  p.draft = ctx.draft;
  if (const json* sp = f.get("speculative")) {
    if (!sp->is_object()) f.wrong_type("speculative", "an object", *sp);
    const Fields g(*sp, "speculative");
    const auto max = static_cast<std::int64_t>(kMaxLookup);
    if (auto v = g.integer("lookup", 0, max)) p.lookup.ngram_max = static_cast<std::size_t>(*v);
    if (auto v = g.integer("lookup_min", 1, max)) p.lookup.ngram_min = static_cast<std::size_t>(*v);
    if (auto v = g.integer("draft_max", 1, max)) p.lookup.draft_max = static_cast<std::size_t>(*v);
    const std::optional<bool> draft = g.boolean("draft");
    if (draft) {
      if (*draft && !ctx.draft) {
        throw invalid_request("speculative.draft", "this server has no draft model (start it with --draft FILE)",
                              "unsupported");
      }
      p.draft = *draft;
    } else if (p.lookup.ngram_max > 0) {
      p.draft = false;
    }
    if (p.draft && p.lookup.ngram_max > 0) {
      throw invalid_request("speculative.draft", "'draft' and 'lookup' are two ways to draft: ask for one");
    }
    if ((p.lookup.ngram_max > 0 || p.draft) && ctx.exact) {
      throw invalid_request(p.draft ? "speculative.draft" : "speculative.lookup",
                            "speculative decoding needs the default numerics; this server runs with --exact",
                            "unsupported");
    }
  }
  if (auto v = f.integer("n", 1, static_cast<std::int64_t>(ctx.max_n))) spec.n = static_cast<std::size_t>(*v);
  spec.stream = f.boolean("stream").value_or(false);
  if (const json* so = f.get("stream_options")) {
    if (!so->is_object()) f.wrong_type("stream_options", "an object", *so);
    spec.include_usage = Fields(*so, "stream_options").boolean("include_usage").value_or(false);
  }

  // {"token id": bias in [-100, 100]}, as OpenAI takes it; false bans the token (llama-server's
  // extension). Every id is checked here: a bad one must not reach the scheduler mid-batch.
  if (const json* lb = f.get("logit_bias")) {
    if (!lb->is_object()) f.wrong_type("logit_bias", "an object", *lb);
    const std::size_t n_vocab = ctx.tokenizer->n_vocab();
    std::size_t banned = 0;
    std::vector<bool> is_banned(lb->empty() ? 0 : n_vocab, false);
    for (const auto& [key, value] : lb->items()) {
      const std::string param = "logit_bias." + key;
      std::uint64_t id = 0;
      const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      if (key.empty() || ec != std::errc() || end != key.data() + key.size() || id >= n_vocab) {
        throw invalid_request("logit_bias", "'logit_bias' keys are token ids from 0 to " + std::to_string(n_vocab - 1) +
                                                ", got '" + key + "'");
      }
      float bias = 0.0f;
      if (value.is_boolean() && !value.get<bool>()) {
        bias = -INFINITY;
      } else if (value.is_number() && value.get<double>() >= -100.0 && value.get<double>() <= 100.0) {
        bias = value.get<float>();
      } else {
        const std::string got = value.is_number() ? value.dump() : type_name(value);
        throw invalid_request(param, "'" + param + "' must be a number from -100 to 100 (or false: a ban), got " + got);
      }
      if (bias == -INFINITY && !is_banned[id]) is_banned[id] = true, ++banned;
      p.sampling.logit_bias.push_back({static_cast<std::int32_t>(id), bias});
    }
    if (banned == n_vocab) throw invalid_request("logit_bias", "'logit_bias' bans every token of the vocabulary");
  }
  if (auto v = f.integer("best_of", 1, 64)) {
    if (static_cast<std::size_t>(*v) != spec.n && *v != 1) {
      throw invalid_request("best_of", "'best_of' other than n is not supported yet", "unsupported");
    }
  }
  return spec;
}

std::string message_content(const json& msg, std::size_t i, const std::string& role) {
  const std::string param = "messages[" + std::to_string(i) + "].content";
  auto it = msg.find("content");
  if (it == msg.end() || it->is_null()) {
    if (role == "assistant") return {};
    throw invalid_request(param, "'" + param + "' is required for role '" + role + "'");
  }
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    std::string text;
    for (std::size_t k = 0; k < it->size(); ++k) {
      const json& part = (*it)[k];
      const std::string pp = param + "[" + std::to_string(k) + "]";
      if (!part.is_object()) throw invalid_request(pp, "'" + pp + "' must be an object, got " + type_name(part));
      Fields pf(part, pp);
      auto type = pf.string("type");
      if (!type) throw invalid_request(pp + ".type", "'" + pp + ".type' is required");
      if (*type != "text") {
        throw invalid_request(pp + ".type", "content parts of type '" + *type + "' are not supported (only 'text')",
                              "unsupported");
      }
      auto t = pf.string("text");
      if (!t) throw invalid_request(pp + ".text", "'" + pp + ".text' is required");
      text += *t;
    }
    return text;
  }
  throw invalid_request(param, "'" + param + "' must be a string or an array of content parts, got " + type_name(*it));
}

void check_prompt_fits(const std::vector<TokenId>& prompt, const ApiContext& ctx, const std::string& param) {
  if (prompt.size() >= ctx.n_ctx) {
    throw invalid_request(param,
                          "the prompt is " + std::to_string(prompt.size()) + " tokens, but the context holds " +
                              std::to_string(ctx.n_ctx) + " tokens per request (the prompt and at least one " +
                              "generated token must fit)",
                          "context_length_exceeded");
  }
}

std::vector<TokenId> token_array(const json& arr, const ApiContext& ctx, const std::string& param) {
  std::vector<TokenId> ids;
  ids.reserve(arr.size());
  const std::int64_t n_vocab = static_cast<std::int64_t>(ctx.tokenizer->n_vocab());
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const json& t = arr[i];
    if (!t.is_number_integer()) {
      throw invalid_request(
          param, "'" + param + "[" + std::to_string(i) + "]' must be a token id (an integer), got " + type_name(t));
    }
    const std::int64_t v = t.is_number_unsigned() && t.get<std::uint64_t>() > (1ull << 40) ? -1 : t.get<std::int64_t>();
    if (v < 0 || v >= n_vocab) {
      throw invalid_request(param, "'" + param + "[" + std::to_string(i) + "]' = " + t.dump() +
                                       " is outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
    }
    ids.push_back(static_cast<TokenId>(v));
  }
  return ids;
}

}  // namespace

json parse_body(std::string_view body) {
  try {
    return json::parse(body.begin(), body.end());
  } catch (const json::parse_error& e) {
    throw invalid_request("", std::string("the request body is not valid JSON: ") + e.what(), "invalid_json");
  }
}

GenerationSpec parse_chat_request(const json& body, const ApiContext& ctx) {
  GenerationSpec spec = parse_common(body, ctx, Endpoint::kChat);
  Fields f(body);
  const bool logprobs = f.boolean("logprobs").value_or(false);
  const auto top = f.integer("top_logprobs", 0, kMaxTopLogprobs);
  if (top && !logprobs) throw invalid_request("top_logprobs", "'top_logprobs' needs 'logprobs': true");
  spec.params.logprobs = logprobs ? static_cast<int>(top.value_or(0)) : -1;
  if (const json* tools = f.get("tools")) {
    if (!tools->is_array()) f.wrong_type("tools", "an array", *tools);
    if (!tools->empty())
      throw invalid_request("tools", "'tools' (function calling) is not supported yet", "unsupported");
  }
  if (const json* rf = f.get("response_format")) {
    if (!rf->is_object()) f.wrong_type("response_format", "an object", *rf);
    auto type = Fields(*rf, "response_format").string("type");
    if (type && *type != "text") {
      throw invalid_request("response_format.type",
                            "response_format '" + *type + "' is not supported yet (only 'text')", "unsupported");
    }
  }

  const json* msgs = f.get("messages");
  if (!msgs) throw invalid_request("messages", "'messages' is required");
  if (!msgs->is_array()) f.wrong_type("messages", "an array", *msgs);
  if (msgs->empty()) throw invalid_request("messages", "'messages' must hold at least one message");
  std::vector<ChatMessage> messages;
  for (std::size_t i = 0; i < msgs->size(); ++i) {
    const json& m = (*msgs)[i];
    const std::string mp = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw invalid_request(mp, "'" + mp + "' must be an object, got " + type_name(m));
    auto role = Fields(m, mp).string("role");
    if (!role) throw invalid_request(mp + ".role", "'" + mp + ".role' is required");
    std::string r = *role;
    if (r == "developer") r = "system";  // OpenAI's newer name for the system message
    if (r != "system" && r != "user" && r != "assistant") {
      throw invalid_request(mp + ".role", "'" + mp + ".role' must be one of system, developer, user, assistant; got '" +
                                              *role + "'" +
                                              (*role == "tool" ? " (tool calls are not supported yet)" : ""));
    }
    messages.push_back({r, message_content(m, i, r)});
  }
  std::string text;
  try {
    ChatRenderOptions ro = ctx.render_options;
    ro.add_generation_prompt = true;
    text = ctx.chat_template->render(messages, ro);
  } catch (const std::exception& e) {
    throw invalid_request("messages", std::string("the chat template rejects the conversation: ") + e.what());
  }
  // As generate/conversation.cpp: the rendered text's control tokens are parsed, BOS is added
  // where the model asks for it unless the template printed it.
  std::vector<TokenId> ids =
      tokenize_or_400(*ctx.tokenizer, text, {.add_special = false, .parse_special = true}, "messages");
  const Tokenizer& tok = *ctx.tokenizer;
  if (tok.vocab().add_bos && tok.bos() != kNoToken && (ids.empty() || ids.front() != tok.bos())) {
    ids.insert(ids.begin(), tok.bos());
  }
  if (ids.empty()) throw invalid_request("messages", "the conversation renders to no tokens");
  check_prompt_fits(ids, ctx, "messages");
  spec.prompts.push_back(std::move(ids));
  spec.prompt_texts.push_back(std::move(text));
  return spec;
}

GenerationSpec parse_completion_request(const json& body, const ApiContext& ctx) {
  GenerationSpec spec = parse_common(body, ctx, Endpoint::kCompletion);
  Fields f(body);
  if (auto v = f.integer("logprobs", 0, kMaxTopLogprobs)) spec.params.logprobs = static_cast<int>(*v);
  spec.echo = f.boolean("echo").value_or(false);
  if (auto suffix = f.string("suffix"); suffix && !suffix->empty()) {
    throw invalid_request("suffix", "'suffix' is not supported", "unsupported");
  }
  const json* prompt = f.get("prompt");
  if (!prompt) throw invalid_request("prompt", "'prompt' is required");
  const TokenizeOptions topts{.add_special = true, .parse_special = true};  // as `wisp run`
  auto add_text = [&](const std::string& s) {
    if (s.empty()) throw invalid_request("prompt", "'prompt' is empty");
    spec.prompts.push_back(tokenize_or_400(*ctx.tokenizer, s, topts, "prompt"));
    spec.prompt_texts.push_back(s);
  };
  auto add_ids = [&](const json& arr) {
    if (arr.empty()) throw invalid_request("prompt", "'prompt' holds an empty list of tokens");
    spec.prompts.push_back(token_array(arr, ctx, "prompt"));
    spec.prompt_texts.push_back(ctx.tokenizer->detokenize(spec.prompts.back()));
  };
  if (prompt->is_string()) {
    add_text(prompt->get<std::string>());
  } else if (prompt->is_array()) {
    if (prompt->empty()) throw invalid_request("prompt", "'prompt' is an empty list");
    if ((*prompt)[0].is_number()) {
      add_ids(*prompt);
    } else {
      for (std::size_t i = 0; i < prompt->size(); ++i) {
        const json& e = (*prompt)[i];
        if (e.is_string()) {
          add_text(e.get<std::string>());
        } else if (e.is_array()) {
          add_ids(e);
        } else {
          throw invalid_request("prompt", "'prompt[" + std::to_string(i) +
                                              "]' must be a string or a list of token ids, got " + type_name(e));
        }
      }
    }
  } else {
    f.wrong_type("prompt", "a string, a list of strings or a list of token ids", *prompt);
  }
  if (spec.prompts.size() * spec.n > ctx.max_n) {
    throw invalid_request("prompt", "at most " + std::to_string(ctx.max_n) +
                                        " choices per request (prompts times n), got " +
                                        std::to_string(spec.prompts.size() * spec.n));
  }
  for (const auto& p : spec.prompts) {
    if (p.empty()) throw invalid_request("prompt", "'prompt' gives no tokens");
    check_prompt_fits(p, ctx, "prompt");
  }
  return spec;
}

json tokenize_response(const json& body, const ApiContext& ctx) {
  require_object(body);
  Fields f(body);
  auto content = f.string("content");
  if (!content) throw invalid_request("content", "'content' is required");
  const bool add_special = f.boolean("add_special").value_or(false);
  const bool parse_special = f.boolean("parse_special").value_or(true);
  const bool with_pieces = f.boolean("with_pieces").value_or(false);
  std::vector<TokenId> ids = tokenize_or_400(*ctx.tokenizer, *content,
                                             {.add_special = add_special, .parse_special = parse_special}, "content");
  json tokens = json::array();
  for (TokenId id : ids) {
    if (with_pieces) {
      tokens.push_back({{"id", id}, {"piece", ctx.tokenizer->token_to_piece(id, true)}});
    } else {
      tokens.push_back(id);
    }
  }
  return json{{"tokens", tokens}};
}

json detokenize_response(const json& body, const ApiContext& ctx) {
  require_object(body);
  Fields f(body);
  const json* tokens = f.get("tokens");
  if (!tokens) throw invalid_request("tokens", "'tokens' is required");
  if (!tokens->is_array()) f.wrong_type("tokens", "an array of token ids", *tokens);
  std::vector<TokenId> ids = token_array(*tokens, ctx, "tokens");
  return json{{"content", ctx.tokenizer->detokenize(ids)}};
}

const char* openai_finish_reason(FinishReason r) {
  switch (r) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength:
    case FinishReason::kContextFull: return "length";
    case FinishReason::kCancelled: return "cancelled";
  }
  return "stop";
}

json usage_json(const Usage& u) {
  json j{{"prompt_tokens", u.prompt_tokens},
         {"completion_tokens", u.completion_tokens},
         {"total_tokens", u.prompt_tokens + u.completion_tokens},
         {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
  if (u.drafted_tokens > 0) {
    j["speculative"] = {{"drafted_tokens", u.drafted_tokens}, {"accepted_tokens", u.accepted_tokens}};
  }
  return j;
}

namespace {
json envelope(const char* object, const std::string& id, std::int64_t created, const std::string& model) {
  return json{
      {"id", id}, {"object", object}, {"created", created}, {"model", model}, {"system_fingerprint", "wisp-0.1.0"}};
}
}  // namespace

namespace {
json byte_list(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
}
}  // namespace

json chat_logprobs_json(const Tokenizer& tok, std::span<const TokenLogprobEntry> entries) {
  json content = json::array();
  for (const TokenLogprobEntry& e : entries) {
    const std::string piece = tok.token_to_piece(e.token, true);
    json top = json::array();
    for (const TokenLogprob& t : e.top) {
      const std::string p = tok.token_to_piece(t.token, true);
      top.push_back({{"token", p}, {"logprob", t.logprob}, {"bytes", byte_list(p)}});
    }
    content.push_back({{"token", piece}, {"logprob", e.logprob}, {"bytes", byte_list(piece)}, {"top_logprobs", top}});
  }
  return json{{"content", content}, {"refusal", nullptr}};
}

json completion_logprobs_json(const Tokenizer& tok, std::span<const TokenLogprobEntry> entries, std::size_t& offset) {
  json tokens = json::array(), lps = json::array(), tops = json::array(), offsets = json::array();
  for (const TokenLogprobEntry& e : entries) {
    const std::string piece = tok.token_to_piece(e.token, true);
    tokens.push_back(piece);
    lps.push_back(e.logprob);
    json top = json::object();
    for (const TokenLogprob& t : e.top) {
      const std::string p = tok.token_to_piece(t.token, true);
      if (!top.contains(p)) top[p] = t.logprob;  // two ids with one text: the likelier one
    }
    tops.push_back(std::move(top));
    offsets.push_back(offset);
    offset += piece.size();
  }
  return json{{"tokens", tokens}, {"token_logprobs", lps}, {"top_logprobs", tops}, {"text_offset", offsets}};
}

json chat_completion_json(const std::string& id, std::int64_t created, const std::string& model,
                          const std::vector<ChoiceResult>& choices, const Usage& usage) {
  json j = envelope("chat.completion", id, created, model);
  json arr = json::array();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    json message = {{"role", "assistant"}, {"content", choices[i].text}};
    if (!choices[i].reasoning.empty()) message["reasoning_content"] = choices[i].reasoning;
    arr.push_back({{"index", i},
                   {"message", std::move(message)},
                   {"logprobs", choices[i].logprobs},
                   {"finish_reason", openai_finish_reason(choices[i].reason)}});
  }
  j["choices"] = std::move(arr);
  j["usage"] = usage_json(usage);
  return j;
}

json text_completion_json(const std::string& id, std::int64_t created, const std::string& model,
                          const std::vector<ChoiceResult>& choices, const Usage& usage) {
  json j = envelope("text_completion", id, created, model);
  json arr = json::array();
  for (std::size_t i = 0; i < choices.size(); ++i) {
    arr.push_back({{"text", choices[i].text},
                   {"index", i},
                   {"logprobs", choices[i].logprobs},
                   {"finish_reason", openai_finish_reason(choices[i].reason)}});
  }
  j["choices"] = std::move(arr);
  j["usage"] = usage_json(usage);
  return j;
}

json chat_chunk_json(const std::string& id, std::int64_t created, const std::string& model, std::size_t index,
                     std::optional<std::string_view> content, bool delta_role, std::optional<FinishReason> finish,
                     const json& logprobs, std::string_view reasoning) {
  json j = envelope("chat.completion.chunk", id, created, model);
  json delta = json::object();
  if (delta_role) delta["role"] = "assistant";
  if (content) delta["content"] = std::string(*content);
  if (!reasoning.empty()) delta["reasoning_content"] = std::string(reasoning);
  j["choices"] = json::array({{{"index", index},
                               {"delta", delta},
                               {"logprobs", logprobs},
                               {"finish_reason", finish ? json(openai_finish_reason(*finish)) : json(nullptr)}}});
  return j;
}

json text_chunk_json(const std::string& id, std::int64_t created, const std::string& model, std::size_t index,
                     std::string_view text, std::optional<FinishReason> finish, const json& logprobs) {
  json j = envelope("text_completion", id, created, model);
  j["choices"] = json::array({{{"text", std::string(text)},
                               {"index", index},
                               {"logprobs", logprobs},
                               {"finish_reason", finish ? json(openai_finish_reason(*finish)) : json(nullptr)}}});
  return j;
}

json usage_chunk_json(const std::string& id, std::int64_t created, const std::string& model, bool chat,
                      const Usage& usage) {
  json j = envelope(chat ? "chat.completion.chunk" : "text_completion", id, created, model);
  j["choices"] = json::array();
  j["usage"] = usage_json(usage);
  return j;
}

json models_json(const std::string& model, std::int64_t created, std::size_t n_ctx, const ModelInfo& info) {
  return json{{"object", "list"},
              {"data", json::array({{{"id", model},
                                     {"object", "model"},
                                     {"created", created},
                                     {"owned_by", "wisp"},
                                     {"meta",
                                      {{"architecture", info.architecture},
                                       {"n_vocab", info.n_vocab},
                                       {"n_ctx_train", info.n_ctx_train},
                                       {"n_ctx", n_ctx},
                                       {"n_params_bytes", info.weight_bytes}}}}})}};
}

}  // namespace wisp::serve
