#include "args.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace wisp::cli {
namespace {

std::string long_spelling(std::string_view name) { return "--" + std::string(name); }

std::string default_value_name(ArgKind kind) {
  switch (kind) {
    case ArgKind::kFlag: return "";
    case ArgKind::kString: return "VALUE";
    case ArgKind::kInt: return "N";
    case ArgKind::kNumber: return "X";
  }
  return "VALUE";
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// "-5", "-0.5", "-1e3": values that look like flags but are numbers (a negative --ctx must reach
// the "must be positive" check, not be mistaken for an unknown flag).
bool looks_like_number(std::string_view s) {
  if (s.size() >= 2 && s[0] == '-') s.remove_prefix(1);
  return !s.empty() && ((s[0] >= '0' && s[0] <= '9') || (s[0] == '.' && s.size() > 1));
}

bool looks_like_flag(std::string_view s) { return s.size() >= 2 && s[0] == '-' && !looks_like_number(s); }

std::optional<std::int64_t> to_int(std::string_view s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> to_number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
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

// Checks a kInt / kNumber value as it is parsed, so the error names the flag at fault.
void check_value(const ArgSpec& s, std::string_view value) {
  if (s.kind == ArgKind::kInt && !to_int(value)) {
    throw UsageError(long_spelling(s.name) + " expects an integer, got " + quoted(value));
  }
  if (s.kind == ArgKind::kNumber && !to_number(value)) {
    throw UsageError(long_spelling(s.name) + " expects a number, got " + quoted(value));
  }
}

}  // namespace

// ---- Args -------------------------------------------------------------------------------------

const ArgSpec& Args::spec(std::string_view name) const {
  for (const ArgSpec& s : specs_) {
    if (s.name == name) return s;
  }
  throw std::logic_error("flag --" + std::string(name) + " was never declared");
}

std::string Args::spelling(std::string_view name) const { return long_spelling(spec(name).name); }

bool Args::has(std::string_view name) const {
  spec(name);
  return given_.find(name) != given_.end();
}

bool Args::flag(std::string_view name) const {
  if (spec(name).kind != ArgKind::kFlag) {
    throw std::logic_error("--" + std::string(name) + " is not a flag");
  }
  return has(name);
}

std::optional<std::string> Args::value(std::string_view name) const {
  const ArgSpec& s = spec(name);
  if (auto it = given_.find(name); it != given_.end()) return it->second;
  if (!s.default_value.empty()) return s.default_value;
  return std::nullopt;
}

std::string Args::str(std::string_view name) const {
  auto v = value(name);
  if (!v) throw UsageError(spelling(name) + " is required");
  return *v;
}

std::optional<std::int64_t> Args::opt_int(std::string_view name) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  auto i = to_int(*v);
  if (!i) throw UsageError(spelling(name) + " expects an integer, got " + quoted(*v));
  return i;
}

std::int64_t Args::int64(std::string_view name) const {
  auto v = opt_int(name);
  if (!v) throw UsageError(spelling(name) + " is required");
  return *v;
}

std::optional<std::uint64_t> Args::opt_positive(std::string_view name) const {
  auto v = opt_int(name);
  if (!v) return std::nullopt;
  if (*v <= 0) {
    throw UsageError(spelling(name) + " must be a positive integer, got " + std::to_string(*v));
  }
  return static_cast<std::uint64_t>(*v);
}

std::uint64_t Args::positive(std::string_view name) const {
  auto v = opt_positive(name);
  if (!v) throw UsageError(spelling(name) + " is required");
  return *v;
}

std::optional<double> Args::opt_number(std::string_view name) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  auto d = to_number(*v);
  if (!d) throw UsageError(spelling(name) + " expects a number, got " + quoted(*v));
  return d;
}

double Args::number(std::string_view name) const {
  auto v = opt_number(name);
  if (!v) throw UsageError(spelling(name) + " is required");
  return *v;
}

// ---- ArgParser --------------------------------------------------------------------------------

ArgParser::ArgParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {
  flag("help").short_name('h').help("show this help");
}

ArgBuilder ArgParser::flag(std::string name) {
  ArgSpec s;
  s.name = std::move(name);
  s.kind = ArgKind::kFlag;
  add(std::move(s));
  return ArgBuilder(*this, specs_.size() - 1);
}

ArgBuilder ArgParser::option(std::string name, ArgKind kind) {
  if (kind == ArgKind::kFlag) return flag(std::move(name));
  ArgSpec s;
  s.name = std::move(name);
  s.kind = kind;
  add(std::move(s));
  return ArgBuilder(*this, specs_.size() - 1);
}

// ---- ArgBuilder -------------------------------------------------------------------------------

ArgSpec& ArgBuilder::spec() { return parser_.specs_[index_]; }

ArgBuilder& ArgBuilder::short_name(char c) {
  if (const ArgSpec* other = parser_.find_short(c); other != nullptr && other != &spec()) {
    throw std::logic_error(std::string("-") + c + " declared twice");
  }
  spec().short_name = c;
  return *this;
}

ArgBuilder& ArgBuilder::value_name(std::string v) {
  spec().value_name = std::move(v);
  return *this;
}

ArgBuilder& ArgBuilder::help(std::string v) {
  spec().help = std::move(v);
  return *this;
}

ArgBuilder& ArgBuilder::default_value(std::string v) {
  check_value(spec(), v);  // a default that fails its own kind is a programming error
  spec().default_value = std::move(v);
  return *this;
}

ArgBuilder& ArgBuilder::required() {
  spec().required = true;
  return *this;
}

ArgBuilder& ArgBuilder::group(std::string v) {
  spec().group = std::move(v);
  return *this;
}

