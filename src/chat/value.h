// Value: what a Jinja expression evaluates to. Python's object model cut down to what chat
// templates use: undefined, None, bool, int, float, str, list, dict (insertion-ordered, like
// Python's), attribute objects (namespace(), the loop variable) and callables (macros, builtins,
// bound methods).
//
// Lists and dicts are immutable once built (the sandbox HF renders in forbids list.append and
// friends), so they are shared, not copied, between variables. A namespace is the one mutable
// thing: `{% set ns.x = ... %}` must be seen by every holder of the same namespace.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace wisp::jinja {

class Value;
using ValueList = std::vector<Value>;

// A dict with Python's insertion order. Chat dicts hold a handful of keys, so lookup is linear.
class ValueMap {
 public:
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  void set(Value key, Value value);  // replaces in place, keeping the key's position
  const std::vector<std::pair<Value, Value>>& entries() const { return entries_; }
  std::size_t size() const;  // defined below Value: the pair's size needs Value complete (clang)

 private:
  std::vector<std::pair<Value, Value>> entries_;
};

// Positional and keyword arguments of one call.
struct CallArgs {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> keyword;

  // Python's binding: the argument named `name` at `position`, or nullptr if absent. Throws
  // ChatTemplateError when given both ways.
  const Value* get(std::size_t position, std::string_view name) const;
  // Rejects arguments beyond the parameter names listed (the callee's signature).
  void check(std::string_view callee, std::initializer_list<std::string_view> parameters) const;
};

struct Callable {
  std::string name;
  std::function<Value(const CallArgs&)> call;
};

// An object with attributes and no mapping behaviour: namespace() (assignable) or the loop
// variable (read-only).
struct AttributeObject {
  enum class Type { Namespace, Loop };
  Type type;
  ValueMap attributes;
};

class Value {
 public:
  enum class Kind { Undefined, None, Bool, Int, Float, String, List, Map, Object, Callable };

  Value() = default;  // undefined
  Value(std::nullptr_t) : v_(std::nullptr_t{}) {}
  Value(bool b) : v_(b) {}
  Value(int i) : v_(static_cast<std::int64_t>(i)) {}
  Value(std::int64_t i) : v_(i) {}
  Value(double f) : v_(f) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(ValueList list) : v_(std::make_shared<const ValueList>(std::move(list))) {}
  Value(ValueMap map) : v_(std::make_shared<const ValueMap>(std::move(map))) {}
  Value(std::shared_ptr<AttributeObject> object) : v_(std::move(object)) {}
  Value(Callable callable) : v_(std::make_shared<const Callable>(std::move(callable))) {}

  // An undefined value that remembers why it is undefined, for the error when it is misused
  // (e.g. "'dict object' has no attribute 'content'").
  static Value undefined(std::string hint) {
    Value v;
    v.v_ = Undefined{std::move(hint)};
    return v;
  }
  // A Python tuple: a list that prints as (a, b) and never equals a list.
  static Value tuple(ValueList items) {
    Value v(std::move(items));
    v.tuple_ = true;
    return v;
  }

  Kind kind() const { return static_cast<Kind>(v_.index()); }
  bool is_undefined() const { return kind() == Kind::Undefined; }
  bool is_none() const { return kind() == Kind::None; }
  bool is_bool() const { return kind() == Kind::Bool; }
  bool is_int() const { return kind() == Kind::Int; }
  bool is_float() const { return kind() == Kind::Float; }
  bool is_number() const { return is_int() || is_float() || is_bool(); }  // Python: bool is an int
  bool is_string() const { return kind() == Kind::String; }
  bool is_list() const { return kind() == Kind::List; }  // tuples included
  bool is_tuple() const { return tuple_; }
  bool is_map() const { return kind() == Kind::Map; }
  bool is_object() const { return kind() == Kind::Object; }
  bool is_callable() const { return kind() == Kind::Callable; }

  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  double as_float() const { return std::get<double>(v_); }
  // Numeric value of a bool, int or float.
  double to_double() const;
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const ValueList& as_list() const { return *std::get<std::shared_ptr<const ValueList>>(v_); }
  const ValueMap& as_map() const { return *std::get<std::shared_ptr<const ValueMap>>(v_); }
  AttributeObject& as_object() const { return *std::get<std::shared_ptr<AttributeObject>>(v_); }
  const Callable& as_callable() const { return *std::get<std::shared_ptr<const Callable>>(v_); }
  const std::string& undefined_hint() const { return std::get<Undefined>(v_).hint; }

  // Python truthiness.
  bool truthy() const;
  // Python str(): what {{ value }} prints. Undefined prints as "".
  std::string str() const;
  // Python repr(): how values print inside a list or dict.
  std::string repr() const;
  // Jinja's name for the type in error messages ("dict object", "str object", ...).
  std::string type_name() const;

  friend bool operator==(const Value& a, const Value& b);

 private:
  struct Undefined {
    std::string hint;
  };
  std::variant<Undefined, std::nullptr_t, bool, std::int64_t, double, std::string, std::shared_ptr<const ValueList>,
               std::shared_ptr<const ValueMap>, std::shared_ptr<AttributeObject>, std::shared_ptr<const Callable>>
      v_;
  bool tuple_ = false;
};

// 'text' in single quotes, for error messages. (A function rather than "'" + s + "'": GCC 12
// reports false -Wrestrict warnings on that concatenation.)
std::string quoted(std::string_view text);

// Python's float repr: the shortest string that reads back to the same double ("1.0", "1e+16",
// "0.30000000000000004", "inf", "nan").
std::string float_repr(double f);
// Python's repr of a str: single quotes unless the text holds ' and no ", escapes as Python does.
std::string string_repr(std::string_view s);

inline std::size_t ValueMap::size() const { return entries_.size(); }

}  // namespace wisp::jinja
