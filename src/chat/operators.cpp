#include "chat/operators.h"

#include <algorithm>
#include <cmath>

#include "chat/builtins.h"
#include "chat/py_text.h"
#include "chat/template_error.h"

namespace wisp::jinja {

void fail_runtime(std::string message) {
  throw ChatTemplateError(ChatTemplateError::Kind::Runtime, std::move(message));
}

void require_defined(const Value& v) {
  if (!v.is_undefined()) return;
  fail_runtime(v.undefined_hint().empty() ? "undefined value used" : v.undefined_hint());
}

namespace {

// Python's type names for TypeError messages.
std::string py_type(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::None: return "NoneType";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::String: return "str";
    case Value::Kind::List: return "list";
    case Value::Kind::Map: return "dict";
    default: return v.type_name();
  }
}

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
  fail_runtime("unsupported operand type(s) for " + std::string(op) + ": '" + py_type(a) + "' and '" + py_type(b) +
               "'");
}

bool is_integral(const Value& v) { return v.is_int() || v.is_bool(); }
std::int64_t integral(const Value& v) { return v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int(); }

void check_overflow(bool overflow) {
  if (overflow) fail_runtime("integer overflow (wisp keeps integers in 64 bits)");
}

Value repeat(const Value& seq, std::int64_t times) {
  if (seq.is_string()) {
    std::string out;
    for (std::int64_t i = 0; i < times; ++i) out += seq.as_string();
    return Value(std::move(out));
  }
  ValueList out;
  for (std::int64_t i = 0; i < times; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
  return Value(std::move(out));
}

Value arithmetic(std::string_view op, const Value& a, const Value& b) {
  if (!a.is_number() || !b.is_number()) unsupported(op, a, b);
  if (is_integral(a) && is_integral(b) && op != "/") {
    const std::int64_t x = integral(a);
    const std::int64_t y = integral(b);
    std::int64_t r = 0;
    if (op == "+") {
      check_overflow(__builtin_add_overflow(x, y, &r));
      return Value(r);
    }
    if (op == "-") {
      check_overflow(__builtin_sub_overflow(x, y, &r));
      return Value(r);
    }
    if (op == "*") {
      check_overflow(__builtin_mul_overflow(x, y, &r));
      return Value(r);
    }
    if (op == "//" || op == "%") {
      if (y == 0) fail_runtime("integer division or modulo by zero");
      std::int64_t q = x / y;
      std::int64_t m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) {
        --q;
        m += y;
      }
      return Value(op == "//" ? q : m);
    }
    if (op == "**") {
      if (y < 0) return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
      std::int64_t result = 1;
      for (std::int64_t i = 0; i < y; ++i) check_overflow(__builtin_mul_overflow(result, x, &result));
      return Value(result);
    }
  }
  const double x = a.to_double();
  const double y = b.to_double();
  if (op == "+") return Value(x + y);
  if (op == "-") return Value(x - y);
  if (op == "*") return Value(x * y);
  if (op == "/") {
    if (y == 0.0) fail_runtime("division by zero");
    return Value(x / y);
  }
  if (op == "//" || op == "%") {
    if (y == 0.0) fail_runtime(op == "%" ? "float modulo" : "float floor division by zero");
    // CPython's float_divmod, so results match to the last bit.
    double mod = std::fmod(x, y);
    double div = (x - mod) / y;
    if (mod != 0.0) {
      if ((y < 0) != (mod < 0)) {
        mod += y;
        div -= 1.0;
      }
    } else {
      mod = std::copysign(0.0, y);
    }
    if (op == "%") return Value(mod);
    double floordiv = std::copysign(0.0, x / y);
    if (div != 0.0) {
      floordiv = std::floor(div);
      if (div - floordiv > 0.5) floordiv += 1.0;
    }
    return Value(floordiv);
  }
  if (op == "**") return Value(std::pow(x, y));
  unsupported(op, a, b);
}

}  // namespace

Value binary_op(std::string_view op, const Value& a, const Value& b) {
  if (op == "~") return Value(a.str() + b.str());
  require_defined(a);
  require_defined(b);
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
    if (a.is_list() && b.is_list()) {
      if (a.is_tuple() != b.is_tuple()) fail_runtime("can only concatenate a list to a list and a tuple to a tuple");
      ValueList out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return a.is_tuple() ? Value::tuple(std::move(out)) : Value(std::move(out));
    }
    if (a.is_string() || b.is_string()) {
      const Value& other = a.is_string() ? b : a;
      fail_runtime(a.is_string() ? "can only concatenate str (not \"" + py_type(other) + "\") to str"
                                 : "unsupported operand type(s) for +: '" + py_type(a) + "' and 'str'");
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && is_integral(b)) return repeat(a, integral(b));
    if ((b.is_string() || b.is_list()) && is_integral(a)) return repeat(b, integral(a));
  }
  return arithmetic(op, a, b);
}

Value unary_minus(const Value& v) {
  require_defined(v);
  if (is_integral(v)) return Value(-integral(v));
  if (v.is_float()) return Value(-v.as_float());
  fail_runtime("bad operand type for unary -: '" + py_type(v) + "'");
}

