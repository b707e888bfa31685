// `wisp chat -m FILE`: the chat REPL. Each line of input is a user message; the reply streams as it
// is generated. Works on a terminal and with piped input (scripted conversations).
//
// Ctrl-C stops the answer being generated and returns to the prompt; at the prompt it only clears
// the line (Ctrl-D or /exit quits). The handler can only touch a lock-free atomic, so the flag it
// raises is the one piece of static state here, owned by this file alone.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "chat/builtin_templates.h"
#include "commands.h"
#include "generate/conversation.h"
#include "generation_flags.h"
#include "line_reader.h"
#include "speculation_flags.h"
#include "model/model_state.h"
#include "wisp/error.h"

namespace wisp::cli {

namespace {

std::atomic<bool> g_interrupted{false};  // raised by SIGINT; see the file comment

extern "C" void on_sigint(int) { g_interrupted.store(true); }

// Installs the SIGINT handler for the REPL's lifetime, restoring the previous one after.
class SigintGuard {
 public:
  SigintGuard() {
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns so the prompt can be redrawn
    sigaction(SIGINT, &sa, &old_);
  }
  ~SigintGuard() { sigaction(SIGINT, &old_, nullptr); }
  SigintGuard(const SigintGuard&) = delete;
  SigintGuard& operator=(const SigintGuard&) = delete;

