// The reasoning and the answer inside a gpt-oss (harmony) reply. The model writes them as messages
// on channels -- "<|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>
// final<|message|>answer" -- and only the final channel's text is the answer a chat shows and
// keeps in its history (the template refuses channel markers in a message's content); the
// analysis channel's text is the reasoning (`reasoning_content` in the server's answers).
#pragma once

#include <string>
#include <string_view>

namespace wisp {

// What a piece of a harmony reply adds to each channel a reader sees.
struct HarmonyText {
  std::string reasoning;  // analysis channel
  std::string content;    // final channel
};

// Streams a harmony reply's text in and its analysis and final channels' text out; message
// headers and other channels (commentary: tool calls) are dropped. Markers split across pushes
// are held back until they are known to be markers or text.
class HarmonyReplySplitter {
 public:
  // The channels' text `text` completes (either may be empty).
  HarmonyText push(std::string_view text);
  // At the end of the reply: any held-back text of the message it was cut in.
  HarmonyText finish();
  // Whether any final channel was seen (a reply cut short in its analysis has none).
  bool saw_final() const { return saw_final_; }

 private:
  enum class Where { kBetween, kHeader, kBody };
  enum class Channel { kAnalysis, kFinal, kOther };
  void emit(HarmonyText& out, std::string_view s) const;

  std::string pending_;
  Where where_ = Where::kBetween;
  Channel channel_ = Channel::kOther;
  bool saw_final_ = false;
};

}  // namespace wisp
