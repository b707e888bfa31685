#include "chat/parser.h"

#include <initializer_list>

#include "chat/builtins.h"
#include "chat/template_error.h"

namespace wisp::jinja {
namespace {

using EK = Expr::Kind;
using SK = Stmt::Kind;

ExprPtr make(EK kind, std::size_t offset) { return std::make_unique<Expr>(kind, offset); }

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const SourceMap& map) : tokens_(tokens), map_(map) {}

  Body parse_template() {
    Body body = subparse({});
    if (current().type != TokenType::End) fail("unexpected " + describe(current()));
    return body;
  }

 private:
  // ---- token stream ----
  const Token& current() const { return tokens_[pos_]; }
  const Token& peek(std::size_t ahead = 1) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  const Token& advance() {
    const Token& t = tokens_[pos_];
    if (pos_ + 1 < tokens_.size()) ++pos_;
    return t;
  }
  bool is_op(std::string_view op) const { return current().type == TokenType::Operator && current().text == op; }
  bool is_name(std::string_view name) const { return current().type == TokenType::Name && current().text == name; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }

  [[noreturn]] void fail(const std::string& message) const { fail_at(message, current().offset); }
  [[noreturn]] void fail_at(const std::string& message, std::size_t offset) const {
    int line = 0, column = 0;
    map_.locate(offset, line, column);
    throw ChatTemplateError(ChatTemplateError::Kind::Syntax, message, line, column);
  }

  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail("expected '" + std::string(op) + "', got " + describe(current()));
  }
  void expect_name(std::string_view name) {
    if (!skip_name(name)) fail("expected '" + std::string(name) + "', got " + describe(current()));
  }
  std::string expect_identifier() {
    if (current().type != TokenType::Name) fail("expected a name, got " + describe(current()));
    return advance().text;
  }
  void expect_block_end() {
    if (current().type != TokenType::BlockEnd) fail("expected end of statement block, got " + describe(current()));
    advance();
  }

  // ---- statements ----

  // Parses until a `{% name %}` tag whose name is in `ends` (left unconsumed, positioned on the
  // name) or the end of the template.
  Body subparse(std::initializer_list<std::string_view> ends) {
    Body body;
    while (current().type != TokenType::End) {
      const Token& token = current();
      if (token.type == TokenType::Data) {
        auto text = std::make_unique<Stmt>(SK::Text, token.offset);
        text->text = token.text;
        body.push_back(std::move(text));
        advance();
      } else if (token.type == TokenType::VariableBegin) {
        advance();
        auto print = std::make_unique<Stmt>(SK::Print, token.offset);
        print->expr = parse_tuple(true, {});
        if (current().type != TokenType::VariableEnd) fail("expected end of print statement, got " + describe(current()));
        advance();
        body.push_back(std::move(print));
      } else if (token.type == TokenType::BlockBegin) {
        advance();
        if (current().type == TokenType::Name) {
          for (auto end : ends) {
            if (current().text == end) return body;
          }
        }
        body.push_back(parse_statement(token.offset));
      } else {
        fail("unexpected " + describe(token));
      }
    }
    if (ends.size() > 0) {
      // Located at the end (where jinja2 reports it); the message names the unclosed tag.
      fail("unexpected end of template: " + open_block_description() + " is never closed (expected " +
           expected_list(ends) + ")");
    }
    return body;
  }

  StmtPtr parse_statement(std::size_t offset) {
    if (current().type != TokenType::Name) fail("expected a statement name, got " + describe(current()));
    const std::string keyword = current().text;
    if (keyword == "if") return parse_if(offset);
    if (keyword == "for") return parse_for(offset);
    if (keyword == "set") return parse_set(offset);
    if (keyword == "macro") return parse_macro(offset);
    if (keyword == "generation") return parse_scope(offset, "endgeneration");
    if (keyword == "break" || keyword == "continue") {
      if (loop_depth_ == 0) fail("'" + keyword + "' outside of a loop");
      advance();
      expect_block_end();
      return std::make_unique<Stmt>(keyword == "break" ? SK::Break : SK::Continue, offset);
    }
    if (keyword.starts_with("end") || keyword == "elif" || keyword == "else") {
      fail("unexpected '" + keyword + "'" +
           (open_blocks_.empty() ? std::string(" outside of any block") : "; the innermost open block is " + open_block_description()));
    }
    static constexpr std::string_view kUnsupported[] = {"extends", "block", "include", "import", "from", "call",
                                                        "filter",  "with",  "autoescape", "do", "trans"};
    for (auto tag : kUnsupported) {
      if (keyword == tag) fail("the '" + keyword + "' tag is not supported by wisp's chat templates");
    }
    fail("unknown tag '" + keyword + "'");
  }

  std::string open_block_description() const {
    int line = 0, column = 0;
    map_.locate(open_blocks_.back().first, line, column);
    return "'" + open_blocks_.back().second + "' (line " + std::to_string(line) + ", column " + std::to_string(column) + ")";
  }

  static std::string expected_list(std::initializer_list<std::string_view> ends) {
    std::string expected;
    for (auto end : ends) expected += (expected.empty() ? "'" : " or '") + std::string(end) + "'";
    return expected;
  }

  // Consumes `{% end %}` after subparse stopped on its name.
  void close_block(std::string_view end) {
    expect_name(end);
    expect_block_end();
    open_blocks_.pop_back();
  }

  StmtPtr parse_if(std::size_t offset) {
    advance();
    open_blocks_.emplace_back(offset, "if");
    auto node = std::make_unique<Stmt>(SK::If, offset);
    while (true) {
      node->conditions.push_back(parse_tuple(false, {}));
      expect_block_end();
      node->bodies.push_back(subparse({"elif", "else", "endif"}));
      if (skip_name("elif")) continue;
      if (skip_name("else")) {
        expect_block_end();
        node->else_body = subparse({"endif"});
      }
      break;
    }
    close_block("endif");
    return node;
  }

  StmtPtr parse_for(std::size_t offset) {
    advance();
    open_blocks_.emplace_back(offset, "for");
    auto node = std::make_unique<Stmt>(SK::For, offset);
    node->target = parse_target(false);
    expect_name("in");
    node->expr = parse_tuple(false, {"recursive"});
    if (skip_name("if")) node->filter = parse_expression(true);
    if (is_name("recursive")) fail("recursive loops are not supported");
    expect_block_end();
    ++loop_depth_;
    node->body = subparse({"endfor", "else"});
    --loop_depth_;
    if (skip_name("else")) {
      expect_block_end();
      node->else_body = subparse({"endfor"});
    }
    close_block("endfor");
    return node;
  }

  StmtPtr parse_set(std::size_t offset) {
    advance();
    Target target = parse_target(true);
    if (skip_op("=")) {
      auto node = std::make_unique<Stmt>(SK::Set, offset);
      node->target = std::move(target);
      node->expr = parse_tuple(true, {});
      expect_block_end();
      return node;
    }
    if (target.tuple || !target.attribute.empty()) fail("a block set needs a single name");
    expect_block_end();
    open_blocks_.emplace_back(offset, "set");
    auto node = std::make_unique<Stmt>(SK::SetBlock, offset);
    node->target = std::move(target);
    node->body = subparse({"endset"});
    close_block("endset");
    return node;
  }

  StmtPtr parse_macro(std::size_t offset) {
    advance();
    auto node = std::make_unique<Stmt>(SK::Macro, offset);
    node->text = expect_identifier();
    expect_op("(");
    while (!is_op(")")) {
      if (!node->params.empty()) expect_op(",");
      if (is_op(")")) break;  // trailing comma
      MacroParam param;
      param.name = expect_identifier();
      if (skip_op("=")) param.default_value = parse_expression(true);
      node->params.push_back(std::move(param));
    }
    expect_op(")");
    expect_block_end();
    open_blocks_.emplace_back(offset, "macro");
    const int saved_depth = loop_depth_;
    loop_depth_ = 0;  // a macro body is not inside the caller's loop
    node->body = subparse({"endmacro"});
    loop_depth_ = saved_depth;
    close_block("endmacro");
    return node;
  }

  StmtPtr parse_scope(std::size_t offset, std::string_view end) {
    advance();
    expect_block_end();
    open_blocks_.emplace_back(offset, std::string(end.substr(3)));
    auto node = std::make_unique<Stmt>(SK::Scope, offset);
    node->body = subparse({end});
    close_block(end);
    return node;
  }

  // `name`, `a, b`, `(a, b)`, or (for set) `ns.attr`.
  Target parse_target(bool allow_attribute) {
    Target target;
    const bool parenthesized = skip_op("(");
    target.names.push_back(expect_identifier());
    if (allow_attribute && !parenthesized && skip_op(".")) {
      target.attribute = expect_identifier();
      return target;
    }
    while (skip_op(",")) {
      target.tuple = true;
      if (current().type != TokenType::Name || is_name("in")) break;
      target.names.push_back(expect_identifier());
    }
    if (parenthesized) {
      target.tuple = true;
      expect_op(")");
    }
    return target;
  }

  // ---- expressions ----

  bool at_tuple_end(std::initializer_list<std::string_view> extra_ends) const {
    const auto type = current().type;
    if (type == TokenType::VariableEnd || type == TokenType::BlockEnd || type == TokenType::End) return true;
    if (is_op(")")) return true;
    for (auto end : extra_ends) {
      if (is_name(end)) return true;
    }
    return false;
  }

  // An expression, or a tuple when commas separate several (`{% set a, b = 1, 2 %}`).
  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_ends,
                      bool explicit_parentheses = false) {
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
    return tuple;
  }

  ExprPtr parse_expression(bool with_condexpr) { return with_condexpr ? parse_condexpr() : parse_or(); }

  ExprPtr parse_condexpr() {
    ExprPtr expr = parse_or();
    while (is_name("if")) {
      const std::size_t offset = advance().offset;
      auto node = make(EK::Conditional, offset);
      node->object = parse_or();
      node->items.push_back(std::move(expr));
      node->items.push_back(skip_name("else") ? parse_condexpr() : nullptr);
      expr = std::move(node);
    }
    return expr;
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, std::size_t offset) {
    auto node = make(EK::Binary, offset);
    node->name = std::move(op);
    node->object = std::move(left);
    node->items.push_back(std::move(right));
    return node;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (is_name("or")) {
      const std::size_t offset = advance().offset;
      left = binary("or", std::move(left), parse_and(), offset);
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (is_name("and")) {
      const std::size_t offset = advance().offset;
      left = binary("and", std::move(left), parse_not(), offset);
    }
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      auto node = make(EK::Unary, advance().offset);
      node->name = "not";
      node->object = parse_not();
      return node;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
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
    return node;
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& op = advance();
      left = binary(op.text, std::move(left), parse_concat(), op.offset);
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (is_op("~")) {
      const std::size_t offset = advance().offset;
      left = binary("~", std::move(left), parse_math2(), offset);
    }
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& op = advance();
      left = binary(op.text, std::move(left), parse_pow(), op.offset);
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (is_op("**")) {
      const std::size_t offset = advance().offset;
      left = binary("**", std::move(left), parse_unary(true), offset);
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
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
    return node;
  }

  ExprPtr parse_primary() {
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
      default:
        break;
    }
    fail("expected an expression, got " + describe(token));
  }

  ExprPtr parse_list() {
    auto node = make(EK::ListLiteral, advance().offset);
    while (!is_op("]")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("]")) break;
      node->items.push_back(parse_expression(true));
    }
    expect_op("]");
    return node;
  }

  ExprPtr parse_dict() {
    auto node = make(EK::DictLiteral, advance().offset);
    while (!is_op("}")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("}")) break;
      node->items.push_back(parse_expression(true));
      expect_op(":");
      node->items.push_back(parse_expression(true));
    }
    expect_op("}");
    return node;
  }

  ExprPtr parse_postfix(ExprPtr node) {
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

  ExprPtr parse_filter_expr(ExprPtr node) {
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

  ExprPtr parse_subscript(ExprPtr object) {
    const Token& op = advance();
    if (op.text == ".") {
      const Token& attr = advance();
      if (attr.type == TokenType::Name) {
        auto node = make(EK::GetAttr, op.offset);
        node->object = std::move(object);
        node->name = attr.text;
        return node;
      }
      if (attr.type == TokenType::Integer) {  // foo.0 is foo[0]
        auto node = make(EK::GetItem, op.offset);
        node->object = std::move(object);
        auto index = make(EK::Literal, attr.offset);
        index->value = Value(attr.int_value);
        node->items.push_back(std::move(index));
        return node;
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
        return node;
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
    return node;
  }

  void parse_call_args(Expr& node) {
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

  ExprPtr parse_call(ExprPtr callee) {
    auto node = make(EK::Call, current().offset);
    node->object = std::move(callee);
    parse_call_args(*node);
    return node;
  }

  std::string parse_dotted_name() {
    std::string name = expect_identifier();
    while (is_op(".") && peek().type == TokenType::Name) {
      advance();
      name += "." + advance().text;
    }
    return name;
  }

  ExprPtr parse_filter(ExprPtr object) {
    auto node = make(EK::Filter, advance().offset);
    node->object = std::move(object);
    const std::size_t name_offset = current().offset;
    node->name = parse_dotted_name();
    if (!is_known_filter(node->name)) fail_at("no filter named '" + node->name + "' (not supported)", name_offset);
    if (is_op("(")) parse_call_args(*node);
    return node;
  }

  ExprPtr parse_test(ExprPtr object) {
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
    return node;
  }

  const std::vector<Token>& tokens_;
  const SourceMap& map_;
  std::size_t pos_ = 0;
  int loop_depth_ = 0;
  std::vector<std::pair<std::size_t, std::string>> open_blocks_;  // tags whose end tag is pending
};

}  // namespace

std::shared_ptr<const Program> parse_program(std::string_view source) {
  auto program = std::make_shared<Program>();
  program->source = normalize_source(source);
  const SourceMap map(program->source);
  const std::vector<Token> tokens = tokenize(program->source);
  program->body = Parser(tokens, map).parse_template();
  return program;
}

}  // namespace wisp::jinja
