#include "chat/json_value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "chat/py_text.h"
#include "chat/template_error.h"

namespace wisp::jinja {

Value from_json(const nlohmann::ordered_json& json) {
  using T = nlohmann::ordered_json::value_t;
  switch (json.type()) {
    case T::null: return Value(nullptr);
    case T::boolean: return Value(json.get<bool>());
    case T::number_integer: return Value(json.get<std::int64_t>());
    case T::number_unsigned: {
      const auto u = json.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return Value(static_cast<double>(u));
      return Value(static_cast<std::int64_t>(u));
    }
    case T::number_float: return Value(json.get<double>());
    case T::string: return Value(json.get<std::string>());
    case T::array: {
      ValueList list;
      list.reserve(json.size());
      for (const auto& item : json) list.push_back(from_json(item));
      return Value(std::move(list));
    }
    case T::object: {
      ValueMap map;
      for (const auto& [k, v] : json.items()) map.set(Value(k), from_json(v));
      return Value(std::move(map));
    }
    default: throw ChatTemplateError(ChatTemplateError::Kind::Runtime, "unsupported JSON value (binary or discarded)");
  }
}

namespace {

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (char32_t c : text::decode(s)) {
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    char buf[16];
    if (c < 0x20) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else if (ensure_ascii && c >= 0x80) {
      if (c >= 0x10000) {
        const char32_t v = c - 0x10000;
        std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                      static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
      } else {
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
      }
      out += buf;
    } else {
      text::append_utf8(out, c);
    }
  }
  out += '"';
}

std::string json_float(double f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
  return float_repr(f);
}

class Dumper {
 public:
  explicit Dumper(const JsonDumpOptions& options) : options_(options) {
    if (options.separators) {
      item_sep_ = options.separators->first;
      key_sep_ = options.separators->second;
    } else {
      item_sep_ = options.indent ? "," : ", ";
      key_sep_ = ": ";
    }
  }

  void dump(const Value& v, int depth) {
    switch (v.kind()) {
      case Value::Kind::None: out_ += "null"; return;
      case Value::Kind::Bool: out_ += v.as_bool() ? "true" : "false"; return;
      case Value::Kind::Int: out_ += std::to_string(v.as_int()); return;
      case Value::Kind::Float: out_ += json_float(v.as_float()); return;
      case Value::Kind::String: append_json_string(out_, v.as_string(), options_.ensure_ascii); return;
      case Value::Kind::List: dump_list(v.as_list(), depth); return;
      case Value::Kind::Map: dump_map(v.as_map(), depth); return;
      case Value::Kind::Undefined:
        throw ChatTemplateError(ChatTemplateError::Kind::Runtime, "Object of type Undefined is not JSON serializable");
      default:
        throw ChatTemplateError(ChatTemplateError::Kind::Runtime,
                                "Object of type " + v.type_name() + " is not JSON serializable");
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int depth) {
    if (!options_.indent) return;
    out_ += '\n';
    for (int i = 0; i < depth; ++i) out_ += *options_.indent;
  }

  void dump_list(const ValueList& list, int depth) {
    if (list.empty()) {
      out_ += "[]";
      return;
    }
    out_ += '[';
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i > 0) out_ += item_sep_;
      newline(depth + 1);
      dump(list[i], depth + 1);
    }
    newline(depth);
    out_ += ']';
  }

  static std::string key_text(const Value& key) {
    switch (key.kind()) {
      case Value::Kind::String: return key.as_string();
      case Value::Kind::Int: return std::to_string(key.as_int());
      case Value::Kind::Float: return json_float(key.as_float());
      case Value::Kind::Bool: return key.as_bool() ? "true" : "false";
      case Value::Kind::None: return "null";
      default:
        throw ChatTemplateError(ChatTemplateError::Kind::Runtime,
                                "keys must be str, int, float, bool or None, not " + key.type_name());
    }
  }

  void dump_map(const ValueMap& map, int depth) {
    if (map.size() == 0) {
      out_ += "{}";
      return;
    }
    std::vector<const std::pair<Value, Value>*> entries;
    for (const auto& e : map.entries()) entries.push_back(&e);
    if (options_.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto* a, const auto* b) { return key_text(a->first) < key_text(b->first); });
    }
    out_ += '{';
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) out_ += item_sep_;
      newline(depth + 1);
      append_json_string(out_, key_text(entries[i]->first), options_.ensure_ascii);
      out_ += key_sep_;
      dump(entries[i]->second, depth + 1);
    }
    newline(depth);
    out_ += '}';
  }

  const JsonDumpOptions& options_;
  std::string item_sep_;
  std::string key_sep_;
  std::string out_;
};

}  // namespace

std::string json_dumps(const Value& value, const JsonDumpOptions& options) {
  Dumper dumper(options);
  dumper.dump(value, 0);
  return dumper.take();
}

}  // namespace wisp::jinja
