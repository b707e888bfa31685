// The global functions of Hugging Face's chat-template environment: Jinja's range, dict and
// namespace, plus HF's raise_exception(message) and strftime_now(format).
#include <chrono>

#include "chat/builtins.h"
#include "chat/operators.h"
#include "chat/template_error.h"

namespace wisp::jinja {
namespace {

// Jinja's sandbox refuses ranges longer than this (MAX_RANGE); so do we.
constexpr std::int64_t kMaxRange = 100000;

std::int64_t integer_arg(const Value& v) {
  if (v.is_bool()) return v.as_bool();
  if (!v.is_int()) fail_runtime("range() arguments must be integers, not " + v.type_name());
  return v.as_int();
}

Value range(const CallArgs& args) {
  if (!args.keyword.empty()) fail_runtime("range() takes no keyword arguments");
  const auto& p = args.positional;
  if (p.empty() || p.size() > 3) fail_runtime("range expected 1 to 3 arguments, got " + std::to_string(p.size()));
  const std::int64_t start = p.size() == 1 ? 0 : integer_arg(p[0]);
  const std::int64_t stop = p.size() == 1 ? integer_arg(p[0]) : integer_arg(p[1]);
  const std::int64_t step = p.size() == 3 ? integer_arg(p[2]) : 1;
  if (step == 0) fail_runtime("range() arg 3 must not be zero");
  ValueList out;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    if (static_cast<std::int64_t>(out.size()) >= kMaxRange) {
      fail_runtime("range too big, the sandbox allows " + std::to_string(kMaxRange) + " items");
    }
    out.emplace_back(i);
  }
  return Value(std::move(out));
}

// dict(mapping?, **kwargs) and namespace(mapping?, **kwargs) build their entries alike.
ValueMap entries_from(const CallArgs& args, std::string_view callee) {
  if (args.positional.size() > 1) fail_runtime(std::string(callee) + "() takes at most one positional argument");
  ValueMap map;
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (!source.is_map()) fail_runtime(std::string(callee) + "() positional argument must be a dict");
    map = source.as_map();
  }
  for (const auto& [k, v] : args.keyword) map.set(Value(k), v);
  return map;
}

Value make_dict(const CallArgs& args) { return Value(entries_from(args, "dict")); }

Value make_namespace(const CallArgs& args) {
  auto object = std::make_shared<AttributeObject>();
  object->type = AttributeObject::Type::Namespace;
  object->attributes = entries_from(args, "namespace");
  return Value(std::move(object));
}

Value raise_exception(const CallArgs& args) {
  const Value* message = args.get(0, "message");
  throw ChatTemplateError(ChatTemplateError::Kind::Raised, message ? message->str() : std::string());
}

std::tm local_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  return tm;
}

}  // namespace

ValueMap global_functions(std::optional<std::tm> now) {
  ValueMap globals;
  globals.set(Value("range"), Value(Callable{"range", range}));
  globals.set(Value("dict"), Value(Callable{"dict", make_dict}));
  globals.set(Value("namespace"), Value(Callable{"namespace", make_namespace}));
  globals.set(Value("raise_exception"), Value(Callable{"raise_exception", raise_exception}));
  globals.set(Value("strftime_now"), Value(Callable{"strftime_now", [now](const CallArgs& args) {
                                                      const Value* format = args.get(0, "format");
                                                      if (!format || !format->is_string())
                                                        fail_runtime("strftime_now() needs a format string");
                                                      const std::tm tm = now ? *now : local_now();
                                                      std::string out(256, '\0');
                                                      const std::size_t n = std::strftime(
                                                          out.data(), out.size(), format->as_string().c_str(), &tm);
                                                      if (n == 0 && !format->as_string().empty())
                                                        fail_runtime("strftime_now(): format too long or empty result");
                                                      out.resize(n);
                                                      return Value(std::move(out));
                                                    }}));
  return globals;
}

}  // namespace wisp::jinja
