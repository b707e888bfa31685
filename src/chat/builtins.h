// The library a chat template can call: filters (`x|trim`), tests (`x is string`), methods of str
// and dict (`s.strip()`, `d.items()`), and global functions (range, namespace, dict,
// raise_exception, strftime_now). Names not listed here are rejected when the template is parsed,
// so an unsupported feature fails at load time with its line and column, not mid-conversation.
#pragma once

#include <ctime>
#include <optional>
#include <string_view>

#include "chat/value.h"

namespace wisp::jinja {

bool is_known_filter(std::string_view name);
bool is_known_test(std::string_view name);

Value apply_filter(std::string_view name, const Value& value, const CallArgs& args);
bool apply_test(std::string_view name, const Value& value, const CallArgs& args);

// A bound method of a str or dict (`'a b'.split`), or nullopt when the value has no such method.
std::optional<Value> bound_method(const Value& receiver, std::string_view name);

// The global functions, ready to bind in the outermost scope. `now` is the clock strftime_now
// reads: the local time at render unless the caller fixes it (golden tests do).
ValueMap global_functions(std::optional<std::tm> now);

}  // namespace wisp::jinja
