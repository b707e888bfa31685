// wisp::Tokenizer: text <-> token ids for the vocabularies GGUF files carry, matching llama.cpp's
// tokenizer id for id (tests/unit/tokenizer checks a golden corpus against it).
//
//   auto model = wisp::Model::load("model.gguf");
//   wisp::Tokenizer tok = wisp::Tokenizer::from_model(*model);
//   std::vector<wisp::TokenId> ids = tok.tokenize(prompt, {.add_special = true, .parse_special = true});
//   std::string text = tok.detokenize(ids);
//
// Immutable after construction: one Tokenizer may serve many threads. For streamed output (one
// token at a time, never half a UTF-8 character) see wisp/stream_decoder.h.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wisp/token.h"

namespace wisp {

class Model;
class GgufFile;  // formats/gguf_file.h (internal)
struct Vocab;    // tokenizer/vocab.h (internal)

struct TokenizeOptions {
  // Add BOS / EOS where the model's flags (tokenizer.ggml.add_bos_token, ...) ask for them.
  bool add_special = true;
  // Match control tokens' text ("<|im_start|>", "<start_of_turn>") as those tokens. Leave off for
  // untrusted text (user input), so that typing "<|im_end|>" cannot end a turn. User-defined
  // tokens are matched either way, as in llama.cpp.
  bool parse_special = false;
};

class Tokenizer {
 public:
  // The tokenizer of a loaded model (its GGUF's tokenizer.ggml.* keys). Throws wisp::Error for a
  // vocabulary wisp cannot run (unknown pre-tokenizer, bad merges, ...).
  static Tokenizer from_model(const Model& model);
  // The same from wisp's internal types (the file, or a vocabulary built by hand in tests).
  explicit Tokenizer(Vocab vocab);
  static Tokenizer from_gguf(const GgufFile& file);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Text must be valid UTF-8: anything else is a wisp::Error naming the byte offset (llama.cpp
  // silently substitutes U+FFFD; a prompt with broken encoding is better reported than guessed at).
  std::vector<TokenId> tokenize(std::string_view text, TokenizeOptions options = {}) const;

  // The bytes a token stands for. May be part of a UTF-8 sequence (byte tokens, byte-level
  // pieces of an emoji): use TokenStreamDecoder to print a stream. Control and unknown tokens
  // give "" unless render_special. Throws wisp::Error for an id outside the vocabulary.
  std::string token_to_piece(TokenId id, bool render_special = false) const;
  // The pieces concatenated. Unlike llama.cpp's llama_detokenize, no "clean up spaces" pass and
  // no leading-space stripping: detokenize(tokenize(s)) == s for any s that round-trips there.
  std::string detokenize(std::span<const TokenId> ids, bool render_special = false) const;

  const Vocab& vocab() const;  // internal type: wisp's own modules only
  std::size_t n_vocab() const;
  TokenId bos() const;
  TokenId eos() const;
  TokenId eot() const;
  bool add_bos() const;                             // whether tokenize(add_special) puts BOS first
  bool is_eog(TokenId id) const;                    // ends generation: EOS, end-of-turn markers
  bool is_control(TokenId id) const;                // rendered only on request, never produced from plain text
  TokenId find_token(std::string_view text) const;  // exact vocabulary lookup, kNoToken if absent

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wisp
