// The splitter stages: a regex whose matches, and the code points between them, are all words
// (as llama.cpp's regex splitter leaves them), and the digit groupings that cut a run of digits.
#include <vector>

#include "tokenizer/pre_tokenizer_stages.h"

namespace wisp::pre_tokenizer_detail {

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

}  // namespace wisp::pre_tokenizer_detail
