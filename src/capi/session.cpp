// The C API's sessions and the streaming generation call.
#include <string>
#include <vector>

#include "capi/capi_internal.h"
#include "wisp/generate.h"
#include "wisp/sampler.h"

using wisp::capi::fail;
using wisp::capi::guarded;

namespace {

wisp_status null_session() { return fail(WISP_ERR_INVALID_ARGUMENT, "the session handle is NULL"); }

wisp_stop_reason to_c(wisp::StopReason r) {
  switch (r) {
    case wisp::StopReason::kLength: return WISP_STOP_LENGTH;
    case wisp::StopReason::kEndOfTurn: return WISP_STOP_END_OF_TURN;
    case wisp::StopReason::kCancelled: return WISP_STOP_CANCELLED;
    case wisp::StopReason::kContextFull: return WISP_STOP_CONTEXT_FULL;
    case wisp::StopReason::kCallback: return WISP_STOP_CALLBACK;
  }
  return WISP_STOP_LENGTH;
}

wisp::SamplerParams to_cpp(const wisp_sampler_params& p) {
  wisp::SamplerParams s;
  s.temperature = p.temperature;
  s.top_k = p.top_k;
  s.top_p = p.top_p;
  s.min_p = p.min_p;
  s.repeat_penalty = p.repeat_penalty;
  s.penalty_last_n = p.penalty_last_n;
  s.seed = p.seed;
  return s;
}

// wisp_generate and wisp_generate_tokens: the same generation, with the C callback (if any)
// installed by `install` into the options. `fn` names the entry point in messages.
template <typename Install>
wisp_status generate_with(const char* fn, wisp_session* session, const char* prompt, const wisp_generate_params* params,
                          wisp_generate_result* result, Install install) {
  if (session == nullptr) return null_session();
  if (prompt == nullptr) return fail(WISP_ERR_INVALID_ARGUMENT, std::string(fn) + ": prompt is NULL");
  const wisp_generate_params p = params ? *params : wisp_generate_default_params();
  std::optional<wisp::Sampler> sampler;
  const wisp_status bad = guarded(WISP_ERR_INVALID_ARGUMENT, [&] {
    sampler.emplace(to_cpp(p.sampler));
    return WISP_OK;
  });
  if (bad != WISP_OK) return bad;

  const wisp::Tokenizer& tok = session->loaded->tokenizer;
  wisp::Session& s = session->session;
  std::vector<wisp::TokenId> ids;
  const wisp_status tokenized = guarded(WISP_ERR_TOKENIZE, [&] {
    // BOS only at the start of the text, and once: a chat template may print it itself.
    const bool at_start = s.n_past() == 0 && !session->pending;
    ids = tok.tokenize(prompt, {.add_special = p.add_special != 0 && at_start, .parse_special = p.parse_special != 0});
    if (ids.size() >= 2 && ids[0] == tok.bos() && ids[1] == tok.bos()) ids.erase(ids.begin());
    if (session->pending) ids.insert(ids.begin(), *session->pending);
    return WISP_OK;
  });
  if (tokenized != WISP_OK) return tokenized;
  if (ids.empty()) return fail(WISP_ERR_INVALID_ARGUMENT, std::string(fn) + ": the prompt gives no tokens");
  if (s.n_past() + ids.size() > s.n_ctx()) {
    return fail(WISP_ERR_CONTEXT_FULL, "the prompt is " + std::to_string(ids.size()) + " tokens after " +
                                           std::to_string(s.n_past()) + " in the session; the context holds " +
                                           std::to_string(s.n_ctx()));
  }

  return guarded(WISP_ERR_INTERNAL, [&] {
    wisp::GenerationOptions opts;
    opts.n_predict = p.n_predict;
    opts.cancel = &session->cancel;
    install(opts);
    session->pending.reset();
    // The request is consumed by this call whichever way it ends (a throw included).
    struct ClearCancel {
      std::atomic<bool>& flag;
      ~ClearCancel() { flag.store(false); }
    } clear{session->cancel};
    const wisp::GenerationResult r = wisp::generate(s, tok, *sampler, ids, opts);
    if (!r.tokens.empty()) session->pending = r.tokens.back();
    if (result != nullptr) {
      *result = wisp_generate_result{.n_prompt = r.stats.n_prompt,
                                     .n_generated = r.stats.n_generated,
                                     .stop = to_c(r.stop),
                                     .prompt_seconds = r.stats.prompt_seconds,
                                     .generate_seconds = r.stats.generate_seconds};
    }
    return WISP_OK;
  });
}

}  // namespace

