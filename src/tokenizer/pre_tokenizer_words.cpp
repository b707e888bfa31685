// The word scanners: each pre-tokenizer regex of alternatives (contractions, letter runs, digits,
// punctuation runs, whitespace) as a Scanner loop over one segment.
#include "tokenizer/pre_tokenizer_stages.h"

namespace wisp::pre_tokenizer_detail {

namespace {

// Jais 2's whitespace branches: \s*[\r\n]+, then \s{k}(?!\S) for k = 512, 256, ..., 8, 4, then
// \s{1,2}(?!\S) and \s{1}: long runs are cut into power-of-two pieces.
void whitespace_in_powers_of_two(Scanner& s) {
  const std::size_t p = s.pos();
  const SpaceRun r = space_run(s);
  if (r.after_break != 0) {
    s.emit(r.after_break);
    return;
  }
  const std::size_t n = r.n;
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

// Kimi K2's \p{Han} as llama.cpp implements it: the CJK ideograph blocks (unified, extensions A-F,
// compatibility ideographs and their supplement), not the Unicode Script property.
bool is_han(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2EBEF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

}  // namespace

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

// The Llama 3 family (Llama3Options says which variant).
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

// Words with the contraction as a suffix (SuffixWordOptions gives the regex).
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

}  // namespace wisp::pre_tokenizer_detail
