// The command line of a `wisp` subcommand: each flag is bound to a typed field of the command's
// options struct (CLI11 underneath), so a value is parsed and checked once, where it is declared,
// and the command reads plain fields instead of looking flags up by name. `--help` is generated
// from the same declarations.
//
//   --name value   --name=value   -n value   -nvalue   --flag   --   (ends flags; the rest is positional)
//
// Every mistake is a UsageError that names the flag: an unknown flag (with a "did you mean"), a
// missing value, a flag given twice, a value that is not a number or out of range, a required flag
// left out. main() prints it with a pointer to --help and exits with kUsageExit.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "usage_error.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace wisp::cli {

namespace flag_parsing {

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

template <typename T>
struct unwrap_optional {
  using type = T;
};
template <typename T>
struct unwrap_optional<std::optional<T>> {
  using type = T;
};

std::string single_quoted(std::string_view s);
// The text of a number as help shows a default: 0.8, 4096, 1e-05.
std::string number_text(double v);

// Parses `text` as T for flag `flag`; a UsageError names the flag and the value.
template <typename T>
T parse_value(const std::string& flag, const std::string& text, bool positive) {
  if constexpr (std::is_same_v<T, std::string>) {
    return text;
  } else if constexpr (std::is_integral_v<T>) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) throw UsageError(flag + " is out of range, got " + single_quoted(text));
    if (ec != std::errc() || end != text.data() + text.size()) {
      throw UsageError(flag + " expects an integer, got " + single_quoted(text));
    }
    if (positive && v <= 0) throw UsageError(flag + " must be a positive integer, got " + std::to_string(v));
    if (std::is_unsigned_v<T> && v < 0) throw UsageError(flag + " must be 0 or more, got " + std::to_string(v));
    if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
        static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
      throw UsageError(flag + " is out of range, got " + single_quoted(text));
    }
    return static_cast<T>(v);
  } else {
    static_assert(std::is_floating_point_v<T>, "a flag binds a string, an integer or a floating-point field");
    double v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) {
      throw UsageError(flag + " expects a number, got " + single_quoted(text));
    }
    if (positive && !(v > 0)) throw UsageError(flag + " must be positive, got " + single_quoted(text));
    return static_cast<T>(v);
  }
}

template <typename T>
std::string default_text(const T& field) {
  if constexpr (is_optional<T>::value) {
    return field ? default_text(*field) : std::string();
  } else if constexpr (std::is_same_v<T, std::string>) {
    return field;
  } else if constexpr (std::is_floating_point_v<T>) {
    return number_text(field);
  } else {
    return std::to_string(field);
  }
}

}  // namespace flag_parsing

// Describes one declared flag further: cl.option("--ctx", o.ctx).value_name("S").help("...").
class FlagBuilder {
 public:
  FlagBuilder& value_name(std::string v);
  FlagBuilder& help(std::string v);
  FlagBuilder& group(std::string v);
  FlagBuilder& required();
  // What help shows as the default, where the field's own initial value does not say it.
  FlagBuilder& default_text(std::string v);

 private:
  friend class CommandLine;
  explicit FlagBuilder(CLI::Option* opt) : opt_(opt) {}
  CLI::Option* opt_;
};

class CommandLine {
 public:
  // `command` as typed after `wisp` ("plan"); `summary` is the first paragraph of --help.
  CommandLine(std::string command, std::string summary);
  ~CommandLine();
  CommandLine(const CommandLine&) = delete;
  CommandLine& operator=(const CommandLine&) = delete;

  // A valueless flag; `names` as "-j,--json" or "--json". The field becomes true when given.
  FlagBuilder flag(const std::string& names, bool& field);

  // An option bound to `field`: std::string, an integer or floating-point type, or std::optional of
  // one (left empty when the flag is absent). A non-optional field's initial value is the default
  // help shows. Integers are range-checked against the field's type.
  template <typename T>
  FlagBuilder option(const std::string& names, T& field) {
    using V = typename flag_parsing::unwrap_optional<T>::type;
    return add(names, default_value_name<V>(), flag_parsing::default_text(field),
               [&field](const std::string& flag, const std::string& text) {
                 field = flag_parsing::parse_value<V>(flag, text, false);
               });
  }

  // As option(), for an integer or number that must be > 0: "--ctx must be a positive integer, got 0".
  template <typename T>
  FlagBuilder positive(const std::string& names, T& field) {
    using V = typename flag_parsing::unwrap_optional<T>::type;
    static_assert(!std::is_same_v<V, std::string>, "positive() is for numbers");
    return add(names, default_value_name<V>(), flag_parsing::default_text(field),
               [&field](const std::string& flag, const std::string& text) {
                 field = flag_parsing::parse_value<V>(flag, text, true);
               });
  }

  // An option whose text `convert` turns into the field's value (e.g. a size that understands
  // "80GiB"); a wisp::Error it throws becomes a UsageError prefixed with the flag:
  // "--mem: unknown unit ...". The default shown in help, if any, is given with default_text().
  template <typename T, typename Convert>
  FlagBuilder converted(const std::string& names, T& field, Convert convert) {
    return add(names, "VALUE", "", [&field, convert](const std::string& flag, const std::string& text) {
      try {
        field = convert(std::string_view(text));
      } catch (const UsageError&) {
        throw;
      } catch (const Error& e) {
        throw UsageError(flag + ": " + e.what());
      }
    });
  }

  // Accepts positional arguments into `field`: `usage` is how they read in the usage line
  // ("IN OUT"), at least `min` and at most `max` of them.
  void positionals(std::string usage, std::vector<std::string>& field, std::size_t min, std::size_t max);
  // Free text printed after the flag table (examples, notes).
  void epilog(std::string text);

  // Parses argv[1..argc) (argv[0] is the command name) into the bound fields. Returns false when
  // -h/--help was given: help() is then due on stdout and nothing else was checked. Throws
  // UsageError on any mistake.
  [[nodiscard]] bool parse(int argc, const char* const* argv);
  [[nodiscard]] bool parse(const std::vector<std::string>& args);

  // Whether the flag (spelled "--lookup") was on the command line; defaults do not count.
  bool given(const std::string& long_name) const;

  std::string help() const;

 private:
  using Setter = std::function<void(const std::string& flag, const std::string& text)>;
  FlagBuilder add(const std::string& names, std::string value_name, std::string default_text, Setter set);
  template <typename V>
  static std::string default_value_name() {
    if constexpr (std::is_same_v<V, std::string>) {
      return "VALUE";
    } else if constexpr (std::is_integral_v<V>) {
      return "N";
    } else {
      return "X";
    }
  }
  std::string suggestion(std::string_view unknown) const;
  void check_leftovers(const std::vector<std::string>& args) const;

  std::string command_;
  std::string summary_;
  std::string epilog_;
  std::string positional_usage_;
  std::size_t min_positionals_ = 0;
  std::size_t max_positionals_ = 0;
  std::vector<std::string>* positionals_ = nullptr;
  std::vector<const CLI::Option*> flags_;  // the valueless ones, each allowed once
  std::unique_ptr<CLI::App> app_;
};

}  // namespace wisp::cli
