#include "chat/lexer.h"

#include <algorithm>
#include <charconv>

#include "chat/py_text.h"
#include "chat/template_error.h"

namespace wisp::jinja {

SourceMap::SourceMap(std::string_view source) : source_(source) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') line_starts_.push_back(i + 1);
  }
}

void SourceMap::locate(std::size_t offset, int& line, int& column) const {
  offset = std::min(offset, source_.size());
  const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  const std::size_t index = static_cast<std::size_t>(it - line_starts_.begin()) - 1;
  line = static_cast<int>(index) + 1;
  column = static_cast<int>(text::length(source_.substr(line_starts_[index], offset - line_starts_[index]))) + 1;
}

std::string normalize_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
  return out;
}

std::string describe(const Token& token) {
  switch (token.type) {
    case TokenType::Data: return "template data";
    case TokenType::BlockBegin: return "begin of statement block";
    case TokenType::BlockEnd: return "end of statement block";
    case TokenType::VariableBegin: return "begin of print statement";
    case TokenType::VariableEnd: return "end of print statement";
    case TokenType::Name: return "'" + token.text + "'";
    case TokenType::String: return "string";
    case TokenType::Integer: return "integer";
    case TokenType::Float: return "float";
    case TokenType::Operator: return "'" + token.text + "'";
    case TokenType::End: return "end of template";
  }
  return "token";
}

