// wisp::Conversation: a multi-turn chat over one Session. Renders the whole conversation with the
// model's chat template each turn, keeps the session's cached tokens for the longest common
// prefix, and evaluates only what is new, so earlier turns are never read again.
//
// When the next turn would not fit the context, the oldest exchanges (everything but the system
// message and the new user message) are dropped, the caller is told through on_notice, and the
// conversation is re-evaluated from the system prompt.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wisp/chat_template.h"
#include "wisp/generate.h"

namespace wisp {

struct ChatReply {
  GenerationResult generation;
  std::size_t reused_tokens = 0;     // prompt tokens served from the cache
  std::size_t dropped_messages = 0;  // oldest messages dropped to make room this turn
};

class Conversation {
 public:
  // `session`, `tokenizer` must outlive the conversation; `session` should be empty.
  Conversation(Session& session, const Tokenizer& tokenizer, ChatTemplate tmpl,
               std::optional<std::string> system = std::nullopt);

  // Adds the user's message, brings the session up to date, and generates the assistant's reply
  // (streamed through options.on_text), which is then part of the conversation. `reserve` is the
  // room kept free for the reply when deciding whether old turns must be dropped.
  ChatReply reply(const std::string& user_text, Sampler& sampler, const GenerationOptions& options, std::size_t reserve,
                  const std::function<void(const std::string&)>& on_notice = {});

  // Forgets every turn (the system message stays) and empties the session.
  void reset();
  // Replaces the system message (empty text removes it) and resets.
  void set_system(std::optional<std::string> system);

  const std::vector<ChatMessage>& messages() const { return messages_; }
  // The exact text the template renders for the conversation so far (with a generation prompt).
  std::string render(bool add_generation_prompt) const;

 private:
  std::vector<TokenId> tokenize_conversation() const;
  std::size_t sync_session(const std::vector<TokenId>& full);  // returns tokens reused

  Session& session_;
  const Tokenizer& tokenizer_;
  ChatTemplate template_;
  ChatRenderOptions render_options_;
  std::vector<ChatMessage> messages_;
  std::vector<TokenId> cached_;  // exactly the tokens the session holds
};

}  // namespace wisp
