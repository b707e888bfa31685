// Pre-tokenizers: split a text fragment into the "words" that byte-level BPE merges within,
// selected by tokenizer.ggml.pre. Each is a hand-written scanner equivalent to the regex the
// model's tokenizer.json declares (and to llama.cpp's implementation of it, quirks included),
// over Unicode categories from the generated table -- std::regex has no \p{L} and is slow.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace wisp {

enum class PreTokenizerKind {
  kGpt2,             // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kSmollm,           // \p{N} isolated first, then kGpt2 (StarCoder / SmolLM)
  kLlama3,           // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
                     //  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  kQwen2,            // kLlama3 with \p{N} one digit at a time
  kGpt4o,            // o200k (GPT-4o, gpt-oss, Llama 4): cased words with an optional contraction, \p{N}{1,3},
                     //  ?[^\s\p{L}\p{N}]+[\r\n/]*, then kLlama3's whitespace branches; split as llama.cpp's
                     // rewrite of it does, where a non-ASCII letter counts as upper and lower case
  kDefault,          // llama.cpp's fallback: punctuation runs, kGpt2, \p{N}+, [0-9]{3}
  kMinicpm5,         // \p{N}{1,3} isolated first, then kLlama3 with \p{N}+
  kBailingmoe,       // kQwen2 written with '(?:[sSdD...]) and \s*[\r\n]: the same words
  kLaguna,           // [^\n]+|[\n]+ (lines and line-break runs) first, then kQwen2
  kQwen35,           // kQwen2 with [\p{L}\p{M}]+ words (marks are not punctuation)
  kUfakzeka,         // kQwen2 without the contraction branch
  kSeedCoder,        // kQwen2 with  ?[^\s\p{L}\p{N}\r\n]+ (no line breaks after punctuation)
  kGraniteEmbMulti,  // kGpt4o with marks counted as letters (Granite Embedding multilingual 97M)
  kTekken,           // kGpt4o with \p{N} one digit at a time and no contraction suffix (Mistral)
  kDeepseek3,        // \p{N}{1,3}, CJK/kana runs, then ASCII-punctuation-led words, [\p{L}\p{M}]+ words,
                     //  ?[\p{P}\p{S}]+ runs and kLlama3's whitespace branches (DeepSeek V3, Hunyuan dense)
  kFalcon,           // kDefault with ` among the punctuation and no \p{N}+ stage
  kSpark,            // kDeepseek3 without line breaks after punctuation, [\r\n] alone, then \p{N} isolated
  kPoro,             //  ?[^(\s|.,!?…。，、।۔،)]+ (Poro, BLOOM, GPT-3 Finnish)
  kViking,           // kPoro, then \p{N} isolated
  kDeepseekCoder,    // [\r\n], \s?\p{L}+, \s?\p{P}+, CJK/Hangul runs, \p{N}: five splitters in turn
  kJais2,            // kLlama3 with whitespace runs cut into 512, 256, ..., 4, 2, 1 spaces
  kSuperBpe,         // \p{N}+ isolated, digit runs then cut in threes from the right; no other split
  kExaoneMoe,        // kQwen2-like, but a word runs on across single spaces between letters
  kTinyAya,          // \p{N} runs cut in threes from the right (the text before a run glued to its first
                     //  group), then [\p{L}\p{M}]+ words ending in an optional contraction, \p{N}{1,3},
                     //  ?[^\s\p{L}\p{N}]+[\r\n/]* and kLlama3's whitespace branches (Tiny Aya, Cohere 2 MoE)
  kYoutu,            // Hangul / CJK punctuation / Bopomofo / CJK and kana runs, then kTinyAya's second
                     //  stage with \p{N} one digit at a time
  kKimiK2,           // Han runs, then kTinyAya's second stage over letters that are not Han (no marks)
  kAfmoe,            // kTinyAya's digit groups, CJK / Thai / Lao / Khmer / Myanmar / Hangul runs, then
                     //  kDeepseek3's last regex
  kLines,            // [^\n]+|[\n]+ alone: lines and line-break runs (Gemma 4, Sarvam MoE: BPE over the whole line)
  kChameleon,        // <sentinel:N> and IMGIMG<A-I>{1,4}Z isolated, then tabs, line breaks and 4 or 2 spaces, each
                     // digit, each punctuation mark, then kGpt2 (Chameleon)
  kDeepseekLlm,      // [\r\n], \s?<Latin/Greek/Cyrillic/... letters>+, \s?<ASCII and CJK punctuation>+,
                     //  \s+$, CJK/Hangul runs, \p{N}+: six splitters in turn (DeepSeek LLM 7B/67B)
};

struct PreTokenizerSpec {
  PreTokenizerKind kind = PreTokenizerKind::kDefault;
  // Llama 3 style: a word that is itself a vocabulary token is emitted whole, without merging.
  bool ignore_merges = false;
  // false: SentencePiece-style BPE (Gemma 4, Sarvam MoE) -- merges run over the text's own UTF-8
  // characters, not GPT-2's byte alphabet, and a symbol that is no token falls back to <0xNN>
  // byte tokens.
  bool byte_level = true;
  // ' ' is spelled U+2581 before splitting, and U+2581 in a piece reads back as ' '.
  bool escape_spaces = false;
  // Gemma 4: a word made only of '\n' that is itself a token is emitted whole.
  bool newline_runs_whole = false;
  // Gemma 4: the text starts with BOS whatever tokenizer.ggml.add_bos_token says (as llama.cpp).
  bool force_bos = false;
};

// The spec for a tokenizer.ggml.pre name ("" means the default); throws wisp::Error naming the
// value for a pre-tokenizer wisp does not implement.
PreTokenizerSpec pre_tokenizer_for(std::string_view pre_name);

// A word as a byte range [begin, end) of the text handed to pre_tokenize.
struct WordSpan {
  std::uint32_t begin;
  std::uint32_t end;
};

// DeepSeek LLM's letter class (the explicit code point ranges of its second regex), exposed so
// that its test can compare it with the regex llama.cpp's source spells.
bool deepseek_llm_letter(char32_t c);

// Splits valid UTF-8 `text` into words, appending them (in order, covering all of text) to `out`.
void pre_tokenize(PreTokenizerKind kind, std::string_view text, std::vector<WordSpan>& out);

}  // namespace wisp
