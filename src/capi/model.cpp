// The C API's model, tokenizer and chat-template calls.
#include <string>
#include <vector>

#include "capi/capi_internal.h"

using wisp::capi::copy_out;
using wisp::capi::fail;
using wisp::capi::guarded;

namespace {

wisp_status null_model() { return fail(WISP_ERR_INVALID_ARGUMENT, "the model handle is NULL"); }

}  // namespace

extern "C" {

wisp_status wisp_model_load(const char* path, wisp_model** out) {
  if (out == nullptr) return fail(WISP_ERR_INVALID_ARGUMENT, "wisp_model_load: out is NULL");
  *out = nullptr;
  if (path == nullptr) return fail(WISP_ERR_INVALID_ARGUMENT, "wisp_model_load: path is NULL");
  return guarded(WISP_ERR_LOAD, [&] {
    auto model = wisp::Model::load(path);
    wisp::Tokenizer tokenizer = wisp::Tokenizer::from_model(*model);
    auto loaded = std::make_shared<wisp::capi::LoadedModel>(
        wisp::capi::LoadedModel{std::move(model), std::move(tokenizer), std::nullopt});
    *out = new wisp_model{std::move(loaded)};
    return WISP_OK;
  });
}

void wisp_model_free(wisp_model* model) { delete model; }

int64_t wisp_model_n_vocab(const wisp_model* model) { return model ? model->loaded->model->info().n_vocab : 0; }
int64_t wisp_model_n_ctx_train(const wisp_model* model) { return model ? model->loaded->model->info().n_ctx_train : 0; }
const char* wisp_model_architecture(const wisp_model* model) {
  return model ? model->loaded->model->info().architecture.c_str() : "";
}

int32_t wisp_token_bos(const wisp_model* model) { return model ? model->loaded->tokenizer.bos() : wisp::kNoToken; }
int32_t wisp_token_eos(const wisp_model* model) { return model ? model->loaded->tokenizer.eos() : wisp::kNoToken; }
int wisp_token_is_eog(const wisp_model* model, int32_t token) {
  return model && model->loaded->tokenizer.is_eog(token) ? 1 : 0;
}

wisp_status wisp_tokenize(const wisp_model* model, const char* text, size_t len, int add_special, int parse_special,
                          int32_t* tokens, size_t cap, size_t* n_out) {
  if (model == nullptr) return null_model();
  if (n_out == nullptr) return fail(WISP_ERR_INVALID_ARGUMENT, "wisp_tokenize: n_out is NULL");
  if (text == nullptr && len > 0) return fail(WISP_ERR_INVALID_ARGUMENT, "wisp_tokenize: text is NULL");
  return guarded(WISP_ERR_TOKENIZE, [&] {
    const std::vector<wisp::TokenId> ids =
        model->loaded->tokenizer.tokenize(std::string_view(text == nullptr ? "" : text, len),
                                          {.add_special = add_special != 0, .parse_special = parse_special != 0});
    *n_out = ids.size();
    if (cap < ids.size() || (tokens == nullptr && !ids.empty())) {
      return fail(WISP_ERR_BUFFER_TOO_SMALL, "the text is " + std::to_string(ids.size()) +
                                                 " tokens; the buffer holds " +
                                                 std::to_string(tokens == nullptr ? 0 : cap));
    }
    std::copy(ids.begin(), ids.end(), tokens);
    return WISP_OK;
  });
}

wisp_status wisp_detokenize(const wisp_model* model, const int32_t* tokens, size_t n_tokens, int render_special,
                            char* buf, size_t cap, size_t* n_out) {
  if (model == nullptr) return null_model();
  if (tokens == nullptr && n_tokens > 0) return fail(WISP_ERR_INVALID_ARGUMENT, "wisp_detokenize: tokens is NULL");
  return guarded(WISP_ERR_TOKENIZE, [&] {
    const std::string text =
        model->loaded->tokenizer.detokenize(std::span<const int32_t>(tokens, n_tokens), render_special != 0);
    return copy_out(text, buf, cap, n_out);
  });
}

wisp_status wisp_chat_render(const wisp_model* model, const wisp_chat_message* messages, size_t n_messages,
                             int add_generation_prompt, char* buf, size_t cap, size_t* n_out) {
  if (model == nullptr) return null_model();
  if (messages == nullptr && n_messages > 0)
    return fail(WISP_ERR_INVALID_ARGUMENT, "wisp_chat_render: messages is NULL");
  std::vector<wisp::ChatMessage> list;
  for (size_t i = 0; i < n_messages; ++i) {
    if (messages[i].role == nullptr || messages[i].content == nullptr) {
      return fail(WISP_ERR_INVALID_ARGUMENT,
                  "wisp_chat_render: message " + std::to_string(i) + " has a NULL role or content");
    }
  }
  return guarded(WISP_ERR_TEMPLATE, [&] {
    for (size_t i = 0; i < n_messages; ++i) list.push_back({messages[i].role, messages[i].content});
    wisp::capi::LoadedModel& lm = *model->loaded;
    if (!lm.chat_template) lm.chat_template = wisp::ChatTemplate::for_model(*lm.model);
    const std::string text =
        lm.chat_template->render(list, wisp::chat_render_options(lm.tokenizer, add_generation_prompt != 0));
    return copy_out(text, buf, cap, n_out);
  });
}

}  // extern "C"