ArgParser& ArgParser::add(ArgSpec spec) {
  if (spec.name.empty() || spec.name[0] == '-') {
    throw std::logic_error("flag names are declared without dashes: '" + spec.name + "'");
  }
  if (find_long(spec.name) != nullptr) throw std::logic_error("--" + spec.name + " declared twice");
  if (spec.short_name != 0 && find_short(spec.short_name) != nullptr) {
    throw std::logic_error(std::string("-") + spec.short_name + " declared twice");
  }
  if (spec.value_name.empty()) spec.value_name = default_value_name(spec.kind);
  specs_.push_back(std::move(spec));
  return *this;
}

ArgParser& ArgParser::positionals(std::string usage, std::size_t min, std::size_t max) {
  positional_usage_ = std::move(usage);
  min_positionals_ = min;
  max_positionals_ = max;
  return *this;
}

ArgParser& ArgParser::epilog(std::string text) {
  epilog_ = std::move(text);
  return *this;
}

const ArgSpec* ArgParser::find_long(std::string_view name) const {
  for (const ArgSpec& s : specs_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const ArgSpec* ArgParser::find_short(char c) const {
  for (const ArgSpec& s : specs_) {
    if (s.short_name == c) return &s;
  }
  return nullptr;
}

std::string ArgParser::suggestion(std::string_view unknown) const {
  std::string_view bare = unknown;
  while (!bare.empty() && bare.front() == '-') bare.remove_prefix(1);
  const ArgSpec* best = nullptr;
  std::size_t best_distance = 3;  // more than two edits away is a different word
  for (const ArgSpec& s : specs_) {
    const std::size_t d = distance(bare, s.name);
    // A short word is near everything: the typo must be small against the word itself.
    if (d < best_distance && 2 * d < bare.size()) {
      best_distance = d;
      best = &s;
    }
  }
  return best ? " (did you mean --" + best->name + "?)" : "";
}

Args ArgParser::parse(int argc, const char* const* argv) const {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parse(args);
}

Args ArgParser::parse(const std::vector<std::string>& argv) const {
  Args out;
  out.specs_ = specs_;
  bool only_positionals = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& tok = argv[i];
    if (only_positionals || !looks_like_flag(tok)) {
      out.positionals_.push_back(tok);
      continue;
    }
    if (tok == "--") {
      only_positionals = true;
      continue;
    }
    // Split "--name=value"; short flags take their value from the next token.
    const ArgSpec* spec = nullptr;
    std::optional<std::string> inline_value;
    std::string shown = tok;
    if (tok.rfind("--", 0) == 0) {
      const std::size_t eq = tok.find('=');
      const std::string name = tok.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      shown = "--" + name;
      if (eq != std::string::npos) inline_value = tok.substr(eq + 1);
      spec = find_long(name);
    } else if (tok.size() == 2) {
      spec = find_short(tok[1]);
    }
    if (spec == nullptr) {
      throw UsageError("unknown flag " + quoted(shown) + " for 'wisp " + command_ + "'" + suggestion(shown));
    }
    const std::string flag = long_spelling(spec->name);
    if (spec->name == "help") {
      out.help_ = true;
      return out;
    }
    if (out.given_.count(spec->name) != 0) throw UsageError(flag + " given twice");
    if (spec->kind == ArgKind::kFlag) {
      if (inline_value) throw UsageError(flag + " takes no value, got " + quoted(*inline_value));
      out.given_[spec->name] = "";
      continue;
    }
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < argv.size() && !looks_like_flag(argv[i + 1])) {
      value = argv[++i];
    } else {
      throw UsageError(flag + " needs a value (" + spec->value_name + ")");
    }
    check_value(*spec, value);
    out.given_[spec->name] = std::move(value);
  }

  if (out.positionals_.size() > max_positionals_) {
    throw UsageError("unexpected argument " + quoted(out.positionals_[max_positionals_]) + " for 'wisp " + command_ +
                     "'");
  }
  if (out.positionals_.size() < min_positionals_) {
    throw UsageError("'wisp " + command_ + "' needs " + positional_usage_);
  }
  for (const ArgSpec& s : specs_) {
    if (s.required && out.given_.count(s.name) == 0) {
      throw UsageError(long_spelling(s.name) + " is required");
    }
  }
  return out;
}

std::string ArgParser::help() const {
  std::string out = "usage: wisp " + command_ + " [options]";
  if (!positional_usage_.empty()) out += " " + positional_usage_;
  out += "\n\n" + summary_ + "\n";

  // The left column: "  -m, --model FILE" or "      --ctx N".
  auto left = [](const ArgSpec& s) {
    std::string l = s.short_name ? std::string("  -") + s.short_name + ", " : std::string(6, ' ');
    l += "--" + s.name;
    if (s.kind != ArgKind::kFlag) l += " " + s.value_name;
    return l;
  };
  std::size_t width = 0;
  for (const ArgSpec& s : specs_) width = std::max(width, left(s).size());
  width = std::min<std::size_t>(width, 30);

  // Named groups in order of first declaration, then the ungrouped flags and --help last.
  auto group_of = [](const ArgSpec& s) { return s.group.empty() ? std::string("options") : s.group; };
  std::vector<std::string> groups;
  for (const ArgSpec& s : specs_) {
    const std::string g = group_of(s);
    if (g != "options" && std::find(groups.begin(), groups.end(), g) == groups.end()) {
      groups.push_back(g);
    }
  }
  groups.push_back("options");
  for (const std::string& g : groups) {
    out += "\n" + g + ":\n";
    for (const ArgSpec& s : specs_) {
      if (group_of(s) != g || s.name == "help") continue;
      std::string line = left(s);
      std::string text = s.help;
      if (!s.default_value.empty()) text += " (default " + s.default_value + ")";
      if (s.required) text += " (required)";
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