extern "C" {

wisp_session_params wisp_session_default_params(void) {
  return wisp_session_params{.n_ctx = 0, .n_threads = 0, .exact = 0, .kv_type = nullptr};
}

wisp_generate_params wisp_generate_default_params(void) {
  const wisp::SamplerParams d;
  return wisp_generate_params{
      .n_predict = 128,
      .add_special = 1,
      .parse_special = 1,
      .sampler = {.temperature = d.temperature,
                  .top_k = d.top_k,
                  .top_p = d.top_p,
                  .min_p = d.min_p,
                  .repeat_penalty = d.repeat_penalty,
                  .penalty_last_n = d.penalty_last_n,
                  .seed = d.seed},
  };
}

wisp_status wisp_session_create(wisp_model* model, const wisp_session_params* params, wisp_session** out) {
  if (out == nullptr) return fail(WISP_ERR_INVALID_ARGUMENT, "wisp_session_create: out is NULL");
  *out = nullptr;
  if (model == nullptr) return fail(WISP_ERR_INVALID_ARGUMENT, "the model handle is NULL");
  const wisp_session_params p = params ? *params : wisp_session_default_params();
  if (p.n_threads < 0) return fail(WISP_ERR_INVALID_ARGUMENT, "wisp_session_create: n_threads must be >= 0");
  return guarded(WISP_ERR_INVALID_ARGUMENT, [&] {
    wisp::SessionOptions so;
    so.n_ctx = p.n_ctx;
    so.n_threads = p.n_threads;
    so.exact = p.exact != 0;
    if (p.kv_type != nullptr) so.kv_type = p.kv_type;
    wisp::Session session(model->loaded->model, so);
    *out = new wisp_session{model->loaded, std::move(session), std::nullopt};
    return WISP_OK;
  });
}

void wisp_session_free(wisp_session* session) { delete session; }

void wisp_session_reset(wisp_session* session) {
  if (session == nullptr) return;
  session->session.truncate(0);
  session->pending.reset();
  session->cancel.store(false);
}

void wisp_session_cancel(wisp_session* session) {
  if (session != nullptr) session->cancel.store(true);
}

size_t wisp_session_n_past(const wisp_session* session) {
  return session ? session->session.n_past() + (session->pending ? 1 : 0) : 0;
}
size_t wisp_session_n_ctx(const wisp_session* session) { return session ? session->session.n_ctx() : 0; }

wisp_status wisp_generate(wisp_session* session, const char* prompt, const wisp_generate_params* params,
                          wisp_token_callback callback, void* user_data, wisp_generate_result* result) {
  return generate_with("wisp_generate", session, prompt, params, result, [&](wisp::GenerationOptions& opts) {
    if (callback == nullptr) return;
    opts.on_text = [=](std::string_view text) { return callback(text.data(), text.size(), user_data) == 0; };
  });
}

wisp_status wisp_generate_tokens(wisp_session* session, const char* prompt, const wisp_generate_params* params,
                                 wisp_token_id_callback callback, void* user_data, wisp_generate_result* result) {
  return generate_with("wisp_generate_tokens", session, prompt, params, result, [&](wisp::GenerationOptions& opts) {
    if (callback == nullptr) return;
    opts.on_token = [=](wisp::TokenId token, std::string_view text) {
      return callback(static_cast<int32_t>(token), text.data(), text.size(), user_data) == 0;
    };
  });
}

}  // extern "C"
