// The answer inside a gpt-oss (harmony) reply. The model writes its reasoning and its answer as
// messages on channels -- "<|channel|>analysis<|message|>...<|end|><|start|>assistant<|channel|>
// final<|message|>answer" -- and only the final channel's text is the answer a chat shows and
// keeps in its history (the template refuses channel markers in a message's content).
#pragma once

#include <string>
#include <string_view>

namespace wisp {

// Streams a harmony reply's text in and the final channel's text out; markers split across
// pushes are held back until they are known to be markers or text.
class HarmonyFinalFilter {
 public:
  // The final-channel text `text` completes (may be empty).
  std::string push(std::string_view text);
  // At the end of the reply: any held-back final-channel text.
  std::string finish();
  // Whether any final channel was seen (a reply cut short in its analysis has none).
  bool saw_final() const { return saw_final_; }

 private:
  std::string pending_;
  bool in_final_ = false;
  bool saw_final_ = false;
};

}  // namespace wisp
