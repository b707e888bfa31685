// The tree-walking interpreter that renders a parsed template. Scoping follows Jinja2: `set` at
// the top level or inside `if` writes the enclosing scope; each iteration of a `for` body gets a
// fresh scope (so assignments there neither survive the iteration nor leak out of the loop —
// namespace() exists for that); a macro runs in a scope whose parent is where it was defined.
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "chat/lexer.h"
#include "chat/parser.h"
#include "chat/template_error.h"
#include "chat/value.h"

namespace wisp::jinja {

class Interpreter {
 public:
  // `now` fixes the clock strftime_now reads (nullopt: the local time).
  Interpreter(const Program& program, std::optional<std::tm> now);

  // Renders with `context` as the template's variables. Throws ChatTemplateError with the line and
  // column of the failing construct.
  std::string render(const ValueMap& context);

 private:
  struct Scope {
    std::shared_ptr<Scope> parent;
    std::unordered_map<std::string, Value> vars;
    const Value* find(const std::string& name) const;
  };
  using ScopePtr = std::shared_ptr<Scope>;
  enum class Flow { Normal, Break, Continue };

  Flow exec_body(const Body& body, const ScopePtr& scope, std::string& out);
  Flow exec(const Stmt& stmt, const ScopePtr& scope, std::string& out);
  void exec_if(const Stmt& stmt, const ScopePtr& scope, std::string& out, Flow& flow);
  void exec_for(const Stmt& stmt, const ScopePtr& scope, std::string& out, Flow& flow);
  void exec_set(const Stmt& stmt, const ScopePtr& scope);
  void define_macro(const Stmt& stmt, const ScopePtr& scope);
  Value call_macro(const Stmt& stmt, const std::weak_ptr<Scope>& defining_scope, const CallArgs& args);
  void assign(const Target& target, const Value& value, Scope& scope);

  Value eval(const Expr& expr, const ScopePtr& scope);
  Value eval_node(const Expr& expr, const ScopePtr& scope);
  CallArgs eval_args(const Expr& expr, const ScopePtr& scope);

  [[noreturn]] void fail_at(std::size_t offset, const std::string& message) const;
  void locate(ChatTemplateError& error, std::size_t offset) const;

  const Program& program_;
  SourceMap map_;
  ValueMap globals_;
  int macro_depth_ = 0;
};

}  // namespace wisp::jinja
