#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <optional>

#include "tokenizer/bpe_model.h"
#include "tokenizer/special_tokens.h"
#include "tokenizer/spm_model.h"
#include "tokenizer/token_attrs.h"
#include "tokenizer/token_lookup.h"
#include "tokenizer/unicode.h"
#include "tokenizer/vocab_gguf.h"
#include "wisp/error.h"

namespace wisp {

namespace {

void check_id(const Vocab& v, TokenId& id) {
  // A default id the vocabulary is too small for is no id at all.
  if (id != kNoToken && (id < 0 || static_cast<std::size_t>(id) >= v.size())) id = kNoToken;
}

std::string escape_spaces(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  for (char c : text) {
    if (c == ' ')
      out += kSpmSpace;
    else
      out.push_back(c);
  }
  return out;
}

// "▁" -> " ": how SentencePiece pieces spell their spaces.
std::string unescape_spaces(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  std::size_t pos = 0;
  for (std::size_t hit; (hit = piece.find(kSpmSpace, pos)) != std::string_view::npos; pos = hit + kSpmSpace.size()) {
    out.append(piece.substr(pos, hit - pos));
    out.push_back(' ');
  }
  out.append(piece.substr(pos));
  return out;
}

std::optional<unsigned char> byte_token_value(std::string_view text) {
  // "<0xNN>"
  if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return std::nullopt;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(text[3]);
  const int lo = hex(text[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<unsigned char>(hi * 16 + lo);
}

}  // namespace

struct Tokenizer::Impl {
  Vocab vocab;
  TokenAttributes attrs;
  TokenLookup lookup;
  SpecialTokenMatcher specials;
  std::optional<BytePairModel> bpe;
  std::optional<SentencePieceModel> spm;

  PreTokenizerSpec pre;  // byte-level BPE only

  Impl(Vocab v, PreTokenizerSpec p)
      : vocab(std::move(v)),
        attrs(derive_token_attributes(vocab)),
        lookup(vocab.tokens),
        specials(vocab.tokens, attrs.attrs),
        pre(p) {
    if (vocab.model == VocabModel::kBytePairGpt2) {
      bpe.emplace(vocab, lookup, pre);
    } else {
      spm.emplace(vocab, lookup);
    }
  }
};

Tokenizer::Tokenizer(Vocab vocab) {
  if (vocab.tokens.empty()) throw Error("tokenizer: the vocabulary is empty");
  if (!vocab.scores.empty() && vocab.scores.size() != vocab.tokens.size())
    throw Error("tokenizer: " + std::to_string(vocab.scores.size()) + " scores for " +
                std::to_string(vocab.tokens.size()) + " tokens");
  if (!vocab.types.empty() && vocab.types.size() != vocab.tokens.size())
    throw Error("tokenizer: " + std::to_string(vocab.types.size()) + " token types for " +
                std::to_string(vocab.tokens.size()) + " tokens");
  for (TokenId* id : {&vocab.bos, &vocab.eos, &vocab.eot, &vocab.unk, &vocab.pad}) check_id(vocab, *id);
  PreTokenizerSpec pre;
  if (vocab.model == VocabModel::kBytePairGpt2) {
    pre = pre_tokenizer_for(vocab.pre);
    if (pre.force_bos) vocab.add_bos = true;
  }
  if (vocab.add_bos && vocab.bos == kNoToken)
    throw Error("tokenizer: the model asks for a BOS token but names none (tokenizer.ggml.bos_token_id)");
  if (vocab.add_eos && vocab.eos == kNoToken)
    throw Error("tokenizer: the model asks for an EOS token but names none (tokenizer.ggml.eos_token_id)");
  // Empty token strings would match everywhere; llama.cpp renames them the same way.
  for (std::size_t i = 0; i < vocab.tokens.size(); ++i)
    if (vocab.tokens[i].empty()) vocab.tokens[i] = "[EMPTY_" + std::to_string(i) + "]";
  impl_ = std::make_unique<Impl>(std::move(vocab), pre);
}

Tokenizer Tokenizer::from_gguf(const GgufFile& file) {
  try {
    return Tokenizer(vocab_from_gguf(file));
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind(file.path(), 0) == 0) throw;  // already names the file
    throw Error(file.path() + ": " + what);
  }
}

Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

std::vector<TokenId> Tokenizer::tokenize(std::string_view text, TokenizeOptions options) const {
  // Byte offsets are 32-bit inside (half the memory for word and symbol tables).
  if (text.size() > 0xFFFFFFF0u)
    throw Error("tokenize: text of " + std::to_string(text.size()) + " bytes exceeds 4 GiB");
  if (std::optional<std::size_t> bad = utf8_find_invalid(text))
    throw Error("tokenize: the text is not valid UTF-8 (byte offset " + std::to_string(*bad) + ")");
  const Vocab& v = impl_->vocab;
  std::vector<Fragment> fragments;
  impl_->specials.partition(text, options.parse_special, fragments);

  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 4);
  if (options.add_special && v.add_bos) out.push_back(v.bos);
  bool after_special = true;  // SentencePiece prefixes a space to text that starts the prompt or follows a special
  for (const Fragment& f : fragments) {
    if (f.is_token) {
      out.push_back(f.token);
      after_special = true;
      continue;
    }
    const std::string_view piece = text.substr(f.begin, f.end - f.begin);
    if (impl_->bpe) {
      if (impl_->pre.escape_spaces) {
        impl_->bpe->encode(escape_spaces(piece), out);
      } else {
        impl_->bpe->encode(piece, out);
      }
    } else {
      std::string escaped = (v.add_space_prefix && after_special) ? std::string(kSpmSpace) : std::string();
      escaped += escape_spaces(piece);
      impl_->spm->encode(escaped, out);
    }
    after_special = false;
  }
  if (options.add_special && v.add_eos) out.push_back(v.eos);
  return out;
}

std::string Tokenizer::token_to_piece(TokenId id, bool render_special) const {
  const Vocab& v = impl_->vocab;
  if (id < 0 || static_cast<std::size_t>(id) >= v.size())
    throw Error("detokenize: token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                std::to_string(v.size()) + ")");
  const std::uint8_t a = impl_->attrs.attrs[static_cast<std::size_t>(id)];
  const std::string& text = v.tokens[static_cast<std::size_t>(id)];
  if (a & (kAttrControl | kAttrUnknown)) return render_special ? text : std::string();
  if (a & kAttrUserDefined) return text;  // stored as the raw text it matches
  if (a & kAttrNormal) {
    if (impl_->bpe && !impl_->pre.escape_spaces) return impl_->bpe->alphabet().decode(text);
    return unescape_spaces(text);
  }
  if (a & kAttrByte) {
    if (std::optional<unsigned char> b = byte_token_value(text)) return std::string(1, static_cast<char>(*b));
  }
  return {};  // unused and undefined tokens stand for nothing
}

std::string Tokenizer::detokenize(std::span<const TokenId> ids, bool render_special) const {
  std::string out;
  for (TokenId id : ids) out += token_to_piece(id, render_special);
  return out;
}

const Vocab& Tokenizer::vocab() const { return impl_->vocab; }
std::size_t Tokenizer::n_vocab() const { return impl_->vocab.size(); }
bool Tokenizer::add_bos() const { return impl_->vocab.add_bos; }
TokenId Tokenizer::bos() const { return impl_->vocab.bos; }
TokenId Tokenizer::eos() const { return impl_->vocab.eos; }
TokenId Tokenizer::eot() const { return impl_->vocab.eot; }

bool Tokenizer::is_eog(TokenId id) const {
  const auto& eog = impl_->attrs.eog;
  return std::binary_search(eog.begin(), eog.end(), id);
}

bool Tokenizer::is_control(TokenId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= n_vocab()) return false;
  return (impl_->attrs.attrs[static_cast<std::size_t>(id)] & kAttrControl) != 0;
}

TokenId Tokenizer::find_token(std::string_view text) const { return impl_->lookup.find(text); }

}  // namespace wisp
