#include "chat/py_text.h"

#include <algorithm>
#include <stdexcept>

namespace wisp::jinja::text {
namespace {

constexpr char32_t kEscapeBase = 0xDC00;  // lone surrogates U+DC80..DCFF carry undecodable bytes

bool is_escape(char32_t c) { return c >= 0xDC80 && c <= 0xDCFF; }

// Decodes one code point at s[i]; advances i. Invalid sequences yield one escaped byte.
char32_t next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  int extra = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    extra = 1, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    extra = 2, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    extra = 3, cp = b0 & 0x07, min = 0x10000;
  } else {
    ++i;
    return kEscapeBase + b0;
  }
  if (i + extra >= s.size()) {
    ++i;
    return kEscapeBase + b0;
  }
  for (int k = 1; k <= extra; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      ++i;
      return kEscapeBase + b0;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    ++i;
    return kEscapeBase + b0;
  }
  i += extra + 1;
  return cp;
}

}  // namespace

void append_utf8(std::string& out, char32_t c) {
  if (is_escape(c)) {
    out.push_back(static_cast<char>(c - kEscapeBase));
  } else if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::u32string decode(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  for (std::size_t i = 0; i < utf8.size();) out.push_back(next_code_point(utf8, i));
  return out;
}

std::string encode(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  for (char32_t c : code_points) append_utf8(out, c);
  return out;
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

std::size_t length(std::string_view utf8) {
  if (is_ascii(utf8)) return utf8.size();
  std::size_t n = 0;
  for (std::size_t i = 0; i < utf8.size(); ++n) next_code_point(utf8, i);
  return n;
}

bool is_space(char32_t c) {
  switch (c) {
    case 0x09:
    case 0x0A:
    case 0x0B:
    case 0x0C:
    case 0x0D:
    case 0x1C:
    case 0x1D:
    case 0x1E:
    case 0x1F:
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000: return true;
    default: return c >= 0x2000 && c <= 0x200A;
  }
}

std::string strip(std::string_view s, bool left, bool right, std::optional<std::string_view> chars) {
  const std::u32string cps = decode(s);
  const std::u32string set = chars ? decode(*chars) : std::u32string();
  auto strippable = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : is_space(c); };
  std::size_t begin = 0;
  std::size_t end = cps.size();
  if (left) {
    while (begin < end && strippable(cps[begin])) ++begin;
  }
  if (right) {
    while (end > begin && strippable(cps[end - 1])) --end;
  }
  return encode(std::u32string_view(cps).substr(begin, end - begin));
}

namespace {

// Whitespace split (sep=None): runs of whitespace separate, leading/trailing ignored.
std::vector<std::u32string> split_whitespace(const std::u32string& cps, long maxsplit, bool from_right) {
  std::vector<std::u32string> parts;
  if (!from_right) {
    std::size_t i = 0;
    while (true) {
      while (i < cps.size() && is_space(cps[i])) ++i;
      if (i >= cps.size()) break;
      if (maxsplit >= 0 && static_cast<long>(parts.size()) == maxsplit) {
        std::size_t end = cps.size();
        while (end > i && is_space(cps[end - 1])) --end;
        parts.push_back(cps.substr(i, end - i));
        break;
      }
      std::size_t j = i;
      while (j < cps.size() && !is_space(cps[j])) ++j;
      parts.push_back(cps.substr(i, j - i));
      i = j;
    }
    return parts;
  }
  std::size_t i = cps.size();
  while (true) {
    while (i > 0 && is_space(cps[i - 1])) --i;
    if (i == 0) break;
    if (maxsplit >= 0 && static_cast<long>(parts.size()) == maxsplit) {
      std::size_t begin = 0;
      while (begin < i && is_space(cps[begin])) ++begin;
      parts.push_back(cps.substr(begin, i - begin));
      break;
    }
    std::size_t j = i;
    while (j > 0 && !is_space(cps[j - 1])) --j;
    parts.push_back(cps.substr(j, i - j));
    i = j;
  }
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<std::string> to_utf8(const std::vector<std::u32string>& parts) {
  std::vector<std::string> out;
  out.reserve(parts.size());
  for (const auto& p : parts) out.push_back(encode(p));
  return out;
}

}  // namespace

std::vector<std::string> split(std::string_view s, std::optional<std::string_view> sep, long maxsplit) {
  if (!sep) return to_utf8(split_whitespace(decode(s), maxsplit, false));
  if (sep->empty()) throw std::invalid_argument("empty separator");
  // A separator match on UTF-8 bytes is a match on code points: UTF-8 is self-synchronising.
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (maxsplit < 0 || static_cast<long>(parts.size()) < maxsplit) {
    const std::size_t hit = s.find(*sep, start);
    if (hit == std::string_view::npos) break;
    parts.emplace_back(s.substr(start, hit - start));
    start = hit + sep->size();
  }
  parts.emplace_back(s.substr(start));
  return parts;
}

std::vector<std::string> rsplit(std::string_view s, std::optional<std::string_view> sep, long maxsplit) {
  if (!sep) return to_utf8(split_whitespace(decode(s), maxsplit, true));
  if (sep->empty()) throw std::invalid_argument("empty separator");
  std::vector<std::string> parts;
  std::size_t end = s.size();
  while (maxsplit < 0 || static_cast<long>(parts.size()) < maxsplit) {
    if (end < sep->size()) break;
    const std::size_t hit = s.rfind(*sep, end - sep->size());
    if (hit == std::string_view::npos) break;
    parts.emplace_back(s.substr(hit + sep->size(), end - hit - sep->size()));
    end = hit;
  }
  parts.emplace_back(s.substr(0, end));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::string replace(std::string_view s, std::string_view old_text, std::string_view new_text, long count) {
  std::string out;
  if (old_text.empty()) {
    // Python inserts `new` before every code point and at the end, up to `count` times.
    const std::u32string cps = decode(s);
    long done = 0;
    for (char32_t c : cps) {
      if (count < 0 || done < count) {
        out += new_text;
        ++done;
      }
      append_utf8(out, c);
    }
    if (count < 0 || done < count) out += new_text;
    return out;
  }
  std::size_t start = 0;
  long done = 0;
  while (count < 0 || done < count) {
    const std::size_t hit = s.find(old_text, start);
    if (hit == std::string_view::npos) break;
    out.append(s.substr(start, hit - start));
    out.append(new_text);
    start = hit + old_text.size();
    ++done;
  }
  out.append(s.substr(start));
  return out;
}

namespace {

char32_t to_upper_cp(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c < 0x80) return c;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c == 0xB5) return 0x39C;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x131) return 'I';
    if (c == 0x17F) return 'S';
    if (c == 0x138 || c == 0x149) return c;
    const bool odd_lower = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_lower) return (c % 2 == 0) ? c - 1 : c;
    return (c % 2 == 1) ? c - 1 : c;
  }
  if (c >= 0x3B1 && c <= 0x3C9) return c == 0x3C2 ? 0x3A3 : c - 32;
  if (c >= 0x3AC && c <= 0x3AF) {
    static constexpr char32_t kTonos[] = {0x386, 0x388, 0x389, 0x38A};
    return kTonos[c - 0x3AC];
  }
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

