// What every pre-tokenizer stage works on (private to src/tokenizer): the text decoded once into
// code points with their class bits, segments of it, the Scanner the word regexes are matched
// with, the branches several of those regexes share, and the generic "regex as a splitter" stages.
// The branches are inline so that each stage's loop can inline them wherever it lives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace wisp::pre_tokenizer_detail {

// Per-code-point class bits. kInRange is set for every real code point so that a position past
// the end of the current segment (flags 0) is distinguishable from "none of the classes".
enum : std::uint8_t {
  kLetter = 1,
  kNumber = 2,
  kSpace = 4,        // White_Space, regex \s
  kPunctuation = 8,  // \p{P}, only the default pre-tokenizer asks
  kMark = 16,        // \p{M}, only qwen35 and deepseek-v3 ask
  kSymbol = 32,      // \p{S}, only deepseek-v3 asks
  kInRange = 0x80,
};

constexpr char32_t kPastEnd = 0xFFFFFFFF;

struct DecodedText {
  std::vector<char32_t> cps;
  std::vector<std::uint8_t> flags;
  std::vector<std::uint32_t> offsets;  // byte offset of each code point, plus text.size() at the end
};

// Decodes valid UTF-8 and classifies each code point; throws wisp::Error naming the byte offset
// of invalid UTF-8.
DecodedText decode(std::string_view text);

// A half-open range of code point indices.
struct Segment {
  std::size_t lo;
  std::size_t hi;
};
using Segments = std::vector<Segment>;

// Scanning state over one segment: positions at or past `hi` read as "past the end", which is
// what lets every regex branch below stop at the segment boundary exactly like the regex would.
class Scanner {
 public:
  Scanner(const DecodedText& t, Segment s, Segments& out) : t_(t), hi_(s.hi), pos_(s.lo), out_(out) {}

  bool done() const { return pos_ >= hi_; }
  std::size_t pos() const { return pos_; }
  std::size_t hi() const { return hi_; }
  char32_t cp(std::size_t i) const { return i < hi_ ? t_.cps[i] : kPastEnd; }
  std::uint8_t flags(std::size_t i) const { return i < hi_ ? t_.flags[i] : 0; }
  // [^\s\p{L}\p{N}] at a real position.
  bool other(std::size_t i) const {
    std::uint8_t f = flags(i);
    return f != 0 && (f & (kSpace | kLetter | kNumber)) == 0;
  }
  // Emits [pos, end) as a word and continues from end.
  void emit(std::size_t end) {
    if (end > pos_) out_.push_back({pos_, end});
    pos_ = end;
  }

 private:
  const DecodedText& t_;
  std::size_t hi_;
  std::size_t pos_;
  Segments& out_;
};

