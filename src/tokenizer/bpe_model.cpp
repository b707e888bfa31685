#include "tokenizer/bpe_model.h"

#include <queue>

#include "wisp/error.h"

namespace wisp {

namespace {
constexpr std::uint32_t kDead = 0xFFFFFFFF;
constexpr std::uint32_t kNoSymbol = 0xFFFFFFFE;  // raw BPE: a character no token or merge spells

std::uint64_t pair_key(std::uint32_t left, std::uint32_t right) {
  return (static_cast<std::uint64_t>(left) << 32) | right;
}
}  // namespace

BytePairModel::SymbolId BytePairModel::intern(std::string_view s) {
  TokenId id = lookup_.find(s);
  if (id != kNoToken) return static_cast<SymbolId>(id);
  auto [it, inserted] = extra_index_.try_emplace(std::string(s), 0);
  if (inserted) {
    it->second = static_cast<SymbolId>(vocab_.size() + extra_symbols_.size());
    extra_symbols_.emplace_back(s);
  }
  return it->second;
}

BytePairModel::BytePairModel(const Vocab& vocab, const TokenLookup& lookup, PreTokenizerSpec pre)
    : vocab_(vocab), lookup_(lookup), pre_(pre) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    if (pre.byte_level) {
      byte_symbol_[b] = intern(alphabet_.spelling(static_cast<std::uint8_t>(b)));
    } else {
      const char name[] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
      byte_token_[b] = lookup.find(std::string_view(name, sizeof name));
    }
  }
  merges_.reserve(vocab.merges.size());
  for (std::size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const std::string& m = vocab.merges[rank];
    // "left right"; searching from index 1 lets a left part that is itself a space still split.
    const std::size_t sp = m.find(' ', 1);
    if (sp == std::string::npos) continue;  // malformed entry: it can never match (as in llama.cpp)
    const std::string_view left(m.data(), sp);
    const std::string_view right(m.data() + sp + 1, m.size() - sp - 1);
    const SymbolId l = intern(left);
    const SymbolId r = intern(right);
    const SymbolId result = intern(m.substr(0, sp) + std::string(right));
    // The first listing of a pair is its rank; later duplicates are ignored.
    merges_.try_emplace(pair_key(l, r), Merge{static_cast<std::uint32_t>(rank), result});
  }
}

BytePairModel::SymbolId BytePairModel::symbol_of(std::string_view s) const {
  TokenId id = lookup_.find(s);
  if (id != kNoToken) return static_cast<SymbolId>(id);
  auto it = extra_index_.find(std::string(s));
  return it == extra_index_.end() ? kNoSymbol : it->second;
}

// `raw` is the text the symbol covers (its own characters for raw BPE).
void BytePairModel::emit_symbol(SymbolId s, std::string_view raw, std::vector<TokenId>& out) const {
  if (s < vocab_.size()) {
    out.push_back(static_cast<TokenId>(s));
    return;
  }
  if (!pre_.byte_level) {  // each byte as its <0xNN> token, dropping bytes that have none
    for (char c : raw) {
      const TokenId t = byte_token_[static_cast<unsigned char>(c)];
      if (t != kNoToken) out.push_back(t);
    }
    return;
  }
  // A symbol that is not a token: fall back to the tokens of its single bytes, dropping bytes that
  // have none. This is llama.cpp's behaviour; complete byte-level vocabularies never get here,
  // but SmolLM2's lacks a few control-byte symbols and llama.cpp drops those bytes.
  const std::string& spelled = extra_symbols_[s - vocab_.size()];
  for (char c : spelled) {
    TokenId t = lookup_.find(std::string_view(&c, 1));
    if (t != kNoToken) out.push_back(t);
  }
}

void BytePairModel::encode_word(std::string_view raw, std::vector<TokenId>& out) const {
  struct Symbol {
    SymbolId id;
    std::int32_t prev;
    std::int32_t next;
    std::uint32_t end;  // byte offset in `raw` past the symbol's text
  };
  struct Candidate {
    std::uint32_t rank;
    std::int32_t left;
    std::int32_t right;
    SymbolId left_id;
    SymbolId right_id;
    SymbolId result;
  };
  // Lowest rank first; on equal ranks the leftmost pair.
  auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  };

  // The initial symbols: one per byte (byte-level), or per UTF-8 character (raw), kept at the
  // index of their first byte so that a symbol's text is [index, end).
  const auto n = static_cast<std::int32_t>(raw.size());
  std::vector<Symbol> syms(raw.size());
  std::int32_t prev = -1;
  for (std::int32_t i = 0; i < n;) {
    std::int32_t len = 1;
    SymbolId id;
    if (pre_.byte_level) {
      id = byte_symbol_[static_cast<unsigned char>(raw[i])];
    } else {
      const auto lead = static_cast<unsigned char>(raw[i]);
      len = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;  // valid UTF-8 (checked on entry)
      id = symbol_of(raw.substr(i, len));
    }
    syms[i] = {id, prev, i + len < n ? i + len : -1, static_cast<std::uint32_t>(i + len)};
    prev = i;
    i += len;
  }

  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  auto consider = [&](std::int32_t left, std::int32_t right) {
    if (left < 0 || right < 0 || syms[left].id == kNoSymbol || syms[right].id == kNoSymbol) return;
    auto it = merges_.find(pair_key(syms[left].id, syms[right].id));
    if (it != merges_.end())
      queue.push({it->second.rank, left, right, syms[left].id, syms[right].id, it->second.result});
  };
  for (std::int32_t i = 0; i >= 0 && i < n; i = syms[i].next) consider(i, syms[i].next);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = syms[c.left];
    Symbol& r = syms[c.right];
    // Stale: one side has since merged with something else.
    if (l.id != c.left_id || r.id != c.right_id || l.next != c.right) continue;
    l.id = c.result;
    l.next = r.next;
    l.end = r.end;
    if (r.next >= 0) syms[r.next].prev = c.left;
    r.id = kDead;
    consider(l.prev, c.left);
    consider(c.left, l.next);
  }
  for (std::int32_t i = 0; i >= 0 && i < n; i = syms[i].next)
    emit_symbol(syms[i].id, raw.substr(i, syms[i].end - i), out);
}

void BytePairModel::encode(std::string_view text, std::vector<TokenId>& out) const {
  std::vector<WordSpan> words;
  pre_tokenize(pre_.kind, text, words);
  std::string spelled;
  for (const WordSpan& w : words) {
    const std::string_view raw = text.substr(w.begin, w.end - w.begin);
    const bool newlines = pre_.newline_runs_whole && raw.find_first_not_of('\n') == std::string_view::npos;
    if (pre_.ignore_merges || newlines) {
      spelled.clear();
      if (pre_.byte_level) {
        alphabet_.encode(raw, spelled);
      } else {
        spelled = raw;
      }
      TokenId whole = lookup_.find(spelled);
      if (whole != kNoToken) {
        out.push_back(whole);
        continue;
      }
    }
    encode_word(raw, out);
  }
}

}  // namespace wisp
