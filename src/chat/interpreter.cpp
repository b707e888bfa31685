#include "chat/interpreter.h"

#include "chat/builtins.h"
#include "chat/operators.h"
#include "chat/template_error.h"

namespace wisp::jinja {
namespace {

// Deep enough for any real template's recursive macros, shallow enough never to exhaust the stack.
constexpr int kMaxMacroDepth = 100;

using EK = Expr::Kind;
using SK = Stmt::Kind;

}  // namespace

const Value* Interpreter::Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent.get()) {
    if (auto it = s->vars.find(name); it != s->vars.end()) return &it->second;
  }
  return nullptr;
}

Interpreter::Interpreter(const Program& program, std::optional<std::tm> now)
    : program_(program), map_(program.source), globals_(global_functions(now)) {}

std::string Interpreter::render(const ValueMap& context) {
  auto globals = std::make_shared<Scope>();
  for (const auto& [k, v] : globals_.entries()) globals->vars[k.as_string()] = v;
  auto root = std::make_shared<Scope>();
  root->parent = globals;
  for (const auto& [k, v] : context.entries()) {
    if (k.is_string()) root->vars[k.as_string()] = v;
  }
  std::string out;
  exec_body(program_.body, root, out);
  return out;
}

void Interpreter::locate(ChatTemplateError& error, std::size_t offset) const {
  if (error.has_location()) return;
  int line = 0, column = 0;
  map_.locate(offset, line, column);
  error.set_location(line, column);
}

void Interpreter::fail_at(std::size_t offset, const std::string& message) const {
  ChatTemplateError error(ChatTemplateError::Kind::Runtime, message);
  locate(error, offset);
  throw error;
}

// ---- statements ----