namespace {

constexpr std::string_view kOperators[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
                                           "]",  "(",  ")",  "{",  "}",  ">",  "<", "=", ".", ",", ":", "|", ";"};

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Python whitespace at s[i] (ASCII fast path); returns its byte length or 0.
std::size_t space_at(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return text::is_space(b) ? 1 : 0;
  std::size_t len = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 1;
  len = std::min(len, s.size() - i);
  const std::u32string cp = text::decode(s.substr(i, len));
  return (cp.size() == 1 && text::is_space(cp[0])) ? len : 0;
}

std::size_t skip_spaces(std::string_view s, std::size_t i) {
  while (i < s.size()) {
    const std::size_t n = space_at(s, i);
    if (n == 0) break;
    i += n;
  }
  return i;
}

std::string_view rstrip_spaces(std::string_view s) {
  const std::u32string cps = text::decode(s);
  std::size_t keep = cps.size();
  while (keep > 0 && text::is_space(cps[keep - 1])) --keep;
  if (keep == cps.size()) return s;
  return s.substr(0, text::encode(std::u32string_view(cps).substr(0, keep)).size());
}

bool all_spaces(std::string_view s) { return skip_spaces(s, 0) == s.size(); }

// `(\d+_)*\d+` from i; returns the end, or i when there is no digit.
std::size_t scan_digits(std::string_view s, std::size_t i) {
  if (i >= s.size() || !is_digit(s[i])) return i;
  std::size_t p = i + 1;
  while (p < s.size()) {
    if (is_digit(s[p])) {
      ++p;
    } else if (s[p] == '_' && p + 1 < s.size() && is_digit(s[p + 1])) {
      p += 2;
    } else {
      break;
    }
  }
  return p;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : src_(source), map_(source) {}

  std::vector<Token> run() {
    while (pos_ < src_.size()) {
      const std::size_t tag = find_tag_start(pos_);
      if (tag == std::string_view::npos) {
        emit_data(src_.substr(pos_), pos_);
        break;
      }
      const char kind = src_[tag + 1];
      std::size_t after = tag + 2;
      const char sign = (after < src_.size() && (src_[after] == '-' || src_[after] == '+')) ? src_[after] : 0;
      if (sign) ++after;
      std::string_view text = src_.substr(pos_, tag - pos_);
      const std::size_t raw_body = kind == '%' ? match_raw_begin(after) : std::string_view::npos;
      if (sign == '-') {
        text = rstrip_spaces(text);
      } else if (sign != '+' && kind != '{') {
        const std::size_t newline = text.rfind('\n');
        const std::size_t line_pos = newline == std::string_view::npos ? 0 : newline + 1;
        const std::string_view tail = text.substr(line_pos);
        if ((line_pos > 0 || line_starting_) && !tail.empty() && all_spaces(tail)) text = text.substr(0, line_pos);
      }
      emit_data(text, pos_);
      pos_ = after;
      if (kind == '#') {
        lex_comment(tag);
      } else if (raw_body != std::string_view::npos) {
        line_starting_ = src_[raw_body - 1] == '\n';
        pos_ = raw_body;
        lex_raw(tag);
      } else {
        lex_tag(kind == '%' ? TokenType::BlockBegin : TokenType::VariableBegin, tag);
      }
    }
    Token end{TokenType::End, "", 0, 0.0, src_.size()};
    out_.push_back(end);
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& message, std::size_t offset) const {
    int line = 0, column = 0;
    map_.locate(offset, line, column);
    throw ChatTemplateError(ChatTemplateError::Kind::Syntax, message, line, column);
  }

  std::size_t find_tag_start(std::size_t from) const {
    for (std::size_t k = src_.find('{', from); k != std::string_view::npos; k = src_.find('{', k + 1)) {
      if (k + 1 < src_.size() && (src_[k + 1] == '%' || src_[k + 1] == '{' || src_[k + 1] == '#')) return k;
    }
    return std::string_view::npos;
  }

  void emit_data(std::string_view text, std::size_t offset) {
    if (text.empty()) return;
    out_.push_back(Token{TokenType::Data, std::string(text), 0, 0.0, offset});
  }

  // The end of a block tag at p: "+%}", "-%}" plus whitespace, or "%}" plus one newline
  // (trim_blocks). Returns npos when there is none.
  std::size_t match_block_end(std::size_t p) const {
    const std::string_view rest = src_.substr(p);
    if (rest.starts_with("+%}")) return p + 3;
    if (rest.starts_with("-%}")) return skip_spaces(src_, p + 3);
    if (rest.starts_with("%}")) return (p + 2 < src_.size() && src_[p + 2] == '\n') ? p + 3 : p + 2;
    return std::string_view::npos;
  }

  // `{% raw %}`: after the sign, whitespace, "raw", whitespace, then "-%}" (+ whitespace) or "%}".
  // Jinja applies no trim_blocks here. Returns where the raw body starts, or npos.
  std::size_t match_raw_begin(std::size_t p) const {
    p = skip_spaces(src_, p);
    if (src_.substr(p, 3) != "raw" || (p + 3 < src_.size() && is_name_char(src_[p + 3]))) return std::string_view::npos;
    p = skip_spaces(src_, p + 3);
    if (src_.substr(p).starts_with("-%}")) return skip_spaces(src_, p + 3);
    if (src_.substr(p).starts_with("%}")) return p + 2;
    return std::string_view::npos;
  }

  void lex_raw(std::size_t tag) {
    for (std::size_t k = find_tag_start(pos_); k != std::string_view::npos; k = find_tag_start(k + 1)) {
      if (src_[k + 1] != '%') continue;
      std::size_t p = k + 2;
      const char sign = (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ? src_[p] : 0;
      if (sign) ++p;
      p = skip_spaces(src_, p);
      if (src_.substr(p, 6) != "endraw") continue;
      const std::size_t end = match_block_end(skip_spaces(src_, p + 6));
      if (end == std::string_view::npos) continue;
      std::string_view body = src_.substr(pos_, k - pos_);
      if (sign == '-') {
        body = rstrip_spaces(body);
      } else if (sign != '+') {
        const std::size_t newline = body.rfind('\n');
        const std::size_t line_pos = newline == std::string_view::npos ? 0 : newline + 1;
        const std::string_view tail = body.substr(line_pos);
        if ((line_pos > 0 || line_starting_) && !tail.empty() && all_spaces(tail)) body = body.substr(0, line_pos);
      }
      emit_data(body, pos_);
      line_starting_ = src_[end - 1] == '\n';
      pos_ = end;
      return;
    }
    fail("missing end of raw directive", tag);
  }

  void lex_comment(std::size_t tag) {
    const std::size_t close = src_.find("#}", pos_);
    if (close == std::string_view::npos) fail("missing end of comment tag", tag);
    std::size_t end = close + 2;
    const char sign = close > pos_ ? src_[close - 1] : 0;
    if (sign == '-') {
      end = skip_spaces(src_, end);
    } else if (sign != '+' && end < src_.size() && src_[end] == '\n') {
      ++end;
    }
    line_starting_ = src_[end - 1] == '\n';
    pos_ = end;
  }

  void lex_tag(TokenType begin, std::size_t tag) {
    out_.push_back(Token{begin, "", 0, 0.0, tag});
    const bool block = begin == TokenType::BlockBegin;
    std::vector<char> brackets;
    while (true) {
      if (pos_ >= src_.size()) {
        fail(std::string("unexpected end of template, expected '") + (block ? "%}" : "}}") + "'", tag);
      }
      if (brackets.empty()) {
        std::size_t end = std::string_view::npos;
        if (block) {
          end = match_block_end(pos_);
        } else if (src_.substr(pos_).starts_with("-}}")) {
          end = skip_spaces(src_, pos_ + 3);
        } else if (src_.substr(pos_).starts_with("}}")) {
          end = pos_ + 2;
        }
        if (end != std::string_view::npos) {
          out_.push_back(Token{block ? TokenType::BlockEnd : TokenType::VariableEnd, "", 0, 0.0, pos_});
          line_starting_ = src_[end - 1] == '\n';
          pos_ = end;
          return;
        }
      }
      if (const std::size_t n = space_at(src_, pos_)) {
        pos_ += n;
        continue;
      }
      const char c = src_[pos_];
      if (is_digit(c)) {
        lex_number();
      } else if (is_name_start(c)) {
        std::size_t p = pos_ + 1;
        while (p < src_.size() && is_name_char(src_[p])) ++p;
        out_.push_back(Token{TokenType::Name, std::string(src_.substr(pos_, p - pos_)), 0, 0.0, pos_});
        pos_ = p;
      } else if (c == '\'' || c == '"') {
        lex_string(c);
      } else {
        lex_operator(brackets);
      }
    }
  }

  void lex_operator(std::vector<char>& brackets) {
    for (std::string_view op : kOperators) {
      if (!src_.substr(pos_).starts_with(op)) continue;
      if (op == "(" || op == "[" || op == "{") {
        brackets.push_back(op == "(" ? ')' : op == "[" ? ']' : '}');
      } else if (op == ")" || op == "]" || op == "}") {
        if (brackets.empty()) fail("unexpected '" + std::string(op) + "'", pos_);
        if (brackets.back() != op[0]) {
          fail("unexpected '" + std::string(op) + "', expected '" + std::string(1, brackets.back()) + "'", pos_);
        }
        brackets.pop_back();
      }
      out_.push_back(Token{TokenType::Operator, std::string(op), 0, 0.0, pos_});
      pos_ += op.size();
      return;
    }
    const std::size_t len =
        std::max<std::size_t>(1, text::encode(text::decode(src_.substr(pos_, 4)).substr(0, 1)).size());
    fail("unexpected character '" + std::string(src_.substr(pos_, len)) + "'", pos_);
  }

  void lex_number() {
    const std::size_t start = pos_;
    const std::size_t int_end = scan_digits(src_, start);
    std::size_t float_end = std::string_view::npos;
    const bool after_dot = start > 0 && src_[start - 1] == '.';
    if (!after_dot) {
      std::size_t p = int_end;
      bool fraction = false;
      if (p + 1 < src_.size() && src_[p] == '.' && is_digit(src_[p + 1])) {
        p = scan_digits(src_, p + 1);
        fraction = true;
      }
      std::size_t e = p;
      if (e < src_.size() && (src_[e] == 'e' || src_[e] == 'E')) {
        std::size_t q = e + 1;
        if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) ++q;
        const std::size_t exp_end = scan_digits(src_, q);
        if (exp_end > q) p = exp_end;
      }
      if (fraction || p > int_end) float_end = p;
    }
    if (float_end != std::string_view::npos) {
      std::string digits;
      for (char ch : src_.substr(start, float_end - start)) {
        if (ch != '_') digits += ch;
      }
      double value = 0.0;
      std::from_chars(digits.data(), digits.data() + digits.size(), value);
      out_.push_back(Token{TokenType::Float, digits, 0, value, start});
      pos_ = float_end;
      return;
    }
    int base = 10;
    std::size_t p = start;
    std::size_t end = int_end;
    if (src_[start] == '0' && start + 1 < src_.size()) {
      const char marker = static_cast<char>(src_[start + 1] | 0x20);
      base = marker == 'x' ? 16 : marker == 'o' ? 8 : marker == 'b' ? 2 : 10;
      if (base != 10) {
        p = start + 2;
        end = p;
        while (end < src_.size() && (src_[end] == '_' || (hex_value(src_[end]) >= 0 && hex_value(src_[end]) < base))) {
          ++end;
        }
        if (end == p) fail("invalid number literal", start);
      } else {
        // `0(_?0)*`: a leading zero is a number of its own.
        end = start + 1;
        while (end < src_.size() &&
               (src_[end] == '0' || (src_[end] == '_' && end + 1 < src_.size() && src_[end + 1] == '0'))) {
          ++end;
        }
      }
    }
    std::string digits;
    for (char ch : src_.substr(p, end - p)) {
      if (ch != '_') digits += ch;
    }
    std::int64_t value = 0;
    const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (result.ec != std::errc()) fail("integer literal out of range", start);
    out_.push_back(Token{TokenType::Integer, std::string(src_.substr(start, end - start)), value, 0.0, start});
    pos_ = end;
  }

  void lex_string(char quote) {
    const std::size_t start = pos_;
    std::size_t p = start + 1;
    while (true) {
      if (p >= src_.size()) fail("unterminated string literal", start);
      if (src_[p] == '\\') {
        p += 2;
      } else if (src_[p] == quote) {
        break;
      } else {
        ++p;
      }
    }
    out_.push_back(
        Token{TokenType::String, decode_escapes(src_.substr(start + 1, p - start - 1), start), 0, 0.0, start});
    pos_ = p + 1;
  }

  // Python string-literal escapes, as Jinja decodes them ("unicode-escape"); an unknown escape
  // keeps its backslash.
  std::string decode_escapes(std::string_view body, std::size_t offset) const {
    std::string out;
    for (std::size_t i = 0; i < body.size(); ++i) {
      if (body[i] != '\\' || i + 1 >= body.size()) {
        out += body[i];
        continue;
      }
      const char e = body[++i];
      switch (e) {
        case '\n': break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'v': out += '\v'; break;
        case 'N': fail("\\N{...} escapes are not supported in string literals", offset);
        case 'x':
        case 'u':
        case 'U': {
          const std::size_t digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (std::size_t k = 1; k <= digits; ++k) {
            const int h = i + k < body.size() ? hex_value(body[i + k]) : -1;
            if (h < 0) fail(std::string("truncated \\") + e + " escape in string literal", offset);
            cp = cp * 16 + static_cast<char32_t>(h);
          }
          if (cp > 0x10FFFF) fail("illegal Unicode character in string literal", offset);
          text::append_utf8(out, cp);
          i += digits;
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
              cp = cp * 8 + static_cast<char32_t>(body[++i] - '0');
            }
            text::append_utf8(out, cp);
          } else {
            out += '\\';
            out += e;
          }
      }
    }
    return out;
  }

  std::string_view src_;
  SourceMap map_;
  std::size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view normalized_source) { return Lexer(normalized_source).run(); }

}  // namespace wisp::jinja
