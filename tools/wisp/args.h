// A small command-line parser for the `wisp` subcommands. A command declares a table of flags
// (long and optional short spelling, kind, value name, default, required, help group); the parser
// checks argv against it and generates `--help` from the same table, so the two never drift.
//
//   --name value   --name=value   -n value   --flag   --   (ends flags; the rest is positional)
//
// Every mistake is a UsageError that names the flag: an unknown flag (with a "did you mean"),
// a missing value, a flag given twice, a value that is not a number, a required flag left out.
// Commands print it with a pointer to --help and exit with status 2 (kUsageExit).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "usage_error.h"

namespace wisp::cli {

enum class ArgKind {
  kFlag,    // present or not; takes no value
  kString,  // any text
  kInt,     // a signed 64-bit integer, checked at parse time
  kNumber,  // a finite floating-point number (1e9, 0.5), checked at parse time
};

struct ArgSpec {
  std::string name;     // long spelling without dashes: "ctx" is --ctx
  char short_name = 0;  // 'm' is -m; 0 for none
  ArgKind kind = ArgKind::kString;
  std::string value_name;     // shown in help ("FILE", "SIZE"); defaults by kind
  std::string help;           // one line
  std::string default_value;  // used when absent and shown in help; empty for none
  bool required = false;
  std::string group;  // help section; empty means "options"
};

// The result of parsing: what was given, with typed access that names the flag in every error.
class Args {
 public:
  bool help_requested() const { return help_; }
  // Given on the command line (defaults do not count).
  bool has(std::string_view name) const;
  // A kFlag's presence.
  bool flag(std::string_view name) const;
  // The given value, else the default, else nullopt.
  std::optional<std::string> value(std::string_view name) const;
  // As value(), but a missing value is a UsageError ("--model is required").
  std::string str(std::string_view name) const;
  std::optional<std::int64_t> opt_int(std::string_view name) const;
  std::int64_t int64(std::string_view name) const;
  // A kInt that must be > 0: "--ctx must be a positive integer, got 0".
  std::optional<std::uint64_t> opt_positive(std::string_view name) const;
  std::uint64_t positive(std::string_view name) const;
  std::optional<double> opt_number(std::string_view name) const;
  double number(std::string_view name) const;

  // Converts the value with `convert` (e.g. a size parser that understands "80GiB"); a
  // wisp::Error it throws becomes a UsageError prefixed with the flag: "--mem: unknown unit ...".
  template <typename Convert>
  auto convert(std::string_view name, Convert&& fn) const
      -> std::optional<std::decay_t<decltype(fn(std::string_view{}))>> {
    std::optional<std::string> v = value(name);
    if (!v) return std::nullopt;
    try {
      return fn(std::string_view(*v));
    } catch (const UsageError&) {
      throw;
    } catch (const Error& e) {
      throw UsageError(spelling(name) + ": " + e.what());
    }
  }

  const std::vector<std::string>& positionals() const { return positionals_; }
  // "--ctx" (how the user spells the flag), for messages written by the command.
  std::string spelling(std::string_view name) const;

 private:
  friend class ArgParser;
  const ArgSpec& spec(std::string_view name) const;  // throws std::logic_error when undeclared

  std::vector<ArgSpec> specs_;
  std::map<std::string, std::string, std::less<>> given_;
  std::vector<std::string> positionals_;
  bool help_ = false;
};

class ArgParser;

// Fills in one declared flag: parser.option("ctx", ArgKind::kInt).value_name("S").help("...").
// (A builder rather than designated initializers, which GCC 12's -Wextra flags when partial.)
class ArgBuilder {
 public:
  ArgBuilder& short_name(char c);
  ArgBuilder& value_name(std::string v);
  ArgBuilder& help(std::string v);
  ArgBuilder& default_value(std::string v);
  ArgBuilder& required();
  ArgBuilder& group(std::string v);

 private:
  friend class ArgParser;
  ArgBuilder(ArgParser& parser, std::size_t index) : parser_(parser), index_(index) {}
  ArgSpec& spec();
  ArgParser& parser_;
  std::size_t index_;
};

class ArgParser {
 public:
  // `command` as typed after `wisp` ("plan"); `summary` is the first line of --help.
  ArgParser(std::string command, std::string summary);

  // Declares a flag. Declaring a name or short spelling twice is a programming error
  // (std::logic_error). -h/--help is always declared.
  ArgParser& add(ArgSpec spec);
  // The same, as a builder: a valueless flag, or an option of the given kind.
  ArgBuilder flag(std::string name);
  ArgBuilder option(std::string name, ArgKind kind = ArgKind::kString);
  // Accepts positional arguments: `usage` is how they read in the usage line ("IN OUT"),
  // at most `max` (and at least `min`) of them.
  ArgParser& positionals(std::string usage, std::size_t min, std::size_t max);
  // Free text printed after the flag table (examples, notes).
  ArgParser& epilog(std::string text);

  // Parses argv[1..argc) (argv[0] is the command name). Throws UsageError on any mistake;
  // with -h/--help returns at once with help_requested() set (required flags not checked).
  Args parse(int argc, const char* const* argv) const;
  Args parse(const std::vector<std::string>& args) const;

  std::string help() const;

 private:
  friend class ArgBuilder;
  const ArgSpec* find_long(std::string_view name) const;
  const ArgSpec* find_short(char c) const;
  std::string suggestion(std::string_view unknown) const;

  std::string command_;
  std::string summary_;
  std::string epilog_;
  std::string positional_usage_;
  std::size_t min_positionals_ = 0;
  std::size_t max_positionals_ = 0;
  std::vector<ArgSpec> specs_;
};

}  // namespace wisp::cli
