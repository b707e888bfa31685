#include "generate/conversation.h"

#include <algorithm>

#include "chat/harmony_reply.h"
#include "wisp/error.h"

namespace wisp {

Conversation::Conversation(Session& session, const Tokenizer& tokenizer, ChatTemplate tmpl,
                           std::optional<std::string> system)
    : session_(session), tokenizer_(tokenizer), template_(std::move(tmpl)) {
  // Templates that print bos_token themselves (Llama 3, Gemma) get the real text; BOS is then not
  // added a second time by the tokenizer (see tokenize_conversation).
  if (tokenizer_.bos() != kNoToken) render_options_.bos_token = tokenizer_.token_to_piece(tokenizer_.bos(), true);
  if (tokenizer_.eos() != kNoToken) render_options_.eos_token = tokenizer_.token_to_piece(tokenizer_.eos(), true);
  set_system(std::move(system));
}

void Conversation::reset() {
  messages_.erase(
      std::remove_if(messages_.begin(), messages_.end(), [](const ChatMessage& m) { return m.role != "system"; }),
      messages_.end());
  session_.truncate(0);
  cached_.clear();
}

void Conversation::set_system(std::optional<std::string> system) {
  messages_.clear();
  if (system && !system->empty()) messages_.push_back({"system", *system});
  session_.truncate(0);
  cached_.clear();
}

std::string Conversation::render(bool add_generation_prompt) const {
  ChatRenderOptions o = render_options_;
  o.add_generation_prompt = add_generation_prompt;
  return template_.render(messages_, o);
}

std::vector<TokenId> Conversation::tokenize_conversation() const {
  // The template's own control tokens ("<|im_start|>") must become tokens, so specials are parsed.
  std::vector<TokenId> ids = tokenizer_.tokenize(render(true), {.add_special = false, .parse_special = true});
  if (tokenizer_.add_bos() && tokenizer_.bos() != kNoToken && (ids.empty() || ids.front() != tokenizer_.bos()))
    ids.insert(ids.begin(), tokenizer_.bos());
  return ids;
}

std::size_t Conversation::sync_session(const std::vector<TokenId>& full) {
  std::size_t common = 0;
  while (common < cached_.size() && common < full.size() && cached_[common] == full[common]) ++common;
  // At least one token must be evaluated to get logits for the reply.
  if (common == full.size()) --common;
  session_.truncate(common);
  cached_.resize(common);
  return common;
}

ChatReply Conversation::reply(const std::string& user_text, Sampler& sampler, const GenerationOptions& options,
                              std::size_t reserve, const std::function<void(const std::string&)>& on_notice) {
  ChatReply out;
  messages_.push_back({"user", user_text});
  std::vector<TokenId> full;
  try {
    full = tokenize_conversation();
    // Drop the oldest exchanges until the prompt and the reserved reply fit.
    while (full.size() + reserve > session_.n_ctx()) {
      auto first =
          std::find_if(messages_.begin(), messages_.end(), [](const ChatMessage& m) { return m.role != "system"; });
      if (first == messages_.end() || first + 1 == messages_.end()) {
        throw Error("the message needs " + std::to_string(full.size()) + " tokens of context plus " +
                    std::to_string(reserve) + " for the reply, but the context holds " +
                    std::to_string(session_.n_ctx()) + " (raise it with -c, or send a shorter message)");
      }
      // Drop up to and including the next assistant message, so turns stay whole.
      auto last = first;
      while (last + 1 != messages_.end() - 1 && last->role != "assistant") ++last;
      std::size_t n = static_cast<std::size_t>(last - first) + 1;
      messages_.erase(first, last + 1);
      out.dropped_messages += n;
      full = tokenize_conversation();
    }
  } catch (...) {
    messages_.pop_back();  // the failed message is not part of the conversation
    throw;
  }
  if (out.dropped_messages > 0 && on_notice) {
    on_notice("context full: dropped the oldest " + std::to_string(out.dropped_messages) +
              " message(s); the conversation now starts later");
  }

  out.reused_tokens = sync_session(full);
  std::span<const TokenId> fresh(full.data() + out.reused_tokens, full.size() - out.reused_tokens);
  // A harmony (gpt-oss) reply: the caller sees, and the history keeps, the final channel only.
  std::optional<HarmonyReplySplitter> harmony;
  std::string final_text;
  GenerationOptions opts = options;
  if (tokenizer_.find_token("<|channel|>") != kNoToken && tokenizer_.find_token("<|message|>") != kNoToken) {
    harmony.emplace();
    opts.on_text = [&](std::string_view s) {
      const std::string shown = harmony->push(s).content;
      final_text += shown;
      return shown.empty() || !options.on_text || options.on_text(shown);
    };
  }
  try {
    out.generation = generate(session_, tokenizer_, sampler, fresh, opts);
  } catch (...) {
    // The session may hold part of the prompt; forget what we cannot vouch for.
    session_.truncate(0);
    cached_.clear();
    messages_.pop_back();
    throw;
  }
  cached_.insert(cached_.end(), fresh.begin(), fresh.end());
  const auto& gen = out.generation.tokens;
  if (!gen.empty()) cached_.insert(cached_.end(), gen.begin(), gen.end() - 1);  // the last was not evaluated
  std::string answer = out.generation.text;
  if (harmony) {
    const std::string rest = harmony->finish().content;
    if (!rest.empty() && options.on_text) options.on_text(rest);
    answer = final_text + rest;
  }
  messages_.push_back({"assistant", answer});
  return out;
}

}  // namespace wisp
