// Jinja's built-in filters that chat templates use, with Jinja's signatures and defaults. tojson
// is Hugging Face's override (json.dumps with ensure_ascii=False, no key sorting, no HTML escaping).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "chat/builtins.h"
#include "chat/json_value.h"
#include "chat/operators.h"
#include "chat/py_text.h"

namespace wisp::jinja {
namespace {

using Filter = Value (*)(const Value&, const CallArgs&);

// By value: callers pass temporaries as the fallback.
Value arg_or(const CallArgs& args, std::size_t pos, std::string_view name, const Value& fallback) {
  const Value* v = args.get(pos, name);
  return v ? *v : fallback;
}

Value f_abs(const Value& v, const CallArgs& args) {
  args.check("abs", {});
  require_defined(v);
  if (v.is_float()) return Value(std::fabs(v.as_float()));
  if (v.is_int() || v.is_bool()) {
    const std::int64_t i = v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int();
    return i < 0 ? unary_minus(Value(i)) : Value(i);
  }
  fail_runtime("bad operand type for abs(): '" + v.type_name() + "'");
}

Value f_attr(const Value& v, const CallArgs& args) {
  args.check("attr", {"name"});
  return get_attribute(v, arg_or(args, 0, "name", Value("")).str());
}

Value f_capitalize(const Value& v, const CallArgs& args) {
  args.check("capitalize", {});
  return Value(text::capitalize(v.str()));
}
Value f_lower(const Value& v, const CallArgs& args) {
  args.check("lower", {});
  return Value(text::lower(v.str()));
}
Value f_upper(const Value& v, const CallArgs& args) {
  args.check("upper", {});
  return Value(text::upper(v.str()));
}
Value f_title(const Value& v, const CallArgs& args) {
  args.check("title", {});
  return Value(text::title(v.str()));
}
Value f_string(const Value& v, const CallArgs& args) {
  args.check("string", {});
  return Value(v.str());
}
Value f_safe(const Value& v, const CallArgs& args) {
  args.check("safe", {});
  return v.is_string() ? v : Value(v.str());
}

Value f_escape(const Value& v, const CallArgs& args) {
  args.check("escape", {});
  std::string out;
  for (char c : v.str()) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return Value(std::move(out));
}

Value f_default(const Value& v, const CallArgs& args) {
  args.check("default", {"default_value", "boolean"});
  const Value fallback = arg_or(args, 0, "default_value", Value(""));
  const bool boolean = arg_or(args, 1, "boolean", Value(false)).truthy();
  if (v.is_undefined() || (boolean && !v.truthy())) return fallback;
  return v;
}

Value f_length(const Value& v, const CallArgs& args) {
  args.check("length", {});
  switch (v.kind()) {
    case Value::Kind::Undefined: return Value(0);
    case Value::Kind::String: return Value(static_cast<std::int64_t>(text::length(v.as_string())));
    case Value::Kind::List: return Value(static_cast<std::int64_t>(v.as_list().size()));
    case Value::Kind::Map: return Value(static_cast<std::int64_t>(v.as_map().size()));
    default: fail_runtime("object of type '" + v.type_name() + "' has no len()");
  }
}

Value f_list(const Value& v, const CallArgs& args) {
  args.check("list", {});
  return Value(iterate(v));
}

Value f_first(const Value& v, const CallArgs& args) {
  args.check("first", {});
  ValueList items = iterate(v);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value f_last(const Value& v, const CallArgs& args) {
  args.check("last", {});
  ValueList items = iterate(v);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value f_reverse(const Value& v, const CallArgs& args) {
  args.check("reverse", {});
  if (v.is_string()) {
    std::u32string cps = text::decode(v.as_string());
    std::reverse(cps.begin(), cps.end());
    return Value(text::encode(cps));
  }
  ValueList items = iterate(v);
  std::reverse(items.begin(), items.end());
  return Value(std::move(items));
}

Value f_items(const Value& v, const CallArgs& args) {
  args.check("items", {});
  if (v.is_undefined()) return Value(ValueList{});
  if (!v.is_map()) fail_runtime("Can only get item pairs from a mapping.");
  ValueList pairs;
  for (const auto& [k, value] : v.as_map().entries()) pairs.push_back(Value::tuple(ValueList{k, value}));
  return Value(std::move(pairs));
}

// Jinja's attribute getter: "a.b.0" walks items by dotted path.
Value lookup_path(const Value& item, const Value& path) {
  if (!path.is_string()) return get_item(item, path);
  Value current = item;
  for (const std::string& part : text::split(path.as_string(), std::string_view("."), -1)) {
    const bool numeric =
        !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    current = numeric ? get_item(current, Value(static_cast<std::int64_t>(std::stoll(part))))
                      : get_item(current, Value(part));
  }
  return current;
}

Value f_join(const Value& v, const CallArgs& args) {
  args.check("join", {"d", "attribute"});
  const std::string sep = arg_or(args, 0, "d", Value("")).str();
  const Value* attribute = args.get(1, "attribute");
  std::string out;
  bool first = true;
  for (const Value& item : iterate(v)) {
    if (!first) out += sep;
    out += (attribute && !attribute->is_none()) ? lookup_path(item, *attribute).str() : item.str();
    first = false;
  }
  return Value(std::move(out));
}

Value f_replace(const Value& v, const CallArgs& args) {
  args.check("replace", {"old", "new", "count"});
  const Value count = arg_or(args, 2, "count", Value(nullptr));
  return Value(text::replace(v.str(), arg_or(args, 0, "old", Value("")).str(), arg_or(args, 1, "new", Value("")).str(),
                             count.is_none() ? -1 : static_cast<long>(count.as_int())));
}

Value f_trim(const Value& v, const CallArgs& args) {
  args.check("trim", {"chars"});
  const Value chars = arg_or(args, 0, "chars", Value(nullptr));
  if (chars.is_none() || chars.is_undefined()) return Value(text::strip(v.str(), true, true));
  return Value(text::strip(v.str(), true, true, chars.str()));
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::string current;
  const std::u32string cps = text::decode(s);
  for (std::size_t i = 0; i < cps.size(); ++i) {
    const char32_t c = cps[i];
    const bool is_break = c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) || c == 0x85 ||
                          c == 0x2028 || c == 0x2029;
    if (!is_break) {
      text::append_utf8(current, c);
      continue;
    }
    if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') ++i;
    lines.push_back(std::move(current));
    current.clear();
  }
  if (!current.empty()) lines.push_back(std::move(current));
  return lines;
}

Value f_indent(const Value& v, const CallArgs& args) {
  args.check("indent", {"width", "first", "blank"});
  const Value width = arg_or(args, 0, "width", Value(4));
  const std::string indentation =
      width.is_string() ? width.as_string()
                        : std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, width.as_int())), ' ');
  const bool first = arg_or(args, 1, "first", Value(false)).truthy();
  const bool blank = arg_or(args, 2, "blank", Value(false)).truthy();
  std::vector<std::string> lines = split_lines(v.str() + "\n");
  std::string out = lines.empty() ? "" : lines[0];
  for (std::size_t i = 1; i < lines.size(); ++i) {
    out += "\n";
    if (blank || !lines[i].empty()) out += indentation;
    out += lines[i];
  }
  if (first) out = indentation + out;
  return Value(std::move(out));
}

