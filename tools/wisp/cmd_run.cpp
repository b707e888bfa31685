// `wisp run -m FILE -p TEXT`: one-shot generation. The completion goes to stdout as it is
// generated; load, prompt and decode timings go to stderr.
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include "commands.h"
#include "generate/generator.h"
#include "generation_flags.h"
#include "speculation_flags.h"
#include "model/model_state.h"
#include "wisp/error.h"

namespace wisp::cli {

namespace {

struct RunFlags {
  ModelFlags model;
  std::optional<std::string> prompt, file;
  std::int64_t n_predict = 128;
  bool no_special = false;
  SamplingFlags sampling;
  SpeculationFlags speculation;
};

void declare(CommandLine& cl, RunFlags& f) {
  add_model_flags(cl, f.model);
  cl.option("-p,--prompt", f.prompt).value_name("TEXT").help("the prompt").group("generation");
  cl.option("-f,--file", f.file).value_name("FILE").help("read the prompt from a file").group("generation");
  cl.option("-n,--n-predict", f.n_predict)
      .value_name("N")
      .help("most tokens to generate; -1 = until the end of the text or the context")
      .group("generation");
  cl.flag("--no-special", f.no_special)
      .help("treat special-token text in the prompt (<|im_start|>) as plain text")
      .group("generation");
  add_sampling_flags(cl, f.sampling);
  add_speculation_flags(cl, f.speculation);
  cl.epilog(
      "example: wisp run -m models/SmolLM2-135M-Instruct.Q4_1.gguf -p \"The capital of France is\" -n 32 --temp 0");
}

std::string read_prompt(const RunFlags& f) {
  if (f.prompt && f.file) throw UsageError("give the prompt once: -p TEXT or -f FILE, not both");
  if (f.file) {
    const std::string& path = *f.file;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot read the prompt file");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  if (!f.prompt) throw UsageError("no prompt: give -p TEXT or -f FILE");
  return *f.prompt;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  RunFlags flags;
  CommandLine cl("run", "Generates a completion for a prompt and prints it, then the timings (on stderr).");
  declare(cl, flags);
  if (!cl.parse(argc, argv)) {
    std::fputs(cl.help().c_str(), stdout);
    return 0;
  }
  std::string prompt = read_prompt(flags);
  if (prompt.empty()) throw UsageError("the prompt is empty");
  const std::int64_t n_predict = flags.n_predict;
  if (n_predict < -1 || n_predict == 0)
    throw UsageError("--n-predict must be positive or -1, got " + std::to_string(n_predict));
  std::string seed_note;
  SamplerParams sp = sampler_params_from_flags(flags.sampling, &seed_note);

  LoadedModel lm = load_model_from_flags(flags.model);
  check_logit_bias_tokens(sp, *lm.model);
  Tokenizer tokenizer = Tokenizer::from_gguf(detail::model_state(*lm.model).file);
  std::vector<TokenId> ids = tokenizer.tokenize(prompt, {.add_special = true, .parse_special = !flags.no_special});
  if (ids.empty()) throw UsageError("the prompt gives no tokens");
  Session session(lm.model, lm.session);
  std::fprintf(stderr, "running on %s\n", session.engine().device().c_str());
  if (ids.size() >= session.n_ctx()) {
    throw Error("the prompt is " + std::to_string(ids.size()) + " tokens, the context holds " +
                std::to_string(session.n_ctx()) + " (raise it with -c)");
  }
  if (!seed_note.empty() && sp.temperature > 0) std::fprintf(stderr, "%s\n", seed_note.c_str());

  Sampler sampler(sp);
  std::unique_ptr<Speculator> speculator = speculator_from_flags(flags.speculation, lm, tokenizer, sp);
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
