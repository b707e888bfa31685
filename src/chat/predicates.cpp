// Jinja's tests (`x is string`, `x is not none`, `n is divisibleby 3`), with Python's type model:
// a bool is a number but not an integer, strings and dicts are iterable, and Jinja's undefined
// value counts as iterable and as a sequence (it iterates as empty).
#include "chat/builtins.h"
#include "chat/operators.h"
#include "chat/py_text.h"

namespace wisp::jinja {
namespace {

using Test = bool (*)(const Value&, const CallArgs&);

const Value& argument(const CallArgs& args, std::string_view test) {
  const Value* v = args.get(0, "other");
  if (!v) v = args.get(0, "value");
  if (!v) v = args.get(0, "num");
  if (!v) v = args.get(0, "seq");
  if (!v) fail_runtime("test '" + std::string(test) + "' needs an argument");
  return *v;
}

bool t_defined(const Value& v, const CallArgs&) { return !v.is_undefined(); }
bool t_undefined(const Value& v, const CallArgs&) { return v.is_undefined(); }
bool t_none(const Value& v, const CallArgs&) { return v.is_none(); }
bool t_boolean(const Value& v, const CallArgs&) { return v.is_bool(); }
bool t_true(const Value& v, const CallArgs&) { return v.is_bool() && v.as_bool(); }
bool t_false(const Value& v, const CallArgs&) { return v.is_bool() && !v.as_bool(); }
bool t_integer(const Value& v, const CallArgs&) { return v.is_int(); }
bool t_float(const Value& v, const CallArgs&) { return v.is_float(); }
bool t_number(const Value& v, const CallArgs&) { return v.is_number(); }
bool t_string(const Value& v, const CallArgs&) { return v.is_string(); }
bool t_mapping(const Value& v, const CallArgs&) { return v.is_map(); }
bool t_callable(const Value& v, const CallArgs&) { return v.is_callable(); }
bool t_iterable(const Value& v, const CallArgs&) {
  return v.is_undefined() || v.is_string() || v.is_list() || v.is_map();
}
bool t_sequence(const Value& v, const CallArgs& args) { return t_iterable(v, args); }

bool t_lower(const Value& v, const CallArgs&) {
  const std::string s = v.str();
  return text::lower(s) == s && text::upper(s) != s;
}
bool t_upper(const Value& v, const CallArgs&) {
  const std::string s = v.str();
  return text::upper(s) == s && text::lower(s) != s;
}

std::int64_t integer_of(const Value& v) {
  require_defined(v);
  if (v.is_bool()) return v.as_bool();
  if (v.is_int()) return v.as_int();
  fail_runtime("expected an integer, got " + v.type_name());
}
bool t_odd(const Value& v, const CallArgs&) { return binary_op("%", Value(integer_of(v)), Value(2)).as_int() == 1; }
bool t_even(const Value& v, const CallArgs&) { return binary_op("%", Value(integer_of(v)), Value(2)).as_int() == 0; }
bool t_divisibleby(const Value& v, const CallArgs& args) {
  return !binary_op("%", v, argument(args, "divisibleby")).truthy();
}

bool t_eq(const Value& v, const CallArgs& args) { return v == argument(args, "=="); }
bool t_ne(const Value& v, const CallArgs& args) { return !(v == argument(args, "!=")); }
bool t_lt(const Value& v, const CallArgs& args) { return compare("<", v, argument(args, "<")); }
bool t_le(const Value& v, const CallArgs& args) { return compare("<=", v, argument(args, "<=")); }
bool t_gt(const Value& v, const CallArgs& args) { return compare(">", v, argument(args, ">")); }
bool t_ge(const Value& v, const CallArgs& args) { return compare(">=", v, argument(args, ">=")); }
bool t_in(const Value& v, const CallArgs& args) { return contains(argument(args, "in"), v); }

// Python's `is`: identity for containers, value equality for the immutable singletons and scalars
// (small ints and interned strings behave so in CPython).
bool t_sameas(const Value& v, const CallArgs& args) {
  const Value& other = argument(args, "sameas");
  if (v.kind() != other.kind()) return false;
  switch (v.kind()) {
    case Value::Kind::List: return &v.as_list() == &other.as_list();
    case Value::Kind::Map: return &v.as_map() == &other.as_map();
    default: return v == other;
  }
}

struct NamedTest {
  std::string_view name;
  Test fn;
};

constexpr NamedTest kTests[] = {
    {"defined", t_defined},
    {"undefined", t_undefined},
    {"none", t_none},
    {"boolean", t_boolean},
    {"true", t_true},
    {"false", t_false},
    {"integer", t_integer},
    {"float", t_float},
    {"number", t_number},
    {"string", t_string},
    {"mapping", t_mapping},
    {"iterable", t_iterable},
    {"sequence", t_sequence},
    {"callable", t_callable},
    {"lower", t_lower},
    {"upper", t_upper},
    {"odd", t_odd},
    {"even", t_even},
    {"divisibleby", t_divisibleby},
    {"eq", t_eq},
    {"equalto", t_eq},
    {"==", t_eq},
    {"ne", t_ne},
    {"!=", t_ne},
    {"lt", t_lt},
    {"lessthan", t_lt},
    {"<", t_lt},
    {"le", t_le},
    {"<=", t_le},
    {"gt", t_gt},
    {"greaterthan", t_gt},
    {">", t_gt},
    {"ge", t_ge},
    {">=", t_ge},
    {"in", t_in},
    {"sameas", t_sameas},
};

Test find_test(std::string_view name) {
  for (const auto& t : kTests) {
    if (t.name == name) return t.fn;
  }
  return nullptr;
}

}  // namespace

bool is_known_test(std::string_view name) { return find_test(name) != nullptr; }

bool apply_test(std::string_view name, const Value& value, const CallArgs& args) {
  const Test fn = find_test(name);
  if (!fn) fail_runtime("no test named '" + std::string(name) + "'");
  return fn(value, args);
}

}  // namespace wisp::jinja
