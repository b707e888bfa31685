#include "chat/expression_parser.h"

#include <algorithm>

#include "chat/builtins.h"

namespace wisp::jinja {
namespace {

using EK = Expr::Kind;

ExprPtr make(EK kind, std::size_t offset) { return std::make_unique<Expr>(kind, offset); }

}  // namespace

ExprPtr ExpressionParser::finish(ExprPtr node) {
  int height = node->object ? node->object->depth : 0;
  for (const auto& item : node->items) {
    if (item) height = std::max(height, item->depth);
  }
  for (const auto& [name, value] : node->keywords) height = std::max(height, value->depth);
  node->depth = height + 1;
  if (node->depth > kMaxExpressionDepth) {
    fail_at("expression nested too deeply (more than " + std::to_string(kMaxExpressionDepth) + " levels)",
            node->offset);
  }
  return node;
}

bool ExpressionParser::at_tuple_end(std::initializer_list<std::string_view> extra_ends) const {
  const auto type = current().type;
  if (type == TokenType::VariableEnd || type == TokenType::BlockEnd || type == TokenType::End) return true;
  if (is_op(")")) return true;
  for (auto end : extra_ends) {
    if (is_name(end)) return true;
  }
  return false;
}

ExprPtr ExpressionParser::parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_ends,
                                      bool explicit_parentheses) {
  const std::size_t offset = current().offset;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_op(",");
    if (at_tuple_end(extra_ends)) break;
    items.push_back(parse_expression(with_condexpr));
    if (is_op(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items[0]);
    if (!explicit_parentheses) fail("expected an expression, got " + describe(current()));
  }
  auto tuple = make(EK::ListLiteral, offset);
  tuple->items = std::move(items);
  tuple->is_tuple = true;
  return finish(std::move(tuple));
}

ExprPtr ExpressionParser::parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

ExprPtr ExpressionParser::parse_condexpr() {
  const NestingGuard guard(*this);
  ExprPtr expr = parse_or();
  while (is_name("if")) {
    const std::size_t offset = advance().offset;
    auto node = make(EK::Conditional, offset);
    node->object = parse_or();
    node->items.push_back(std::move(expr));
    node->items.push_back(skip_name("else") ? parse_condexpr() : nullptr);
    expr = finish(std::move(node));
  }
  return expr;
}

ExprPtr ExpressionParser::binary(std::string op, ExprPtr left, ExprPtr right, std::size_t offset) {
  auto node = make(EK::Binary, offset);
  node->name = std::move(op);
  node->object = std::move(left);
  node->items.push_back(std::move(right));
  return finish(std::move(node));
}

ExprPtr ExpressionParser::parse_or() {
  ExprPtr left = parse_and();
  while (is_name("or")) {
    const std::size_t offset = advance().offset;
    left = binary("or", std::move(left), parse_and(), offset);
  }
  return left;
}

ExprPtr ExpressionParser::parse_and() {
  ExprPtr left = parse_not();
  while (is_name("and")) {
    const std::size_t offset = advance().offset;
    left = binary("and", std::move(left), parse_not(), offset);
  }
  return left;
}

ExprPtr ExpressionParser::parse_not() {
  const NestingGuard guard(*this);
  if (is_name("not")) {
    auto node = make(EK::Unary, advance().offset);
    node->name = "not";
    node->object = parse_not();
    return node;
  }
  return parse_compare();
}

ExprPtr ExpressionParser::parse_compare() {
  const std::size_t offset = current().offset;
  ExprPtr first = parse_math1();
  auto node = make(EK::Compare, offset);
  while (true) {
    static constexpr std::string_view kOps[] = {"==", "!=", "<", "<=", ">", ">="};
    std::string op;
    for (auto candidate : kOps) {
      if (is_op(candidate)) op = candidate;
    }
    if (!op.empty()) {
      advance();
    } else if (skip_name("in")) {
      op = "in";
    } else if (is_name("not") && peek().type == TokenType::Name && peek().text == "in") {
      advance();
      advance();
      op = "notin";
    } else {
      break;
    }
    node->ops.push_back(op);
    node->items.push_back(parse_math1());
  }
  if (node->ops.empty()) return first;
  node->object = std::move(first);
  return finish(std::move(node));
}

