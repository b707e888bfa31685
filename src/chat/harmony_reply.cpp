#include "chat/harmony_reply.h"

#include <algorithm>

namespace wisp {

namespace {

constexpr std::string_view kFinalStart = "<|channel|>final<|message|>";
// A message ends with <|end|>; a turn with <|return|> or <|call|> (which end generation, so they
// reach the filter only in text that was not generated).
constexpr std::string_view kMessageEnds[] = {"<|end|>", "<|return|>", "<|call|>"};

// Length of the longest suffix of `s` that is a proper prefix of `marker`: text that may still
// turn out to be the marker once more arrives.
std::size_t partial_marker(std::string_view s, std::string_view marker) {
  for (std::size_t n = std::min(s.size(), marker.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == marker.substr(0, n)) return n;
  return 0;
}

}  // namespace

std::string HarmonyFinalFilter::push(std::string_view text) {
  pending_ += text;
  std::string out;
  for (;;) {
    if (!in_final_) {
      const std::size_t at = pending_.find(kFinalStart);
      if (at == std::string::npos) {
        pending_.erase(0, pending_.size() - partial_marker(pending_, kFinalStart));  // analysis, headers: dropped
        return out;
      }
      pending_.erase(0, at + kFinalStart.size());
      in_final_ = saw_final_ = true;
      continue;
    }
    std::size_t at = std::string::npos;
    std::size_t len = 0;
    for (std::string_view end : kMessageEnds) {
      const std::size_t a = pending_.find(end);
      if (a < at) at = a, len = end.size();
    }
    if (at == std::string::npos) {
      std::size_t keep = 0;
      for (std::string_view end : kMessageEnds) keep = std::max(keep, partial_marker(pending_, end));
      out.append(pending_, 0, pending_.size() - keep);
      pending_.erase(0, pending_.size() - keep);
      return out;
    }
    out.append(pending_, 0, at);
    pending_.erase(0, at + len);
    in_final_ = false;
  }
}

std::string HarmonyFinalFilter::finish() {
  std::string out = in_final_ ? pending_ : std::string();
  pending_.clear();
  in_final_ = false;
  return out;
}

}  // namespace wisp
