#include "chat/harmony_reply.h"

#include <algorithm>

namespace wisp {

namespace {

constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
// A message ends with <|end|>; a turn with <|return|> or <|call|> (which end generation, so they
// reach the splitter only in text that was not generated).
constexpr std::string_view kMessageEnds[] = {"<|end|>", "<|return|>", "<|call|>"};

// Length of the longest suffix of `s` that is a proper prefix of `marker`: text that may still
// turn out to be the marker once more arrives.
std::size_t partial_marker(std::string_view s, std::string_view marker) {
  for (std::size_t n = std::min(s.size(), marker.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == marker.substr(0, n)) return n;
  return 0;
}

}  // namespace

void HarmonyReplySplitter::emit(HarmonyText& out, std::string_view s) const {
  if (channel_ == Channel::kAnalysis) out.reasoning += s;
  if (channel_ == Channel::kFinal) out.content += s;
}

HarmonyText HarmonyReplySplitter::push(std::string_view text) {
  pending_ += text;
  HarmonyText out;
  for (;;) {
    if (where_ == Where::kBetween) {  // "<|start|>assistant" and the like: dropped
      const std::size_t at = pending_.find(kChannel);
      if (at == std::string::npos) {
        pending_.erase(0, pending_.size() - partial_marker(pending_, kChannel));
        return out;
      }
      pending_.erase(0, at + kChannel.size());
      where_ = Where::kHeader;
      continue;
    }
    if (where_ == Where::kHeader) {  // "final", "analysis", "commentary json", ...
      const std::size_t at = pending_.find(kMessage);
      if (at == std::string::npos) return out;
      const std::string_view header = std::string_view(pending_).substr(0, at);
      const std::string_view name = header.substr(0, header.find_first_of(" \t\n"));
      channel_ = name == "final" ? Channel::kFinal : name == "analysis" ? Channel::kAnalysis : Channel::kOther;
      saw_final_ = saw_final_ || channel_ == Channel::kFinal;
      pending_.erase(0, at + kMessage.size());
      where_ = Where::kBody;
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
      emit(out, std::string_view(pending_).substr(0, pending_.size() - keep));
      pending_.erase(0, pending_.size() - keep);
      return out;
    }
    emit(out, std::string_view(pending_).substr(0, at));
    pending_.erase(0, at + len);
    where_ = Where::kBetween;
  }
}

HarmonyText HarmonyReplySplitter::finish() {
  HarmonyText out;
  if (where_ == Where::kBody) emit(out, pending_);
  pending_.clear();
  where_ = Where::kBetween;
  return out;
}

}  // namespace wisp