std::optional<double> parse_float(const std::string& s) {
  const std::string t = text::strip(s, true, true);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return std::nullopt;
  return d;
}

Value f_int(const Value& v, const CallArgs& args) {
  args.check("int", {"default", "base"});
  const Value fallback = arg_or(args, 0, "default", Value(0));
  const int base = static_cast<int>(arg_or(args, 1, "base", Value(10)).as_int());
  if (v.is_bool()) return Value(std::int64_t{v.as_bool()});
  if (v.is_int()) return v;
  if (v.is_float()) return std::isfinite(v.as_float()) ? Value(static_cast<std::int64_t>(v.as_float())) : fallback;
  if (v.is_string()) {
    std::string t = text::strip(v.as_string(), true, true);
    t.erase(std::remove(t.begin(), t.end(), '_'), t.end());
    char* end = nullptr;
    const long long i = std::strtoll(t.c_str(), &end, base);
    if (!t.empty() && end == t.c_str() + t.size()) return Value(static_cast<std::int64_t>(i));
    if (auto d = parse_float(v.as_string()); d && std::isfinite(*d)) return Value(static_cast<std::int64_t>(*d));
  }
  return fallback;
}

Value f_float(const Value& v, const CallArgs& args) {
  args.check("float", {"default"});
  const Value fallback = arg_or(args, 0, "default", Value(0.0));
  if (v.is_number()) return Value(v.to_double());
  if (v.is_string()) {
    if (auto d = parse_float(v.as_string())) return Value(*d);
  }
  return fallback;
}