bool less_than(const Value& a, const Value& b, bool case_sensitive) {
  if (a.is_number() && b.is_number()) {
    if (is_integral(a) && is_integral(b)) return integral(a) < integral(b);
    return a.to_double() < b.to_double();
  }
  if (a.is_string() && b.is_string()) {
    if (case_sensitive) return a.as_string() < b.as_string();
    return text::lower(a.as_string()) < text::lower(b.as_string());
  }
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list();
    const auto& y = b.as_list();
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
      if (!(x[i] == y[i])) return less_than(x[i], y[i], case_sensitive);
    }
    return x.size() < y.size();
  }
  require_defined(a);
  require_defined(b);
  fail_runtime("'<' not supported between instances of '" + py_type(a) + "' and '" + py_type(b) + "'");
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::String:
      if (!item.is_string()) fail_runtime("'in <string>' requires string as left operand, not " + py_type(item));
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::List:
      return std::any_of(container.as_list().begin(), container.as_list().end(),
                         [&](const Value& v) { return v == item; });
    case Value::Kind::Map: return container.as_map().find(item) != nullptr;
    case Value::Kind::Undefined: return false;  // Jinja's Undefined iterates as empty
    default: fail_runtime("argument of type '" + py_type(container) + "' is not iterable");
  }
}

bool compare(std::string_view op, const Value& a, const Value& b) {
  if (op == "==") return a == b;
  if (op == "!=") return !(a == b);
  if (op == "in") return contains(b, a);
  if (op == "notin") return !contains(b, a);
  if (op == "<") return less_than(a, b);
  if (op == ">") return less_than(b, a);
  if (op == "<=") return !less_than(b, a);
  if (op == ">=") return !less_than(a, b);
  fail_runtime("unknown comparison " + std::string(op));
}

Value get_attribute(const Value& object, std::string_view name) {
  require_defined(object);
  if (auto method = bound_method(object, name)) return *method;
  if (object.is_map()) {
    if (const Value* v = object.as_map().find(name)) return *v;
  } else if (object.is_object()) {
    if (const Value* v = object.as_object().attributes.find(name)) return *v;
  }
  return Value::undefined(quoted(object.type_name()) + " has no attribute " + quoted(name));
}

namespace {

// Python's index normalisation: negative counts from the end; nullopt when out of range.
std::optional<std::size_t> normalize_index(const Value& key, std::size_t size) {
  if (!is_integral(key)) return std::nullopt;
  std::int64_t i = integral(key);
  if (i < 0) i += static_cast<std::int64_t>(size);
  if (i < 0 || i >= static_cast<std::int64_t>(size)) return std::nullopt;
  return static_cast<std::size_t>(i);
}

}  // namespace

Value get_item(const Value& object, const Value& key) {
  require_defined(object);
  const std::string missing = quoted(object.type_name()) + " has no element " + key.repr();
  switch (object.kind()) {
    case Value::Kind::List:
      if (auto i = normalize_index(key, object.as_list().size())) return object.as_list()[*i];
      return Value::undefined(missing);
    case Value::Kind::String: {
      const std::u32string cps = text::decode(object.as_string());
      if (auto i = normalize_index(key, cps.size())) return Value(text::encode(cps.substr(*i, 1)));
      return Value::undefined(missing);
    }
    case Value::Kind::Map:
      if (const Value* v = object.as_map().find(key)) return *v;
      return Value::undefined("'" + object.type_name() + "' has no attribute " + key.repr());
    default:
      if (key.is_string()) return get_attribute(object, key.as_string());
      return Value::undefined(missing);
  }
}

namespace {

// PySlice_AdjustIndices: clamps start/stop for the step's direction.
std::vector<std::size_t> slice_indices(std::size_t size, const Value& start_v, const Value& stop_v,
                                       const Value& step_v) {
  const auto as_int = [](const Value& v, const char* what) -> std::optional<std::int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!is_integral(v)) fail_runtime(std::string("slice ") + what + " must be an integer or None");
    return integral(v);
  };
  const std::int64_t n = static_cast<std::int64_t>(size);
  const std::int64_t step = as_int(step_v, "step").value_or(1);
  if (step == 0) fail_runtime("slice step cannot be zero");
  const auto clamp = [&](std::optional<std::int64_t> i, std::int64_t def) {
    if (!i) return def;
    std::int64_t v = *i;
    if (v < 0) v += n;
    if (step > 0) return std::clamp<std::int64_t>(v, 0, n);
    return std::clamp<std::int64_t>(v, -1, n - 1);
  };
  const std::int64_t start = clamp(as_int(start_v, "start"), step > 0 ? 0 : n - 1);
  const std::int64_t stop = clamp(as_int(stop_v, "stop"), step > 0 ? n : -1);
  std::vector<std::size_t> out;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(static_cast<std::size_t>(i));
  return out;
}

}  // namespace

Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step) {
  require_defined(object);
  if (object.is_list()) {
    ValueList out;
    for (std::size_t i : slice_indices(object.as_list().size(), start, stop, step)) out.push_back(object.as_list()[i]);
    return object.is_tuple() ? Value::tuple(std::move(out)) : Value(std::move(out));
  }
  if (object.is_string()) {
    const std::u32string cps = text::decode(object.as_string());
    std::u32string out;
    for (std::size_t i : slice_indices(cps.size(), start, stop, step)) out.push_back(cps[i]);
    return Value(text::encode(out));
  }
  fail_runtime("'" + object.type_name() + "' is not subscriptable with a slice");
}

ValueList iterate(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return v.as_list();
    case Value::Kind::Map: {
      ValueList keys;
      for (const auto& [k, value] : v.as_map().entries()) keys.push_back(k);
      return keys;
    }
    case Value::Kind::String: {
      ValueList chars;
      for (char32_t c : text::decode(v.as_string())) chars.emplace_back(text::encode(std::u32string(1, c)));
      return chars;
    }
    default: fail_runtime("'" + py_type(v) + "' object is not iterable");
  }
}

}  // namespace wisp::jinja
