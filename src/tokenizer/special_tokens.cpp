#include "tokenizer/special_tokens.h"

#include <algorithm>
#include <numeric>

#include "tokenizer/token_attrs.h"

namespace wisp {

SpecialTokenMatcher::SpecialTokenMatcher(const std::vector<std::string>& texts,
                                         const std::vector<std::uint8_t>& attrs) {
  std::vector<TokenId> ids;
  for (std::size_t i = 0; i < texts.size(); ++i)
    if ((attrs[i] & (kAttrControl | kAttrUserDefined | kAttrUnknown)) && !texts[i].empty())
      ids.push_back(static_cast<TokenId>(i));
  // Longest first; equal lengths by id (llama.cpp leaves that order to an unstable sort).
  std::stable_sort(ids.begin(), ids.end(), [&](TokenId a, TokenId b) { return texts[a].size() > texts[b].size(); });

  nodes_.emplace_back();
  for (std::uint32_t prio = 0; prio < ids.size(); ++prio) {
    const TokenId id = ids[prio];
    const std::string& text = texts[static_cast<std::size_t>(id)];
    std::uint32_t node = 0;
    for (char ch : text) {
      const auto b = static_cast<unsigned char>(ch);
      if (node == 0) root_has_child_[b] = true;
      auto [it, inserted] =
          edges_.try_emplace((static_cast<std::uint64_t>(node) << 8) | b, static_cast<std::uint32_t>(nodes_.size()));
      if (inserted) nodes_.emplace_back();
      node = it->second;
    }
    if (nodes_[node].entry != kNoEntry) continue;  // duplicate text: the first (higher priority) wins
    nodes_[node].entry = static_cast<std::uint32_t>(entries_.size());
    entries_.push_back({id, static_cast<std::uint32_t>(text.size()), prio,
                        (attrs[static_cast<std::size_t>(id)] & (kAttrControl | kAttrUnknown)) == 0});
  }
}

std::uint32_t SpecialTokenMatcher::child(std::uint32_t node, unsigned char byte) const {
  auto it = edges_.find((static_cast<std::uint64_t>(node) << 8) | byte);
  return it == edges_.end() ? 0 : it->second;
}

void SpecialTokenMatcher::partition(std::string_view text, bool parse_special, std::vector<Fragment>& out) const {
  // 1. Every occurrence of every eligible special token.
  struct Occurrence {
    std::uint32_t priority;
    std::uint32_t begin;
    std::uint32_t entry;
  };
  std::vector<Occurrence> occ;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!root_has_child_[static_cast<unsigned char>(text[i])]) continue;
    std::uint32_t node = 0;
    for (std::size_t j = i; j < text.size(); ++j) {
      node = child(node, static_cast<unsigned char>(text[j]));
      if (node == 0) break;
      const std::uint32_t e = nodes_[node].entry;
      if (e != kNoEntry && (parse_special || entries_[e].always))
        occ.push_back({entries_[e].priority, static_cast<std::uint32_t>(i), e});
    }
  }
  if (occ.empty()) {
    if (!text.empty()) out.push_back({false, kNoToken, 0, static_cast<std::uint32_t>(text.size())});
    return;
  }

  // 2. In precedence order, an occurrence is taken when none of its bytes is already taken:
  // that is llama.cpp's "search each remaining text fragment, token by token" spelled out.
  std::sort(occ.begin(), occ.end(), [](const Occurrence& a, const Occurrence& b) {
    return a.priority != b.priority ? a.priority < b.priority : a.begin < b.begin;
  });
  std::vector<bool> taken(text.size(), false);
  std::vector<Occurrence> accepted;
  for (const Occurrence& o : occ) {
    const std::uint32_t len = entries_[o.entry].length;
    bool free = true;
    for (std::uint32_t k = o.begin; k < o.begin + len && free; ++k) free = !taken[k];
    if (!free) continue;
    std::fill(taken.begin() + o.begin, taken.begin() + o.begin + len, true);
    accepted.push_back(o);
  }

  // 3. Emit text and tokens in text order.
  std::sort(accepted.begin(), accepted.end(),
            [](const Occurrence& a, const Occurrence& b) { return a.begin < b.begin; });
  std::uint32_t pos = 0;
  for (const Occurrence& o : accepted) {
    if (o.begin > pos) out.push_back({false, kNoToken, pos, o.begin});
    out.push_back({true, entries_[o.entry].id, 0, 0});
    pos = o.begin + entries_[o.entry].length;
  }
  if (pos < text.size()) out.push_back({false, kNoToken, pos, static_cast<std::uint32_t>(text.size())});
}

}  // namespace wisp
