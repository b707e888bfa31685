#include "tokenizer/pre_tokenizer.h"

#include <iterator>
#include <string>

#include "tokenizer/unicode.h"
#include "wisp/error.h"

namespace wisp {

namespace {

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

DecodedText decode(std::string_view text) {
  DecodedText d;
  d.cps.reserve(text.size());
  d.flags.reserve(text.size());
  d.offsets.reserve(text.size() + 1);
  std::size_t pos = 0;
  while (pos < text.size()) {
    d.offsets.push_back(static_cast<std::uint32_t>(pos));
    std::optional<char32_t> cp = utf8_decode(text, pos);
    if (!cp) throw Error("pre-tokenizer: invalid UTF-8 at byte " + std::to_string(pos));
    std::uint8_t f = kInRange;
    switch (unicode_class(*cp)) {
      case UnicodeClass::kLetter: f |= kLetter; break;
      case UnicodeClass::kNumber: f |= kNumber; break;
      case UnicodeClass::kPunctuation: f |= kPunctuation; break;
      case UnicodeClass::kMark: f |= kMark; break;
      case UnicodeClass::kSymbol: f |= kSymbol; break;
      default: break;
    }
    if (unicode_is_whitespace(*cp)) f |= kSpace;
    d.cps.push_back(*cp);
    d.flags.push_back(f);
  }
  d.offsets.push_back(static_cast<std::uint32_t>(text.size()));
  return d;
}

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

char32_t ascii_lower(char32_t c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c; }

// 's|'t|'re|'ve|'m|'ll|'d at code point p; returns the match length or 0.
// Case-insensitive for the Llama 3 family ((?i:...)). No non-ASCII code point lowercases to one of
// these ASCII letters, so ASCII folding is the whole of the case-insensitivity.
std::size_t contraction_at(const Scanner& s, std::size_t p, bool ignore_case) {
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

std::size_t contraction(const Scanner& s, bool ignore_case) { return contraction_at(s, s.pos(), ignore_case); }

// \s+(?!\S)|\s+ at the scanner position (the caller has ruled out every other branch).
void whitespace_run(Scanner& s) {
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
std::size_t punctuation_run(const Scanner& s, std::size_t p, bool one_break) {
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

// \s*[\r\n]+|\s+(?!\S)|\s+ at the scanner position: the whitespace run up to and including its
// last line break, else whitespace_run.
void whitespace_with_breaks(Scanner& s) {
  const std::size_t p = s.pos();
  std::size_t n = 0;
  std::size_t after_break = 0;
  while (s.flags(p + n) & kSpace) {
    if (s.cp(p + n) == '\r' || s.cp(p + n) == '\n') after_break = p + n + 1;
    ++n;
  }
  if (after_break != 0) {
    s.emit(after_break);
  } else {
    whitespace_run(s);
  }
}

// The last branches several regexes share, at the scanner position:
// \p{N}{1,max_digits}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+ ('/' is itself in the
// punctuation class, so only line breaks follow that run).
void digits_punctuation_or_space(Scanner& s, std::size_t max_digits) {
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

// Jais 2's whitespace branches: \s*[\r\n]+, then \s{k}(?!\S) for k = 512, 256, ..., 8, 4, then
// \s{1,2}(?!\S) and \s{1}: long runs are cut into power-of-two pieces.
void whitespace_in_powers_of_two(Scanner& s) {
  const std::size_t p = s.pos();
  std::size_t n = 0;
  std::size_t after_break = 0;
  while (s.flags(p + n) & kSpace) {
    if (s.cp(p + n) == '\r' || s.cp(p + n) == '\n') after_break = p + n + 1;
    ++n;
  }
  if (after_break != 0) {
    s.emit(after_break);
    return;
  }
  // \s{k}(?!\S): k spaces followed by another space or the end of the segment.
  auto fits = [&](std::size_t k) { return k <= n && (k < n || p + n >= s.hi()); };
  for (std::size_t k = 512; k >= 4; k /= 2) {
    if (fits(k)) {
      s.emit(p + k);
      return;
    }
  }
  if (fits(2)) {
    s.emit(p + 2);
  } else {
    s.emit(p + 1);  // \s{1}(?!\S) or \s{1}
  }
}

void split_gpt2(const DecodedText& t, Segment seg, Segments& out) {
  Scanner s(t, seg, out);
  while (!s.done()) {
    const std::size_t p = s.pos();
    if (std::size_t n = contraction(s, false)) {
      s.emit(p + n);
      continue;
    }
    const bool space = s.cp(p) == ' ';
    const std::uint8_t f = s.flags(space ? p + 1 : p);
    std::size_t q = p + (space ? 1 : 0);
    if (f & kLetter) {  //  ?\p{L}+
      while (s.flags(q) & kLetter) ++q;
      s.emit(q);
    } else if (f & kNumber) {  //  ?\p{N}+
      while (s.flags(q) & kNumber) ++q;
      s.emit(q);
    } else if (f != 0 && (f & (kSpace | kLetter | kNumber)) == 0) {  //  ?[^\s\p{L}\p{N}]+
      while (s.other(q)) ++q;
      s.emit(q);
    } else {
      whitespace_run(s);
    }
  }
}

// The Llama 3 regex family: (?i:contractions)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
//  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ and its variants as the options say.
struct Llama3Options {
  std::size_t max_digits = 3;        // 3: Llama 3, 1: Qwen2
  bool contractions = true;          // false: no contraction branch (ufakzeka)
  std::uint8_t letter = kLetter;     // kLetter | kMark: [\p{L}\p{M}]+ words, marks not punctuation (qwen35)
  bool breaks_after_punct = true;    // false:  ?[^\s\p{L}\p{N}\r\n]+ with no [\r\n]* after it (seed-coder)
  bool power_of_two_spaces = false;  // Jais 2's whitespace branches
};

void split_llama3(const DecodedText& t, Segment seg, const Llama3Options& o, Segments& out) {
  Scanner s(t, seg, out);
  const std::uint8_t word = o.letter;
  auto other = [&](std::size_t i) {
    const std::uint8_t f = s.flags(i);
    return f != 0 && (f & (kSpace | word | kNumber)) == 0;
  };
  while (!s.done()) {
    const std::size_t p = s.pos();
    if (std::size_t n = o.contractions ? contraction(s, true) : 0) {
      s.emit(p + n);
      continue;
    }
    const char32_t c = s.cp(p);
    const std::uint8_t f = s.flags(p);
    // [^\r\n\p{L}\p{N}]?\p{L}+ : one optional non-letter (even a space or a tab) glued to letters.
    if (c != '\r' && c != '\n' && !(f & kNumber) && ((f & word) || (s.flags(p + 1) & word))) {
      std::size_t q = p + 1;
      while (s.flags(q) & word) ++q;
      s.emit(q);
      continue;
    }
    if (f & kNumber) {  // \p{N}{1,3} (Llama 3) or \p{N} (Qwen2)
      std::size_t q = p;
      while ((s.flags(q) & kNumber) && q - p < o.max_digits) ++q;
      s.emit(q);
      continue;
    }
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    const bool space = c == ' ';
    const std::uint8_t f2 = space ? s.flags(p + 1) : f;
    if ((f2 & (kSpace | word | kNumber)) == 0) {
      std::size_t q = p + (space ? 1 : 0);
      while (other(q)) ++q;
      if (o.breaks_after_punct)
        while (s.cp(q) == '\r' || s.cp(q) == '\n') ++q;
      s.emit(q);
      continue;
    }
    if (o.power_of_two_spaces) {
      whitespace_in_powers_of_two(s);
    } else {
      whitespace_with_breaks(s);
    }
  }
}

// llama.cpp splits this regex with std::regex over a "collapsed" text: ASCII stays itself, every
// other code point becomes one byte standing for its class, so \p{L} is [A-Za-z] plus "a non-ASCII
// letter" and the case tests (?=\p{L})[^a-z] / (?=\p{L})[^A-Z] hold for every non-ASCII letter.
// The branches below are that regex's first match at each position, backtracking included.
// Tekken (Mistral) is the same regex with \p{N} one digit at a time and no contraction suffix.
void split_gpt4o(const DecodedText& t, Segment seg, std::size_t max_digits, bool contractions, std::uint8_t letters,
                 Segments& out) {
  Scanner s(t, seg, out);
  auto letter = [&](std::size_t i) { return (s.flags(i) & letters) != 0; };
  auto upper = [&](std::size_t i) { return letter(i) && !(s.cp(i) >= 'a' && s.cp(i) <= 'z'); };
  auto lower = [&](std::size_t i) { return letter(i) && !(s.cp(i) >= 'A' && s.cp(i) <= 'Z'); };
  // Upper* Lower+ from q (first branch): the upper run, then the lower run after it, or -- the
  // branch backtracking -- up to the run's last code point that is lower case too; 0: no match.
  auto lower_ending = [&](std::size_t q) -> std::size_t {
    if (!letter(q)) return 0;
    std::size_t r = q;
    while (upper(r)) ++r;
    if (lower(r)) {
      while (lower(r)) ++r;
      return r;
    }
    for (std::size_t j = r; j > q; --j)
      if (lower(j - 1)) return j;
    return 0;
  };
  // Upper+ Lower* from q (second branch); 0: no match.
  auto upper_led = [&](std::size_t q) -> std::size_t {
    if (!upper(q)) return 0;
    std::size_t r = q;
    while (upper(r)) ++r;
    while (lower(r)) ++r;
    return r;
  };
  while (!s.done()) {
    const std::size_t p = s.pos();
    const char32_t c = s.cp(p);
    const std::uint8_t f = s.flags(p);
    // [^\r\n\p{L}\p{N}]? is tried taken, then not, in each branch in turn. Only when marks are
    // letters (`letters` has kMark) can a prefix code point start a run itself.
    const bool prefix = c != '\r' && c != '\n' && !(f & (kLetter | kNumber));
    std::size_t end = 0;
    for (int branch = 0; branch < 2 && end == 0; ++branch) {
      for (const std::size_t q : {p + 1, p}) {
        if (q == p + 1 && !prefix) continue;
        end = branch == 0 ? lower_ending(q) : upper_led(q);
        if (end != 0) break;
      }
    }
    if (end != 0) {
      s.emit(end + (contractions ? contraction_at(s, end, true) : 0));
      continue;
    }
    digits_punctuation_or_space(s, max_digits);
  }
}

// EXAONE MoE: (?i:contractions)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}|
//  ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+ -- a word runs on across single spaces
// between letters ("New York" is one), marks count only after a letter.
void split_exaone_moe(const DecodedText& t, Segment seg, Segments& out) {
  Scanner s(t, seg, out);
  auto letter = [&](std::size_t i) { return (s.flags(i) & kLetter) != 0; };
  while (!s.done()) {
    const std::size_t p = s.pos();
    if (std::size_t n = contraction(s, true)) {
      s.emit(p + n);
      continue;
    }
    const char32_t c = s.cp(p);
    const std::uint8_t f = s.flags(p);
    const bool prefix = c != '\r' && c != '\n' && !(f & (kLetter | kNumber));
    if (letter(p) || (prefix && letter(p + 1))) {
      std::size_t q = letter(p) ? p : p + 1;
      while (true) {
        if (letter(q) || (q > p && (s.flags(q) & kMark))) {
          ++q;
        } else if (s.cp(q) == ' ' && letter(q + 1)) {
          q += 2;
        } else {
          break;
        }
      }
      s.emit(q);
      continue;
    }
    if (f & kNumber) {
      s.emit(p + 1);
      continue;
    }
    if (std::size_t e = punctuation_run(s, p, /*one_break=*/true)) {
      s.emit(e);
      continue;
    }
    whitespace_with_breaks(s);
  }
}

// Kimi K2's \p{Han} as llama.cpp implements it: the CJK ideograph blocks (unified, extensions A-F,
// compatibility ideographs and their supplement), not the Unicode Script property.
bool is_han(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2EBEF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Words with the contraction as a suffix (Tiny Aya, Youtu, Kimi K2):
//   [^\r\n\p{L}\p{N}]?W+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,max_digits}|
//    ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// The tokenizer.json regexes spell W as [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+ (and a
// second branch with the quantifiers swapped), but llama.cpp reads each of \p{Lu} .. \p{Lo} as \p{L},
// so both branches are one case-blind run of letters and marks. Kimi K2 (`han_apart`) takes Han runs
// first and keeps Han out of W, whose letters there have no marks.
struct SuffixWordOptions {
  std::uint8_t word = kLetter | kMark;
  bool han_apart = false;
  std::size_t max_digits = 3;
};

void split_suffix_contractions(const DecodedText& t, Segment seg, const SuffixWordOptions& o, Segments& out) {
  Scanner s(t, seg, out);
  auto han = [&](std::size_t i) { return o.han_apart && is_han(s.cp(i)); };
  auto word = [&](std::size_t i) { return (s.flags(i) & o.word) != 0 && !han(i); };
  while (!s.done()) {
    const std::size_t p = s.pos();
    const char32_t c = s.cp(p);
    const std::uint8_t f = s.flags(p);
    if (han(p)) {
      std::size_t q = p + 1;
      while (han(q)) ++q;
      s.emit(q);
      continue;
    }
    // A code point in W starts the run itself (a mark that could be the prefix gives the same end);
    // else one that is no letter, digit or line break can lead a run that follows it.
    const bool run = word(p);
    if (run || (c != '\r' && c != '\n' && !(f & (kLetter | kNumber)) && word(p + 1))) {
      std::size_t q = run ? p : p + 1;
      while (word(q)) ++q;
      s.emit(q + contraction_at(s, q, true));
      continue;
    }
    digits_punctuation_or_space(s, o.max_digits);
  }
}

// llama.cpp's digit grouping for AFMoE, which it also runs for Tiny Aya's \d{1,3}(?=(?:\d{3})*\b):
// each \p{N} run is cut into its leading (length mod 3) digits, then threes; the text before a
// run is no word of its own but the start of the run's first piece, and the text after the last
// run is one word.
void split_digit_groups_glued(const DecodedText& t, Segment seg, Segments& out) {
  std::size_t start = seg.lo;
  std::size_t p = seg.lo;
  while (p < seg.hi) {
    if (!(t.flags[p] & kNumber)) {
      ++p;
      continue;
    }
    std::size_t e = p;
    while (e < seg.hi && (t.flags[e] & kNumber)) ++e;
    std::size_t cut = p + (e - p) % 3;
    if (cut == p) cut += 3;
    for (;; cut += 3) {
      out.push_back({start, cut});
      start = cut;
      if (cut == e) break;
    }
    p = e;
  }
  if (seg.hi > start) out.push_back({start, seg.hi});
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

// DeepSeek V3's last regex:
//   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//    ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// Code points no branch matches (a digit, a lone control character) are not dropped: like the
// regex splitter, the run of them between two matches is a word of its own.
// spark2_5 (`spark`) ends its punctuation branch without [\r\n]* and has [\r\n] for \s*[\r\n]+.
void split_deepseek3(const DecodedText& t, Segment seg, bool spark, Segments& out) {
  Segments words;
  Scanner s(t, seg, words);
  auto ascii_punct = [&](std::size_t i) {
    const char32_t c = s.cp(i);
    return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  };
  auto ascii_letter = [&](std::size_t i) {
    const char32_t c = s.cp(i);
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  };
  // \p{P}|\p{S} as llama.cpp's collapsed text sees them: every ASCII punctuation character is one
  // or the other, every other code point by its category.
  auto punct_or_symbol = [&](std::size_t i) {
    if (s.cp(i) < 0x80) return ascii_punct(i);
    return (s.flags(i) & (kPunctuation | kSymbol)) != 0;
  };
  auto letter_or_mark = [&](std::size_t i) { return (s.flags(i) & (kLetter | kMark)) != 0; };
  // The end of the match at p, or p when no branch matches there.
  auto match = [&](std::size_t p) -> std::size_t {
    const char32_t c = s.cp(p);
    if (ascii_punct(p) && ascii_letter(p + 1)) {
      std::size_t q = p + 1;
      while (ascii_letter(q)) ++q;
      return q;
    }
    const bool prefix = c != '\r' && c != '\n' && !(s.flags(p) & kLetter) && !punct_or_symbol(p);
    if ((prefix && letter_or_mark(p + 1)) || letter_or_mark(p)) {
      std::size_t q = p + 1;
      while (letter_or_mark(q)) ++q;
      return q;
    }
    std::size_t o = (c == ' ' && punct_or_symbol(p + 1)) ? p + 1 : p;
    if (punct_or_symbol(o)) {
      while (punct_or_symbol(o)) ++o;
      if (!spark)
        while (s.cp(o) == '\r' || s.cp(o) == '\n') ++o;
      return o;
    }
    if (spark && (c == '\r' || c == '\n')) return p + 1;
    if (s.flags(p) & kSpace) {
      Segments ws;
      Scanner w(t, {p, seg.hi}, ws);
      if (spark) {
        whitespace_run(w);
      } else {
        whitespace_with_breaks(w);
      }
      return w.pos();
    }
    return p;
  };
  split_by_matches(seg, match, out);
}

// Poro / BLOOM:  ?[^(\s|.,!?…。，、।۔،)]+ -- runs of anything but whitespace and these sentence
// punctuation marks (and the class's literal '(', '|', ')'), each with at most one space before it.
void split_poro(const DecodedText& t, Segment seg, Segments& out) {
  auto word = [&](std::size_t i) {
    if (i >= seg.hi || (t.flags[i] & kSpace)) return false;
    switch (t.cps[i]) {
      case '(':
      case '|':
      case '.':
      case ',':
      case '!':
      case '?':
      case ')':
      case 0x2026:
      case 0x3002:
      case 0xFF0C:
      case 0x3001:
      case 0x0964:
      case 0x06D4:
      case 0x060C: return false;
      default: return true;
    }
  };
  split_by_matches(
      seg,
      [&](std::size_t p) {
        std::size_t q = (t.cps[p] == ' ' && word(p + 1)) ? p + 1 : p;
        while (word(q)) ++q;
        return q;
      },
      out);
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

// (?=(\d{3})+(?!\d)) as a splitter (SuperBPE): an empty match, so a cut, wherever the ASCII digit
// run ahead has a length that is a multiple of 3 -- digits grouped in threes from the right.
void split_digit_groups_from_right(const DecodedText& t, Segment seg, Segments& out) {
  auto digit = [&](std::size_t i) { return t.cps[i] >= '0' && t.cps[i] <= '9'; };
  std::size_t start = seg.lo;
  std::size_t run = 0;  // ASCII digits from position k on, counted from the right
  std::vector<std::size_t> cuts;
  for (std::size_t k = seg.hi; k-- > seg.lo;) {
    run = digit(k) ? run + 1 : 0;
    if (run >= 3 && run % 3 == 0) cuts.push_back(k);
  }
  for (auto it = cuts.rbegin(); it != cuts.rend(); ++it) {
    if (*it > start) out.push_back({start, *it});
    start = *it;
  }
  if (seg.hi > start) out.push_back({start, seg.hi});
}

// [0-9][0-9][0-9] as a splitter.
void split_ascii_triples(const DecodedText& t, Segment seg, Segments& out) {
  auto digit = [&](std::size_t i) { return t.cps[i] >= '0' && t.cps[i] <= '9'; };
  std::size_t gap = seg.lo;
  std::size_t i = seg.lo;
  while (i + 3 <= seg.hi) {
    if (digit(i) && digit(i + 1) && digit(i + 2)) {
      if (i > gap) out.push_back({gap, i});
      out.push_back({i, i + 3});
      i = gap = i + 3;
    } else {
      ++i;
    }
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

}  // namespace

// DeepSeek LLM's letter class: the explicit ranges its tokenizer.json spells out (Latin, Greek,
// Coptic, Cyrillic, Armenian, Georgian, Cherokee, letter-like symbols, fullwidth Latin, Deseret,
// Osage, Old Hungarian, Warang Citi, Adlam), sorted by first code point.
bool deepseek_llm_letter(char32_t c) {
  struct Range {
    char32_t lo, hi;
  };
  static constexpr Range kRanges[] = {
      {0x0041, 0x005A},   {0x0061, 0x007A},   {0x00B5, 0x00B5},   {0x00C0, 0x00D6},   {0x00D8, 0x00F6},
      {0x00F8, 0x01BA},   {0x01BC, 0x01BF},   {0x01C4, 0x0293},   {0x0295, 0x02AF},   {0x0370, 0x0373},
      {0x0376, 0x0377},   {0x037B, 0x037D},   {0x037F, 0x037F},   {0x0386, 0x0386},   {0x0388, 0x038A},
      {0x038C, 0x038C},   {0x038E, 0x03A1},   {0x03A3, 0x03F5},   {0x03F7, 0x0481},   {0x048A, 0x052F},
      {0x0531, 0x0556},   {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},   {0x1C90, 0x1CBA},
      {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},   {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},
      {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},   {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},
      {0x1F5B, 0x1F5B},   {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
      {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},   {0x1FD6, 0x1FDB},
      {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},   {0x2102, 0x2102},   {0x2107, 0x2107},
      {0x210A, 0x2113},   {0x2115, 0x2115},   {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},
      {0x2128, 0x2128},   {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
      {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},   {0x2C7E, 0x2CE4},
      {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},   {0xA680, 0xA69B},   {0xA722, 0xA76F},
      {0xA771, 0xA787},   {0xA78B, 0xA78E},   {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},
      {0xFF21, 0xFF3A},   {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
      {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943}};
  std::size_t lo = 0, hi = std::size(kRanges);
  while (lo < hi) {  // the first range ending at or after c
    const std::size_t mid = (lo + hi) / 2;
    if (kRanges[mid].hi < c) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo < std::size(kRanges) && kRanges[lo].lo <= c;
}

PreTokenizerSpec pre_tokenizer_for(std::string_view pre) {
  auto any_of = [&](std::initializer_list<std::string_view> names) {
    for (std::string_view n : names)
      if (pre == n) return true;
    return false;
  };
  // Names as convert_hf_to_gguf.py writes them; the groupings follow llama.cpp, which maps each
  // of these to the same regex.
  if (pre.empty() || pre == "default") return {PreTokenizerKind::kDefault, false};
  // (tests/unit/tokenizer/test_pre_tokenizer_names.cpp checks every group against the regexes
  // llama.cpp's source gives its names.)
  if (any_of({"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano",
              "glm4", "glm5"}))
    return {PreTokenizerKind::kLlama3, true};
  if (any_of({"dbrx", "smaug-bpe", "chatglm-bpe"})) return {PreTokenizerKind::kLlama3, false};
  if (any_of(
          {"qwen2", "deepseek-r1-qwen", "megrez", "stablelm2", "kormo", "f2llmv2", "hunyuan", "grok-2", "solar-open"}))
    return {PreTokenizerKind::kQwen2, false};
  if (any_of({"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"})) return {PreTokenizerKind::kGpt4o, false};
  if (any_of({"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b", "mellum2"}))
    return {PreTokenizerKind::kSmollm, false};
  if (any_of({"gpt2",        "gpt-2",       "phi-2",      "mpt",          "olmo",       "jais",           "exaone4",
              "roberta-bpe", "jina-es",     "jina-de",    "gigachat",     "jina-v2-es", "jina-v2-de",     "a.x-4.0",
              "mellum",      "modern-bert", "jina-v1-en", "jina-v2-code", "trillion",   "granite-docling"}))
    return {PreTokenizerKind::kGpt2, false};
  if (pre == "tekken") return {PreTokenizerKind::kTekken, true};
  if (any_of({"deepseek-v3", "hunyuan-dense", "hy_v4", "joyai-llm"})) return {PreTokenizerKind::kDeepseek3, false};
  if (pre == "falcon") return {PreTokenizerKind::kFalcon, false};
  if (pre == "spark2_5") return {PreTokenizerKind::kSpark, false};
  if (any_of({"poro-chat", "bloom", "gpt3-finnish"})) return {PreTokenizerKind::kPoro, false};
  if (pre == "viking") return {PreTokenizerKind::kViking, false};
  if (pre == "deepseek-coder") return {PreTokenizerKind::kDeepseekCoder, false};
  if (pre == "exaone-moe") return {PreTokenizerKind::kExaoneMoe, false};
  if (pre == "jais-2") return {PreTokenizerKind::kJais2, false};
  if (pre == "superbpe") return {PreTokenizerKind::kSuperBpe, false};
  if (pre == "minicpm5") return {PreTokenizerKind::kMinicpm5, true};
  if (pre == "qwen35") return {PreTokenizerKind::kQwen35, false};
  if (any_of({"bailingmoe", "bailingmoe2", "llada-moe"})) return {PreTokenizerKind::kBailingmoe, false};
  if (pre == "laguna") return {PreTokenizerKind::kLaguna, false};
  if (pre == "ufakzeka") return {PreTokenizerKind::kUfakzeka, false};
  if (pre == "seed-coder") return {PreTokenizerKind::kSeedCoder, false};
  if (any_of({"tiny_aya", "cohere2moe"})) return {PreTokenizerKind::kTinyAya, false};
  if (pre == "youtu") return {PreTokenizerKind::kYoutu, true};
  if (pre == "kimi-k2") return {PreTokenizerKind::kKimiK2, false};
  if (pre == "afmoe") return {PreTokenizerKind::kAfmoe, false};
  if (pre == "deepseek-llm") return {PreTokenizerKind::kDeepseekLlm, false};
  if (pre == "granite-embed-multi-97m") return {PreTokenizerKind::kGraniteEmbMulti, true};
  if (pre == "chameleon") return {PreTokenizerKind::kChameleon, false};
  if (any_of({"gemma4", "granite-embed-multi-311m"}))
    return {.kind = PreTokenizerKind::kLines,
            .byte_level = false,
            .escape_spaces = true,
            .newline_runs_whole = true,
            .force_bos = true};
  if (pre == "sarvam-moe") return {.kind = PreTokenizerKind::kLines, .byte_level = false, .escape_spaces = true};
  throw Error(
      "tokenizer.ggml.pre '" + std::string(pre) +
      "' is not a pre-tokenizer wisp implements (gpt2, smollm, llama3/llama-bpe, minicpm5, qwen2, bailingmoe, laguna, "
      "qwen35, ufakzeka, seed-coder, exaone-moe, jais-2, superbpe, gpt-4o, tekken, deepseek-v3, spark2_5, "
      "deepseek-coder, deepseek-llm, tiny_aya, youtu, kimi-k2, afmoe, gemma4, sarvam-moe, granite-embed-multi-97m, "
      "chameleon, falcon, bloom, viking, default and aliases)");
}

void pre_tokenize(PreTokenizerKind kind, std::string_view text, std::vector<WordSpan>& out) {
  if (text.empty()) return;
  const DecodedText t = decode(text);
  Segments segs{{0, t.cps.size()}};
  auto number = [&](std::size_t i) { return (t.flags[i] & kNumber) != 0; };
  auto newline = [&](std::size_t i) { return t.cps[i] == '\n'; };
  auto gpt2 = [&](Segment s, Segments& o) { split_gpt2(t, s, o); };
  auto llama3 = [&](Llama3Options opt) {
    segs = refine(segs, [&](Segment s, Segments& o) { split_llama3(t, s, opt, o); });
  };
  auto suffix_words = [&](SuffixWordOptions opt) {
    segs = refine(segs, [&](Segment s, Segments& o) { split_suffix_contractions(t, s, opt, o); });
  };
  auto splitter = [&](std::size_t max_run, auto pred) {
    segs = refine(segs, [&](Segment s, Segments& o) { split_matches(s, max_run, pred, o); });
  };
  switch (kind) {
    case PreTokenizerKind::kGpt2: segs = refine(segs, gpt2); break;
    case PreTokenizerKind::kSmollm:
      splitter(1, number);
      segs = refine(segs, gpt2);
      break;
    case PreTokenizerKind::kLlama3: llama3({.max_digits = 3}); break;
    case PreTokenizerKind::kJais2: llama3({.max_digits = 3, .power_of_two_spaces = true}); break;
    case PreTokenizerKind::kMinicpm5:  // \p{N}{1,3} first, then Llama 3 with \p{N}+
      splitter(3, number);
      llama3({.max_digits = kRun});
      break;
    case PreTokenizerKind::kQwen2:
    case PreTokenizerKind::kBailingmoe: llama3({.max_digits = 1}); break;
    case PreTokenizerKind::kLaguna:  // lines and line-break runs first, then Qwen2
      splitter(kRun, newline);
      llama3({.max_digits = 1});
      break;
    case PreTokenizerKind::kQwen35: llama3({.max_digits = 1, .letter = kLetter | kMark}); break;
    case PreTokenizerKind::kUfakzeka: llama3({.max_digits = 1, .contractions = false}); break;
    case PreTokenizerKind::kSeedCoder: llama3({.max_digits = 1, .breaks_after_punct = false}); break;
    case PreTokenizerKind::kGpt4o:
      segs = refine(segs, [&](Segment s, Segments& o) { split_gpt4o(t, s, 3, true, kLetter, o); });
      break;
    case PreTokenizerKind::kGraniteEmbMulti:
      segs = refine(segs, [&](Segment s, Segments& o) { split_gpt4o(t, s, 3, true, kLetter | kMark, o); });
      break;
    case PreTokenizerKind::kTekken:
      segs = refine(segs, [&](Segment s, Segments& o) { split_gpt4o(t, s, 1, false, kLetter, o); });
      break;
    case PreTokenizerKind::kDeepseek3:  // \p{N}{1,3}, then CJK and kana runs, then split_deepseek3
    case PreTokenizerKind::kSpark:
      splitter(3, number);
      splitter(kRun, [&](std::size_t i) {
        const char32_t c = t.cps[i];
        return (c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x3040 && c <= 0x30FF);
      });
      segs = refine(segs, [&](Segment s, Segments& o) { split_deepseek3(t, s, kind == PreTokenizerKind::kSpark, o); });
      if (kind == PreTokenizerKind::kSpark) splitter(1, number);
      break;
    case PreTokenizerKind::kDeepseekCoder: {
      // [\r\n], \s?\p{L}+, \s?\p{P}+, [一-龥ࠀ-一가-퟿]+, \p{N}: each a splitter of its own
      splitter(1, [&](std::size_t i) { return t.cps[i] == '\r' || t.cps[i] == '\n'; });
      for (const std::uint8_t cls : {kLetter, kPunctuation}) {
        segs = refine(segs, [&](Segment s, Segments& o) {
          auto is = [&](std::size_t i) { return i < s.hi && (t.flags[i] & cls) != 0; };
          split_by_matches(
              s,
              [&](std::size_t p) {
                std::size_t q = ((t.flags[p] & kSpace) && is(p + 1)) ? p + 1 : p;
                while (is(q)) ++q;
                return q;
              },
              o);
        });
      }
      splitter(kRun, [&](std::size_t i) {
        const char32_t c = t.cps[i];
        return (c >= 0x0800 && c <= 0x9FA5) || (c >= 0xAC00 && c <= 0xD7FF);
      });
      splitter(1, number);
      break;
    }
    case PreTokenizerKind::kSuperBpe:  // \p{N}+, then digit groups of three from the right
      splitter(kRun, number);
      segs = refine(segs, [&](Segment s, Segments& o) { split_digit_groups_from_right(t, s, o); });
      break;
    case PreTokenizerKind::kExaoneMoe:
      segs = refine(segs, [&](Segment s, Segments& o) { split_exaone_moe(t, s, o); });
      break;
    case PreTokenizerKind::kTinyAya:
    case PreTokenizerKind::kAfmoe:
      segs = refine(segs, [&](Segment s, Segments& o) { split_digit_groups_glued(t, s, o); });
      if (kind == PreTokenizerKind::kTinyAya) {
        suffix_words({});
        break;
      }
      splitter(kRun, [&](std::size_t i) {
        const char32_t c = t.cps[i];
        return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x8C48 && c <= 0xFAFF) ||
               (c >= 0x3040 && c <= 0x30FF) || (c >= 0xFF65 && c <= 0xFF9F) || (c >= 0x2F00 && c <= 0x2FDF) ||
               (c >= 0x0E40 && c <= 0x0EFF) || (c >= 0x1780 && c <= 0x17FF) || (c >= 0x1000 && c <= 0x109F) ||
               (c >= 0xAA60 && c <= 0xAA7F) || (c >= 0xA9E0 && c <= 0xA9FF) || (c >= 0xAC00 && c <= 0xD7AF) ||
               (c >= 0x1100 && c <= 0x11FF);
      });
      segs = refine(segs, [&](Segment s, Segments& o) { split_deepseek3(t, s, false, o); });
      break;
    case PreTokenizerKind::kYoutu: {
      // A run of one of the four classes of its first regex:
      //   [가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+
      auto cls = [&](std::size_t i) {
        const char32_t c = t.cps[i];
        if ((c >= 0xAC00 && c <= 0xD7A3) || (c >= 0x3131 && c <= 0x318E)) return 1;
        if (c == 0xFF01 || c == 0x2026 || c == 0x201C || c == 0x201D || c == 0x2018 || c == 0x2019 || c == 0x2014 ||
            c == 0xFF1A || c == 0xFF1B || c == 0xFF0C || (c >= 0x3001 && c <= 0x303F) || (c >= 0xFE30 && c <= 0xFE4F))
          return 2;
        if (c >= 0x3105 && c <= 0x312F) return 3;
        if ((c >= 0x4E00 && c <= 0x9FA5) || (c >= 0x3040 && c <= 0x30FF)) return 4;
        return 0;
      };
      segs = refine(segs, [&](Segment s, Segments& o) {
        split_by_matches(
            s,
            [&](std::size_t p) {
              const int c = cls(p);
              std::size_t q = p;
              while (c != 0 && q < s.hi && cls(q) == c) ++q;
              return q;
            },
            o);
      });
      suffix_words({.max_digits = 1});
      break;
    }
    case PreTokenizerKind::kKimiK2: suffix_words({.word = kLetter, .han_apart = true}); break;
    case PreTokenizerKind::kLines: splitter(kRun, newline); break;
    case PreTokenizerKind::kChameleon: {
      auto by_matches = [&](auto match) {
        segs = refine(segs, [&](Segment s, Segments& o) {
          auto cp = [&](std::size_t i) { return i < s.hi ? t.cps[i] : kPastEnd; };
          split_by_matches(
              s, [&](std::size_t p) { return match(p, cp); }, o);
        });
      };
      by_matches([](std::size_t p, auto cp) -> std::size_t {  // <sentinel:[0-9]+>
        std::size_t q = p;
        for (const char c : std::string_view("<sentinel:"))
          if (cp(q++) != static_cast<char32_t>(c)) return p;
        const std::size_t digits = q;
        while (cp(q) >= '0' && cp(q) <= '9') ++q;
        return q > digits && cp(q) == '>' ? q + 1 : p;
      });
      by_matches([](std::size_t p, auto cp) -> std::size_t {  // (IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z
        std::size_t q = p;
        for (const char c : std::string_view("IMGIMG"))
          if (cp(q++) != static_cast<char32_t>(c)) return p;
        // Fewer letters than the run holds would leave a letter, not Z, next: no backtracking helps.
        const std::size_t letters = q;
        while (q - letters < 4 && cp(q) >= 'A' && cp(q) <= 'I') ++q;
        return q > letters && cp(q) == 'Z' ? q + 1 : p;
      });
      by_matches([](std::size_t p, auto cp) -> std::size_t {  // ([\t\n]|    |  )
        if (cp(p) == '\t' || cp(p) == '\n') return p + 1;
        std::size_t n = 0;
        while (n < 4 && cp(p + n) == ' ') ++n;
        return n == 4 ? p + 4 : n >= 2 ? p + 2 : p;
      });
      splitter(1, number);
      splitter(1, [&](std::size_t i) {  // [\p{P}!-/:-@\[-`{-~]: every ASCII punctuation or symbol, else \p{P}
        const char32_t c = t.cps[i];
        if (c < 0x80)
          return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
                 (c >= 0x7B && c <= 0x7E);
        return (t.flags[i] & kPunctuation) != 0;
      });
      segs = refine(segs, gpt2);
      break;
    }
    case PreTokenizerKind::kDeepseekLlm: {
      // These splitters run over code points (no Unicode category in them) after llama.cpp has
      // replaced every non-ASCII whitespace code point by U+000B: U+3000 is \s here, not in the
      // punctuation class, and no whitespace is in the CJK range.
      auto ws = [&](std::size_t i) { return (t.flags[i] & kSpace) != 0; };
      auto spaced_run = [&](auto in_class) {  // \s?[class]+
        segs = refine(segs, [&](Segment s, Segments& o) {
          auto is = [&](std::size_t i) { return i < s.hi && !ws(i) && in_class(t.cps[i]); };
          split_by_matches(
              s,
              [&](std::size_t p) {
                std::size_t q = (ws(p) && is(p + 1)) ? p + 1 : p;
                while (is(q)) ++q;
                return q;
              },
              o);
        });
      };
      splitter(1, [&](std::size_t i) { return t.cps[i] == '\r' || t.cps[i] == '\n'; });
      spaced_run(deepseek_llm_letter);
      spaced_run([](char32_t c) {  // [!-/:-~！-／：-～‘-‟　-。]
        return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x7E) || (c >= 0xFF01 && c <= 0xFF0F) ||
               (c >= 0xFF1A && c <= 0xFF5E) || (c >= 0x2018 && c <= 0x201F) || (c >= 0x3000 && c <= 0x3002);
      });
      segs = refine(segs, [&](Segment s, Segments& o) {  // \s+$: the segment's trailing whitespace
        std::size_t tail = s.hi;
        while (tail > s.lo && ws(tail - 1)) --tail;
        if (tail > s.lo) o.push_back({s.lo, tail});
        if (s.hi > tail) o.push_back({tail, s.hi});
      });
      splitter(kRun, [&](std::size_t i) {  // [一-龥ࠀ-一가-퟿]+
        const char32_t c = t.cps[i];
        return !ws(i) && ((c >= 0x0800 && c <= 0x9FA5) || (c >= 0xAC00 && c <= 0xD7FF));
      });
      splitter(kRun, number);
      break;
    }
    case PreTokenizerKind::kPoro:
    case PreTokenizerKind::kViking:
      segs = refine(segs, [&](Segment s, Segments& o) { split_poro(t, s, o); });
      if (kind == PreTokenizerKind::kViking) splitter(1, number);
      break;
    case PreTokenizerKind::kFalcon:
    case PreTokenizerKind::kDefault: {
      auto punct = [&](std::size_t i) {
        const char32_t c = t.cps[i];
        return (t.flags[i] & kPunctuation) || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' || c == '^' ||
               c == '~' || c == '|' || (c == '`' && kind == PreTokenizerKind::kFalcon);
      };
      splitter(kRun, punct);
      segs = refine(segs, gpt2);
      if (kind == PreTokenizerKind::kDefault) splitter(kRun, number);
      segs = refine(segs, [&](Segment s, Segments& o) { split_ascii_triples(t, s, o); });
      break;
    }
  }
  out.reserve(out.size() + segs.size());
  for (const Segment& s : segs) out.push_back({t.offsets[s.lo], t.offsets[s.hi]});
}

}  // namespace wisp
