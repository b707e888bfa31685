// TokenCursor: the parser's position in the token list, with the lookahead, matching and error
// helpers the expression and statement parsers share. Errors are syntax errors located at a token.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "chat/lexer.h"
#include "chat/template_error.h"

namespace wisp::jinja {

class TokenCursor {
 public:
  TokenCursor(const std::vector<Token>& tokens, const SourceMap& map) : tokens_(tokens), map_(map) {}

 protected:
  const Token& current() const { return tokens_[pos_]; }
  const Token& peek(std::size_t ahead = 1) const { return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)]; }
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

  // Counts nesting while parsing (parentheses, `not not ...`, blocks inside blocks), so a hostile
  // template fails with a syntax error instead of exhausting the stack. Real templates nest a few
  // levels.
  class NestingGuard {
   public:
    explicit NestingGuard(TokenCursor& cursor) : cursor_(cursor) {
      if (++cursor_.depth_ > kMaxNesting)
        cursor_.fail("nested too deeply (more than " + std::to_string(kMaxNesting) + " levels)");
    }
    ~NestingGuard() { --cursor_.depth_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

   private:
    TokenCursor& cursor_;
  };

  static constexpr int kMaxNesting = 200;

  const std::vector<Token>& tokens_;
  const SourceMap& map_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace wisp::jinja
