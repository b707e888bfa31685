#include "plan/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "wisp/error.h"

namespace wisp::plan {
namespace {

struct Unit {
  std::string_view name;  // lower case, as matched
  double factor;
};

// Sizes: both systems spelled out so that neither is a default the user has to guess.
constexpr std::array<Unit, 14> kSizeUnits = {{
    {"", 1.0},
    {"b", 1.0},
    {"byte", 1.0},
    {"bytes", 1.0},
    {"kb", 1e3},
    {"mb", 1e6},
    {"gb", 1e9},
    {"tb", 1e12},
    {"pb", 1e15},
    {"kib", 1024.0},
    {"mib", 1024.0 * 1024.0},
    {"gib", 1024.0 * 1024.0 * 1024.0},
    {"tib", 1024.0 * 1024.0 * 1024.0 * 1024.0},
    {"pib", 1024.0 * 1024.0 * 1024.0 * 1024.0 * 1024.0},
}};

constexpr const char* kSizeUnitHelp = "B, KB, MB, GB, TB (1000-based) or KiB, MiB, GiB, TiB (1024-based)";

// SI prefixes for rates and counts, where no 1024-based reading exists.
constexpr std::array<Unit, 6> kSiPrefixes = {{
    {"", 1.0},
    {"k", 1e3},
    {"m", 1e6},
    {"g", 1e9},
    {"t", 1e12},
    {"p", 1e15},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

struct NumberAndUnit {
  double value;
  std::string_view unit;  // trimmed, may be empty
};

// Splits "3.35 TB/s" into 3.35 and "TB/s". `what` names the kind of quantity for messages.
NumberAndUnit split_number(std::string_view text, const char* what) {
  std::string_view t = trim(text);
  if (t.empty()) throw Error(std::string("empty ") + what);
  double value = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), value);
  if (ec == std::errc::result_out_of_range) throw Error(quoted(text) + " is out of range");
  if (ec != std::errc() || end == t.data()) {
    throw Error(quoted(text) + " is not a " + what + " (expected a number, e.g. 80GiB)");
  }
  if (!std::isfinite(value)) throw Error(quoted(text) + " is not a finite number");
  if (value < 0) throw Error(std::string(what) + " " + quoted(text) + " must not be negative");
  return {value, trim(std::string_view(end, static_cast<std::size_t>(t.data() + t.size() - end)))};
}

double size_factor(std::string_view unit, std::string_view text) {
  const std::string u = lower(unit);
  for (const Unit& s : kSizeUnits) {
    if (u == s.name) return s.factor;
  }
  if (u == "k" || u == "m" || u == "g" || u == "t" || u == "p") {
    const std::string prefix(1, static_cast<char>(u[0] - 'a' + 'A'));
    throw Error("ambiguous unit " + quoted(unit) + " in " + quoted(text) + ": write " + prefix + "iB (1024-based) or " +
                prefix + "B (1000-based)");
  }
  throw Error("unknown unit " + quoted(unit) + " in " + quoted(text) + " (use " + kSizeUnitHelp + ")");
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Drops trailing zeros after a decimal point, so 3.1250 prints as 3.125 and 12.000 as 12.
std::string trim_zeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// Picks the largest unit (step `base`, names `names`) that `value` reaches.
std::string scaled(double value, double base, const char* const* names, int n_names) {
  int i = 0;
  double v = value;
  while (i + 1 < n_names && std::fabs(v) >= base) {
    v /= base;
    ++i;
  }
  return format_number(v) + " " + names[i];
}

}  // namespace

std::uint64_t parse_size(std::string_view text) {
  const NumberAndUnit nu = split_number(text, "size");
  const double bytes = nu.value * size_factor(nu.unit, text);
  // 2^64 as a double; anything at or above it cannot be a byte count.
  if (bytes >= 18446744073709551616.0) throw Error("size " + quoted(text) + " is too large");
  return static_cast<std::uint64_t>(std::floor(bytes + 0.5));
}

double parse_bandwidth(std::string_view text) {
  const NumberAndUnit nu = split_number(text, "bandwidth");
  if (nu.unit.empty()) return nu.value;  // bare number: bytes per second
  const std::string u = lower(nu.unit);
  std::string_view size_unit;
  if (ends_with(u, "/s")) {
    size_unit = nu.unit.substr(0, nu.unit.size() - 2);
  } else if (ends_with(u, "ps")) {  // "GBps"
    size_unit = nu.unit.substr(0, nu.unit.size() - 2);
  } else {
    // A size where a rate belongs: say so rather than "unknown unit".
    size_factor(nu.unit, text);
    throw Error(quoted(text) + " is a size, not a bandwidth: add /s (e.g. 3.35TB/s)");
  }
  return nu.value * size_factor(trim(size_unit), text);
}

double parse_flops(std::string_view text) {
  const NumberAndUnit nu = split_number(text, "compute rate");
  std::string u = lower(nu.unit);
  for (std::string_view suffix : {"flop/s", "flops", "flop"}) {
    if (ends_with(u, suffix)) {
      u.resize(u.size() - suffix.size());
      break;
    }
  }
  for (const Unit& p : kSiPrefixes) {
    if (u == p.name) return nu.value * p.factor;
  }
  throw Error("unknown unit " + quoted(nu.unit) + " in " + quoted(text) +
              " (use FLOP/s with an optional k, M, G, T or P prefix, e.g. 100TFLOP/s)");
}

double parse_count(std::string_view text) {
  const NumberAndUnit nu = split_number(text, "count");
  const std::string u = lower(nu.unit);
  // B for billion is how model sizes are written ("13B"); G is accepted as its SI twin.
  if (u.empty()) return nu.value;
  if (u == "k") return nu.value * 1e3;
  if (u == "m") return nu.value * 1e6;
  if (u == "b" || u == "g") return nu.value * 1e9;
  if (u == "t") return nu.value * 1e12;
  throw Error("unknown suffix " + quoted(nu.unit) + " in " + quoted(text) +
              " (use a plain number like 13e9, or K, M, B, T for thousand, million, billion, "
              "trillion)");
}

std::string format_number(double value, int significant) {
  if (!std::isfinite(value)) return value > 0 ? "inf" : (value < 0 ? "-inf" : "nan");
  if (value == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::max(0, significant - 1 - magnitude);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return trim_zeros(buf);
}

std::string format_thousands(std::uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string format_bytes(double bytes, UnitSystem units) {
  static constexpr const char* kBinary[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  static constexpr const char* kDecimal[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  return units == UnitSystem::kBinary ? scaled(bytes, 1024.0, kBinary, 6) : scaled(bytes, 1000.0, kDecimal, 6);
}

std::string format_bandwidth(double bytes_per_second, UnitSystem units) {
  return format_bytes(bytes_per_second, units) + "/s";
}

std::string format_flops(double flops_per_second) {
  static constexpr const char* kNames[] = {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s"};
  return scaled(flops_per_second, 1000.0, kNames, 6);
}

std::string format_count(double count) {
  static constexpr const char* kNames[] = {"", "thousand", "million", "billion", "trillion"};
  std::string s = scaled(count, 1000.0, kNames, 5);
  if (!s.empty() && s.back() == ' ') s.pop_back();  // plain counts under a thousand
  return s;
}

std::string format_seconds(double seconds) {
  if (seconds >= 1.0 || seconds == 0) return format_number(seconds, 3) + " s";
  if (seconds >= 1e-3) return format_number(seconds * 1e3, 3) + " ms";
  return format_number(seconds * 1e6, 3) + " us";
}

}  // namespace wisp::plan
