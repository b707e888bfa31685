// Syntax errors name the line and column (1-based, columns in code points) of the construct at
// fault, and features wisp does not implement fail at parse time, not mid-conversation.
#include <gtest/gtest.h>

#include "chat/chat_template.h"

namespace wisp {
namespace {

struct Expected {
  const char* source;
  int line;
  int column;
  const char* fragment;  // part of the message
};

ChatTemplateError parse_error(const std::string& source) {
  try {
    ChatTemplate::parse(source);
  } catch (const ChatTemplateError& e) {
    return e;
  }
  ADD_FAILURE() << "parsed without error: " << source;
  return ChatTemplateError(ChatTemplateError::Kind::Runtime, "none");
}

TEST(ChatSyntaxErrors, NameLineAndColumn) {
  const Expected cases[] = {
      {"{{ }}", 1, 4, "expected an expression, got end of print statement"},
      {"line1\n{{ 1 + }}", 2, 8, "expected an expression"},
      {"{% if t %}\nno end", 2, 7, "'if' (line 1, column 1) is never closed (expected 'elif' or 'else' or 'endif')"},
      {"{% for m in messages %}\n  {% if x %}\n{% endfor %}", 3, 4,
       "the innermost open block is 'if' (line 2, column 3)"},
      {"{% endif %}", 1, 4, "unexpected 'endif' outside of any block"},
      {"{% foo %}", 1, 4, "unknown tag 'foo'"},
      {"{{ 'unterminated }}", 1, 4, "unterminated string literal"},
      {"{{ (1 }}", 1, 7, "unexpected '}', expected ')'"},
      {"{{ [1, 2 }}", 1, 10, "unexpected '}', expected ']'"},
      {"ok\n  {# never closed", 2, 3, "missing end of comment tag"},
      {"{{ x | nosuchfilter }}", 1, 8, "no filter named 'nosuchfilter'"},
      {"{{ x is nosuchtest }}", 1, 9, "no test named 'nosuchtest'"},
      {"text\n\n   {% set %}", 3, 11, "expected a name"},
      {"{% break %}", 1, 4, "'break' outside of a loop"},
      {"{% for x in y %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}", 1, 35, "outside of a loop"},
      {"{{ x.}}", 1, 6, "expected an attribute name"},
      {"{{ 1 }}\n{% for x in y %}\n{{ x }", 3, 6, "unexpected '}'"},
      {"héllo wörld {{ 1 + }}", 1, 20, "expected an expression"},
      {"{{ a b }}", 1, 6, "expected end of print statement, got 'b'"},
      {"{% if %}{% endif %}", 1, 7, "expected an expression"},
      {"{% set x = %}", 1, 12, "expected an expression"},
      {"{% for x y %}{% endfor %}", 1, 10, "expected 'in'"},
      {"{% macro m(a, ) %}{% endmacro %}{% macro %}", 1, 42, "expected a name"},
      {"{{ f(a=1, 2) }}", 1, 11, "positional argument follows keyword argument"},
      {"{{ 'x' ~ }}", 1, 10, "expected an expression"},
      {"{{ 99999999999999999999 }}", 1, 4, "integer literal out of range"},
      {"{{ '\\x4' }}", 1, 4, "truncated \\x escape"},
      {"{% set x %}no end", 1, 18, "'set' (line 1, column 1) is never closed"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.source);
    const ChatTemplateError e = parse_error(c.source);
    EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Syntax);
    EXPECT_EQ(e.line(), c.line) << e.what();
    EXPECT_EQ(e.column(), c.column) << e.what();
    EXPECT_NE(e.detail().find(c.fragment), std::string::npos) << e.what();
    const std::string where = "line " + std::to_string(c.line) + ", column " + std::to_string(c.column);
    EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
  }
}

TEST(ChatSyntaxErrors, UnsupportedFeaturesFailAtParseTime) {
  const char* cases[] = {
      "{% include 'other.jinja' %}",
      "{% extends 'base.jinja' %}",
      "{% import 'macros.jinja' as m %}",
      "{% from 'm.jinja' import x %}",
      "{% call m() %}x{% endcall %}",
      "{% filter upper %}x{% endfilter %}",
      "{% with a = 1 %}{% endwith %}",
      "{% do x.append(1) %}",
      "{% block b %}{% endblock %}",
      "{% for x in y recursive %}{% endfor %}",
      "{{ f(*args) }}",
      "{{ f(**kwargs) }}",
      "{{ 'named \\N{BULLET}' }}",
      "{% if x is nosuchtest %}{% endif %}",  // jinja2 defers this one to render time
      "{{ x|format('a') }}",
      "{{ x|batch(2) }}",
  };
  for (const char* source : cases) {
    SCOPED_TRACE(source);
    const ChatTemplateError e = parse_error(source);
    EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Syntax) << e.what();
    EXPECT_TRUE(e.has_location());
  }
}

