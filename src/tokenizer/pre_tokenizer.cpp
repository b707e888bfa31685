// pre_tokenize: each pre-tokenizer kind as its stages in order (the stages are in
// pre_tokenizer_words.cpp and pre_tokenizer_splitters.cpp, what they share in pre_tokenizer_scan.h),
// and DeepSeek LLM's letter class one of them uses.
#include "tokenizer/pre_tokenizer.h"

#include <iterator>
#include <string_view>

#include "tokenizer/pre_tokenizer_stages.h"

namespace wisp {

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

void pre_tokenize(PreTokenizerKind kind, std::string_view text, std::vector<WordSpan>& out) {
  using namespace pre_tokenizer_detail;  // the stages and what they work on
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