 private:
  struct sigaction old_ {};
};

const char* kChatHelp =
    "commands:\n"
    "  /reset          forget the conversation (the system message stays)\n"
    "  /system TEXT    set the system message and start over (/system alone removes it)\n"
    "  /help           this list\n"
    "  /exit, /quit    leave (Ctrl-D too)\n"
    "A line ending in \\ continues on the next line; a block between two lines of \"\"\" is one message.\n"
    "On a terminal: arrow keys and Ctrl-A/E edit, Up recalls earlier messages (kept across sessions).\n"
    "Ctrl-C stops an answer.\n";

struct ChatFlags {
  ModelFlags model;
  std::optional<std::string> system;
  std::int64_t n_predict = 512;
  std::optional<std::string> chat_template;
  bool no_history = false;
  SamplingFlags sampling;
  SpeculationFlags speculation;
};

void declare(CommandLine& cl, ChatFlags& f) {
  add_model_flags(cl, f.model);
  cl.option("--system", f.system).value_name("TEXT").help("system message").group("chat");
  cl.option("-n,--n-predict", f.n_predict)
      .value_name("N")
      .help("most tokens per answer; -1 = until the model ends its turn")
      .group("chat");
  cl.option("--chat-template", f.chat_template)
      .value_name("NAME")
      .help("use a built-in template (chatml, gemma, llama2, llama3, mistral, zephyr) instead of the file's")
      .group("chat");
  cl.flag("--no-history", f.no_history)
      .help(
          "keep no input history (default: $XDG_STATE_HOME/wisp/chat_history, "
          "else ~/.local/state/wisp/chat_history)")
      .group("chat");
  add_sampling_flags(cl, f.sampling);
  add_speculation_flags(cl, f.speculation);
  cl.epilog(std::string("In the chat:\n") + kChatHelp);
}

std::string trim(std::string s) {
  auto b = s.find_first_not_of(" \t\r\n");
  auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

int cmd_chat(int argc, char** argv) {
  ChatFlags flags;
  CommandLine cl("chat", "Chat with a model: type a message, get a streamed answer. Multi-turn; reads a pipe too.");
  declare(cl, flags);
  if (!cl.parse(argc, argv)) {
    std::fputs(cl.help().c_str(), stdout);
    return 0;
  }
  const std::int64_t n_predict = flags.n_predict;
  if (n_predict < -1 || n_predict == 0)
    throw UsageError("--n-predict must be positive or -1, got " + std::to_string(n_predict));
  std::string seed_note;
  SamplerParams sp = sampler_params_from_flags(flags.sampling, &seed_note);

  LoadedModel lm = load_model_from_flags(flags.model);
  check_logit_bias_tokens(sp, *lm.model);
  const GgufFile& file = detail::model_state(*lm.model).file;
  Tokenizer tokenizer = Tokenizer::from_gguf(file);

  std::optional<ChosenChatTemplate> chosen;
  if (const auto& name = flags.chat_template) {
    auto src = builtin_chat_template(*name);
    if (!src) throw UsageError("--chat-template: no built-in template named '" + *name + "'");
    chosen = ChosenChatTemplate{ChatTemplate::parse(*src),
                                ChatTemplateChoice{*name, std::string(*src), "chosen with --chat-template"}};
  } else {
    chosen = load_chat_template(file.get_string_opt("tokenizer.chat_template"), file.architecture(),
                                [&](std::string_view t) { return tokenizer.find_token(t) != kNoToken; });
  }
  ChatTemplate tmpl = std::move(chosen->parsed);
  const ChatTemplateChoice& choice = chosen->choice;
  std::fprintf(stderr, "chat template: %s (%s)\n", choice.name.c_str(), choice.reason.c_str());
  if (!seed_note.empty() && sp.temperature > 0) std::fprintf(stderr, "%s\n", seed_note.c_str());

  Session session(lm.model, lm.session);
  std::fprintf(stderr, "running on %s\n", session.engine().device().c_str());
  Conversation chat(session, tokenizer, std::move(tmpl), flags.system);
  Sampler sampler(sp);
  std::unique_ptr<Speculator> speculator = speculator_from_flags(flags.speculation, lm, tokenizer, sp);
  const bool tty = ::isatty(STDIN_FILENO) != 0;
  const std::size_t per_answer = n_predict < 0 ? 0 : static_cast<std::size_t>(n_predict);
  // Room kept for an answer when deciding whether old turns must go.
  const std::size_t reserve = std::min<std::size_t>(per_answer == 0 ? 256 : per_answer, session.n_ctx() / 2);
  if (tty) std::fprintf(stderr, "context %zu tokens. /help for commands, Ctrl-D to leave.\n", session.n_ctx());

  SigintGuard guard;
  LineReader reader(tty, flags.no_history ? std::string() : LineReader::default_history_path(), g_interrupted);
  std::string line;
  for (;;) {
    ReadStatus rs = reader.read_message(line);
    if (rs == ReadStatus::kEof) break;
    if (rs == ReadStatus::kInterrupted) {
      std::fputs("\n(Ctrl-D or /exit to leave)\n", stderr);
      continue;
    }
    std::string msg = trim(line);
    if (msg.empty()) continue;
    if (msg[0] == '/') {
      std::string cmd = msg.substr(0, msg.find(' '));
      std::string rest = msg.size() > cmd.size() ? trim(msg.substr(cmd.size())) : std::string();
      if (cmd == "/exit" || cmd == "/quit") break;
      if (cmd == "/help") {
        std::fputs(kChatHelp, stderr);
      } else if (cmd == "/reset") {
        chat.reset();
        std::fputs("(conversation reset)\n", stderr);
      } else if (cmd == "/system") {
        chat.set_system(rest.empty() ? std::nullopt : std::optional<std::string>(rest));
        std::fputs(rest.empty() ? "(system message removed; conversation reset)\n"
                                : "(system message set; conversation reset)\n",
                   stderr);
      } else {
        std::fprintf(stderr, "unknown command %s; /help lists them\n", cmd.c_str());
      }
      continue;
    }

    g_interrupted.store(false);
    GenerationOptions opts;
    opts.n_predict = per_answer;
    opts.cancel = &g_interrupted;
    opts.speculator = speculator.get();
    opts.on_text = [](std::string_view s) {
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::fflush(stdout);
      return true;
    };
    try {
      ChatReply r = chat.reply(msg, sampler, opts, reserve,
                               [](const std::string& note) { std::fprintf(stderr, "(%s)\n", note.c_str()); });
      std::fputc('\n', stdout);
      std::fflush(stdout);
      const GenerationStats& st = r.generation.stats;
      std::fprintf(stderr, "[%zu prompt tokens (%zu reused) at %.1f tok/s, %zu generated at %.1f tok/s%s%s]\n",
                   st.n_prompt, r.reused_tokens, st.prompt_tokens_per_second(), st.n_generated,
                   st.decode_tokens_per_second(), speculation_summary(st).c_str(),
                   r.generation.stop == StopReason::kEndOfTurn   ? ""
                   : r.generation.stop == StopReason::kCancelled ? ", stopped by Ctrl-C"
                   : r.generation.stop == StopReason::kLength    ? ", cut at --n-predict"
                                                                 : ", context full");
    } catch (const Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
    }
    g_interrupted.store(false);
  }
  if (tty) std::fputc('\n', stdout);
  return 0;
}

}  // namespace wisp::cli
