#include "chat/builtin_templates.h"

namespace wisp {
namespace {

struct Builtin {
  std::string_view name;
  std::string_view origin;  // the model the template is published with
  std::string_view source;  // byte-identical to tests/golden/chat/templates/<file>
};

// clang-format off
constexpr Builtin kBuiltins[] = {
    {"chatml", "teknium/OpenHermes-2.5-Mistral-7B (the generic ChatML template llama.cpp and llama-cpp-python ship)",
     // tests/golden/chat/templates/chatml.jinja
     R"jinja({% for message in messages %}{{'<|im_start|>' + message['role'] + '
' + message['content'] + '<|im_end|>' + '
'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant
' }}{% endif %})jinja"},
    {"gemma", "google/gemma-3-*-it (Gemma 3 instruction-tuned)",
     // tests/golden/chat/templates/gemma3-it.jinja
     R"jinja({{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '

' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '

' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '
' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>
' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model
'}}
{%- endif -%}
)jinja"},
    {"llama2", "meta-llama/Llama-2-7b-chat-hf",
     // tests/golden/chat/templates/llama2-chat.jinja
     R"jinja({% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %})jinja"},
    {"llama3", "meta-llama/Meta-Llama-3-8B-Instruct",
     // tests/golden/chat/templates/llama3-instruct.jinja
     R"jinja({% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>

'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>

' }}{% endif %})jinja"},
    {"mistral", "mistralai/Mistral-7B-Instruct-v0.1",
     // tests/golden/chat/templates/mistral-instruct-v0.1.jinja
     R"jinja({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token + ' ' }}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %})jinja"},
    {"zephyr", "TinyLlama/TinyLlama-1.1B-Chat-v1.0 (Zephyr format)",
     // tests/golden/chat/templates/zephyr-tinyllama-chat.jinja
     R"jinja({% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>
'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %})jinja"},
};
// clang-format on

bool has_both(const std::function<bool(std::string_view)>& has_token, std::string_view a, std::string_view b) {
  return has_token && has_token(a) && has_token(b);
}

}  // namespace

std::vector<std::string_view> builtin_chat_template_names() {
  std::vector<std::string_view> names;
  for (const auto& b : kBuiltins) names.push_back(b.name);
  return names;
}

std::optional<std::string_view> builtin_chat_template(std::string_view name) {
  for (const auto& b : kBuiltins) {
    if (b.name == name) return b.source;
  }
  return std::nullopt;
}

std::string_view builtin_chat_template_origin(std::string_view name) {
  for (const auto& b : kBuiltins) {
    if (b.name == name) return b.origin;
  }
  return {};
}

namespace {

// The builtin for a file whose own template cannot be used; `why` says why ("the GGUF has no chat
// template", or the parse error), and starts the reason.
ChatTemplateChoice choose_builtin(std::string_view architecture, const std::function<bool(std::string_view)>& has_token,
                                  const std::string& why) {
  struct Marker {
    std::string_view first, second, builtin;
  };
  static constexpr Marker kMarkers[] = {
      {"<start_of_turn>", "<end_of_turn>", "gemma"}, {"<|start_header_id|>", "<|eot_id|>", "llama3"},
      {"<|im_start|>", "<|im_end|>", "chatml"},      {"[INST]", "[/INST]", "mistral"},
      {"<|user|>", "<|assistant|>", "zephyr"},
  };
  const auto pick = [](std::string_view name, std::string reason) {
    return ChatTemplateChoice{std::string(name), std::string(*builtin_chat_template(name)), std::move(reason)};
  };
  for (const auto& m : kMarkers) {
    if (has_both(has_token, m.first, m.second)) {
      return pick(m.builtin, why + "; its vocabulary has " + std::string(m.first) + " and " + std::string(m.second) +
                                 ", so the " + std::string(m.builtin) + " template is used");
    }
  }
  if (architecture == "gemma" || architecture == "gemma2" || architecture == "gemma3") {
    return pick("gemma", why + "; architecture " + std::string(architecture) + " uses the gemma template");
  }
  return pick("chatml", why + " and no known turn markers; falling back to chatml (as llama.cpp does)");
}

}  // namespace

ChatTemplateChoice choose_chat_template(std::optional<std::string_view> gguf_template, std::string_view architecture,
                                        const std::function<bool(std::string_view)>& has_token) {
  if (gguf_template && !gguf_template->empty()) {
    return {"gguf", std::string(*gguf_template), "the GGUF's own tokenizer.chat_template"};
  }
  return choose_builtin(architecture, has_token, "the GGUF has no chat template");
}

ChosenChatTemplate load_chat_template(std::optional<std::string_view> gguf_template, std::string_view architecture,
                                      const std::function<bool(std::string_view)>& has_token) {
  ChatTemplateChoice choice = choose_chat_template(gguf_template, architecture, has_token);
  if (choice.name != "gguf") return {ChatTemplate::parse(choice.source), std::move(choice)};
  try {
    return {ChatTemplate::parse(choice.source), std::move(choice)};
  } catch (const std::exception& e) {
    ChatTemplateChoice fallback = choose_builtin(
        architecture, has_token, "the GGUF's chat template does not parse (" + std::string(e.what()) + ")");
    return {ChatTemplate::parse(fallback.source), std::move(fallback), true};
  }
}

}  // namespace wisp
