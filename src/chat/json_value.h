// JSON in and out of template values. In: the messages, tools and extra variables a caller hands
// to render(), as nlohmann::ordered_json (insertion order kept, as Python dicts keep it). Out: the
// `tojson` filter, which must print exactly what Hugging Face's override prints:
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys).
// (Jinja's own tojson sorts keys and HTML-escapes; HF replaces it, and HF is the reference.)
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "chat/value.h"

namespace wisp::jinja {

Value from_json(const nlohmann::ordered_json& json);

struct JsonDumpOptions {
  std::optional<std::string> indent;  // None: one line; else the text repeated per nesting level
  bool ensure_ascii = false;
  bool sort_keys = false;
  std::optional<std::pair<std::string, std::string>> separators;  // (item, key); default by indent
};

// Throws ChatTemplateError for values JSON cannot hold (undefined, namespaces, functions).
std::string json_dumps(const Value& value, const JsonDumpOptions& options);

}  // namespace wisp::jinja
