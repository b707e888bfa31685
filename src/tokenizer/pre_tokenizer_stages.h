// The pre-tokenizers' regexes, one stage each (private to src/tokenizer): a stage splits one
// segment of the decoded text, appending its words in order; pre_tokenize (pre_tokenizer.cpp)
// runs each kind's stages in turn. The regex each stage is lies beside its definition.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tokenizer/pre_tokenizer_scan.h"

namespace wisp::pre_tokenizer_detail {

// Word scanners (pre_tokenizer_words.cpp): one regex of alternatives, the first that matches at
// each position taken, left to right over the segment.

void split_gpt2(const DecodedText& t, Segment seg, Segments& out);

// The Llama 3 regex family: (?i:contractions)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
//  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ and its variants as the options say.
struct Llama3Options {
  std::size_t max_digits = 3;        // 3: Llama 3, 1: Qwen2
  bool contractions = true;          // false: no contraction branch (ufakzeka)
  std::uint8_t letter = kLetter;     // kLetter | kMark: [\p{L}\p{M}]+ words, marks not punctuation (qwen35)
  bool breaks_after_punct = true;    // false:  ?[^\s\p{L}\p{N}\r\n]+ with no [\r\n]* after it (seed-coder)
  bool power_of_two_spaces = false;  // Jais 2's whitespace branches
};

void split_llama3(const DecodedText& t, Segment seg, const Llama3Options& o, Segments& out);

// GPT-4o's cased words (Tekken: max_digits 1, no contractions; Granite Embedding multilingual:
// letters kLetter | kMark).
void split_gpt4o(const DecodedText& t, Segment seg, std::size_t max_digits, bool contractions, std::uint8_t letters,
                 Segments& out);

void split_exaone_moe(const DecodedText& t, Segment seg, Segments& out);

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

void split_suffix_contractions(const DecodedText& t, Segment seg, const SuffixWordOptions& o, Segments& out);

// Splitters (pre_tokenizer_splitters.cpp): a regex's matches and the code points between them
// are all words, or a digit run is cut into groups.

void split_digit_groups_glued(const DecodedText& t, Segment seg, Segments& out);
void split_deepseek3(const DecodedText& t, Segment seg, bool spark, Segments& out);
void split_poro(const DecodedText& t, Segment seg, Segments& out);
void split_digit_groups_from_right(const DecodedText& t, Segment seg, Segments& out);
void split_ascii_triples(const DecodedText& t, Segment seg, Segments& out);

}  // namespace wisp::pre_tokenizer_detail
