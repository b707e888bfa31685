// ChatTemplate::for_model and chat_render_options: a model's chat template and the special-token
// text it prints, chosen the way `wisp chat` chooses them (chat/builtin_templates.h).
#include "chat/builtin_templates.h"
#include "chat/chat_template.h"
#include "model/model_state.h"
#include "tokenizer/tokenizer.h"

namespace wisp {

ChatTemplate ChatTemplate::for_model(const Model& model) {
  const GgufFile& file = detail::model_state(model).file;
  const Tokenizer tokenizer = Tokenizer::from_gguf(file);
  return load_chat_template(file.get_string_opt("tokenizer.chat_template"), file.architecture(),
                            [&](std::string_view t) { return tokenizer.find_token(t) != kNoToken; })
      .parsed;
}

ChatRenderOptions chat_render_options(const Tokenizer& tokenizer, bool add_generation_prompt) {
  ChatRenderOptions o;
  o.add_generation_prompt = add_generation_prompt;
  if (tokenizer.bos() != kNoToken) o.bos_token = tokenizer.token_to_piece(tokenizer.bos(), true);
  if (tokenizer.eos() != kNoToken) o.eos_token = tokenizer.token_to_piece(tokenizer.eos(), true);
  return o;
}

}  // namespace wisp
