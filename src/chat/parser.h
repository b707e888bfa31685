// The template parser: tokens to a syntax tree, following the grammar and operator precedence of
// Jinja2's own parser (lowest first): `x if c else y`, or, and, not, comparisons (chainable,
// `in`, `not in`), + -, ~, * / // %, **, unary - +, then postfix `.attr`, `[i]`, `[a:b:c]`,
// `(...)`, and filters `|f` and tests `is [not] t`, which bind tighter than any binary operator
// (`a + b|trim` trims b only).
//
// Statements: if/elif/else, for (tuple targets, `if` filter, else), set (name, tuple, ns.attr,
// block form), macro (defaults), break/continue, and Hugging Face's {% generation %} block.
// Anything else (extends, include, import, call, filter blocks) is a syntax error that says the tag
// is not supported.
#pragma once

#include <memory>
#include <string>

#include "chat/ast.h"
#include "chat/lexer.h"

namespace wisp::jinja {

struct Program {
  std::string source;  // normalized; offsets in the tree index into it
  Body body;
};

// Throws ChatTemplateError(Syntax) naming the line and column of the first error.
std::shared_ptr<const Program> parse_program(std::string_view source);

}  // namespace wisp::jinja