inline char32_t ascii_lower(char32_t c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

// 's|'t|'re|'ve|'m|'ll|'d at code point p; returns the match length or 0.
// Case-insensitive for the Llama 3 family ((?i:...)). No non-ASCII code point lowercases to one of
// these ASCII letters, so ASCII folding is the whole of the case-insensitivity.
inline std::size_t contraction_at(const Scanner& s, std::size_t p, bool ignore_case) {
  if (s.cp(p) != '\'' || p + 1 >= s.hi()) return 0;
  char32_t a = s.cp(p + 1);
  if (ignore_case) a = ascii_lower(a);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (p + 2 >= s.hi()) return 0;
  char32_t b = s.cp(p + 2);
  if (ignore_case) b = ascii_lower(b);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
  return 0;
}

inline std::size_t contraction(const Scanner& s, bool ignore_case) { return contraction_at(s, s.pos(), ignore_case); }

// \s+(?!\S)|\s+ at the scanner position (the caller has ruled out every other branch).
inline void whitespace_run(Scanner& s) {
  const std::size_t p = s.pos();
  std::size_t n = 0;
  while (s.flags(p + n) & kSpace) ++n;
  if (n > 1 && p + n < s.hi()) {
    s.emit(p + n - 1);  // leave the last space to prefix the following word
  } else if (n > 0) {
    s.emit(p + n);
  } else {
    s.emit(p + 1);  // unreachable for valid input: every code point matches some branch
  }
}

//  ?[^\s\p{L}\p{N}]+[\r\n/]* (or [\r\n/]? with `one_break`) at code point p: the end of the
// match, or 0 when there is none. '/' is itself in the run's class, so after the run only line
// breaks can follow.
inline std::size_t punctuation_run(const Scanner& s, std::size_t p, bool one_break) {
  std::size_t o = (s.cp(p) == ' ' && s.other(p + 1)) ? p + 1 : p;
  if (!s.other(o)) return 0;
  while (s.other(o)) ++o;
  const auto tail = [&] { return s.cp(o) == '\r' || s.cp(o) == '\n' || s.cp(o) == '/'; };
  if (one_break) {
    if (tail()) ++o;
  } else {
    while (tail()) ++o;
  }
  return o;
}

// The whitespace run at the scanner position: its length, and the position after its last line
// break (0: it has none), which \s*[\r\n]+ matches up to.
struct SpaceRun {
  std::size_t n = 0;
  std::size_t after_break = 0;
};

inline SpaceRun space_run(const Scanner& s) {
  const std::size_t p = s.pos();
  SpaceRun r;
  while (s.flags(p + r.n) & kSpace) {
    if (s.cp(p + r.n) == '\r' || s.cp(p + r.n) == '\n') r.after_break = p + r.n + 1;
    ++r.n;
  }
  return r;
}

// \s*[\r\n]+|\s+(?!\S)|\s+ at the scanner position: the whitespace run up to and including its
// last line break, else whitespace_run.
inline void whitespace_with_breaks(Scanner& s) {
  const SpaceRun r = space_run(s);
  if (r.after_break != 0) {
    s.emit(r.after_break);
  } else {
    whitespace_run(s);
  }
}

// The last branches several regexes share, at the scanner position:
// \p{N}{1,max_digits}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+ ('/' is itself in the
// punctuation class, so only line breaks follow that run).
inline void digits_punctuation_or_space(Scanner& s, std::size_t max_digits) {
  const std::size_t p = s.pos();
  if (s.flags(p) & kNumber) {
    std::size_t e = p;
    while ((s.flags(e) & kNumber) && e - p < max_digits) ++e;
    s.emit(e);
  } else if (std::size_t e = punctuation_run(s, p, /*one_break=*/false)) {
    s.emit(e);
  } else {
    whitespace_with_breaks(s);
  }
}

// A regex used as a splitter, given as `match` (the end of its match at a position, or that
// position when it does not match there): matches are words, and so is each run of code points
// between two matches, as llama.cpp's regex splitter leaves them.
template <typename Match>
void split_by_matches(Segment seg, Match match, Segments& out) {
  std::size_t gap = seg.lo;
  std::size_t p = seg.lo;
  while (p < seg.hi) {
    const std::size_t end = match(p);
    if (end == p) {
      ++p;
      continue;
    }
    if (p > gap) out.push_back({gap, p});
    out.push_back({p, end});
    p = gap = end;
  }
  if (seg.hi > gap) out.push_back({gap, seg.hi});
}

// Regex "X" (max_run 1), "X{1,n}" or "X+" (kRun) used as a splitter: matches and the gaps between
// them both become words, as llama.cpp's std::regex fallback produces them.
constexpr std::size_t kRun = SIZE_MAX;
template <typename Pred>
void split_matches(Segment seg, std::size_t max_run, Pred pred, Segments& out) {
  std::size_t gap = seg.lo;
  std::size_t i = seg.lo;
  while (i < seg.hi) {
    if (!pred(i)) {
      ++i;
      continue;
    }
    if (i > gap) out.push_back({gap, i});
    std::size_t j = i + 1;
    while (j < seg.hi && j - i < max_run && pred(j)) ++j;
    out.push_back({i, j});
    i = gap = j;
  }
  if (seg.hi > gap) out.push_back({gap, seg.hi});
}

// Applies one splitting stage to every segment.
template <typename Stage>
Segments refine(const Segments& in, Stage stage) {
  Segments out;
  out.reserve(in.size() * 2);
  for (const Segment& s : in) stage(s, out);
  return out;
}

}  // namespace wisp::pre_tokenizer_detail