ExprPtr ExpressionParser::parse_math1() {
  ExprPtr left = parse_concat();
  while (is_op("+") || is_op("-")) {
    const Token& op = advance();
    left = binary(op.text, std::move(left), parse_concat(), op.offset);
  }
  return left;
}

ExprPtr ExpressionParser::parse_concat() {
  ExprPtr left = parse_math2();
  while (is_op("~")) {
    const std::size_t offset = advance().offset;
    left = binary("~", std::move(left), parse_math2(), offset);
  }
  return left;
}

ExprPtr ExpressionParser::parse_math2() {
  ExprPtr left = parse_pow();
  while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
    const Token& op = advance();
    left = binary(op.text, std::move(left), parse_pow(), op.offset);
  }
  return left;
}

ExprPtr ExpressionParser::parse_pow() {
  ExprPtr left = parse_unary(true);
  while (is_op("**")) {
    const std::size_t offset = advance().offset;
    left = binary("**", std::move(left), parse_unary(true), offset);
  }
  return left;
}

ExprPtr ExpressionParser::parse_unary(bool with_filter) {
  const NestingGuard guard(*this);
  ExprPtr node;
  if (is_op("-") || is_op("+")) {
    const Token& op = advance();
    node = make(EK::Unary, op.offset);
    node->name = op.text;
    node->object = parse_unary(false);
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  if (with_filter) node = parse_filter_expr(std::move(node));
  return finish(std::move(node));
}

ExprPtr ExpressionParser::parse_primary() {
  const Token& token = current();
  switch (token.type) {
    case TokenType::Name: {
      advance();
      auto node = make(EK::Literal, token.offset);
      if (token.text == "true" || token.text == "True") {
        node->value = Value(true);
      } else if (token.text == "false" || token.text == "False") {
        node->value = Value(false);
      } else if (token.text == "none" || token.text == "None") {
        node->value = Value(nullptr);
      } else {
        node->kind = EK::Name;
        node->name = token.text;
      }
      return node;
    }
    case TokenType::String: {
      std::string text;
      while (current().type == TokenType::String) text += advance().text;  // 'a' 'b' is 'ab'
      auto node = make(EK::Literal, token.offset);
      node->value = Value(std::move(text));
      return node;
    }
    case TokenType::Integer:
    case TokenType::Float: {
      advance();
      auto node = make(EK::Literal, token.offset);
      node->value = token.type == TokenType::Integer ? Value(token.int_value) : Value(token.float_value);
      return node;
    }
    case TokenType::Operator:
      if (token.text == "(") {
        advance();
        ExprPtr inner = parse_tuple(true, {}, true);
        expect_op(")");
        return inner;
      }
      if (token.text == "[") return parse_list();
      if (token.text == "{") return parse_dict();
      break;
    default: break;
  }
  fail("expected an expression, got " + describe(token));
}

ExprPtr ExpressionParser::parse_list() {
  auto node = make(EK::ListLiteral, advance().offset);
  while (!is_op("]")) {
    if (!node->items.empty()) expect_op(",");
    if (is_op("]")) break;
    node->items.push_back(parse_expression(true));
  }
  expect_op("]");
  return finish(std::move(node));
}

ExprPtr ExpressionParser::parse_dict() {
  auto node = make(EK::DictLiteral, advance().offset);
  while (!is_op("}")) {
    if (!node->items.empty()) expect_op(",");
    if (is_op("}")) break;
    node->items.push_back(parse_expression(true));
    expect_op(":");
    node->items.push_back(parse_expression(true));
  }
  expect_op("}");
  return finish(std::move(node));
}

ExprPtr ExpressionParser::parse_postfix(ExprPtr node) {
  while (true) {
    if (is_op(".") || is_op("[")) {
      node = parse_subscript(std::move(node));
    } else if (is_op("(")) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr ExpressionParser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (is_op("|")) {
      node = parse_filter(std::move(node));
    } else if (is_name("is")) {
      node = parse_test(std::move(node));
    } else if (is_op("(")) {
      node = parse_call(std::move(node));
    } else {
      return node;
    }
  }
}

ExprPtr ExpressionParser::parse_subscript(ExprPtr object) {
  const Token& op = advance();
  if (op.text == ".") {
    const Token& attr = advance();
    if (attr.type == TokenType::Name) {
      auto node = make(EK::GetAttr, op.offset);
      node->object = std::move(object);
      node->name = attr.text;
      return finish(std::move(node));
    }
    if (attr.type == TokenType::Integer) {  // foo.0 is foo[0]
      auto node = make(EK::GetItem, op.offset);
      node->object = std::move(object);
      auto index = make(EK::Literal, attr.offset);
      index->value = Value(attr.int_value);
      node->items.push_back(std::move(index));
      return finish(std::move(node));
    }
    fail_at("expected an attribute name after '.', got " + describe(attr), attr.offset);
  }
  // `[index]` or `[start:stop:step]`
  auto node = make(EK::GetItem, op.offset);
  node->object = std::move(object);
  if (!is_op(":")) {
    node->items.push_back(parse_expression(true));
    if (!is_op(":")) {
      expect_op("]");
      return finish(std::move(node));
    }
  } else {
    node->items.push_back(nullptr);
  }
  node->kind = EK::Slice;
  advance();  // the first ':'
  node->items.push_back(is_op("]") || is_op(":") ? nullptr : parse_expression(true));
  if (skip_op(":")) {
    node->items.push_back(is_op("]") ? nullptr : parse_expression(true));
  } else {
    node->items.push_back(nullptr);
  }
  expect_op("]");
  return finish(std::move(node));
}

void ExpressionParser::parse_call_args(Expr& node) {
  expect_op("(");
  while (!is_op(")")) {
    if (!node.items.empty() || !node.keywords.empty()) expect_op(",");
    if (is_op(")")) break;
    if (is_op("*") || is_op("**")) fail("*args and **kwargs are not supported");
    if (current().type == TokenType::Name && peek().type == TokenType::Operator && peek().text == "=") {
      std::string key = advance().text;
      advance();
      node.keywords.emplace_back(std::move(key), parse_expression(true));
    } else {
      if (!node.keywords.empty()) fail("positional argument follows keyword argument");
      node.items.push_back(parse_expression(true));
    }
  }
  expect_op(")");
}

ExprPtr ExpressionParser::parse_call(ExprPtr callee) {
  auto node = make(EK::Call, callee->offset);  // errors point at what is called
  node->object = std::move(callee);
  parse_call_args(*node);
  return finish(std::move(node));
}

std::string ExpressionParser::parse_dotted_name() {
  std::string name = expect_identifier();
  while (is_op(".") && peek().type == TokenType::Name) {
    advance();
    name += "." + advance().text;
  }
  return name;
}

ExprPtr ExpressionParser::parse_filter(ExprPtr object) {
  auto node = make(EK::Filter, advance().offset);
  node->object = std::move(object);
  const std::size_t name_offset = current().offset;
  node->name = parse_dotted_name();
  if (!is_known_filter(node->name)) fail_at("no filter named '" + node->name + "' (not supported)", name_offset);
  if (is_op("(")) parse_call_args(*node);
  return finish(std::move(node));
}

ExprPtr ExpressionParser::parse_test(ExprPtr object) {
  auto node = make(EK::Test, advance().offset);
  node->object = std::move(object);
  node->negated = skip_name("not");
  const std::size_t name_offset = current().offset;
  node->name = parse_dotted_name();
  if (!is_known_test(node->name)) fail_at("no test named '" + node->name + "' (not supported)", name_offset);
  const auto type = current().type;
  if (is_op("(")) {
    parse_call_args(*node);
  } else if ((type == TokenType::Name || type == TokenType::String || type == TokenType::Integer ||
              type == TokenType::Float || is_op("[") || is_op("{")) &&
             !is_name("else") && !is_name("or") && !is_name("and")) {
    // `x is divisibleby 3`, `x is equalto 'user'`: one argument without parentheses.
    if (is_name("is")) fail("tests cannot be chained with 'is'");
    node->items.push_back(parse_postfix(parse_primary()));
  }
  return finish(std::move(node));
}

}  // namespace wisp::jinja