Value f_round(const Value& v, const CallArgs& args) {
  args.check("round", {"precision", "method"});
  const std::int64_t precision = arg_or(args, 0, "precision", Value(0)).as_int();
  const std::string method = arg_or(args, 1, "method", Value("common")).str();
  if (!v.is_number()) fail_runtime("round() needs a number, not " + v.type_name());
  const double scale = std::pow(10.0, static_cast<double>(precision));
  if (method == "floor") return Value(std::floor(v.to_double() * scale) / scale);
  if (method == "ceil") return Value(std::ceil(v.to_double() * scale) / scale);
  if (method != "common") fail_runtime("method must be 'common', 'ceil' or 'floor'");
  if (!v.is_float() && precision >= 0) return Value(v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int());
  // Python's round(): correctly rounded, ties to even; printf rounds the exact binary value alike.
  if (precision <= 0) return Value(std::nearbyint(v.to_double() * scale) / scale);
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<std::int64_t>(precision, 300)), v.to_double());
  return Value(std::strtod(buf, nullptr));
}

Value f_tojson(const Value& v, const CallArgs& args) {
  args.check("tojson", {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonDumpOptions options;
  options.ensure_ascii = arg_or(args, 0, "ensure_ascii", Value(false)).truthy();
  const Value indent = arg_or(args, 1, "indent", Value(nullptr));
  if (indent.is_string()) {
    options.indent = indent.as_string();
  } else if (indent.is_int()) {
    options.indent = std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, indent.as_int())), ' ');
  }
  const Value separators = arg_or(args, 2, "separators", Value(nullptr));
  if (separators.is_list() && separators.as_list().size() == 2) {
    options.separators = std::make_pair(separators.as_list()[0].str(), separators.as_list()[1].str());
  }
  options.sort_keys = arg_or(args, 3, "sort_keys", Value(false)).truthy();
  return Value(json_dumps(v, options));
}

// The value an item is sorted or compared by.
Value sort_key(const Value& item, const Value* attribute) {
  return (attribute && !attribute->is_none()) ? lookup_path(item, *attribute) : item;
}

Value f_sort(const Value& v, const CallArgs& args) {
  args.check("sort", {"reverse", "case_sensitive", "attribute"});
  const bool reverse = arg_or(args, 0, "reverse", Value(false)).truthy();
  const bool case_sensitive = arg_or(args, 1, "case_sensitive", Value(false)).truthy();
  const Value* attribute = args.get(2, "attribute");
  ValueList items = iterate(v);
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const Value ka = sort_key(a, attribute), kb = sort_key(b, attribute);
    return reverse ? less_than(kb, ka, case_sensitive) : less_than(ka, kb, case_sensitive);
  });
  return Value(std::move(items));
}

Value f_dictsort(const Value& v, const CallArgs& args) {
  args.check("dictsort", {"case_sensitive", "by", "reverse"});
  const bool case_sensitive = arg_or(args, 0, "case_sensitive", Value(false)).truthy();
  const std::size_t by = arg_or(args, 1, "by", Value("key")).str() == "value" ? 1 : 0;
  const bool reverse = arg_or(args, 2, "reverse", Value(false)).truthy();
  ValueList pairs = f_items(v, CallArgs{}).as_list();
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& a, const Value& b) {
    const Value& ka = a.as_list()[by];
    const Value& kb = b.as_list()[by];
    return reverse ? less_than(kb, ka, case_sensitive) : less_than(ka, kb, case_sensitive);
  });
  return Value(std::move(pairs));
}

Value f_unique(const Value& v, const CallArgs& args) {
  args.check("unique", {"case_sensitive", "attribute"});
  const bool case_sensitive = arg_or(args, 0, "case_sensitive", Value(false)).truthy();
  const Value* attribute = args.get(1, "attribute");
  ValueList out;
  ValueList seen;
  for (const Value& item : iterate(v)) {
    Value key = sort_key(item, attribute);
    if (!case_sensitive && key.is_string()) key = Value(text::lower(key.as_string()));
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    out.push_back(item);
  }
  return Value(std::move(out));
}

Value min_max(const Value& v, const CallArgs& args, bool want_max) {
  args.check(want_max ? "max" : "min", {"case_sensitive", "attribute"});
  const bool case_sensitive = arg_or(args, 0, "case_sensitive", Value(false)).truthy();
  const Value* attribute = args.get(1, "attribute");
  const ValueList items = iterate(v);
  if (items.empty()) return Value::undefined(std::string("No aggregated item, sequence was empty."));
  const Value* best = &items[0];
  for (const Value& item : items) {
    const bool better = want_max ? less_than(sort_key(*best, attribute), sort_key(item, attribute), case_sensitive)
                                 : less_than(sort_key(item, attribute), sort_key(*best, attribute), case_sensitive);
    if (better) best = &item;
  }
  return *best;
}
Value f_min(const Value& v, const CallArgs& args) { return min_max(v, args, false); }
Value f_max(const Value& v, const CallArgs& args) { return min_max(v, args, true); }

