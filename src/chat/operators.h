// Python's operators over template values, as Jinja evaluates them: arithmetic with Python's int
// and float rules (floor division and modulo round toward -inf, `/` is always a float), `~`
// concatenation, chained comparisons, `in`, and the sandbox's attribute and item lookup (a missing
// attribute or index is undefined, not an error; using that undefined value is the error).
//
// Each function throws ChatTemplateError(Runtime) without a location; the interpreter adds it.
#pragma once

#include <string_view>

#include "chat/value.h"

namespace wisp::jinja {

[[noreturn]] void fail_runtime(std::string message);
// Throws the error an undefined value carries ("'x' is undefined", "'dict object' has no
// attribute 'y'") when `v` is undefined.
void require_defined(const Value& v);

Value binary_op(std::string_view op, const Value& left, const Value& right);
Value unary_minus(const Value& v);
bool compare(std::string_view op, const Value& left, const Value& right);  // ==, !=, <, <=, >, >=, in, notin
bool contains(const Value& container, const Value& item);                  // item in container

// obj.name: methods of str and dict first (as Python's getattr), then dict keys and object
// attributes. obj[key]: list and str indices (negative from the end), dict keys, then attributes.
Value get_attribute(const Value& object, std::string_view name);
Value get_item(const Value& object, const Value& key);
// obj[start:stop:step] on lists and strings; absent parts are undefined values.
Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step);

// What `for x in v` iterates: list items, dict keys, string characters; nothing for undefined.
ValueList iterate(const Value& v);

// Sort order for the sort/dictsort/min/max filters (Python's <; strings optionally case-folded).
bool less_than(const Value& a, const Value& b, bool case_sensitive = true);

}  // namespace wisp::jinja
