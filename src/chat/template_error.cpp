#include "chat/template_error.h"

namespace wisp {

ChatTemplateError::ChatTemplateError(Kind kind, std::string detail, int line, int column)
    : Error(detail), kind_(kind), detail_(std::move(detail)), line_(line), column_(column) {
  compose();
}

void ChatTemplateError::set_location(int line, int column) {
  line_ = line;
  column_ = column;
  compose();
}

void ChatTemplateError::compose() {
  const char* what_kind = kind_ == Kind::Syntax   ? "chat template syntax error"
                          : kind_ == Kind::Raised ? "chat template raised an exception"
                                                  : "chat template error";
  full_ = what_kind;
  if (line_ > 0) {
    full_ += " at line " + std::to_string(line_) + ", column " + std::to_string(column_);
  }
  full_ += ": " + detail_;
}

}  // namespace wisp