Value f_sum(const Value& v, const CallArgs& args) {
  args.check("sum", {"attribute", "start"});
  const Value* attribute = args.get(0, "attribute");
  Value total = arg_or(args, 1, "start", Value(0));
  for (const Value& item : iterate(v)) total = binary_op("+", total, sort_key(item, attribute));
  return total;
}

Value f_wordcount(const Value& v, const CallArgs& args) {
  args.check("wordcount", {});
  std::int64_t words = 0;
  bool in_word = false;
  for (char32_t c : text::decode(v.str())) {
    const bool word_char = c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= 0x80 && !text::is_space(c));
    if (word_char && !in_word) ++words;
    in_word = word_char;
  }
  return Value(words);
}

// select / reject / selectattr / rejectattr: keep items whose (attribute's) test result is `keep`.
Value filter_by_test(const Value& v, const CallArgs& args, bool by_attribute, bool keep) {
  std::size_t next = 0;
  Value attribute;
  if (by_attribute) {
    if (args.positional.empty()) fail_runtime("selectattr/rejectattr need an attribute name");
    attribute = args.positional[next++];
  }
  std::string test_name;
  CallArgs test_args;
  if (next < args.positional.size()) {
    test_name = args.positional[next++].str();
    test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(next), args.positional.end());
    test_args.keyword = args.keyword;
  }
  if (!test_name.empty() && !is_known_test(test_name)) fail_runtime("no test named '" + test_name + "'");
  ValueList out;
  for (const Value& item : iterate(v)) {
    const Value subject = by_attribute ? lookup_path(item, attribute) : item;
    const bool result = test_name.empty() ? subject.truthy() : apply_test(test_name, subject, test_args);
    if (result == keep) out.push_back(item);
  }
  return Value(std::move(out));
}
Value f_select(const Value& v, const CallArgs& args) { return filter_by_test(v, args, false, true); }
Value f_reject(const Value& v, const CallArgs& args) { return filter_by_test(v, args, false, false); }
Value f_selectattr(const Value& v, const CallArgs& args) { return filter_by_test(v, args, true, true); }
Value f_rejectattr(const Value& v, const CallArgs& args) { return filter_by_test(v, args, true, false); }

Value f_map(const Value& v, const CallArgs& args) {
  ValueList out;
  if (args.positional.empty()) {
    const Value* attribute = args.get(99, "attribute");
    if (!attribute) fail_runtime("map() needs a filter name or attribute=");
    const Value* fallback = args.get(99, "default");
    for (const Value& item : iterate(v)) {
      Value mapped = lookup_path(item, *attribute);
      out.push_back((mapped.is_undefined() && fallback) ? *fallback : mapped);
    }
    return Value(std::move(out));
  }
  const std::string name = args.positional[0].str();
  if (!is_known_filter(name)) fail_runtime("no filter named '" + name + "'");
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : iterate(v)) out.push_back(apply_filter(name, item, rest));
  return Value(std::move(out));
}

struct NamedFilter {
  std::string_view name;
  Filter fn;
};

constexpr NamedFilter kFilters[] = {
    {"abs", f_abs},           {"attr", f_attr},       {"capitalize", f_capitalize},
    {"count", f_length},      {"d", f_default},       {"default", f_default},
    {"dictsort", f_dictsort}, {"e", f_escape},        {"escape", f_escape},
    {"first", f_first},       {"float", f_float},     {"indent", f_indent},
    {"int", f_int},           {"items", f_items},     {"join", f_join},
    {"last", f_last},         {"length", f_length},   {"list", f_list},
    {"lower", f_lower},       {"map", f_map},         {"max", f_max},
    {"min", f_min},           {"reject", f_reject},   {"rejectattr", f_rejectattr},
    {"replace", f_replace},   {"reverse", f_reverse}, {"round", f_round},
    {"safe", f_safe},         {"select", f_select},   {"selectattr", f_selectattr},
    {"sort", f_sort},         {"string", f_string},   {"sum", f_sum},
    {"title", f_title},       {"tojson", f_tojson},   {"trim", f_trim},
    {"unique", f_unique},     {"upper", f_upper},     {"wordcount", f_wordcount},
};

Filter find_filter(std::string_view name) {
  for (const auto& f : kFilters) {
    if (f.name == name) return f.fn;
  }
  return nullptr;
}

}  // namespace

bool is_known_filter(std::string_view name) { return find_filter(name) != nullptr; }

Value apply_filter(std::string_view name, const Value& value, const CallArgs& args) {
  const Filter fn = find_filter(name);
  if (!fn) fail_runtime("no filter named '" + std::string(name) + "'");
  return fn(value, args);
}

}  // namespace wisp::jinja
