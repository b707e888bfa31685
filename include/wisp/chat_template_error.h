// ChatTemplateError: what a chat template can throw. A syntax error is found by parse(); a runtime
// error or a template's own raise_exception(...) by render(). Every kind names the line and column
// (1-based, columns in code points) of the template construct at fault, so a user can find it in a
// GGUF's tokenizer.chat_template without a debugger.
#pragma once

#include <string>

#include "wisp/error.h"

namespace wisp {

class ChatTemplateError : public Error {
 public:
  enum class Kind {
    Syntax,   // the template does not parse
    Runtime,  // evaluation failed: undefined value used, type mismatch, division by zero, ...
    Raised,   // the template called raise_exception(message) (e.g. bad role alternation)
  };

  ChatTemplateError(Kind kind, std::string detail, int line = 0, int column = 0);

  Kind kind() const { return kind_; }
  // The bare message: for Kind::Raised exactly the string the template passed to raise_exception.
  const std::string& detail() const { return detail_; }
  int line() const { return line_; }      // 0 while unknown
  int column() const { return column_; }  // 0 while unknown
  bool has_location() const { return line_ > 0; }
  // The evaluator attaches the location of the innermost construct that failed; helpers that have
  // no location (filters, builtin functions) throw without one.
  void set_location(int line, int column);

  const char* what() const noexcept override { return full_.c_str(); }

 private:
  void compose();

  Kind kind_;
  std::string detail_;
  int line_;
  int column_;
  std::string full_;
};

}  // namespace wisp
