// The expression half of the parser: Jinja2's expression grammar and operator precedence (see
// parser.h for the summary). Statement parsing builds on it.
#pragma once

#include <initializer_list>
#include <string_view>

#include "chat/ast.h"
#include "chat/token_cursor.h"

namespace wisp::jinja {

class ExpressionParser : protected TokenCursor {
 public:
  using TokenCursor::TokenCursor;

 protected:
  // An expression, or a tuple when commas separate several (`{% set a, b = 1, 2 %}`). Stops before
  // a name in `extra_ends` (the `recursive` of a for tag).
  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_ends,
                      bool explicit_parentheses = false);
  // `with_condexpr` false leaves a trailing `if` alone (it filters a for loop).
  ExprPtr parse_expression(bool with_condexpr);

 private:
  // Records a finished node's height and refuses trees taller than kMaxExpressionDepth: chains
  // like a + b + c ... or x|f|g ... grow without recursion here, but rendering and destroying the
  // tree recurse once per level.
  ExprPtr finish(ExprPtr node);
  static constexpr int kMaxExpressionDepth = 400;

  bool at_tuple_end(std::initializer_list<std::string_view> extra_ends) const;
  ExprPtr parse_condexpr();
  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, std::size_t offset);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_list();
  ExprPtr parse_dict();
  ExprPtr parse_postfix(ExprPtr node);
  ExprPtr parse_filter_expr(ExprPtr node);
  ExprPtr parse_subscript(ExprPtr object);
  void parse_call_args(Expr& node);
  ExprPtr parse_call(ExprPtr callee);
  std::string parse_dotted_name();
  ExprPtr parse_filter(ExprPtr object);
  ExprPtr parse_test(ExprPtr object);
};

}  // namespace wisp::jinja
