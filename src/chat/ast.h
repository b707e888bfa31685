// The syntax tree of a parsed template. Expressions and statements are small structs tagged with
// their kind; the interpreter switches on the kind. Every node keeps the source offset it came
// from, so an error at render time can name its line and column.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chat/value.h"

namespace wisp::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Expr {
  enum class Kind {
    Literal,      // value
    Name,         // name
    ListLiteral,  // items (tuples too: Python tuples behave as read-only lists here)
    DictLiteral,  // items as key, value pairs
    GetAttr,      // object.name
    GetItem,      // object[index]
    Slice,        // object[start:stop:step]; absent parts are null
    Call,         // callee(args, name=kwargs)
    Filter,       // object | name(args)
    Test,         // object is [not] name(args)
    Unary,        // op: "not", "-", "+"
    Binary,       // op: "and", "or", "+", "-", "*", "/", "//", "%", "**", "~"
    Compare,      // object (ops[i] items[i])...; ops: ==, !=, <, <=, >, >=, in, notin
    Conditional,  // items[0] if object else items[1] (items[1] may be null)
  };

  Kind kind;
  std::size_t offset;
  Value value;                                            // Literal
  std::string name;                                       // Name, GetAttr, Filter, Test, Unary/Binary operator
  ExprPtr object;                                         // the operand most kinds act on
  std::vector<ExprPtr> items;                             // list items, call/filter/test arguments, slice parts, ...
  std::vector<std::pair<std::string, ExprPtr>> keywords;  // keyword arguments
  std::vector<std::string> ops;                           // Compare operators
  bool negated = false;                                   // Test: "is not"
  bool is_tuple = false;                                  // ListLiteral written as a tuple
  int depth = 1;                                          // height of this subtree (see ExpressionParser::finish)

  Expr(Kind k, std::size_t off) : kind(k), offset(off) {}
};

// An assignment target: one name, a tuple of names (`for k, v in ...`), or `ns.attr`.
struct Target {
  std::vector<std::string> names;
  bool tuple = false;
  std::string attribute;  // set only for `{% set ns.attr = ... %}` (names[0] is the namespace)
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null when required
};

struct Stmt {
  enum class Kind {
    Text,      // text
    Print,     // expr
    If,        // conditions[i] -> bodies[i]; else_body
    For,       // target in expr [if filter]: body, else_body
    Set,       // target = expr
    SetBlock,  // target = rendered body
    Macro,     // text is the name; params; body
    Break,
    Continue,
    Scope,  // a body rendered in place (the HF {% generation %} block)
  };

  Kind kind;
  std::size_t offset;
  std::string text;
  ExprPtr expr;
  ExprPtr filter;
  Target target;
  std::vector<ExprPtr> conditions;
  std::vector<Body> bodies;
  Body body;
  Body else_body;
  std::vector<MacroParam> params;

  Stmt(Kind k, std::size_t off) : kind(k), offset(off) {}
};

}  // namespace wisp::jinja
