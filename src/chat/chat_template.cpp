#include "chat/chat_template.h"

#include "chat/interpreter.h"
#include "chat/json_value.h"
#include "chat/parser.h"

namespace wisp {

ChatTemplate ChatTemplate::parse(std::string_view source) {
  ChatTemplate t;
  t.source_ = std::string(source);
  t.program_ = jinja::parse_program(source);
  return t;
}

std::string ChatTemplate::render(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options) const {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& m : messages) list.push_back({{"role", m.role}, {"content", m.content}});
  return render_json(list, options);
}

std::string ChatTemplate::render_json(const nlohmann::ordered_json& messages, const ChatRenderOptions& options) const {
  if (!messages.is_array()) {
    throw ChatTemplateError(ChatTemplateError::Kind::Runtime, "messages must be a JSON array");
  }
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
  variables["messages"] = messages;
  variables["add_generation_prompt"] = options.add_generation_prompt;
  variables["bos_token"] = options.bos_token;
  variables["eos_token"] = options.eos_token;
  if (!options.extra.is_null()) {
    if (!options.extra.is_object()) {
      throw ChatTemplateError(ChatTemplateError::Kind::Runtime, "extra template variables must be a JSON object");
    }
    for (const auto& [key, value] : options.extra.items()) variables[key] = value;
  }
  return render_context(variables, options.now);
}

std::string ChatTemplate::render_context(const nlohmann::ordered_json& variables, std::optional<std::tm> now) const {
  if (!variables.is_object()) {
    throw ChatTemplateError(ChatTemplateError::Kind::Runtime, "template variables must be a JSON object");
  }
  jinja::ValueMap context;
  for (const auto& [key, value] : variables.items()) context.set(jinja::Value(key), jinja::from_json(value));
  jinja::Interpreter interpreter(*program_, now);
  return interpreter.render(context);
}

}  // namespace wisp
