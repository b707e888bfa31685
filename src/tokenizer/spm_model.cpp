#include "tokenizer/spm_model.h"

#include <cstdio>
#include <queue>
#include <string>

#include "tokenizer/unicode.h"
#include "wisp/error.h"

namespace wisp {

SentencePieceModel::SentencePieceModel(const Vocab& vocab, const TokenLookup& lookup) : vocab_(vocab), lookup_(lookup) {
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    TokenId t = lookup.find(hex);
    if (t == kNoToken) {
      const char c = static_cast<char>(b);
      t = lookup.find(std::string_view(&c, 1));
    }
    byte_token_[b] = t;
  }
}

void SentencePieceModel::encode(std::string_view text, std::vector<TokenId>& out) const {
  if (text.empty()) return;
  struct Symbol {
    std::uint32_t begin;
    std::uint32_t size;  // 0 once merged into its left neighbour
    std::int32_t prev;
    std::int32_t next;
  };
  struct Candidate {
    float score;
    std::int32_t left;
    std::int32_t right;
    std::uint32_t size;  // bytes of the pair when it was proposed: detects stale candidates
  };
  // Highest score first; on equal scores the leftmost pair.
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score < b.score : a.left > b.left;
  };

  std::vector<Symbol> syms;
  syms.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t len = std::min(utf8_sequence_length(static_cast<unsigned char>(text[pos])), text.size() - pos);
    const auto index = static_cast<std::int32_t>(syms.size());
    syms.push_back({static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(len), index - 1,
                    pos + len < text.size() ? index + 1 : -1});
    pos += len;
  }

  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> queue(worse);
  auto consider = [&](std::int32_t left, std::int32_t right) {
    if (left < 0 || right < 0) return;
    const std::uint32_t size = syms[left].size + syms[right].size;
    const TokenId t = lookup_.find(text.substr(syms[left].begin, size));
    if (t != kNoToken) queue.push({vocab_.score_of(t), left, right, size});
  };
  for (std::int32_t i = 0; i + 1 < static_cast<std::int32_t>(syms.size()); ++i) consider(i, i + 1);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = syms[c.left];
    Symbol& r = syms[c.right];
    // Sizes only grow, so an unchanged total means neither side has merged since.
    if (l.size == 0 || r.size == 0 || l.size + r.size != c.size) continue;
    l.size += r.size;
    r.size = 0;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = c.left;
    consider(l.prev, c.left);
    consider(c.left, l.next);
  }

  for (std::int32_t i = 0; i >= 0; i = syms[i].next) {
    const std::string_view piece = text.substr(syms[i].begin, syms[i].size);
    const TokenId t = lookup_.find(piece);
    if (t != kNoToken) {
      out.push_back(t);
      continue;
    }
    for (char ch : piece) {
      const TokenId b = byte_token_[static_cast<unsigned char>(ch)];
      if (b == kNoToken) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "<0x%02X>", static_cast<unsigned char>(ch));
        throw Error(std::string("SentencePiece: no token for byte ") + hex +
                    " and no byte-fallback token in the vocabulary");
      }
      out.push_back(b);
    }
  }
}

}  // namespace wisp
