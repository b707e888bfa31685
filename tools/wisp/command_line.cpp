#include "command_line.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

namespace wisp::cli {
namespace flag_parsing {

std::string single_quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace flag_parsing

namespace {

// "-5", "-0.5", "-1e3": values that look like flags but are numbers (a negative --ctx must reach
// the "must be positive" check, not be mistaken for a missing value).
bool looks_like_number(std::string_view s) {
  if (s.size() >= 2 && s[0] == '-') s.remove_prefix(1);
  return !s.empty() && ((s[0] >= '0' && s[0] <= '9') || (s[0] == '.' && s.size() > 1));
}

bool looks_like_flag(std::string_view s) { return s.size() >= 2 && s[0] == '-' && !looks_like_number(s); }

// "--ctx" out of "-c,--ctx" (CLI11's spelling list); the short one where there is no long one.
std::string main_spelling(const std::string& names) {
  std::string first;
  std::size_t start = 0;
  while (start <= names.size()) {
    std::size_t end = names.find(',', start);
    if (end == std::string::npos) end = names.size();
    std::string name = names.substr(start, end - start);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (name.rfind("--", 0) == 0) return name;
    if (first.empty()) first = name;
    start = end + 1;
  }
  return first;
}

// Edit distance, for "did you mean" on a mistyped flag.
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

constexpr const char* kDefaultGroup = "options";
constexpr const char* kPositionalName = "arguments";

}  // namespace

// ---- FlagBuilder ------------------------------------------------------------------------------

FlagBuilder& FlagBuilder::value_name(std::string v) {
  opt_->type_name(std::move(v));
  return *this;
}

FlagBuilder& FlagBuilder::help(std::string v) {
  opt_->description(std::move(v));
  return *this;
}

FlagBuilder& FlagBuilder::group(std::string v) {
  opt_->group(std::move(v));
  return *this;
}

FlagBuilder& FlagBuilder::required() {
  opt_->required();
  return *this;
}

FlagBuilder& FlagBuilder::default_text(std::string v) {
  // Only shown: CLI11 applies a default string to the field only when asked to (force_callback).
  opt_->default_str(std::move(v));
  return *this;
}

// ---- CommandLine ------------------------------------------------------------------------------

CommandLine::CommandLine(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)), app_(std::make_unique<CLI::App>(summary_)) {
  app_->name("wisp " + command_);
  // Unknown flags and stray arguments are collected rather than thrown, so the message can offer a
  // "did you mean" and name the command (check_leftovers).
  app_->allow_extras();
  app_->option_defaults()->group(kDefaultGroup);
  // -h/--help is looked for before parsing (so required flags are not demanded with it); declared
  // here only so that it is not an unknown flag.
  app_->set_help_flag();
  app_->add_flag(std::string("-h,--help"))->description("show this help");
}

CommandLine::~CommandLine() = default;

FlagBuilder CommandLine::flag(const std::string& names, bool& field) {
  CLI::Option* opt = app_->add_flag(names, field);
  // --json=yes is a mistake, not a way to spell --json.
  opt->disable_flag_override();
  flags_.push_back(opt);
  return FlagBuilder(opt);
}

FlagBuilder CommandLine::add(const std::string& names, std::string value_name, std::string default_text, Setter set) {
  const std::string flag = main_spelling(names);
  CLI::Option* opt = app_->add_option_function<std::string>(
      names,
      [flag, set = std::move(set), this](const std::string& text) {
        // CLI11 hands a value-taking option the next token even when it is another flag
        // (--ctx --json); that is a missing value.
        if (looks_like_flag(text)) {
          throw UsageError(flag + " needs a value (" + app_->get_option(flag)->get_type_name() + ")");
        }
        set(flag, text);
      },
      "");
  opt->type_name(std::move(value_name));
  if (!default_text.empty()) opt->default_str(std::move(default_text));
  return FlagBuilder(opt);
}

void CommandLine::positionals(std::string usage, std::vector<std::string>& field, std::size_t min, std::size_t max) {
  positional_usage_ = std::move(usage);
  min_positionals_ = min;
  max_positionals_ = max;
  positionals_ = &field;
  app_->add_option(kPositionalName, field)->group("");
}

void CommandLine::epilog(std::string text) { epilog_ = std::move(text); }

bool CommandLine::given(const std::string& long_name) const {
  const CLI::Option* opt = app_->get_option_no_throw(long_name);
  if (opt == nullptr) throw std::logic_error(long_name + " was never declared for 'wisp " + command_ + "'");
  return opt->count() > 0;
}

bool CommandLine::parse(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parse(args);
}

bool CommandLine::parse(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "-h" || a == "--help") return false;
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 consumes from the back
  try {
    app_->parse(reversed);
  } catch (const CLI::ArgumentMismatch& e) {
    // CLI11's wording, turned into wisp's: the message starts with the flag's name.
    const std::string what = e.what();
    const std::string name = what.substr(0, what.find_first_of(": "));
    const CLI::Option* opt = app_->get_option_no_throw(name);
    if (opt == nullptr) opt = app_->get_option_no_throw("--" + name);
    if (opt == nullptr) throw UsageError(what);
    const std::string flag = opt->get_name();
    if (what.find("flag override") != std::string::npos) {
      for (const std::string& a : args) {
        if (a.rfind(flag + "=", 0) == 0) {
          throw UsageError(flag + " takes no value, got " + flag_parsing::single_quoted(a.substr(flag.size() + 1)));
        }
      }
      throw UsageError(flag + " takes no value");
    }
    if (what.find("At Most") != std::string::npos) throw UsageError(flag + " given twice");
    throw UsageError(flag + " needs a value (" + opt->get_type_name() + ")");
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  check_leftovers(app_->remaining());
  for (const CLI::Option* opt : flags_) {
    if (opt->count() > 1) throw UsageError(opt->get_name() + " given twice");
  }
  const std::size_t n = positionals_ ? positionals_->size() : 0;
  if (n > max_positionals_) {
    throw UsageError("unexpected argument " + flag_parsing::single_quoted((*positionals_)[max_positionals_]) +
                     " for 'wisp " + command_ + "'");
  }
  if (n < min_positionals_) throw UsageError("'wisp " + command_ + "' needs " + positional_usage_);
  return true;
}

// What CLI11 could not place: an unknown flag (reported first, with a suggestion), else a stray
// argument for a command that takes none.
void CommandLine::check_leftovers(const std::vector<std::string>& left) const {
  for (const std::string& a : left) {
    if (a != "--" && looks_like_flag(a)) {
      const std::string shown = a.substr(0, a.find('='));
      throw UsageError("unknown flag " + flag_parsing::single_quoted(shown) + " for 'wisp " + command_ + "'" +
                       suggestion(shown));
    }
  }
  for (const std::string& a : left) {
    if (a != "--")
      throw UsageError("unexpected argument " + flag_parsing::single_quoted(a) + " for 'wisp " + command_ + "'");
  }
}

std::string CommandLine::suggestion(std::string_view unknown) const {
  std::string_view bare = unknown;
  while (!bare.empty() && bare.front() == '-') bare.remove_prefix(1);
  std::string best;
  std::size_t best_distance = 3;  // more than two edits away is a different word
  for (const CLI::Option* opt : app_->get_options()) {
    for (const std::string& name : opt->get_lnames()) {
      const std::size_t d = distance(bare, name);
      // A short word is near everything: the typo must be small against the word itself.
      if (d < best_distance && 2 * d < bare.size()) {
        best_distance = d;
        best = name;
      }
    }
  }
  return best.empty() ? "" : " (did you mean --" + best + "?)";
}

std::string CommandLine::help() const {
  std::string out = "usage: wisp " + command_ + " [options]";
  if (!positional_usage_.empty()) out += " " + positional_usage_;
  out += "\n\n" + summary_ + "\n";

  std::vector<const CLI::Option*> shown;
  for (const CLI::Option* opt : app_->get_options()) {
    if (!opt->get_group().empty() && opt->get_name() != "--help") shown.push_back(opt);
  }
  // The left column: "  -m, --model FILE" or "      --ctx N".
  auto left = [this](const CLI::Option* opt) {
    const auto& s = opt->get_snames();
    std::string l = s.empty() ? std::string(6, ' ') : "  -" + s.front() + ", ";
    l += opt->get_lnames().empty() ? "" : "--" + opt->get_lnames().front();
    if (std::find(flags_.begin(), flags_.end(), opt) == flags_.end()) l += " " + opt->get_type_name();
    return l;
  };
  std::size_t width = 0;
  for (const CLI::Option* opt : shown) width = std::max(width, left(opt).size());
  width = std::min<std::size_t>(width, 30);

  // Named groups in order of first declaration, then the ungrouped flags and --help last.
  std::vector<std::string> groups;
  for (const CLI::Option* opt : shown) {
    const std::string& g = opt->get_group();
    if (g != kDefaultGroup && std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  groups.emplace_back(kDefaultGroup);
  for (const std::string& g : groups) {
    out += "\n" + g + ":\n";
    for (const CLI::Option* opt : shown) {
      if (opt->get_group() != g) continue;
      std::string line = left(opt);
      std::string text = opt->get_description();
      if (!opt->get_default_str().empty()) text += " (default " + opt->get_default_str() + ")";
      if (opt->get_required()) text += " (required)";
      if (line.size() > width) {
        out += line + "\n" + std::string(width + 2, ' ') + text + "\n";
      } else {
        out += line + std::string(width + 2 - line.size(), ' ') + text + "\n";
      }
    }
  }
  const std::string help_line = "  -h, --help";
  out += help_line + std::string(width + 2 - std::min(width, help_line.size()), ' ') + "show this help\n";
  if (!epilog_.empty()) out += "\n" + epilog_ + (epilog_.back() == '\n' ? "" : "\n");
  return out;
}

}  // namespace wisp::cli
