// The template lexer: source text to tokens, with Jinja2's whitespace rules applied to the text
// between tags, exactly as Hugging Face's environment sets them (trim_blocks and lstrip_blocks on,
// keep_trailing_newline off):
//   - "\r\n" and "\r" become "\n", and one trailing newline of the template is dropped;
//   - `{%-`, `{{-`, `{#-` strip all whitespace before the tag; `-%}`, `-}}`, `-#}` all after it;
//   - trim_blocks: the first newline after a block or comment tag is removed (not after `}}`);
//   - lstrip_blocks: spaces and tabs from the start of a line to a block or comment tag are
//     removed (not before `{{`);
//   - `{%+` and `+%}` switch lstrip_blocks and trim_blocks off for that tag.
// Inside a tag, `%}` / `}}` only close it when brackets are balanced, so `{{ {'a': {'b': 1}} }}`
// works. Comments vanish; `{% raw %}...{% endraw %}` becomes plain text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wisp::jinja {

enum class TokenType {
  Data,           // literal template text
  BlockBegin,     // {%
  BlockEnd,       // %}
  VariableBegin,  // {{
  VariableEnd,    // }}
  Name,
  String,   // text holds the decoded value
  Integer,  // int_value
  Float,    // float_value
  Operator,
  End,
};

struct Token {
  TokenType type;
  std::string text;
  std::int64_t int_value = 0;
  double float_value = 0.0;
  std::size_t offset = 0;  // into the normalized source
};

// Converts byte offsets of the normalized source into 1-based line and column (code points).
class SourceMap {
 public:
  explicit SourceMap(std::string_view source);
  void locate(std::size_t offset, int& line, int& column) const;

 private:
  std::string_view source_;
  std::vector<std::size_t> line_starts_;
};

// Newline normalization and the dropped trailing newline (see above).
std::string normalize_source(std::string_view source);

// Throws ChatTemplateError(Syntax) with line and column on an unterminated tag, comment or string
// and on unbalanced brackets.
std::vector<Token> tokenize(std::string_view normalized_source);

// A readable name for a token in error messages ("end of statement block", "'in'", ...).
std::string describe(const Token& token);

}  // namespace wisp::jinja
