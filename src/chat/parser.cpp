#include "chat/parser.h"

#include <initializer_list>

#include "chat/expression_parser.h"
#include "chat/template_error.h"

namespace wisp::jinja {
namespace {

using SK = Stmt::Kind;

class Parser : private ExpressionParser {
 public:
  using ExpressionParser::ExpressionParser;

  Body parse_template() {
    Body body = subparse({});
    if (current().type != TokenType::End) fail("unexpected " + describe(current()));
    return body;
  }

 private:
  // Parses until a `{% name %}` tag whose name is in `ends` (left unconsumed, positioned on the
  // name) or the end of the template.
  Body subparse(std::initializer_list<std::string_view> ends) {
    const NestingGuard guard(*this);
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
        if (current().type != TokenType::VariableEnd)
          fail("expected end of print statement, got " + describe(current()));
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
           (open_blocks_.empty() ? std::string(" outside of any block")
                                 : "; the innermost open block is " + open_block_description()));
    }
    static constexpr std::string_view kUnsupported[] = {"extends", "block", "include",    "import", "from", "call",
                                                        "filter",  "with",  "autoescape", "do",     "trans"};
    for (auto tag : kUnsupported) {
      if (keyword == tag) fail("the '" + keyword + "' tag is not supported by wisp's chat templates");
    }
    fail("unknown tag '" + keyword + "'");
  }

  std::string open_block_description() const {
    int line = 0, column = 0;
    map_.locate(open_blocks_.back().first, line, column);
    return "'" + open_blocks_.back().second + "' (line " + std::to_string(line) + ", column " + std::to_string(column) +
           ")";
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
