#include "chat/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat/py_text.h"
#include "chat/template_error.h"

namespace wisp::jinja {

const Value* ValueMap::find(const Value& key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

const Value* ValueMap::find(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k.is_string() && k.as_string() == key) return &v;
  }
  return nullptr;
}

void ValueMap::set(Value key, Value value) {
  for (auto& [k, v] : entries_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(key), std::move(value));
}

const Value* CallArgs::get(std::size_t position, std::string_view name) const {
  const Value* by_keyword = nullptr;
  for (const auto& [k, v] : keyword) {
    if (k == name) by_keyword = &v;
  }
  if (position < positional.size()) {
    if (by_keyword) {
      throw ChatTemplateError(ChatTemplateError::Kind::Runtime,
                              "got multiple values for argument '" + std::string(name) + "'");
    }
    return &positional[position];
  }
  return by_keyword;
}

void CallArgs::check(std::string_view callee, std::initializer_list<std::string_view> parameters) const {
  if (positional.size() > parameters.size()) {
    throw ChatTemplateError(ChatTemplateError::Kind::Runtime, std::string(callee) + "() takes at most " +
                                                                  std::to_string(parameters.size()) + " arguments, " +
                                                                  std::to_string(positional.size()) + " given");
  }
  for (const auto& [k, v] : keyword) {
    bool known = false;
    for (auto p : parameters) known = known || p == k;
    if (!known) {
      throw ChatTemplateError(ChatTemplateError::Kind::Runtime,
                              std::string(callee) + "() got an unexpected keyword argument '" + k + "'");
    }
  }
}

double Value::to_double() const {
  if (is_bool()) return as_bool() ? 1.0 : 0.0;
  if (is_int()) return static_cast<double>(as_int());
  return as_float();
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return as_bool();
    case Kind::Int: return as_int() != 0;
    case Kind::Float: return as_float() != 0.0;
    case Kind::String: return !as_string().empty();
    case Kind::List: return !as_list().empty();
    case Kind::Map: return as_map().size() != 0;
    case Kind::Object:
    case Kind::Callable: return true;
  }
  return false;
}

std::string Value::str() const {
  switch (kind()) {
    case Kind::Undefined: return "";
    case Kind::String: return as_string();
    default: return repr();
  }
}

std::string Value::repr() const {
  switch (kind()) {
    case Kind::Undefined: return "";
    case Kind::None: return "None";
    case Kind::Bool: return as_bool() ? "True" : "False";
    case Kind::Int: return std::to_string(as_int());
    case Kind::Float: return float_repr(as_float());
    case Kind::String: return string_repr(as_string());
    case Kind::List: {
      std::string out = tuple_ ? "(" : "[";
      bool first = true;
      for (const auto& item : as_list()) {
        if (!first) out += ", ";
        out += item.repr();
        first = false;
      }
      if (tuple_ && as_list().size() == 1) out += ",";
      return out + (tuple_ ? ")" : "]");
    }
    case Kind::Map: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, v] : as_map().entries()) {
        if (!first) out += ", ";
        out += k.repr() + ": " + v.repr();
        first = false;
      }
      return out + "}";
    }
    case Kind::Object: {
      const auto& object = as_object();
      if (object.type == AttributeObject::Type::Loop) return "<LoopContext>";
      Value attributes{ValueMap(object.attributes)};
      return "<Namespace " + attributes.repr() + ">";
    }
    case Kind::Callable: return "<function " + as_callable().name + ">";
  }
  return "";
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType object";
    case Kind::Bool: return "bool object";
    case Kind::Int: return "int object";
    case Kind::Float: return "float object";
    case Kind::String: return "str object";
    case Kind::List: return "list object";
    case Kind::Map: return "dict object";
    case Kind::Object:
      return as_object().type == AttributeObject::Type::Loop ? "LoopContext object" : "Namespace object";
    case Kind::Callable: return "function object";
  }
  return "object";
}

bool operator==(const Value& a, const Value& b) {
  using Kind = Value::Kind;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.to_double() == b.to_double();
    const auto as_integer = [](const Value& v) { return v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int(); };
    return as_integer(a) == as_integer(b);
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::Undefined:
    case Kind::None: return true;
    case Kind::String: return a.as_string() == b.as_string();
    case Kind::List: {
      if (a.is_tuple() != b.is_tuple()) return false;
      const auto& x = a.as_list();
      const auto& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] == y[i])) return false;
      }
      return true;
    }
    case Kind::Map: {
      const auto& x = a.as_map();
      const auto& y = b.as_map();
      if (x.size() != y.size()) return false;
      for (const auto& [k, v] : x.entries()) {
        const Value* other = y.find(k);
        if (!other || !(*other == v)) return false;
      }
      return true;
    }
    case Kind::Object: return &a.as_object() == &b.as_object();
    case Kind::Callable: return &a.as_callable() == &b.as_callable();
    default: return false;
  }
}

std::string quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out += text;
  out += '\'';
  return out;
}

std::string float_repr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  if (f == 0.0) return std::signbit(f) ? "-0.0" : "0.0";
  // Shortest round-trip digits, then Python's layout: positional for 1e-4 <= |f| < 1e16.
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string sci(buf, result.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const std::size_t e_pos = sci.find('e');
  std::string digits = sci.substr(0, e_pos);
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  const int n = static_cast<int>(digits.size());
  if (exponent >= -4 && exponent < 16) {
    std::string out;
    if (exponent < 0) {
      out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    } else if (exponent + 1 >= n) {
      out = digits + std::string(static_cast<std::size_t>(exponent + 1 - n), '0') + ".0";
    } else {
      out = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    }
    return sign + out;
  }
  std::string mantissa = digits.substr(0, 1);
  if (n > 1) mantissa += "." + digits.substr(1);
  char exp_buf[16];
  std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return sign + mantissa + exp_buf;
}

namespace {

// Code points Python's str.isprintable() rejects, beyond the C0/C1 controls: non-ASCII spaces,
// format characters, line/paragraph separators, surrogates and private use.
bool is_unprintable(char32_t c) {
  if (c < 0x20 || (c >= 0x7F && c <= 0xA0)) return true;
  if (c == 0xAD || c == 0x61C || c == 0x6DD || c == 0x70F || c == 0x180E || c == 0x1680) return true;
  if (c >= 0x600 && c <= 0x605) return true;
  if (c >= 0x2000 && c <= 0x200F) return true;
  if (c >= 0x2028 && c <= 0x202F) return true;
  if (c >= 0x205F && c <= 0x206F) return true;
  if (c == 0x3000 || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB)) return true;
  if (c >= 0xD800 && c <= 0xF8FF) return true;  // surrogates (escaped bytes) and private use
  return false;
}

}  // namespace

std::string string_repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (char32_t c : text::decode(s)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<char32_t>(quote)) {
      out += '\\';
      out += quote;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (is_unprintable(c)) {
      char buf[16];
      if (c < 0x100) {
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      } else if (c < 0x10000) {
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      } else {
        std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
      }
      out += buf;
    } else {
      text::append_utf8(out, c);
    }
  }
  out += quote;
  return out;
}

}  // namespace wisp::jinja
