// `wisp run -m FILE -p TEXT`: one-shot generation. The completion goes to stdout as it is
// generated; load, prompt and decode timings go to stderr.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "commands.h"
#include "generate/generator.h"
#include "generation_flags.h"
#include "speculation_flags.h"
#include "model/model_state.h"
#include "wisp/error.h"

namespace wisp::cli {

namespace {

ArgParser make_parser() {
  ArgParser p("run", "Generates a completion for a prompt and prints it, then the timings (on stderr).");
  add_model_flags(p);
  p.option("prompt").short_name('p').value_name("TEXT").help("the prompt").group("generation");
  p.option("file").short_name('f').value_name("FILE").help("read the prompt from a file").group("generation");
  p.option("n-predict", ArgKind::kInt)
      .short_name('n')
      .value_name("N")
      .default_value("128")
      .help("most tokens to generate; -1 = until the end of the text or the context")
      .group("generation");
  p.flag("no-special").help("treat special-token text in the prompt (<|im_start|>) as plain text").group("generation");
  add_sampling_flags(p);
  add_speculation_flags(p);
  p.epilog(
      "example: wisp run -m models/SmolLM2-135M-Instruct.Q4_1.gguf -p \"The capital of France is\" -n 32 --temp 0");
  return p;
}

std::string read_prompt(const Args& a) {
  if (a.has("prompt") && a.has("file")) throw UsageError("give the prompt once: -p TEXT or -f FILE, not both");
  if (a.has("file")) {
    std::string path = a.str("file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot read the prompt file");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  if (!a.has("prompt")) throw UsageError("no prompt: give -p TEXT or -f FILE");
  return a.str("prompt");
}

}  // namespace

int cmd_run(int argc, char** argv) {
  const ArgParser parser = make_parser();
  Args args = parser.parse(argc, argv);
  if (args.help_requested()) {
    std::fputs(parser.help().c_str(), stdout);
    return 0;
  }
  std::string prompt = read_prompt(args);
  if (prompt.empty()) throw UsageError("the prompt is empty");
  std::int64_t n_predict = args.int64("n-predict");
  if (n_predict < -1 || n_predict == 0)
    throw UsageError("--n-predict must be positive or -1, got " + std::to_string(n_predict));
  std::string seed_note;
  SamplerParams sp = sampler_params_from_flags(args, &seed_note);

  LoadedModel lm = load_model_from_flags(args);
  Tokenizer tokenizer = Tokenizer::from_gguf(detail::model_state(*lm.model).file);
  std::vector<TokenId> ids =
      tokenizer.tokenize(prompt, {.add_special = true, .parse_special = !args.flag("no-special")});
  if (ids.empty()) throw UsageError("the prompt gives no tokens");
  Session session(lm.model, lm.session);
  std::fprintf(stderr, "running on %s\n", session.engine().device().c_str());
  if (ids.size() >= session.n_ctx()) {
    throw Error("the prompt is " + std::to_string(ids.size()) + " tokens, the context holds " +
                std::to_string(session.n_ctx()) + " (raise it with -c)");
  }
  if (!seed_note.empty() && sp.temperature > 0) std::fprintf(stderr, "%s\n", seed_note.c_str());

  Sampler sampler(sp);
  std::unique_ptr<Speculator> speculator = speculator_from_flags(args, lm, tokenizer, sp);
  GenerationOptions opts;
  opts.speculator = speculator.get();
  opts.n_predict = n_predict < 0 ? 0 : static_cast<std::size_t>(n_predict);
  opts.on_text = [](std::string_view s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
    return true;
  };
  GenerationResult r = generate(session, tokenizer, sampler, ids, opts);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  const GenerationStats& st = r.stats;
  std::fprintf(stderr,
               "prompt: %zu tokens in %.1f ms (%.1f tok/s) | generated: %zu tokens in %.1f ms (%.1f tok/s) | "
               "stop: %s%s\n",
               st.n_prompt, st.prompt_seconds * 1e3, st.prompt_tokens_per_second(), st.n_generated,
               st.generate_seconds * 1e3, st.decode_tokens_per_second(), stop_reason_name(r.stop),
               speculation_summary(st).c_str());
  return 0;
}

}  // namespace wisp::cli