Interpreter::Flow Interpreter::exec_body(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const auto& stmt : body) {
    const Flow flow = exec(*stmt, scope, out);
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

Interpreter::Flow Interpreter::exec(const Stmt& stmt, const ScopePtr& scope, std::string& out) {
  Flow flow = Flow::Normal;
  try {
    switch (stmt.kind) {
      case SK::Text: out += stmt.text; break;
      case SK::Print: out += eval(*stmt.expr, scope).str(); break;
      case SK::If: exec_if(stmt, scope, out, flow); break;
      case SK::For: exec_for(stmt, scope, out, flow); break;
      case SK::Set: exec_set(stmt, scope); break;
      case SK::SetBlock: {
        auto inner = std::make_shared<Scope>();
        inner->parent = scope;
        std::string captured;
        exec_body(stmt.body, inner, captured);
        assign(stmt.target, Value(std::move(captured)), *scope);
        break;
      }
      case SK::Macro: define_macro(stmt, scope); break;
      case SK::Break: return Flow::Break;
      case SK::Continue: return Flow::Continue;
      case SK::Scope: flow = exec_body(stmt.body, scope, out); break;
    }
  } catch (ChatTemplateError& error) {
    locate(error, stmt.offset);
    throw;
  }
  return flow;
}

void Interpreter::exec_if(const Stmt& stmt, const ScopePtr& scope, std::string& out, Flow& flow) {
  for (std::size_t i = 0; i < stmt.conditions.size(); ++i) {
    if (eval(*stmt.conditions[i], scope).truthy()) {
      flow = exec_body(stmt.bodies[i], scope, out);
      return;
    }
  }
  flow = exec_body(stmt.else_body, scope, out);
}

void Interpreter::exec_for(const Stmt& stmt, const ScopePtr& scope, std::string& out, Flow& flow) {
  const Value iterable = eval(*stmt.expr, scope);
  if (iterable.is_none() || iterable.is_number() || iterable.is_object() || iterable.is_callable()) {
    fail_at(stmt.expr->offset, quoted(iterable.type_name()) + " is not iterable");
  }
  ValueList items = iterate(iterable);
  if (stmt.filter) {
    ValueList kept;
    for (const Value& item : items) {
      auto probe = std::make_shared<Scope>();
      probe->parent = scope;
      assign(stmt.target, item, *probe);
      if (eval(*stmt.filter, probe).truthy()) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    exec_body(stmt.else_body, inner, out);
    return;
  }
  const auto length = static_cast<std::int64_t>(items.size());
  for (std::int64_t i = 0; i < length; ++i) {
    auto loop = std::make_shared<AttributeObject>();
    loop->type = AttributeObject::Type::Loop;
    auto& a = loop->attributes;
    a.set(Value("index"), Value(i + 1));
    a.set(Value("index0"), Value(i));
    a.set(Value("revindex"), Value(length - i));
    a.set(Value("revindex0"), Value(length - i - 1));
    a.set(Value("first"), Value(i == 0));
    a.set(Value("last"), Value(i == length - 1));
    a.set(Value("length"), Value(length));
    a.set(Value("depth"), Value(1));
    a.set(Value("depth0"), Value(0));
    a.set(Value("previtem"), i > 0 ? items[i - 1] : Value::undefined("there is no previous item"));
    a.set(Value("nextitem"), i + 1 < length ? items[i + 1] : Value::undefined("there is no next item"));
    a.set(Value("cycle"), Value(Callable{"cycle", [i](const CallArgs& args) {
                                           if (args.positional.empty()) fail_runtime("no items for cycling given");
                                           return args.positional[static_cast<std::size_t>(i) % args.positional.size()];
                                         }}));
    auto inner = std::make_shared<Scope>();
    inner->parent = scope;
    assign(stmt.target, items[static_cast<std::size_t>(i)], *inner);
    inner->vars["loop"] = Value(std::move(loop));
    if (exec_body(stmt.body, inner, out) == Flow::Break) break;
  }
  flow = Flow::Normal;
}

void Interpreter::assign(const Target& target, const Value& value, Scope& scope) {
  if (!target.tuple) {
    scope.vars[target.names[0]] = value;
    return;
  }
  if (!value.is_list()) fail_runtime("cannot unpack non-sequence " + value.type_name());
  const ValueList& parts = value.as_list();
  if (parts.size() != target.names.size()) {
    fail_runtime(parts.size() > target.names.size()
                     ? "too many values to unpack (expected " + std::to_string(target.names.size()) + ")"
                     : "not enough values to unpack (expected " + std::to_string(target.names.size()) + ", got " +
                           std::to_string(parts.size()) + ")");
  }
  for (std::size_t i = 0; i < parts.size(); ++i) scope.vars[target.names[i]] = parts[i];
}

void Interpreter::exec_set(const Stmt& stmt, const ScopePtr& scope) {
  const Value value = eval(*stmt.expr, scope);
  if (stmt.target.attribute.empty()) {
    assign(stmt.target, value, *scope);
    return;
  }
  const Value* holder = scope->find(stmt.target.names[0]);
  if (!holder || !holder->is_object() || holder->as_object().type != AttributeObject::Type::Namespace) {
    fail_runtime("cannot assign attribute on non-namespace object '" + stmt.target.names[0] + "'");
  }
  holder->as_object().attributes.set(Value(stmt.target.attribute), value);
}

void Interpreter::define_macro(const Stmt& stmt, const ScopePtr& scope) {
  std::weak_ptr<Scope> defining = scope;
  const Stmt* node = &stmt;
  scope->vars[stmt.text] = Value(
      Callable{stmt.text, [this, node, defining](const CallArgs& args) { return call_macro(*node, defining, args); }});
}

Value Interpreter::call_macro(const Stmt& stmt, const std::weak_ptr<Scope>& defining_scope, const CallArgs& args) {
  ScopePtr parent = defining_scope.lock();
  if (!parent) fail_runtime("macro '" + stmt.text + "' called after its scope ended");
  if (args.positional.size() > stmt.params.size()) {
    fail_runtime("macro '" + stmt.text + "' takes not more than " + std::to_string(stmt.params.size()) +
                 " argument(s)");
  }
  for (const auto& [key, value] : args.keyword) {
    bool known = false;
    for (const auto& p : stmt.params) known = known || p.name == key;
    if (!known) fail_runtime("macro '" + stmt.text + "' takes no keyword argument '" + key + "'");
  }
  if (macro_depth_ >= kMaxMacroDepth) fail_runtime("macro recursion deeper than " + std::to_string(kMaxMacroDepth));
  auto scope = std::make_shared<Scope>();
  scope->parent = parent;
  for (std::size_t i = 0; i < stmt.params.size(); ++i) {
    const MacroParam& param = stmt.params[i];
    if (const Value* given = args.get(i, param.name)) {
      scope->vars[param.name] = *given;
    } else if (param.default_value) {
      scope->vars[param.name] = eval(*param.default_value, scope);
    } else {
      scope->vars[param.name] = Value::undefined("parameter '" + param.name + "' was not provided");
    }
  }
  ++macro_depth_;
  std::string out;
  try {
    exec_body(stmt.body, scope, out);
  } catch (...) {
    --macro_depth_;
    throw;
  }
  --macro_depth_;
  return Value(std::move(out));
}

// ---- expressions ----

Value Interpreter::eval(const Expr& expr, const ScopePtr& scope) {
  try {
    return eval_node(expr, scope);
  } catch (ChatTemplateError& error) {
    locate(error, expr.offset);
    throw;
  }
}

CallArgs Interpreter::eval_args(const Expr& expr, const ScopePtr& scope) {
  CallArgs args;
  for (const auto& item : expr.items) args.positional.push_back(eval(*item, scope));
  for (const auto& [key, value] : expr.keywords) args.keyword.emplace_back(key, eval(*value, scope));
  return args;
}

Value Interpreter::eval_node(const Expr& expr, const ScopePtr& scope) {
  switch (expr.kind) {
    case EK::Literal: return expr.value;
    case EK::Name: {
      if (const Value* v = scope->find(expr.name)) return *v;
      return Value::undefined("'" + expr.name + "' is undefined");
    }
    case EK::ListLiteral: {
      ValueList items;
      for (const auto& item : expr.items) items.push_back(eval(*item, scope));
      return expr.is_tuple ? Value::tuple(std::move(items)) : Value(std::move(items));
    }
    case EK::DictLiteral: {
      ValueMap map;
      for (std::size_t i = 0; i + 1 < expr.items.size(); i += 2) {
        map.set(eval(*expr.items[i], scope), eval(*expr.items[i + 1], scope));
      }
      return Value(std::move(map));
    }
    case EK::GetAttr: return get_attribute(eval(*expr.object, scope), expr.name);
    case EK::GetItem: return get_item(eval(*expr.object, scope), eval(*expr.items[0], scope));
    case EK::Slice: {
      const Value object = eval(*expr.object, scope);
      Value parts[3];
      for (int i = 0; i < 3; ++i) {
        if (expr.items[i]) parts[i] = eval(*expr.items[i], scope);
      }
      return get_slice(object, parts[0], parts[1], parts[2]);
    }
    case EK::Call: {
      const Value callee = eval(*expr.object, scope);
      CallArgs args = eval_args(expr, scope);
      require_defined(callee);
      if (!callee.is_callable()) fail_runtime("'" + callee.type_name() + "' is not callable");
      return callee.as_callable().call(args);
    }
    case EK::Filter: {
      const Value object = eval(*expr.object, scope);
      return apply_filter(expr.name, object, eval_args(expr, scope));
    }
    case EK::Test: {
      const Value object = eval(*expr.object, scope);
      const bool result = apply_test(expr.name, object, eval_args(expr, scope));
      return Value(expr.negated ? !result : result);
    }
    case EK::Unary: {
      const Value operand = eval(*expr.object, scope);
      if (expr.name == "not") return Value(!operand.truthy());
      if (expr.name == "-") return unary_minus(operand);
      require_defined(operand);
      if (!operand.is_number()) fail_runtime("bad operand type for unary +: '" + operand.type_name() + "'");
      return operand.is_bool() ? Value(std::int64_t{operand.as_bool()}) : operand;
    }
    case EK::Binary: {
      Value left = eval(*expr.object, scope);
      if (expr.name == "and") return left.truthy() ? eval(*expr.items[0], scope) : left;
      if (expr.name == "or") return left.truthy() ? left : eval(*expr.items[0], scope);
      return binary_op(expr.name, left, eval(*expr.items[0], scope));
    }
    case EK::Compare: {
      // Python chains: a < b < c is (a < b) and (b < c), each operand evaluated once.
      Value left = eval(*expr.object, scope);
      for (std::size_t i = 0; i < expr.ops.size(); ++i) {
        Value right = eval(*expr.items[i], scope);
        if (!compare(expr.ops[i], left, right)) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case EK::Conditional: {
      if (eval(*expr.object, scope).truthy()) return eval(*expr.items[0], scope);
      if (expr.items[1]) return eval(*expr.items[1], scope);
      return Value::undefined("the inline if-expression evaluated to false and has no else section");
    }
  }
  return Value();
}

}  // namespace wisp::jinja
