// Methods of str and dict that chat templates call (`content.strip()`, `message.items()`,
// `tool.get('name')`). List methods are absent on purpose: the sandbox Hugging Face renders in
// forbids the mutating ones, and templates do not use the others.
#include <algorithm>

#include "chat/builtins.h"
#include "chat/operators.h"
#include "chat/py_text.h"

namespace wisp::jinja {
namespace {

using Method = Value (*)(const Value& self, const CallArgs& args);

std::optional<std::string> optional_string(const CallArgs& args, std::size_t pos, std::string_view name) {
  const Value* v = args.get(pos, name);
  if (!v || v->is_none()) return std::nullopt;
  if (!v->is_string()) fail_runtime(std::string(name) + " must be a string or None");
  return v->as_string();
}

long optional_int(const CallArgs& args, std::size_t pos, std::string_view name, long fallback) {
  const Value* v = args.get(pos, name);
  if (!v || v->is_none()) return fallback;
  if (!v->is_int()) fail_runtime(std::string(name) + " must be an integer");
  return static_cast<long>(v->as_int());
}

Value strings(const std::vector<std::string>& parts) {
  ValueList out;
  for (const auto& p : parts) out.emplace_back(p);
  return Value(std::move(out));
}

Value m_strip(const Value& s, const CallArgs& a) {
  a.check("strip", {"chars"});
  return Value(text::strip(s.as_string(), true, true, optional_string(a, 0, "chars")));
}
Value m_lstrip(const Value& s, const CallArgs& a) {
  a.check("lstrip", {"chars"});
  return Value(text::strip(s.as_string(), true, false, optional_string(a, 0, "chars")));
}
Value m_rstrip(const Value& s, const CallArgs& a) {
  a.check("rstrip", {"chars"});
  return Value(text::strip(s.as_string(), false, true, optional_string(a, 0, "chars")));
}
Value m_upper(const Value& s, const CallArgs& a) {
  a.check("upper", {});
  return Value(text::upper(s.as_string()));
}
Value m_lower(const Value& s, const CallArgs& a) {
  a.check("lower", {});
  return Value(text::lower(s.as_string()));
}
Value m_title(const Value& s, const CallArgs& a) {
  a.check("title", {});
  return Value(text::title(s.as_string()));
}
Value m_capitalize(const Value& s, const CallArgs& a) {
  a.check("capitalize", {});
  return Value(text::capitalize(s.as_string()));
}

Value m_split(const Value& s, const CallArgs& a) {
  a.check("split", {"sep", "maxsplit"});
  const auto sep = optional_string(a, 0, "sep");
  if (sep && sep->empty()) fail_runtime("empty separator");
  return strings(text::split(s.as_string(), sep, optional_int(a, 1, "maxsplit", -1)));
}

Value m_rsplit(const Value& s, const CallArgs& a) {
  a.check("rsplit", {"sep", "maxsplit"});
  const auto sep = optional_string(a, 0, "sep");
  if (sep && sep->empty()) fail_runtime("empty separator");
  return strings(text::rsplit(s.as_string(), sep, optional_int(a, 1, "maxsplit", -1)));
}

Value m_splitlines(const Value& s, const CallArgs& a) {
  a.check("splitlines", {"keepends"});
  std::vector<std::string> lines;
  std::string current;
  const std::string& str = s.as_string();
  for (std::size_t i = 0; i < str.size(); ++i) {
    if (str[i] != '\n' && str[i] != '\r') {
      current += str[i];
      continue;
    }
    if (str[i] == '\r' && i + 1 < str.size() && str[i + 1] == '\n') ++i;
    lines.push_back(std::move(current));
    current.clear();
  }
  if (!current.empty()) lines.push_back(std::move(current));
  return strings(lines);
}

// startswith/endswith accept one string or a tuple (list) of candidates.
bool affix_matches(const Value& self, const CallArgs& a, std::string_view method, bool prefix) {
  a.check(method, {prefix ? "prefix" : "suffix"});
  const Value* arg = a.get(0, prefix ? "prefix" : "suffix");
  if (!arg) fail_runtime(std::string(method) + "() needs an argument");
  const ValueList candidates = arg->is_list() ? arg->as_list() : ValueList{*arg};
  const std::string& s = self.as_string();
  return std::any_of(candidates.begin(), candidates.end(), [&](const Value& c) {
    if (!c.is_string()) fail_runtime(std::string(method) + " first arg must be str or a tuple of str");
    return prefix ? s.starts_with(c.as_string()) : s.ends_with(c.as_string());
  });
}
Value m_startswith(const Value& s, const CallArgs& a) { return Value(affix_matches(s, a, "startswith", true)); }
Value m_endswith(const Value& s, const CallArgs& a) { return Value(affix_matches(s, a, "endswith", false)); }

Value m_replace(const Value& s, const CallArgs& a) {
  a.check("replace", {"old", "new", "count"});
  const auto old_text = optional_string(a, 0, "old");
  const auto new_text = optional_string(a, 1, "new");
  if (!old_text || !new_text) fail_runtime("replace() needs old and new strings");
  return Value(text::replace(s.as_string(), *old_text, *new_text, optional_int(a, 2, "count", -1)));
}

Value find_impl(const Value& s, const CallArgs& a, bool from_right) {
  a.check(from_right ? "rfind" : "find", {"sub"});
  const auto sub = optional_string(a, 0, "sub");
  if (!sub) fail_runtime("find() needs a string");
  const std::string& str = s.as_string();
  const std::size_t hit = from_right ? str.rfind(*sub) : str.find(*sub);
  if (hit == std::string::npos) return Value(-1);
  return Value(static_cast<std::int64_t>(text::length(std::string_view(str).substr(0, hit))));
}
Value m_find(const Value& s, const CallArgs& a) { return find_impl(s, a, false); }
Value m_rfind(const Value& s, const CallArgs& a) { return find_impl(s, a, true); }

Value m_count(const Value& s, const CallArgs& a) {
  a.check("count", {"sub"});
  const auto sub = optional_string(a, 0, "sub");
  if (!sub) fail_runtime("count() needs a string");
  const std::string& str = s.as_string();
  if (sub->empty()) return Value(static_cast<std::int64_t>(text::length(str) + 1));
  std::int64_t n = 0;
  for (std::size_t at = str.find(*sub); at != std::string::npos; at = str.find(*sub, at + sub->size())) ++n;
  return Value(n);
}

Value m_join(const Value& s, const CallArgs& a) {
  a.check("join", {"iterable"});
  const Value* items = a.get(0, "iterable");
  if (!items) fail_runtime("join() needs an iterable");
  std::string out;
  bool first = true;
  for (const Value& item : iterate(*items)) {
    if (!item.is_string()) fail_runtime("sequence item: expected str instance, " + item.type_name() + " found");
    if (!first) out += s.as_string();
    out += item.as_string();
    first = false;
  }
  return Value(std::move(out));
}

template <bool (*Pred)(char32_t)>
Value char_class(const Value& s, const CallArgs& a) {
  a.check("is...", {});
  const std::u32string cps = text::decode(s.as_string());
  return Value(!cps.empty() && std::all_of(cps.begin(), cps.end(), Pred));
}
bool digit_cp(char32_t c) { return c >= '0' && c <= '9'; }
bool alpha_cp(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0xC0 && !text::is_space(c));
}
bool alnum_cp(char32_t c) { return digit_cp(c) || alpha_cp(c); }

Value m_items(const Value& d, const CallArgs& a) {
  a.check("items", {});
  return apply_filter("items", d, CallArgs{});
}
Value m_keys(const Value& d, const CallArgs& a) {
  a.check("keys", {});
  return Value(iterate(d));
}
Value m_values(const Value& d, const CallArgs& a) {
  a.check("values", {});
  ValueList out;
  for (const auto& [k, v] : d.as_map().entries()) out.push_back(v);
  return Value(std::move(out));
}
Value m_get(const Value& d, const CallArgs& a) {
  a.check("get", {"key", "default"});
  const Value* key = a.get(0, "key");
  if (!key) fail_runtime("get() needs a key");
  if (const Value* v = d.as_map().find(*key)) return *v;
  const Value* fallback = a.get(1, "default");
  return fallback ? *fallback : Value(nullptr);
}

struct NamedMethod {
  std::string_view name;
  Method fn;
};

constexpr NamedMethod kStringMethods[] = {
    {"strip", m_strip},
    {"lstrip", m_lstrip},
    {"rstrip", m_rstrip},
    {"split", m_split},
    {"rsplit", m_rsplit},
    {"splitlines", m_splitlines},
    {"startswith", m_startswith},
    {"endswith", m_endswith},
    {"upper", m_upper},
    {"lower", m_lower},
    {"title", m_title},
    {"capitalize", m_capitalize},
    {"replace", m_replace},
    {"find", m_find},
    {"rfind", m_rfind},
    {"count", m_count},
    {"join", m_join},
    {"isdigit", char_class<digit_cp>},
    {"isalpha", char_class<alpha_cp>},
    {"isalnum", char_class<alnum_cp>},
    {"isspace", char_class<text::is_space>},
};

constexpr NamedMethod kDictMethods[] = {
    {"items", m_items},
    {"keys", m_keys},
    {"values", m_values},
    {"get", m_get},
};

template <std::size_t N>
Method find_method(const NamedMethod (&table)[N], std::string_view name) {
  for (const auto& m : table) {
    if (m.name == name) return m.fn;
  }
  return nullptr;
}

}  // namespace

std::optional<Value> bound_method(const Value& receiver, std::string_view name) {
  Method fn = nullptr;
  if (receiver.is_string()) fn = find_method(kStringMethods, name);
  if (receiver.is_map()) fn = find_method(kDictMethods, name);
  if (!fn) return std::nullopt;
  return Value(Callable{std::string(name), [receiver, fn](const CallArgs& args) { return fn(receiver, args); }});
}

}  // namespace wisp::jinja