char32_t to_lower_cp(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0x80) return c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x130) return 'i';  // Python gives "i̇" (two code points); the plain letter is closer
    if (c == 0x138 || c == 0x149 || c == 0x17F) return c;
    const bool odd_lower = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_lower) return (c % 2 == 1) ? c + 1 : c;
    return (c % 2 == 0) ? c + 1 : c;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c == 0x386) return 0x3AC;
  if (c >= 0x388 && c <= 0x38A) return c + 37;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

bool is_cased_letter(char32_t c) { return to_upper_cp(c) != c || to_lower_cp(c) != c || c == 0xDF; }

}  // namespace

std::string upper(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : decode(s)) {
    if (c == 0xDF) {
      out += "SS";  // ß has no single upper-case code point; Python writes "SS"
    } else {
      append_utf8(out, to_upper_cp(c));
    }
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : decode(s)) append_utf8(out, to_lower_cp(c));
  return out;
}

std::string title(std::string_view s) {
  // Python: a cased letter after an uncased character starts a word (upper-cased), the others are
  // lower-cased.
  std::string out;
  bool previous_cased = false;
  for (char32_t c : decode(s)) {
    const bool cased = is_cased_letter(c);
    append_utf8(out, cased ? (previous_cased ? to_lower_cp(c) : to_upper_cp(c)) : c);
    previous_cased = cased;
  }
  return out;
}

std::string capitalize(std::string_view s) {
  std::string out;
  bool first = true;
  for (char32_t c : decode(s)) {
    append_utf8(out, first ? to_upper_cp(c) : to_lower_cp(c));
    first = false;
  }
  return out;
}

}  // namespace wisp::jinja::text