TEST(ChatSyntaxErrors, RuntimeErrorsAreLocatedToo) {
  const auto tmpl =
      ChatTemplate::parse("line one\n  {% if true %}\n    {{ raise_exception('stop here') }}\n  {% endif %}");
  try {
    tmpl.render_context(nlohmann::ordered_json::object());
    FAIL() << "no exception";
  } catch (const ChatTemplateError& e) {
    EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Raised);
    EXPECT_EQ(e.detail(), "stop here");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.column(), 8);
    EXPECT_STREQ(e.what(), "chat template raised an exception at line 3, column 8: stop here");
  }
  const auto undefined = ChatTemplate::parse("{% for m in messages %}\n{{ m.content + m.missing }}{% endfor %}");
  try {
    undefined.render({{"user", "hi"}});
    FAIL() << "no exception";
  } catch (const ChatTemplateError& e) {
    EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Runtime);
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 14);
    EXPECT_EQ(e.detail(), "'dict object' has no attribute 'missing'");
  }
}

// Truncating real templates at every byte must give a clean ChatTemplateError or a template,
// never a crash or another exception type.
TEST(ChatSyntaxErrors, TruncatedTemplatesFailCleanly) {
  const std::string source =
      "{%- if messages[0]['role'] == 'system' %}{%- set sys = messages[0]['content'] %}{%- endif %}\n"
      "{%- for m in messages if m.role != 'system' -%}\n  {{ '<|' ~ m.role ~ '|>\\n' + m['content']|trim }}"
      "{# note #}{% set ns = namespace(a={'k': [1, 2.5, \"s\"]}) %}{{ ns.a.k[1:] | tojson(indent=2) }}\n"
      "{%- endfor %}{% if add_generation_prompt %}{{ x is defined and (1 + 2) * 3 // 2 }}{% endif %}";
  for (std::size_t n = 0; n <= source.size(); ++n) {
    try {
      const auto tmpl = ChatTemplate::parse(source.substr(0, n));
      try {
        tmpl.render({{"system", "s"}, {"user", "u"}});
      } catch (const ChatTemplateError&) {
      }
    } catch (const ChatTemplateError& e) {
      EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Syntax);
      EXPECT_TRUE(e.has_location()) << n;
    }
  }
}

}  // namespace
}  // namespace wisp

namespace wisp {
namespace {

TEST(ChatSyntaxErrors, DeepNestingIsAnErrorNotAStackOverflow) {
  const std::size_t depth = 20000;
  for (const std::string& source : {"{{ " + std::string(depth, '(') + "1" + std::string(depth, ')') + " }}",
                                    "{{ " + std::string(depth, '[') + std::string(depth, ']') + " }}",
                                    "{{ " +
                                        [&] {
                                          std::string s;
                                          for (std::size_t i = 0; i < depth; ++i) s += "not ";
                                          return s;
                                        }() +
                                        "x }}",
                                    "{{ " + std::string(depth, '-') + "1 }}",
                                    [&] {
                                      std::string s;
                                      for (std::size_t i = 0; i < depth; ++i) s += "{% if x %}";
                                      return s;
                                    }()}) {
    try {
      ChatTemplate::parse(source);
      ADD_FAILURE() << "parsed";
    } catch (const ChatTemplateError& e) {
      EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Syntax);
      EXPECT_NE(e.detail().find("nested too deeply"), std::string::npos) << e.what();
    }
  }
  // Chains grow without recursion in the parser; they are capped too.
  std::string sum = "{{ 1";
  std::string filters = "{{ 'x'";
  std::string attributes = "{{ a";
  for (std::size_t i = 0; i < depth; ++i) {
    sum += " + 1";
    filters += "|trim";
    attributes += ".b";
  }
  for (const std::string& source : {sum + " }}", filters + " }}", attributes + " }}"}) {
    try {
      ChatTemplate::parse(source);
      ADD_FAILURE() << "parsed";
    } catch (const ChatTemplateError& e) {
      EXPECT_NE(e.detail().find("nested too deeply"), std::string::npos) << e.what();
    }
  }
  // Real templates nest far less than the limits.
  std::string long_sum = "{{ 1";
  for (int i = 0; i < 300; ++i) long_sum += " + 1";
  EXPECT_EQ(ChatTemplate::parse(long_sum + " }}").render({}), "301");
  EXPECT_NO_THROW(ChatTemplate::parse("{{ " + std::string(50, '(') + "1" + std::string(50, ')') + " }}"));
}

}  // namespace
}  // namespace wisp
